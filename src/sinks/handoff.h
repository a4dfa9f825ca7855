// What a sink whose client runs on threads of its own needs to hand outcomes to the loop thread: an eventfd to wake
// the loop (Sink::wakeup_fd) and a mutex-guarded queue of completions that Poll takes, waiting up to a timeout.
// Header only; used by the NATS and RabbitMQ sinks.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <deque>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace outbox::sinks {

// Makes `fd` (an eventfd) readable.
inline void SignalEventFd(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof one);
}
// Clears `fd` (an eventfd, non-blocking).
inline void DrainEventFd(int fd) {
  uint64_t value;
  [[maybe_unused]] ssize_t n = read(fd, &value, sizeof value);
}

// Takes every completion of `queue` (guarded by `mu`), waiting up to timeout_ms for one when it is empty.
template <typename T>
std::deque<T> TakeCompletions(absl::Mutex& mu, std::deque<T>& queue, int timeout_ms) {
  std::deque<T> batch;
  absl::MutexLock lock(&mu);
  if (queue.empty() && timeout_ms > 0) {
    mu.AwaitWithTimeout(absl::Condition(+[](std::deque<T>* d) { return !d->empty(); }, &queue),
                        absl::Milliseconds(timeout_ms));
  }
  batch.swap(queue);
  return batch;
}

}  // namespace outbox::sinks
