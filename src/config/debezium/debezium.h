// The Debezium import: a Debezium Server application.properties or a Kafka Connect connector config (.properties,
// or the .json POSTed to Connect) with the Postgres connector and the Outbox Event Router, mapped to the relay's key
// tree and loaded as a YAML file is (config::internal::BuildConfig). What each Debezium key becomes is described at
// the top of debezium.cc and in docs/debezium.md. Pure: the environment and files are reached through the Resolver.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"

namespace outbox::config::debezium {

// `text` is the file at `path` (its extension picks the form; a .json file without connector.class is a relay
// config in JSON, which is YAML). Errors are INVALID_ARGUMENT, every problem together, each naming the key as the
// file writes it, secrets masked.
absl::StatusOr<Config> Load(const std::string& path, const std::string& text,
                            const std::vector<std::pair<std::string, std::string>>& overrides,
                            const Resolver& resolver);

}  // namespace outbox::config::debezium
