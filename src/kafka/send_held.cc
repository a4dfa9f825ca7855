#include "kafka/send_held.h"

namespace outbox::kafka {

std::optional<int> SendHeldPolicy::Decide(int outstanding, Clock::time_point now) {
  if (outstanding <= 0) {
    unsent_ = 0;
    return std::nullopt;
  }
  if (unsent_ > 0) {
    // Records sent earlier are not all acknowledged: the new ones wait for them (or for the linger) and go out
    // together, one request per partition rather than one per record; but only while that send is recent. A flush
    // librdkafka missed leaves them lingering, unacknowledged until their linger ends, and the new ones with them.
    if (outstanding > unsent_ && now - sent_at_ < kSlowAfter) return std::nullopt;
  } else if (now - sent_at_ > linger_) {
    return std::nullopt;  // nothing new since the last send; within the linger it is repeated, in case librdkafka missed it
  }
  // A repeat for records sent long ago and still outstanding gets a longer window.
  const bool repeat = unsent_ == 0;
  if (!repeat) send_started_ = now;
  unsent_ = 0;
  sent_at_ = now;
  return repeat && now - send_started_ > kSlowAfter ? kRepeatWaitMs : kWaitMs;
}

}  // namespace outbox::kafka
