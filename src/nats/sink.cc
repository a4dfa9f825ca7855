// NatsSink: asynchronous JetStream publishes, completions handed from the client's threads to the loop.
#include "nats/sink.h"

#include <nats/nats.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"
#include "sinks/handoff.h"
#include "spdlog/spdlog.h"

namespace outbox::nats {
namespace {

constexpr int64_t kJetStreamWaitMs = 5000;
constexpr int64_t kReconnectWaitMs = 250;
constexpr int kCloseWaitMs = 2000;

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("nats");
  return l ? l : spdlog::default_logger();
}

std::string StatusText(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return last != nullptr && *last != '\0' ? Cat(natsStatus_GetText(s), ": ", last) : natsStatus_GetText(s);
}

// Sets every option of `o` on a fresh natsOptions; the caller owns it.
absl::StatusOr<natsOptions*> MakeOptions(const Options& o) {
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) return absl::InternalError("nats: could not create the options");
  std::vector<std::string> urls = absl::StrSplit(o.url, ',', absl::SkipWhitespace());
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  natsStatus s = natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
  const auto fail = [&](std::string_view key, natsStatus st) {
    natsOptions_Destroy(opts);
    return absl::InvalidArgumentError(Cat(key, ": ", StatusText(st)));
  };
  if (s != NATS_OK) return fail("nats.url", s);
  natsOptions_SetName(opts, o.name.c_str());
  natsOptions_SetTimeout(opts, o.connect_timeout_ms);
  natsOptions_SetMaxReconnect(opts, -1);  // forever: the relay's loop decides when to give up the slot
  natsOptions_SetReconnectWait(opts, kReconnectWaitMs);
  if (!o.user.empty() && (s = natsOptions_SetUserInfo(opts, o.user.c_str(), o.password.c_str())) != NATS_OK) {
    return fail("nats.user", s);
  }
  if (!o.token.empty() && (s = natsOptions_SetToken(opts, o.token.c_str())) != NATS_OK) return fail("nats.token", s);
  if (!o.creds.empty() && (s = natsOptions_SetUserCredentialsFromFiles(opts, o.creds.c_str(), nullptr)) != NATS_OK) {
    return fail("nats.creds", s);
  }
  const bool tls = !o.tls_ca.empty() || !o.tls_cert.empty() || o.url.find("tls://") != std::string::npos;
  if (tls && (s = natsOptions_SetSecure(opts, true)) != NATS_OK) return fail("nats.tls", s);
  if (!o.tls_ca.empty() && (s = natsOptions_LoadCATrustedCertificates(opts, o.tls_ca.c_str())) != NATS_OK) {
    return fail("nats.tls.ca", s);
  }
  if (!o.tls_cert.empty() &&
      (s = natsOptions_LoadCertificatesChain(opts, o.tls_cert.c_str(), o.tls_key.c_str())) != NATS_OK) {
    return fail("nats.tls.cert", s);
  }
  if (!o.tls_hostname.empty() && (s = natsOptions_SetExpectedHostname(opts, o.tls_hostname.c_str())) != NATS_OK) {
    return fail("nats.tls.hostname", s);
  }
  return opts;
}

absl::StatusOr<StreamFacts> ReadStream(natsConnection* nc, jsCtx* js, const std::string& stream) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = kJetStreamWaitMs;
  natsStatus s = js_GetStreamInfo(&si, js, stream.c_str(), &jo, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
    return absl::FailedPreconditionError(Cat("nats.stream: stream \"", stream,
                                             "\" does not exist on the server (create it, binding the subjects of "
                                             "outbox.route.topic and delivery.dead_letter_topic)"));
  }
  if (s != NATS_OK) {
    const absl::Status status = absl::UnavailableError(Cat("nats: reading stream \"", stream, "\": ", StatusText(s)));
    return ClassifyPublishResult(s, jerr) == sinks::Outcome::kFatal ? absl::PermissionDeniedError(status.message())
                                                                    : status;
  }
  StreamFacts f;
  for (int i = 0; i < si->Config->SubjectsLen; ++i) f.subjects.emplace_back(si->Config->Subjects[i]);
  if (si->Config->SubjectsLen == 0) f.subjects.push_back(stream);  // a stream without subjects binds its name
  f.max_msg_size = si->Config->MaxMsgSize > 0 ? si->Config->MaxMsgSize : -1;
  f.duplicate_window_ms = si->Config->Duplicates / 1000000;
  f.max_payload = natsConnection_GetMaxPayload(nc);
  jsStreamInfo_Destroy(si);
  return f;
}

