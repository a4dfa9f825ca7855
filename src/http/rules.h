// The HTTP sink's pure rules, unit-tested without a server (tests/http/): what one request's result means (one
// exhaustive decision over libcurl's CURLcode and the HTTP status), the URL a record is posted to, which record
// headers HTTP can carry, and the Dispatcher: per-key queues with capped exponential backoff on an injected clock.
//
//   Produce --Add(seq, key)--> [key queues] --TakeReady(now)--> requests (at most max_in_flight, one per key)
//   answer --Acked / Rejected--> the key's next event becomes ready
//   answer --Retry(now, Retry-After)--> the same event again after the backoff; the key's later events wait
//
// No I/O, no clock of its own: the sink (sink.cc) owns one and calls it on the loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "common/record.h"

namespace outbox::http {

// The header that carries the event id: the receiver deduplicates a resend on it.
inline constexpr std::string_view kIdempotencyKey = "Idempotency-Key";

// What one request's result means. `curl_code` is the transfer's CURLcode, `http_status` the answer's status (0
// when none came).
enum class Verdict {
  kAck,     // 2xx: the receiver took it
  kRetry,   // 408, 429, 5xx, no answer (connection refused or reset, timeout, DNS): the same request again, later
  kReject,  // any other answer (4xx, 3xx): this event, for good (delivery.on_error decides)
  kFatal,   // the configuration cannot work (TLS verification, a malformed URL, a client certificate): recreate
};
Verdict Classify(int curl_code, long http_status);
std::string_view VerdictName(Verdict verdict);

// The URL template (http_sink.url) for one record: ${topic} is the record's topic, ${routedByValue} the route
// column's value, recovered from the topic by taking off the literal text around ${routedByValue} in
// outbox.route.topic (`route_topic`); a topic that does not fit the template (the dead-letter topic) stands for
// itself. Every substituted value is percent-encoded outside the unreserved characters.
class UrlTemplate {
 public:
  UrlTemplate(std::string url_template, std::string_view route_topic);
  std::string For(std::string_view topic) const;
  std::string RoutedByValue(std::string_view topic) const;

 private:
  std::string template_;
  std::string prefix_, suffix_;  // of outbox.route.topic around ${routedByValue}
  bool routed_ = false;          // outbox.route.topic holds ${routedByValue} once
};

// scheme://host[:port]/ of a URL (what `check` asks by default); "" when it has no scheme.
std::string Origin(std::string_view url);

// Header names HTTP can carry (an RFC 9110 token) and values without CR, LF or NUL; the error names the header.
absl::Status CheckHeaders(const Record& record);

// A batch's body (http_sink.batch_max_events > 1): a JSON array with one object per record, in the order given:
// {"id": the event id, "topic", "key" (null for none), "headers": {name: value or null}, "value"}; a value that is
// JSON goes in as its exact text, any other as a JSON string, a null value as null.
std::string BatchBody(const std::vector<const OwnedRecord*>& records);
// A batch's Idempotency-Key: the same ids in the same order always give the same key ("batch-<n>-<16 hex digits>",
// FNV-1a over the ids); a batch of one is its event's id.
std::string BatchIdempotencyKey(const std::vector<std::string_view>& ids);

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string PercentEncode(std::string_view text);

struct BackoffPolicy {
  std::chrono::milliseconds initial{100};          // the first retry's wait
  std::chrono::milliseconds max{5000};             // the doubling stops here
  std::chrono::milliseconds retry_after_max{60000};  // a Retry-After answer is honoured up to this
};

// The wait before attempt `failures + 1` of an event that failed `failures` times (>= 1): initial * 2^(failures-1)
// capped at max; a Retry-After answer replaces it (capped at retry_after_max).
std::chrono::milliseconds BackoffFor(const BackoffPolicy& policy, int failures,
                                     std::optional<std::chrono::milliseconds> retry_after);

// Per-key queues of events (by the sink's sequence number). A key's next event is handed out only after its
// previous one was acknowledged or rejected for good; a retried event keeps its key's later events waiting.
// Events without a key are independent. At most `max_in_flight` events are out at once; keys are served in the
// order they became ready. Loop thread only.
class Dispatcher {
 public:
  using Clock = std::chrono::steady_clock;
  Dispatcher(BackoffPolicy policy, size_t max_in_flight) : policy_(policy), max_in_flight_(max_in_flight) {}

  // Queues event `seq` behind its key's earlier ones; `key` nullopt: no key (no order with anything).
  void Add(uint64_t seq, const std::optional<std::string>& key);
  // The events to send now (at most `limit`), marked in flight.
  std::vector<uint64_t> TakeReady(Clock::time_point now, size_t limit = SIZE_MAX);
  // The event's request ended with an ack, or with a permanent rejection: its key moves on.
  void Done(uint64_t seq);
  // The event's request failed for a reason a later attempt may cure: it is sent again after the returned wait.
  std::chrono::milliseconds Retry(uint64_t seq, Clock::time_point now,
                                  std::optional<std::chrono::milliseconds> retry_after);
  // The earliest time a waiting retry is due (nullopt: none waits).
  std::optional<Clock::time_point> NextDue() const;
  // Forgets every event; returns their seqs.
  std::vector<uint64_t> Clear();

  size_t size() const { return events_.size(); }   // events queued or out
  size_t in_flight() const { return in_flight_; }
  size_t retrying() const { return retrying_; }    // keys whose head failed at least once and is not acked yet
  int failures(uint64_t seq) const;                // of the key seq heads (0 when it is not a head)

 private:
  // A key's events form a list through Event::next, from its head (the one sent, or to be sent) to its tail: most
  // keys hold one or two events, and a std::deque each cost about 700 bytes per key (a sink holding 90,000 events
  // over 20,000 keys spent 14 MB on them).
  struct Key {
    uint64_t head = 0, tail = 0;
    int failures = 0;            // of the head
    bool out = false;            // the head's request is in flight
    Clock::time_point due{};     // waiting for a retry until then
  };
  struct Event {
    std::string token;  // its key's
    uint64_t next = 0;  // the key's next event (0: none)
  };
  void Ready(const std::string& token) { ready_.push_back(token); }
  // The key whose head `seq` is (nullptr when seq is unknown or waits behind another event of its key).
  const Key* HeadKey(uint64_t seq) const;
  Key* HeadKey(uint64_t seq) { return const_cast<Key*>(std::as_const(*this).HeadKey(seq)); }

  BackoffPolicy policy_;
  size_t max_in_flight_;
  absl::flat_hash_map<std::string, Key> keys_;
  absl::flat_hash_map<uint64_t, Event> events_;
  std::deque<std::string> ready_;                                  // keys whose head may be sent now
  std::set<std::pair<Clock::time_point, std::string>> waiting_;   // keys waiting for their retry
  size_t in_flight_ = 0;
  size_t retrying_ = 0;
};

}  // namespace outbox::http
