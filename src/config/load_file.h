// The config file `-c` names: YAML, or a Debezium file (config/debezium). The one place that knows both forms.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"

namespace outbox::config {

// Reads `path` through resolver.file: a .properties or .json file goes to the Debezium import (a .json without
// connector.class is a relay config in JSON), anything else to LoadYaml.
absl::StatusOr<Config> LoadFile(const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& overrides,
                                const Resolver& resolver);

}  // namespace outbox::config
