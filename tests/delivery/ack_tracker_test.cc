// AckTracker: the watermark moves only over fully acknowledged transactions, in commit order.
#include "delivery/ack_tracker.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <vector>

namespace outbox::delivery {
namespace {

// A whole transaction as the relay reports it: Begin, one AddRecord per size in `record_bytes`, Close at `end`.
EntryHandle ClosedTransaction(AckTracker& t, Lsn end, std::initializer_list<size_t> record_bytes = {1}) {
  EntryHandle e = t.Begin();
  for (size_t bytes : record_bytes) t.AddRecord(e, bytes);
  t.Close(e, end);
  return e;
}

TEST(AckTracker, EmptyTransactionCompletesAtCommit) {
  AckTracker t;
  auto e = t.Begin();
  EXPECT_FALSE(t.idle());
  t.Close(e, Lsn(100));
  EXPECT_EQ(t.watermark(), Lsn(100));
  EXPECT_TRUE(t.idle());
}

TEST(AckTracker, WatermarkWaitsForEveryRecordOfTheTransaction) {
  AckTracker t;
  auto e = t.Begin();
  t.AddRecord(e, 10);
  t.AddRecord(e, 10);
  t.Close(e, Lsn(100));
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_TRUE(t.Ack(e, 10));
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_TRUE(t.Ack(e, 10));
  EXPECT_EQ(t.watermark(), Lsn(100));
}

TEST(AckTracker, OpenTransactionHoldsTheWatermarkEvenWhenAcked) {
  AckTracker t;
  auto e = t.Begin();
  t.AddRecord(e, 1);
  EXPECT_TRUE(t.Ack(e, 1));
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_TRUE(t.has_open_entry());
  t.Close(e, Lsn(50));
  EXPECT_EQ(t.watermark(), Lsn(50));
}

TEST(AckTracker, WatermarkStopsAtFirstUnackedTransaction) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10));
  auto b = ClosedTransaction(t, Lsn(20));
  auto c = ClosedTransaction(t, Lsn(30));
  // Out of order: c and b acked before a.
  EXPECT_TRUE(t.Ack(c, 1));
  EXPECT_TRUE(t.Ack(b, 1));
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_TRUE(t.Ack(a, 1));
  EXPECT_EQ(t.watermark(), Lsn(30));
  EXPECT_TRUE(t.idle());
}

TEST(AckTracker, GapInTheMiddleStopsTheWatermark) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10));
  auto b = ClosedTransaction(t, Lsn(20));
  auto c = ClosedTransaction(t, Lsn(30));
  EXPECT_TRUE(t.Ack(a, 1));
  EXPECT_TRUE(t.Ack(c, 1));
  EXPECT_EQ(t.watermark(), Lsn(10));
  EXPECT_TRUE(t.Ack(b, 1));
  EXPECT_EQ(t.watermark(), Lsn(30));
}

TEST(AckTracker, PermanentFailureStopsTheWatermarkForever) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10));
  auto b = t.Begin();
  t.AddRecord(b, 1);
  t.MarkFailed(b);
  t.Close(b, Lsn(20));
  ClosedTransaction(t, Lsn(30), {});
  EXPECT_TRUE(t.Ack(a, 1));
  EXPECT_TRUE(t.Ack(b, 1));
  EXPECT_EQ(t.watermark(), Lsn(10));
  ClosedTransaction(t, Lsn(40), {});
  EXPECT_EQ(t.watermark(), Lsn(10));
}

TEST(AckTracker, EmptyTransactionsBehindAPendingOneMergeIntoOneEntry) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10));
  for (int i = 0; i < 1000; ++i) ClosedTransaction(t, Lsn(20 + i), {});
  EXPECT_EQ(t.entries(), 2u);
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_TRUE(t.Ack(a, 1));
  EXPECT_EQ(t.watermark(), Lsn(20 + 999));
}

TEST(AckTracker, StaleGenerationReportsAreIgnoredAfterReset) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10), {100});
  t.Reset();
  EXPECT_EQ(t.inflight_events(), 0u);
  EXPECT_EQ(t.inflight_bytes(), 0u);
  ClosedTransaction(t, Lsn(5));
  // The late report of generation 1 must not count as an ack of generation 2's entry with the same seq.
  EXPECT_FALSE(t.Ack(a, 100));
  EXPECT_EQ(t.watermark(), Lsn(0));
  EXPECT_EQ(t.pending_records(), 1u);
}

