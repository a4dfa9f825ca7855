// The producer configuration the relay hands librdkafka: SPEC.md §3's defaults under the user's kafka.* keys,
// and the refusal of settings that would break at-least-once delivery in order. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace outbox::kafka {

struct ProducerBounds {
  int64_t max_inflight_events = 100000;
  int64_t max_inflight_bytes = 32LL * 1024 * 1024;
};

// librdkafka's largest queue limits, and the room the relay keeps in its queue above the delivery bounds for
// checkpoint and dead-letter records.
inline constexpr int64_t kLibrdkafkaQueueMax = 2147483647;
inline constexpr int64_t kQueueHeadroomMessages = 1000;
inline constexpr int64_t kQueueHeadroomKbytes = 1024;
// librdkafka's retry count that means "forever" (its default and maximum).
inline constexpr int64_t kUnlimitedRetries = 2147483647;
// The most requests in flight per connection an idempotent producer allows (librdkafka and Kafka).
inline constexpr int64_t kMaxIdempotentInFlight = 5;

// The smallest queue.buffering.max.messages / .kbytes a user may set for these bounds.
int64_t MinQueueMessages(const ProducerBounds& bounds);
int64_t MinQueueKbytes(const ProducerBounds& bounds);

// Returns the user's keys over the relay's defaults. A key that breaks the guarantee (enable.idempotence=false,
// acks other than all/-1, a finite message.timeout.ms / delivery.timeout.ms, finite retries, queue limits below
// the delivery bounds) is INVALID_ARGUMENT naming `kafka.<key>`, unless `unsafe`. More than 5 requests in flight
// with idempotence on is refused even then (librdkafka would refuse it). librdkafka's queue limits are raised above the delivery bounds.
absl::StatusOr<std::map<std::string, std::string>> BuildProducerConfig(
    const std::map<std::string, std::string>& user, const ProducerBounds& bounds, bool unsafe);

}  // namespace outbox::kafka
