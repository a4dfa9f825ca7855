// Config loading (SPEC.md §3): `--set` overrides, ${env:}/${file:} substitution, defaults and validation, over the
// flat key tree that a YAML file (yaml_tree.cc) or, later, a Debezium properties file becomes. Pure: the environment
// and the file system are reached only through the Resolver.
#include "config/config.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "config/config_internal.h"
#include "common/strings.h"
#include "config/java_regex.h"
#include "config/substitution.h"

namespace outbox::config {
namespace {

using internal::RawTree;
using internal::RawValue;

constexpr absl::string_view kRoutedByValue = "${routedByValue}";
constexpr absl::string_view kKafkaPrefix = "kafka.";
constexpr size_t kMaxIdentifierBytes = 63;  // PostgreSQL's NAMEDATALEN - 1: longer names are truncated
constexpr size_t kMaxTopicLength = 249;

// A value as it appears in an error message: quoted, one line.
std::string Quoted(absl::string_view text) { return absl::StrCat("\"", absl::CHexEscape(text), "\""); }

bool IsLegalTopic(absl::string_view topic) {
  if (topic.empty() || topic.size() > kMaxTopicLength || topic == "." || topic == "..") return false;
  return std::all_of(topic.begin(), topic.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

std::string NotATopic(absl::string_view topic) {
  return absl::StrCat(Quoted(topic), " is not a legal Kafka topic name ([a-zA-Z0-9._-], 1 to 249 characters)");
}

// YAML 1.1 booleans (what yaml-cpp and most YAML users take as true/false), in any case.
std::optional<bool> ParseBool(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

// "a or b", "a, b or c".
std::string OneOf(const std::vector<absl::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  }
  return out;
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

absl::string_view LastSegment(absl::string_view path) {
  size_t dot = path.rfind('.');
  return dot == absl::string_view::npos ? path : path.substr(dot + 1);
}

// Reads typed values out of a RawTree key by key, substituting references, and collects every problem instead of
// stopping at the first, so that one `check` shows them all. It remembers the keys it was asked for: whatever is
// left in the tree is reported as unknown. Single-threaded, used for one load.
class Reader {
 public:
  Reader(RawTree tree, const Resolver& resolver)
      : tree_(std::move(tree)), substitution_(resolver, internal::Dialect::kRelay) {}

  // The substituted value of `key`; nullopt when absent, null, or wrong (then the error is recorded).
  std::optional<std::string> Scalar(absl::string_view key) {
    const RawValue* raw = Find(key);
    if (raw == nullptr || raw->kind == RawValue::Kind::kNull) return std::nullopt;
    if (raw->kind == RawValue::Kind::kList) {
      Error(key, "expected a single value, got a list");
      return std::nullopt;
    }
    return Resolve(key, raw->scalar);
  }

  void String(absl::string_view key, std::string* out) {
    if (std::optional<std::string> value = Scalar(key)) *out = *std::move(value);
  }

  void Required(absl::string_view key, std::string* out) {
    const size_t errors_before = errors_.size();
    String(key, out);
    if (out->empty() && errors_.size() == errors_before) Error(key, "required");
  }

  void Bool(absl::string_view key, bool* out) {
    std::optional<std::string> value = Scalar(key);
    if (!value.has_value()) return;
    std::optional<bool> parsed = ParseBool(*value);
    if (!parsed.has_value()) return Error(key, absl::StrCat("must be true or false, got ", Quoted(*value)));
    *out = *parsed;
  }

  // An integer >= `min` (durations in ms, byte sizes and counts: no units).
  void Int(absl::string_view key, int64_t min, int64_t* out) {
    std::optional<std::string> value = Scalar(key);
    if (!value.has_value()) return;
    int64_t parsed = 0;
    if (!absl::SimpleAtoi(*value, &parsed) || parsed < min) {
      const std::string expected =
          min == 1 ? "must be a positive integer" : absl::StrCat("must be an integer >= ", min);
      return Error(key, absl::StrCat(expected, ", got ", Quoted(*value)));
    }
    *out = parsed;
  }

  template <typename E, size_t N>
  void Enum(absl::string_view key, const internal::EnumName<E> (&choices)[N], E* out) {
    std::optional<std::string> value = Scalar(key);
    if (!value.has_value()) return;
    std::vector<absl::string_view> names;
    for (const auto& [name, choice] : choices) {
      if (*value == name) {
        *out = choice;
        return;
      }
      names.push_back(name);
    }
    Error(key, absl::StrCat("must be ", OneOf(names), ", got ", Quoted(*value)));
  }

  // Every key below `prefix` ("outbox.column_mappers."), whose names the config does not know in advance: the name
  // after the prefix -> its substituted value (keys with no value or a wrong one left out, the error recorded).
  std::map<std::string, std::string> Below(absl::string_view prefix) {
    std::vector<std::string> paths;
    for (const auto& [path, raw] : tree_) {
      if (absl::StartsWith(path, prefix) && path.size() > prefix.size()) paths.push_back(path);
    }
    std::map<std::string, std::string> out;
    for (const std::string& path : paths) {
      if (std::optional<std::string> value = Scalar(path)) out[path.substr(prefix.size())] = *std::move(value);
    }
    return out;
  }

  // A YAML list, or one string of comma-separated entries (the form `--set` gives).
  void List(absl::string_view key, std::vector<std::string>* out) {
    const RawValue* raw = Find(key);
    if (raw == nullptr || raw->kind == RawValue::Kind::kNull) return;
    std::vector<std::string> entries;
    if (raw->kind == RawValue::Kind::kList) {
      for (const std::string& entry : raw->list) {
        std::optional<std::string> value = Resolve(key, entry);
        if (!value.has_value()) return;
        entries.push_back(*std::move(value));
      }
    } else {
      std::optional<std::string> value = Resolve(key, raw->scalar);
      if (!value.has_value()) return;
      for (absl::string_view entry : absl::StrSplit(*value, ',', absl::SkipWhitespace())) {
        entries.emplace_back(absl::StripAsciiWhitespace(entry));
      }
    }
    *out = std::move(entries);
  }

  // Every kafka.* key, as librdkafka property name -> value. Plain YAML booleans become "true"/"false", lists are
  // joined with commas (`bootstrap.servers: [a:9092, b:9092]`), everything else is kept as written.
  void Kafka(std::map<std::string, std::string>* out) {
    for (const auto& [path, raw] : tree_) {
      if (!absl::StartsWith(path, kKafkaPrefix)) continue;
      const std::string name = path.substr(kKafkaPrefix.size());
      if (name.empty()) {
        Error("kafka", "empty property name");
        continue;
      }
      std::optional<std::string> value;
      switch (raw.kind) {
        case RawValue::Kind::kNull:
          continue;
        case RawValue::Kind::kScalar: {
          const std::optional<bool> flag = raw.plain ? ParseBool(raw.scalar) : std::nullopt;
          if (flag.has_value()) {
            value = *flag ? "true" : "false";
          } else {
            value = Resolve(path, raw.scalar);
          }
          break;
        }
        case RawValue::Kind::kList: {
          std::vector<std::string> entries;
          for (const std::string& entry : raw.list) {
            std::optional<std::string> resolved = Resolve(path, entry);
            if (!resolved.has_value()) break;
            entries.push_back(*std::move(resolved));
          }
          if (entries.size() == raw.list.size()) value = absl::StrJoin(entries, ",");
          break;
        }
      }
      if (value.has_value()) (*out)[name] = *std::move(value);
    }
  }

  void Error(absl::string_view key, absl::string_view problem) { errors_.push_back(absl::StrCat(key, ": ", problem)); }

  std::vector<std::string>& secrets() { return substitution_.secrets(); }
  const std::set<std::string, std::less<>>& known() const { return known_; }

  // Problems with keys nobody asked for (first: a typo explains a "required" below it), then those found reading.
  std::vector<std::string> Problems() const {
    std::vector<std::string> problems;
    std::set<std::string, std::less<>> reported;
    for (const auto& [path, raw] : tree_) {
      if (absl::StartsWith(path, kKafkaPrefix) || known_.contains(path)) continue;
      if (path == "kafka" || IsSection(path)) {
        if (raw.kind != RawValue::Kind::kNull) problems.push_back(absl::StrCat(path, ": expected a map, got a value"));
        continue;
      }
      if (std::optional<std::string> parent = KnownAncestor(path)) {
        if (reported.insert(*parent).second) problems.push_back(absl::StrCat(*parent, ": expected a value, got a map"));
        continue;
      }
      problems.push_back(UnknownKey(path));
    }
    problems.insert(problems.end(), errors_.begin(), errors_.end());
    return problems;
  }

 private:
  const RawValue* Find(absl::string_view key) {
    known_.emplace(key);
    auto it = tree_.find(std::string(key));
    return it == tree_.end() ? nullptr : &it->second;
  }

  std::optional<std::string> Resolve(absl::string_view key, const std::string& value) {
    absl::StatusOr<std::string> resolved = substitution_.Expand(value);
    if (!resolved.ok()) {
      Error(key, resolved.status().message());
      return std::nullopt;
    }
    return *std::move(resolved);
  }

  // "source", "outbox.fields": a map of known keys.
  bool IsSection(absl::string_view path) const {
    return std::any_of(known_.begin(), known_.end(),
                       [&](const std::string& key) { return absl::StartsWith(key, absl::StrCat(path, ".")); });
  }

  // "source.slot" for "source.slot.name": a known key given a map.
  std::optional<std::string> KnownAncestor(absl::string_view path) const {
    for (const std::string& key : known_) {
      if (absl::StartsWith(path, absl::StrCat(key, "."))) return key;
    }
    return std::nullopt;
  }

  std::string UnknownKey(absl::string_view path) const {
    std::string message = absl::StrCat("unknown key ", Quoted(path));
    const std::string* best = nullptr;
    size_t best_distance = 3;  // suggest only near misses
    for (const std::string& key : known_) {
      size_t distance = LastSegment(key) == LastSegment(path) ? 1 : EditDistance(key, path);
      if (distance < best_distance) {
        best = &key;
        best_distance = distance;
      }
    }
    if (best != nullptr) absl::StrAppend(&message, " (did you mean ", Quoted(*best), "?)");
    return message;
  }

  RawTree tree_;
  internal::Substitution substitution_;       // the relay's ${env:} and ${file:}; holds what they resolved to
  std::set<std::string, std::less<>> known_;  // every key asked for
  std::vector<std::string> errors_;
};

void ReadSource(Reader& r, SourceConfig* source) {
  r.Required("source.conninfo", &source->conninfo);
  r.Required("source.slot", &source->slot);
  r.Required("source.publication", &source->publication);
  r.Bool("source.create_slot", &source->create_slot);
  r.Bool("source.failover", &source->failover);
  r.Enum("source.checkpoint", internal::kCheckpointStores, &source->checkpoint);
  r.String("source.checkpoint_topic", &source->checkpoint_topic);
  r.String("source.checkpoint_file", &source->checkpoint_file);
  r.String("source.instance", &source->instance);
  r.Int("source.status_interval_ms", 10, &source->status_interval_ms);
  r.Int("source.read_batch_us", 0, &source->read_batch_us);
  r.Int("source.receive_buffer_bytes", 0, &source->receive_buffer_bytes);
  r.Int("source.receive_timeout_ms", 1000, &source->receive_timeout_ms);
  r.Int("source.slot_check_ms", 100, &source->slot_check_ms);
  r.Bool("source.messages", &source->messages);
  r.List("source.message_prefixes", &source->message_prefixes);
  r.Bool("source.streaming", &source->streaming);
  r.String("source.spill_dir", &source->spill_dir);
}

void ValidateSource(const SourceConfig& source, Reader& r) {
  if (source.messages && source.streaming) {
    r.Error("source.messages",
            "cannot be used with source.streaming: PostgreSQL streams a logical message written in a savepoint with "
            "its top-level transaction's xid, so a message of a savepoint that rolls back could not be dropped and "
            "would be published; turn one of them off");
  }
  if (source.receive_timeout_ms < 2 * source.status_interval_ms) {
    r.Error("source.receive_timeout_ms",
            absl::StrCat(source.receive_timeout_ms, " is less than twice source.status_interval_ms (",
                         source.status_interval_ms, "): the relay's own pings could not keep a healthy stream alive"));
  }
  if (source.read_batch_us > SourceConfig::kMaxReadBatchUs) {
    r.Error("source.read_batch_us", absl::StrCat(source.read_batch_us, " is more than ", SourceConfig::kMaxReadBatchUs,
                                                 " (100 ms): every change would wait that long to be read"));
  }
  if (source.receive_buffer_bytes != 0 && (source.receive_buffer_bytes < SourceConfig::kMinReceiveBufferBytes ||
                                           source.receive_buffer_bytes > SourceConfig::kMaxReceiveBufferBytes)) {
    r.Error("source.receive_buffer_bytes",
            absl::StrCat(source.receive_buffer_bytes, " is not 0 (the kernel's default) or between ",
                         SourceConfig::kMinReceiveBufferBytes, " and ", SourceConfig::kMaxReceiveBufferBytes,
                         " (256 MiB)"));
  }
  if (!source.slot.empty()) {
    if (!std::all_of(source.slot.begin(), source.slot.end(),
                     [](char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_'; })) {
      r.Error("source.slot", absl::StrCat(Quoted(source.slot), " may contain only [a-z0-9_]"));
    } else if (source.slot.size() > kMaxIdentifierBytes) {
      r.Error("source.slot", absl::StrCat(Quoted(source.slot), " is longer than 63 characters"));
    }
  }
  if (source.publication.size() > kMaxIdentifierBytes) {
    r.Error("source.publication", absl::StrCat(Quoted(source.publication), " is longer than 63 bytes"));
  }
  if (source.create_slot && source.checkpoint == CheckpointStore::kNone) {
    r.Error("source.create_slot",
            "cannot be true with source.checkpoint: none (without a checkpoint every start looks like a first "
            "start, so a lost slot would be silently recreated)");
  }
  if (source.checkpoint == CheckpointStore::kFile && source.checkpoint_file.empty()) {
    r.Error("source.checkpoint_file", "required when source.checkpoint is file");
  }
  if (source.checkpoint == CheckpointStore::kKafka && !IsLegalTopic(source.checkpoint_topic)) {
    r.Error("source.checkpoint_topic", NotATopic(source.checkpoint_topic));
  }
  if (absl::StrContains(source.instance, '/')) {
    r.Error("source.instance", absl::StrCat(Quoted(source.instance), " may not contain \"/\" (checkpoint keys are "
                                                                     "<system identifier>/<slot>/<instance>)"));
  }
  if (std::any_of(source.message_prefixes.begin(), source.message_prefixes.end(),
                  [](const std::string& prefix) { return prefix.empty(); })) {
    r.Error("source.message_prefixes", "entries must not be empty");
  }
}

// "column:header[:name]", "column:envelope[:name]" or "column:partition" (Debezium's table.fields.additional.placement
// entry). The error text omits the key.
absl::StatusOr<AdditionalField> ParseAdditionalField(absl::string_view entry) {
  std::vector<std::string> parts = absl::StrSplit(entry, ':');
  for (std::string& part : parts) absl::StripAsciiWhitespace(&part);
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || (parts.size() == 3 && parts[2].empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(entry), " must be column:header[:name], column:envelope[:name] or column:partition"));
  }
  const std::string placement = absl::AsciiStrToLower(parts[1]);
  if (placement != "header" && placement != "envelope" && placement != "partition") {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(entry), ": placement must be header, envelope or partition, got ", Quoted(parts[1])));
  }
  return AdditionalField{.column = parts[0], .placement = placement, .name = parts.size() == 3 ? parts[2] : parts[0]};
}


}  // namespace

std::string_view OpenSslDigestName(std::string_view java_name) {
  // Java's SUN provider's names and aliases; MessageDigest.getInstance ignores their case.
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"MD5", "MD5"},           {"SHA", "SHA1"},          {"SHA1", "SHA1"},         {"SHA-1", "SHA1"},
      {"SHA-224", "SHA224"},    {"SHA224", "SHA224"},     {"SHA-256", "SHA256"},    {"SHA256", "SHA256"},
      {"SHA-384", "SHA384"},    {"SHA384", "SHA384"},     {"SHA-512", "SHA512"},    {"SHA512", "SHA512"},
      {"SHA-512/224", "SHA512-224"}, {"SHA512/224", "SHA512-224"}, {"SHA-512/256", "SHA512-256"},
      {"SHA512/256", "SHA512-256"},  {"SHA3-224", "SHA3-224"},     {"SHA3-256", "SHA3-256"},
      {"SHA3-384", "SHA3-384"},      {"SHA3-512", "SHA3-512"},
  };
  const std::string upper = absl::AsciiStrToUpper(ToAbsl(java_name));
  for (const auto& [java, openssl] : kNames) {
    if (upper == java) return openssl;
  }
  return "";
}

