// DeliveryCore: every rule of SPEC.md §5 about what may be confirmed, order, rewinds, bounds and dead letters, with
// a fake sink, a fake checkpoint store and a clock moved by hand (no server, no broker). Frames are built with the
// pgoutput encoder and go through the core's decoder as the server's would.
#include "delivery/core.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fakes.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "pg/pgoutput.h"
#include "pg/type_oids.h"

namespace outbox::delivery {
namespace {

using sinks::Outcome;
using sinks::ProduceResult;
using testing::FakeCheckpointStore;
using testing::FakeClock;
using testing::FakeSink;
using testing::FakeTransactionalSink;
using namespace std::chrono_literals;

constexpr uint32_t kOutboxOid = 16400;
constexpr uint32_t kOtherOid = 16500;
const Lsn kStart(0x1000);
constexpr int64_t kPgTime = 800'000'000'000'000;  // PostgreSQL epoch microseconds (2025)
constexpr const char* kTopic = "outbox.event.OrderCreated";

pg::Relation Outbox() {
  pg::Relation r;
  r.oid = kOutboxOid;
  r.nspname = "public";
  r.relname = "outbox";
  r.columns = {{1, "id", pg::oid::kUuid, -1},       {0, "aggregatetype", pg::oid::kText, -1},
               {0, "aggregateid", pg::oid::kText, -1}, {0, "type", pg::oid::kText, -1},
               {0, "payload", pg::oid::kJsonb, -1}};
  return r;
}

class CoreTest : public ::testing::Test {
 protected:
  CoreTest() : sink_(), store_(&sink_) {
    config_.source.status_interval_ms = 1000;
    config_.delivery.release_slot_after_ms = 10000;
    config_.delivery.dead_letter_topic = "dead";
    store_.durable = true;
  }

  // A session on `sink` and `store` (the fake sink and a durable store unless a test says otherwise).
  void Start(FakeSink* sink = nullptr, sinks::CheckpointStore* store = nullptr, int proto = 1) {
    sink_in_use_ = sink ? sink : &sink_;
    core_ = std::make_unique<DeliveryCore>(config_, &clock_, &metrics_);
    sink_in_use_->handler = core_.get();
    core_->Attach(sink_in_use_, store ? store : &store_);
    pg::SystemInfo system{"7300000000000000001", 1, Lsn(0x10000000), "db"};
    core_->StartSession(system, proto, kStart, kStart);
    enc_.proto_version = proto;
    relation_sent_ = false;
  }

  // The next session of the same core, after a rewind.
  void Restart() {
    core_->StartSession(pg::SystemInfo{"7300000000000000001", 1, Lsn(0x10000000), "db"}, enc_.proto_version, kStart,
                        kStart);
    enc_.in_stream_block = false;
    relation_sent_ = false;
  }

  // A frame as the server sends it.
  absl::Status Send(const pg::Message& m) {
    const std::string bytes = pg::Encode(m, enc_);
    if (std::holds_alternative<pg::StreamStart>(m)) enc_.in_stream_block = true;
    if (std::holds_alternative<pg::StreamStop>(m)) enc_.in_stream_block = false;
    return core_->OnFrame(pg::XLogData{Lsn(0xFFFFFFFF), Lsn(0xFFFFFFFF), 0, bytes});
  }
  void Keepalive(uint64_t wal_end, bool reply = false) {
    ASSERT_TRUE(core_->OnFrame(pg::Keepalive{Lsn(wal_end), 0, reply}).ok());
  }
  // An outbox INSERT with event `id` and `key` (a null id when `id` is empty).
  pg::Insert Row(const std::string& id, const std::string& key, std::optional<uint32_t> xid = std::nullopt) {
    rows_.push_back({id, "Order", key, "OrderCreated", "{}"});
    pg::Insert insert;
    insert.xid = xid;
    insert.relation_oid = kOutboxOid;
    for (const std::string& v : rows_.back()) {
      pg::ColumnValue c;
      if (!(v.empty() && &v == &rows_.back()[0])) {
        c.kind = pg::ColumnValue::Kind::kText;
        c.data = v;
      }
      insert.new_tuple.columns.push_back(c);
    }
    return insert;
  }
  static std::string Id(int n) { return "00000000-0000-0000-0000-" + std::string(12 - std::to_string(n).size(), '0') + std::to_string(n); }

  void Begin(uint64_t commit) {
    ASSERT_TRUE(Send(pg::Begin{Lsn(commit), kPgTime, xid_++}).ok());
    if (!relation_sent_) {
      ASSERT_TRUE(Send(Outbox()).ok());
      relation_sent_ = true;
    }
  }
  Lsn Commit(uint64_t commit) {
    EXPECT_TRUE(Send(pg::Commit{0, Lsn(commit), Lsn(commit + 0x10), kPgTime}).ok());
    return Lsn(commit + 0x10);
  }
  // A transaction committing at `commit` with one event per key (ids numbered on); returns its end LSN.
  Lsn Tx(uint64_t commit, const std::vector<std::string>& keys) {
    Begin(commit);
    for (const std::string& key : keys) EXPECT_TRUE(Send(Row(Id(++next_id_), key)).ok());
    return Commit(commit);
  }

  // A status update as the loop sends one: returns the flush position it reports.
  Lsn Confirm() {
    auto status = core_->PrepareStatus(false);
    EXPECT_TRUE(status.ok()) << status.status();
    if (!status.ok()) return Lsn(0);
    core_->StatusSent(*status);
    return status->flush;
  }
  void Poll() { sink_in_use_->Poll(0); }

  config::PipelineConfig config_;
  FakeClock clock_;
  ops::Metrics metrics_;
  FakeSink sink_;
  FakeCheckpointStore store_;
  FakeSink* sink_in_use_ = nullptr;
  std::unique_ptr<DeliveryCore> core_;
  pg::DecoderState enc_;
  bool relation_sent_ = false;
  uint32_t xid_ = 700;
  int next_id_ = 0;
  std::deque<std::vector<std::string>> rows_;  // the rows' strings (frames view them until encoded)
};

// ---- What may be confirmed ----

TEST_F(CoreTest, NothingIsConfirmedUntilEveryRecordOfTheTransactionIsAcknowledged) {
  Start();
  const Lsn end = Tx(0x2000, {"a", "b"});
  ASSERT_EQ(sink_.produced.size(), 2u);
  sink_.Ack(0);
  Poll();
  EXPECT_EQ(Confirm(), kStart);
  sink_.Ack(1);
  Poll();
  EXPECT_EQ(Confirm(), end);
}

TEST_F(CoreTest, AnAckOfALaterTransactionNeverConfirmsPastAnEarlierUnackedOne) {
  Start();
  const Lsn first = Tx(0x2000, {"a"});
  const Lsn second = Tx(0x3000, {"b"});
  sink_.Ack(1);
  Poll();
  EXPECT_EQ(Confirm(), kStart);
  sink_.Ack(0);
  Poll();
  EXPECT_EQ(Confirm(), second);
  EXPECT_GT(second, first);
}

TEST_F(CoreTest, TransactionsWithoutOutboxRowsAreConfirmedInOrder) {
  Start();
  Tx(0x2000, {"a"});
  const Lsn empty_end = Tx(0x3000, {});
  EXPECT_EQ(Confirm(), kStart);  // behind the unacknowledged first one
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), empty_end);
}