// A failed connect: PermissionDenied when a retry cannot cure it (credentials, TLS), else Unavailable. A TLS failure
// names the CA key: a certificate the CA does not sign is what a wrong or missing nats.tls.ca gives.
absl::Status ConnectError(const Options& o, natsStatus s) {
  std::string why = Cat("nats: could not connect to ", o.url, ": ", StatusText(s));
  if (s == NATS_SSL_ERROR) {
    why += Cat(" (the server's certificate must be signed by the CA in nats.tls.ca, ",
               o.tls_ca.empty() ? "unset: the system's CAs" : o.tls_ca,
               o.tls_hostname.empty() ? ", and name the URL's host)" : Cat(", and name ", o.tls_hostname, ")"));
  }
  // With TLS 1.3 a server that requires a client certificate (verify: true) ends the connection only after the
  // handshake: the client sees the next protocol line missing.
  const bool tls = o.url.starts_with("tls://") || !o.tls_ca.empty();
  if (s == NATS_PROTOCOL_ERROR && tls && o.tls_cert.empty()) {
    why += " (the server may require a client certificate: set nats.tls.cert and nats.tls.key)";
  }
  return ClassifyPublishResult(s, 0) == sinks::Outcome::kFatal ? absl::PermissionDeniedError(why)
                                                               : absl::UnavailableError(why);
}

// A record as it was published, from the client's message (for a dead letter).
OwnedRecord FromMessage(natsMsg* msg) {
  OwnedRecord r;
  r.topic = natsMsg_GetSubject(msg);
  if (natsMsg_GetData(msg) != nullptr) r.value = std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  const char** keys = nullptr;
  int count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &count) == NATS_OK) {
    for (int i = 0; i < count; ++i) {
      const char* value = nullptr;
      natsMsgHeader_Get(msg, keys[i], &value);
      const std::string_view name = keys[i];
      if (name == kMsgIdHeader) continue;
      if (name == kKeyHeader) {
        r.key = value ? value : "";
        continue;
      }
      r.headers.emplace_back(std::string(name), value ? std::optional<std::string>(value) : std::nullopt);
      if (name == "id" && value) r.event_id = value;
    }
    free(keys);
  }
  return r;
}

}  // namespace

// The client's callbacks: they run on its threads and touch only what mu_ guards, the atomics and the eventfd.
struct Callbacks {
  static void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<NatsSink*>(closure);
    NatsSink::Completion c;
    if (pa == nullptr && pae != nullptr) {
      c.status = pae->Err == NATS_OK ? NATS_ERR : pae->Err;
      c.js_code = pae->ErrCode;
      c.error = pae->ErrText != nullptr ? pae->ErrText : natsStatus_GetText(pae->Err);
      c.rejected = FromMessage(msg);
    }
    {
      absl::MutexLock lock(&self->mu_);
      auto it = self->seq_of_.find(msg);
      if (it != self->seq_of_.end()) {
        c.seq = it->second;
        self->seq_of_.erase(it);
        self->done_.push_back(std::move(c));
      }
    }
    natsMsg_Destroy(msg);
    self->Wake();
  }
  static void OnDisconnected(natsConnection*, void* closure) {
    auto* self = static_cast<NatsSink*>(closure);
    if (self->connected_.exchange(false) && !self->closing_) {
      Log()->warn("nats: disconnected from the server; reconnecting");
    }
    self->Wake();
  }
  static void OnConnected(natsConnection*, void* closure) {
    auto* self = static_cast<NatsSink*>(closure);
    if (!self->connected_.exchange(true)) Log()->info("nats: connected");
    self->Wake();
  }
  static void OnClosed(natsConnection*, void* closure) {
    auto* self = static_cast<NatsSink*>(closure);
    self->connected_ = false;
    absl::MutexLock lock(&self->mu_);
    self->closed_ = true;
  }
  static void OnError(natsConnection*, natsSubscription*, natsStatus err, void* closure) {
    auto* self = static_cast<NatsSink*>(closure);
    const std::string text = StatusText(err);
    Log()->warn("nats: {}", text);
    if (ClassifyPublishResult(err, 0) == sinks::Outcome::kFatal) {
      // A permissions violation (a subject the user may not publish to) or an authorization error: the relay
      // recreates the sink a few times, then stops naming it.
      absl::MutexLock lock(&self->mu_);
      if (self->fatal_.ok()) self->fatal_ = absl::PermissionDeniedError(Cat("nats: ", text));
    }
    self->Wake();
  }
};

