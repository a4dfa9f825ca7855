// Relay: the replication loop, delivery tracking, status updates and crash-only recovery.
#include "app/relay.h"

#include "common/status_tag.h"
#include "common/strings.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kafka/producer_config.h"
#include "pg/frames.h"
#include "spdlog/spdlog.h"

namespace outbox::app {
namespace {

constexpr auto kInitialBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
constexpr auto kStandbyRetry = std::chrono::milliseconds(500);
constexpr int kMessagesPerBatch = 1024;
constexpr int kCheckpointTimeoutMs = 30000;
// Producer recreations in a row, without a delivery between, before a fatal producer error is fatal for the relay.
constexpr int kMaxProducerRecreations = 5;
// Spill-file failures in a row (each a rewind, with the reconnect backoff) before they are fatal.
constexpr int kMaxSpillFailures = 5;


int64_t NowPgMicros() {
  const auto unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return UnixMicrosToPgTime(unix_us);
}

int64_t NowUnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("relay");
  return l ? l : spdlog::default_logger();
}

}  // namespace

std::atomic<bool> Relay::test_fatal_error{false};

Relay::Relay(config::Config config, RunOptions options, ops::Metrics* metrics, const std::atomic<bool>* stop)
    : config_(std::move(config)),
      options_(options),
      metrics_(metrics),
      stop_(stop),
      mapper_(config_.outbox),
      streams_(static_cast<size_t>(config_.delivery.max_inflight_bytes / 2), config_.source.spill_dir) {}

Relay::~Relay() = default;

absl::Status Relay::EnsureSink() {
  if (sink_ && sink_->FatalError().ok()) return absl::OkStatus();
  if (sink_) {
    const absl::Status cause = sink_->FatalError();
    if (++producer_recreations_ > kMaxProducerRecreations) {
      return absl::FailedPreconditionError(Cat(cause.message(), " (the producer was recreated ",
                                               kMaxProducerRecreations,
                                               " times in a row and the error came back each time, with no record "
                                               "delivered: check the broker's ACLs and the producer settings)"));
    }
    Log()->warn("recreating the producer after a fatal error ({} of {}): {}", producer_recreations_,
                kMaxProducerRecreations, cause.message());
  }
  sink_.reset();
  if (producer_conf_.empty()) {
    auto conf = kafka::BuildProducerConfig(
        config_.kafka, {config_.delivery.max_inflight_events, config_.delivery.max_inflight_bytes},
        config_.delivery.unsafe);
    if (!conf.ok()) return conf.status();
    producer_conf_ = *conf;
  }
  auto sink = kafka::KafkaSink::Create(producer_conf_, [this](const kafka::DeliveryReport& r) { OnDeliveryReport(r); });
  if (!sink.ok()) return sink.status();
  sink_ = std::move(*sink);
  return absl::OkStatus();
}