TEST_F(CoreTest, TheConfirmationWaitsForTheCheckpointToBeDurable) {
  store_.durable = false;  // written through the sink, as the Kafka topic store does
  Start();
  const Lsn end = Tx(0x2000, {"a"});
  sink_.Ack(0);
  Poll();
  EXPECT_EQ(Confirm(), kStart);  // the checkpoint of `end` was only started
  ASSERT_EQ(store_.written.size(), 1u);
  EXPECT_EQ(store_.written[0].lsn, end);
  EXPECT_TRUE(core_->AwaitingBroker());
  sink_.AckAll();  // the checkpoint record's report
  Poll();
  EXPECT_EQ(core_->checkpointed(), end);
  EXPECT_EQ(Confirm(), end);
}

TEST_F(CoreTest, AFailedCheckpointWriteRewindsAndConfirmsNothing) {
  store_.durable = false;
  Start();
  Tx(0x2000, {"a"});
  sink_.Ack(0);
  Poll();
  EXPECT_EQ(Confirm(), kStart);
  sink_.Report(1, Outcome::kRetriable);  // the checkpoint record
  Poll();
  EXPECT_TRUE(core_->rewind_reason().has_value());
  EXPECT_EQ(core_->checkpointed(), kStart);
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, IdleTheConfirmationFollowsTheKeepalivesWalEnd) {
  Start();
  Keepalive(0x9000);
  EXPECT_EQ(Confirm(), Lsn(0x9000));
  Tx(0xA000, {});  // another table's transactions: empty ones
  Keepalive(0xB000);
  EXPECT_EQ(Confirm(), Lsn(0xB000));
}

TEST_F(CoreTest, NoIdleAdvanceWhileARecordWaitsForTheBroker) {
  Start();
  const Lsn end = Tx(0x2000, {"a"});
  for (uint64_t wal = 0x3000; wal < 0x9000; wal += 0x1000) {
    Tx(wal, {});  // a busy other table
    Keepalive(wal + 0x800);
    clock_.Advance(1000ms);
    EXPECT_LT(Confirm(), end);
  }
}

TEST_F(CoreTest, AKeepaliveFromBeforeARewindNeverConfirms) {
  Start();
  Keepalive(0x9000);  // idle: remembered
  core_->Rewind("connection lost");
  Restart();
  Tx(0x2000, {"a"});  // resent, not yet acknowledged
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, TheXLogDataHeaderNeverConfirms) {
  Start();
  Tx(0x2000, {"a"});  // frames carry wal_end 0xFFFFFFFF
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, CheckpointsCarryTheIdentityOfTheServerTheyBelongTo) {
  Start();
  core_->SetSystem(pg::SystemInfo{"7300000000000000042", 3, Lsn(0x10000000), "db"});
  ASSERT_TRUE(core_->RequestCheckpoint(Lsn(0x5000)).ok());  // the slot check's, before the session streams
  ASSERT_EQ(store_.written.size(), 1u);
  EXPECT_EQ(store_.written[0].system_id, "7300000000000000042");
  EXPECT_EQ(store_.written[0].timeline, 3);
  EXPECT_EQ(core_->checkpointed(), Lsn(0x5000));
}

TEST_F(CoreTest, TheConfirmedPositionNeverMovesBack) {
  Start();
  Keepalive(0x9000);
  EXPECT_EQ(Confirm(), Lsn(0x9000));
  core_->Rewind("test");
  Restart();
  EXPECT_EQ(Confirm(), Lsn(0x9000));
}

TEST_F(CoreTest, WithThePublicationWatchNothingIsConfirmedBeyondTheLastCheckThatPassed) {
  Start();
  core_->WatchPublication();
  Keepalive(0x9000);
  EXPECT_EQ(Confirm(), kStart);  // received, but no check has vouched for it yet
  core_->PublicationVerified(core_->received_through());
  EXPECT_EQ(Confirm(), Lsn(0x9000));
  Keepalive(0xB000);  // the publication may have changed since the check
  EXPECT_EQ(Confirm(), Lsn(0x9000));
  const Lsn end = Tx(0xC000, {"a"});
  sink_.AckAll();
  Poll();
  EXPECT_EQ(core_->received_through(), end);
  core_->PublicationVerified(core_->received_through());
  EXPECT_EQ(Confirm(), end);
}

// A burst's end is confirmed as soon as a check vouches for it, not at the next status interval: once everything
// received is acknowledged and the watch alone holds the end back, the relay checks at once
// (Relay::CheckPublication asks QuietButWatchHoldsBack) and the check's result makes a status due.
TEST_F(CoreTest, ABurstsEndIsConfirmedAsSoonAsACheckVouchesForIt) {
  Start();
  core_->WatchPublication();
  const Lsn end = Tx(0x2000, {"a"});
  EXPECT_FALSE(core_->QuietButWatchHoldsBack());  // the event is in flight
  sink_.AckAll();
  Poll();
  EXPECT_TRUE(core_->QuietButWatchHoldsBack());  // acknowledged: only the watch holds its end back
  EXPECT_EQ(Confirm(), kStart);
  clock_.Advance(10ms);
  EXPECT_FALSE(core_->StatusDue().has_value());
  core_->PublicationVerified(end);
  ASSERT_TRUE(core_->StatusDue().has_value()) << "the verified end waited for the status interval";
  EXPECT_EQ(Confirm(), end);
  EXPECT_FALSE(core_->QuietButWatchHoldsBack());
}

