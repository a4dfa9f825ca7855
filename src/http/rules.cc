// The HTTP sink's pure rules (see rules.h).
#include "http/rules.h"

#include <curl/curl.h>

#include <algorithm>

#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace outbox::http {

Verdict Classify(int curl_code, long http_status) {
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_OK:
      if (http_status >= 200 && http_status < 300) return Verdict::kAck;
      if (http_status == 408 || http_status == 429 || http_status >= 500) return Verdict::kRetry;
      if (http_status == 0) return Verdict::kRetry;  // no status line (cannot be on a completed HTTP transfer)
      return Verdict::kReject;
    // No answer, or none in time: the receiver or the path to it is down or slow. Sent again.
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_QUIC_CONNECT_ERROR:
    case CURLE_SSL_CONNECT_ERROR:  // the handshake broke off (a proxy restarting); verification failures are below
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_AGAIN:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_PROXY:
    case CURLE_WRITE_ERROR:
    case CURLE_READ_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
      return Verdict::kRetry;
    // The configuration cannot work: a wrong CA, a certificate that does not match, a client certificate that
    // does not load, a URL curl cannot use.
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN:
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR:
    case CURLE_FAILED_INIT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_FUNCTION_NOT_FOUND:
    case CURLE_TOO_MANY_REDIRECTS:
      return Verdict::kFatal;
    default:
      // A code an HTTP transfer should not end with: recreate the client rather than loop on it.
      return Verdict::kFatal;
  }
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAck: return "ack";
    case Verdict::kRetry: return "retry";
    case Verdict::kReject: return "reject";
    case Verdict::kFatal: return "fatal";
  }
  return "?";
}

