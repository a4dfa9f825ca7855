// DeliveryCore: decoding to records, producing, reports, the watermark and checkpoints, without I/O.
#include "delivery/core.h"

#include <algorithm>
#include <climits>
#include <limits>

#include "absl/strings/numbers.h"

#include "absl/strings/str_join.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace outbox::delivery {
namespace {

constexpr int kEventsPerReplayStep = 1024;
constexpr auto kBurstStatusGap = std::chrono::milliseconds(50);
constexpr int64_t kNoTimestamp = INT64_MIN;

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("relay");
  return l ? l : spdlog::default_logger();
}

// Kafka's (and librdkafka's) default transaction.timeout.ms.
constexpr int64_t kDefaultTransactionTimeoutMs = 60000;

}  // namespace

DeliveryCore::DeliveryCore(const config::PipelineConfig& config, const Clock* clock, ops::Metrics* metrics)
    : config_(config),
      clock_(clock),
      metrics_(metrics),
      mapper_(config_.outbox),
      streams_(static_cast<size_t>(config_.delivery.max_inflight_bytes / 2), config_.source.spill_dir) {
  int64_t txn_timeout_ms = kDefaultTransactionTimeoutMs;
  if (auto it = config_.kafka.find("transaction.timeout.ms"); it != config_.kafka.end()) {
    // Text librdkafka refuses stops the relay when the producer is made; until then the default stands.
    if (!absl::SimpleAtoi(it->second, &txn_timeout_ms)) txn_timeout_ms = kDefaultTransactionTimeoutMs;
  }
  split_after_ = std::chrono::milliseconds(std::max<int64_t>(txn_timeout_ms / 2, 1));
  transaction_interval_ = std::chrono::milliseconds(config_.delivery.transaction_interval_ms);
}

DeliveryCore::~DeliveryCore() = default;

void DeliveryCore::Attach(sinks::Sink* sink, sinks::CheckpointStore* store) {
  sink_ = sink;
  store_ = store;
  transactional_ = store_ != nullptr && store_->commits_records();
}

void DeliveryCore::StartSession(const pg::SystemInfo& system, int proto_version, Lsn confirmed,
                                std::optional<Lsn> checkpointed) {
  system_ = system;
  confirmed_ = std::max(confirmed_, confirmed);
  if (checkpointed) checkpointed_ = std::max(checkpointed_, *checkpointed);
  metrics_->confirmed_lsn = confirmed_.value();
  decoder_ = pg::DecoderState{};
  decoder_.proto_version = proto_version;
  catalog_due_ = false;  // the session's first Relation of the outbox asks for it
  const auto now = clock_->Now();
  last_status_ = now;
  last_keepalive_ = now;
  last_received_ = now;
  last_progress_ = now;
  last_commit_ = now;
}

void DeliveryCore::SkipCommitted(const Checkpoint& committed) {
  committed_ = committed;
  Log()->info("exactly_once: skipping what the checkpoint says is committed: transactions ending at or before {}{}",
              committed.lsn.ToString(),
              committed.partial ? Cat(", and the first ", committed.partial->records,
                                      " events of the transaction committing at ",
                                      committed.partial->commit_lsn.ToString())
                                : std::string());
}

bool DeliveryCore::SkipCommittedEvent() {
  if (halting_) return true;
  ++tx_events_;
  if (tx_events_ > tx_skip_) return false;
  metrics_->events_skipped++;
  return true;
}

// ---- The stream's input ----

absl::Status DeliveryCore::OnFrame(const pg::ServerFrame& frame) {
  ++frames_;  // the clock is read once a round (ReceiveTimedOut), not per frame
  if (const auto* k = std::get_if<pg::Keepalive>(&frame)) return OnKeepalive(*k);
  const auto& x = std::get<pg::XLogData>(frame);
  if (x.wal_end > stream_position_) stream_position_ = x.wal_end;
  frame_send_time_ = x.send_time;
  auto message = pg::Decode(x.payload, decoder_);
  return StopAtStreamError(message.ok() ? OnMessage(*message)
                                        : absl::DataLossError(Cat("undecodable pgoutput message at LSN ",
                                                                  x.data_start.ToString(), ": ",
                                                                  message.status().message())));
}

// An error in the stream itself (a layout the relay refuses, the outbox table renamed, an undecodable message, a
// dead letter that could not be written) ends the relay as a halt does: what came before it is delivered, and
// confirmed as far as the publication check at the stop allows, so that the events before the failure do not wait
// for the fix (they were purged with the producer, unconfirmed, and came again only once the relay ran again).
// Nothing of the transaction it is in is confirmed: the watermark stays before its open entry.
absl::Status DeliveryCore::StopAtStreamError(absl::Status error) {
  if (error.ok() || absl::IsUnavailable(error)) return error;  // UNAVAILABLE: a rewind (a spill file that failed)
  // Only what was delivered is confirmed at the stop: a keepalive's walEnd may lie inside the failed transaction.
  idle_wal_end_.reset();
  Log()->error("stopping at an error{}: what came before it is delivered first ({})",
               in_tx_ ? Cat(" in the transaction committing at ", tx_commit_lsn_.ToString()) : std::string(),
               error.message());
  if (transactional() && !halting_ && !halt_) {
    if (in_tx_) {
      // The open Kafka transaction may hold records of the failed transaction: commit the ones before it, then stop.
      HaltBefore(tx_commit_lsn_, std::move(error));
      return absl::OkStatus();
    }
    // Between transactions (an undecodable Begin, a Commit with no Begin) the open Kafka transaction holds whole
    // transactions only: nothing more is read, it commits, then the halt (MaybeHaltBefore).
    halt_after_commit_ = std::move(error);
    halting_ = true;
    commit_due_ = true;
    return absl::OkStatus();
  }
  if (!halt_) halt_ = std::move(error);
  return absl::OkStatus();
}

pg::ReadControl DeliveryCore::AfterFrame() const {
  if (interrupted() || paused()) return pg::ReadControl::kStop;
  if (catalog_due_) return pg::ReadControl::kStopBusy;  // the catalog is read before the rows after the Relation
  if (replay_) return pg::ReadControl::kStopBusy;  // a streamed transaction committed: produce it before reading on
  return pg::ReadControl::kGoOn;
}