absl::StatusOr<StreamFacts> ProbeStream(const Options& options) {
  auto opts = MakeOptions(options);
  if (!opts.ok()) return opts.status();
  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_Connect(&nc, *opts);
  natsOptions_Destroy(*opts);
  if (s != NATS_OK) return ConnectError(options, s);
  jsCtx* js = nullptr;
  absl::StatusOr<StreamFacts> facts = absl::InternalError("nats: no JetStream context");
  if (natsConnection_JetStream(&js, nc, nullptr) == NATS_OK) facts = ReadStream(nc, js, options.stream);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return facts;
}

absl::StatusOr<std::unique_ptr<NatsSink>> NatsSink::Create(const Options& options, sinks::ReportHandler* handler) {
  std::unique_ptr<NatsSink> sink(new NatsSink());
  sink->options_ = options;
  sink->handler_ = handler;
  sink->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sink->wake_fd_ < 0) return absl::InternalError("nats: could not create the wakeup eventfd");
  auto opts = MakeOptions(options);
  if (!opts.ok()) return opts.status();
  sink->opts_ = *opts;
  NatsSink* self = sink.get();
  natsOptions_SetDisconnectedCB(self->opts_, &Callbacks::OnDisconnected, self);
  natsOptions_SetReconnectedCB(self->opts_, &Callbacks::OnConnected, self);
  natsOptions_SetClosedCB(self->opts_, &Callbacks::OnClosed, self);
  natsOptions_SetErrorHandler(self->opts_, &Callbacks::OnError, self);
  // A first attempt without retrying, so that refused credentials or TLS fail the start by name; only a server that
  // does not answer yet is retried in the background.
  natsStatus s = natsConnection_Connect(&self->nc_, self->opts_);
  if (s != NATS_OK && ClassifyPublishResult(s, 0) == sinks::Outcome::kRetriable) {
    natsOptions_SetRetryOnFailedConnect(self->opts_, true, &Callbacks::OnConnected, self);
    s = natsConnection_Connect(&self->nc_, self->opts_);
  }
  if (s == NATS_OK) {
    self->connected_ = true;
  } else if (s != NATS_NOT_YET_CONNECTED) {
    return ConnectError(options, s);
  } else {
    Log()->warn("nats: {} does not answer yet; retrying in the background", options.url);
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = kJetStreamWaitMs;
  jo.PublishAsync.MaxPending = options.max_pending;
  jo.PublishAsync.AckHandler = &Callbacks::OnAck;
  jo.PublishAsync.AckHandlerClosure = self;
  jo.PublishAsync.StallWait = 1;
  if ((s = natsConnection_JetStream(&self->js_, self->nc_, &jo)) != NATS_OK) {
    return absl::InternalError(Cat("nats: could not create the JetStream context: ", StatusText(s)));
  }
  if (self->connected_) {
    if (absl::Status st = self->CheckStream(); !st.ok()) return st;
  }
  return sink;
}

