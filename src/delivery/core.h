// DeliveryCore: the delivery decisions of one pipeline (DESIGN.md "Delivery", "Failure"), free of I/O. It takes
// the replication stream's frames and the sink's reports and decides what to produce, what may be confirmed (the
// watermark, the idle advance to a keepalive's walEnd, checkpoint before confirm), when to stop reading (the delivery
// bounds), and when to rewind, dead-letter or halt. It produces through a sinks::Sink and checkpoints through a
// sinks::CheckpointStore; time comes from an injected Clock.
//
//   frames --OnFrame--> [decode, map] --Produce--> sink        sink.Poll --OnReport--> [tracker] --> watermark
//   the loop asks: AfterFrame/paused (read on?), StatusDue/PrepareStatus (what to confirm), ReleaseDue, interrupted
//
// Owned by the loop thread (app/relay.cc, which holds the connection, the sink and the reconnect loop); every call on
// that thread. A rewind, halt or fatal error raised by a frame or a report is kept until the loop acts on it:
// nothing is confirmed in a round that raised one.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/lsn.h"
#include "config/config.h"
#include "delivery/ack_tracker.h"
#include "delivery/clock.h"
#include "delivery/stream_buffer.h"
#include "ops/metrics.h"
#include "outbox/mapper.h"
#include "pg/frames.h"
#include "pg/pgoutput.h"
#include "pg/relation_cache.h"
#include "pg/slot_check.h"
#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

namespace outbox::delivery {

class DeliveryCore final : public sinks::ReportHandler, public pg::FrameHandler {
 public:
  // `config`, `clock` and `metrics` outlive the core.
  DeliveryCore(const config::PipelineConfig& config, const Clock* clock, ops::Metrics* metrics);
  ~DeliveryCore() override;

  // The sink and the store records and checkpoints go to (the sink changes when the loop recreates it).
  void Attach(sinks::Sink* sink, sinks::CheckpointStore* store);

  // The server this session reached (checkpoints written from now on, also by the slot check, carry its identity).
  void SetSystem(const pg::SystemInfo& system) { system_ = system; }
  // A replication session starts streaming from `system`, with the positions the slot check decided.
  void StartSession(const pg::SystemInfo& system, int proto_version, Lsn confirmed, std::optional<Lsn> checkpointed);
  // The skip rule of a transactional sink (delivery.guarantee exactly_once), after the fencing and the checkpoint read
  // that follows it: every event at or below `committed` is already committed with it and is not produced again (a
  // whole transaction when its commit LSN is before committed.lsn; the first committed.partial->records events of
  // the transaction committing at committed.partial->commit_lsn).
  void SkipCommitted(const Checkpoint& committed);

  // The outbox table's columns as the catalog has them (Debezium's schemas and defaults: OutboxMapper::NeedsCatalog),
  // read as Debezium reads them, at each Relation message of the outbox: when one arrives, catalog_due() holds and
  // AfterFrame stops the read there, so that the loop reads the catalog (on its plain connection) and gives it to
  // SetCatalog before the rows that follow the Relation are mapped.
  bool NeedsCatalog() const { return mapper_.NeedsCatalog(); }
  bool catalog_due() const { return catalog_due_; }
  void SetCatalog(std::vector<pg::ColumnCatalog> columns) {
    mapper_.SetCatalog(std::move(columns));
    catalog_due_ = false;
  }

  // The stream's input.
  absl::Status OnFrame(const pg::ServerFrame& frame) override;
  pg::ReadControl AfterFrame() const override;
  // The sink's output (from its Poll).
  void OnReport(const sinks::Report& report) override;
  // A poll serves its reports in a burst (thousands in a drain): while a burst is open, each acknowledgement is
  // stamped with the time the burst opened, read once, instead of reading both clocks per report.
  void OpenReportBurst() { burst_ = BurstTime{clock_->Now(), clock_->UnixMicros()}; }
  void CloseReportBurst() { burst_.reset(); }

