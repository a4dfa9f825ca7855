// Relay: one pipeline's wiring and reconnect loop. It owns the replication connection (pg/), the sink (whichever
// MakeSink makes: today the Kafka producer), the checkpoint store and the delivery core (delivery/), which decides everything about what is
// produced and confirmed. One thread runs it all: it waits in one poll() on the libpq socket and the producer's
// wakeup descriptor, with a timeout for the next status update (DESIGN.md "The flow").
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/lsn.h"
#include "config/config.h"
#include "delivery/clock.h"
#include "delivery/core.h"
#include "ops/metrics.h"
#include "pg/admin.h"
#include "pg/replication_connection.h"
#include "pg/replication_stream.h"
#include "sinks/checkpoint_store.h"

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
  Relay(config::PipelineConfig config, RunOptions options, ops::Metrics* metrics, const std::atomic<bool>* stop);
  ~Relay();

  // Streams until `stop` is set (returns OK) or a fatal error (returns it; the caller exits 1).
  absl::Status Run();

 private:
  // One replication session: connect, check the slot and the checkpoint, START_REPLICATION, stream. Returns OK on
  // stop, UNAVAILABLE for what a reconnect may cure, anything else is fatal.
  absl::Status Session();
  // The slot check (pg::CheckSlot) and what it asks for: create the slot, make it a failover slot, write a
  // checkpoint. Returns the positions to stream from.
  absl::StatusOr<pg::SlotDecision> PrepareSlot(pg::ReplicationConnection& conn, const pg::SystemInfo& system);
  absl::Status Stream(pg::ReplicationStream& stream);
  // One round of the loop: held records, the stream or a replay, the producer's reports, release and status.
  absl::Status Round(pg::ReplicationStream& stream);
  // What the core raised (a rewind, a halt, a fatal error), as the stream's end; nullopt when none.
  std::optional<absl::Status> Interruption(pg::ReplicationStream& stream);
  absl::Status SendStatus(pg::ReplicationStream& stream, bool reply_requested);
  // Counts a round's frames into the current spell; true while the stream is dense (see Round).
  bool NoteFrames(int frames);
  // The publication watch (DeliveryCore::WatchPublication): every status interval (or `now`), on a plain
  // connection, whether the publication still covers the outbox table's inserts. FAILED_PRECONDITION when it does
  // not (fatal), UNAVAILABLE when the connection fails.
  absl::Status CheckPublication(bool now);
  // Slot health for the metrics (every source.slot_check_ms, on the watch's connection). Errors only log.
  void CheckSlotHealth();
  // The slot is held by this relay's previous walsender (own_walsender_pid_), which the server keeps until its
  // wal_sender_timeout after the connection died silently: end that backend, and only it, over a plain
  // connection, and wait briefly for the slot to be released. Returns whether it was ended.
  bool EndOwnOldWalsender(int64_t pid);
  int WatchTimeoutMs() const;
  // `sql` on the plain (non-replication) connection of the publication watch and the catalog read (watch_, made on
  // first use): a query that fails drops the connection, and while it fails UNAVAILABLE it is run again, on a new
  // one, up to `attempts` runs in all; an error then names `what`.
  absl::StatusOr<std::vector<pg::Row>> QueryPlain(const std::string& sql, std::string_view what, int attempts);
  // Reads the outbox table's columns (DeliveryCore::catalog_due) and gives them to the core.
  absl::Status ReadCatalog();
  // Writes the checkpoint `lsn` and waits for it to be durable (start and stop only).
  absl::Status WriteCheckpointNow(Lsn lsn, int timeout_ms);
  absl::Status Shutdown(pg::ReplicationStream* stream);
  // Forgets everything in flight and purges the producer; the next session starts again from the slot.
  void Rewind(std::string_view why);
  // Creates the producer, or recreates it after a fatal error (bounded: a fatal error that recreating does not
  // clear, such as a denied InitProducerId, is fatal for the relay).
  absl::Status EnsureSink();
  // Detaches the producer from the core and the store, and destroys it.
  void DropSink();
  bool stopping() const { return stop_->load(); }
  // delivery.guarantee exactly_once: the checkpoint commits with the records in one Kafka transaction.
  bool exactly_once() const { return store_->commits_records(); }
  // exactly_once, once START_REPLICATION gave this relay the slot: fence the slot's previous relay
  // (init_transactions), read the checkpoint it left (read_committed), check the slot against it again, and skip
  // what it says is committed (DeliveryCore::SkipCommitted).
  // Returns what the committed checkpoint holds (the session's checkpointed position).
  absl::StatusOr<std::optional<Lsn>> TakeOverTransactions();

  config::PipelineConfig config_;
  RunOptions options_;
  ops::Metrics* metrics_;
  const std::atomic<bool>* stop_;
  delivery::SystemClock clock_;
  delivery::DeliveryCore core_;
  std::unique_ptr<sinks::CheckpointStore> store_;
  std::unique_ptr<sinks::Sink> sink_;  // made by MakeSink (app/sinks.h), remade after a fatal error

  std::unique_ptr<pg::SqlConnection> watch_;  // QueryPlain's
  std::chrono::steady_clock::time_point watched_at_{};
  std::chrono::microseconds read_batch_;  // source.read_batch_us
  // How dense the stream is (NoteFrames): the frames of the spell that began at spell_start_.
  std::chrono::steady_clock::time_point spell_start_{};
  int frames_in_spell_ = 0;
  bool dense_ = false;
  std::chrono::steady_clock::time_point slot_checked_at_{};
  pg::SystemInfo system_;      // IDENTIFY_SYSTEM of the current connection
  std::optional<int64_t> own_walsender_pid_;  // the walsender of the last session that started streaming
  std::optional<int> receive_buffer_logged_;  // the receive buffer last logged: a reconnect logs only a change
  bool slot_checked_ = false;  // a session's slot and gap checks passed
  pg::SlotCheckInput check_input_;  // the last slot check's input (exactly_once checks again after the takeover)
  bool sink_fenced_ = false;         // exactly_once: the producer's init_transactions ran (the next takeover needs a new one)
  bool broker_down_ = false;   // the slot was released for the broker: wait until it answers before reconnecting
  // Producers recreated in a row, and the core's acknowledgements when the last one was made.
  int producer_recreations_ = 0;
  uint64_t acks_at_recreation_ = 0;
};

}  // namespace outbox::app
