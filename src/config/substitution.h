// ${...} references in config values: the one engine for the YAML form (the relay's ${env:NAME} and
// ${file:PATH}) and for Debezium files (Kafka's config providers, SmallRye's property references). Pure: the
// environment and files are reached through the Resolver. Every text read from the environment or a file is a
// secret.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"

namespace outbox::config::internal {

enum class Dialect {
  // ${env:NAME} and ${file:PATH} (trailing newlines stripped by the resolver); any other ${...}, such as
  // ${routedByValue}, stays as written.
  kRelay,
  // Also Kafka's config providers ${file:PATH:KEY} (a key of a properties file) and ${directory:DIR:FILE}; another
  // provider is an error, and ${name} stays as written (Kafka Connect leaves it).
  kKafkaConnect,
  // Also SmallRye's ${name} and ${name:default}: another property of the file, an environment variable (as named,
  // or upper case with '_'), or the default; `$${` and `\${` are a literal `${`. ${routedByValue} stays.
  kDebeziumServer,
};

class Substitution {
 public:
  // `properties` (the file's other properties) is read by kDebeziumServer only; it must outlive this object.
  Substitution(const Resolver& resolver, Dialect dialect, const std::map<std::string, std::string>* properties = nullptr);

  // `value` with every reference replaced; resolved text is not scanned again (a property's value, with SmallRye,
  // is). Errors are INVALID_ARGUMENT naming the variable or the file, never a value; the caller names the key.
  absl::StatusOr<std::string> Expand(std::string_view value);

  // Every non-empty text an environment variable or a file gave, in order.
  std::vector<std::string>& secrets() { return secrets_; }

 private:
  absl::StatusOr<std::string> Expand(std::string_view value, int depth);
  absl::StatusOr<std::string> Resolve(std::string_view inner, int depth);
  absl::StatusOr<std::string> Lookup(std::string_view kind, const std::string& name);
  absl::StatusOr<std::string> PropertiesFileKey(const std::string& path, const std::string& key);

  const Resolver& resolver_;
  Dialect dialect_;
  const std::map<std::string, std::string>* properties_;
  std::vector<std::string> secrets_;
};

}  // namespace outbox::config::internal