absl::Status DeliveryCore::OnKeepalive(const pg::Keepalive& k) {
  last_keepalive_ = clock_->Now();
  if (k.wal_end > stream_position_) stream_position_ = k.wal_end;
  received_through_ = std::max(received_through_, k.wal_end);
  if (k.wal_end.value() > metrics_->server_wal_lsn.load()) metrics_->server_wal_lsn = k.wal_end.value();
  if (k.reply_requested) reply_now_ = true;
  // Idle advance: everything before this keepalive was processed; if none of it is open or in flight, the slot may
  // be confirmed up to walEnd (DESIGN.md "Delivery").
  if (Quiet() && streams_.empty() && !replay_) {
    idle_wal_end_ = std::max(idle_wal_end_.value_or(Lsn(0)), k.wal_end);
  }
  return absl::OkStatus();
}

absl::Status DeliveryCore::OnMessage(const pg::Message& message) {
  return std::visit(
      [&](const auto& m) -> absl::Status {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, pg::Begin>) {
          return OnBegin(m.final_lsn, m.commit_time);
        } else if constexpr (std::is_same_v<T, pg::Commit>) {
          if (!in_tx_) return absl::DataLossError(Cat("Commit at ", m.end_lsn.ToString(), " outside a transaction"));
          FinishTransaction(m.end_lsn);
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::Relation>) {
          return OnRelation(m);
        } else if constexpr (std::is_same_v<T, pg::Insert>) {
          return OnInsert(m);
        } else if constexpr (std::is_same_v<T, pg::Update>) {
          return OnUpdate(m);
        } else if constexpr (std::is_same_v<T, pg::LogicalMessage>) {
          return OnLogicalMessage(m);
        } else if constexpr (std::is_same_v<T, pg::StreamStart>) {
          stream_xid_ = m.xid;
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::StreamStop>) {
          stream_xid_.reset();
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::StreamAbort>) {
          streams_.Abort(m.xid, m.subxid);
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::StreamCommit>) {
          return OnStreamCommit(m);
        } else if constexpr (std::is_same_v<T, pg::Delete> || std::is_same_v<T, pg::Truncate> ||
                             std::is_same_v<T, pg::Type> || std::is_same_v<T, pg::Origin>) {
          return absl::OkStatus();
        } else {
          return absl::DataLossError("unexpected two-phase message: two_phase was not requested");
        }
      },
      message);
}

absl::Status DeliveryCore::OnBegin(Lsn final_lsn, int64_t commit_time) {
  if (in_tx_) return absl::DataLossError(Cat("Begin of ", final_lsn.ToString(), " inside a transaction"));
  in_tx_ = true;
  tx_commit_lsn_ = final_lsn;
  const int64_t commit_time_us = PgTimeToUnixMicros(commit_time);
  tx_commit_time_ms_ = commit_time_us / 1000;
  source_lag_us_ = frame_send_time_ > 0 ? std::max<int64_t>(0, frame_send_time_ - commit_time) : 0;
  tx_entry_ = tracker_.Begin(commit_time_us);
  tx_events_ = 0;
  tx_skip_ = 0;
  if (halt_before_ && final_lsn == halt_before_->commit_lsn) {
    halting_ = true;  // nothing of it is produced; what came before commits, then the halt
    commit_due_ = true;
  }
  if (committed_) {
    // The skip rule: a transaction committing before the checkpoint's LSN ends at or before it (commit records
    // follow one another in the WAL).
    if (final_lsn < committed_->lsn) {
      tx_skip_ = std::numeric_limits<int64_t>::max();
    } else if (committed_->partial && final_lsn == committed_->partial->commit_lsn) {
      tx_skip_ = committed_->partial->records;
    } else if (final_lsn > committed_->lsn) {
      committed_.reset();  // past it
    }
  }
  return absl::OkStatus();
}

absl::Status DeliveryCore::OnRelation(const pg::Relation& m) {
  // The outbox table renamed (or moved to another schema) while running: its rows would no longer be recognized
  // and the slot would be confirmed past them. The relay stops, like at a missing column (StopAtStreamError).
  if (outbox_oid_ && *outbox_oid_ == m.oid && !mapper_.IsOutbox(m)) {
    return absl::FailedPreconditionError(Cat("the outbox table ", config_.outbox.table, " (OID ", m.oid, ") is now \"",
                                             m.nspname, ".", m.relname,
                                             "\" (renamed while the relay ran), in the transaction committing at ",
                                             tx_commit_lsn_.ToString(),
                                             ": set outbox.table to its new name, or rename it back"));
  }
  if (mapper_.IsOutbox(m)) {
    outbox_oid_ = m.oid;
    WarnOfUnexpandedPayload(m);
    catalog_due_ = mapper_.NeedsCatalog();
  }
  mapper_.OnRelation(m.oid);
  relations_.Put(m);
  return absl::OkStatus();
}

// Debezium expands only a payload it holds as a string, and warns of any other (a bytea, for one) at every record;
// the relay says it once per layout of the table.
void DeliveryCore::WarnOfUnexpandedPayload(const pg::Relation& m) const {
  if (!config_.outbox.expand_json_payload) return;
  for (const pg::RelationColumn& column : m.columns) {
    if (column.name == config_.outbox.fields.payload && !outbox::ExpandsColumnType(column.type_oid)) {
      Log()->warn("outbox.expand_json_payload: the payload column \"{}\" (type OID {}) is no text to Debezium, "
                  "which expands only payloads of text types: its payloads are written as they are",
                  column.name, column.type_oid);
    }
  }
}

absl::Status DeliveryCore::OnInsert(const pg::Insert& insert) {
  const pg::Relation* rel = relations_.Find(insert.relation_oid);
  if (rel == nullptr) {
    return absl::DataLossError(Cat("INSERT for relation OID ", insert.relation_oid,
                                   " without a Relation message, in the transaction committing at ",
                                   tx_commit_lsn_.ToString()));
  }
  if (!mapper_.IsOutbox(*rel)) return absl::OkStatus();
  if (insert.xid) {
    if (!stream_xid_) return absl::DataLossError("streamed INSERT outside a Stream Start block");
    return BufferStreamed(*insert.xid, mapper_.Map(*rel, insert.new_tuple, Lsn(0), kNoTimestamp), "");
  }
  if (!in_tx_) return absl::DataLossError("INSERT outside a transaction");
  if (SkipCommittedEvent()) return absl::OkStatus();
  if (tx_halt_) return absl::OkStatus();  // this transaction is already halted; nothing of it is produced
  auto record = mapper_.Map(*rel, insert.new_tuple, tx_commit_lsn_, tx_commit_time_ms_);
  if (!record.ok()) {
    if (outbox::IsPerEventError(record.status())) {
      return PerEventError(record.status(), mapper_.Original(tx_commit_lsn_, tx_commit_time_ms_));
    }
    return record.status();
  }
  return ProduceRecord(*record);
}