std::string UnknownDigest(std::string_view java_name) {
  return absl::StrCat("no digest ", Quoted(ToAbsl(java_name)),
                      ": the relay has Java's MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, "
                      "SHA-512/256 and SHA3-224 to SHA3-512 (MD2 is not reproduced; with a name Java does not know, "
                      "Debezium's task fails)");
}

namespace {

}  // namespace

bool ParseColumnMapperName(std::string_view name, ColumnMapperRule* rule) {
  const auto chars = [&](std::string_view head, std::string_view tail) -> std::optional<int64_t> {
    if (!name.starts_with(head) || !name.ends_with(tail) || name.size() <= head.size() + tail.size()) {
      return std::nullopt;
    }
    const std::string_view digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    int64_t n = 0;
    if (!std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(ToAbsl(digits), &n) || n > INT32_MAX) {
      return std::nullopt;
    }
    return n;
  };
  // mask.hash[.v2].<algorithm>.with.salt.<salt>: the algorithm has no dot, the salt is the rest.
  const auto hash = [&](std::string_view head) {
    if (!name.starts_with(head)) return false;
    constexpr std::string_view kWith = ".with.salt.";
    const std::string_view rest = name.substr(head.size());
    const size_t with = rest.find(kWith);
    if (with == 0 || with == std::string_view::npos || rest.substr(0, with).find('.') != std::string_view::npos ||
        with + kWith.size() == rest.size()) {
      return false;
    }
    rule->algorithm = std::string(rest.substr(0, with));
    rule->salt = std::string(rest.substr(with + kWith.size()));
    return true;
  };
  if (std::optional<int64_t> n = chars("truncate.to.", ".chars")) {
    rule->kind = ColumnMapperRule::Kind::kTruncate;
    rule->chars = *n;
  } else if (std::optional<int64_t> n = chars("mask.with.", ".chars")) {
    rule->kind = ColumnMapperRule::Kind::kMask;
    rule->chars = *n;
  } else if (hash("mask.hash.v2.")) {
    rule->kind = ColumnMapperRule::Kind::kHashV2;
  } else if (hash("mask.hash.")) {
    rule->kind = ColumnMapperRule::Kind::kHash;
  } else {
    return false;
  }
  return true;
}