  // Work not tied to input, each loop round: held records first, then a committed streamed transaction's events.
  absl::Status ProduceHeld();
  absl::Status ReplayStep();  // an error of an event it replays stops as at a frame (StopAtStreamError)
  bool replaying() const { return replay_ != nullptr; }
  // Nothing more is read from the stream (records are held, the bounds are reached, a transactional commit waits).
  bool paused() const;
  bool bounds_reached() const;
  // Logs when the stream pauses at the bounds or resumes below them.
  void NoteBounds();

  // What ends the stream: a rewind (reconnect from the slot), a halt (stop, exit 1), a fatal error.
  bool interrupted() const { return rewind_reason_ || fatal_ || halt_; }
  const std::optional<std::string>& rewind_reason() const { return rewind_reason_; }
  const std::optional<absl::Status>& fatal() const { return fatal_; }
  const std::optional<absl::Status>& halt() const { return halt_; }
  // Nothing acknowledged for delivery.release_slot_after_ms while something waits for the broker.
  bool ReleaseDue() const;
  // Nothing (data or keepalive) came from the server for source.receive_timeout_ms while the stream was read: the
  // connection is dead though no error says so (a silent partition). A paused stream is not read, so it never
  // counts as silent. Called once a round (it reads the clock; frames only count).
  bool ReceiveTimedOut();

  // Status updates: whether one is due now (the timer, the server asking, a checkpoint acknowledged, the end of a
  // burst), and with replyRequested (a ping) or not.
  std::optional<bool> StatusDue();
  // Starts the checkpoint of what may be confirmed and returns the update to send (flush = what the checkpoint holds;
  // no further than before once a rewind or a fatal error is raised).
  absl::StatusOr<pg::StandbyStatus> PrepareStatus(bool reply_requested);
  void StatusSent(const pg::StandbyStatus& status);
  // How long the loop may sleep before the next status update is due (0..200 ms).
  int SleepMs() const;
  void UpdateGauges();
  // behind_source_seconds (SPEC.md §7): now minus the commit time of the oldest transaction received and not yet
  // acknowledged; with nothing pending but the server's WAL ahead of what was received (a backlog not read yet), of
  // the newest received; 0 when caught up.
  double BehindSourceSeconds() const;
  // How long before the walsender sent the newest transaction's Begin that transaction had committed, in
  // microseconds, both times on the server's clock (the Begin's commit time and its frame's send time, so no clock
  // skew enters): about nothing on a live stream, seconds while the slot drains a backlog; 0 before any Begin.
  int64_t SourceLagUs() const { return source_lag_us_; }
  void LogProgress();

  // The publication watch. pgoutput skips the outbox table's rows silently once the publication stops covering it
  // (ALTER PUBLICATION ... DROP TABLE; a dropped publication on PostgreSQL 18), and the idle advance would confirm
  // past them. With the watch on, nothing is confirmed beyond what was received before the last check (on a plain
  // connection) that found the table still published.
  void WatchPublication() { watch_publication_ = true; }
  // This run's id for the records' __debezium.context.runId header (outbox.debezium_context_logical_name).
  void SetRunId(std::string run_id) { mapper_.SetRunId(std::move(run_id)); }
  // Everything up to here was received (commits' end LSNs, keepalives' walEnd): what a check started now vouches for.
  Lsn received_through() const { return received_through_; }
  void PublicationVerified(Lsn through);
  // Whether the watch is what holds the confirmation back: the checkpoint holds more than the last check vouched
  // for. A transactional sink's commits move the checkpoint every transaction interval, and the check then follows
  // them (Relay::CheckPublication) instead of waiting for the status interval.
  bool WatchHoldsBack() const;
  // Whether a burst has ended and the watch alone keeps its end unconfirmed: everything received is acknowledged
  // (nothing in flight, no transaction open), and the last check vouches for less than that. Relay::CheckPublication
  // then checks within kQuietWatchGapMs instead of the status interval (a drain's end waited up to a status interval
  // to be confirmed, which made the benchmark's drain times spread by as much).
  bool QuietButWatchHoldsBack() const;

  // A transactional sink, stopping: the final commit may split the PostgreSQL transaction in progress.
  void AllowSplit() { split_allowed_ = true; }