// The 5,000,000-event backlog run: the first progress line said 199 MB/s where the relay read about 80, and an ETA
// of 12 s where 31 s were left. Its window opened in the loop's first round, before any frame, at 0/0. It opens at
// the first frame's position now.
TEST_F(CoreTest, TheFirstProgressLineMeasuresFromTheFirstFrameNotFromZero) {
  std::ostringstream out;
  spdlog::drop("relay");
  auto logger = std::make_shared<spdlog::logger>("relay", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%v");
  spdlog::register_logger(logger);
  Start();  // the server's WAL ends at 0x10000000 (256 MiB)
  core_->LogProgress();  // the loop's first round: nothing received yet
  Keepalive(0x01000000);
  core_->LogProgress();
  clock_.Advance(5s);
  Keepalive(0x02000000);  // 16 MiB in 5 s
  core_->LogProgress();
  spdlog::drop("relay");
  EXPECT_NE(out.str().find("catching up: 224.0 MB behind 0/10000000, 3.2 MB/s, ETA 70 s"), std::string::npos)
      << out.str();
}

TEST_F(CoreTest, BehindSourceIsTheAgeOfTheOldestUnacknowledgedTransactionAndZeroWhenCaughtUp) {
  Start();
  EXPECT_EQ(core_->BehindSourceSeconds(), 0.0);
  Tx(0x2000, {"a"});  // committed at kPgTime
  // A later transaction, committed 10 s after the first: the first one's age counts (the oldest unacknowledged).
  ASSERT_TRUE(Send(pg::Begin{Lsn(0x3000), kPgTime + 10'000'000, xid_++}).ok());
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  ASSERT_TRUE(Send(pg::Commit{0, Lsn(0x3000), Lsn(0x3010), kPgTime + 10'000'000}).ok());
  const double at_commit = (clock_.UnixMillis() - PgTimeToUnixMicros(kPgTime) / 1000) / 1000.0;
  EXPECT_NEAR(core_->BehindSourceSeconds(), at_commit, 0.01);
  clock_.Advance(5000ms);
  EXPECT_NEAR(core_->BehindSourceSeconds(), at_commit + 5, 0.01);
  sink_.AckAll();
  Poll();
  Keepalive(0x10000000);  // received up to the server's position: caught up
  EXPECT_EQ(core_->BehindSourceSeconds(), 0.0);
}

TEST_F(CoreTest, CommitToAckIsMeasuredFromTheServersCommitTimeToTheMicrosecond) {
  Start();
  // Committed 300 us before "now" on the wall clock: the observation lands in le=0.0005, where a commit time cut
  // to the millisecond would move it by up to a millisecond.
  const int64_t now_pg = UnixMicrosToPgTime(clock_.UnixMicros());
  ASSERT_TRUE(Send(pg::Begin{Lsn(0x2000), now_pg - 300, xid_++}).ok());
  ASSERT_TRUE(Send(Outbox()).ok());
  relation_sent_ = true;
  ASSERT_TRUE(Send(Row(Id(++next_id_), "a")).ok());
  ASSERT_TRUE(Send(pg::Commit{0, Lsn(0x2000), Lsn(0x2010), now_pg - 300}).ok());
  sink_.AckAll();
  Poll();
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_bucket{le=\"0.00025\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_bucket{le=\"0.0005\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_sum 0.000300\n"), std::string::npos) << text;
}

// A poll's reports share one reading of the clocks, taken when the burst opened (the loop opens one around each
// poll); a report outside a burst reads the clocks itself.
TEST_F(CoreTest, TheAcknowledgementsOfAReportBurstAreStampedWithTheTimeItOpened) {
  Start();
  const auto commit_now_minus_300us = [&](uint64_t lsn) {
    const int64_t now_pg = UnixMicrosToPgTime(clock_.UnixMicros());
    ASSERT_TRUE(Send(pg::Begin{Lsn(lsn), now_pg - 300, xid_++}).ok());
    if (!relation_sent_) {
      ASSERT_TRUE(Send(Outbox()).ok());
      relation_sent_ = true;
    }
    ASSERT_TRUE(Send(Row(Id(++next_id_), "a")).ok());
    ASSERT_TRUE(Send(pg::Commit{0, Lsn(lsn), Lsn(lsn + 0x10), now_pg - 300}).ok());
  };
  commit_now_minus_300us(0x2000);
  sink_.AckAll();
  core_->OpenReportBurst();
  clock_.Advance(10ms);  // the poll serves the burst's reports after it opened
  Poll();
  core_->CloseReportBurst();
  std::string text = metrics_.Render();
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_bucket{le=\"0.0005\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_sum 0.000300\n"), std::string::npos) << text;

  commit_now_minus_300us(0x3000);
  sink_.AckAll();
  clock_.Advance(10ms);  // no burst open: the report reads the clock when it comes
  Poll();
  text = metrics_.Render();
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_bucket{le=\"0.01\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_commit_to_ack_seconds_sum 0.010600\n"), std::string::npos) << text;
}

// The source lag compares two times of the server's clock: a Begin's commit time and its frame's send time.
TEST_F(CoreTest, TheSourceLagIsHowLongBeforeItsBeginWasSentATransactionCommitted) {
  Start();
  EXPECT_EQ(core_->SourceLagUs(), 0);
  const auto begin_sent_at = [&](uint64_t commit, int64_t committed, int64_t sent) {
    return core_->OnFrame(pg::XLogData{Lsn(commit), Lsn(commit), sent,
                                       pg::Encode(pg::Begin{Lsn(commit), committed, xid_++}, enc_)});
  };
  ASSERT_TRUE(begin_sent_at(0x2000, kPgTime, kPgTime + 2'500'000).ok());  // a backlog: sent 2.5 s after its commit
  EXPECT_EQ(core_->SourceLagUs(), 2'500'000);
  ASSERT_TRUE(Send(pg::Commit{0, Lsn(0x2000), Lsn(0x2010), kPgTime}).ok());
  ASSERT_TRUE(begin_sent_at(0x3000, kPgTime, kPgTime + 300).ok());  // live
  EXPECT_EQ(core_->SourceLagUs(), 300);
  ASSERT_TRUE(Send(pg::Commit{0, Lsn(0x3000), Lsn(0x3010), kPgTime}).ok());
  ASSERT_TRUE(begin_sent_at(0x4000, kPgTime, 0).ok());  // no send time: no lag known
  EXPECT_EQ(core_->SourceLagUs(), 0);
}

// ---- Silent connections ----

TEST_F(CoreTest, AStreamSilentForTheReceiveTimeoutIsDead) {
  config_.source.receive_timeout_ms = 10000;
  Start();
  clock_.Advance(9000ms);
  EXPECT_FALSE(core_->ReceiveTimedOut());
  Keepalive(0x2000);  // anything from the server keeps it alive
  EXPECT_FALSE(core_->ReceiveTimedOut());  // the round that received it
  clock_.Advance(9000ms);
  EXPECT_FALSE(core_->ReceiveTimedOut());
  clock_.Advance(2000ms);
  EXPECT_TRUE(core_->ReceiveTimedOut());
}

TEST_F(CoreTest, APausedStreamIsNotReadSoItIsNeverSilent) {
  config_.source.receive_timeout_ms = 10000;
  config_.delivery.max_inflight_events = 2;
  Start();
  Begin(0x2000);
  ASSERT_TRUE(Send(Row(Id(1), "a")).ok());
  ASSERT_TRUE(core_->paused());
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(5000ms);
    EXPECT_FALSE(core_->ReceiveTimedOut());
  }
}