namespace {

// outbox.column_mappers.<name>: <pattern list>, the names Debezium's column.<name> keys have (ParseColumnMapperName).
void ReadColumnMappers(OutboxConfig* outbox, Reader& r) {
  constexpr absl::string_view kPrefix = "outbox.column_mappers.";
  for (auto& [name, columns] : r.Below(kPrefix)) {
    const std::string key = absl::StrCat(kPrefix, name);
    ColumnMapperRule rule;
    rule.key = key;
    rule.columns = columns;
    if (!ParseColumnMapperName(name, &rule)) {
      r.Error(key, "expected truncate.to.<N>.chars, mask.with.<N>.chars, mask.hash.<algorithm>.with.salt.<salt> or "
                   "mask.hash.v2.<algorithm>.with.salt.<salt> after outbox.column_mappers.");
      continue;
    }
    if (absl::StatusOr<std::vector<RouteRegex>> patterns = CompileDebeziumPatternList(columns); !patterns.ok()) {
      r.Error(key, patterns.status().message());
      continue;
    }
    if ((rule.kind == ColumnMapperRule::Kind::kHash || rule.kind == ColumnMapperRule::Kind::kHashV2) &&
        OpenSslDigestName(rule.algorithm).empty()) {
      r.Error(key, UnknownDigest(rule.algorithm));
      continue;
    }
    outbox->column_mappers.push_back(std::move(rule));
  }
}

void ReadOutbox(Reader& r, OutboxConfig* outbox) {
  r.String("outbox.table", &outbox->table);
  r.String("outbox.fields.id", &outbox->fields.id);
  r.String("outbox.fields.key", &outbox->fields.key);
  r.String("outbox.fields.type", &outbox->fields.type);
  r.String("outbox.fields.payload", &outbox->fields.payload);
  std::string timestamp;
  r.String("outbox.fields.timestamp", &timestamp);
  if (!timestamp.empty()) outbox->fields.timestamp = timestamp;
  std::string tracing;
  r.String("outbox.fields.tracing_span_context", &tracing);
  if (!tracing.empty()) outbox->fields.tracing_span_context = tracing;
  r.Bool("outbox.fields.tracing_span_context_if_present", &outbox->fields.tracing_span_context_if_present);
  std::string schema_version;
  r.String("outbox.fields.schema_version", &schema_version);
  if (!schema_version.empty()) outbox->fields.schema_version = schema_version;
  std::vector<std::string> additional;
  r.List("outbox.fields.additional", &additional);
  r.Bool("outbox.fields.additional_if_present", &outbox->fields.additional_if_present);
  for (const std::string& entry : additional) {
    absl::StatusOr<AdditionalField> field = ParseAdditionalField(entry);
    if (field.ok()) {
      outbox->fields.additional.push_back(*std::move(field));
    } else {
      r.Error("outbox.fields.additional", field.status().message());
    }
  }
  r.String("outbox.route.by", &outbox->route_by);
  const std::optional<std::string> topic_set = r.Scalar("outbox.route.topic");
  if (topic_set) outbox->route_topic = *topic_set;
  r.String("outbox.route.topic_regex", &outbox->route_topic_regex);
  r.String("outbox.route.topic_replacement", &outbox->route_topic_replacement);
  // Debezium's route.topic.regex and route.topic.replacement, with Java's meaning (java_regex.h), instead of the
  // template: what a Debezium file's routing becomes when no template can say it.
  if (!outbox->route_topic_regex.empty() || !outbox->route_topic_replacement.empty()) {
    if (topic_set) {
      r.Error("outbox.route.topic_regex", "set either outbox.route.topic or outbox.route.topic_regex with "
                                          "outbox.route.topic_replacement, not both");
    } else if (outbox->route_topic_regex.empty()) {
      r.Error("outbox.route.topic_regex", "required with outbox.route.topic_replacement");
    } else if (outbox->route_topic_replacement.empty()) {
      r.Error("outbox.route.topic_replacement", "required with outbox.route.topic_regex");
    } else if (absl::StatusOr<RouteRegex> regex = RouteRegex::Compile(outbox->route_topic_regex); !regex.ok()) {
      r.Error("outbox.route.topic_regex",
              absl::StrCat(Quoted(outbox->route_topic_regex), ": ", regex.status().message()));
    } else if (absl::Status st = regex->SetReplacement(outbox->route_topic_replacement); !st.ok()) {
      r.Error("outbox.route.topic_replacement",
              absl::StrCat(Quoted(outbox->route_topic_replacement), ": ", st.message()));
    }
  }
  r.Enum("outbox.on_update", internal::kOnUpdates, &outbox->on_update);
  r.Bool("outbox.tombstone_on_empty_payload", &outbox->tombstone_on_empty_payload);
  r.Enum("outbox.format", internal::kFormats, &outbox->format);
  r.Enum("outbox.header_values", internal::kHeaderValues, &outbox->header_values);
  r.Enum("outbox.key_converter", internal::kConverters, &outbox->key_converter);
  r.Enum("outbox.value_converter", internal::kConverters, &outbox->value_converter);
  r.Enum("outbox.string_converter_values", internal::kStringValues, &outbox->string_converter_values);
  r.Bool("outbox.key_converter_binary", &outbox->key_converter_binary);
  r.Bool("outbox.value_converter_binary", &outbox->value_converter_binary);
  r.Bool("outbox.expand_json_payload", &outbox->expand_json_payload);
  r.Enum("outbox.json_payload_null_behavior", internal::kJsonNullBehaviors, &outbox->json_payload_null_behavior);
  r.Enum("outbox.json_payload_empty_array_behavior", internal::kJsonEmptyArrayBehaviors,
         &outbox->json_payload_empty_array_behavior);
  r.Enum("outbox.json_payload_field_name_adjustment", internal::kFieldNameAdjustments,
         &outbox->json_payload_field_name_adjustment);
  r.String("outbox.debezium_context_logical_name", &outbox->debezium_context_logical_name);
  r.String("outbox.envelope_schema_name", &outbox->envelope_schema_name);
  r.Bool("outbox.null_as_column_default", &outbox->null_as_column_default);
  r.Bool("outbox.include_unknown_datatypes", &outbox->include_unknown_datatypes);
  r.Enum("outbox.decimal_handling_mode", internal::kDecimalHandlings, &outbox->decimal_handling_mode);
  r.Enum("outbox.time_precision_mode", internal::kTimePrecisions, &outbox->time_precision_mode);
  r.Enum("outbox.interval_handling_mode", internal::kIntervalHandlings, &outbox->interval_handling_mode);
  r.Enum("outbox.binary_handling_mode", internal::kBinaryHandlings, &outbox->binary_handling_mode);
  r.Enum("outbox.hstore_handling_mode", internal::kHstoreHandlings, &outbox->hstore_handling_mode);
  r.Enum("outbox.event_converting_failure_handling_mode", internal::kConvertingFailures,
         &outbox->event_converting_failure_handling_mode);
  r.Int("outbox.money_fraction_digits", 0, &outbox->money_fraction_digits);
  if (outbox->money_fraction_digits > 1000) r.Error("outbox.money_fraction_digits", "must be at most 1000");
  r.String("outbox.propagate_source_type.columns", &outbox->propagate_source_type_columns);
  r.String("outbox.propagate_source_type.datatypes", &outbox->propagate_source_type_datatypes);
  ReadColumnMappers(outbox, r);
}

void ValidateOutbox(OutboxConfig* outbox, Reader& r) {
  if (outbox->format != Format::kRaw) {
    // The other formats write the key and the payload's text (a Debezium file's debezium does not carry over to
    // --set outbox.format).
    outbox->string_converter_values = StringValues::kText;
    if (outbox->key_converter != Converter::kString) r.Error("outbox.key_converter", "only with outbox.format: raw");
    if (outbox->value_converter != Converter::kString) {
      r.Error("outbox.value_converter", "only with outbox.format: raw");
    }
    if (outbox->key_converter_binary) r.Error("outbox.key_converter_binary", "only with outbox.format: raw");
    if (outbox->value_converter_binary) r.Error("outbox.value_converter_binary", "only with outbox.format: raw");
    if (outbox->expand_json_payload) r.Error("outbox.expand_json_payload", "only with outbox.format: raw");
    if (outbox->HasEnvelope()) {
      r.Error("outbox.fields.additional", "placement envelope only with outbox.format: raw (the value is the envelope)");
    }
  }
  if (outbox->HasEnvelope() && outbox->value_converter == Converter::kBytes) {
    r.Error("outbox.value_converter", "bytes (ByteArrayConverter) cannot write the envelope of placement envelope, "
                                      "as Kafka Connect's fails on it");
  }
  const bool json_schema = outbox->key_converter == Converter::kJsonSchema ||
                           outbox->value_converter == Converter::kJsonSchema ||
                           outbox->header_values == HeaderValues::kJsonSchema;
  for (const auto& [key, list] :
       {std::pair<absl::string_view, const std::string*>{"outbox.propagate_source_type.columns",
                                                        &outbox->propagate_source_type_columns},
        {"outbox.propagate_source_type.datatypes", &outbox->propagate_source_type_datatypes}}) {
    if (list->empty()) continue;
    if (!json_schema) {
      r.Error(key, "only with a json_schema converter (outbox.key_converter, outbox.value_converter or "
                   "outbox.header_values): it adds to the schemas they write");
      continue;
    }
    if (absl::StatusOr<std::vector<RouteRegex>> patterns = CompileDebeziumPatternList(*list); !patterns.ok()) {
      r.Error(key, patterns.status().message());
    }
  }
  if (outbox->fields.schema_version && !outbox->HasEnvelope()) {
    r.Error("outbox.fields.schema_version", "only with placement envelope (it versions the envelope's schema)");
  }
  if (outbox->envelope_schema_name.empty()) {
    outbox->envelope_schema_name = absl::StrCat(outbox->table.find('.') == std::string::npos ? "public." : "",
                                                outbox->table, ".", kRoutedByValue, ".Value");
  }
  std::vector<absl::string_view> parts = absl::StrSplit(outbox->table, '.');
  if (parts.size() > 2 || std::any_of(parts.begin(), parts.end(), [](absl::string_view p) { return p.empty(); })) {
    r.Error("outbox.table", absl::StrCat(Quoted(outbox->table), " must be table or schema.table"));
  } else if (parts.size() == 1) {
    outbox->table = absl::StrCat("public.", outbox->table);
  }
  auto non_empty = [&r](absl::string_view key, const std::string& value) {
    if (value.empty()) r.Error(key, "must not be empty");
  };
  non_empty("outbox.fields.id", outbox->fields.id);
  non_empty("outbox.fields.key", outbox->fields.key);
  non_empty("outbox.fields.type", outbox->fields.type);
  non_empty("outbox.fields.payload", outbox->fields.payload);
  non_empty("outbox.route.by", outbox->route_by);
  // Checked where outbox.route.topic_regex was read (ReadOutbox).
  if (!outbox->route_topic_regex.empty()) return;
  const std::string& topic = outbox->route_topic;
  if (absl::StrContains(topic, kRoutedByValue)) {
    // Literal text around the placeholder that no routed value can make legal.
    if (!IsLegalTopic(absl::StrReplaceAll(topic, {{kRoutedByValue, "x"}}))) {
      r.Error("outbox.route.topic",
              absl::StrCat(Quoted(topic), " can never give a legal Kafka topic name ([a-zA-Z0-9._-], 1 to 249 "
                                          "characters) whatever ${routedByValue} is"));
    }
  } else if (!IsLegalTopic(topic)) {
    r.Error("outbox.route.topic",
            absl::StrCat(Quoted(topic), " is neither a template with ${routedByValue} nor a legal Kafka topic name"));
  }
}

void ReadDelivery(Reader& r, DeliveryConfig* delivery) {
  r.Int("delivery.max_inflight_bytes", 1, &delivery->max_inflight_bytes);
  r.Int("delivery.max_inflight_events", 1, &delivery->max_inflight_events);
  r.Int("delivery.release_slot_after_ms", 1, &delivery->release_slot_after_ms);
  r.Int("delivery.shutdown_timeout_ms", 1, &delivery->shutdown_timeout_ms);
  r.Enum("delivery.on_error", internal::kOnErrors, &delivery->on_error);
  r.String("delivery.dead_letter_topic", &delivery->dead_letter_topic);
  r.Bool("delivery.unsafe", &delivery->unsafe);
  r.Enum("delivery.guarantee", internal::kGuarantees, &delivery->guarantee);
  r.Int("delivery.transaction_interval_ms", 1, &delivery->transaction_interval_ms);
  if (!IsLegalTopic(delivery->dead_letter_topic)) {
    r.Error("delivery.dead_letter_topic", NotATopic(delivery->dead_letter_topic));
  }
}

// delivery.guarantee: exactly_once needs the Kafka sink, the checkpoint in Kafka (it commits with the records),
// and the guarantee's checks; the producer settings that contradict it are refused by BuildProducerConfig.
void ValidateGuarantee(const PipelineConfig& config, Reader& r) {
  if (config.delivery.guarantee != Guarantee::kExactlyOnce) return;
  constexpr absl::string_view key = "delivery.guarantee";
  if (config.sink != SinkType::kKafka) {
    r.Error(key, Cat("exactly_once needs sink.type: kafka (Kafka transactions), not ",
                              internal::NameOf(internal::kSinkTypes, config.sink)));
  }
  if (config.source.checkpoint != CheckpointStore::kKafka) {
    r.Error(key, Cat("exactly_once needs source.checkpoint: kafka (the checkpoint commits in the same Kafka "
                              "transaction as the records), not ",
                              internal::NameOf(internal::kCheckpointStores, config.source.checkpoint)));
  }
  if (config.delivery.unsafe) {
    r.Error(key, "exactly_once cannot be used with delivery.unsafe: true (the guarantee rests on the settings it "
                 "would let through)");
  }
  if (config.source.streaming) {
    r.Error(key, "exactly_once cannot be used with source.streaming: true yet (a streamed transaction's replay is "
                 "not split across Kafka transactions)");
  }
}

void ReadKafka(Reader& r, std::map<std::string, std::string>* kafka) {
  r.Kafka(kafka);
  auto servers = kafka->find("bootstrap.servers");
  auto broker_list = kafka->find("metadata.broker.list");  // librdkafka's alias
  if ((servers == kafka->end() || servers->second.empty()) &&
      (broker_list == kafka->end() || broker_list->second.empty())) {
    r.Error("kafka.bootstrap.servers", "required");
  }
}

// The rabbitmq.* keys; required ones only when sink.type is rabbitmq.
void ReadRabbitMq(Reader& r, PipelineConfig* config) {
  RabbitMqConfig& q = config->rabbitmq;
  r.String("rabbitmq.url", &q.url);
  r.String("rabbitmq.user", &q.user);
  r.String("rabbitmq.password", &q.password);
  r.String("rabbitmq.exchange", &q.exchange);
  r.String("rabbitmq.routing_key", &q.routing_key);
  r.String("rabbitmq.dead_letter_exchange", &q.dead_letter_exchange);
  r.String("rabbitmq.content_type", &q.content_type);
  r.String("rabbitmq.tls.ca", &q.tls_ca);
  r.String("rabbitmq.tls.cert", &q.tls_cert);
  r.String("rabbitmq.tls.key", &q.tls_key);
  r.Bool("rabbitmq.tls.verify", &q.tls_verify);
  r.Int("rabbitmq.heartbeat_s", 0, &q.heartbeat_s);
  r.Int("rabbitmq.connect_timeout_ms", 1, &q.connect_timeout_ms);
  if (config->sink != SinkType::kRabbitMq) return;
  if (q.url.empty()) r.Error("rabbitmq.url", "required when sink.type is rabbitmq");
  if (!q.url.empty() && !absl::StartsWith(q.url, "amqp://") && !absl::StartsWith(q.url, "amqps://")) {
    r.Error("rabbitmq.url", "must start with amqp:// or amqps://");
  }
  if (q.exchange.empty()) r.Error("rabbitmq.exchange", "required when sink.type is rabbitmq");
  if (q.routing_key.empty()) r.Error("rabbitmq.routing_key", "must not be empty");
  if (q.tls_cert.empty() != q.tls_key.empty()) {
    r.Error(q.tls_cert.empty() ? "rabbitmq.tls.cert" : "rabbitmq.tls.key",
            "rabbitmq.tls.cert and rabbitmq.tls.key go together");
  }
}

// http_sink.*, checked when sink.type is http.
void ReadHttpSink(Reader& r, PipelineConfig* config) {
  HttpSinkConfig& h = config->http_sink;
  r.String("http_sink.url", &h.url);
  r.String("http_sink.content_type", &h.content_type);
  r.String("http_sink.key_header", &h.key_header);
  r.Int("http_sink.timeout_ms", 1, &h.timeout_ms);
  r.Int("http_sink.connect_timeout_ms", 1, &h.connect_timeout_ms);
  r.Int("http_sink.max_in_flight", 1, &h.max_in_flight);
  r.Int("http_sink.batch_max_events", 1, &h.batch_max_events);
  r.Int("http_sink.retry_backoff_ms", 1, &h.retry_backoff_ms);
  r.Int("http_sink.retry_backoff_max_ms", 1, &h.retry_backoff_max_ms);
  r.Int("http_sink.retry_after_max_ms", 0, &h.retry_after_max_ms);
  r.String("http_sink.bearer_token", &h.bearer_token);
  r.String("http_sink.user", &h.user);
  r.String("http_sink.password", &h.password);
  r.String("http_sink.tls.ca", &h.tls_ca);
  r.String("http_sink.tls.cert", &h.tls_cert);
  r.String("http_sink.tls.key", &h.tls_key);
  r.String("http_sink.check_url", &h.check_url);
  if (config->sink != SinkType::kHttp) return;
  const auto is_http_url = [](absl::string_view u) {
    return absl::StartsWith(u, "http://") || absl::StartsWith(u, "https://");
  };
  if (h.url.empty()) {
    r.Error("http_sink.url", "required when sink.type is http");
  } else if (!is_http_url(h.url)) {
    r.Error("http_sink.url", absl::StrCat("must start with http:// or https://, got ", Quoted(h.url)));
  }
  if (!h.check_url.empty() && !is_http_url(h.check_url)) {
    r.Error("http_sink.check_url", absl::StrCat("must start with http:// or https://, got ", Quoted(h.check_url)));
  }
  if (absl::StrContains(h.url, kRoutedByValue) && !config->outbox.route_topic_regex.empty()) {
    r.Error("http_sink.url", "${routedByValue} needs outbox.route.topic as a template (not a regex replacement): "
                             "use ${topic}");
  }
  if (absl::StrContains(h.url, kRoutedByValue) && config->outbox.route_topic_regex.empty()) {
    const std::vector<absl::string_view> parts = absl::StrSplit(config->outbox.route_topic, kRoutedByValue);
    if (parts.size() != 2) {
      r.Error("http_sink.url", absl::StrCat("${routedByValue} needs outbox.route.topic to hold it exactly once (got ",
                                            Quoted(config->outbox.route_topic), "): use ${topic}"));
    }
  }
  if (h.retry_backoff_max_ms < h.retry_backoff_ms) {
    r.Error("http_sink.retry_backoff_max_ms", "must be at least http_sink.retry_backoff_ms");
  }
  if (!h.password.empty() && h.user.empty()) r.Error("http_sink.password", "needs http_sink.user");
  if (!h.bearer_token.empty() && !h.user.empty()) {
    r.Error("http_sink.bearer_token", "give one of http_sink.bearer_token or http_sink.user/http_sink.password");
  }
  if (h.tls_cert.empty() != h.tls_key.empty()) {
    r.Error(h.tls_cert.empty() ? "http_sink.tls.cert" : "http_sink.tls.key",
            "http_sink.tls.cert and http_sink.tls.key go together");
  }
}

// The nats.* keys; required ones only when sink.type is nats.
void ReadNats(Reader& r, PipelineConfig* config) {
  NatsConfig& n = config->nats;
  r.String("nats.url", &n.url);
  r.String("nats.stream", &n.stream);
  r.String("nats.user", &n.user);
  r.String("nats.password", &n.password);
  r.String("nats.token", &n.token);
  r.String("nats.creds", &n.creds);
  r.String("nats.tls.ca", &n.tls_ca);
  r.String("nats.tls.cert", &n.tls_cert);
  r.String("nats.tls.key", &n.tls_key);
  r.String("nats.tls.hostname", &n.tls_hostname);
  r.Int("nats.ack_timeout_ms", 1, &n.ack_timeout_ms);
  r.Int("nats.connect_timeout_ms", 1, &n.connect_timeout_ms);
  if (config->sink != SinkType::kNats) return;
  if (n.url.empty()) r.Error("nats.url", "required when sink.type is nats");
  if (n.stream.empty()) r.Error("nats.stream", "required when sink.type is nats");
  const bool has_user = !n.user.empty() || !n.password.empty();
  if (!n.password.empty() && n.user.empty()) r.Error("nats.password", "needs nats.user");
  if (int(has_user) + int(!n.token.empty()) + int(!n.creds.empty()) > 1) {
    r.Error("nats.token", "give one of nats.user/nats.password, nats.token or nats.creds");
  }
  if (n.tls_cert.empty() != n.tls_key.empty()) {
    r.Error(n.tls_cert.empty() ? "nats.tls.cert" : "nats.tls.key", "nats.tls.cert and nats.tls.key go together");
  }
}

// sink.type and every sink's keys. Only the kafka sink needs kafka settings, and only with it can the checkpoint live
// in Kafka.
void ReadSink(Reader& r, PipelineConfig* config) {
  r.Enum("sink.type", internal::kSinkTypes, &config->sink);
  ReadNats(r, config);
  ReadRabbitMq(r, config);
  ReadHttpSink(r, config);
  if (config->sink != SinkType::kKafka && config->source.checkpoint == CheckpointStore::kKafka) {
    r.Error("source.checkpoint", absl::StrCat("kafka cannot be used with sink.type: ",
                                              std::string(SinkTypeName(config->sink)),
                                              " (there is no Kafka): use file or none"));
  }
}

void ReadOps(Reader& r, Config* config) {
  r.String("http.listen", &config->http_listen);
  size_t colon = config->http_listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(absl::string_view(config->http_listen).substr(colon + 1), &port) || port < 0 || port > 65535) {
    r.Error("http.listen", absl::StrCat("must be host:port, got ", Quoted(config->http_listen)));
  }
  static constexpr internal::EnumName<absl::string_view> kLogLevels[] = {
      {"trace", "trace"}, {"debug", "debug"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}};
  absl::string_view level = config->log_level;
  r.Enum("log.level", kLogLevels, &level);
  config->log_level = std::string(level);
  r.Enum("log.format", internal::kLogFormats, &config->log_format);
}