absl::Status Relay::Run() {
  if (streams_.stale_files_removed() > 0) {
    Log()->info("removed {} spill files of relays that are gone from {}", streams_.stale_files_removed(),
                streams_.spill_dir());
  }
  if (absl::Status st = EnsureSink(); !st.ok()) return st;
  metrics_->loop_running = true;
  auto backoff = kInitialBackoff;
  while (!stopping()) {
    const auto started = Clock::now();
    absl::Status st = Session();
    metrics_->streaming = false;
    if (halt_) return *halt_;
    if (st.ok()) break;  // stopped
    if (st.code() != absl::StatusCode::kUnavailable) {
      metrics_->loop_running = false;
      return st;
    }
    // A spill directory that keeps failing (full, gone, read-only) is not cured by reconnecting.
    if (streams_.consecutive_io_failures() >= kMaxSpillFailures) {
      metrics_->loop_running = false;
      return absl::FailedPreconditionError(Cat(st.message(), " (", streams_.consecutive_io_failures(),
                                               " times in a row; check source.spill_dir)"));
    }
    const bool standby = ReasonOf(st) == StatusReason::kStandby;
    const bool was_standby = metrics_->standby.exchange(standby ? 1 : 0) == 1;
    metrics_->SetNotReadyReason(standby ? Cat("standby: ", st.message()) : std::string(st.message()));
    if (Clock::now() - started > std::chrono::seconds(30)) backoff = kInitialBackoff;
    const auto wait = standby ? kStandbyRetry : backoff;
    if (standby) {
      if (!was_standby) Log()->info("standby: {}; retrying every {} ms", st.message(), wait.count());
    } else {
      Log()->warn("reconnecting in {} ms: {}", wait.count(), st.message());
      metrics_->reconnects++;
    }
    Rewind(ToStd(st.message()));
    if (absl::Status s = EnsureSink(); !s.ok()) return s;
    const auto until = Clock::now() + wait;
    while (!stopping() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // After a broker outage, hold the slot released until the broker answers again.
    if (broker_down_) {
      while (!stopping() && !sink_->CheckReachable(1000).ok()) {
      }
      broker_down_ = false;
    }
    if (!standby) backoff = std::min(backoff * 2, kMaxBackoff);
  }
  metrics_->loop_running = false;
  return absl::OkStatus();
}

absl::Status Relay::Session() {
  // application_name (unless the conninfo sets one) names the pipeline, so pg_stat_replication tells them apart.
  auto conn = pg::ReplicationConnection::Connect(
      config_.source.conninfo, config_.pipeline.empty() ? "outbox-relay" : Cat("outbox-relay.", config_.pipeline));
  if (!conn.ok()) return conn.status();
  auto system = (*conn)->IdentifySystem();
  if (!system.ok()) return system.status();
  // A reconnect that reaches another cluster is always fatal: what this relay holds (its confirmed position, its
  // checkpoint, the tracker's watermark) are the old cluster's LSNs. Restarting with --accept-gap goes on there.
  if (!system_.system_id.empty() && system_.system_id != system->system_id) {
    return absl::FailedPreconditionError(Cat("the server's system identifier changed from ", system_.system_id,
                                             " to ", system->system_id,
                                             ": another cluster (restart with --accept-gap to go on from its slot)"));
  }
  system_ = *system;
  if (config_.source.failover) {
    if (absl::Status st = pg::CheckFailoverSupported((*conn)->server_version()); !st.ok()) return st;
  }
  if (absl::Status st = PrepareSlot(**conn, *system); !st.ok()) return st;

  pg::StartOptions start;
  start.slot = config_.source.slot;
  start.publication = config_.source.publication;
  start.proto_version = config_.source.streaming ? 2 : 1;
  start.streaming = config_.source.streaming;
  start.messages = config_.source.messages;
  start.start_lsn = Lsn(0);
  const bool skipping = options_.start_lsn.has_value();
  if (skipping) start.start_lsn = *options_.start_lsn;
  if (absl::Status st = (*conn)->StartReplication(start); !st.ok()) return st;
  metrics_->standby = 0;
  metrics_->streaming = true;
  Log()->info("streaming slot {} from {} (server {}, timeline {})", config_.source.slot, confirmed_.ToString(),
              system->xlogpos.ToString(), system->timeline);
  if (skipping) {
    // Confirm the skip at once, so the skipped transactions are gone for good (SPEC.md §2 --start-lsn).
    if (absl::Status st = SendStatus(**conn, false); !st.ok()) return st;
    options_.start_lsn.reset();
  }
  decoder_ = pg::DecoderState{};
  decoder_.proto_version = start.proto_version;
  return Stream(**conn);
}

absl::Status Relay::PrepareSlot(pg::ReplicationConnection& conn, const pg::SystemInfo& system) {
  const std::string& slot_name = config_.source.slot;
  auto slot = conn.ReadSlot(slot_name);
  if (!slot.ok()) return slot.status();

  // Another relay streams the slot: wait as a standby without reading the checkpoint on every retry.
  if (slot->has_value() && (*slot)->active) {
    return WithReason(absl::UnavailableError(Cat("replication slot \"", slot_name, "\" is active for PID ",
                                                 (*slot)->active_pid.value_or(0))),
                      StatusReason::kStandby);
  }
  // Read the slot first, then the checkpoint (a live relay writes its checkpoint before it confirms).
  // Only this cluster's checkpoints count; another cluster's (sharing the topic) only tell a cluster switch.
  kafka::SlotCheckpoints checkpoints;
  if (config_.source.checkpoint == config::CheckpointStore::kKafka) {
    if (absl::Status st = kafka::EnsureCheckpointTopic(config_.kafka, config_.source.checkpoint_topic, 10000);
        !st.ok()) {
      return st;
    }
    auto cp = kafka::ReadKafkaCheckpoint(config_.kafka, config_.source.checkpoint_topic, slot_name, system.system_id,
                                         15000);
    if (!cp.ok()) return cp.status();
    checkpoints = *std::move(cp);
  } else if (config_.source.checkpoint == config::CheckpointStore::kFile) {
    auto cp = kafka::ReadFileCheckpoint(config_.source.checkpoint_file);
    if (!cp.ok()) return absl::FailedPreconditionError(Cat("source.checkpoint_file: ", cp.status().message()));
    if (cp->has_value()) kafka::AddCheckpoint(**cp, system.system_id, slot_name, &checkpoints);
  }
  const std::optional<kafka::Checkpoint>& checkpoint = checkpoints.own;
  const std::string other_systems = absl::StrJoin(checkpoints.other_systems, ", ");
  if (checkpoint && !other_systems.empty() && !slot_checked_) {
    Log()->info("checkpoint topic {} also holds checkpoints of slot {} of other clusters (system {}): ignored",
                config_.source.checkpoint_topic, slot_name, other_systems);
  }

  if (!slot->has_value()) {
    if (config_.source.create_slot && !checkpoint.has_value() && !slot_checked_) {
      auto consistent = conn.CreateSlot(slot_name, config_.source.failover);
      if (!consistent.ok()) return consistent.status();
      Log()->info("created {}replication slot {} at {}", config_.source.failover ? "failover " : "", slot_name,
                  consistent->ToString());
      if (absl::Status st = WriteCheckpointNow(*consistent, kCheckpointTimeoutMs); !st.ok()) return st;
      slot = conn.ReadSlot(slot_name);
      if (!slot.ok()) return slot.status();
      if (!slot->has_value()) return absl::InternalError("the slot just created is missing");
      checkpoints.own = kafka::Checkpoint{system.system_id, system.timeline, slot_name, config_.source.instance,
                                          *consistent};
    } else {
      return absl::FailedPreconditionError(Cat(
          "replication slot \"", slot_name, "\" does not exist",
          checkpoint ? Cat(" (its last checkpoint is ", checkpoint->lsn.ToString(),
                                    "): it was dropped; events after that position may be lost. Recreate it "
                                    "with `outbox-relay init` and backfill; the relay never recreates a slot")
                     : ": create it with `outbox-relay init` (or set source.create_slot: true for a first start)"));
    }
  }
  const pg::SlotInfo& s = **slot;
  if (s.wal_status == "lost") {
    return absl::FailedPreconditionError(Cat(
        "replication slot \"", slot_name, "\" was invalidated (wal_status lost, max_slot_wal_keep_size exceeded); ",
        "events after ", s.confirmed_flush_lsn ? s.confirmed_flush_lsn->ToString() : "?",
        " are gone from the WAL: drop and recreate the slot, then backfill"));
  }
  if (s.plugin != "pgoutput") {
    return absl::FailedPreconditionError(Cat("replication slot \"", slot_name, "\" uses plugin \"", s.plugin,
                                                      "\", not pgoutput"));
  }
  if (config_.source.failover && !s.failover.value_or(false)) {
    if (absl::Status st = conn.SetSlotFailover(slot_name); !st.ok()) return st;
    Log()->info("replication slot {} is now a failover slot (source.failover)", slot_name);
  }
  const Lsn slot_confirmed = s.confirmed_flush_lsn.value_or(Lsn(0));

  // Gap detection (SPEC.md §5).
  if (config_.source.checkpoint != config::CheckpointStore::kNone) {
    std::string gap;
    const std::string store = config_.source.checkpoint == config::CheckpointStore::kKafka
                                  ? Cat("topic ", config_.source.checkpoint_topic)
                                  : config_.source.checkpoint_file;
    if (!checkpoint && !other_systems.empty()) {
      gap = Cat("slot \"", slot_name, "\" has no checkpoint of this server (system ", system.system_id, ") in ",
                store, ", but the checkpoint of a slot of that name belongs to system ", other_systems,
                ": another cluster (a replaced or restored database behind the same conninfo?)");
    } else if (!checkpoint) {
      gap = Cat("slot \"", slot_name, "\" has no checkpoint in ", store, ": it was not made by `outbox-relay init`");
    } else if (slot_confirmed > checkpoint->lsn) {
      gap = Cat("slot \"", slot_name, "\" is at ", slot_confirmed.ToString(), ", ahead of the checkpoint ",
                         checkpoint->lsn.ToString(), ": it was recreated or advanced by someone else, and the events "
                         "between may never have been published");
    }
    if (!gap.empty()) {
      if (!options_.accept_gap) {
        return absl::FailedPreconditionError(Cat(gap, " (use --accept-gap to go on from the slot)"));
      }
      Log()->warn("accepting a gap: {}", gap);
      if (absl::Status st = WriteCheckpointNow(slot_confirmed, kCheckpointTimeoutMs); !st.ok()) return st;
    } else {
      checkpointed_ = std::max(checkpointed_, checkpoint->lsn);
    }
  }
  confirmed_ = std::max(confirmed_, slot_confirmed);
  if (config_.source.checkpoint == config::CheckpointStore::kNone) checkpointed_ = std::max(checkpointed_, confirmed_);

  if (options_.start_lsn) {
    const Lsn x = *options_.start_lsn;
    if (x < slot_confirmed) {
      return WithReason(absl::InvalidArgumentError(Cat("--start-lsn ", x.ToString(), " is older than slot \"",
                                                       slot_name, "\"'s confirmed position ",
                                                       slot_confirmed.ToString(),
                                                       ": the server would silently start at the slot")),
                        StatusReason::kUsage);
    }
    // Beyond what the server has written: a typo (1F/0 for 1/F0) that would skip every event until the WAL got
    // there.
    if (x > system.xlogpos) {
      return WithReason(absl::InvalidArgumentError(Cat("--start-lsn ", x.ToString(), " is beyond the server's current "
                                                       "WAL position ", system.xlogpos.ToString(),
                                                       ": it would skip every event written until then (a typo?)")),
                        StatusReason::kUsage);
    }
    Log()->warn("--start-lsn {}: skipping every transaction whose commit LSN is in [{}, {})", x.ToString(),
                slot_confirmed.ToString(), x.ToString());
    if (absl::Status st = WriteCheckpointNow(x, kCheckpointTimeoutMs); !st.ok()) return st;
    confirmed_ = std::max(confirmed_, x);
  }
  slot_checked_ = true;
  // --accept-gap is about the gap found at this start: a later gap (on a reconnect, or a standby's retry) stops the
  // relay again.
  options_.accept_gap = false;
  Log()->info("slot {}: confirmed_flush_lsn {}, restart_lsn {}, wal_status {}{}", slot_name, slot_confirmed.ToString(),
              s.restart_lsn ? s.restart_lsn->ToString() : "NULL", s.wal_status,
              s.failover ? Cat(", failover ", *s.failover, ", synced ", s.synced.value_or(false)) : "");
  metrics_->confirmed_lsn = confirmed_.value();
  return absl::OkStatus();
}

bool Relay::bounds_reached() const {
  return static_cast<int64_t>(tracker_.inflight_events()) >= config_.delivery.max_inflight_events ||
         static_cast<int64_t>(tracker_.inflight_bytes()) >= config_.delivery.max_inflight_bytes;
}

bool Relay::backpressured() const { return !held_.empty() || bounds_reached(); }

bool Relay::AwaitingBroker() const {
  return tracker_.pending_records() > 0 || !checkpoint_inflight_.IsZero() || !held_.empty();
}

void Relay::CountProduced(delivery::EntryHandle entry, size_t bytes) {
  if (!AwaitingBroker()) last_progress_ = Clock::now();
  tracker_.AddRecord(entry, bytes);
}

absl::Status Relay::Stream(pg::ReplicationConnection& conn) {
  const auto interval = std::chrono::milliseconds(config_.source.status_interval_ms);
  const auto release_after = std::chrono::milliseconds(config_.delivery.release_slot_after_ms);
  last_status_ = Clock::now();
  last_keepalive_ = Clock::now();
  last_progress_ = Clock::now();
  bool more_buffered = false;
  bool was_backpressured = false;
  while (true) {
    if (stopping()) return Shutdown(&conn);
    if (fatal_) return *fatal_;
    if (halt_) {
      absl::Status st = Shutdown(&conn);
      if (!st.ok()) Log()->warn("while halting: {}", st.message());
      return absl::OkStatus();  // Run returns halt_
    }
    if (rewind_reason_) return absl::UnavailableError(*rewind_reason_);

    // Held records first (the producer's queue was full), then read what libpq has buffered, unless records are
    // still held or the delivery bounds are reached.
    if (absl::Status st = ProduceHeld(); !st.ok()) return st;
    if (rewind_reason_ || fatal_ || halt_) continue;
    more_buffered = false;
    const bool bp = backpressured();
    if (const bool at_bounds = bounds_reached(); at_bounds != was_backpressured) {
      Log()->info("{} ({} events, {} bytes in flight)",
                  at_bounds ? "delivery bounds reached: pausing the stream"
                            : "below the delivery bounds: resuming the stream",
                  tracker_.inflight_events(), tracker_.inflight_bytes());
      was_backpressured = at_bounds;
    }
    if (replay_ && !bp) {
      if (absl::Status st = ReplayStep(); !st.ok()) return st;
      more_buffered = replay_ != nullptr;
    } else if (!bp) {
      bool read_again = true;
      for (int i = 0; i < kMessagesPerBatch; ++i) {
        auto msg = conn.ReadMessage();
        if (!msg.ok()) return msg.status();
        if (!msg->has_value()) {
          // libpq's buffer is drained: one non-blocking read for what arrived meanwhile, before sleeping in
          // poll() (under load the server has usually sent more: this saves a sleep and a wake-up).
          if (!read_again) break;
          read_again = false;
          if (absl::Status st = conn.ConsumeInput(); !st.ok()) return st;
          continue;
        }
        if (absl::Status st = HandleFrame(**msg); !st.ok()) return st;
        if (halt_ || fatal_ || rewind_reason_ || backpressured()) break;
        if (replay_) {  // a streamed transaction committed: produce it before reading on
          more_buffered = true;
          break;
        }
        if (i == kMessagesPerBatch - 1) more_buffered = true;
      }
    }
    sink_->Poll(0);
    if (test_fatal_error.exchange(false)) sink_->TestFatalError();
    if (absl::Status st = ProduceHeld(); !st.ok()) return st;
    // A rewind, halt or fatal error raised in this round is acted on before anything is confirmed.
    if (rewind_reason_ || fatal_ || halt_) continue;

    // A broker that has not acknowledged anything for release_slot_after_ms: release the slot. Whatever waits
    // for it counts, the checkpoint record too (a quiet outbox still writes checkpoints as the WAL moves on).
    const auto now = Clock::now();
    if (AwaitingBroker() && now - last_progress_ > release_after) {
      broker_down_ = true;
      return absl::UnavailableError(Cat("no acknowledgement from the broker for ",
                                                 config_.delivery.release_slot_after_ms,
                                                 " ms: releasing the slot until the broker answers"));
    }
    UpdateGauges();
    LogProgress();

    // Besides the timer: at once when the server asks, when a checkpoint was acknowledged, and when everything
    // in flight was acknowledged and the watermark moved (the end of a burst: confirm it without waiting for the
    // timer; at most every 50 ms).
    const bool burst_done = tracker_.idle() && !in_tx_ && tracker_.watermark() > confirmed_ &&
                            now - last_status_ >= std::chrono::milliseconds(50);
    if (reply_now_ || now - last_status_ >= interval || status_soon_ || burst_done) {
      const bool ping = !reply_now_ && tracker_.idle() && !in_tx_ && now - last_keepalive_ >= interval &&
                        now - last_ping_ >= interval;
      if (ping) last_ping_ = now;
      if (absl::Status st = SendStatus(conn, ping); !st.ok()) return st;
      reply_now_ = false;
      status_soon_ = false;
    }

    auto flushed = conn.Flush();
    if (!flushed.ok()) return flushed.status();
    int timeout_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(last_status_ + interval - Clock::now()).count());
    timeout_ms = std::clamp(timeout_ms, 0, 200);
    if (more_buffered) timeout_ms = 0;
    pollfd fds[2] = {{conn.socket(), static_cast<short>((bp ? 0 : POLLIN) | (*flushed ? 0 : POLLOUT)), 0},
                     {sink_->wakeup_fd(), POLLIN, 0}};
    const int n = ::poll(fds, 2, timeout_ms);
    if (n < 0 && errno != EINTR) return absl::InternalError("poll failed");
    if (n > 0 && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) {
      if (absl::Status st = conn.ConsumeInput(); !st.ok()) return st;
    }
    if (n > 0 && (fds[1].revents & POLLIN)) sink_->DrainWakeup();
  }
}