NatsSink::~NatsSink() {
  handler_ = nullptr;
  // (libnats 3.4 crashes taking the pending list of a context that never published.)
  if (js_ != nullptr && next_seq_ > 1) {
    natsMsgList pending;
    if (js_PublishAsyncGetPendingList(&pending, js_) == NATS_OK) natsMsgList_Destroy(&pending);
  }
  if (nc_ != nullptr) {
    closing_ = true;
    natsConnection_Close(nc_);
    // The closed callback is the client's last call on this sink: wait for it before freeing what it touches.
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&closed_), absl::Milliseconds(kCloseWaitMs));
  }
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (nc_ != nullptr) natsConnection_Destroy(nc_);
  if (opts_ != nullptr) natsOptions_Destroy(opts_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void NatsSink::Wake() { sinks::SignalEventFd(wake_fd_); }

void NatsSink::DrainWakeup() { sinks::DrainEventFd(wake_fd_); }

absl::Status NatsSink::CheckStream() {
  auto facts = ReadStream(nc_, js_, options_.stream);
  if (!facts.ok()) return facts.status();
  facts_ = *std::move(facts);
  stream_checked_ = true;
  Log()->info("nats: stream {} binds {} (max_payload {}, max_msg_size {}, duplicate_window {} ms)", options_.stream,
              absl::StrJoin(facts_.subjects, ", "), facts_.max_payload, facts_.max_msg_size, facts_.duplicate_window_ms);
  return absl::OkStatus();
}

sinks::ProduceResult NatsSink::Produce(const Record& record, uint64_t origin) {
  using sinks::ProduceResult;
  using sinks::Reason;
  if (!connected_) return ProduceResult::Full();
  if (!stream_checked_) {
    if (absl::Status st = CheckStream(); !st.ok()) {
      if (st.code() == absl::StatusCode::kUnavailable) return ProduceResult::Full();
      absl::MutexLock lock(&mu_);
      if (fatal_.ok()) fatal_ = st;
      return ProduceResult::Failed(Msg(st));
    }
  }
  if (!IsPublishableSubject(record.topic)) {
    return ProduceResult::Rejected(Reason::kTopic, Cat("\"", record.topic, "\" is not a NATS subject one can publish to"));
  }
  bool bound = false;
  for (const std::string& pattern : facts_.subjects) bound = bound || SubjectMatches(pattern, record.topic);
  if (!bound) {
    return ProduceResult::Rejected(Reason::kTopic, Cat("subject ", record.topic, " is not bound by stream ",
                                                       options_.stream, " (", absl::StrJoin(facts_.subjects, ", "), ")"));
  }
  if (absl::Status st = CheckHeaders(record); !st.ok()) return ProduceResult::Rejected(Reason::kNone, Msg(st));
  const size_t bytes = MessageBytes(record);
  if (facts_.max_payload > 0 && static_cast<int64_t>(bytes) > facts_.max_payload) {
    return ProduceResult::Rejected(Reason::kTooLarge, Cat("message of ", bytes, " bytes is larger than the server's "
                                                          "max_payload (", facts_.max_payload, ")"));
  }
  if (facts_.max_msg_size > 0 && static_cast<int64_t>(bytes) > facts_.max_msg_size) {
    return ProduceResult::Rejected(Reason::kTooLarge, Cat("message of ", bytes, " bytes is larger than stream ",
                                                          options_.stream, "'s max_msg_size (", facts_.max_msg_size,
                                                          ")"));
  }
  std::string key_token;
  if (!keys_.TryAcquire(record.topic, record.key, &key_token)) return ProduceResult::Full();  // its key is in flight

  const std::string subject(record.topic);
  natsMsg* msg = nullptr;
  const int len = record.value ? static_cast<int>(record.value->size()) : 0;
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, record.value ? record.value->data() : "", len);
  std::string name, value;
  const auto add = [&](std::string_view n, std::string_view v) {
    if (s != NATS_OK) return;
    name.assign(n);
    value.assign(v);
    s = natsMsgHeader_Add(msg, name.c_str(), value.c_str());
  };
  if (record.key) add(kKeyHeader, *record.key);
  for (const Header& h : record.headers) add(h.name, h.value.value_or(""));
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = options_.ack_timeout_ms;
  const std::string msg_id(record.event_id);
  if (!msg_id.empty()) po.MsgId = msg_id.c_str();
  const uint64_t seq = next_seq_++;
  if (s == NATS_OK) {
    {
      absl::MutexLock lock(&mu_);
      seq_of_[msg] = seq;  // before publishing: the ack may come before js_PublishMsgAsync returns
    }
    natsMsg* owned = msg;
    s = js_PublishMsgAsync(js_, &msg, &po);  // on success the client owns the message and clears `msg`
    if (s != NATS_OK) {
      absl::MutexLock lock(&mu_);
      seq_of_.erase(owned);
    }
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    keys_.Release(key_token);
    switch (ClassifyPublishResult(s, 0)) {
      case sinks::Outcome::kRetriable:
        // Stalled (MaxPending reached) or between connections: hold it and try again.
        return s == NATS_TIMEOUT || s == NATS_NOT_YET_CONNECTED ? ProduceResult::Full()
                                                                : ProduceResult::Failed(Cat("nats: publish: ", StatusText(s)));
      case sinks::Outcome::kRejectedEvent:
        return ProduceResult::Rejected(RejectionReason(s, 0), Cat("nats: publish: ", StatusText(s)));
      default:
        return ProduceResult::Failed(Cat("nats: publish: ", StatusText(s)));
    }
  }
  inflight_.emplace(seq, InFlight{origin, subject, record.PayloadBytes(), std::move(key_token)});
  return ProduceResult::Ok();
}

