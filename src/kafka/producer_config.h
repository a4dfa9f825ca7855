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

// Returns the user's keys over the relay's defaults. A key that breaks the guarantee (enable.idempotence=false,
// acks other than all/-1, a finite message.timeout.ms / delivery.timeout.ms) is INVALID_ARGUMENT naming
// `kafka.<key>`, unless `unsafe`. librdkafka's queue limits are raised above the delivery bounds.
absl::StatusOr<std::map<std::string, std::string>> BuildProducerConfig(
    const std::map<std::string, std::string>& user, const ProducerBounds& bounds, bool unsafe);

// True for kafka keys whose value is a secret (never logged).
bool IsSecretKey(const std::string& key);

}  // namespace outbox::kafka