absl::Status DeliveryCore::OnUpdate(const pg::Update& m) {
  const pg::Relation* rel = relations_.Find(m.relation_oid);
  if (rel == nullptr || !mapper_.IsOutbox(*rel)) return absl::OkStatus();
  switch (config_.outbox.on_update) {
    case config::OnUpdate::kIgnore:
      break;
    case config::OnUpdate::kWarn:
      Log()->warn("ignoring an UPDATE of {} in the transaction committing at {} (outbox.on_update: warn)",
                  config_.outbox.table, tx_commit_lsn_.ToString());
      break;
    case config::OnUpdate::kError:
      if (m.xid && stream_xid_) {
        BufferedEvent e;
        e.subxid = *m.xid;
        e.error = true;
        e.halt = true;  // halts at the Stream Commit, as a non-streamed UPDATE does at its Commit
        e.error_message = Cat("an UPDATE of ", config_.outbox.table, " (outbox.on_update: error)");
        return streams_.Add(*stream_xid_, std::move(e));
      }
      tracker_.MarkFailed(tx_entry_);
      tx_halt_ = absl::FailedPreconditionError(Cat("an UPDATE of ", config_.outbox.table,
                                                   " in the transaction committing at ", tx_commit_lsn_.ToString(),
                                                   " (outbox.on_update: error)"));
      break;
  }
  metrics_->events_skipped++;
  return absl::OkStatus();
}

absl::Status DeliveryCore::OnLogicalMessage(const pg::LogicalMessage& message) {
  // Only transactional messages with a configured prefix are events: they commit or roll back with their
  // transaction. Non-transactional ones have no transaction to confirm in order and are ignored.
  if (!config_.source.messages || !message.transactional()) return absl::OkStatus();
  const auto& prefixes = config_.source.message_prefixes;
  if (std::find(prefixes.begin(), prefixes.end(), std::string(message.prefix)) == prefixes.end()) {
    return absl::OkStatus();
  }
  if (message.xid) {
    if (!stream_xid_) return absl::DataLossError("streamed message outside a Stream Start block");
    return BufferStreamed(*message.xid, mapper_.MapMessage(message.content, Lsn(0), kNoTimestamp), message.content);
  }
  if (!in_tx_) return absl::OkStatus();
  if (SkipCommittedEvent() || tx_halt_) return absl::OkStatus();
  auto record = mapper_.MapMessage(message.content, tx_commit_lsn_, tx_commit_time_ms_);
  if (!record.ok()) {
    if (outbox::IsPerEventError(record.status())) {
      outbox::Record original = mapper_.Original(tx_commit_lsn_, tx_commit_time_ms_);
      original.value = message.content;  // unparsable content is dead-lettered as it came
      return PerEventError(record.status(), std::move(original));
    }
    return record.status();
  }
  return ProduceRecord(*record);
}

absl::Status DeliveryCore::OnStreamCommit(const pg::StreamCommit& m) {
  if (in_tx_) return absl::DataLossError(Cat("Stream Commit at ", m.end_lsn.ToString(), " inside a transaction"));
  if (absl::Status st = OnBegin(m.commit_lsn, m.commit_time); !st.ok()) return st;
  auto replay = streams_.TakeForReplay(m.xid);
  if (!replay.ok()) return replay.status();
  replay_ = std::move(*replay);
  replay_end_lsn_ = m.end_lsn;
  replay_source_lsn_ = m.commit_lsn.ToString();
  return absl::OkStatus();
}

absl::Status DeliveryCore::BufferStreamed(uint32_t subxid, absl::StatusOr<outbox::Record> record,
                                          std::string_view raw_value) {
  if (record.ok()) {
    absl::Status st = streams_.Add(*stream_xid_, BufferedEvent::FromRecord(*record, subxid, kNoTimestamp));
    if (streams_.spills() != metrics_->stream_spills.load()) {
      metrics_->stream_spills = streams_.spills();
      Log()->info("streamed transaction {} exceeds the memory bound: spilling to {}", *stream_xid_,
                  config_.source.spill_dir.empty() ? "the temporary directory" : config_.source.spill_dir);
    }
    return st;
  }
  if (!outbox::IsPerEventError(record.status())) return record.status();
  outbox::Record original = mapper_.Original(Lsn(0), kNoTimestamp);
  if (!raw_value.empty()) original.value = raw_value;
  BufferedEvent e = BufferedEvent::FromRecord(original, subxid, kNoTimestamp);
  e.error = true;
  e.error_message = std::string(record.status().message());
  return streams_.Add(*stream_xid_, std::move(e));
}

absl::Status DeliveryCore::ReplayStep() {
  return StopAtStreamError(ReplayEvents());  // a streamed transaction's event, as at its frame
}

absl::Status DeliveryCore::ReplayEvents() {
  if (!replay_ || paused()) return absl::OkStatus();
  for (int i = 0; i < kEventsPerReplayStep && !paused(); ++i) {
    auto next = replay_->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      replay_.reset();
      FinishTransaction(replay_end_lsn_);
      return absl::OkStatus();
    }
    const BufferedEvent& e = **next;
    outbox::Record record = e.ToRecord(replay_source_lsn_, tx_commit_time_ms_);
    if (SkipCommittedEvent()) continue;
    if (tx_halt_) continue;  // already halted: nothing more of it is produced
    if (e.halt) {
      tracker_.MarkFailed(tx_entry_);
      tx_halt_ = absl::FailedPreconditionError(
          Cat(e.error_message, " in the streamed transaction committing at ", replay_source_lsn_));
      continue;
    }
    if (!e.error) {
      if (absl::Status st = mapper_.CompleteEnvelope(record, replay_source_lsn_); !st.ok()) return st;
    }
    absl::Status st =
        e.error ? PerEventError(absl::InvalidArgumentError(Cat(e.error_message, " (event id=", e.event_id, ")")),
                                std::move(record))
                : ProduceRecord(record);
    if (!st.ok()) return st;
    if (rewind_reason_ || fatal_) return absl::OkStatus();
  }
  return absl::OkStatus();
}

