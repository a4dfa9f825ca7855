// NatsSink: the Sink (sinks/sink.h) over a NATS JetStream stream, with the NATS C client (libnats). Each record is
// an asynchronous JetStream publish to its topic as the subject, with Nats-Msg-Id = the event id (the stream drops a
// resend inside its duplicate_window), the record's headers and its key as the `key` header.
//
//   loop thread: Produce --js_PublishMsgAsync--> client --> server
//   client's threads: ack handler --> [mutex-guarded completions] --> eventfd (wakeup_fd)
//   loop thread: Poll --> completions --> ReportHandler::OnReport
//
// Owned by the loop thread; every Sink call runs there. The client's own threads (its reader, flusher and callback
// dispatcher) only push completions and connection state under mu_ and write the eventfd; they never reach the
// report handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/record.h"
#include "nats/rules.h"
#include "sinks/sink.h"

// The client's handles, declared as libnats declares them (its header stays out of the sink's users).
typedef struct __natsConnection natsConnection;
typedef struct __natsOptions natsOptions;
typedef struct __natsMsg natsMsg;
typedef struct __jsCtx jsCtx;

namespace outbox::nats {

// What the sink needs to connect (from config::NatsConfig: this module knows no configuration).
struct Options {
  std::string url;  // one URL, or several separated by commas
  std::string stream;
  std::string user, password, token, creds;
  std::string tls_ca, tls_cert, tls_key, tls_hostname;
  int64_t ack_timeout_ms = 10000;
  int64_t connect_timeout_ms = 2000;
  int64_t max_pending = 100000;  // asynchronous publishes in flight (above the delivery bounds)
  std::string name = "outbox-relay";
};

// The stream as the server describes it: what the sink checks records against.
struct StreamFacts {
  std::vector<std::string> subjects;
  int64_t max_msg_size = -1;      // -1: no limit of its own
  int64_t duplicate_window_ms = 0;
  int64_t max_payload = 0;        // the server's max_payload
};

// Connects once (no retry) and describes the stream; an error names the URL's problem or the missing stream.
absl::StatusOr<StreamFacts> ProbeStream(const Options& options);

class NatsSink final : public sinks::Sink {
 public:
  // Connects (retrying in the background when the server does not answer yet). A missing stream is an error
  // naming it. Reports go to `handler` (which outlives the sink) from Poll.
  static absl::StatusOr<std::unique_ptr<NatsSink>> Create(const Options& options, sinks::ReportHandler* handler);
  ~NatsSink() override;
  NatsSink(const NatsSink&) = delete;
  NatsSink& operator=(const NatsSink&) = delete;

  // kFull: disconnected, the stream not checked yet, or a record of the same key unacknowledged. kRejected: a
  // subject the stream does not bind, a header the protocol cannot carry, larger than max_payload or the stream's
  // max_msg_size; checked before publishing.
  sinks::ProduceResult Produce(const Record& record, uint64_t origin) override;
  int Poll(int timeout_ms) override;
  int wakeup_fd() const override { return wake_fd_; }
  void DrainWakeup() override;
  // Takes every unacknowledged publish back from the client; each gets a kRetriable report.
  void Purge() override;
  size_t Outstanding() const override { return inflight_.size(); }
  absl::Status FatalError() const override;
  bool reachable() const override { return connected_.load(); }
  // A round trip to the server and the stream's description within the timeout.
  absl::Status CheckReachable(int timeout_ms) override;
  const StreamFacts& facts() const { return facts_; }

 private:
  NatsSink() = default;
  // What the client's threads hand to the loop.
  struct Completion {
    uint64_t seq = 0;
    int status = 0;   // natsStatus
    int js_code = 0;  // jsErrCode
    std::string error;
    std::optional<OwnedRecord> rejected;  // errors only
  };
  // A publish the loop waits for.
  struct InFlight {
    uint64_t origin = 0;
    std::string subject;
    size_t bytes = 0;
    std::string key_token;  // the KeyGate's
  };
  friend struct Callbacks;  // the client's callbacks (sink.cc), on its threads
  void Wake();
  void Push(Completion c);
  // Reads the stream's description (blocking, at most the JetStream wait).
  absl::Status CheckStream();
  void Serve(Completion& c);

  Options options_;
  sinks::ReportHandler* handler_ = nullptr;
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  int wake_fd_ = -1;
  std::atomic<bool> connected_{false};
  std::atomic<bool> closing_{false};  // the destructor closes the connection (its disconnect is no news)
  bool stream_checked_ = false;
  StreamFacts facts_;

  absl::Mutex mu_;
  absl::flat_hash_map<const natsMsg*, uint64_t> seq_of_ ABSL_GUARDED_BY(mu_);  // published, not completed
  std::deque<Completion> done_ ABSL_GUARDED_BY(mu_);
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;

  // Loop thread only.
  absl::flat_hash_map<uint64_t, InFlight> inflight_;
  KeyGate keys_;
  uint64_t next_seq_ = 1;
};

}  // namespace outbox::nats
