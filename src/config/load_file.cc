// The config file `-c` names: YAML or a Debezium file (see load_file.h).
#include "config/load_file.h"

#include <optional>

#include "absl/strings/match.h"
#include "common/strings.h"
#include "config/debezium/debezium.h"

namespace outbox::config {

absl::StatusOr<Config> LoadFile(const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& overrides,
                                const Resolver& resolver) {
  std::optional<std::string> text = resolver.file ? resolver.file(path) : std::nullopt;
  if (!text.has_value()) return absl::InvalidArgumentError(Cat(path, ": cannot read the config file"));
  if (absl::EndsWith(path, ".properties") || absl::EndsWith(path, ".json")) {
    return debezium::Load(path, *text, overrides, resolver);
  }
  return LoadYaml(*text, overrides, resolver);
}

}  // namespace outbox::config