void DeliveryCore::FinishTransaction(Lsn end_lsn) {
  in_tx_ = false;
  last_commit_time_ms_ = tx_commit_time_ms_;
  tracker_.Close(tx_entry_, end_lsn);
  received_through_ = std::max(received_through_, end_lsn);
  if (end_lsn.value() > metrics_->received_lsn.load()) metrics_->received_lsn = end_lsn.value();
  if (tx_halt_) {
    absl::Status halt(tx_halt_->code(),
                      Cat(tx_halt_->message(), "; the transaction ends at ", end_lsn.ToString(),
                          " and was not confirmed (delivery.on_error: halt). To skip it: outbox-relay run "
                          "--start-lsn ",
                          end_lsn.ToString()));
    tx_halt_.reset();
    if (transactional()) {
      HaltBefore(tx_commit_lsn_, std::move(halt));
    } else {
      halt_ = std::move(halt);
    }
  }
}

void DeliveryCore::HaltBefore(Lsn commit_lsn, absl::Status halt) {
  // Several transactions refused in one Kafka transaction: the replay halts before the first of them.
  if (halt_before_ && halt_before_->commit_lsn <= commit_lsn) {
    RaiseRewind(Cat("halting before the transaction committing at ", halt_before_->commit_lsn.ToString()));
    return;
  }
  Log()->warn("halting before the transaction committing at {}: aborting the Kafka transaction that holds its "
              "records, then committing the transactions before it",
              commit_lsn.ToString());
  halt_before_ = HaltBeforeTransaction{commit_lsn, std::move(halt)};
  RaiseRewind(Cat("halting before the transaction committing at ", commit_lsn.ToString()));
}

void DeliveryCore::MaybeHaltBefore() {
  if (!halting_ || checkpoint_in_flight() || tracker_.pending_records() > 0 || !held_.empty()) return;
  halting_ = false;
  halt_ = halt_after_commit_ ? *halt_after_commit_ : halt_before_->halt;
}

// ---- Producing ----

bool DeliveryCore::bounds_reached() const {
  return static_cast<int64_t>(tracker_.inflight_events()) >= config_.delivery.max_inflight_events ||
         static_cast<int64_t>(tracker_.inflight_bytes()) >= config_.delivery.max_inflight_bytes;
}

bool DeliveryCore::paused() const {
  if (!held_.empty() || bounds_reached() || halting_) return true;
  // A transactional commit covers everything produced before it: nothing more is produced while it is in flight,
  // and a due commit waits for the current transaction's end.
  return transactional() && (checkpoint_in_flight() || (commit_due_ && !in_tx_));
}

void DeliveryCore::NoteBounds() {
  const bool at_bounds = bounds_reached();
  if (at_bounds == was_at_bounds_) return;
  Log()->info("{} ({} events, {} bytes in flight)",
              at_bounds ? "delivery bounds reached: pausing the stream" : "below the delivery bounds: resuming the stream",
              tracker_.inflight_events(), tracker_.inflight_bytes());
  was_at_bounds_ = at_bounds;
}

bool DeliveryCore::AwaitingBroker() const {
  return tracker_.pending_records() > 0 || checkpoint_in_flight() || !held_.empty();
}

void DeliveryCore::CountProduced(EntryHandle entry, size_t bytes) {
  if (!AwaitingBroker()) last_progress_ = clock_->Now();
  if (transactional() && !kafka_tx_started_) kafka_tx_started_ = clock_->Now();
  tracker_.AddRecord(entry, bytes);
}

void DeliveryCore::Hold(const outbox::Record& record, EntryHandle entry, bool dead_letter, std::string why) {
  if (!AwaitingBroker()) last_progress_ = clock_->Now();  // the release clock starts now, not at the last ack
  held_.push_back(HeldRecord{outbox::OwnedRecord::Of(record), entry, /*counted=*/false, dead_letter, std::move(why)});
}

const DeliveryCore::Poison* DeliveryCore::PoisonOf(const outbox::Record& record) const {
  if (poisoned_.empty()) return nullptr;
  auto it = poisoned_.find({tx_commit_lsn_.ToString(), std::string(record.event_id)});
  return it == poisoned_.end() ? nullptr : &it->second;
}

absl::Status DeliveryCore::ProduceRecord(const outbox::Record& record) {
  if (const Poison* poison = PoisonOf(record)) {
    // Refused by the broker in an aborted Kafka transaction: refused here before producing, so the transaction that
    // brings it again can commit (its dead letter in its place under dead_letter).
    return OnProduceRefused(sinks::ProduceResult::Rejected(poison->reason, poison->error), record);
  }
  if (!held_.empty()) {  // behind what is held, in stream order
    Hold(record, tx_entry_, /*dead_letter=*/false, "");
    return absl::OkStatus();
  }
  const sinks::ProduceResult r = sink_->Produce(record, tx_entry_.Pack());
  switch (r.code) {
    case sinks::ProduceResult::Code::kOk:
      CountProduced(tx_entry_, record.PayloadBytes());
      return absl::OkStatus();
    case sinks::ProduceResult::Code::kFull:  // produced from the loop when the sink has room
      Hold(record, tx_entry_, /*dead_letter=*/false, "");
      return absl::OkStatus();
    case sinks::ProduceResult::Code::kRejected:
    case sinks::ProduceResult::Code::kFailed:
      return OnProduceRefused(r, record);
  }
  return absl::OkStatus();
}