TEST_F(CoreTest, ABusyStreamSilentForHalfTheReceiveTimeoutAsksForAReply) {
  config_.source.receive_timeout_ms = 10000;
  Start();
  Tx(0x2000, {"a"});  // in flight: not quiet, so the idle ping does not apply
  clock_.Advance(1000ms);
  std::optional<bool> due = core_->StatusDue();
  ASSERT_TRUE(due.has_value());
  EXPECT_FALSE(*due);
  Confirm();
  clock_.Advance(4500ms);
  due = core_->StatusDue();
  ASSERT_TRUE(due.has_value());
  EXPECT_TRUE(*due) << "no reply asked for after half the receive timeout";
}

// ---- Rewinds ----

TEST_F(CoreTest, ARetriableReportRewindsWithoutProducingTheRecordAgain) {
  Start();
  Tx(0x2000, {"a", "a"});
  sink_.Report(0, Outcome::kRetriable);
  Poll();
  EXPECT_TRUE(core_->rewind_reason().has_value());
  EXPECT_EQ(sink_.produced.size(), 2u);  // never re-produced alone: that would reorder its key
  EXPECT_TRUE(core_->interrupted());
}

TEST_F(CoreTest, AFatalReportRewinds) {
  Start();
  Tx(0x2000, {"a"});
  sink_.Report(0, Outcome::kFatal);
  Poll();
  EXPECT_TRUE(core_->rewind_reason().has_value());
}

TEST_F(CoreTest, AFailedSinkRewinds) {
  Start();
  sink_.answer = ProduceResult::Code::kFailed;
  Tx(0x2000, {"a"});
  EXPECT_TRUE(core_->rewind_reason().has_value());
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, ThePurgedRecordsReportsAfterARewindRaiseNoOtherRewind) {
  Start();
  Tx(0x2000, {"a", "b"});
  core_->Rewind("connection lost");
  sink_.Purge();  // every purged record reports a retriable error
  Poll();
  EXPECT_FALSE(core_->rewind_reason().has_value());
  EXPECT_EQ(metrics_.delivery_errors_transient.load(), 0u);
}

TEST_F(CoreTest, ReportsFromBeforeARewindAreIgnored) {
  Start();
  Tx(0x2000, {"a"});
  core_->Rewind("test");
  Restart();
  Tx(0x2000, {"a"});  // resent after the rewind
  sink_.Ack(0);       // the old generation's record
  Poll();
  EXPECT_EQ(Confirm(), kStart);
  sink_.Ack(1);
  Poll();
  EXPECT_EQ(Confirm(), Lsn(0x2010));
}

// ---- Order and bounds ----

TEST_F(CoreTest, RecordsTheSinkHasNoRoomForAreHeldAndProducedInStreamOrder) {
  Start();
  sink_.answer = ProduceResult::Code::kFull;
  Begin(0x2000);
  ASSERT_TRUE(Send(Row(Id(1), "k")).ok());
  EXPECT_TRUE(core_->paused());  // nothing more is read while a record is held
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStop);
  sink_.answer = ProduceResult::Code::kOk;
  ASSERT_TRUE(Send(Row(Id(2), "k")).ok());  // what was already buffered comes behind it
  ASSERT_TRUE(core_->ProduceHeld().ok());
  ASSERT_EQ(sink_.produced.size(), 2u);
  EXPECT_EQ(sink_.produced[0].record.event_id, Id(1));
  EXPECT_EQ(sink_.produced[1].record.event_id, Id(2));
  const Lsn end = Commit(0x2000);
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), end);
}

TEST_F(CoreTest, TheBoundsPauseTheStreamAndStatusUpdatesGoOn) {
  config_.delivery.max_inflight_events = 3;  // records plus one per open transaction
  Start();
  Begin(0x2000);
  ASSERT_TRUE(Send(Row(Id(1), "a")).ok());
  EXPECT_FALSE(core_->paused());
  ASSERT_TRUE(Send(Row(Id(2), "b")).ok());
  EXPECT_TRUE(core_->paused());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStop);
  clock_.Advance(1000ms);
  EXPECT_TRUE(core_->StatusDue().has_value());  // the server does not time a paused relay out
  sink_.Ack(0);
  Poll();
  EXPECT_FALSE(core_->paused());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kGoOn);
}

TEST_F(CoreTest, NothingAcknowledgedForReleaseSlotAfterMsReleasesTheSlot) {
  Start();
  Tx(0x2000, {"a"});
  clock_.Advance(9000ms);
  EXPECT_FALSE(core_->ReleaseDue());
  clock_.Advance(2000ms);
  EXPECT_TRUE(core_->ReleaseDue());
  sink_.Ack(0);
  Poll();
  EXPECT_FALSE(core_->ReleaseDue());
}

TEST_F(CoreTest, TheReleaseClockStartsWithTheFirstRecordAfterAQuietSpell) {
  Start();
  clock_.Advance(60000ms);  // quiet: nothing waits for the broker
  EXPECT_FALSE(core_->ReleaseDue());
  Tx(0x2000, {"a"});
  clock_.Advance(1000ms);
  EXPECT_FALSE(core_->ReleaseDue());
}

TEST_F(CoreTest, AQuietOutboxsCheckpointCountsTowardTheRelease) {
  store_.durable = false;
  Start();
  Keepalive(0x9000);
  Confirm();  // starts the checkpoint of 0/9000
  clock_.Advance(11000ms);
  EXPECT_TRUE(core_->ReleaseDue());
}

// ---- The catalog ----

// Debezium reads the outbox's catalog at each Relation message of it. With a mapper that reads the catalog, the
// core stops the read right after the outbox's Relation (kStopBusy, catalog_due) until the loop gives it the catalog;
// without one, or for another table's Relation, it reads on. Catches the flag never set (the rows after the Relation
// would be mapped with the catalog of before) and never cleared (the stream would stop at every frame).
TEST_F(CoreTest, TheOutboxsRelationAsksForTheCatalogBeforeTheRowsAfterIt) {
  config_.outbox.null_as_column_default = true;
  Start();
  ASSERT_TRUE(core_->NeedsCatalog());
  ASSERT_TRUE(Send(pg::Begin{Lsn(0x2000), kPgTime, xid_++}).ok());
  EXPECT_FALSE(core_->catalog_due());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kGoOn);
  pg::Relation other = Outbox();
  other.oid = kOtherOid;
  other.relname = "other";
  ASSERT_TRUE(Send(other).ok());
  EXPECT_FALSE(core_->catalog_due()) << "another table's Relation";
  ASSERT_TRUE(Send(Outbox()).ok());
  EXPECT_TRUE(core_->catalog_due());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStopBusy);
  core_->SetCatalog({{.name = "id", .not_null = true}});
  EXPECT_FALSE(core_->catalog_due());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kGoOn);
  relation_sent_ = true;
  ASSERT_TRUE(Send(Row(Id(1), "a")).ok());
  Commit(0x2000);
  ASSERT_EQ(sink_.produced.size(), 1u);
  // A mapper that does not read the catalog never asks for it.
  config_.outbox.null_as_column_default = false;
  Start();
  ASSERT_FALSE(core_->NeedsCatalog());
  ASSERT_TRUE(Send(pg::Begin{Lsn(0x3000), kPgTime, xid_++}).ok());
  ASSERT_TRUE(Send(Outbox()).ok());
  EXPECT_FALSE(core_->catalog_due());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kGoOn);
}

