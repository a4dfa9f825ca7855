// Debezium Server application.properties / Kafka Connect connector config to a Config (SPEC.md §3, last item).
// Not implemented yet: it will map the keys it understands onto the same RawTree a YAML file becomes and call
// BuildConfig, so that overrides, substitution and validation stay shared.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "config/config_internal.h"

namespace outbox::config::internal {

absl::StatusOr<Config> LoadDebeziumProperties(const std::string& path, const std::string& /*text*/,
                                              const std::vector<std::pair<std::string, std::string>>& /*overrides*/,
                                              const Resolver& /*resolver*/) {
  return absl::UnimplementedError(
      absl::StrCat(path, ": Debezium properties files are not supported yet; use a YAML config"));
}

}  // namespace outbox::config::internal
