// HttpSink: one POST per record over libcurl's multi interface, its sockets and timer in one epoll fd.
#include "http/sink.h"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace outbox::http {
namespace {

static_assert(CURL_ERROR_SIZE == 256, "HttpSink::Transfer::error is CURL_ERROR_SIZE bytes");
constexpr size_t kAnswerBytes = 300;  // of an error answer's body, kept for the error text

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("http");
  return l ? l : spdlog::default_logger();
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The options every request and probe share: timeouts, TLS, credentials.
void ApplyCommon(CURL* easy, const Options& o, char* error_buffer) {
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_ms));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout_ms));
  curl_easy_setopt(easy, CURLOPT_USERAGENT, o.user_agent.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
  error_buffer[0] = '\0';
  if (!o.tls_ca.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, o.tls_ca.c_str());
  if (!o.tls_cert.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT, o.tls_cert.c_str());
    curl_easy_setopt(easy, CURLOPT_SSLKEY, o.tls_key.c_str());
  }
  if (!o.bearer_token.empty()) {
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(easy, CURLOPT_XOAUTH2_BEARER, o.bearer_token.c_str());
  } else if (!o.user.empty()) {
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(easy, CURLOPT_USERNAME, o.user.c_str());
    curl_easy_setopt(easy, CURLOPT_PASSWORD, o.password.c_str());
  }
}

// "Couldn't connect to server (Failed to connect to 127.0.0.1 port 1: Connection refused)".
std::string CurlError(int code, const char* error_buffer) {
  const char* text = curl_easy_strerror(static_cast<CURLcode>(code));
  return error_buffer != nullptr && error_buffer[0] != '\0' ? Cat(text, " (", error_buffer, ")") : std::string(text);
}

std::string CurlCodeName(int code) { return Cat("CURLE_", code); }

bool HasHeader(const OwnedRecord& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (absl::EqualsIgnoreCase(ToAbsl(h.first), ToAbsl(name))) return true;
  }
  return false;
}

// Headers curl or the sink set themselves: a record's own would duplicate or contradict them.
bool Reserved(std::string_view name) {
  for (std::string_view r : {"content-length", "host", "transfer-encoding", "expect", "connection",
                             "idempotency-key", "authorization"}) {
    if (absl::EqualsIgnoreCase(ToAbsl(name), ToAbsl(r))) return true;
  }
  return false;
}

}  // namespace

// curl's callbacks. They run inside curl_multi_socket_action / curl_multi_add_handle, on the loop thread.
struct CurlCallbacks {
  struct Transfer {
    HttpSink* sink;
    uint64_t seq;
  };
  static int OnSocket(CURL*, curl_socket_t fd, int what, void* userp, void*) {
    auto* self = static_cast<HttpSink*>(userp);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      return 0;
    }
    epoll_event ev{};
    ev.data.fd = fd;
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    if (epoll_ctl(self->epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    }
    return 0;
  }
  static int OnTimer(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<HttpSink*>(userp);
    if (timeout_ms < 0) {
      self->curl_due_.reset();
    } else {
      self->curl_due_ = HttpSink::Clock::now() + std::chrono::milliseconds(timeout_ms);
    }
    self->ArmTimer();
    return 0;
  }
  static size_t OnWrite(char* data, size_t size, size_t count, void* userp) {
    auto* answer = static_cast<std::string*>(userp);
    const size_t n = size * count;
    if (answer->size() < kAnswerBytes) answer->append(data, std::min(n, kAnswerBytes - answer->size()));
    return n;
  }
  static size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }
};

absl::Status Probe(const Options& options, const std::string& url, int timeout_ms, long* status) {
  GlobalInit();
  *status = 0;
  CURL* easy = curl_easy_init();
  if (easy == nullptr) return absl::InternalError("http: could not create a curl handle");
  char error[CURL_ERROR_SIZE];
  Options o = options;
  o.timeout_ms = std::min<int64_t>(o.timeout_ms, timeout_ms);
  o.connect_timeout_ms = std::min<int64_t>(o.connect_timeout_ms, timeout_ms);
  ApplyCommon(easy, o, error);
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &CurlCallbacks::Discard);
  const CURLcode code = curl_easy_perform(easy);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(easy);
  if (code != CURLE_OK) {
    const std::string why = Cat("http: HEAD ", url, ": ", CurlError(code, error));
    return Classify(code, 0) == Verdict::kFatal ? absl::FailedPreconditionError(why) : absl::UnavailableError(why);
  }
  if (*status == 408 || *status == 429 || *status == 502 || *status == 503 || *status == 504) {
    return absl::UnavailableError(Cat("http: HEAD ", url, ": HTTP ", *status));
  }
  return absl::OkStatus();
}

