// SendHeldPolicy (kafka/send_held.h) with a fake clock: when the relay flushes what lingers, and for how long.
#include "kafka/send_held.h"

#include <chrono>
#include <optional>

#include <gtest/gtest.h>

namespace outbox::kafka {
namespace {

using namespace std::chrono_literals;
using Clock = SendHeldPolicy::Clock;

class SendHeldTest : public ::testing::Test {
 protected:
  std::optional<int> At(std::chrono::milliseconds after_start, int outstanding) {
    return policy_.Decide(outstanding, start_ + after_start);
  }
  SendHeldPolicy policy_{120s};  // the tests' linger: a record that waits it out misses every deadline
  const Clock::time_point start_ = Clock::now();
};

TEST_F(SendHeldTest, ALoneRecordIsFlushedAtOnceThenRepeatedWithALongerWindowOnceSlow) {
  policy_.Produced();
  EXPECT_EQ(At(0ms, 1), SendHeldPolicy::kWaitMs);
  EXPECT_EQ(At(50ms, 1), SendHeldPolicy::kWaitMs);  // a repeat, in case librdkafka missed the first
  EXPECT_EQ(At(150ms, 1), SendHeldPolicy::kRepeatWaitMs);
  EXPECT_EQ(At(160ms, 0), std::nullopt);  // acknowledged: nothing to flush
}

TEST_F(SendHeldTest, NothingOutstandingIsNoFlush) {
  EXPECT_EQ(At(0ms, 0), std::nullopt);
  policy_.Produced();
  EXPECT_EQ(At(1ms, 0), std::nullopt);  // produced and already acknowledged
  EXPECT_EQ(At(2ms, 0), std::nullopt);
}

TEST_F(SendHeldTest, NewRecordsWaitForARecentUnacknowledgedSendToGoOutTogether) {
  policy_.Produced();
  EXPECT_EQ(At(0ms, 1), SendHeldPolicy::kWaitMs);
  policy_.Produced();
  EXPECT_EQ(At(10ms, 2), std::nullopt);  // the first is on its way: the second waits for its acknowledgement
  EXPECT_EQ(At(20ms, 1), SendHeldPolicy::kWaitMs);  // acknowledged: the second goes
}

// The flake this was found by (RelayE2E.ARecordIsSentAsSoonAsTheStreamIsDrainedNotWhenTheLingerEnds, beside the
// Debezium side-by-side tests): a checkpoint record's flush was missed, so it lingered unacknowledged, and the next
// event waited for it at every round until the 120 s linger ended.
TEST_F(SendHeldTest, NewRecordsDoNotWaitForAnEarlierSendThatLingersUnacknowledged) {
  policy_.Produced();
  EXPECT_EQ(At(0ms, 1), SendHeldPolicy::kWaitMs);  // librdkafka's broker thread misses this flush
  policy_.Produced();
  EXPECT_EQ(At(10ms, 2), std::nullopt);
  EXPECT_EQ(At(50ms, 2), std::nullopt);
  EXPECT_EQ(At(100ms, 2), SendHeldPolicy::kWaitMs);  // the earlier send is no longer recent: both go now
  EXPECT_EQ(At(150ms, 2), SendHeldPolicy::kWaitMs);  // repeated while they stay outstanding
  EXPECT_EQ(At(260ms, 2), SendHeldPolicy::kRepeatWaitMs);
}

TEST_F(SendHeldTest, RepeatsStopOnceTheLingerHasPassedSinceTheLastFlush) {
  SendHeldPolicy short_linger(5ms);
  short_linger.Produced();
  EXPECT_EQ(short_linger.Decide(1, start_), SendHeldPolicy::kWaitMs);
  EXPECT_EQ(short_linger.Decide(1, start_ + 3ms), SendHeldPolicy::kWaitMs);
  EXPECT_EQ(short_linger.Decide(1, start_ + 20ms), std::nullopt);  // librdkafka sends it at the linger's end anyway
}

}  // namespace
}  // namespace outbox::kafka
