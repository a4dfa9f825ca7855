// Relay: the loop that wires the modules (DESIGN.md "The flow"). One thread owns the replication connection,
// the decoder and relation cache, the mapper, the producer's delivery reports and the ack tracker; it waits in
// one poll() on the libpq socket and the producer's wakeup pipe, with a timeout for the next status update.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "app/stream_buffer.h"
#include "common/lsn.h"
#include "config/config.h"
#include "delivery/ack_tracker.h"
#include "kafka/checkpoint.h"
#include "kafka/sink.h"
#include "ops/metrics.h"
#include "outbox/mapper.h"
#include "pg/pgoutput.h"
#include "pg/relation_cache.h"
#include "pg/replication_connection.h"

namespace outbox::app {

struct RunOptions {
  std::optional<Lsn> start_lsn;  // --start-lsn
  bool accept_gap = false;       // --accept-gap
};

// Exit codes (SPEC.md §2).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFatal = 1;
inline constexpr int kExitUsage = 2;

class Relay {
 public:
  // `stop` is set by the signal handler; `metrics` outlives the relay.
  Relay(config::Config config, RunOptions options, ops::Metrics* metrics, const std::atomic<bool>* stop);
  ~Relay();

  // Streams until `stop` is set (returns OK) or a fatal error (returns it; the caller exits 1).
  absl::Status Run();

 private:
  using Clock = std::chrono::steady_clock;

  // One replication session: connect, check the slot and the checkpoint, START_REPLICATION, stream. Returns
  // OK on stop, UNAVAILABLE for what a reconnect may cure, anything else is fatal.
  absl::Status Session();
  absl::Status PrepareSlot(pg::ReplicationConnection& conn, const pg::SystemInfo& system);
  absl::Status Stream(pg::ReplicationConnection& conn);
  absl::Status HandleFrame(std::string_view bytes);
  absl::Status HandleMessage(const pg::Message& message);
  absl::Status HandleInsert(const pg::Insert& insert);
  absl::Status HandleLogicalMessage(const pg::LogicalMessage& message);
  // An event of a streamed in-progress transaction: mapped now (with the relation as it is at this point of the
  // stream), produced at its Stream Commit.
  absl::Status BufferStreamed(uint32_t subxid, absl::StatusOr<outbox::Record> record, std::string_view raw_value);
  absl::Status ReplayStep();
  // The transaction's Commit (or the end of a streamed transaction's replay): close its tracker entry.
  void FinishTransaction(Lsn end_lsn);
  // Produces an event record of the current transaction. A record the producer's queue has no room for is held
  // (produced later from the loop); a producer that failed sets the rewind. Returns OK then too: only a fatal
  // error is returned.
  absl::Status ProduceRecord(const outbox::Record& record);
  // What a produce error other than a full queue does to an event record (rewind, per-event error, or fatal).
  absl::Status OnEventProduceError(const absl::Status& error, const outbox::Record& record);
  // A permanent error for one event: under halt the transaction is marked and the halt raised at its Commit;
  // under dead_letter `original` (with an `error` header) goes to the dead-letter topic instead.
  absl::Status PerEventError(const absl::Status& error, outbox::Record original);
  absl::Status ProduceDeadLetter(outbox::Record record, const std::string& error, delivery::EntryHandle entry);
  // What a produce error other than a full queue does to a dead letter: a rewind (the dead letter was neither
  // written nor acknowledged, so its transaction is sent again), or a halt.
  absl::Status OnDeadLetterProduceError(const absl::Status& error, delivery::EntryHandle entry,
                                        const std::string& why);
  void DeadLetterFromReport(const kafka::DeliveryReport& report, delivery::EntryHandle entry);
  // Produces the held records in order, until the queue is full again or none is left.
  absl::Status ProduceHeld();
  // Counts a produced record against its entry (and starts the release clock when nothing was outstanding).
  void CountProduced(delivery::EntryHandle entry, size_t bytes);
  // Something waits for the broker: a record's report, a checkpoint's, or a held record.
  bool AwaitingBroker() const;
  void OnDeliveryReport(const kafka::DeliveryReport& report);
  // How to skip the transaction of `handle` (its end LSN once known), for halt messages.
  std::string SkipAdvice(delivery::EntryHandle handle) const;

  // Status updates and checkpoints.
  Lsn ConfirmCandidate() const;
  absl::Status MaybeCheckpoint(Lsn candidate);
  absl::Status SendStatus(pg::ReplicationConnection& conn, bool reply_requested);
  absl::Status WriteCheckpointNow(Lsn lsn, int timeout_ms);