// ---- Streamed transactions ----

TEST_F(CoreTest, RolledBackStreamedTransactionsAndSubtransactionsProduceNothing) {
  config_.source.streaming = true;
  Start(nullptr, nullptr, 2);
  ASSERT_TRUE(Send(pg::StreamStart{800, 1}).ok());
  pg::Relation rel = Outbox();
  rel.xid = 800;
  ASSERT_TRUE(Send(rel).ok());
  ASSERT_TRUE(Send(Row(Id(1), "a", 800)).ok());
  ASSERT_TRUE(Send(Row(Id(2), "b", 801)).ok());  // a subtransaction
  ASSERT_TRUE(Send(pg::StreamStop{}).ok());
  ASSERT_TRUE(Send(pg::StreamAbort{800, 801, std::nullopt, std::nullopt}).ok());  // the subtransaction rolls back
  ASSERT_TRUE(Send(pg::StreamStart{900, 1}).ok());
  ASSERT_TRUE(Send(Row(Id(3), "c", 900)).ok());
  ASSERT_TRUE(Send(pg::StreamStop{}).ok());
  ASSERT_TRUE(Send(pg::StreamAbort{900, 900, std::nullopt, std::nullopt}).ok());  // the whole transaction rolls back
  EXPECT_TRUE(sink_.produced.empty());  // nothing before the Stream Commit
  ASSERT_TRUE(Send(pg::StreamCommit{800, 0, Lsn(0x5000), Lsn(0x5010), kPgTime}).ok());
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStopBusy);
  ASSERT_TRUE(core_->ReplayStep().ok());
  ASSERT_EQ(sink_.produced.size(), 1u);
  EXPECT_EQ(sink_.produced[0].record.event_id, Id(1));
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), Lsn(0x5010));
}

// ---- Permanent errors ----
// A streamed transaction's replay that cannot go on (here: an event the broker refuses, and its dead letter refused
// too) stops as an error at a frame does: the transaction before it is confirmed, nothing of the streamed one.
TEST_F(CoreTest, AnErrorReplayingAStreamedTransactionStopsAsAHaltAfterWhatCameBefore) {
  config_.source.streaming = true;
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start(nullptr, nullptr, 2);
  const Lsn before = Tx(0x2000, {"a"});
  ASSERT_TRUE(Send(pg::StreamStart{800, 0}).ok());
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b", 800)).ok());
  ASSERT_TRUE(Send(pg::StreamStop{}).ok());
  ASSERT_TRUE(Send(pg::StreamCommit{800, 0, Lsn(0x5000), Lsn(0x5010), kPgTime}).ok());
  sink_.answer = ProduceResult::Code::kRejected;  // the event and then its dead letter
  EXPECT_TRUE(core_->ReplayStep().ok()) << "the error is raised as a halt, not returned";
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_NE(core_->halt()->message().find("could not write a dead letter"), std::string::npos)
      << core_->halt()->message();
  sink_.answer = ProduceResult::Code::kOk;
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), before);
}


TEST_F(CoreTest, UnderHaltARefusedEventStopsBeforeItsTransaction) {
  Start();
  const Lsn before = Tx(0x2000, {"a"});
  sink_.answer = ProduceResult::Code::kRejected;
  sink_.reason = sinks::Reason::kTooLarge;
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(9), "b")).ok());
  EXPECT_FALSE(core_->halt().has_value());  // raised at the Commit, when the end LSN is known
  Commit(0x3000);
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_NE(core_->halt()->message().find("--start-lsn 0/3010"), std::string::npos) << core_->halt()->message();
  EXPECT_NE(core_->halt()->message().find(Id(9)), std::string::npos) << core_->halt()->message();
  sink_.answer = ProduceResult::Code::kOk;
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), before);  // never past the refused event's transaction
  EXPECT_EQ(sink_.To("dead").size(), 0u);
}

// An error in the stream itself (here the outbox table renamed: its Relation names it anew) stops the stream as a
// halt does: the transactions before it are still delivered and confirmed, nothing of its own transaction is.
TEST_F(CoreTest, AnErrorInTheStreamStopsAsAHaltAfterWhatCameBefore) {
  Start();
  const Lsn before = Tx(0x2000, {"a"});
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  pg::Relation renamed = Outbox();
  renamed.relname = "outbox_renamed";
  EXPECT_TRUE(Send(renamed).ok()) << "a stream error is raised as a halt, not returned";
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_EQ(core_->halt()->code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(core_->halt()->message().find("is now \"public.outbox_renamed\""), std::string::npos)
      << core_->halt()->message();
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStop);
  EXPECT_FALSE(core_->rewind_reason().has_value());
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), before);  // the first transaction, never the one with the renamed table
}

TEST_F(CoreTest, AnUndecodableMessageStopsAsAHaltNamingItsLsn) {
  Start();
  const Lsn before = Tx(0x2000, {"a"});
  ASSERT_TRUE(core_->OnFrame(pg::XLogData{Lsn(0x2500), Lsn(0x2500), 0, "?"}).ok());
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_EQ(core_->halt()->code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(core_->halt()->message().find("at LSN 0/2500"), std::string::npos) << core_->halt()->message();
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), before);
}

TEST_F(CoreTest, UnderDeadLetterARefusedEventGoesToTheDeadLetterTopicInItsPlace) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start();
  sink_.reason = sinks::Reason::kTooLarge;
  sink_.next_answers = {ProduceResult::Code::kRejected};  // the event; its dead letter is taken
  const Lsn end = Tx(0x2000, {"a"});
  ASSERT_EQ(sink_.To("dead").size(), 1u);
  const OwnedRecord& dl = *sink_.To("dead")[0];
  EXPECT_FALSE(dl.value.has_value());  // too large: without its value
  bool has_error = false;
  for (const auto& [name, value] : dl.headers) has_error = has_error || name == "error";
  EXPECT_TRUE(has_error);
  EXPECT_EQ(Confirm(), kStart);  // the dead letter waits for its own report
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), end);
  EXPECT_EQ(metrics_.events_dead_lettered.load(), 1u);
}