absl::Status DeliveryCore::OnProduceRefused(const sinks::ProduceResult& r, const outbox::Record& record) {
  if (r.code == sinks::ProduceResult::Code::kFailed) {
    // The sink failed (e.g. an idempotent producer's fatal error): rewind (and the loop recreates it).
    RaiseRewind(Cat("producing failed: ", r.error));
    return absl::OkStatus();
  }
  outbox::Record original = record;
  switch (r.reason) {
    case sinks::Reason::kTooLarge:  // dead-lettered without its value (it would not fit either)
      original.value = std::nullopt;
      break;
    case sinks::Reason::kTimestamp:  // dead-lettered at the time of dead-lettering (the broker takes that)
      original.timestamp_ms = 0;
      break;
    case sinks::Reason::kTopic:
    case sinks::Reason::kNone:
      break;
  }
  return PerEventError(absl::InvalidArgumentError(
                           Cat(r.error, " (event id=", record.event_id, " at LSN ", tx_commit_lsn_.ToString(), ")")),
                       std::move(original));
}

absl::Status DeliveryCore::ProduceHeld() {
  while (!held_.empty() && !interrupted()) {
    HeldRecord& h = held_.front();  // stays in place (a deque's references survive push_back) until popped
    if (h.entry.generation != tracker_.generation()) {
      held_.pop_front();
      continue;
    }
    const outbox::Record record = h.record.View();
    const sinks::ProduceResult r = sink_->Produce(record, h.entry.Pack());
    if (r.code == sinks::ProduceResult::Code::kFull) return absl::OkStatus();  // still full: next round
    absl::Status result = absl::OkStatus();
    if (r.ok()) {
      if (!h.counted) CountProduced(h.entry, h.record.PayloadBytes());
    } else if (h.dead_letter) {
      result = OnDeadLetterRefused(r, h.entry, h.why);
    } else {
      result = OnProduceRefused(r, record);
    }
    held_.pop_front();
    if (!result.ok()) return result;
  }
  return absl::OkStatus();
}

absl::Status DeliveryCore::PerEventError(const absl::Status& error, outbox::Record original) {
  metrics_->delivery_errors_permanent++;
  if (config_.delivery.on_error == config::OnError::kHalt) {
    // Nothing of this transaction is confirmed; the halt is raised at its Commit, when its end LSN (and so the
    // --start-lsn that skips it) is known.
    tracker_.MarkFailed(tx_entry_);
    if (!tx_halt_) tx_halt_ = error;
    return absl::OkStatus();
  }
  Log()->warn("dead-lettering: {}", error.message());
  return ProduceDeadLetter(std::move(original), std::string(error.message()), tx_entry_);
}

absl::Status DeliveryCore::ProduceDeadLetter(outbox::Record record, const std::string& error, EntryHandle entry) {
  record.topic = config_.delivery.dead_letter_topic;
  record.partition.reset();  // the event's own (a column placed as the partition) is not the dead-letter topic's
  record.headers.push_back(outbox::Header{"error", std::string_view(error)});
  bool has_lsn = false;
  for (const outbox::Header& h : record.headers) has_lsn = has_lsn || h.name == "source_lsn";
  const std::string lsn = tx_commit_lsn_.ToString();
  if (!has_lsn) record.headers.push_back(outbox::Header{"source_lsn", std::string_view(lsn)});
  if (!held_.empty()) {
    Hold(record, entry, /*dead_letter=*/true, error);
    return absl::OkStatus();
  }
  const sinks::ProduceResult r = sink_->Produce(record, entry.Pack());
  if (r.ok()) {
    CountProduced(entry, record.PayloadBytes());
    return absl::OkStatus();
  }
  if (r.code == sinks::ProduceResult::Code::kFull) {
    Hold(record, entry, /*dead_letter=*/true, error);
    return absl::OkStatus();
  }
  return OnDeadLetterRefused(r, entry, error);
}

absl::Status DeliveryCore::OnDeadLetterRefused(const sinks::ProduceResult& r, EntryHandle entry,
                                               const std::string& why) {
  if (r.code == sinks::ProduceResult::Code::kFailed) {
    // Neither written nor acknowledged: its transaction stays unconfirmed and the rewind sends it again.
    RaiseRewind(Cat("producing a dead letter failed: ", r.error));
    return absl::OkStatus();
  }
  // A failed dead-letter write halts.
  tracker_.MarkFailed(entry);
  return absl::FailedPreconditionError(
      Cat("could not write a dead letter to ", config_.delivery.dead_letter_topic, " (", r.error, ") for: ", why));
}

// ---- Reports ----

void DeliveryCore::OnReport(const sinks::Report& r) {
  const EntryHandle handle = EntryHandle::Unpack(r.origin);
  if (handle.generation == 0) return OnCheckpointReport(r);
  if (handle.generation != tracker_.generation()) return;  // from before a rewind
  switch (r.outcome) {
    case sinks::Outcome::kAcked:
      return OnAcked(r, handle);
    case sinks::Outcome::kFatal:
      metrics_->delivery_errors_transient++;
      RaiseRewind(Cat("producer fatal error: ", sink_ ? Msg(sink_->FatalError()) : std::string(r.error)));
      return;
    case sinks::Outcome::kRetriable:
      metrics_->delivery_errors_transient++;
      RaiseRewind(Cat("delivery failed: ", r.error));
      return;
    case sinks::Outcome::kRejectedEvent:
      return OnRejectedEvent(r, handle);
    case sinks::Outcome::kRejectedBatch:
      return OnRejectedBatch(r, handle);
  }
}

void DeliveryCore::OnCheckpointReport(const sinks::Report& r) {
  auto it = checkpoint_records_.find(r.origin);
  if (it == checkpoint_records_.end()) return;
  const Lsn lsn = it->second;
  checkpoint_records_.erase(it);
  if (lsn == checkpoint_inflight_) checkpoint_inflight_ = Lsn(0);
  if (r.outcome != sinks::Outcome::kAcked) {
    RaiseRewind(Cat("checkpoint write failed: ", r.error));
    return;
  }
  // A transactional sink's commit: every record produced before it is written with it.
  if (transactional()) {
    metrics_->events_published += tracker_.pending_records();
    tracker_.AckAll();
    kafka_tx_started_.reset();
    MaybeHaltBefore();
  }
  checkpointed_ = std::max(checkpointed_, lsn);
  status_soon_ = true;
  last_progress_ = clock_->Now();
  ++acks_;
}

