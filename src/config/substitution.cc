// ${...} references in config values (see substitution.h).
#include "config/substitution.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "common/strings.h"
#include "config/java_properties.h"

namespace outbox::config::internal {
namespace {

constexpr int kMaxDepth = 8;  // SmallRye property references within references

// The '}' closing the '${' whose inside starts at `from` (braces nest), or npos.
size_t MatchingBrace(std::string_view value, size_t from) {
  int open = 1;
  for (size_t i = from; i < value.size(); ++i) {
    if (value[i] == '{') ++open;
    if (value[i] == '}' && --open == 0) return i;
  }
  return std::string_view::npos;
}

// SmallRye's environment variable name for a property: non-alphanumerics to '_', upper case.
std::string EnvName(std::string_view name) {
  std::string out;
  for (char c : name) out.push_back(absl::ascii_isalnum(c) ? absl::ascii_toupper(c) : '_');
  return out;
}

}  // namespace

Substitution::Substitution(const Resolver& resolver, Dialect dialect,
                           const std::map<std::string, std::string>* properties)
    : resolver_(resolver), dialect_(dialect), properties_(properties) {}

absl::StatusOr<std::string> Substitution::Expand(std::string_view value) { return Expand(value, 0); }

absl::StatusOr<std::string> Substitution::Expand(std::string_view value, int depth) {
  if (depth > kMaxDepth) return absl::InvalidArgumentError("references nest too deeply (a cycle?)");
  std::string out;
  size_t i = 0;
  while (i < value.size()) {
    const std::string_view rest = value.substr(i);
    if (dialect_ == Dialect::kDebeziumServer && (rest.starts_with("$${") || rest.starts_with("\\${"))) {
      out.append("${");
      i += 3;
      continue;
    }
    if (!rest.starts_with("${")) {
      out.push_back(value[i++]);
      continue;
    }
    const bool relay_reference = rest.starts_with("${env:") || rest.starts_with("${file:");
    if (dialect_ == Dialect::kRelay && !relay_reference) {  // text, scanned on from after its "${"
      out.append("${");
      i += 2;
      continue;
    }
    const size_t close = MatchingBrace(value, i + 2);
    if (close == std::string_view::npos) {
      if (!relay_reference) return absl::InvalidArgumentError("unterminated ${ reference");
      return absl::InvalidArgumentError(Cat("unterminated ", rest.substr(0, rest.find(':') + 1), " reference"));
    }
    absl::StatusOr<std::string> resolved = Resolve(value.substr(i + 2, close - i - 2), depth);
    if (!resolved.ok()) return resolved.status();
    out.append(*resolved);
    i = close + 1;
  }
  return out;
}

// The inside of ${...}.
absl::StatusOr<std::string> Substitution::Resolve(std::string_view inner, int depth) {
  const size_t colon = inner.find(':');
  const std::string_view head = inner.substr(0, colon);
  const std::string_view tail = colon == std::string_view::npos ? "" : inner.substr(colon + 1);
  const bool relay_only = dialect_ == Dialect::kRelay;
  if (colon != std::string_view::npos && head == "env") return Lookup("env", std::string(tail));
  if (colon != std::string_view::npos && head == "file") {
    const size_t key_colon = tail.rfind(':');
    if (relay_only || key_colon == std::string_view::npos || key_colon == 0) return Lookup("file", std::string(tail));
    return PropertiesFileKey(std::string(tail.substr(0, key_colon)), std::string(tail.substr(key_colon + 1)));
  }
  const std::string as_written = Cat("${", inner, "}");
  if (relay_only || inner == "routedByValue") return as_written;
  if (colon != std::string_view::npos && head == "directory") {
    const size_t file_colon = tail.find(':');
    if (file_colon == std::string_view::npos) return absl::InvalidArgumentError("${directory:DIR:FILE} needs a file");
    return Lookup("file", Cat(tail.substr(0, file_colon), "/", tail.substr(file_colon + 1)));
  }
  if (dialect_ == Dialect::kKafkaConnect) {
    if (colon == std::string_view::npos) return as_written;  // Kafka Connect leaves it as is
    return absl::InvalidArgumentError(
        Cat("config provider \"", head, "\" is not supported (use ${env:NAME}, ${file:PATH} or ${file:PATH:KEY})"));
  }
  // SmallRye: a property of the file, an environment variable, or the default.
  const std::string name(head);
  if (properties_ != nullptr) {
    if (auto it = properties_->find(name); it != properties_->end()) return Expand(it->second, depth + 1);
  }
  for (const std::string& candidate : {name, EnvName(name)}) {
    std::optional<std::string> env = resolver_.env ? resolver_.env(candidate) : std::nullopt;
    if (env.has_value()) {
      if (!env->empty()) secrets_.push_back(*env);
      return *std::move(env);
    }
  }
  if (colon != std::string_view::npos) return Expand(tail, depth + 1);
  return absl::InvalidArgumentError(Cat("cannot expand ${", name, "}: no such property or environment variable"));
}

absl::StatusOr<std::string> Substitution::Lookup(std::string_view kind, const std::string& name) {
  const bool env = kind == "env";
  if (name.empty()) return absl::InvalidArgumentError(Cat("empty ${", kind, ":} reference"));
  const auto& lookup = env ? resolver_.env : resolver_.file;
  std::optional<std::string> value = lookup ? lookup(name) : std::nullopt;
  if (!value.has_value()) {
    return absl::InvalidArgumentError(env ? Cat("environment variable ", name, " is not set")
                                          : Cat("file ", name, " cannot be read"));
  }
  if (!value->empty()) secrets_.push_back(*value);
  return *std::move(value);
}

absl::StatusOr<std::string> Substitution::PropertiesFileKey(const std::string& path, const std::string& key) {
  std::optional<std::string> text = resolver_.file ? resolver_.file(path) : std::nullopt;
  if (!text.has_value()) return absl::InvalidArgumentError(Cat("file ", path, " cannot be read"));
  absl::StatusOr<std::vector<PropertyEntry>> entries = ParseJavaProperties(*text);
  if (!entries.ok()) return absl::InvalidArgumentError(Cat("file ", path, ": ", entries.status().message()));
  for (const PropertyEntry& entry : *entries) {
    if (entry.key != key) continue;
    if (!entry.value.empty()) secrets_.push_back(entry.value);
    return entry.value;
  }
  return absl::InvalidArgumentError(Cat("file ", path, " has no key ", key));
}

}  // namespace outbox::config::internal