TEST_F(CoreTest, ARecordTheBrokerRejectsIsDeadLetteredBeforeItsTransactionIsConfirmed) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start();
  const Lsn end = Tx(0x2000, {"a"});
  sink_.Report(0, Outcome::kRejectedEvent);
  Poll();
  EXPECT_EQ(Confirm(), kStart);  // the dead letter stands in for the record: not written yet
  ASSERT_TRUE(core_->ProduceHeld().ok());
  ASSERT_EQ(sink_.To("dead").size(), 1u);
  EXPECT_EQ(Confirm(), kStart);
  sink_.AckAll();
  Poll();
  EXPECT_EQ(Confirm(), end);
}

TEST_F(CoreTest, ADeadLetterThatCouldNotBeWrittenRewindsAndConfirmsNothing) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start();
  Tx(0x2000, {"a"});
  sink_.Report(0, Outcome::kRejectedEvent);
  Poll();
  sink_.answer = ProduceResult::Code::kFailed;  // the producer is gone when the dead letter is produced
  ASSERT_TRUE(core_->ProduceHeld().ok());
  EXPECT_TRUE(core_->rewind_reason().has_value());
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, ADeadLetterTheBrokerRefusesHalts) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start();
  Tx(0x2000, {"a"});
  sink_.Report(0, Outcome::kRejectedEvent);
  Poll();
  ASSERT_TRUE(core_->ProduceHeld().ok());
  sink_.Report(1, Outcome::kRejectedEvent);  // the dead letter itself
  Poll();
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, ABatchTheBrokerRefusesHaltsNamingEveryEventAndDeadLettersNone) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  Start();
  Tx(0x2000, {"a", "b"});
  sink_.Report(0, Outcome::kRejectedBatch);
  sink_.Report(1, Outcome::kRejectedBatch);
  Poll();
  ASSERT_TRUE(core_->halt().has_value());
  const std::string message(core_->halt()->message());
  EXPECT_NE(message.find(Id(1)), std::string::npos) << message;
  EXPECT_NE(message.find(Id(2)), std::string::npos) << message;
  ASSERT_TRUE(core_->ProduceHeld().ok());
  EXPECT_TRUE(sink_.To("dead").empty());
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(CoreTest, AnEventWithANullIdIsAPerEventError) {
  Start();
  Begin(0x2000);
  ASSERT_TRUE(Send(Row("", "a")).ok());
  Commit(0x2000);
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_TRUE(sink_.produced.empty());
  EXPECT_EQ(Confirm(), kStart);
}

// ---- A sink that commits with the checkpoint (the transactional Kafka sink's contract) ----

class TransactionalCoreTest : public CoreTest {
 protected:
  void StartTx() { Start(&tx_, &tx_); }

  // After a halt before the transaction committing at `halted` raised its rewind: the rewind, then the replay of the
  // one transaction before it (at `before`, with `keys`) and of `halted`'s Begin, where nothing more is read and the
  // transaction before it commits (ending at `good`); returns once that commit completed.
  void ReplayToTheHalt(uint64_t before, const std::vector<std::string>& keys, uint64_t halted, Lsn good) {
    ASSERT_TRUE(core_->rewind_reason().has_value());
    EXPECT_FALSE(core_->halt().has_value());
    core_->Rewind("halting");
    tx_.Purge();
    Poll();
    Restart();
    next_id_ = 0;
    Tx(before, keys);
    Begin(halted);
    ASSERT_NO_FATAL_FAILURE(CommitWhatCameBefore(good));
  }

  // The stream is paused before a halt: the open Kafka transaction, ending at `good`, commits in whole; returns once
  // that commit completed.
  void CommitWhatCameBefore(Lsn good) {
    EXPECT_TRUE(core_->paused());
    EXPECT_FALSE(core_->halt().has_value());
    ASSERT_TRUE(core_->StatusDue().has_value());
    Confirm();
    ASSERT_EQ(tx_.commits.size(), 1u);
    EXPECT_EQ(tx_.commits[0].lsn, good);
    EXPECT_FALSE(tx_.commits[0].partial.has_value());
    tx_.CompleteCommit();
    Poll();
  }

  // After that commit: the halt names `named`, the one committed record is `key`'s, and the slot is at `good`.
  void ExpectHaltAfterCommitting(const std::string& named, const std::string& key, Lsn good) {
    ASSERT_TRUE(core_->halt().has_value());
    EXPECT_NE(core_->halt()->message().find(named), std::string::npos) << core_->halt()->message();
    ASSERT_EQ(tx_.committed.size(), 1u);
    EXPECT_EQ(tx_.committed[0].key, key);
    EXPECT_EQ(Confirm(), good);
  }

  FakeTransactionalSink tx_;
};

TEST_F(TransactionalCoreTest, NothingIsConfirmedBeforeTheCommitThatHoldsTheCheckpoint) {
  StartTx();
  const Lsn end = Tx(0x2000, {"a", "b"});
  clock_.Advance(1000ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  EXPECT_EQ(Confirm(), kStart);  // starts the commit
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, end);
  EXPECT_TRUE(core_->paused());  // nothing is produced while the commit is in flight
  EXPECT_EQ(Confirm(), kStart);
  tx_.CompleteCommit();
  Poll();
  EXPECT_EQ(tx_.committed.size(), 2u);
  EXPECT_EQ(core_->pending_records(), 0u);  // the commit acknowledged them
  EXPECT_FALSE(core_->paused());
  EXPECT_EQ(Confirm(), end);
}

TEST_F(TransactionalCoreTest, ACommitWaitsForTheEndOfTheTransactionInProgress) {
  StartTx();
  const Lsn first = Tx(0x2000, {"a"});
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(50), "b")).ok());
  clock_.Advance(1000ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  EXPECT_TRUE(tx_.commits.empty());  // never half a transaction in a commit
  EXPECT_FALSE(core_->paused());     // read on to its Commit
  const Lsn second = Commit(0x3000);
  EXPECT_TRUE(core_->paused());      // then wait for the commit
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, second);
  EXPECT_GT(second, first);
}