  // Crash-only recovery: forget everything in flight (a new generation: the purged records' reports are ignored).
  void Rewind(std::string_view why);

  // The start and the stop.
  absl::Status RequestCheckpoint(Lsn lsn);  // starts writing `lsn` now (checkpointed() reaches it when durable)
  Lsn ConfirmCandidate() const;
  // A transactional sink: what a commit now would make committed (every whole transaction produced), which the
  // checkpoint must name whatever the confirmation waits for (the publication watch caps only what is confirmed).
  Lsn CommitCandidate() const;
  Lsn confirmed() const { return confirmed_; }
  Lsn checkpointed() const { return checkpointed_; }
  bool checkpoint_in_flight() const { return !checkpoint_inflight_.IsZero(); }
  // Something waits for the broker: a record's report, a checkpoint's, or a held record.
  bool AwaitingBroker() const;
  size_t pending_records() const { return tracker_.pending_records(); }
  bool has_held() const { return !held_.empty(); }
  void DropHeld() { held_.clear(); }
  Clock::time_point last_status() const { return last_status_; }
  // Successful deliveries so far (the loop bounds producer recreations without one between).
  uint64_t acks() const { return acks_; }
  const StreamBuffers& streams() const { return streams_; }

 private:
  // What may be confirmed before the publication watch's cap.
  Lsn UnwatchedCandidate() const;
  // Messages.
  absl::Status OnKeepalive(const pg::Keepalive& k);
  absl::Status OnMessage(const pg::Message& message);
  absl::Status OnBegin(Lsn final_lsn, int64_t commit_time);
  absl::Status OnRelation(const pg::Relation& m);
  // outbox.expand_json_payload with a payload column Debezium does not expand (bytea, integers): a warning.
  void WarnOfUnexpandedPayload(const pg::Relation& m) const;
  absl::Status OnInsert(const pg::Insert& insert);
  absl::Status OnUpdate(const pg::Update& m);
  absl::Status OnLogicalMessage(const pg::LogicalMessage& message);
  absl::Status OnStreamCommit(const pg::StreamCommit& m);
  // An event of a streamed in-progress transaction: mapped now (with the relation as it is at this point of the
  // stream), produced at its Stream Commit.
  absl::Status BufferStreamed(uint32_t subxid, absl::StatusOr<outbox::Record> record, std::string_view raw_value);
  // The transaction's Commit (or the end of a streamed transaction's replay): close its tracker entry.
  void FinishTransaction(Lsn end_lsn);

  // Producing. A record the sink has no room for is held (produced first thing in later rounds); a sink that
  // failed sets the rewind. Only a fatal error is returned.
  absl::Status ProduceRecord(const outbox::Record& record);
  absl::Status OnProduceRefused(const sinks::ProduceResult& result, const outbox::Record& record);
  // A permanent error for one event: under halt the transaction is marked and the halt raised at its Commit;
  // under dead_letter `original` (with an `error` header) goes to the dead-letter topic instead.
  absl::Status PerEventError(const absl::Status& error, outbox::Record original);
  absl::Status ProduceDeadLetter(outbox::Record record, const std::string& error, EntryHandle entry);
  absl::Status OnDeadLetterRefused(const sinks::ProduceResult& result, EntryHandle entry, const std::string& why);
  void Hold(const outbox::Record& record, EntryHandle entry, bool dead_letter, std::string why);
  // Counts a produced record against its entry (and starts the release clock when nothing was outstanding).
  void CountProduced(EntryHandle entry, size_t bytes);
  // An event of the current transaction: counts it, and says whether the skip rule drops it (already committed).
  bool SkipCommittedEvent();
  // A transactional sink: the event the broker refused for good in an earlier, aborted Kafka transaction, and why
  // (it is dead-lettered before producing when the rewind brings it again); nullptr when it is not one.
  struct Poison {
    std::string error;
    sinks::Reason reason = sinks::Reason::kNone;
  };
  const Poison* PoisonOf(const outbox::Record& record) const;

