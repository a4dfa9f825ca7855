// Relay: the reconnect loop, one session's slot check and stream, and the wiring of the core to its edges.
#include "app/relay.h"

#include <algorithm>
#include <thread>

#include "app/test_hooks.h"
#include "common/status_tag.h"
#include "common/strings.h"
#include "app/sinks.h"
#include "common/checkpoint.h"
#include "absl/random/random.h"
#include "outbox/mapper.h"
#include "spdlog/spdlog.h"

namespace outbox::app {
namespace {

constexpr auto kInitialBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
constexpr auto kStandbyRetry = std::chrono::milliseconds(500);
constexpr int kFramesPerRound = 1024;
// The stream is dense while a spell brings at least this many frames (600 in 10 ms: 20,000 one-row transactions a
// second, or 60,000 rows of large ones), and for the spell after.
constexpr int kDenseSpellFrames = 600;
constexpr auto kSpell = std::chrono::milliseconds(10);
// A stream whose transactions the walsender sends this long after they committed is a backlog however slowly it
// comes (a walsender short of CPU sends a backlog in a trickle): batching it costs nobody a wait.
constexpr int64_t kBacklogLagUs = 100'000;
// The pause after a round that read such a backlog dry in a trickle (fewer than kTrickleFrames frames): longer than
// source.read_batch_us, since no one waits for a change already that late, and a trickling walsender fills only a few
// frames into the socket in 200 µs. A walsender that keeps the socket full is not made to wait that long: in 2 ms it
// would fill the socket and stop (a drain into librdkafka's mock cluster ran at 0.4 to 0.6 x its rate).
constexpr auto kBacklogReadBatch = std::chrono::microseconds(2000);
constexpr int kTrickleFrames = 16;
constexpr int kCheckpointTimeoutMs = 30000;
// How long the publication watch waits for its answer before the connection counts as lost (a rewind).
constexpr int kWatchTimeoutMs = 10000;
// Producer recreations in a row, without a delivery between, before a fatal producer error is fatal for the relay.
constexpr int kMaxProducerRecreations = 5;
// The publication check after a burst: soon, but at most this often (a plain query on the server each time).
constexpr int64_t kQuietWatchGapMs = 50;
// Spill-file failures in a row (each a rewind, with the reconnect backoff) before they are fatal.
constexpr int kMaxSpillFailures = 5;

using Clock = std::chrono::steady_clock;

std::shared_ptr<spdlog::logger> Log() {
  auto l = spdlog::get("relay");
  return l ? l : spdlog::default_logger();
}

}  // namespace

Relay::Relay(config::PipelineConfig config, RunOptions options, ops::Metrics* metrics, const std::atomic<bool>* stop)
    : config_(std::move(config)),
      options_(options),
      metrics_(metrics),
      stop_(stop),
      core_(config_, &clock_, metrics_),
      store_(MakeCheckpointStore(config_)),
      read_batch_(config_.source.read_batch_us) {
  core_.WatchPublication();
  if (!config_.outbox.debezium_context_logical_name.empty()) {
    absl::BitGen random;
    core_.SetRunId(outbox::FormatUuidV7(clock_.UnixMillis(), absl::Uniform<uint64_t>(random),
                                        absl::Uniform<uint64_t>(random)));
  }
  metrics_->inflight_events_limit = config_.delivery.max_inflight_events;
  metrics_->inflight_bytes_limit = config_.delivery.max_inflight_bytes;
}

Relay::~Relay() = default;

void Relay::DropSink() {
  core_.Attach(nullptr, store_.get());
  AttachSink(store_.get(), nullptr);
  sink_.reset();
}

absl::Status Relay::EnsureSink() {
  if (sink_ && sink_->FatalError().ok()) return absl::OkStatus();
  // exactly_once: the transactional id names the cluster, known once a session has identified it.
  if (exactly_once() && system_.system_id.empty()) return absl::OkStatus();
  if (sink_) {
    const absl::Status cause = sink_->FatalError();
    if (core_.acks() != acks_at_recreation_) producer_recreations_ = 0;  // it delivered since the last one
    if (absl::IsUnavailable(cause)) {
      // The broker did not answer in time (a commit or an abort left unfinished while it was down or slow): the
      // client is spent, but nothing says the next one will fail. Not counted: a broker slow to recover after an
      // outage must not make the relay give up.
      Log()->warn("recreating the producer: {}", cause.message());
    } else if (++producer_recreations_ > kMaxProducerRecreations) {
      return absl::FailedPreconditionError(Cat(cause.message(), " (the producer was recreated ",
                                               kMaxProducerRecreations,
                                               " times in a row and the error came back each time, with no record "
                                               "delivered: check the broker's ACLs and the producer settings)"));
    } else {
      Log()->warn("recreating the producer after a fatal error ({} of {}): {}", producer_recreations_,
                  kMaxProducerRecreations, cause.message());
    }
  }
  acks_at_recreation_ = core_.acks();
  DropSink();
  auto sink = MakeSink(config_, &core_, system_.system_id);
  if (!sink.ok()) return sink.status();
  sink_ = std::move(*sink);
  core_.Attach(sink_.get(), store_.get());
  AttachSink(store_.get(), sink_.get());
  return absl::OkStatus();
}

absl::Status Relay::Run() {
  if (const int removed = core_.streams().stale_files_removed(); removed > 0) {
    Log()->info("removed {} spill files of relays that are gone from {}", removed, core_.streams().spill_dir());
  }
  if (absl::Status st = EnsureSink(); !st.ok()) return st;
  metrics_->loop_running = true;
  auto backoff = kInitialBackoff;
  while (!stopping()) {
    const auto started = Clock::now();
    absl::Status st = Session();
    metrics_->streaming = false;
    if (core_.halt()) return *core_.halt();
    if (st.ok()) break;  // stopped
    if (absl::IsCancelled(st) && stopping()) break;  // SIGTERM while waiting for the server
    if (st.code() != absl::StatusCode::kUnavailable) {
      metrics_->loop_running = false;
      return st;
    }
    // A spill directory that keeps failing (full, gone, read-only) is not cured by reconnecting.
    if (const int failures = core_.streams().consecutive_io_failures(); failures >= kMaxSpillFailures) {
      metrics_->loop_running = false;
      return absl::FailedPreconditionError(
          Cat(st.message(), " (", failures, " times in a row; check source.spill_dir)"));
    }
    const bool standby = ReasonOf(st) == StatusReason::kStandby;
    const bool was_standby = metrics_->standby.exchange(standby ? 1 : 0) == 1;
    if (sink_) sink_->Poll(0);  // serves the client's error events: what it last said about the broker
    const std::string broker = sink_ ? sink_->unreachable_reason() : std::string();
    metrics_->SetNotReadyReason(standby   ? Cat("standby: ", st.message())
                                : broker.empty() ? std::string(st.message())
                                                 : Cat(st.message(), " (the broker: ", broker, ")"));
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
    // After a broker outage, hold the slot released until the broker answers again. What the broker last answered
    // is /readyz's reason and a log line every 10 s, so that a relay waiting here says why.
    if (broker_down_ && sink_) {
      auto next_line = Clock::now() + std::chrono::seconds(10);
      while (!stopping()) {
        const absl::Status reachable = sink_->CheckReachable(1000);
        if (reachable.ok()) break;
        metrics_->SetNotReadyReason(Cat("the slot is released until the broker answers: ", reachable.message()));
        if (Clock::now() >= next_line) {
          Log()->warn("the slot stays released: the broker does not answer yet ({})", reachable.message());
          next_line = Clock::now() + std::chrono::seconds(10);
        }
        // A sink that fails fast (refused connection) must not make this spin.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
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
  // Every wait on the server is bounded by source.receive_timeout_ms (connecting: connect_timeout) and ends at
  // SIGTERM: a silent connection must not hold the relay, or its shutdown, until TCP gives up.
  const pg::WaitLimits limits{.answer = std::chrono::milliseconds(config_.source.receive_timeout_ms), .stop = stop_};
  auto conn = pg::ReplicationConnection::Connect(
      config_.source.conninfo, config_.pipeline.empty() ? "outbox-relay" : Cat("outbox-relay.", config_.pipeline),
      limits);
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
  core_.SetSystem(*system);
  if (exactly_once() && sink_fenced_) {
    // init_transactions runs once per producer: every takeover gets a fresh one, so that it fences whatever relay
    // held the slot since this one's last session (and aborts its open transaction).
    DropSink();
    sink_fenced_ = false;
  }
  if (absl::Status st = EnsureSink(); !st.ok()) return st;
  if (config_.source.failover) {
    if (absl::Status st = pg::CheckFailoverSupported((*conn)->server_version()); !st.ok()) return st;
  }
  auto decision = PrepareSlot(**conn, *system);
  if (!decision.ok()) return decision.status();

  pg::StartOptions start;
  start.slot = config_.source.slot;
  start.publication = config_.source.publication;
  start.proto_version = config_.source.streaming ? 2 : 1;
  start.streaming = config_.source.streaming;
  start.messages = config_.source.messages;
  const bool skipping = options_.start_lsn.has_value();
  start.start_lsn = skipping ? *options_.start_lsn : Lsn(0);
  if (config_.source.receive_buffer_bytes > 0) {
    // Set before streaming starts; the window scale agreed at connect time (net.ipv4.tcp_rmem's maximum) allows it.
    auto granted = (*conn)->SetReceiveBuffer(static_cast<int>(config_.source.receive_buffer_bytes));
    if (!granted.ok()) {
      if (absl::IsUnavailable(granted.status())) return granted.status();
      return absl::FailedPreconditionError(Cat("source.receive_buffer_bytes: ", granted.status().message()));
    }
    if (receive_buffer_logged_ != *granted) {  // once, and again only if it changes: not at every reconnect
      if (*granted < 2 * config_.source.receive_buffer_bytes) {
        Log()->warn("source.receive_buffer_bytes: asked for {} bytes, but the replication socket's receive buffer is "
                    "{} bytes (the kernel doubles what it grants, within net.core.rmem_max)",
                    config_.source.receive_buffer_bytes, *granted);
      } else {
        Log()->info("source.receive_buffer_bytes: the replication socket's receive buffer is {} bytes (the kernel "
                    "doubles the {} asked for)", *granted, config_.source.receive_buffer_bytes);
      }
      receive_buffer_logged_ = *granted;
    }
  }
  if (absl::Status st = (*conn)->StartReplication(start); !st.ok()) return st;
  own_walsender_pid_ = (*conn)->backend_pid();
  std::optional<Lsn> checkpointed = decision->checkpointed;
  if (exactly_once()) {
    // What is committed comes from the read after fencing alone: the read before it may hold the checkpoint of an
    // open or aborted transaction.
    auto committed = TakeOverTransactions();
    if (!committed.ok()) return committed.status();
    checkpointed = *committed;
  }
  core_.StartSession(*system, start.proto_version, decision->confirmed, checkpointed);
  metrics_->standby = 0;
  metrics_->streaming = true;
  Log()->info("streaming slot {} from {} (server {}, timeline {})", config_.source.slot, core_.confirmed().ToString(),
              system->xlogpos.ToString(), system->timeline);
  pg::ReplicationStream stream(conn->get());
  if (skipping) {
    // Confirm the skip at once, so the skipped transactions are gone for good (SPEC.md §2 --start-lsn).
    if (absl::Status st = SendStatus(stream, false); !st.ok()) return st;
    options_.start_lsn.reset();
  }
  return Stream(stream);
}

absl::StatusOr<pg::SlotDecision> Relay::PrepareSlot(pg::ReplicationConnection& conn, const pg::SystemInfo& system) {
  const std::string& slot_name = config_.source.slot;
  auto slot = conn.ReadSlot(slot_name);
  if (!slot.ok()) return slot.status();
  if (*slot && (*slot)->active && own_walsender_pid_ && (*slot)->active_pid == *own_walsender_pid_ &&
      EndOwnOldWalsender(*own_walsender_pid_)) {
    slot = conn.ReadSlot(slot_name);
    if (!slot.ok()) return slot.status();
  }
  // Another relay streams the slot: wait as a standby without reading the checkpoint on every retry.
  if (absl::Status st = pg::CheckSlotFree(slot_name, *slot); !st.ok()) return st;
  // Read the slot first, then the checkpoint (a live relay writes its checkpoint before it confirms).
  pg::SlotCheckInput in;
  in.slot_name = slot_name;
  in.slot = *slot;
  in.store_enabled = store_->enabled();
  in.store = store_->Describe();
  if (in.store_enabled) {
    if (absl::Status st = store_->Prepare(); !st.ok()) return st;
    auto checkpoints = store_->Read(system.system_id, slot_name);
    if (!checkpoints.ok()) return checkpoints.status();
    in.checkpoints = *std::move(checkpoints);
  }
  in.system = system;
  in.create_slot = config_.source.create_slot;
  in.first_start = !slot_checked_;
  in.accept_gap = options_.accept_gap;
  in.start_lsn = options_.start_lsn;
  in.failover = config_.source.failover;
  auto decision = pg::CheckSlot(in);
  if (decision.ok() && decision->create_slot) {
    auto consistent = conn.CreateSlot(slot_name, config_.source.failover);
    if (absl::IsCancelled(consistent.status())) {
      // SIGTERM while the server waits for the transactions running when creation began: its walsender would make
      // the slot once they end, with no first checkpoint. Ending it drops the half-made slot.
      Log()->info("stopping while the server creates slot {} (it waits for running transactions to end)", slot_name);
      EndOwnOldWalsender(conn.backend_pid());
    }
    if (!consistent.ok()) return consistent.status();
    Log()->info("created {}replication slot {} at {}", config_.source.failover ? "failover " : "", slot_name,
                consistent->ToString());
    if (absl::Status st = WriteCheckpointNow(*consistent, kCheckpointTimeoutMs); !st.ok()) return st;
    auto created = conn.ReadSlot(slot_name);
    if (!created.ok()) return created.status();
    if (!created->has_value()) return absl::InternalError("the slot just created is missing");
    in.slot = *created;
    in.checkpoints.own = Checkpoint{system.system_id, system.timeline, slot_name, config_.source.instance, *consistent};
    decision = pg::CheckSlot(in);
  }
  if (!decision.ok()) return decision.status();
  for (const std::string& w : decision->warnings) Log()->warn("{}", w);
  if (decision->make_failover) {
    if (absl::Status st = conn.SetSlotFailover(slot_name); !st.ok()) return st;
    Log()->info("replication slot {} is now a failover slot (source.failover)", slot_name);
  }
  if (decision->write_checkpoint) {
    if (absl::Status st = WriteCheckpointNow(*decision->write_checkpoint, kCheckpointTimeoutMs); !st.ok()) return st;
  }
  slot_checked_ = true;
  check_input_ = in;
  // --accept-gap is about the gap found at this start: a later gap (on a reconnect, or a standby's retry) stops the
  // relay again.
  options_.accept_gap = false;
  const pg::SlotInfo& s = *in.slot;  // the slot as read, or as just created
  Log()->info("slot {}: confirmed_flush_lsn {}, restart_lsn {}, wal_status {}{}", slot_name,
              decision->slot_confirmed.ToString(), s.restart_lsn ? s.restart_lsn->ToString() : "NULL", s.wal_status,
              s.failover ? Cat(", failover ", *s.failover, ", synced ", s.synced.value_or(false)) : "");
  return decision;
}

absl::StatusOr<std::optional<Lsn>> Relay::TakeOverTransactions() {
  sink_fenced_ = true;  // this producer's init_transactions is spent, whatever it answers
  if (absl::Status st = store_->TakeOver(kCheckpointTimeoutMs); !st.ok()) return st;
  auto checkpoints = store_->Read(system_.system_id, config_.source.slot);
  if (!checkpoints.ok()) return checkpoints.status();
  // The gap check again, on what is committed now (the start's own checkpoint writes, an accepted gap or
  // --start-lsn, are in it).
  pg::SlotCheckInput in = check_input_;
  in.checkpoints = *checkpoints;
  in.accept_gap = false;
  in.start_lsn.reset();
  in.first_start = false;
  in.create_slot = false;
  auto decision = pg::CheckSlot(in);
  if (!decision.ok()) return decision.status();
  if (checkpoints->own) core_.SkipCommitted(*checkpoints->own);
  Log()->info("exactly_once: took the transactional id over; the last committed checkpoint is {}",
              checkpoints->own ? EncodeCheckpoint(*checkpoints->own) : std::string("none"));
  return decision->checkpointed;
}

std::optional<absl::Status> Relay::Interruption(pg::ReplicationStream& stream) {
  if (core_.fatal()) return *core_.fatal();
  if (core_.halt()) {
    if (absl::Status st = Shutdown(&stream); !st.ok()) Log()->warn("while halting: {}", st.message());
    return absl::OkStatus();  // Run returns the halt
  }
  if (core_.rewind_reason()) return absl::UnavailableError(*core_.rewind_reason());
  return std::nullopt;
}

absl::Status Relay::Stream(pg::ReplicationStream& stream) {
  while (true) {
    if (stopping()) return Shutdown(&stream);
    if (std::optional<absl::Status> end = Interruption(stream)) return *end;
    if (absl::Status st = Round(stream); !st.ok()) return st;
  }
}

absl::Status Relay::Round(pg::ReplicationStream& stream) {
  if (core_.catalog_due()) {
    if (absl::Status st = ReadCatalog(); !st.ok()) return st;
  }
  // Held records first (the producer's queue was full), then what libpq has buffered, unless records are still
  // held or the delivery bounds are reached.
  if (absl::Status st = core_.ProduceHeld(); !st.ok()) return st;
  if (core_.interrupted()) return absl::OkStatus();
  core_.NoteBounds();
  const bool paused = core_.paused();
  bool busy = false;
  bool read = false;  // Receive ran: the stream's frame counts are this round's
  if (core_.replaying()) {
    if (absl::Status st = core_.ReplayStep(); !st.ok()) return st;
    busy = core_.replaying() && !paused;
  } else if (!paused) {
    auto more = stream.Receive(core_, kFramesPerRound);
    if (!more.ok()) return more.status();
    busy = *more;
    read = true;
  }
  // While the stream is sparse, someone may be waiting for each change: what lingers in the sink goes out as soon as
  // the stream is read dry. While it is dense (a drain, a backlog), librdkafka's linger batches it, and after a round
  // that read the stream dry the next read waits source.read_batch_us, so that it takes more than one of the
  // server's writes. Dense: many frames in a short spell, or transactions sent long after they committed (a backlog
  // the walsender, short of CPU, sends slowly: read dry at every round, it would otherwise go out a few events per
  // request, and the broker's work per request would take the CPU the walsender lacks).
  const int frames = read ? stream.frames_received() : 0;
  // Only while changes come: the lag is the last transaction's, and a lone transaction sent late must not hold what
  // lingers once the stream is read dry. Keepalives are no changes: the walsender sends one whenever it waits for
  // WAL while the relay's flush is behind what it sent, so while other writes go on they come in every round.
  const bool backlog = read && stream.changes_received() > 0 && core_.SourceLagUs() > kBacklogLagUs;
  const bool dense = NoteFrames(frames) || backlog;
  if (!busy && !dense) sink_->SendHeld();
  core_.OpenReportBurst();
  sink_->Poll(0);
  core_.CloseReportBurst();
  test_hooks::Apply(*sink_);
  if (absl::Status st = core_.ProduceHeld(); !st.ok()) return st;
  // A rewind, halt or fatal error raised in this round is acted on before anything is confirmed.
  if (core_.interrupted()) return absl::OkStatus();
  if (core_.ReleaseDue()) {
    broker_down_ = true;
    return absl::UnavailableError(Cat("no acknowledgement from the broker for ", config_.delivery.release_slot_after_ms,
                                      " ms: releasing the slot until the broker answers"));
  }
  if (core_.ReceiveTimedOut()) {
    return absl::UnavailableError(Cat("nothing from the server for ", config_.source.receive_timeout_ms,
                                      " ms, not even a keepalive: the connection is dead (source.receive_timeout_ms)"));
  }
  core_.UpdateGauges();
  core_.LogProgress();
  if (absl::Status st = CheckPublication(false); !st.ok()) return st;
  if (std::optional<bool> ping = core_.StatusDue()) {
    if (absl::Status st = SendStatus(stream, *ping); !st.ok()) return st;
  }
  // The server writes each change as soon as the socket has room: a loop that keeps up with a burst would wake for
  // every one.
  if (!busy && dense && frames > 0 && read_batch_.count() > 0 && !core_.paused()) {
    std::this_thread::sleep_for(backlog && frames < kTrickleFrames ? std::max(read_batch_, kBacklogReadBatch)
                                                                   : read_batch_);
  }
  auto woke = stream.Wait(busy ? 0 : core_.SleepMs(), !core_.paused(), sink_->wakeup_fd());
  if (!woke.ok()) return woke.status();
  if (*woke) sink_->DrainWakeup();
  return absl::OkStatus();
}

bool Relay::NoteFrames(int frames) {
  frames_in_spell_ += frames;
  const auto now = Clock::now();
  if (now - spell_start_ >= kSpell) {
    dense_ = frames_in_spell_ >= kDenseSpellFrames;
    frames_in_spell_ = 0;
    spell_start_ = now;
  } else if (frames_in_spell_ >= kDenseSpellFrames) {
    dense_ = true;
  }
  return dense_;
}

absl::Status Relay::SendStatus(pg::ReplicationStream& stream, bool reply_requested) {
  auto status = core_.PrepareStatus(reply_requested);
  if (!status.ok()) return status.status();
  if (absl::Status st = stream.SendFeedback(*status); !st.ok()) return st;
  core_.StatusSent(*status);
  return absl::OkStatus();
}

absl::Status Relay::CheckPublication(bool now) {
  // exactly_once: while the watch holds back what the commits made durable, every transaction interval; in either
  // mode, once a burst has ended and only the watch holds its end back, within kQuietWatchGapMs. Otherwise a
  // drain's end would wait up to a status interval to be confirmed.
  int64_t every = config_.source.status_interval_ms;
  if (exactly_once() && core_.WatchHoldsBack()) {
    every = std::min(config_.delivery.transaction_interval_ms, every);
  } else if (core_.QuietButWatchHoldsBack()) {
    every = std::min(kQuietWatchGapMs, every);
  }
  if (!now && Clock::now() - watched_at_ < std::chrono::milliseconds(every)) return absl::OkStatus();
  watched_at_ = Clock::now();
  const Lsn through = core_.received_through();  // what was received before the check starts
  const auto [schema, table] = config::SplitTableName(config_.outbox.table);
  auto rows = QueryPlain(pg::PublicationCoverageSql(config_.source.publication, schema, table),
                         "the publication watch's connection", /*attempts=*/1);
  if (!rows.ok()) return rows.status();
  if (absl::Status st = pg::PublicationCoverage(*rows, config_.source.publication, Cat(schema, ".", table), true);
      !st.ok()) {
    return st;
  }
  core_.PublicationVerified(through);
  CheckSlotHealth();
  return absl::OkStatus();
}

// Debezium reads whether a column is nullable, and its default, from the catalog at each Relation message of the
// outbox, on its JDBC connection; so does the relay (DeliveryCore::catalog_due), on its plain connection. Never on the
// replication connection: SQL there leaves relcache entries built from the current catalog (pg_get_expr opens the
// table), which the walsender, unlike SQL-level decoding, does not invalidate before decoding, so rows written
// before an ALTER TABLE were decoded with the new layout.
absl::Status Relay::ReadCatalog() {
  const auto [schema, table] = config::SplitTableName(config_.outbox.table);
  // The plain connection outlives sessions: after an outage it is likely dead, so one that fails is made again
  // once before the session gives up.
  auto rows = QueryPlain(pg::ColumnCatalogSql(schema, table), "reading the outbox table's columns", /*attempts=*/2);
  if (!rows.ok()) return rows.status();
  core_.SetCatalog(pg::ParseColumnCatalog(*rows));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<pg::Row>> Relay::QueryPlain(const std::string& sql, std::string_view what, int attempts) {
  absl::StatusOr<std::vector<pg::Row>> rows = absl::UnavailableError("not run");
  for (int attempt = 0; attempt < attempts && absl::IsUnavailable(rows.status()); ++attempt) {
    if (!watch_) {
      auto conn = pg::SqlConnection::Connect(config_.source.conninfo, config_.pipeline.empty()
                                                                          ? "outbox-relay watch"
                                                                          : Cat("outbox-relay.", config_.pipeline, " watch"));
      if (!conn.ok()) return conn.status();
      watch_ = std::move(*conn);
    }
    rows = watch_->Exec(sql, WatchTimeoutMs());
    if (!rows.ok()) watch_.reset();
  }
  if (!rows.ok()) return absl::Status(rows.status().code(), Cat(what, ": ", rows.status().message()));
  return rows;
}

// The plain connection's queries run on the loop thread: a silent connection must not hold the loop longer than
// half the receive timeout (the replication stream's own silence bound), and never more than kWatchTimeoutMs.
int Relay::WatchTimeoutMs() const {
  return static_cast<int>(std::clamp<int64_t>(config_.source.receive_timeout_ms / 2, 1000, kWatchTimeoutMs));
}

bool Relay::EndOwnOldWalsender(int64_t pid) {
  auto conn = pg::SqlConnection::Connect(config_.source.conninfo, config_.pipeline.empty()
                                                                      ? "outbox-relay takeover"
                                                                      : Cat("outbox-relay.", config_.pipeline, " takeover"));
  if (!conn.ok()) {
    Log()->warn("could not end this relay's previous walsender (PID {}): {}", pid, conn.status().message());
    return false;
  }
  auto ended = (*conn)->Exec(pg::TerminateOwnWalsenderSql(config_.source.slot, pid), WatchTimeoutMs());
  if (!ended.ok() || ended->empty()) {
    if (!ended.ok()) Log()->warn("could not end this relay's previous walsender (PID {}): {}", pid, ended.status().message());
    return false;
  }
  Log()->info("ended this relay's previous walsender (PID {}), which still held slot {} after its connection was lost",
              pid, config_.source.slot);
  own_walsender_pid_.reset();
  // The backend exits asynchronously: wait (bounded) until the slot is released.
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!stopping() && Clock::now() < until) {
    auto rows = (*conn)->Exec(pg::SlotHealthSql(config_.source.slot), WatchTimeoutMs());
    if (!rows.ok()) break;
    const std::optional<pg::SlotHealth> health = pg::ParseSlotHealth(*rows);
    if (!health || !health->active) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void Relay::CheckSlotHealth() {
  if (!watch_ || Clock::now() - slot_checked_at_ < std::chrono::milliseconds(config_.source.slot_check_ms)) return;
  slot_checked_at_ = Clock::now();
  auto rows = watch_->Exec(pg::SlotHealthSql(config_.source.slot), WatchTimeoutMs());
  if (!rows.ok()) {
    Log()->warn("reading the slot's health: {}", rows.status().message());
    watch_.reset();
    return;
  }
  const std::optional<pg::SlotHealth> health = pg::ParseSlotHealth(*rows);
  if (!health) return;
  metrics_->slot_wal_status = ops::SlotWalStatusIndex(health->wal_status);
  metrics_->slot_retained_wal_bytes = health->retained_wal.value_or(-1);
  metrics_->slot_safe_wal_size_bytes = health->safe_wal_size.value_or(-1);
  metrics_->slot_active = health->active ? 1 : 0;
  if (health->wal_status == "unreserved") {
    Log()->warn("slot {} is past max_slot_wal_keep_size (wal_status unreserved): it is invalidated at the next "
                "checkpoint unless the relay catches up", config_.source.slot);
  }
}

absl::Status Relay::WriteCheckpointNow(Lsn lsn, int timeout_ms) {
  if (!store_->enabled()) return absl::OkStatus();
  if (absl::Status st = core_.RequestCheckpoint(lsn); !st.ok()) return st;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  // exactly_once: the commit is what acknowledges the records (nothing else does).
  while (core_.checkpointed() < lsn || (exactly_once() && core_.pending_records() > 0)) {
    if (Clock::now() > deadline) {
      return absl::UnavailableError(Cat("the checkpoint ", lsn.ToString(), " was not acknowledged in time"));
    }
    if (core_.rewind_reason()) return absl::UnavailableError(*core_.rewind_reason());
    if (!core_.checkpoint_in_flight()) {
      if (absl::Status st = core_.RequestCheckpoint(lsn); !st.ok()) return st;
    }
    sink_->SendHeld();  // nothing else is coming: the checkpoint need not wait out the linger
    sink_->Poll(50);
  }
  return absl::OkStatus();
}

absl::Status Relay::Shutdown(pg::ReplicationStream* stream) {
  metrics_->streaming = false;
  const auto deadline = Clock::now() + std::chrono::milliseconds(config_.delivery.shutdown_timeout_ms);
  if (core_.pending_records() > 0) {
    Log()->info("stopping: waiting up to {} ms for {} in-flight records", config_.delivery.shutdown_timeout_ms,
                core_.pending_records());
  }
  const auto interval = std::chrono::milliseconds(config_.source.status_interval_ms);
  // Under a halt nothing more is produced: only what the producer still holds is waited for (held records and the
  // placeholders of unwritten dead letters never will be).
  const bool halting = core_.halt().has_value();
  if (halting) core_.DropHeld();
  // exactly_once: nothing is acknowledged before the commit below (and under a halt nothing is committed: the open
  // Kafka transaction holds the halted transaction's records and is aborted).
  const auto waiting = [&] {
    if (exactly_once()) return !halting && core_.has_held();
    return halting ? sink_->Outstanding() > 0 : core_.pending_records() > 0 || core_.has_held();
  };
  while (waiting() && Clock::now() < deadline && !core_.rewind_reason()) {
    if (absl::Status st = core_.ProduceHeld(); !st.ok()) {
      Log()->warn("while stopping: {}", st.message());
      break;
    }
    sink_->SendHeld();  // stopping: what lingers goes out now
    sink_->Poll(50);
    if (stream && Clock::now() - core_.last_status() >= interval) {
      if (absl::Status st = SendStatus(*stream, false); !st.ok()) return st;
    }
  }
  // What was received is confirmed only once the publication is known to have covered it.
  if (absl::Status st = CheckPublication(/*now=*/true); !st.ok()) Log()->warn("while stopping: {}", st.message());
  // exactly_once: stopping inside a PostgreSQL transaction commits it in part (the checkpoint says how much).
  if (exactly_once()) core_.AllowSplit();
  const Lsn candidate = core_.ConfirmCandidate();
  const bool commit = exactly_once() ? !halting && core_.pending_records() > 0 : false;
  if ((candidate > core_.checkpointed() || commit) && !core_.rewind_reason() && !(exactly_once() && halting)) {
    const int left = static_cast<int>(std::max<int64_t>(
        1000, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    if (absl::Status st = WriteCheckpointNow(candidate, left); !st.ok()) {
      Log()->warn("could not write the final checkpoint: {}", st.message());
    }
  }
  if (stream) {
    if (absl::Status st = SendStatus(*stream, false); !st.ok()) return st;
    if (absl::Status st = stream->End(5000); !st.ok()) Log()->warn("ending the stream: {}", st.message());
  }
  Log()->info("stopped at {} ({} records unacknowledged)", core_.confirmed().ToString(), core_.pending_records());
  return absl::OkStatus();
}

void Relay::Rewind(std::string_view why) {
  core_.Rewind(why);  // a new generation first: the purged records' reports are then ignored (exactly_once: the
                      // open Kafka transaction is aborted)
  if (!sink_) return;
  sink_->Purge();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (sink_->Outstanding() > 0 && Clock::now() < deadline) sink_->Poll(50);
}

}  // namespace outbox::app