TEST_F(TransactionalCoreTest, AFailedCommitRewindsAndConfirmsNothing) {
  StartTx();
  Tx(0x2000, {"a"});
  clock_.Advance(1000ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  tx_.CompleteCommit(/*ok=*/false);
  Poll();
  EXPECT_TRUE(core_->rewind_reason().has_value());
  EXPECT_TRUE(tx_.committed.empty());
  EXPECT_EQ(Confirm(), kStart);
}

TEST_F(TransactionalCoreTest, TheTransactionIntervalRunsFromTheLastCommitsStart) {
  config_.delivery.transaction_interval_ms = 100;
  StartTx();
  Tx(0x2000, {"a"});
  clock_.Advance(100ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();  // the commit starts at 100 ms
  ASSERT_EQ(tx_.commits.size(), 1u);
  clock_.Advance(40ms);  // and takes 40 ms
  tx_.CompleteCommit();
  Poll();
  Tx(0x3000, {"b"});
  clock_.Advance(61ms);  // 101 ms after the last commit began, 61 ms after it ended
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  EXPECT_EQ(tx_.commits.size(), 2u);
}

TEST_F(TransactionalCoreTest, TheLoopWakesForTheNextCommitWhileRecordsWait) {
  config_.delivery.transaction_interval_ms = 100;
  StartTx();
  EXPECT_GT(core_->SleepMs(), 100);  // nothing waits: the status interval's sleep (capped at 200 ms)
  Tx(0x2000, {"a"});
  clock_.Advance(30ms);
  EXPECT_LE(core_->SleepMs(), 70);
}

TEST_F(TransactionalCoreTest, IdleTheCheckpointAloneCommitsEveryStatusIntervalNotEveryTransactionInterval) {
  config_.delivery.transaction_interval_ms = 100;
  StartTx();
  Keepalive(0x9000);
  clock_.Advance(200ms);
  EXPECT_FALSE(core_->StatusDue().has_value());  // no record waits: no commit at the transaction interval
  clock_.Advance(900ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, Lsn(0x9000));
}

TEST_F(TransactionalCoreTest, IdleAdvanceCommitsAnEmptyTransaction) {
  StartTx();
  Keepalive(0x9000);
  Confirm();
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, Lsn(0x9000));
  tx_.CompleteCommit();
  Poll();
  EXPECT_EQ(Confirm(), Lsn(0x9000));
}

// ---- delivery.guarantee exactly_once: the skip rule, split transactions, halts and poison events ----

TEST_F(TransactionalCoreTest, CommitsEveryTransactionIntervalNotEveryStatusInterval) {
  config_.delivery.transaction_interval_ms = 100;
  StartTx();
  const Lsn end = Tx(0x2000, {"a"});
  clock_.Advance(50ms);
  EXPECT_FALSE(core_->StatusDue().has_value());
  clock_.Advance(60ms);
  ASSERT_TRUE(core_->StatusDue().has_value());  // 110 ms: the transaction interval, long before the status interval
  Confirm();
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, end);
}

TEST_F(TransactionalCoreTest, TheCheckpointNamesEverythingCommittedWhileTheConfirmationWaitsForThePublicationWatch) {
  StartTx();
  core_->WatchPublication();
  const Lsn first = Tx(0x2000, {"a"});
  core_->PublicationVerified(first);
  const Lsn second = Tx(0x3000, {"b"});  // received after the last publication check
  clock_.Advance(1000ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, second);  // both records are in the commit: the checkpoint must say so
  tx_.CompleteCommit();
  Poll();
  EXPECT_EQ(Confirm(), first);  // confirmed only as far as the publication is known to have covered
  core_->PublicationVerified(second);
  EXPECT_EQ(Confirm(), second);
}

// The publication watch's check follows the commits (Relay::CheckPublication asks WatchHoldsBack): once a check
// vouches for what a commit made durable, a status is due at once, not at the next status interval (a drain's last
// commit waited up to a status interval to be confirmed).
TEST_F(TransactionalCoreTest, ACheckThatVouchesForACommittedCheckpointIsConfirmedAtOnce) {
  config_.delivery.transaction_interval_ms = 100;
  StartTx();
  core_->WatchPublication();
  const Lsn end = Tx(0x2000, {"a"});
  EXPECT_FALSE(core_->WatchHoldsBack());  // nothing committed yet
  clock_.Advance(100ms);
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();  // the commit starts
  tx_.CompleteCommit();
  Poll();
  ASSERT_TRUE(core_->StatusDue().has_value());  // the commit's acknowledgement
  EXPECT_EQ(Confirm(), kStart);                 // capped by the watch
  EXPECT_TRUE(core_->WatchHoldsBack());
  clock_.Advance(10ms);
  EXPECT_FALSE(core_->StatusDue().has_value());
  core_->PublicationVerified(end);
  ASSERT_TRUE(core_->StatusDue().has_value()) << "the verified checkpoint waited for the status interval";
  EXPECT_EQ(Confirm(), end);
  EXPECT_FALSE(core_->WatchHoldsBack());
}

TEST_F(TransactionalCoreTest, TheSkipRuleDropsWholeTransactionsCommittedBeforeTheCheckpoint) {
  StartTx();
  Checkpoint committed{"7300000000000000001", 1, "", "", Lsn(0x2010)};
  core_->SkipCommitted(committed);
  Tx(0x2000, {"a", "b"});      // ends at 0x2010: committed already
  Tx(0x2010, {"c"});           // commits at the checkpoint's LSN: after it, produced
  ASSERT_EQ(tx_.produced.size(), 1u);
  EXPECT_EQ(tx_.produced[0].record.key, "c");
  EXPECT_EQ(metrics_.events_skipped.load(), 2u);
}

TEST_F(TransactionalCoreTest, ATransactionLargerThanTheBoundsCommitsInPartsAndResumesAfterItsCommittedPart) {
  config_.delivery.max_inflight_events = 3;
  StartTx();
  Begin(0x4000);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Send(Row(Id(++next_id_), "k")).ok());
  ASSERT_TRUE(core_->bounds_reached());
  ASSERT_TRUE(core_->StatusDue().has_value());
  EXPECT_EQ(Confirm(), kStart);  // a commit inside the transaction: nothing of it is confirmed
  ASSERT_EQ(tx_.commits.size(), 1u);
  ASSERT_TRUE(tx_.commits[0].partial.has_value());
  EXPECT_EQ(tx_.commits[0].partial->commit_lsn, Lsn(0x4000));
  EXPECT_EQ(tx_.commits[0].partial->records, 3);
  EXPECT_EQ(tx_.commits[0].lsn, kStart);
  tx_.CompleteCommit();
  Poll();
  EXPECT_FALSE(core_->bounds_reached());
  ASSERT_TRUE(Send(Row(Id(++next_id_), "k")).ok());  // the fourth event, in the next Kafka transaction
  // The relay dies here. The next one reads the checkpoint and replays the transaction from its Begin.
  core_->Rewind("killed");
  tx_.Purge();
  Poll();
  Restart();
  core_->SkipCommitted(tx_.commits[0]);
  const size_t before = tx_.produced.size();
  next_id_ = 0;
  Begin(0x4000);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Send(Row(Id(++next_id_), "k")).ok());
  Commit(0x4000);
  ASSERT_EQ(tx_.produced.size(), before + 1);  // only the fourth: the first three are committed
  EXPECT_EQ(tx_.produced.back().record.event_id, Id(4));
}

