// Readers for the two file forms a Debezium deployment is configured with: a Java .properties file (Debezium
// Server's application.properties, a Kafka Connect standalone connector file) and a Kafka Connect connector JSON
// (`{"name": ..., "config": {...}}` as POSTed to the REST API, or the bare config object). Pure text to entries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace outbox::config::internal {

// One key=value line, unescaped. `line` is the 1-based line the entry starts on (0 for JSON).
struct PropertyEntry {
  std::string key;
  std::string value;
  int line = 0;
};

// Parses java.util.Properties text: `#`/`!` comments, `=`, `:` or whitespace separators, backslash line
// continuations, `\t \n \r \f \uXXXX` escapes (as UTF-8) and `\x` for any other x. Values lose surrounding
// whitespace (Kafka's ConfigDef trims them too). A later entry of the same key replaces the earlier one, as
// Properties.load does; the result keeps the order of first appearance. Errors name the line.
absl::StatusOr<std::vector<PropertyEntry>> ParseJavaProperties(std::string_view text);

// Parses a Kafka Connect connector config in JSON: either {"name": N, "config": {...}} (name becomes the entry
// "name" unless the config has one) or a flat object. Values may be strings, numbers or booleans (written as
// Kafka would read them); null entries are dropped. Anything else is an error naming the key.
absl::StatusOr<std::vector<PropertyEntry>> ParseConnectorJson(std::string_view text);

// True when `text`, after leading whitespace, starts a JSON object.
bool LooksLikeJsonObject(std::string_view text);

// False when `text` is a JSON object with no "connector.class", at the top or in "config" (so: some other JSON).
bool MayBeConnectorJson(std::string_view text);

}  // namespace outbox::config::internal