absl::Status Relay::HandleFrame(std::string_view bytes) {
  auto frame = pg::DecodeServerFrame(bytes);
  if (!frame.ok()) return frame.status();
  if (const auto* k = std::get_if<pg::Keepalive>(&*frame)) {
    last_keepalive_ = Clock::now();
    if (k->wal_end > stream_position_) stream_position_ = k->wal_end;
    if (k->wal_end.value() > metrics_->server_wal_lsn.load()) metrics_->server_wal_lsn = k->wal_end.value();
    if (k->reply_requested) reply_now_ = true;
    // Idle advance: everything before this keepalive was processed; if none of it is open or in flight, the
    // slot may be confirmed up to walEnd (DESIGN.md "Delivery").
    if (tracker_.idle() && !in_tx_ && streams_.empty() && !replay_) {
      idle_wal_end_ = std::max(idle_wal_end_.value_or(Lsn(0)), k->wal_end);
    }
    return absl::OkStatus();
  }
  const auto& x = std::get<pg::XLogData>(*frame);
  if (x.wal_end > stream_position_) stream_position_ = x.wal_end;
  auto message = pg::Decode(x.payload, decoder_);
  if (!message.ok()) {
    return absl::DataLossError(Cat("undecodable pgoutput message at LSN ", x.data_start.ToString(), ": ",
                                            message.status().message()));
  }
  return HandleMessage(*message);
}

