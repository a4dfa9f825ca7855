// When KafkaSink::SendHeld flushes what lingers in librdkafka's queues, and for how long: pure (the caller passes
// the time and librdkafka's outstanding count), so that its unit test drives it with a fake clock.
//
// librdkafka takes linger.ms as over only while an rd_kafka_flush runs, and only for a broker thread that wakes
// within it: a flush can be missed (its window ends before the thread runs, the CPU busy elsewhere), and what it
// missed lingers on. So a flush is repeated at each idle round while anything is outstanding, its window longer
// once a send is slow; and new records wait for unacknowledged earlier ones (to go out together) only while that
// earlier send is recent, since a missed one is never acknowledged before its linger.
#pragma once

#include <chrono>
#include <optional>

namespace outbox::kafka {

class SendHeldPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kWaitMs = 1;
  // A repeat for records still outstanding kSlowAfter after their send flushes for kRepeatWaitMs.
  static constexpr std::chrono::milliseconds kSlowAfter{100};
  static constexpr int kRepeatWaitMs = 10;

  explicit SendHeldPolicy(std::chrono::milliseconds linger) : linger_(linger) {}

  // A record was produced.
  void Produced() { ++unsent_; }
  // At an idle round, with `outstanding` records (and events) in librdkafka's queues after serving its reports:
  // how long to flush now, or nullopt for no flush.
  std::optional<int> Decide(int outstanding, Clock::time_point now);

 private:
  std::chrono::milliseconds linger_;
  int unsent_ = 0;                // records produced since the last flush
  Clock::time_point sent_at_;     // the last flush
  Clock::time_point send_started_;  // the last flush of new records (not a repeat)
};

}  // namespace outbox::kafka