namespace {
constexpr std::string_view kRoutedByValue = "${routedByValue}";
constexpr std::string_view kTopic = "${topic}";

bool Unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// RFC 9110 tchar.
bool TokenChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

void ReplaceAll(std::string* text, std::string_view what, std::string_view with) {
  for (size_t at = text->find(what); at != std::string::npos; at = text->find(what, at + with.size())) {
    text->replace(at, what.size(), with);
  }
}
}  // namespace

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (Unreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

UrlTemplate::UrlTemplate(std::string url_template, std::string_view route_topic)
    : template_(std::move(url_template)) {
  const size_t at = route_topic.find(kRoutedByValue);
  if (at != std::string_view::npos && route_topic.find(kRoutedByValue, at + 1) == std::string_view::npos) {
    routed_ = true;
    prefix_ = std::string(route_topic.substr(0, at));
    suffix_ = std::string(route_topic.substr(at + kRoutedByValue.size()));
  }
}

std::string UrlTemplate::RoutedByValue(std::string_view topic) const {
  if (routed_ && topic.size() > prefix_.size() + suffix_.size() && topic.starts_with(prefix_) &&
      topic.ends_with(suffix_)) {
    return std::string(topic.substr(prefix_.size(), topic.size() - prefix_.size() - suffix_.size()));
  }
  return std::string(topic);
}

std::string UrlTemplate::For(std::string_view topic) const {
  std::string url = template_;
  ReplaceAll(&url, kRoutedByValue, PercentEncode(RoutedByValue(topic)));
  ReplaceAll(&url, kTopic, PercentEncode(topic));
  return url;
}

std::string Origin(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  const size_t path = url.find_first_of("/?#", scheme + 3);
  return Cat(url.substr(0, path == std::string_view::npos ? url.size() : path), "/");
}

absl::Status CheckHeaders(const Record& record) {
  for (const Header& h : record.headers) {
    if (h.name.empty() || !std::all_of(h.name.begin(), h.name.end(), [](char c) { return TokenChar(c); })) {
      return absl::InvalidArgumentError(Cat("header name \"", h.name, "\" is not a legal HTTP header name"));
    }
    if (h.value && h.value->find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
      return absl::InvalidArgumentError(
          Cat("header ", h.name, " contains a line break or NUL, which an HTTP header cannot carry"));
    }
  }
  if (record.key && record.key->find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
    return absl::InvalidArgumentError("the key contains a line break or NUL, which an HTTP header cannot carry");
  }
  return absl::OkStatus();
}

std::string BatchBody(const std::vector<const OwnedRecord*>& records) {
  std::string out = "[";
  for (const OwnedRecord* r : records) {
    nlohmann::json head = nlohmann::json::object();
    head["id"] = r->event_id;
    head["topic"] = r->topic;
    head["key"] = r->key ? nlohmann::json(*r->key) : nlohmann::json(nullptr);
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [name, value] : r->headers) headers[name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    head["headers"] = std::move(headers);
    std::string element = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    element.pop_back();  // the closing brace: "value" is appended as text
    Append(&element, ",\"value\":");
    if (!r->value) {
      element += "null";
    } else if (nlohmann::json::accept(*r->value)) {
      element += *r->value;  // its exact text, never re-serialized
    } else {
      element += nlohmann::json(*r->value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    Append(&out, out.size() > 1 ? "," : "", element, "}");
  }
  return out + "]";
}

std::string BatchIdempotencyKey(const std::vector<std::string_view>& ids) {
  if (ids.size() == 1) return std::string(ids[0]);
  uint64_t h = 14695981039346656037ULL;
  for (std::string_view id : ids) {
    for (unsigned char c : id) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;  // between ids (a byte that text ids do not hold)
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) hex[i] = kHex[h & 15];
  return Cat("batch-", ids.size(), "-", hex);
}

std::chrono::milliseconds BackoffFor(const BackoffPolicy& policy, int failures,
                                     std::optional<std::chrono::milliseconds> retry_after) {
  if (retry_after) return std::clamp(*retry_after, std::chrono::milliseconds(0), policy.retry_after_max);
  std::chrono::milliseconds wait = policy.initial;
  for (int i = 1; i < failures && wait < policy.max; ++i) wait *= 2;
  return std::min(wait, policy.max);
}

// ---- Dispatcher ----

void Dispatcher::Add(uint64_t seq, const std::optional<std::string>& key) {
  // A keyless event is a queue of its own (HttpSink's key tokens start with '=', so none looks like "#<seq>").
  std::string token = key ? *key : Cat("#", seq);
  auto [it, fresh] = keys_.try_emplace(token);
  Key& k = it->second;
  if (fresh) {
    k.head = seq;
    Ready(token);
  } else {
    events_[k.tail].next = seq;
  }
  k.tail = seq;
  events_[seq] = Event{std::move(token), 0};
}

const Dispatcher::Key* Dispatcher::HeadKey(uint64_t seq) const {
  auto at = events_.find(seq);
  if (at == events_.end()) return nullptr;
  auto it = keys_.find(at->second.token);
  return it == keys_.end() || it->second.head != seq ? nullptr : &it->second;
}

std::vector<uint64_t> Dispatcher::TakeReady(Clock::time_point now, size_t limit) {
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    Ready(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
  }
  std::vector<uint64_t> out;
  while (!ready_.empty() && in_flight_ < max_in_flight_ && out.size() < limit) {
    const std::string token = std::move(ready_.front());
    ready_.pop_front();
    auto it = keys_.find(token);
    if (it == keys_.end() || it->second.out || it->second.due > now) continue;
    it->second.out = true;
    ++in_flight_;
    out.push_back(it->second.head);
  }
  return out;
}

void Dispatcher::Done(uint64_t seq) {
  Key* k = HeadKey(seq);
  if (k == nullptr) return;
  auto at = events_.find(seq);
  const std::string token = std::move(at->second.token);
  const uint64_t next = at->second.next;
  events_.erase(at);
  if (k->out) --in_flight_;
  if (k->failures > 0) --retrying_;
  k->out = false;
  k->failures = 0;
  if (next == 0) {
    keys_.erase(token);
  } else {
    k->head = next;
    Ready(token);
  }
}

std::chrono::milliseconds Dispatcher::Retry(uint64_t seq, Clock::time_point now,
                                            std::optional<std::chrono::milliseconds> retry_after) {
  Key* k = HeadKey(seq);
  if (k == nullptr) return std::chrono::milliseconds(0);
  if (k->out) --in_flight_;
  k->out = false;
  if (k->failures++ == 0) ++retrying_;
  const std::chrono::milliseconds wait = BackoffFor(policy_, k->failures, retry_after);
  k->due = now + wait;
  waiting_.emplace(k->due, events_.at(seq).token);
  return wait;
}

std::optional<Dispatcher::Clock::time_point> Dispatcher::NextDue() const {
  if (waiting_.empty()) return std::nullopt;
  return waiting_.begin()->first;
}

std::vector<uint64_t> Dispatcher::Clear() {
  std::vector<uint64_t> seqs;
  seqs.reserve(events_.size());
  for (const auto& entry : events_) seqs.push_back(entry.first);
  std::sort(seqs.begin(), seqs.end());
  keys_.clear();
  events_.clear();
  ready_.clear();
  waiting_.clear();
  in_flight_ = 0;
  retrying_ = 0;
  return seqs;
}

int Dispatcher::failures(uint64_t seq) const {
  const Key* k = HeadKey(seq);
  return k == nullptr ? 0 : k->failures;
}

}  // namespace outbox::http