// Every secret once, longest first: the value of every secret key (whichever sink reads it), the passwords inside
// a conninfo or an amqp:// URL, and `resolved` (what ${env:} and ${file:} gave).
std::vector<std::string> CollectSecrets(const PipelineConfig& config, std::vector<std::string> secrets) {
  for (std::string& password : internal::ConninfoPasswords(config.source.conninfo)) {
    secrets.push_back(std::move(password));
  }
  for (auto& [key, value] : internal::KeyValues(config, /*every_sink=*/true)) {
    if (IsSecretKey(key) && !value.empty()) secrets.push_back(std::move(value));
  }
  for (std::string& password : internal::UrlPasswords(config.rabbitmq.url)) secrets.push_back(std::move(password));
  std::vector<std::string> out;
  internal::AddSecrets(std::move(secrets), &out);
  return out;
}

// Reads and validates every key of one pipeline and of the process: the one list of what a file may set.
void ReadAll(Reader& r, Config* process, PipelineConfig* config) {
  ReadSource(r, &config->source);
  ReadOutbox(r, &config->outbox);
  ReadSink(r, config);
  if (config->sink == SinkType::kKafka) {
    ReadKafka(r, &config->kafka);
  } else {
    r.Kafka(&config->kafka);  // accepted and unused
  }
  ReadDelivery(r, &config->delivery);
  ReadOps(r, process);
  ValidateSource(config->source, r);
  ValidateOutbox(&config->outbox, r);
  if (config->source.messages && (config->outbox.header_values == HeaderValues::kJson ||
                                  config->outbox.header_values == HeaderValues::kJsonSchema)) {
    r.Error("outbox.header_values", "json and json_schema write the columns' values by their types, which a logical "
                                    "message (source.messages) has not");
  }
  if (config->source.messages && config->outbox.HasEnvelope()) {
    r.Error("outbox.fields.additional", "placement envelope writes the columns' values by their types, which a "
                                        "logical message (source.messages) has not");
  }
  if (config->source.messages) {
    // The schema comes from the payload and key columns' types and the table's catalog: a message has neither.
    for (auto [key, converter] : {std::pair{"outbox.key_converter", config->outbox.key_converter},
                                  std::pair{"outbox.value_converter", config->outbox.value_converter}}) {
      if (converter == Converter::kJsonSchema) {
        r.Error(key, "json_schema writes the columns' schema, which a logical message (source.messages) has not");
      }
    }
    if (config->outbox.expand_json_payload) {
      r.Error("outbox.expand_json_payload", "expands a payload column of a text type, which a logical message "
                                            "(source.messages) has not");
    }
    for (auto [key, binary] : {std::pair{"outbox.key_converter_binary", config->outbox.key_converter_binary},
                               std::pair{"outbox.value_converter_binary", config->outbox.value_converter_binary}}) {
      if (binary) r.Error(key, "chooses by the column's type, which a logical message (source.messages) has not");
    }
  }
  ValidateGuarantee(*config, r);
}