void DeliveryCore::OnAcked(const sinks::Report& r, EntryHandle handle) {
  ++acks_;
  const int64_t commit_time_us = tracker_.CommitTimeOf(handle);  // read before the ack may retire the entry
  if (!tracker_.Ack(handle, r.bytes)) return;
  last_progress_ = burst_ ? burst_->now : clock_->Now();
  if (r.topic == config_.delivery.dead_letter_topic) {
    metrics_->events_dead_lettered++;
    return;
  }
  metrics_->events_published++;
  if (commit_time_us > 0) {
    const int64_t now_us = burst_ ? burst_->unix_micros : clock_->UnixMicros();
    metrics_->commit_to_ack_seconds.Observe(static_cast<double>(now_us - commit_time_us) / 1e6);
  }
}

void DeliveryCore::OnRejectedEvent(const sinks::Report& r, EntryHandle handle) {
  const bool dead_letter = r.topic == config_.delivery.dead_letter_topic;
  if (transactional() && !dead_letter && config_.delivery.on_error == config::OnError::kDeadLetter) {
    // The open Kafka transaction cannot commit now (the broker failed a record of it): abort it, and dead-letter the
    // event before producing it when the rewind brings it again.
    Log()->warn("event id={} (commit LSN {}) refused by the broker for topic {}: {}; aborting the Kafka transaction, "
                "the event is dead-lettered when it comes again",
                r.event_id, r.source_lsn, r.topic, r.error);
    poisoned_[{std::string(r.source_lsn), std::string(r.event_id)}] =
        Poison{Cat("the broker rejected the record for topic ", r.topic, ": ", r.error), r.reason};
    RaiseRewind(Cat("the broker refused event id=", r.event_id, " inside a Kafka transaction"));
    return;
  }
  metrics_->delivery_errors_permanent++;
  if (config_.delivery.on_error == config::OnError::kDeadLetter && !dead_letter) {
    Log()->warn("dead-lettering event id={}: {}", r.event_id, r.error);
    DeadLetterFromReport(r, handle);
    return;
  }
  // Failed for good: the watermark stays before it, and its report is in (nothing waits for it at a stop).
  tracker_.MarkFailed(handle);
  tracker_.Ack(handle, r.bytes);
  if (halt_) return;
  absl::Status halt = absl::InvalidArgumentError(Cat(
      dead_letter ? "could not write a dead letter of event id=" : "the broker rejected event id=", r.event_id,
      " for topic ", r.topic, ": ", r.error, "; its transaction (commit LSN ", r.source_lsn, ") was not confirmed",
      SkipAdvice(handle)));
  if (auto commit_lsn = Lsn::Parse(r.source_lsn); transactional() && commit_lsn.ok()) {
    HaltBefore(*commit_lsn, std::move(halt));
    return;
  }
  halt_ = std::move(halt);
}

void DeliveryCore::OnRejectedBatch(const sinks::Report& r, EntryHandle handle) {
  // Not one event's fault: its batch mates are innocent, so nothing is dead-lettered (DESIGN.md); it halts, naming
  // every event of the batch.
  metrics_->delivery_errors_permanent++;
  tracker_.MarkFailed(handle);
  tracker_.Ack(handle, r.bytes);
  if (!batch_rejection_) {
    batch_rejection_ = BatchRejection{std::string(r.topic),
                                      std::string(r.error),
                                      std::string(r.error_name),
                                      r.reason == sinks::Reason::kTooLarge,
                                      std::string(r.source_lsn),
                                      SkipAdvice(handle),
                                      {}};
  }
  BatchRejection& b = *batch_rejection_;
  b.event_ids.emplace_back(r.event_id);
  absl::Status halt = absl::InvalidArgumentError(
      Cat("the broker rejected a batch of ", b.event_ids.size(), " records for topic ", b.topic, ": ", b.error, " (",
          b.error_name, "; event ids ", absl::StrJoin(b.event_ids, ", "), ")",
          b.too_large ? " (keep kafka.message.max.bytes and batch.size below the topic's max.message.bytes)" : "",
          "; the first one's transaction (commit LSN ", b.source_lsn, ") was not confirmed", b.skip_advice));
  if (auto commit_lsn = Lsn::Parse(b.source_lsn); transactional() && commit_lsn.ok()) {
    HaltBefore(*commit_lsn, std::move(halt));
    return;
  }
  halt_ = std::move(halt);
}

void DeliveryCore::DeadLetterFromReport(const sinks::Report& r, EntryHandle entry) {
  HeldRecord d{r.rejected ? *r.rejected : outbox::OwnedRecord{}, entry, /*counted=*/true, /*dead_letter=*/true, ""};
  d.why = Cat("the broker rejected the record for topic ", r.topic, ": ", r.error);
  outbox::OwnedRecord& rec = d.record;
  rec.topic = config_.delivery.dead_letter_topic;
  rec.partition.reset();
  rec.headers.emplace_back("error", d.why);
  // The dead letter stands in for the rejected record: it is counted before the original is let go, and only its
  // own report acknowledges it (a dead letter that could not be written keeps its transaction open).
  tracker_.AddRecord(entry, rec.PayloadBytes());
  tracker_.Ack(entry, r.bytes);
  held_.push_back(std::move(d));
}

std::string DeliveryCore::SkipAdvice(EntryHandle handle) const {
  const std::optional<Lsn> end = tracker_.EndLsnOf(handle);
  return end ? Cat(". To skip it: outbox-relay run --start-lsn ", end->ToString())
             : std::string(" (it skips with --start-lsn at its end LSN: any position just past its commit LSN)");
}

// ---- Confirmation ----

Lsn DeliveryCore::UnwatchedCandidate() const {
  Lsn candidate = std::max(confirmed_, tracker_.watermark());
  // A transactional sink acknowledges nothing before its commit: what may be committed is everything produced.
  if (transactional() && CommitPossible()) candidate = std::max(candidate, tracker_.last_end_lsn());
  // A walEnd remembered while nothing was open or in flight (OnKeepalive): everything after it is beyond it.
  if (idle_wal_end_) candidate = std::max(candidate, *idle_wal_end_);
  return candidate;
}

Lsn DeliveryCore::ConfirmCandidate() const {
  const Lsn candidate = UnwatchedCandidate();
  return watch_publication_ ? std::max(confirmed_, std::min(candidate, verified_through_)) : candidate;
}