  // Crash-only recovery: forget everything in flight and reconnect from the slot.
  void Rewind(std::string_view why);
  absl::Status EnsureSink();
  absl::Status Shutdown(pg::ReplicationConnection* conn);
  // Nothing more is read from the stream while records are held or the delivery bounds are reached.
  bool backpressured() const;
  bool bounds_reached() const;
  void UpdateGauges();
  void LogProgress();
  bool stopping() const { return stop_->load(); }

  config::Config config_;
  RunOptions options_;
 public:
  // Set from a signal handler (tests only, OUTBOX_RELAY_TEST_HOOKS=1): raise a fatal producer error.
  static std::atomic<bool> test_fatal_error;

 private:
  ops::Metrics* metrics_;
  const std::atomic<bool>* stop_;

  std::unique_ptr<kafka::KafkaSink> sink_;
  std::map<std::string, std::string> producer_conf_;
  delivery::AckTracker tracker_;
  pg::RelationCache relations_;
  pg::DecoderState decoder_;
  outbox::OutboxMapper mapper_;
  StreamBuffers streams_;
  std::optional<uint32_t> stream_xid_;                // the top-level xid of the open Stream Start block
  std::unique_ptr<StreamBuffers::Replay> replay_;     // a committed streamed transaction being produced
  Lsn replay_end_lsn_;
  std::string replay_source_lsn_;

  // The outbox table's OID once a Relation message named it (kept across rewinds: a rename shows as the same OID
  // under another name).
  std::optional<uint32_t> outbox_oid_;
  // The system this relay streams from (IDENTIFY_SYSTEM of the current connection).
  pg::SystemInfo system_;
  bool slot_checked_ = false;  // the first session's slot and gap checks passed

  // The current transaction.
  bool in_tx_ = false;
  delivery::EntryHandle tx_entry_;
  Lsn tx_commit_lsn_;
  int64_t tx_commit_time_ms_ = 0;
  std::optional<absl::Status> tx_halt_;  // a per-event error under halt: reported at Commit, with the end LSN

  // Positions.
  Lsn confirmed_;          // the last flush sent to the server (monotonic)
  Lsn checkpointed_;       // the highest checkpoint acknowledged as durable
  Lsn checkpoint_inflight_;  // a checkpoint record waiting for its report (0/0: none)
  std::optional<Lsn> idle_wal_end_;  // keepalive walEnd received while nothing was open or in flight
  Clock::time_point last_status_;
  Clock::time_point last_keepalive_;
  Clock::time_point last_ping_;
  bool reply_now_ = false;  // the server asked for a reply
  Lsn stream_position_;      // the highest WAL position seen in the stream (XLogData or keepalive)
  Lsn progress_from_;        // stream position at the last progress line
  Clock::time_point progress_at_{};
  bool caught_up_ = true;
  bool status_soon_ = false;  // a checkpoint was acknowledged: confirm it without waiting for the timer
  Clock::time_point last_progress_;  // the last ack, or when the first pending record was produced

  // Delivery state set by reports (same thread).
  std::optional<std::string> rewind_reason_;
  std::optional<absl::Status> fatal_;
  std::optional<absl::Status> halt_;
  // A batch the broker refused for good: its events, named in the halt.
  struct BatchRejection {
    std::string topic;
    std::string error, error_name;  // the broker's
    bool too_large = false;
    std::string source_lsn;   // the first event's
    std::string skip_advice;  // the first event's transaction
    std::vector<std::string> event_ids;
  };
  std::optional<BatchRejection> batch_rejection_;
  bool broker_down_ = false;
  std::map<uint64_t, Lsn> checkpoint_records_;  // opaque -> LSN of checkpoint records in flight
  // Records produced from the loop, first thing in each round: those the producer's queue had no room for
  // (QUEUE_FULL), and dead letters of records the broker rejected (built in the delivery callback). While any is
  // held nothing more is read from the stream, so the stream's order is kept, and the loop goes on with its
  // status updates and its stop and release checks.
  struct HeldRecord {
    outbox::OwnedRecord record;
    delivery::EntryHandle entry;
    bool counted = false;      // already counted against its entry (a dead letter standing in for a rejected record)
    bool dead_letter = false;
    std::string why;           // a dead letter: its error (for the halt if it cannot be written)
  };
  std::deque<HeldRecord> held_;
  uint64_t next_checkpoint_seq_ = 1;
  // Producers recreated after a fatal error in a row, with no successful delivery between (bounded: a fatal
  // error that recreating does not clear, such as a denied InitProducerId, is fatal for the relay).
  int producer_recreations_ = 0;
};

}  // namespace outbox::app