// A process with one pipeline from a flat key tree (overrides already applied).
absl::StatusOr<Config> BuildOne(RawTree tree, const Resolver& resolver) {
  Reader r(std::move(tree), resolver);
  Config config;
  PipelineConfig pipeline;
  ReadAll(r, &config, &pipeline);

  pipeline.secrets = CollectSecrets(pipeline, std::move(r.secrets()));
  std::vector<std::string> problems = r.Problems();
  if (!problems.empty()) {
    // A bad value may have come from ${env:} or ${file:}: errors are redacted like everything else.
    return absl::InvalidArgumentError(Redact(pipeline, absl::StrJoin(problems, "; ")));
  }
  config.secrets = pipeline.secrets;
  config.pipelines.push_back(std::move(pipeline));
  return config;
}

constexpr absl::string_view kPipelines = "pipelines";
constexpr absl::string_view kPipelinesPrefix = "pipelines.";
constexpr size_t kMaxPipelineName = 64;
// The sections a pipeline may set; http and log are the process's.
constexpr absl::string_view kPipelineSections[] = {"source", "outbox", "kafka", "delivery", "sink", "nats",
                                                   "rabbitmq", "http_sink"};

bool IsLegalPipelineName(absl::string_view name) {
  return !name.empty() && name.size() <= kMaxPipelineName &&
         std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; });
}

