// HttpSink: the Sink (sinks/sink.h) over HTTP webhooks, with libcurl's multi interface driven from the relay's loop
// thread. Each record is one POST to its URL (http_sink.url with the record's topic filled in): the body is the
// record's value, its headers are HTTP headers, Idempotency-Key is the event id, the key goes in one header.
//
//   loop thread: Produce --> Dispatcher (per-key queues, rules.h) --> curl easy handles in the multi handle
//   curl's sockets and its timer (a timerfd), and a kick eventfd --> one epoll fd = wakeup_fd()
//   loop thread: Poll --> curl_multi_socket_action --> finished transfers --> Classify --> reports / retries
//
// A 2xx acks; 408, 429, 5xx and no answer retry the same request with capped backoff (honouring Retry-After),
// forever, the key's later events waiting (reachable() is false meanwhile; the core's release_slot_after_ms
// applies); any other answer rejects the event for good (kRejectedEvent; 413 as kTooLarge). With batch_max_events
// above 1, the events ready for one URL go in one request (a JSON array, rules.h BatchBody), answered together; a
// batch refused for good is kRejectedBatch for each of its events (the core halts naming them). Owned by the loop
// thread; every call on it, and no thread of its own (libcurl's resolver may use one internally; it never touches
// the sink).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/record.h"
#include "http/rules.h"
#include "sinks/sink.h"

// libcurl's handles, declared as curl.h declares them (its header stays out of the sink's users).
typedef void CURLM;
typedef void CURL;
struct curl_slist;

namespace outbox::http {

// What the sink needs (from config::HttpSinkConfig: this module knows no configuration).
struct Options {
  std::string url;          // the URL template (${routedByValue}, ${topic})
  std::string route_topic;  // outbox.route.topic (to recover ${routedByValue} from a topic)
  std::string content_type = "application/json";
  std::string key_header = "Outbox-Key";
  int64_t timeout_ms = 10000;
  int64_t connect_timeout_ms = 2000;
  size_t max_in_flight = 16;     // requests at once
  size_t batch_max_events = 1;   // records in one request (more than 1: a JSON array)
  BackoffPolicy backoff;
  std::string bearer_token, user, password;
  std::string tls_ca, tls_cert, tls_key;
  std::string check_url;  // HEAD by CheckReachable (default: the URL's origin)
  size_t max_queued = 200000;  // records held by the sink (above the delivery bounds): kFull beyond
  std::string user_agent = "outbox-relay";
};

// One HEAD to `url` (blocking): OK when an HTTP answer other than 408, 429, 502, 503 or 504 came (a receiver that
// does not serve HEAD still answers). UNAVAILABLE when nothing or an overloaded gateway answered;
// FAILED_PRECONDITION for what the configuration must fix (TLS verification). `*status` gets the answer's status.
absl::Status Probe(const Options& options, const std::string& url, int timeout_ms, long* status);

class HttpSink final : public sinks::Sink {
 public:
  static absl::StatusOr<std::unique_ptr<HttpSink>> Create(const Options& options, sinks::ReportHandler* handler);
  ~HttpSink() override;
  HttpSink(const HttpSink&) = delete;
  HttpSink& operator=(const HttpSink&) = delete;

  // kRejected: a header HTTP cannot carry. kFull: max_queued records held. Otherwise queued behind its key.
  sinks::ProduceResult Produce(const Record& record, uint64_t origin) override;
  int Poll(int timeout_ms) override;
  int wakeup_fd() const override { return epoll_fd_; }
  void DrainWakeup() override;
  // Aborts every request and forgets every queued record; each gets a kRetriable report.
  void Purge() override;
  size_t Outstanding() const override { return pending_.size(); }
  absl::Status FatalError() const override { return fatal_; }
  // False while an event waits for a retry after a failed attempt (the receiver down, 5xx, 429).
  bool reachable() const override { return dispatcher_.retrying() == 0; }
  std::string unreachable_reason() const override { return last_failure_; }
  absl::Status CheckReachable(int timeout_ms) override;

  // Requests answered with a retry so far (for tests and logs).
  uint64_t retries() const { return retries_; }

 private:
  using Clock = std::chrono::steady_clock;
  HttpSink(const Options& options, sinks::ReportHandler* handler);
  // A record the sink holds until its report.
  struct Pending {
    uint64_t origin = 0;
    OwnedRecord record;  // its URL is made when a request takes it (one copy per record less)
    size_t bytes = 0;
    CURL* easy = nullptr;  // the request it is in, if any
  };
  // One request in flight: one record, or a batch of records for the same URL.
  struct Transfer {
    std::vector<uint64_t> seqs;
    std::string url;
    std::string body;  // a batch's JSON array (a single record's body is its value, not copied)
    curl_slist* headers = nullptr;
    std::string answer;    // the first bytes of the answer's body (for errors)
    char error[256] = {};  // curl's error buffer (CURL_ERROR_SIZE)
  };
  // A report waiting for Poll to serve it.
  struct Done {
    uint64_t seq = 0;
    sinks::Outcome outcome = sinks::Outcome::kAcked;
    sinks::Reason reason = sinks::Reason::kNone;
    std::string error, error_name;
  };
  friend struct CurlCallbacks;  // sink.cc: curl's socket, timer and write callbacks (on the loop thread)

  absl::Status Init();
  // One round of I/O without waiting: sockets, curl's timer, finished transfers, new requests.
  void Step();
  // Starts the requests for the events the dispatcher hands out (batched by URL up to batch_max_events).
  void StartReady();
  void Start(const std::vector<uint64_t>& seqs);
  void Finish(CURL* easy, int curl_code);
  void Release(CURL* easy);
  void ArmTimer();
  void Kick();
  int Serve();

  Options options_;
  UrlTemplate url_;
  sinks::ReportHandler* handler_ = nullptr;
  CURLM* multi_ = nullptr;
  int epoll_fd_ = -1;
  int timer_fd_ = -1;  // armed at the earlier of curl's timeout and the next retry
  int kick_fd_ = -1;   // written by Produce, so that the loop wakes to send at once
  std::optional<Clock::time_point> curl_due_;  // curl's timer
  Dispatcher dispatcher_;
  std::unordered_map<uint64_t, Pending> pending_;  // node-stable: curl holds pointers into it
  std::unordered_map<CURL*, Transfer> transfers_;  // node-stable: curl holds pointers into them
  std::deque<Done> done_;
  absl::Status fatal_;
  std::string last_failure_;
  uint64_t next_seq_ = 1;
  uint64_t retries_ = 0;
};

}  // namespace outbox::http
