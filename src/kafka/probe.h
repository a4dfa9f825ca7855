// The broker probe of `check`: asks the cluster for its metadata with the relay's producer configuration.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace outbox::kafka {

// How many brokers the cluster has; UNAVAILABLE naming librdkafka's last warning when none answers within the
// timeout; INVALID_ARGUMENT naming the key for a configuration librdkafka refuses.
absl::StatusOr<int> ProbeBroker(const std::map<std::string, std::string>& conf, int timeout_ms);

}  // namespace outbox::kafka