TEST(AckTracker, WatermarkNeverMovesBackward) {
  AckTracker t;
  ClosedTransaction(t, Lsn(100), {});
  ClosedTransaction(t, Lsn(50), {});  // e.g. a resend after a reconnect
  EXPECT_EQ(t.watermark(), Lsn(100));
}

TEST(AckTracker, InflightCountsRecordsBytesAndOpenTransactions) {
  AckTracker t;
  auto a = t.Begin();
  EXPECT_EQ(t.inflight_events(), 1u);
  t.AddRecord(a, 300);
  t.AddRecord(a, 200);
  EXPECT_EQ(t.inflight_events(), 3u);
  // Each record waiting for its report counts what a sink holds beside its key and value.
  EXPECT_EQ(t.inflight_bytes(), 500u + 2 * AckTracker::kRecordOverheadBytes + AckTracker::kEntryOverheadBytes);
  t.Close(a, Lsn(1));
  t.Ack(a, 300);
  EXPECT_EQ(t.inflight_bytes(), 200u + AckTracker::kRecordOverheadBytes + AckTracker::kEntryOverheadBytes);
  t.Ack(a, 200);
  EXPECT_EQ(t.inflight_events(), 0u);
  EXPECT_EQ(t.inflight_bytes(), 0u);
}

TEST(AckTracker, DuplicateReportDoesNotCountTwice) {
  AckTracker t;
  auto a = ClosedTransaction(t, Lsn(10), {1, 1});
  auto b = ClosedTransaction(t, Lsn(20));
  EXPECT_TRUE(t.Ack(b, 1));
  EXPECT_FALSE(t.Ack(b, 1));  // b has nothing pending any more
  EXPECT_TRUE(t.Ack(a, 1));
  EXPECT_EQ(t.watermark(), Lsn(0));
}

TEST(AckTracker, EndLsnIsKnownOnlyOnceTheEntryIsClosed) {
  AckTracker t;
  auto a = t.Begin();
  t.AddRecord(a, 1);
  EXPECT_FALSE(t.EndLsnOf(a).has_value());
  t.Close(a, Lsn(77));
  EXPECT_EQ(t.EndLsnOf(a), Lsn(77));
  t.Reset();
  EXPECT_FALSE(t.EndLsnOf(a).has_value()) << "a stale handle has no entry";
}

TEST(AckTracker, HandlePacksGenerationAndSequence) {
  EntryHandle h{7, 123456789};
  EntryHandle back = EntryHandle::Unpack(h.Pack());
  EXPECT_EQ(back.generation, 7);
  EXPECT_EQ(back.seq, 123456789u);
}

// Model check: random interleavings of acks; the watermark always equals the reference computation.
TEST(AckTracker, RandomAckOrderMatchesReferenceModel) {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    AckTracker t;
    struct Tx { EntryHandle h; int records; int acked; Lsn end; };
    std::vector<Tx> txs;
    const int n = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < n; ++i) {
      Tx tx{t.Begin(), static_cast<int>(rng() % 4), 0, Lsn(100 * (i + 1))};
      for (int r = 0; r < tx.records; ++r) t.AddRecord(tx.h, 10);
      t.Close(tx.h, tx.end);
      txs.push_back(tx);
    }
    std::vector<int> pending;
    for (int i = 0; i < n; ++i)
      for (int r = 0; r < txs[i].records; ++r) pending.push_back(i);
    std::shuffle(pending.begin(), pending.end(), rng);
    for (int idx : pending) {
      ASSERT_TRUE(t.Ack(txs[idx].h, 10));
      ++txs[idx].acked;
      Lsn expect;
      for (const Tx& tx : txs) {
        if (tx.acked != tx.records) break;
        expect = tx.end;
      }
      ASSERT_EQ(t.watermark(), expect);
    }
    EXPECT_EQ(t.watermark(), txs.back().end);
  }
}

}  // namespace
}  // namespace outbox::delivery