absl::Status Relay::HandleMessage(const pg::Message& message) {
  return std::visit(
      [&](const auto& m) -> absl::Status {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, pg::Begin>) {
          if (in_tx_) return absl::DataLossError(Cat("Begin of ", m.final_lsn.ToString(), " inside a transaction"));
          in_tx_ = true;
          tx_commit_lsn_ = m.final_lsn;
          tx_commit_time_ms_ = PgTimeToUnixMicros(m.commit_time) / 1000;
          tx_entry_ = tracker_.Begin(tx_commit_time_ms_);
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::Commit>) {
          if (!in_tx_) return absl::DataLossError(Cat("Commit at ", m.end_lsn.ToString(), " outside a transaction"));
          FinishTransaction(m.end_lsn);
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::Relation>) {
          // The outbox table renamed (or moved to another schema) while running: its rows would no longer be
          // recognized and the slot would be confirmed past them. Fatal, like a missing column.
          if (outbox_oid_ && *outbox_oid_ == m.oid && !mapper_.IsOutbox(m)) {
            return absl::FailedPreconditionError(Cat(
                "the outbox table ", config_.outbox.table, " (OID ", m.oid, ") is now \"", m.nspname, ".",
                m.relname, "\" (renamed while the relay ran), in the transaction committing at ",
                tx_commit_lsn_.ToString(), ": set outbox.table to its new name, or rename it back"));
          }
          if (mapper_.IsOutbox(m)) outbox_oid_ = m.oid;
          mapper_.OnRelation(m.oid);
          relations_.Put(m);
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::Insert>) {
          return HandleInsert(m);
        } else if constexpr (std::is_same_v<T, pg::Update>) {
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
              tx_halt_ = absl::FailedPreconditionError(Cat(
                  "an UPDATE of ", config_.outbox.table, " in the transaction committing at ",
                  tx_commit_lsn_.ToString(), " (outbox.on_update: error)"));
              break;
          }
          metrics_->events_skipped++;
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::LogicalMessage>) {
          return HandleLogicalMessage(m);
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
          if (in_tx_) return absl::DataLossError(Cat("Stream Commit at ", m.end_lsn.ToString(), " inside a transaction"));
          in_tx_ = true;
          tx_commit_lsn_ = m.commit_lsn;
          tx_commit_time_ms_ = PgTimeToUnixMicros(m.commit_time) / 1000;
          tx_entry_ = tracker_.Begin(tx_commit_time_ms_);
          auto replay = streams_.TakeForReplay(m.xid);
          if (!replay.ok()) return replay.status();
          replay_ = std::move(*replay);
          replay_end_lsn_ = m.end_lsn;
          replay_source_lsn_ = m.commit_lsn.ToString();
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, pg::Delete> || std::is_same_v<T, pg::Truncate> ||
                             std::is_same_v<T, pg::Type> || std::is_same_v<T, pg::Origin>) {
          return absl::OkStatus();
        } else {
          return absl::DataLossError("unexpected two-phase message: two_phase was not requested");
        }
      },
      message);
}