// `pipelines: {<name>: {source: …, outbox: …}, …}`: every pipeline is the top-level tree (minus `pipelines`)
// overridden by its own keys. Errors name the pipeline's key in full ("pipelines.orders.source.slot: required").
absl::StatusOr<Config> BuildPipelines(RawTree tree, const Resolver& resolver) {
  RawTree base;
  std::map<std::string, RawTree> own;  // pipeline name -> its keys below pipelines.<name>.
  std::vector<std::string> problems;
  for (auto& [path, value] : tree) {
    if (path == kPipelines) {
      problems.push_back("pipelines: expected a map of pipeline names to their source/outbox/kafka/delivery keys");
      continue;
    }
    if (!absl::StartsWith(path, kPipelinesPrefix)) {
      base.emplace(path, std::move(value));
      continue;
    }
    const absl::string_view rest = absl::string_view(path).substr(kPipelinesPrefix.size());
    const size_t dot = rest.find('.');
    const std::string name(rest.substr(0, dot));
    if (!IsLegalPipelineName(name)) {
      problems.push_back(absl::StrCat("pipelines.", name, ": a pipeline name is 1 to ", kMaxPipelineName,
                                      " letters, digits, _ or -"));
      continue;
    }
    RawTree& keys = own[name];
    if (dot == absl::string_view::npos) continue;  // `orders: {}`: the top-level keys alone
    const std::string key(rest.substr(dot + 1));
    const absl::string_view section = absl::string_view(key).substr(0, key.find('.'));
    if (std::find(std::begin(kPipelineSections), std::end(kPipelineSections), section) ==
        std::end(kPipelineSections)) {
      problems.push_back(absl::StrCat(path,
                                      ": a pipeline sets only source, outbox, sink, kafka, nats, rabbitmq, http_sink "
                                      "and delivery keys",
                                      section == "http" || section == "log" ? " (http and log are top-level)" : ""));
      continue;
    }
    keys[key] = std::move(value);
  }
  if (own.empty() && problems.empty()) problems.push_back("pipelines: empty (name at least one pipeline)");
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));

  Config all;
  for (auto& [name, keys] : own) {
    RawTree merged = base;
    for (auto& [key, value] : keys) merged[key] = std::move(value);
    absl::StatusOr<Config> one = BuildOne(std::move(merged), resolver);
    if (!one.ok()) {
      problems.push_back(absl::StrCat("pipelines.", name, ": ", one.status().message()));
      continue;
    }
    // http and log are top-level only: every pipeline read the same.
    all.http_listen = one->http_listen;
    all.log_level = one->log_level;
    all.log_format = one->log_format;
    PipelineConfig& pipeline = one->pipelines.front();
    pipeline.pipeline = name;
    // Each pipeline has its own producer: name it, so the broker's logs and quotas tell them apart.
    if (!pipeline.kafka.contains("client.id")) pipeline.kafka["client.id"] = absl::StrCat("outbox-relay.", name);
    all.pipelines.push_back(std::move(pipeline));
  }
  // Two pipelines on one slot of one server would take it from each other; on one checkpoint file, overwrite it.
  for (size_t i = 0; i < all.pipelines.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const PipelineConfig& a = all.pipelines[j];
      const PipelineConfig& b = all.pipelines[i];
      if (a.source.conninfo == b.source.conninfo && a.source.slot == b.source.slot) {
        problems.push_back(absl::StrCat("pipelines.", b.pipeline, ".source.slot: ", Quoted(b.source.slot),
                                        " on the same source.conninfo as pipeline ", a.pipeline));
      }
      if (a.source.checkpoint == CheckpointStore::kFile && b.source.checkpoint == CheckpointStore::kFile &&
          a.source.checkpoint_file == b.source.checkpoint_file) {
        problems.push_back(absl::StrCat("pipelines.", b.pipeline, ".source.checkpoint_file: the same file as pipeline ",
                                        a.pipeline));
      }
    }
  }
  // The secrets of all, so that Redact(process) masks every pipeline's.
  for (const PipelineConfig& p : all.pipelines) internal::AddSecrets(p.secrets, &all.secrets);
  if (!problems.empty()) return absl::InvalidArgumentError(Redact(all, absl::StrJoin(problems, "; ")));
  return all;
}

}  // namespace