  // Reports.
  void OnCheckpointReport(const sinks::Report& r);
  void OnAcked(const sinks::Report& r, EntryHandle handle);
  void OnRejectedEvent(const sinks::Report& r, EntryHandle handle);
  void OnRejectedBatch(const sinks::Report& r, EntryHandle handle);
  void DeadLetterFromReport(const sinks::Report& report, EntryHandle entry);
  // How to skip the transaction of `handle` (its end LSN once known), for halt messages.
  std::string SkipAdvice(EntryHandle handle) const;
  void RaiseRewind(std::string why) {
    if (!rewind_reason_) rewind_reason_ = std::move(why);
  }

  // Checkpoints.
  absl::Status MaybeCheckpoint(Lsn candidate);
  // A transactional sink commits every record produced so far with the checkpoint: only at a transaction boundary,
  // with nothing held, and the lsn is the end of everything produced.
  bool transactional() const { return transactional_; }
  // Every record counted so far has been produced (nothing held), and the open transaction, if any, is not split
  // unless the bounds force it (a transaction larger than the bounds is committed in parts; its committed part
  // comes again after a crash).
  // Everything received is acknowledged: nothing in flight, no transaction open.
  bool Quiet() const { return tracker_.idle() && !in_tx_; }
  bool CommitPossible() const {
    return held_.empty() && (!in_tx_ || bounds_reached() || TransactionTooOld() || halting_ || split_allowed_);
  }
  // A transactional sink under delivery.on_error halt: the open Kafka transaction holds records of the halted
  // transaction, so it is aborted (a rewind); the replay commits every transaction before the halted one, then halts
  // with `halt`, so that the --start-lsn the halt names skips that transaction alone.
  void HaltBefore(Lsn commit_lsn, absl::Status halt);
  // What a frame or a replayed event returned: an error other than a rewind stops the stream as at a halt (what came
  // before is delivered and confirmed, nothing of the transaction it is in) and OK is returned; OK and UNAVAILABLE
  // pass through.
  absl::Status StopAtStreamError(absl::Status error);
  absl::Status ReplayEvents();  // ReplayStep's work
  // The replay reached the halted transaction and everything before it is committed: raise the halt.
  void MaybeHaltBefore();
  // The Kafka transaction has been open half its transaction timeout: commit it even inside a PostgreSQL transaction.
  bool TransactionTooOld() const;
  // The checkpoint a commit now would write: `lsn`, and the open transaction's events produced so far.
  Checkpoint CheckpointAt(Lsn lsn) const;

  const config::PipelineConfig& config_;
  const Clock* clock_;
  ops::Metrics* metrics_;
  sinks::Sink* sink_ = nullptr;
  sinks::CheckpointStore* store_ = nullptr;
  bool transactional_ = false;  // store_->commits_records(), asked once (the hot path asks per frame)

  AckTracker tracker_;
  pg::RelationCache relations_;
  pg::DecoderState decoder_;
  bool catalog_due_ = false;  // the outbox's Relation arrived; the catalog is read before the next frame
  outbox::OutboxMapper mapper_;
  StreamBuffers streams_;
  std::optional<uint32_t> stream_xid_;           // the top-level xid of the open Stream Start block
  std::unique_ptr<StreamBuffers::Replay> replay_;  // a committed streamed transaction being produced
  Lsn replay_end_lsn_;
  std::string replay_source_lsn_;

  // The outbox table's OID once a Relation message named it (kept across rewinds: a rename shows as the same OID
  // under another name).
  std::optional<uint32_t> outbox_oid_;
  pg::SystemInfo system_;  // the server streamed from (checkpoints carry its identity)

  // The current transaction.
  bool in_tx_ = false;
  EntryHandle tx_entry_;
  Lsn tx_commit_lsn_;
  int64_t tx_commit_time_ms_ = 0;
  int64_t last_commit_time_ms_ = 0;  // the newest transaction received (for behind_source_seconds)
  int64_t frame_send_time_ = 0;      // the frame being decoded: its send time (PostgreSQL epoch microseconds)
  int64_t source_lag_us_ = 0;        // SourceLagUs
  std::optional<absl::Status> tx_halt_;  // a per-event error under halt: reported at Commit, with the end LSN
  int64_t tx_events_ = 0;  // outbox events of the current transaction seen so far (produced, dead-lettered or skipped)
  int64_t tx_skip_ = 0;    // how many of its first events the skip rule drops

