// The Sink interface: what the delivery core needs of a broker, and what a broker's client tells it back, as types.
// Every sink (Kafka, transactional Kafka, RabbitMQ, NATS, HTTP) turns its client's results into these outcomes in
// one exhaustive switch of its own (kafka::ClassifyDeliveryError for librdkafka), so the core never sees a client's
// error codes or words. No I/O here.
//
//   core --Produce(record, origin)--> sink --> broker
//   core <--OnReport(report)-------- sink.Poll()      (on the loop thread only, once per produced record)
//
// A sink that writes the checkpoint in its own transaction (CheckpointStore::commits_records) reports no per-record
// acknowledgement: the checkpoint's report is its "committed up to", and it covers every record produced before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/record.h"

namespace outbox::sinks {

// What one record's report means for the core.
enum class Outcome {
  kAcked,          // written and acknowledged (durable as the sink promises)
  kRetriable,      // given up for a reason a rewind may cure (purged, timed out, transport): rewind, never re-produce
                   // this one record alone (that would reorder its key)
  kRejectedEvent,  // this record refused for good: delivery.on_error decides (halt or dead-letter it)
  kRejectedBatch,  // the batch it was in refused for good: halt, never dead-letter its batch mates
  kFatal,          // the sink's client is unusable: rewind, and recreate the sink
};

constexpr std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kAcked: return "acked";
    case Outcome::kRetriable: return "retriable";
    case Outcome::kRejectedEvent: return "rejected event";
    case Outcome::kRejectedBatch: return "rejected batch";
    case Outcome::kFatal: return "fatal";
  }
  return "?";
}

// Why a record was refused for good.
enum class Reason {
  kNone = 0,
  kTooLarge = 1,   // over the sink's or the destination's size limit: dead-lettered without its value
  kTimestamp = 2,  // a timestamp the destination refuses: dead-lettered with the time of dead-lettering
  kTopic = 3,      // the destination cannot be produced to (illegal name, unknown)
};

// One record's report, served by Poll on the loop thread; its views are valid during the call.
struct Report {
  uint64_t origin = 0;  // what Produce was given
  Outcome outcome = Outcome::kAcked;
  Reason reason = Reason::kNone;
  std::string_view error;       // the broker's or the client's words ("" when acked)
  std::string_view error_name;  // the error code's name (INVALID_TIMESTAMP, ...)
  std::string_view topic;       // the destination as produced
  size_t bytes = 0;             // key + value as produced (Record::PayloadBytes)
  std::string_view event_id;    // the record's `id` header (errors only)
  std::string_view source_lsn;  // the record's `source_lsn` header (errors only)
  const OwnedRecord* rejected = nullptr;  // not acked: the record as produced (for a dead letter); may be null
};

// What Produce did with a record.
struct ProduceResult {
  enum class Code {
    kOk,        // queued: its report follows
    kFull,      // not now (the client's queue is full, or the destination's limits are being asked): poll, retry
    kRejected,  // refused for good before producing (`reason`): no report follows
    kFailed,    // the client is unusable: rewind (and recreate the sink when FatalError says so)
  };
  Code code = Code::kOk;
  Reason reason = Reason::kNone;
  std::string error;  // for kRejected and kFailed: one line naming the limit or the cause

  bool ok() const { return code == Code::kOk; }
  static ProduceResult Ok() { return {}; }
  static ProduceResult Full() { return {Code::kFull, Reason::kNone, {}}; }
  static ProduceResult Rejected(Reason reason, std::string error) { return {Code::kRejected, reason, std::move(error)}; }
  static ProduceResult Failed(std::string error) { return {Code::kFailed, Reason::kNone, std::move(error)}; }
};

// Receives the reports; the core is one. Called from Poll (or Flush) on the loop thread only.
class ReportHandler {
 public:
  virtual ~ReportHandler() = default;
  virtual void OnReport(const Report& report) = 0;
};

// A broker's producer. Owned by the loop thread; every call on it.
class Sink {
 public:
  virtual ~Sink() = default;
  // Queues one record; `origin` comes back in its report.
  virtual ProduceResult Produce(const Record& record, uint64_t origin) = 0;
  // Serves pending reports to the handler (waiting up to timeout_ms for one); returns how many events were served.
  virtual int Poll(int timeout_ms) = 0;
  // The loop has read everything the stream had for now: a sink that holds records back to batch them with later
  // ones (librdkafka's linger) sends what it holds now, since nothing more is coming soon. May block for a
  // millisecond and serve reports, as Poll does. A sink that never holds records back does nothing.
  virtual void SendHeld() {}
  // Readable when reports are waiting: clear it with DrainWakeup(), then Poll(0).
  virtual int wakeup_fd() const = 0;
  virtual void DrainWakeup() = 0;
  // Drops every queued and in-flight record; each still gets a kRetriable report.
  virtual void Purge() = 0;
  // Records produced whose report has not been served yet.
  virtual size_t Outstanding() const = 0;
  // Non-OK once the client is unusable for good (recreate the sink); the status names the cause.
  virtual absl::Status FatalError() const = 0;
  // False while the client knows every broker to be down.
  virtual bool reachable() const = 0;
  // What the client last said about reaching the broker (a refused authentication, a transport error); "" when
  // nothing is known. For /readyz and the reconnect log.
  virtual std::string unreachable_reason() const { return {}; }
  // Asks the broker for an answer within the timeout (blocks; not on the hot path). OK when it answered.
  virtual absl::Status CheckReachable(int timeout_ms) = 0;
};

}  // namespace outbox::sinks
