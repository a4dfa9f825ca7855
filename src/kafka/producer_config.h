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

// librdkafka's and Kafka's default transaction timeout, kept by the relay in exactly_once.
inline constexpr int64_t kDefaultTransactionTimeoutMs = 60000;

// Returns the user's keys over the relay's defaults. With `exactly_once` (delivery.guarantee) the producer is
// transactional: message.timeout.ms defaults to transaction.timeout.ms (a broker outage aborts the transaction
// instead of waiting forever), and a user's transactional.id, enable.idempotence=false or a message timeout that is
// infinite or above the transaction timeout is refused, delivery.unsafe or not (the config refuses the two
// together). The transactional.id itself is set where the sink is made (TransactionalId). Otherwise a key that breaks the guarantee (enable.idempotence=false,
// acks other than all/-1, a finite message.timeout.ms / delivery.timeout.ms, finite retries, queue limits below
// the delivery bounds) is INVALID_ARGUMENT naming `kafka.<key>`, unless `unsafe`. More than 5 requests in flight
// with idempotence on is refused even then (librdkafka would refuse it). librdkafka's queue limits are raised above the delivery bounds.
absl::StatusOr<std::map<std::string, std::string>> BuildProducerConfig(
    const std::map<std::string, std::string>& user, const ProducerBounds& bounds, bool unsafe,
    bool exactly_once = false);

// Whether the Kafka sink sends its lingering records as soon as the loop has read all the stream had (SendHeld),
// instead of when linger.ms ends: yes unless the user set the linger (linger.ms or queue.buffering.max.ms, which
// is then kept as set) or the producer is transactional (its commit sends them: a record becomes visible only then).
bool SendsHeldWhenIdle(const std::map<std::string, std::string>& user, bool exactly_once);

// The transactional.id of a slot's relays: the same for every relay of that slot of that cluster (so a new one
// fences the old), and another for every other slot (each pipeline has its own).
std::string TransactionalId(const std::string& system_id, const std::string& slot);

// transaction.timeout.ms of a built configuration (librdkafka's default when unset).
int64_t TransactionTimeoutMs(const std::map<std::string, std::string>& conf);

}  // namespace outbox::kafka