absl::Status Relay::HandleInsert(const pg::Insert& insert) {
  const pg::Relation* rel = relations_.Find(insert.relation_oid);
  if (rel == nullptr) {
    return absl::DataLossError(Cat("INSERT for relation OID ", insert.relation_oid,
                                            " without a Relation message, in the transaction committing at ",
                                            tx_commit_lsn_.ToString()));
  }
  if (!mapper_.IsOutbox(*rel)) return absl::OkStatus();
  if (insert.xid) {
    if (!stream_xid_) return absl::DataLossError("streamed INSERT outside a Stream Start block");
    return BufferStreamed(*insert.xid, mapper_.Map(*rel, insert.new_tuple, Lsn(0), INT64_MIN), "");
  }
  if (!in_tx_) return absl::DataLossError("INSERT outside a transaction");
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

absl::Status Relay::HandleLogicalMessage(const pg::LogicalMessage& message) {
  // Only transactional messages with a configured prefix are events: they commit or roll back with their
  // transaction. Non-transactional ones have no transaction to confirm in order and are ignored.
  if (!config_.source.messages || !message.transactional()) return absl::OkStatus();
  const auto& prefixes = config_.source.message_prefixes;
  if (std::find(prefixes.begin(), prefixes.end(), std::string(message.prefix)) == prefixes.end()) {
    return absl::OkStatus();
  }
  if (message.xid) {
    if (!stream_xid_) return absl::DataLossError("streamed message outside a Stream Start block");
    return BufferStreamed(*message.xid, mapper_.MapMessage(message.content, Lsn(0), INT64_MIN), message.content);
  }
  if (!in_tx_) return absl::OkStatus();
  if (tx_halt_) return absl::OkStatus();
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

absl::Status Relay::ProduceRecord(const outbox::Record& record) {
  if (!held_.empty()) {  // behind what is held, in stream order (and the release clock already runs)
    held_.push_back(HeldRecord{outbox::OwnedRecord::Of(record), tx_entry_, /*counted=*/false, /*dead_letter=*/false, ""});
    return absl::OkStatus();
  }
  const absl::Status st = sink_->Produce(record, tx_entry_.Pack());
  if (st.ok()) {
    CountProduced(tx_entry_, record.PayloadBytes());
    return absl::OkStatus();
  }
  if (st.code() == absl::StatusCode::kResourceExhausted) {  // queue full: produced from the loop when it has room
    if (!AwaitingBroker()) last_progress_ = Clock::now();  // the release clock starts now, not at the last ack
    held_.push_back(HeldRecord{outbox::OwnedRecord::Of(record), tx_entry_, /*counted=*/false, /*dead_letter=*/false, ""});
    return absl::OkStatus();
  }
  return OnEventProduceError(st, record);
}

absl::Status Relay::OnEventProduceError(const absl::Status& st, const outbox::Record& record) {
  if (st.code() == absl::StatusCode::kUnavailable) {
    // The producer failed (e.g. an idempotent producer's fatal error): rewind and recreate it.
    if (!rewind_reason_) rewind_reason_ = Cat("producing failed: ", st.message());
    return absl::OkStatus();
  }
  if (st.code() == absl::StatusCode::kInvalidArgument) {
    outbox::Record original = record;
    switch (kafka::RejectionOf(st)) {
      case kafka::Rejection::kTooLarge:  // dead-lettered without its value (it would not fit either)
        original.value = std::nullopt;
        break;
      case kafka::Rejection::kTimestamp:  // dead-lettered at the time of dead-lettering (the broker takes that)
        original.timestamp_ms = 0;
        break;
      case kafka::Rejection::kTopic:
      case kafka::Rejection::kNone:
        break;
    }
    return PerEventError(absl::InvalidArgumentError(Cat(st.message(), " (event id=", record.event_id, " at LSN ",
                                                        tx_commit_lsn_.ToString(), ")")),
                         std::move(original));
  }
  return st;
}

absl::Status Relay::ProduceHeld() {
  while (!held_.empty() && !rewind_reason_ && !fatal_ && !halt_) {
    HeldRecord& h = held_.front();  // stays in place (a deque's references survive push_back) until popped
    if (h.entry.generation != tracker_.generation()) {
      held_.pop_front();
      continue;
    }
    const outbox::Record record = h.record.View();
    const absl::Status st = sink_->Produce(record, h.entry.Pack());
    if (st.code() == absl::StatusCode::kResourceExhausted) return absl::OkStatus();  // still full: next round
    absl::Status result = absl::OkStatus();
    if (st.ok()) {
      if (!h.counted) CountProduced(h.entry, h.record.PayloadBytes());
    } else if (h.dead_letter) {
      result = OnDeadLetterProduceError(st, h.entry, h.why);
    } else {
      result = OnEventProduceError(st, record);
    }
    held_.pop_front();
    if (!result.ok()) return result;
  }
  return absl::OkStatus();
}

absl::Status Relay::PerEventError(const absl::Status& error, outbox::Record original) {
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

absl::Status Relay::ProduceDeadLetter(outbox::Record record, const std::string& error, delivery::EntryHandle entry) {
  record.topic = config_.delivery.dead_letter_topic;
  record.headers.push_back(outbox::Header{"error", std::string_view(error)});
  bool has_lsn = false;
  for (const outbox::Header& h : record.headers) has_lsn = has_lsn || h.name == "source_lsn";
  const std::string lsn = tx_commit_lsn_.ToString();
  if (!has_lsn) record.headers.push_back(outbox::Header{"source_lsn", std::string_view(lsn)});
  absl::Status st = absl::ResourceExhaustedError("held");
  if (held_.empty()) st = sink_->Produce(record, entry.Pack());
  if (st.ok()) {
    CountProduced(entry, record.PayloadBytes());
    return absl::OkStatus();
  }
  if (st.code() == absl::StatusCode::kResourceExhausted) {
    if (!AwaitingBroker()) last_progress_ = Clock::now();
    held_.push_back(HeldRecord{outbox::OwnedRecord::Of(record), entry, /*counted=*/false, /*dead_letter=*/true, error});
    return absl::OkStatus();
  }
  return OnDeadLetterProduceError(st, entry, error);
}

absl::Status Relay::OnDeadLetterProduceError(const absl::Status& st, delivery::EntryHandle entry,
                                             const std::string& why) {
  if (st.code() == absl::StatusCode::kUnavailable) {
    // Neither written nor acknowledged: its transaction stays unconfirmed and the rewind sends it again.
    if (!rewind_reason_) rewind_reason_ = Cat("producing a dead letter failed: ", st.message());
    return absl::OkStatus();
  }
  // A failed dead-letter write halts.
  tracker_.MarkFailed(entry);
  return absl::FailedPreconditionError(Cat("could not write a dead letter to ", config_.delivery.dead_letter_topic,
                                           " (", st.message(), ") for: ", why));
}

void Relay::DeadLetterFromReport(const kafka::DeliveryReport& r, delivery::EntryHandle entry) {
  HeldRecord d{r.rejected ? *r.rejected : outbox::OwnedRecord{}, entry, /*counted=*/true, /*dead_letter=*/true, ""};
  d.why = Cat("the broker rejected the record for topic ", r.topic, ": ", r.error);
  outbox::OwnedRecord& rec = d.record;
  rec.topic = config_.delivery.dead_letter_topic;
  rec.partition.reset();
  rec.headers.emplace_back("error", d.why);
  // The dead letter stands in for the rejected record: it is counted before the original is let go, and only its
  // own delivery report acknowledges it (a dead letter that could not be written keeps its transaction open).
  tracker_.AddRecord(entry, rec.PayloadBytes());
  tracker_.Ack(entry, r.bytes);
  held_.push_back(std::move(d));
}

void Relay::OnDeliveryReport(const kafka::DeliveryReport& r) {
  const delivery::EntryHandle handle = delivery::EntryHandle::Unpack(r.opaque);
  if (handle.generation == 0) {  // a checkpoint record
    auto it = checkpoint_records_.find(r.opaque);
    if (it == checkpoint_records_.end()) return;
    const Lsn lsn = it->second;
    checkpoint_records_.erase(it);
    if (lsn == checkpoint_inflight_) checkpoint_inflight_ = Lsn(0);
    if (r.outcome == kafka::DeliveryOutcome::kAcked) {
      checkpointed_ = std::max(checkpointed_, lsn);
      status_soon_ = true;
      last_progress_ = Clock::now();
      producer_recreations_ = 0;
    } else if (!rewind_reason_) {
      rewind_reason_ = Cat("checkpoint write failed: ", r.error);
    }
    return;
  }
  if (handle.generation != tracker_.generation()) return;  // from before a rewind
  const bool dead_letter = r.topic == config_.delivery.dead_letter_topic;
  if (r.outcome == kafka::DeliveryOutcome::kAcked) {
    producer_recreations_ = 0;
    const int64_t commit_time_ms = tracker_.CommitTimeOf(handle);  // read before the ack may retire the entry
    if (tracker_.Ack(handle, r.bytes)) {
      last_progress_ = Clock::now();
      if (dead_letter) {
        metrics_->events_dead_lettered++;
      } else {
        metrics_->events_published++;
        if (commit_time_ms > 0) metrics_->commit_to_ack_seconds.Observe((NowUnixMillis() - commit_time_ms) / 1000.0);
      }
    }
    return;
  }
  switch (r.outcome) {
    case kafka::DeliveryOutcome::kAcked:
      return;  // handled above
    case kafka::DeliveryOutcome::kFatal:
      metrics_->delivery_errors_transient++;
      if (!rewind_reason_) rewind_reason_ = Cat("producer fatal error: ", Msg(sink_->FatalError()));
      return;
    case kafka::DeliveryOutcome::kRetriable:
      metrics_->delivery_errors_transient++;
      if (!rewind_reason_) rewind_reason_ = Cat("delivery failed: ", r.error);
      return;
    case kafka::DeliveryOutcome::kRejectedEvent:
      metrics_->delivery_errors_permanent++;
      if (config_.delivery.on_error == config::OnError::kDeadLetter && !dead_letter) {
        Log()->warn("dead-lettering event id={}: {}", r.event_id, r.error);
        DeadLetterFromReport(r, handle);
        return;
      }
      // Failed for good: the watermark stays before it, and its report is in (nothing waits for it at a stop).
      tracker_.MarkFailed(handle);
      tracker_.Ack(handle, r.bytes);
      if (!halt_) {
        halt_ = absl::InvalidArgumentError(Cat(
            dead_letter ? "could not write a dead letter of event id=" : "the broker rejected event id=", r.event_id,
            " for topic ", r.topic, ": ", r.error, "; its transaction (commit LSN ", r.source_lsn,
            ") was not confirmed", SkipAdvice(handle)));
      }
      return;
    case kafka::DeliveryOutcome::kRejectedBatch:
      // Not one event's fault: its batch mates are innocent, so nothing is dead-lettered (DESIGN.md); it halts,
      // naming every event of the batch.
      metrics_->delivery_errors_permanent++;
      tracker_.MarkFailed(handle);
      tracker_.Ack(handle, r.bytes);
      if (!batch_rejection_) {
        batch_rejection_ = BatchRejection{std::string(r.topic),  std::string(r.error), std::string(r.error_name),
                                          r.too_large,           std::string(r.source_lsn), SkipAdvice(handle),
                                          {}};
      }
      batch_rejection_->event_ids.emplace_back(r.event_id);
      halt_ = absl::InvalidArgumentError(Cat(
          "the broker rejected a batch of ", batch_rejection_->event_ids.size(), " records for topic ",
          batch_rejection_->topic, ": ", batch_rejection_->error, " (", batch_rejection_->error_name,
          "; event ids ", absl::StrJoin(batch_rejection_->event_ids, ", "), ")",
          batch_rejection_->too_large
              ? " (keep kafka.message.max.bytes and batch.size below the topic's max.message.bytes)"
              : "",
          "; the first one's transaction (commit LSN ", batch_rejection_->source_lsn, ") was not confirmed",
          batch_rejection_->skip_advice));
      return;
  }
}

std::string Relay::SkipAdvice(delivery::EntryHandle handle) const {
  const std::optional<Lsn> end = tracker_.EndLsnOf(handle);
  return end ? Cat(". To skip it: outbox-relay run --start-lsn ", end->ToString())
             : std::string(" (it skips with --start-lsn at its end LSN: any position just past its commit LSN)");
}

Lsn Relay::ConfirmCandidate() const {
  Lsn candidate = std::max(confirmed_, tracker_.watermark());
  if (tracker_.idle() && !in_tx_ && streams_.empty() && !replay_ && idle_wal_end_) {
    candidate = std::max(candidate, *idle_wal_end_);
  }
  return candidate;
}

absl::Status Relay::MaybeCheckpoint(Lsn candidate) {
  if (candidate <= checkpointed_) return absl::OkStatus();
  switch (config_.source.checkpoint) {
    case config::CheckpointStore::kNone:
      checkpointed_ = candidate;
      return absl::OkStatus();
    case config::CheckpointStore::kFile: {
      kafka::Checkpoint c{system_.system_id, system_.timeline, config_.source.slot, config_.source.instance, candidate};
      if (absl::Status st = kafka::WriteFileCheckpoint(config_.source.checkpoint_file, c); !st.ok()) return st;
      checkpointed_ = candidate;
      return absl::OkStatus();
    }
    case config::CheckpointStore::kKafka: {
      if (!checkpoint_inflight_.IsZero()) return absl::OkStatus();  // one at a time
      kafka::Checkpoint c{system_.system_id, system_.timeline, config_.source.slot, config_.source.instance, candidate};
      const std::string key = kafka::CheckpointKey(c);
      const std::string value = kafka::EncodeCheckpoint(c);
      outbox::Record rec;
      rec.topic = config_.source.checkpoint_topic;
      rec.key = key;
      rec.value = value;
      rec.timestamp_ms = NowUnixMillis();
      const uint64_t opaque = next_checkpoint_seq_++ & delivery::EntryHandle::kSeqMask;
      const bool was_awaiting = AwaitingBroker();
      absl::Status st = sink_->Produce(rec, opaque);
      if (st.code() == absl::StatusCode::kResourceExhausted) return absl::OkStatus();  // next time
      if (st.code() == absl::StatusCode::kUnavailable) {
        if (!rewind_reason_) rewind_reason_ = Cat("writing a checkpoint failed: ", st.message());
        return absl::OkStatus();
      }
      if (!st.ok()) return st;
      checkpoint_records_[opaque] = candidate;
      checkpoint_inflight_ = candidate;
      if (!was_awaiting) last_progress_ = Clock::now();
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Relay::WriteCheckpointNow(Lsn lsn, int timeout_ms) {
  if (config_.source.checkpoint == config::CheckpointStore::kNone) return absl::OkStatus();
  checkpoint_inflight_ = Lsn(0);
  if (absl::Status st = MaybeCheckpoint(lsn); !st.ok()) return st;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (checkpointed_ < lsn) {
    if (Clock::now() > deadline) {
      return absl::UnavailableError(Cat("the checkpoint ", lsn.ToString(), " was not acknowledged in time"));
    }
    if (rewind_reason_) return absl::UnavailableError(*rewind_reason_);
    if (checkpoint_inflight_.IsZero() && checkpointed_ < lsn) {
      if (absl::Status st = MaybeCheckpoint(lsn); !st.ok()) return st;
    }
    sink_->Poll(50);
  }
  return absl::OkStatus();
}

absl::Status Relay::SendStatus(pg::ReplicationConnection& conn, bool reply_requested) {
  const Lsn candidate = ConfirmCandidate();
  if (absl::Status st = MaybeCheckpoint(candidate); !st.ok()) return st;
  // Only what the checkpoint holds durably is confirmed.
  const Lsn flush = std::max(confirmed_, std::min(candidate, checkpointed_));
  pg::StandbyStatus status{flush, flush, flush, NowPgMicros(), reply_requested};
  if (absl::Status st = conn.SendStatus(status); !st.ok()) return st;
  if (flush > confirmed_) {
    Log()->debug("confirmed {}", flush.ToString());
  }
  confirmed_ = flush;
  metrics_->confirmed_lsn = confirmed_.value();
  last_status_ = Clock::now();
  return absl::OkStatus();
}

absl::Status Relay::Shutdown(pg::ReplicationConnection* conn) {
  metrics_->streaming = false;
  const auto deadline = Clock::now() + std::chrono::milliseconds(config_.delivery.shutdown_timeout_ms);
  if (tracker_.pending_records() > 0) {
    Log()->info("stopping: waiting up to {} ms for {} in-flight records", config_.delivery.shutdown_timeout_ms,
                tracker_.pending_records());
  }
  const auto interval = std::chrono::milliseconds(config_.source.status_interval_ms);
  // Under a halt nothing more is produced: only what librdkafka still holds is waited for (held records and the
  // placeholders of unwritten dead letters never will be).
  if (halt_) held_.clear();
  const auto waiting = [&] {
    return halt_ ? sink_->OutQueueLength() > 0 : tracker_.pending_records() > 0 || !held_.empty();
  };
  while (waiting() && Clock::now() < deadline && !rewind_reason_) {
    if (absl::Status st = ProduceHeld(); !st.ok()) {
      Log()->warn("while stopping: {}", st.message());
      break;
    }
    sink_->Poll(50);
    if (conn && Clock::now() - last_status_ >= interval) {
      if (absl::Status st = SendStatus(*conn, false); !st.ok()) return st;
    }
  }
  const Lsn candidate = ConfirmCandidate();
  if (candidate > checkpointed_ && !rewind_reason_) {
    const int left = static_cast<int>(std::max<int64_t>(
        1000, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    if (absl::Status st = WriteCheckpointNow(candidate, left); !st.ok()) {
      Log()->warn("could not write the final checkpoint: {}", st.message());
    }
  }
  if (conn) {
    if (absl::Status st = SendStatus(*conn, false); !st.ok()) return st;
    if (absl::Status st = conn->EndCopy(5000); !st.ok()) Log()->warn("ending the stream: {}", st.message());
  }
  Log()->info("stopped at {} ({} records unacknowledged)", confirmed_.ToString(), tracker_.pending_records());
  return absl::OkStatus();
}

void Relay::Rewind(std::string_view why) {
  Log()->info("rewinding to the slot: {}", why);
  tracker_.Reset();  // new generation first: the purged records' reports are then ignored
  if (sink_) {
    sink_->Purge();
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (sink_->OutQueueLength() > 0 && Clock::now() < deadline) sink_->Poll(50);
  }
  checkpoint_records_.clear();
  checkpoint_inflight_ = Lsn(0);
  held_.clear();
  streams_.Clear();  // buffers and spill files of streamed transactions: the server sends them again
  replay_.reset();
  stream_xid_.reset();
  idle_wal_end_.reset();
  in_tx_ = false;
  tx_halt_.reset();
  relations_.Clear();
  decoder_ = pg::DecoderState{};
  rewind_reason_.reset();
  reply_now_ = false;
  UpdateGauges();
}

// During a catch-up, a line every few seconds: how far behind the server's WAL position (as of the connect, or
// the latest keepalive), the rate, and an ETA. One line when caught up.
void Relay::LogProgress() {
  constexpr auto kEvery = std::chrono::seconds(5);
  constexpr uint64_t kBehindThreshold = 16 * 1024 * 1024;
  const auto now = Clock::now();
  if (now - progress_at_ < kEvery) return;
  const Lsn target = std::max(system_.xlogpos, Lsn(metrics_->server_wal_lsn.load()));
  const uint64_t behind = target > stream_position_ ? target.value() - stream_position_.value() : 0;
  if (behind >= kBehindThreshold && progress_at_ != Clock::time_point{}) {
    const double seconds = std::chrono::duration<double>(now - progress_at_).count();
    const double rate = stream_position_ > progress_from_ ? (stream_position_.value() - progress_from_.value()) / seconds : 0;
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

void Relay::FinishTransaction(Lsn end_lsn) {
  in_tx_ = false;
  tracker_.Close(tx_entry_, end_lsn);
  if (end_lsn.value() > metrics_->received_lsn.load()) metrics_->received_lsn = end_lsn.value();
  if (tx_halt_) {
    halt_ = absl::Status(tx_halt_->code(),
                         Cat(tx_halt_->message(), "; the transaction ends at ", end_lsn.ToString(),
                             " and was not confirmed (delivery.on_error: halt). To skip it: outbox-relay run "
                             "--start-lsn ",
                             end_lsn.ToString()));
    tx_halt_.reset();
  }
}

absl::Status Relay::BufferStreamed(uint32_t subxid, absl::StatusOr<outbox::Record> record, std::string_view raw_value) {
  constexpr int64_t kNoTimestamp = INT64_MIN;
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

absl::Status Relay::ReplayStep() {
  for (int i = 0; i < kMessagesPerBatch && !backpressured(); ++i) {
    auto next = replay_->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      replay_.reset();
      FinishTransaction(replay_end_lsn_);
      return absl::OkStatus();
    }
    const BufferedEvent& e = **next;
    outbox::Record record = e.ToRecord(replay_source_lsn_, tx_commit_time_ms_);
    if (tx_halt_) continue;  // already halted: nothing more of it is produced
    if (e.halt) {
      tracker_.MarkFailed(tx_entry_);
      tx_halt_ = absl::FailedPreconditionError(Cat(e.error_message, " in the streamed transaction committing at ",
                                                   replay_source_lsn_));
      continue;
    }
    if (!e.error) {
      if (absl::Status st = mapper_.CompleteEnvelope(record, replay_source_lsn_); !st.ok()) return st;
    }
    absl::Status st = e.error ? PerEventError(absl::InvalidArgumentError(Cat(e.error_message, " (event id=",
                                                                             e.event_id, ")")),
                                              std::move(record))
                              : ProduceRecord(record);
    if (!st.ok()) return st;
    if (rewind_reason_ || fatal_) return absl::OkStatus();
  }
  return absl::OkStatus();
}

void Relay::UpdateGauges() {
  metrics_->inflight_events = static_cast<int64_t>(tracker_.inflight_events());
  metrics_->inflight_bytes = static_cast<int64_t>(tracker_.inflight_bytes());
  const bool pending = tracker_.pending_records() > 0;
  metrics_->oldest_inflight_age_seconds =
      pending ? std::chrono::duration<double>(Clock::now() - last_progress_).count() : 0.0;
  const bool reachable = sink_ && !sink_->all_brokers_down() &&
                         !(AwaitingBroker() && Clock::now() - last_progress_ > std::chrono::seconds(5));
  metrics_->broker_reachable = reachable;
  if (!reachable) metrics_->SetNotReadyReason("broker unreachable");
  else if (metrics_->streaming) metrics_->SetNotReadyReason("");
}

}  // namespace outbox::app