bool DeliveryCore::WatchHoldsBack() const {
  return watch_publication_ && std::min(UnwatchedCandidate(), checkpointed_) > std::max(confirmed_, verified_through_);
}

bool DeliveryCore::QuietButWatchHoldsBack() const {
  return watch_publication_ && Quiet() && UnwatchedCandidate() > std::max(confirmed_, verified_through_);
}

void DeliveryCore::PublicationVerified(Lsn through) {
  // What the check vouches for is confirmed now, not at the next status interval.
  if ((WatchHoldsBack() || QuietButWatchHoldsBack()) && through > verified_through_) status_soon_ = true;
  verified_through_ = std::max(verified_through_, through);
}

bool DeliveryCore::TransactionTooOld() const {
  return kafka_tx_started_ && clock_->Now() - *kafka_tx_started_ >= split_after_;
}

Checkpoint DeliveryCore::CheckpointAt(Lsn lsn) const {
  Checkpoint c{system_.system_id, system_.timeline, config_.source.slot, config_.source.instance, lsn, std::nullopt};
  // A commit inside a PostgreSQL transaction (CommitPossible: nothing held, so every event counted was produced).
  if (transactional() && in_tx_ && tx_events_ > 0 && tx_commit_lsn_ >= lsn) {
    c.partial = PartialTransaction{tx_commit_lsn_, tx_events_};
  }
  return c;
}

Lsn DeliveryCore::CommitCandidate() const {
  Lsn candidate = std::max(confirmed_, checkpointed_);
  if (CommitPossible()) candidate = std::max(candidate, tracker_.last_end_lsn());
  if (idle_wal_end_) candidate = std::max(candidate, *idle_wal_end_);
  return candidate;
}

absl::Status DeliveryCore::MaybeCheckpoint(Lsn candidate) {
  if (checkpoint_in_flight()) return absl::OkStatus();  // one at a time
  if (transactional()) {
    // A commit covers every record produced since the last one: none while a halt stands (the halted transaction's
    // records are in it; the Kafka transaction is aborted instead), none inside a transaction unless it must split.
    if (halt_ || tx_halt_ || batch_rejection_ || !CommitPossible()) return absl::OkStatus();
    if (candidate <= checkpointed_ && tracker_.pending_records() == 0) {
      commit_due_ = false;  // nothing to commit
      return absl::OkStatus();
    }
  } else if (candidate <= checkpointed_) {
    return absl::OkStatus();
  }
  const uint64_t origin = next_checkpoint_seq_++ & EntryHandle::kSeqMask;  // generation 0: a checkpoint
  const bool was_awaiting = AwaitingBroker();
  const Checkpoint c = CheckpointAt(candidate);
  const sinks::CheckpointWrite w = store_->Write(c, origin);
  switch (w.code) {
    case sinks::CheckpointWrite::Code::kDurable:
      checkpointed_ = candidate;
      break;
    case sinks::CheckpointWrite::Code::kPending:
      checkpoint_records_[origin] = candidate;
      checkpoint_inflight_ = candidate;
      commit_due_ = false;
      // The transaction interval runs from a commit's start: a record waits at most one interval plus one commit.
      if (transactional()) last_commit_ = clock_->Now();
      if (!was_awaiting) last_progress_ = clock_->Now();
      break;
    case sinks::CheckpointWrite::Code::kBusy:
      break;  // next time
    case sinks::CheckpointWrite::Code::kFailed:
      RaiseRewind(std::string(w.error.message()));
      break;
    case sinks::CheckpointWrite::Code::kError:
      return w.error;
  }
  return absl::OkStatus();
}

absl::Status DeliveryCore::RequestCheckpoint(Lsn lsn) {
  if (!store_->enabled()) return absl::OkStatus();
  if (lsn <= checkpointed_ && !(transactional() && tracker_.pending_records() > 0)) return absl::OkStatus();
  checkpoint_inflight_ = Lsn(0);
  return MaybeCheckpoint(transactional() ? std::max(lsn, CommitCandidate()) : lsn);
}

std::optional<bool> DeliveryCore::StatusDue() {
  const auto now = clock_->Now();
  const auto interval = std::chrono::milliseconds(config_.source.status_interval_ms);
  const bool quiet = Quiet();
  // Besides the timer: at once when the server asks, when a checkpoint was acknowledged, and when everything in
  // flight was acknowledged and the watermark moved (the end of a burst: at most every 50 ms).
  const bool burst_done = quiet && tracker_.watermark() > confirmed_ && now - last_status_ >= kBurstStatusGap;
  const bool timer = now - last_status_ >= interval;
  // A commit every transaction interval while records wait in it; with none, the checkpoint alone (the idle
  // advance) follows the status interval as in at-least-once mode.
  const bool records_due = tracker_.pending_records() > 0 && now - last_commit_ >= transaction_interval_;
  if (transactional() && (records_due || timer || bounds_reached() || TransactionTooOld())) commit_due_ = true;
  const bool commit_now = transactional() && commit_due_ && !checkpoint_in_flight() && CommitPossible();
  if (!reply_now_ && !timer && !status_soon_ && !burst_done && !commit_now) return std::nullopt;
  // Idle with no keepalive for an interval, or silent for half the receive timeout (busy or not): ask for a reply.
  const bool silent = now - last_received_ >= std::chrono::milliseconds(config_.source.receive_timeout_ms / 2);
  const bool ping = !reply_now_ && (silent || (quiet && now - last_keepalive_ >= interval)) &&
                    now - last_ping_ >= interval;
  if (ping) last_ping_ = now;
  return ping;
}

absl::StatusOr<pg::StandbyStatus> DeliveryCore::PrepareStatus(bool reply_requested) {
  Lsn flush = confirmed_;
  // Once a rewind or a fatal error is raised nothing more is confirmed: what is in flight is in doubt.
  if (!rewind_reason_ && !fatal_) {
    const Lsn candidate = ConfirmCandidate();
    if (absl::Status st = MaybeCheckpoint(transactional() ? CommitCandidate() : candidate); !st.ok()) return st;
    MaybeHaltBefore();
    // Only what the checkpoint holds durably is confirmed.
    flush = std::max(confirmed_, std::min(candidate, checkpointed_));
  }
  const int64_t now_pg = UnixMicrosToPgTime(clock_->UnixMicros());
  return pg::StandbyStatus{flush, flush, flush, now_pg, reply_requested};
}