bool OutboxConfig::HasEnvelope() const {
  return std::any_of(fields.additional.begin(), fields.additional.end(),
                     [](const AdditionalField& f) { return f.placement == "envelope"; });
}

std::string_view SinkTypeName(SinkType sink) { return internal::NameOf(internal::kSinkTypes, sink); }

bool IsSecretKey(std::string_view key) {
  const std::string lower = absl::AsciiStrToLower(std::string(key));
  for (std::string_view property : kLibrdkafkaSensitiveProperties) {
    if (absl::EndsWith(lower, absl::string_view(property.data(), property.size())) &&
        (lower.size() == property.size() || lower[lower.size() - property.size() - 1] == '.')) {
      return true;
    }
  }
  for (absl::string_view suffix : {"password", "secret", "token", "passphrase", ".jwt", ".seed", "sasl.jaas.config"}) {
    if (absl::EndsWith(lower, suffix)) return true;
  }
  return false;
}

std::vector<std::string> AcceptedKeys() {
  const Resolver none;
  Reader r(RawTree{}, none);
  Config process;
  PipelineConfig pipeline;
  ReadAll(r, &process, &pipeline);  // every Read* asks for its keys whatever the tree holds
  return {r.known().begin(), r.known().end()};
}

namespace internal {

void AddSecrets(std::vector<std::string> more, std::vector<std::string>* secrets) {
  for (std::string& secret : more) {
    if (!secret.empty()) secrets->push_back(std::move(secret));
  }
  std::sort(secrets->begin(), secrets->end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  secrets->erase(std::unique(secrets->begin(), secrets->end()), secrets->end());
}

absl::StatusOr<Config> BuildConfig(RawTree tree, const std::vector<std::pair<std::string, std::string>>& overrides,
                                   const Resolver& resolver) {
  for (const auto& [key, value] : overrides) {
    // Taken as written: a command-line value is a string (no YAML typing), a list is comma-separated.
    tree[key] = RawValue{.kind = RawValue::Kind::kScalar, .scalar = value, .list = {}, .plain = false};
  }
  const bool has_pipelines = std::any_of(tree.begin(), tree.end(), [](const auto& entry) {
    return entry.first == kPipelines || absl::StartsWith(entry.first, kPipelinesPrefix);
  });
  return has_pipelines ? BuildPipelines(std::move(tree), resolver) : BuildOne(std::move(tree), resolver);
}

}  // namespace internal

absl::StatusOr<Config> LoadYaml(const std::string& yaml_text,
                                const std::vector<std::pair<std::string, std::string>>& overrides,
                                const Resolver& resolver) {
  absl::StatusOr<internal::RawTree> tree = internal::ParseYamlTree(yaml_text);
  if (!tree.ok()) return tree.status();
  return internal::BuildConfig(*std::move(tree), overrides, resolver);
}


std::pair<std::string, std::string> SplitTableName(const std::string& table) {
  size_t dot = table.find('.');
  if (dot == std::string::npos) return {"public", table};
  return {table.substr(0, dot), table.substr(dot + 1)};
}

}  // namespace outbox::config