TEST_F(TransactionalCoreTest, AHaltAbortsTheKafkaTransactionCommitsWhatCameBeforeOnTheReplayThenHalts) {
  StartTx();
  const Lsn good = Tx(0x2000, {"a"});
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  ASSERT_TRUE(Send(Row("", "c")).ok());  // a NULL id: a per-event error, halt
  Commit(0x3000);
  // The open Kafka transaction holds "b": nothing of it may commit. A rewind aborts it.
  EXPECT_FALSE(core_->halt().has_value());
  ASSERT_TRUE(core_->rewind_reason().has_value());
  clock_.Advance(1000ms);
  Confirm();
  EXPECT_TRUE(tx_.commits.empty());
  // The halted transaction: nothing more is read, what came before commits.
  ASSERT_NO_FATAL_FAILURE(ReplayToTheHalt(0x2000, {"a"}, 0x3000, good));
  // Then the halt, naming the --start-lsn that skips that transaction alone.
  ExpectHaltAfterCommitting("--start-lsn 0/3010", "a", good);
}

// The same stream error under a transactional sink: the open Kafka transaction may hold the failed transaction's
// records, so it is aborted (a rewind) and the replay commits what came before, then halts with the error.
TEST_F(TransactionalCoreTest, AnErrorInTheStreamAbortsCommitsWhatCameBeforeOnTheReplayThenHalts) {
  StartTx();
  const Lsn good = Tx(0x2000, {"a"});
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  pg::Relation renamed = Outbox();
  renamed.relname = "outbox_renamed";
  ASSERT_TRUE(Send(renamed).ok());
  ASSERT_NO_FATAL_FAILURE(ReplayToTheHalt(0x2000, {"a"}, 0x3000, good));
  ExpectHaltAfterCommitting("is now \"public.outbox_renamed\"", "a", good);
}

// The same error between transactions (an undecodable message): the open Kafka transaction holds whole transactions
// only, so nothing more is read, it commits, and then the relay halts.
TEST_F(TransactionalCoreTest, AnErrorBetweenTransactionsCommitsTheOpenTransactionThenHalts) {
  StartTx();
  const Lsn good = Tx(0x2000, {"a"});
  ASSERT_TRUE(core_->OnFrame(pg::XLogData{Lsn(0x2500), Lsn(0x2500), 0, "?"}).ok())
      << "a stream error is raised as a halt, not returned";
  EXPECT_FALSE(core_->rewind_reason().has_value()) << "nothing of the open Kafka transaction needs aborting";
  EXPECT_EQ(core_->AfterFrame(), pg::ReadControl::kStop);
  ASSERT_NO_FATAL_FAILURE(CommitWhatCameBefore(good));  // not halted before the commit
  ExpectHaltAfterCommitting("undecodable pgoutput message at LSN 0/2500", "a", good);
}

TEST_F(TransactionalCoreTest, TwoRefusedTransactionsInOneKafkaTransactionHaltBeforeTheFirst) {
  StartTx();
  const Lsn before = Tx(0x1000, {"ok"});
  Tx(0x2000, {"a"});
  Tx(0x3000, {"b"});
  // The broker refuses both; the later one's report is served first.
  tx_.Report(2, sinks::Outcome::kRejectedEvent);
  tx_.Report(1, sinks::Outcome::kRejectedEvent);
  Poll();
  // The replay stops at the first refused transaction.
  ASSERT_NO_FATAL_FAILURE(ReplayToTheHalt(0x1000, {"ok"}, 0x2000, before));
  ASSERT_TRUE(core_->halt().has_value());
  EXPECT_NE(core_->halt()->message().find("commit LSN 0/2000"), std::string::npos) << core_->halt()->message();
}

TEST_F(TransactionalCoreTest, ATransactionWithAPoisonEventNeverCommitsInPartAtTheBounds) {
  config_.delivery.max_inflight_events = 1;
  StartTx();
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  ASSERT_TRUE(Send(Row("", "c")).ok());  // a NULL id under halt: the transaction will halt at its Commit
  ASSERT_TRUE(core_->bounds_reached());
  ASSERT_TRUE(core_->StatusDue().has_value());
  Confirm();
  EXPECT_TRUE(tx_.commits.empty());  // "b" must never become visible
}

TEST_F(TransactionalCoreTest, StoppingInsideATransactionCommitsItInPart) {
  StartTx();
  const Lsn whole = Tx(0x2000, {"a"});
  Begin(0x3000);
  ASSERT_TRUE(Send(Row(Id(++next_id_), "b")).ok());
  ASSERT_TRUE(core_->RequestCheckpoint(whole).ok());
  EXPECT_TRUE(tx_.commits.empty());  // inside a transaction: not while running
  core_->AllowSplit();                // the stop
  ASSERT_TRUE(core_->RequestCheckpoint(whole).ok());
  ASSERT_EQ(tx_.commits.size(), 1u);
  EXPECT_EQ(tx_.commits[0].lsn, whole);
  ASSERT_TRUE(tx_.commits[0].partial.has_value());
  EXPECT_EQ(tx_.commits[0].partial->commit_lsn, Lsn(0x3000));
  EXPECT_EQ(tx_.commits[0].partial->records, 1);
}

TEST_F(TransactionalCoreTest, AnEventTheBrokerRefusesIsDeadLetteredWhenTheAbortedTransactionComesAgain) {
  config_.delivery.on_error = config::OnError::kDeadLetter;
  StartTx();
  Tx(0x2000, {"a", "b"});
  tx_.Report(1, sinks::Outcome::kRejectedEvent);  // the broker refuses "b": the Kafka transaction cannot commit
  Poll();
  ASSERT_TRUE(core_->rewind_reason().has_value());
  EXPECT_TRUE(tx_.To("dead").empty());  // no dead letter in the doomed transaction
  core_->Rewind("aborted");
  tx_.Purge();
  Poll();
  Restart();
  next_id_ = 0;
  const size_t before = tx_.produced.size();
  const Lsn end = Tx(0x2000, {"a", "b"});
  ASSERT_EQ(tx_.produced.size(), before + 2);
  EXPECT_EQ(tx_.produced[before].record.topic, kTopic);
  EXPECT_EQ(tx_.produced[before + 1].record.topic, "dead");  // "b" refused before producing: its dead letter
  clock_.Advance(1000ms);
  Confirm();
  ASSERT_FALSE(tx_.commits.empty());
  EXPECT_EQ(tx_.commits.back().lsn, end);
}

}  // namespace
}  // namespace outbox::delivery
