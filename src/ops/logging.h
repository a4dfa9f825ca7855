// Logging setup: spdlog to stderr in text or JSON lines, one named logger per module.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace outbox::ops {

// level: trace|debug|info|warn|error; json: one JSON object per line.
absl::Status SetupLogging(const std::string& level, bool json);

}  // namespace outbox::ops