void NatsSink::Serve(Completion& c) {
  auto it = inflight_.find(c.seq);
  if (it == inflight_.end()) return;  // purged, its report already served
  InFlight f = std::move(it->second);
  inflight_.erase(it);
  keys_.Release(f.key_token);
  if (handler_ == nullptr) return;
  sinks::Report r;
  r.origin = f.origin;
  r.outcome = ClassifyPublishResult(c.status, c.js_code);
  r.topic = f.subject;
  r.bytes = f.bytes;
  std::string error_name;
  if (r.outcome != sinks::Outcome::kAcked) {
    r.reason = RejectionReason(c.status, c.js_code);
    r.error = c.error;
    error_name = c.js_code != 0 ? Cat("JS_", c.js_code) : natsStatus_GetText(static_cast<natsStatus>(c.status));
    r.error_name = error_name;
    if (c.rejected) {
      r.event_id = c.rejected->event_id;
      r.source_lsn = c.rejected->HeaderText("source_lsn");
      r.rejected = &*c.rejected;
    }
  }
  handler_->OnReport(r);
}

int NatsSink::Poll(int timeout_ms) {
  std::deque<Completion> batch = sinks::TakeCompletions(mu_, done_, timeout_ms);
  for (Completion& c : batch) Serve(c);
  return static_cast<int>(batch.size());
}

void NatsSink::Purge() {
  natsMsgList pending;
  if (js_ != nullptr && next_seq_ > 1 && js_PublishAsyncGetPendingList(&pending, js_) == NATS_OK) {
    natsMsgList_Destroy(&pending);
  }
  {
    absl::MutexLock lock(&mu_);
    seq_of_.clear();  // their acks, if any still come, are dropped by the client
    for (const auto& [seq, f] : inflight_) {
      Completion c;
      c.seq = seq;
      c.status = NATS_CONNECTION_CLOSED;
      c.error = "purged";
      done_.push_back(std::move(c));
    }
  }
  Wake();
}

absl::Status NatsSink::FatalError() const {
  absl::MutexLock lock(const_cast<absl::Mutex*>(&mu_));
  return fatal_;
}

absl::Status NatsSink::CheckReachable(int timeout_ms) {
  // The client reconnects in the background: wait for it (the caller retries in a loop) rather than fail at once.
  const absl::Time until = absl::Now() + absl::Milliseconds(timeout_ms);
  while (!connected_ && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
  if (!connected_) return absl::UnavailableError("nats: not connected to the server");
  natsStatus s = natsConnection_FlushTimeout(nc_, timeout_ms);
  if (s != NATS_OK) return absl::UnavailableError(Cat("nats: the server does not answer: ", StatusText(s)));
  connected_ = true;
  if (!stream_checked_) return CheckStream();
  return absl::OkStatus();
}

}  // namespace outbox::nats