void DeliveryCore::StatusSent(const pg::StandbyStatus& status) {
  if (status.flush > confirmed_) Log()->debug("confirmed {}", status.flush.ToString());
  confirmed_ = std::max(confirmed_, status.flush);
  metrics_->confirmed_lsn = confirmed_.value();
  last_status_ = clock_->Now();
  reply_now_ = false;
  status_soon_ = false;
}

int DeliveryCore::SleepMs() const {
  const auto interval = std::chrono::milliseconds(config_.source.status_interval_ms);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(last_status_ + interval - clock_->Now());
  // A transactional sink with records waiting commits at the transaction interval: wake up for it.
  if (transactional() && tracker_.pending_records() > 0) {
    left = std::min(left, std::chrono::duration_cast<std::chrono::milliseconds>(last_commit_ + transaction_interval_ -
                                                                                clock_->Now()));
  }
  return std::clamp(static_cast<int>(left.count()), 0, 200);
}

bool DeliveryCore::ReleaseDue() const {
  // Whatever waits for the broker counts, the checkpoint record too (a quiet outbox still writes checkpoints as the
  // WAL moves on).
  return AwaitingBroker() &&
         clock_->Now() - last_progress_ > std::chrono::milliseconds(config_.delivery.release_slot_after_ms);
}

bool DeliveryCore::ReceiveTimedOut() {
  const auto now = clock_->Now();
  if (frames_ != frames_seen_ || paused() || replay_) {  // a frame came; or not reading: what came waits in the socket
    frames_seen_ = frames_;
    last_received_ = now;
    return false;
  }
  return now - last_received_ > std::chrono::milliseconds(config_.source.receive_timeout_ms);
}

// ---- Recovery and gauges ----

void DeliveryCore::Rewind(std::string_view why) {
  Log()->info("rewinding to the slot: {}", why);
  tracker_.Reset();  // a new generation: the purged records' reports are ignored
  checkpoint_records_.clear();
  checkpoint_inflight_ = Lsn(0);
  held_.clear();
  streams_.Clear();  // buffers and spill files of streamed transactions: the server sends them again
  replay_.reset();
  stream_xid_.reset();
  idle_wal_end_.reset();
  in_tx_ = false;
  tx_halt_.reset();
  commit_due_ = false;
  kafka_tx_started_.reset();
  tx_events_ = 0;
  tx_skip_ = 0;
  halting_ = false;
  halt_after_commit_.reset();  // the stream comes again, and with it the error
  if (halt_before_) batch_rejection_.reset();  // the replay commits before the halted transaction, then halts
  relations_.Clear();
  decoder_ = pg::DecoderState{};
  catalog_due_ = false;  // the next session's Relation asks for it again
  rewind_reason_.reset();
  reply_now_ = false;
  UpdateGauges();
}

double DeliveryCore::BehindSourceSeconds() const {
  const int64_t now_ms = clock_->UnixMillis();
  const auto age = [&](int64_t commit_ms) { return commit_ms > 0 ? std::max<int64_t>(0, now_ms - commit_ms) / 1000.0 : 0.0; };
  if (!tracker_.idle()) return age(tracker_.oldest_commit_time_us() / 1000);
  const Lsn server = std::max(system_.xlogpos, Lsn(metrics_->server_wal_lsn.load()));
  if (server > received_through_) return age(last_commit_time_ms_);
  return 0.0;
}

void DeliveryCore::UpdateGauges() {
  const auto now = clock_->Now();
  metrics_->behind_source_seconds = BehindSourceSeconds();
  metrics_->inflight_events = static_cast<int64_t>(tracker_.inflight_events());
  metrics_->inflight_bytes = static_cast<int64_t>(tracker_.inflight_bytes());
  const bool pending = tracker_.pending_records() > 0;
  metrics_->oldest_inflight_age_seconds = pending ? std::chrono::duration<double>(now - last_progress_).count() : 0.0;
  const bool reachable =
      sink_ && sink_->reachable() && !(AwaitingBroker() && now - last_progress_ > std::chrono::seconds(5));
  metrics_->broker_reachable = reachable;
  if (!reachable) {
    const std::string why = sink_ ? sink_->unreachable_reason() : std::string();
    metrics_->SetNotReadyReason(why.empty() ? std::string("broker unreachable") : Cat("broker unreachable: ", why));
  } else if (metrics_->streaming) {
    metrics_->SetNotReadyReason("");
  }
}

// During a catch-up, a line every few seconds: how far behind the server's WAL position (as of the connect, or the
// latest keepalive), the rate, and an ETA. One line when caught up.
void DeliveryCore::LogProgress() {
  constexpr auto kEvery = std::chrono::seconds(5);
  constexpr uint64_t kBehindThreshold = 16 * 1024 * 1024;
  const auto now = clock_->Now();
  // Nothing received yet: the first window opens at the first frame's position, not at 0/0 (its rate would be the
  // absolute LSN over 5 s, and its ETA far too short).
  if (stream_position_ == Lsn(0) || now - progress_at_ < kEvery) return;
  const Lsn target = std::max(system_.xlogpos, Lsn(metrics_->server_wal_lsn.load()));
  const uint64_t behind = target > stream_position_ ? target.value() - stream_position_.value() : 0;
  if (behind >= kBehindThreshold && progress_at_ != Clock::time_point{}) {
    const double seconds = std::chrono::duration<double>(now - progress_at_).count();
    const double rate =
        stream_position_ > progress_from_ ? (stream_position_.value() - progress_from_.value()) / seconds : 0;
    Log()->info("catching up: {:.1f} MB behind {}, {:.1f} MB/s, ETA {}", behind / 1048576.0, target.ToString(),
                rate / 1048576.0, rate > 0 ? Cat(static_cast<int64_t>(behind / rate), " s") : std::string("unknown"));
    caught_up_ = false;
  } else if (behind < kBehindThreshold && !caught_up_) {
    Log()->info("caught up at {}", stream_position_.ToString());
    caught_up_ = true;
  }
  progress_at_ = now;
  progress_from_ = stream_position_;
}

}  // namespace outbox::delivery