HttpSink::HttpSink(const Options& options, sinks::ReportHandler* handler)
    : options_(options),
      url_(options.url, options.route_topic),
      handler_(handler),
      dispatcher_(options.backoff,
                  std::max<size_t>(1, options.max_in_flight) * std::max<size_t>(1, options.batch_max_events)) {}

absl::StatusOr<std::unique_ptr<HttpSink>> HttpSink::Create(const Options& options, sinks::ReportHandler* handler) {
  GlobalInit();
  std::unique_ptr<HttpSink> sink(new HttpSink(options, handler));
  if (absl::Status st = sink->Init(); !st.ok()) return st;
  return sink;
}

absl::Status HttpSink::Init() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  kick_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || timer_fd_ < 0 || kick_fd_ < 0) return absl::InternalError("http: could not create the fds");
  for (int fd : {timer_fd_, kick_fd_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return absl::InternalError("http: epoll_ctl failed");
  }
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return absl::InternalError("http: could not create the curl multi handle");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlCallbacks::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlCallbacks::OnTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  // One request per key at most, max_in_flight in all: connections enough for each to have its own.
  curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(options_.max_in_flight));
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(options_.max_in_flight));
  return absl::OkStatus();
}

HttpSink::~HttpSink() {
  handler_ = nullptr;
  while (!transfers_.empty()) Release(transfers_.begin()->first);
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  for (int fd : {epoll_fd_, timer_fd_, kick_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void HttpSink::Kick() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(kick_fd_, &one, sizeof one);
}

void HttpSink::DrainWakeup() {
  uint64_t value;
  [[maybe_unused]] ssize_t a = read(kick_fd_, &value, sizeof value);
  [[maybe_unused]] ssize_t b = read(timer_fd_, &value, sizeof value);
}

void HttpSink::ArmTimer() {
  std::optional<Clock::time_point> next = curl_due_;
  if (const auto due = dispatcher_.NextDue(); due && (!next || *due < *next)) next = due;
  itimerspec spec{};
  if (next) {
    // A due time already passed fires at once (a zero value would disarm the timer).
    const auto ns = std::max<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(next->time_since_epoch()).count(),
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count() + 1);
    spec.it_value.tv_sec = ns / 1000000000;
    spec.it_value.tv_nsec = ns % 1000000000;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

sinks::ProduceResult HttpSink::Produce(const Record& record, uint64_t origin) {
  if (pending_.size() >= options_.max_queued) return sinks::ProduceResult::Full();
  if (absl::Status st = CheckHeaders(record); !st.ok()) {
    return sinks::ProduceResult::Rejected(sinks::Reason::kNone, Msg(st));
  }
  const uint64_t seq = next_seq_++;
  Pending& p = pending_[seq];
  p.origin = origin;
  p.record = OwnedRecord::Of(record);
  p.bytes = record.PayloadBytes();
  // Per key across topics: one aggregate's events routed by type reach different paths, often of one receiver,
  // and still arrive in commit order.
  std::optional<std::string> key;
  if (record.key) key = Cat("=", *record.key);  // never "#<n>", the Dispatcher's token for a keyless event
  dispatcher_.Add(seq, key);
  Kick();
  return sinks::ProduceResult::Ok();
}

void HttpSink::StartReady() {
  // max_in_flight counts requests: only as many events as the free requests can carry are taken.
  const size_t requests = std::max<size_t>(1, options_.max_in_flight);
  if (transfers_.size() >= requests) return;
  const size_t batch = std::max<size_t>(1, options_.batch_max_events);
  const std::vector<uint64_t> ready = dispatcher_.TakeReady(Clock::now(), (requests - transfers_.size()) * batch);
  if (options_.batch_max_events <= 1) {
    for (uint64_t seq : ready) Start({seq});
    return;
  }
  // Batches by URL, in the order the events became ready.
  std::vector<std::pair<std::string, std::vector<uint64_t>>> batches;
  for (uint64_t seq : ready) {
    auto it = pending_.find(seq);
    if (it == pending_.end()) continue;
    std::string url = url_.For(it->second.record.topic);
    auto batch = std::find_if(batches.begin(), batches.end(), [&](const auto& b) {
      return b.first == url && b.second.size() < options_.batch_max_events;
    });
    if (batch == batches.end()) {
      batches.emplace_back(std::move(url), std::vector<uint64_t>{});
      batch = batches.end() - 1;
    }
    batch->second.push_back(seq);
  }
  for (const auto& batch : batches) Start(batch.second);
}

void HttpSink::Start(const std::vector<uint64_t>& seqs) {
  std::vector<Pending*> records;
  for (uint64_t seq : seqs) {
    auto it = pending_.find(seq);
    if (it != pending_.end()) records.push_back(&it->second);
  }
  if (records.empty()) return;
  CURL* easy = curl_easy_init();
  if (easy == nullptr) {
    for (uint64_t seq : seqs) dispatcher_.Retry(seq, Clock::now(), std::nullopt);
    return;
  }
  Transfer& t = transfers_[easy];
  t.seqs = seqs;
  t.url = url_.For(records[0]->record.topic);
  curl_slist* headers = nullptr;
  const auto add = [&](const std::string& line) { headers = curl_slist_append(headers, line.c_str()); };
  std::string_view body;
  if (options_.batch_max_events > 1) {
    // A batch (also of one): the records, headers and ids inside the JSON array.
    std::vector<const OwnedRecord*> batch;
    std::vector<std::string_view> ids;
    for (const Pending* p : records) {
      batch.push_back(&p->record);
      ids.push_back(p->record.event_id);
    }
    t.body = BatchBody(batch);
    body = t.body;
    add(Cat(kIdempotencyKey, ": ", BatchIdempotencyKey(ids)));
    add("Content-Type: application/json");
    add(Cat("Outbox-Batch-Size: ", batch.size()));
  } else {
    const OwnedRecord& r = records[0]->record;
    if (r.value) body = *r.value;
    if (!r.event_id.empty()) add(Cat(kIdempotencyKey, ": ", r.event_id));
    if (!HasHeader(r, "content-type") && !options_.content_type.empty()) {
      add(Cat("Content-Type: ", options_.content_type));
    }
    if (r.key && !options_.key_header.empty()) add(Cat(options_.key_header, ": ", *r.key));
    for (const auto& [name, value] : r.headers) {
      if (Reserved(name)) continue;
      // "name;" is how curl sends a header with an empty value.
      add(value && !value->empty() ? Cat(name, ": ", *value) : Cat(name, ";"));
    }
  }
  add("Expect:");  // no 100-continue round trip
  t.headers = headers;
  ApplyCommon(easy, options_, t.error);
  curl_easy_setopt(easy, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.empty() ? "" : body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &CurlCallbacks::OnWrite);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t.answer);
  for (Pending* p : records) p->easy = easy;
  curl_multi_add_handle(multi_, easy);
}

void HttpSink::Release(CURL* easy) {
  auto it = transfers_.find(easy);
  if (it == transfers_.end()) return;
  curl_multi_remove_handle(multi_, easy);
  curl_easy_cleanup(easy);
  if (it->second.headers != nullptr) curl_slist_free_all(it->second.headers);
  for (uint64_t seq : it->second.seqs) {
    auto p = pending_.find(seq);
    if (p != pending_.end() && p->second.easy == easy) p->second.easy = nullptr;
  }
  transfers_.erase(it);
}

void HttpSink::Finish(CURL* easy, int curl_code) {
  auto at = transfers_.find(easy);
  if (at == transfers_.end()) return;
  const Transfer& transfer = at->second;
  const std::vector<uint64_t> seqs = transfer.seqs;
  long status = 0;
  curl_off_t retry_after_s = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &retry_after_s);
  const std::string curl_error = curl_code == CURLE_OK ? "" : CurlError(curl_code, transfer.error);
  const std::string answer(absl::StripAsciiWhitespace(transfer.answer));
  const std::string described =
      Cat("POST ", transfer.url, seqs.size() > 1 ? Cat(" (a batch of ", seqs.size(), ")") : "", ": ",
          curl_code == CURLE_OK ? Cat("HTTP ", status) : curl_error, answer.empty() ? "" : ": ", answer);
  Release(easy);  // `transfer` is gone from here on
  const Verdict verdict = Classify(curl_code, status);
  const bool batch = seqs.size() > 1;
  if (verdict == Verdict::kRetry) {
    std::optional<std::chrono::milliseconds> retry_after;
    if (curl_code == CURLE_OK && retry_after_s > 0) retry_after = std::chrono::seconds(retry_after_s);
    last_failure_ = described;
    for (uint64_t seq : seqs) {
      const auto wait = dispatcher_.Retry(seq, Clock::now(), retry_after);
      ++retries_;
      const int failures = dispatcher_.failures(seq);
      if ((failures & (failures - 1)) == 0) {  // the 1st, 2nd, 4th, 8th... failure of an event
        Log()->warn("http: event id={} failed ({} time(s)), retrying in {} ms: {}", pending_.at(seq).record.event_id,
                    failures, wait.count(), described);
      }
    }
    return;
  }
  for (uint64_t seq : seqs) {
    dispatcher_.Done(seq);
    switch (verdict) {
      case Verdict::kAck:
        done_.push_back(Done{seq, sinks::Outcome::kAcked, sinks::Reason::kNone, {}, {}});
        break;
      case Verdict::kReject:
        done_.push_back(Done{seq, batch ? sinks::Outcome::kRejectedBatch : sinks::Outcome::kRejectedEvent,
                             status == 413 ? sinks::Reason::kTooLarge : sinks::Reason::kNone,
                             Cat("the receiver refused it: ", described), Cat("HTTP_", status)});
        break;
      case Verdict::kFatal:
        if (fatal_.ok()) fatal_ = absl::FailedPreconditionError(Cat("http: ", described));
        done_.push_back(Done{seq, sinks::Outcome::kFatal, sinks::Reason::kNone, described, CurlCodeName(curl_code)});
        break;
      case Verdict::kRetry:
        break;
    }
  }
}

void HttpSink::Step() {
  // A few passes: a request started here may finish at once (a refused connection), freeing its key's next one.
  for (int pass = 0; pass < 4; ++pass) {
    bool progress = false;
    epoll_event events[64];
    const int n = epoll_wait(epoll_fd_, events, 64, 0);
    int running = 0;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == timer_fd_ || fd == kick_fd_) {
        uint64_t value;
        [[maybe_unused]] ssize_t r = read(fd, &value, sizeof value);
        continue;
      }
      const int mask = (events[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (events[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
      curl_multi_socket_action(multi_, fd, mask, &running);
      progress = true;
    }
    if (curl_due_ && *curl_due_ <= Clock::now()) {
      curl_due_.reset();
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
      progress = true;
    }
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg == CURLMSG_DONE) {
        Finish(msg->easy_handle, msg->data.result);
        progress = true;
      }
    }
    const size_t before = transfers_.size();
    StartReady();
    progress = progress || transfers_.size() != before;
    if (!progress) break;
  }
  ArmTimer();
}

int HttpSink::Serve() {
  int served = 0;
  while (!done_.empty()) {
    Done d = std::move(done_.front());
    done_.pop_front();
    auto it = pending_.find(d.seq);
    if (it == pending_.end()) continue;
    Pending p = std::move(it->second);
    pending_.erase(it);
    ++served;
    if (handler_ == nullptr) continue;
    sinks::Report r;
    r.origin = p.origin;
    r.outcome = d.outcome;
    r.reason = d.reason;
    r.topic = p.record.topic;
    r.bytes = p.bytes;
    if (d.outcome != sinks::Outcome::kAcked) {
      r.error = d.error;
      r.error_name = d.error_name;
      r.event_id = p.record.event_id;
      r.source_lsn = p.record.HeaderText("source_lsn");
      // Too large for the receiver: the dead letter goes without the body (it would not fit either).
      if (d.reason == sinks::Reason::kTooLarge) p.record.value.reset();
      r.rejected = &p.record;
    }
    handler_->OnReport(r);
  }
  return served;
}

int HttpSink::Poll(int timeout_ms) {
  Step();
  if (done_.empty() && timeout_ms > 0) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (auto now = Clock::now(); done_.empty() && now < deadline; now = Clock::now()) {
      // The timer fd wakes this for curl's timeouts and the retries.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      epoll_event event;
      epoll_wait(epoll_fd_, &event, 1, static_cast<int>(left));
      Step();
    }
  }
  return Serve();
}

void HttpSink::Purge() {
  while (!transfers_.empty()) Release(transfers_.begin()->first);
  dispatcher_.Clear();
  done_.clear();
  for (const auto& [seq, p] : pending_) {
    done_.push_back(Done{seq, sinks::Outcome::kRetriable, sinks::Reason::kNone, "purged", "PURGED"});
  }
  ArmTimer();
  Kick();
}

absl::Status HttpSink::CheckReachable(int timeout_ms) {
  long status = 0;
  return Probe(options_, options_.check_url.empty() ? Origin(options_.url) : options_.check_url, timeout_ms, &status);
}

}  // namespace outbox::http
