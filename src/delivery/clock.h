// The clock the delivery core reads: steady time for its timers, wall time for records and latency. Injected, so
// the core's tests move time by hand.
#pragma once

#include <chrono>
#include <cstdint>

namespace outbox::delivery {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point Now() const = 0;
  virtual int64_t UnixMicros() const = 0;  // Unix epoch microseconds
  int64_t UnixMillis() const { return UnixMicros() / 1000; }
};

class SystemClock final : public Clock {
 public:
  time_point Now() const override { return std::chrono::steady_clock::now(); }
  int64_t UnixMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace outbox::delivery