  // A transactional sink (delivery.guarantee exactly_once).
  std::optional<Checkpoint> committed_;  // the skip rule's checkpoint, until the stream is past it
  std::map<std::pair<std::string, std::string>, Poison> poisoned_;  // (commit LSN, event id) -> why
  std::optional<Clock::time_point> kafka_tx_started_;  // the first record produced since the last commit
  std::chrono::milliseconds split_after_{30000};       // half the producer's transaction.timeout.ms
  std::chrono::milliseconds transaction_interval_{100};
  struct HaltBeforeTransaction {
    Lsn commit_lsn;
    absl::Status halt;
  };
  std::optional<HaltBeforeTransaction> halt_before_;  // kept across rewinds
  // The replay is at halt_before_'s Begin, or halt_after_commit_ waits: commit what came before, read nothing more.
  bool halting_ = false;
  // A stream error outside a transaction under a transactional sink: raised once the open Kafka transaction commits.
  std::optional<absl::Status> halt_after_commit_;
  bool split_allowed_ = false;  // AllowSplit
  Clock::time_point last_commit_{};  // when the last commit started

  // Positions.
  Lsn confirmed_;            // the last flush sent to the server (monotonic)
  Lsn checkpointed_;         // the highest checkpoint acknowledged as durable
  Lsn checkpoint_inflight_;  // a checkpoint waiting for its report (0/0: none)
  std::optional<Lsn> idle_wal_end_;  // keepalive walEnd received while nothing was open or in flight
  Clock::time_point last_status_{};
  Clock::time_point last_keepalive_{};
  Clock::time_point last_received_{};  // the last round a frame came in (or the stream was paused)
  uint64_t frames_ = 0;                // frames received (of any kind)
  uint64_t frames_seen_ = 0;           // frames_ at the last ReceiveTimedOut
  Clock::time_point last_ping_{};
  bool reply_now_ = false;   // the server asked for a reply
  Lsn stream_position_;      // the highest WAL position seen in the stream (XLogData or keepalive)
  Lsn received_through_;     // every change before it was received (a Commit's end, a keepalive's walEnd)
  bool watch_publication_ = false;
  Lsn verified_through_;     // received before the last publication check that passed
  Lsn progress_from_;        // stream position at the last progress line
  Clock::time_point progress_at_{};
  bool caught_up_ = true;
  bool status_soon_ = false;  // a checkpoint was acknowledged (or verified): confirm it without waiting for the timer
  bool commit_due_ = false;   // a transactional sink's commit is due: pause at the next transaction boundary
  bool was_at_bounds_ = false;
  Clock::time_point last_progress_{};  // the last ack, or when the first pending record was produced
  struct BurstTime {
    Clock::time_point now;
    int64_t unix_micros;
  };
  std::optional<BurstTime> burst_;  // OpenReportBurst's
  uint64_t acks_ = 0;

  // Set by frames and reports, acted on by the loop.
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
  std::map<uint64_t, Lsn> checkpoint_records_;  // origin -> LSN of checkpoints in flight
  // Records produced first thing in each round: those the sink had no room for, and dead letters of records the
  // broker rejected (built from a report). While any is held nothing more is read from the stream, so the stream's
  // order is kept, and the loop goes on with its status updates and its stop and release checks.
  struct HeldRecord {
    outbox::OwnedRecord record;
    EntryHandle entry;
    bool counted = false;      // already counted against its entry (a dead letter standing in for a rejected record)
    bool dead_letter = false;
    std::string why;           // a dead letter: its error (for the halt if it cannot be written)
  };
  std::deque<HeldRecord> held_;
  uint64_t next_checkpoint_seq_ = 1;
};

}  // namespace outbox::delivery
