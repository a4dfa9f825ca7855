// Debezium Server application.properties / Kafka Connect connector config (.properties or .json) to a Config
// (SPEC.md §3, last item). The file's keys are mapped onto the same key tree a YAML file becomes, and BuildConfig
// then applies `--set` overrides, defaults and validation as for YAML. What the relay does with each Debezium key:
//   mapped      the Postgres connector's slot, publication, plugin and database.* keys (to source.*), the table,
//               the Outbox Event Router's keys (to outbox.*), the Kafka producer's keys (to kafka.*), or with
//               debezium.sink.type rabbitmq, nats-jetstream or http that sink's keys (to rabbitmq.*, nats.*,
//               http_sink.*) and the offsets file (to a checkpoint file beside it);
//   warned      keys with no effect on the records (offsets, topic prefix, snapshots, heartbeats, ...): accepted,
//               each with a line in Config::warnings;
//   refused     keys that would change the records in a way the relay does not reproduce (other converters or
//               transforms, masked columns, a sink's header encoding or routing it does not have, ...): an error
//               naming the key as written in the file.
// Every problem is reported in one error, as for YAML. Keys prefixed `outbox-relay.` are relay keys
// (`outbox-relay.http.listen=...`), so one file can carry both.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/strings.h"
#include "config/config_internal.h"
#include "config/debezium/debezium.h"
#include "config/java_properties.h"
#include "config/java_regex.h"
#include "config/substitution.h"

namespace outbox::config::internal {
namespace {

constexpr std::string_view kRelayPrefix = "outbox-relay.";
constexpr std::string_view kServerSource = "debezium.source.";
constexpr std::string_view kServerProducer = "debezium.sink.kafka.producer.";
constexpr std::string_view kServerSink = "debezium.sink.";
constexpr std::string_view kConnectProducer = "producer.override.";
constexpr std::string_view kPostgresConnector = "io.debezium.connector.postgresql.PostgresConnector";
constexpr std::string_view kEventRouter = "io.debezium.transforms.outbox.EventRouter";
constexpr std::string_view kStringConverter = "org.apache.kafka.connect.storage.StringConverter";
constexpr std::string_view kJsonConverter = "org.apache.kafka.connect.json.JsonConverter";
constexpr std::string_view kByteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter";
constexpr std::string_view kBinaryDataConverter = "io.debezium.converters.BinaryDataConverter";
constexpr std::string_view kStringSerializer = "org.apache.kafka.common.serialization.StringSerializer";
// The Outbox Event Router's routing defaults.
constexpr std::string_view kDefaultRouteRegex = "(?<routedByValue>.*)";
constexpr std::string_view kDefaultRouteReplacement = "outbox.event.${routedByValue}";
constexpr std::string_view kRoutedByValue = "${routedByValue}";

std::string Quoted(std::string_view text) { return Cat("\"", text, "\""); }

std::string Lower(std::string_view text) { return absl::AsciiStrToLower(ToAbsl(text)); }

// Comma-separated entries, trimmed, empty ones dropped (Kafka's LIST type).
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view entry : absl::StrSplit(ToAbsl(text), ',')) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(entry);
    if (!trimmed.empty()) out.emplace_back(trimmed);
  }
  return out;
}

// Java's String.split around one literal character: the pieces, with trailing empty ones removed ("" gives [""],
// "a,b," gives [a, b], "a,,b" gives [a, "", b]). Debezium splits its list-valued options this way.
std::vector<std::string> JavaSplit(std::string_view text, char separator) {
  std::vector<std::string> out = absl::StrSplit(ToAbsl(text), separator);
  while (out.size() > 1 && out.back().empty()) out.pop_back();
  if (out.size() == 1 && out.front().empty() && !text.empty()) out.clear();  // only separators: Java gives []
  return out;
}

// A libpq conninfo value: bare when it can be, else 'quoted' with \ and ' escaped.
std::string ConninfoValue(std::string_view value) {
  const bool bare = !value.empty() && std::none_of(value.begin(), value.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\'' || c == '\\' || c == '=';
  });
  if (bare) return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

// One entry of the file: the key as written (for messages) and its value once expanded.
struct Prop {
  std::string written;
  std::string value;
  int line = 0;  // where the file has it (0 in JSON)
};

// A group of entries by their key with a prefix removed ("slot.name" for "debezium.source.slot.name"). Remembers
// which keys a mapping step took, so that the rest can be classified.
class Section {
 public:
  explicit Section(std::string prefix = "") : prefix_(std::move(prefix)) {}

  void Add(std::string key, Prop prop) { props_[std::move(key)] = std::move(prop); }

  // The entry of `key`, marked as taken; nullptr when absent.
  const Prop* Take(const std::string& key) {
    auto it = props_.find(key);
    if (it == props_.end()) return nullptr;
    taken_.insert(key);
    return &it->second;
  }
  const Prop* Peek(const std::string& key) const {
    auto it = props_.find(key);
    return it == props_.end() ? nullptr : &it->second;
  }
  std::optional<std::string> Value(const std::string& key) {
    const Prop* prop = Take(key);
    return prop == nullptr ? std::nullopt : std::optional<std::string>(prop->value);
  }

  // How an absent key is named in a message.
  std::string Written(std::string_view key) const { return Cat(prefix_, key); }

  // Entries not taken, in key order.
  std::vector<std::pair<std::string, const Prop*>> Rest() const {
    std::vector<std::pair<std::string, const Prop*>> rest;
    for (const auto& [key, prop] : props_) {
      if (!taken_.contains(key)) rest.emplace_back(key, &prop);
    }
    return rest;
  }

 private:
  std::string prefix_;
  std::map<std::string, Prop> props_;
  std::set<std::string> taken_;
};

// What the relay does with a key it does not map.
enum class Verdict { kQuiet, kWarn, kRefuse };
struct Rule {
  std::string_view key;  // exact, or a prefix when it ends with '.' or '*'
  Verdict verdict;
  std::string_view reason;
};

bool RuleMatches(const Rule& rule, std::string_view key) {
  if (rule.key.ends_with('*')) return key.starts_with(rule.key.substr(0, rule.key.size() - 1));
  if (rule.key.ends_with('.')) return key.starts_with(rule.key);
  return key == rule.key;
}

constexpr std::string_view kNoOffsets = "no effect: the relay keeps its own checkpoint (source.checkpoint) and "
                                        "confirms the slot once the sink has acknowledged";
constexpr std::string_view kNoTopicPrefix =
    "no effect: topic names come from the Outbox Event Router's routing";
constexpr std::string_view kTopicPrefix =
    "no effect: topic names come from the Outbox Event Router's routing (Debezium also writes it in a "
    "__debezium.context.connectorLogicalName header: set outbox-relay.outbox.debezium_context_logical_name to it "
    "for the four __debezium.context.* headers)";
constexpr std::string_view kNoSnapshot =
    "no effect: the relay never snapshots the table, it streams new INSERTs from the slot";
constexpr std::string_view kNoHeartbeat =
    "no effect: the relay confirms an idle slot without heartbeat records or queries";
constexpr std::string_view kNoSlotHandling = "no effect: the relay handles the slot itself (see `outbox-relay init`)";
constexpr std::string_view kNoQueue =
    "no effect: delivery.max_inflight_bytes and delivery.max_inflight_events bound the relay's memory";
constexpr std::string_view kNoErrors =
    "no effect: transient faults are retried, per-event errors follow delivery.on_error";
constexpr std::string_view kNoColumnTypes =
    "no effect on text and json payloads: the relay writes each column's text as PostgreSQL outputs it";
constexpr std::string_view kNoOtherTables = "no effect: the relay reads only outbox.table";
constexpr std::string_view kNotApplied = "not applied by the relay";
// Debezium 3 captures every table without table.include.list, whatever table.whitelist says (seen in its source:
// no class reads the name since 2.0), so the relay does not take it for the outbox table either.
constexpr std::string_view kTableNoLongerRead =
    "no effect: Debezium 1.x's name, which Debezium 3.6.1 does not read (name the outbox table in table.include.list)";
// Outbox Event Router keys of Debezium 1.x and 2.x that 3.6.1's router no longer reads (its EventRouterConfigDefinition has
// no aliases): the same file gives 3.6.1's records only if the relay ignores them too.
std::string RouterKeyNoLongerRead(std::string_view replacement) {
  return Cat("no effect: an earlier Debezium's name, which Debezium 3.6.1's Outbox Event Router does not read (",
             replacement, " replaces it)");
}
constexpr std::string_view kNoLongerRead =
    "no effect: Debezium 1.x's name, which Debezium 3.6.1 does not read (column.include.list and column.exclude.list "
    "replace it)";

// Postgres connector keys (after "debezium.source." in Debezium Server) that are not mapped.
const std::vector<Rule>& ConnectorRules() {
  static const auto* rules = new std::vector<Rule>{
      {"name", Verdict::kQuiet, ""},
      {"tasks.max", Verdict::kQuiet, ""},
      {"offset.", Verdict::kWarn, kNoOffsets},
      {"offsets.", Verdict::kWarn, kNoOffsets},
      {"flush.lsn.source", Verdict::kWarn, kNoOffsets},
      {"lsn.flush.", Verdict::kWarn, kNoOffsets},
      {"schema.history.internal", Verdict::kWarn, "no effect: PostgreSQL needs no schema history"},
      {"schema.history.internal.", Verdict::kWarn, "no effect: PostgreSQL needs no schema history"},
      {"database.history", Verdict::kWarn, "no effect: PostgreSQL needs no schema history"},
      {"database.history.", Verdict::kWarn, "no effect: PostgreSQL needs no schema history"},
      {"topic.prefix", Verdict::kWarn, kTopicPrefix},
      {"database.server.name", Verdict::kWarn, kTopicPrefix},
      {"topic.", Verdict::kWarn, kNoTopicPrefix},
      {"topic.creation.", Verdict::kWarn, "no effect: the relay does not create event topics"},
      {"snapshot.", Verdict::kWarn, kNoSnapshot},
      {"incremental.snapshot.", Verdict::kWarn, kNoSnapshot},
      {"signal.", Verdict::kWarn, kNoSnapshot},
      {"read.only", Verdict::kWarn, kNoSnapshot},
      {"heartbeat.", Verdict::kWarn, kNoHeartbeat},
      {"tombstones.on.delete", Verdict::kWarn, "no effect: DELETEs of the outbox are ignored either way"},
      {"slot.", Verdict::kWarn, kNoSlotHandling},
      {"publication.autocreate.mode", Verdict::kWarn,
       "no effect: `outbox-relay init` creates the publication FOR TABLE <outbox> WITH (publish = 'insert'), "
       "'insert, update' with table.op.invalid.behavior=fatal"},
      {"publish.via.partition.root", Verdict::kWarn, kNotApplied},
      {"replica.identity.autoset.values", Verdict::kWarn, kNotApplied},
      {"max.batch.size", Verdict::kWarn, kNoQueue},
      {"max.queue.size", Verdict::kWarn, kNoQueue},
      {"max.queue.size.in.bytes", Verdict::kWarn, kNoQueue},
      {"poll.interval.ms", Verdict::kWarn, kNoQueue},
      {"query.fetch.size", Verdict::kWarn, kNoQueue},
      {"errors.", Verdict::kWarn, kNoErrors},
      {"retriable.restart.connector.wait.ms", Verdict::kWarn, kNoErrors},
      {"event.processing.failure.handling.mode", Verdict::kWarn, kNoErrors},
      {"unavailable.value.placeholder", Verdict::kWarn, kNoColumnTypes},
      {"schema.name.adjustment.mode", Verdict::kWarn, kNoColumnTypes},
      {"field.name.adjustment.mode", Verdict::kWarn, kNoColumnTypes},
      {"column.propagate.source.type", Verdict::kWarn, kNoColumnTypes},
      {"datatype.propagate.source.type", Verdict::kWarn, kNoColumnTypes},
      {"include.schema.comments", Verdict::kWarn, kNoColumnTypes},
      {"include.schema.changes", Verdict::kWarn, kNoColumnTypes},
      {"schema.include.list", Verdict::kWarn, kNoOtherTables},
      {"schema.exclude.list", Verdict::kWarn, kNoOtherTables},
      {"schema.whitelist", Verdict::kWarn, kNoOtherTables},
      {"schema.blacklist", Verdict::kWarn, kNoOtherTables},
      {"table.exclude.list", Verdict::kWarn, kNoOtherTables},
      {"table.blacklist", Verdict::kWarn, kNoOtherTables},
      {"message.key.columns", Verdict::kWarn,
       "no effect: the record key is the Outbox Event Router's table.field.event.key"},
      {"message.prefix.include.list", Verdict::kWarn, "no effect: see source.messages for logical decoding messages"},
      {"message.prefix.exclude.list", Verdict::kWarn, "no effect: see source.messages for logical decoding messages"},
      {"extended.headers.enabled", Verdict::kWarn,
       "the relay adds Debezium's __debezium.context.* headers only with "
       "outbox-relay.outbox.debezium_context_logical_name, whatever this says (it always adds source_lsn)"},
      {"database.initial.statements", Verdict::kWarn, kNotApplied},
      {"database.tcpKeepAlive", Verdict::kWarn, kNotApplied},
      {"database.sslfactory", Verdict::kWarn, kNotApplied},
      {"database.", Verdict::kWarn, kNotApplied},
      {"status.update.interval.ms", Verdict::kQuiet, ""},  // mapped
      {"notification.", Verdict::kWarn, kNotApplied},
      {"custom.metric.tags", Verdict::kWarn, kNotApplied},
      {"connect.", Verdict::kWarn, kNotApplied},
      // Debezium 1.x's names, which Debezium 3 no longer reads.
      {"table.whitelist", Verdict::kWarn, kTableNoLongerRead},
      {"column.whitelist", Verdict::kWarn, kNoLongerRead},
      {"column.blacklist", Verdict::kWarn, kNoLongerRead},
  };
  return *rules;
}

// Kafka producer properties that librdkafka does not have. Serializers, partitioners, JAAS and trust stores are
// handled before these.
const std::vector<Rule>& ProducerRules() {
  static const auto* rules = new std::vector<Rule>{
      {"delivery.timeout.ms", Verdict::kWarn,
       "not applied: the relay waits for the broker without a deadline (message.timeout.ms=0)"},
      {"buffer.memory", Verdict::kWarn, kNoQueue},
      {"max.block.ms", Verdict::kWarn, kNoQueue},
      {"send.buffer.bytes", Verdict::kWarn, "a Java client setting (librdkafka: socket.send.buffer.bytes)"},
      {"receive.buffer.bytes", Verdict::kWarn, "a Java client setting (librdkafka: socket.receive.buffer.bytes)"},
      {"max.request.size", Verdict::kWarn, "a Java client setting (librdkafka: message.max.bytes)"},
      {"metadata.max.idle.ms", Verdict::kWarn, "a Java client setting"},
      {"metric.reporters", Verdict::kWarn, "a Java client setting"},
      {"metrics.", Verdict::kWarn, "a Java client setting"},
      {"auto.include.jmx.reporter", Verdict::kWarn, "a Java client setting"},
      {"enable.metrics.push", Verdict::kWarn, "a Java client setting"},
      {"ssl.protocol", Verdict::kWarn, "a Java client setting"},
      {"ssl.enabled.protocols", Verdict::kWarn, "a Java client setting"},
      {"ssl.keystore.type", Verdict::kQuiet, ""},  // checked before
      {"transactional.id", Verdict::kWarn, "not applied: the relay's records are idempotent, not transactional"},
      {"transaction.timeout.ms", Verdict::kWarn, "not applied: the relay's records are idempotent, not transactional"},
      {"partitioner.adaptive.partitioning.enable", Verdict::kWarn, "a Java client setting (null keys only)"},
      {"partitioner.availability.timeout.ms", Verdict::kWarn, "a Java client setting (null keys only)"},
      {"partitioner.ignore.keys", Verdict::kRefuse,
       "changes the partition of keyed records; the relay partitions by key as the Java client does by default"},
      {"interceptor.classes", Verdict::kRefuse, "Java interceptors may change records; the relay runs none"},
  };
  return *rules;
}

const Rule* FindRule(const std::vector<Rule>& rules, std::string_view key) {
  const Rule* best = nullptr;
  for (const Rule& rule : rules) {
    if (RuleMatches(rule, key) && (best == nullptr || rule.key.size() > best->key.size())) best = &rule;
  }
  return best;
}

// A Debezium Server sink the relay has: its debezium.sink.type, the relay's sink.type, and the prefix of its keys
// after "debezium.sink.".
struct ServerSink {
  std::string_view debezium;
  SinkType type;
  std::string_view prefix;
};
constexpr ServerSink kServerSinks[] = {
    {"kafka", SinkType::kKafka, "kafka."},
    {"rabbitmq", SinkType::kRabbitMq, "rabbitmq."},
    {"nats-jetstream", SinkType::kNats, "nats-jetstream."},
    {"http", SinkType::kHttp, "http."},
};

// An amqp:// URL's host (IPv6 in brackets) and vhost (percent-encoded, as amqp_parse_url decodes it).
std::string AmqpHost(std::string_view host) {
  return absl::StrContains(ToAbsl(host), ':') && !host.starts_with('[') ? Cat("[", host, "]") : std::string(host);
}
std::string AmqpVhost(std::string_view vhost) {
  std::string out;
  for (char c : vhost) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.append(absl::StrFormat("%%%02X", static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// Debezium's routing as the relay runs it: a ${routedByValue} template when the regex is the default one, else
// the Java regex and replacement, which RouteRegex runs.
struct Route {
  std::optional<std::string> topic_template;
  std::string regex;        // the Java pattern (RouteRegex reads it), when no template
  std::string replacement;  // the Java replacement, when no template
};

// Maps one file's entries to the key tree. One use.
class DebeziumMapper {
 public:
  // `checkpoint_overridden`: --set gives source.checkpoint.
  DebeziumMapper(std::vector<PropertyEntry> entries, const Resolver& resolver, bool checkpoint_overridden)
      : entries_(std::move(entries)), resolver_(resolver), checkpoint_set_(checkpoint_overridden) {
    server_ = std::any_of(entries_.begin(), entries_.end(),
                          [](const PropertyEntry& e) { return e.key.starts_with("debezium."); });
    connector_ = Section(server_ ? std::string(kServerSource) : "");
    producer_ = Section(server_ ? std::string(kServerProducer) : std::string(kConnectProducer));
    transforms_ = Section(server_ ? "debezium." : "");
  }

  void Run() {
    Sort();
    MapSinkType();
    MapConnectorClass();
    MapSource();
    MapTable();
    ReadSkippedOperations();
    MapRouter();
    MapConverters();
    MapColumnLists();
    MapSink();
    ClassifyConnectorRest();
  }

  bool server() const { return server_; }
  RawTree& tree() { return tree_; }
  const std::optional<Route>& route() const { return route_; }
  std::vector<std::string>& errors() { return errors_; }
  std::vector<std::string> warnings() {
    std::stable_sort(warnings_.begin(), warnings_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (auto& [line, text] : warnings_) out.push_back(std::move(text));
    return out;
  }
  std::vector<std::string>& secrets() { return secrets_; }

 private:
  void Error(std::string_view key, std::string_view problem) { errors_.push_back(Cat(key, ": ", problem)); }
  // Warnings come out in the order of the file, then those about absent keys.
  void Warn(const Prop& prop, std::string_view note) {
    warnings_.emplace_back(prop.line, Cat(prop.written, ": ", note));
  }
  void WarnAbsent(std::string_view key, std::string_view note) {
    warnings_.emplace_back(std::numeric_limits<int>::max(), Cat(key, ": ", note));
  }

  void Put(const std::string& key, std::string value) {
    tree_[key] = RawValue{.kind = RawValue::Kind::kScalar, .scalar = std::move(value), .list = {}, .plain = false};
  }

  // Expands every value and sorts the entries into sections by prefix.
  void Sort() {
    std::map<std::string, std::string> raw;
    for (const PropertyEntry& e : entries_) raw[e.key] = e.value;
    Substitution expander(resolver_, server_ ? Dialect::kDebeziumServer : Dialect::kKafkaConnect, &raw);
    for (PropertyEntry& e : entries_) {
      if (e.key.starts_with(kRelayPrefix)) {
        // The relay's own keys: BuildConfig substitutes them as it does YAML values.
        const std::string key = e.key.substr(kRelayPrefix.size());
        if (key.empty()) {
          Error(e.key, "names no relay key");
        } else {
          if (key == "source.checkpoint") checkpoint_set_ = true;
          relay_.emplace_back(key, e.value);
        }
        continue;
      }
      absl::StatusOr<std::string> value = expander.Expand(e.value);
      if (!value.ok()) {
        Error(e.key, ToStd(value.status().message()));
        continue;
      }
      if (absl::StrContains(*value, "${env:") || absl::StrContains(*value, "${file:")) {
        // BuildConfig would take it for one of the relay's references and expand it again.
        Error(e.key, "the expanded value contains ${env: or ${file:, which the relay would expand");
        continue;
      }
      Prop prop{.written = e.key, .value = *std::move(value), .line = e.line};
      if (server_) {
        SortServer(e.key, std::move(prop));
      } else {
        SortConnect(e.key, std::move(prop));
      }
    }
    secrets_.insert(secrets_.end(), expander.secrets().begin(), expander.secrets().end());
  }

  void SortServer(const std::string& key, Prop prop) {
    if (key.starts_with(kServerSource)) {
      connector_.Add(key.substr(kServerSource.size()), std::move(prop));
    } else if (key.starts_with(kServerProducer)) {
      producer_.Add(key.substr(kServerProducer.size()), std::move(prop));
    } else if (key == "debezium.transforms" || key.starts_with("debezium.transforms.") ||
               key == "debezium.predicates" || key.starts_with("debezium.predicates.")) {
      transforms_.Add(key.substr(std::string_view("debezium.").size()), std::move(prop));
    } else if (key.starts_with("debezium.format.")) {
      formats_.Add(key.substr(std::string_view("debezium.format.").size()), std::move(prop));
    } else if (key == "debezium.sink.type") {
      sink_type_ = std::move(prop);
    } else if (key.starts_with(kServerSink)) {
      if (IsSecretKey(key)) secrets_.push_back(prop.value);
      sink_keys_.Add(key.substr(kServerSink.size()), std::move(prop));
    } else {
      Warn(prop, "a Debezium Server setting; no effect on the records");
    }
  }

  void SortConnect(const std::string& key, Prop prop) {
    if (key.starts_with(kConnectProducer)) {
      producer_.Add(key.substr(kConnectProducer.size()), std::move(prop));
    } else if (key == "transforms" || key.starts_with("transforms.") || key == "predicates" ||
               key.starts_with("predicates.")) {
      transforms_.Add(key, std::move(prop));
    } else {
      connector_.Add(key, std::move(prop));
    }
  }

  // debezium.sink.type: the Debezium Server sinks the relay has, by their Debezium names.
  void MapSinkType() {
    if (!server_) return;
    constexpr std::string_view kSinkNames = "kafka, rabbitmq, nats-jetstream or http";
    if (!sink_type_.has_value()) {
      Error("debezium.sink.type", Cat("required: ", kSinkNames));
      return;
    }
    for (const ServerSink& sink : kServerSinks) {
      if (sink_type_->value != sink.debezium) continue;
      sink_ = &sink;
      if (sink.type != SinkType::kKafka) Put("sink.type", std::string(SinkTypeName(sink.type)));
      return;
    }
    Error(sink_type_->written, Cat("must be ", kSinkNames, " (the sinks the relay has), got ", Quoted(sink_type_->value)));
  }

  void MapConnectorClass() {
    std::optional<std::string> connector = connector_.Value("connector.class");
    if (!connector.has_value()) {
      Error(connector_.Written("connector.class"), Cat("required: ", kPostgresConnector));
    } else if (*connector != kPostgresConnector && *connector != "PostgresConnector") {
      Error(connector_.Written("connector.class"),
            Cat("must be ", kPostgresConnector, ", got ", Quoted(*connector)));
    }
    std::optional<std::string> plugin = connector_.Value("plugin.name");
    if (!plugin.has_value()) {
      Error(connector_.Written("plugin.name"), "required: must be pgoutput (Debezium's default is decoderbufs)");
    } else if (Lower(*plugin) != "pgoutput") {
      Error(connector_.Written("plugin.name"), Cat("must be pgoutput, got ", Quoted(*plugin)));
    }
  }

  // The connector's part of Kafka Connect's exactly-once source support (KIP-618): exactly.once.support and the
  // transaction boundaries, to delivery.guarantee and delivery.transaction_interval_ms.
  void MapExactlyOnce() {
    if (std::optional<std::string> support = connector_.Value("exactly.once.support")) {
      const std::string v = Lower(*support);
      if (v == "required" || v == "requested") {
        Put("delivery.guarantee", "exactly_once");
      } else {
        Error(connector_.Written("exactly.once.support"), Cat("must be required or requested, got ", Quoted(*support)));
      }
    }
    std::optional<std::string> interval = connector_.Value("transaction.boundary.interval.ms");
    const std::string boundary = Lower(connector_.Value("transaction.boundary").value_or("poll"));
    if (boundary == "interval") {
      if (interval) Put("delivery.transaction_interval_ms", *interval);
    } else if (boundary != "poll") {
      // Kafka Connect refuses `connector` for a connector that defines no boundaries, as Debezium's Postgres one.
      Error(connector_.Written("transaction.boundary"),
            Cat("must be poll or interval (the Postgres connector defines no transaction boundaries), got ",
                Quoted(boundary)));
    }
  }

  void MapSource() {
    Put("source.slot", connector_.Value("slot.name").value_or("debezium"));
    Put("source.publication", connector_.Value("publication.name").value_or("dbz_publication"));
    if (std::optional<std::string> interval = connector_.Value("status.update.interval.ms")) {
      Put("source.status_interval_ms", *interval);
    }
    // Debezium's failover slot switch (PostgreSQL 17+).
    if (std::optional<std::string> failover = connector_.Value("slot.failover")) Put("source.failover", *failover);
    MapExactlyOnce();

    // database.* to a libpq conninfo, in libpq's order.
    struct Part {
      std::string_view key, keyword, fallback;
      bool required;
    };
    static constexpr Part kParts[] = {
        {"database.hostname", "host", "", true},       {"database.port", "port", "5432", false},
        {"database.user", "user", "", true},           {"database.password", "password", "", false},
        {"database.dbname", "dbname", "", true},       {"database.sslmode", "sslmode", "", false},
        {"database.sslrootcert", "sslrootcert", "", false}, {"database.sslcert", "sslcert", "", false},
        {"database.sslkey", "sslkey", "", false},      {"database.sslpassword", "sslpassword", "", false},
    };
    std::vector<std::string> conninfo;
    bool complete = true;
    for (const Part& part : kParts) {
      std::optional<std::string> value = connector_.Value(std::string(part.key));
      if (!value.has_value() || value->empty()) {
        if (part.required) {
          Error(connector_.Written(part.key), "required");
          complete = false;
          continue;
        }
        if (part.fallback.empty()) continue;
        value = std::string(part.fallback);
      }
      if (IsSecretKey(part.keyword) && !value->empty()) secrets_.push_back(*value);  // password, sslpassword
      conninfo.push_back(Cat(part.keyword, "=", ConninfoValue(*value)));
    }
    // When incomplete, the errors above say why; the tree still gets a conninfo so that no second error follows.
    Put("source.conninfo", complete ? absl::StrJoin(conninfo, " ") : "incomplete");
  }

  void MapTable() {
    const Prop* list = connector_.Take("table.include.list");
    if (list == nullptr) {
      Error(connector_.Written("table.include.list"), "required: the outbox table, as schema.table");
      return;
    }
    const std::vector<std::string> tables = SplitList(list->value);
    if (tables.size() != 1) {
      Error(list->written, Cat("must name exactly one table (the outbox), got ", tables.size()));
      return;
    }
    // Debezium reads each entry as a regex over schema.table; the relay takes one plain name.
    static const std::regex kPlain(R"(([A-Za-z_][A-Za-z0-9_]*)(\\?\.)([A-Za-z_][A-Za-z0-9_]*))");
    std::smatch m;
    if (!std::regex_match(tables[0], m, kPlain)) {
      Error(list->written, Cat(Quoted(tables[0]), " must be schema.table (one table, no regex)"));
      return;
    }
    table_name_ = Cat(m[1].str(), ".", m[3].str());
    Put("outbox.table", table_name_);
  }

  // transforms=<alias> with transforms.<alias>.type = the Outbox Event Router, and nothing else.
  void MapRouter() {
    const std::string transforms_key = server_ ? "debezium.transforms" : "transforms";
    std::optional<std::string> aliases_text = transforms_.Value("transforms");
    const std::vector<std::string> aliases = SplitList(aliases_text.value_or(""));
    std::string router_alias;
    for (const std::string& alias : aliases) {
      const std::string type_key = Cat("transforms.", alias, ".type");
      const Prop* type = transforms_.Take(type_key);
      if (type == nullptr) {
        Error(transforms_.Written(type_key), "required");
      } else if (type->value != kEventRouter) {
        Error(type->written, Cat(Quoted(type->value), " would change the records; the relay reproduces only the "
                                                      "Outbox Event Router (", kEventRouter, ")"));
      } else if (!router_alias.empty()) {
        Error(type->written, "a second Outbox Event Router; the relay runs one");
      } else {
        router_alias = alias;
      }
    }
    if (router_alias.empty()) {
      // The routing defaults are still read below, so that other errors are found.
      Error(transforms_key, Cat("must name an Outbox Event Router (", kEventRouter, ")"));
    }
    const std::string prefix = Cat("transforms.", router_alias, ".");
    for (const auto& [key, prop] : transforms_.Rest()) {
      if (!router_alias.empty() && key.starts_with(prefix)) {
        router_.Add(key.substr(prefix.size()), *prop);
      } else if (key == "predicates" || key.starts_with("predicates.")) {
        predicates_.emplace(key, *prop);  // the router's predicate reads them; the rest are warned about below
      } else {
        Warn(*prop, "not used: its transform is not in transforms");
      }
    }
    router_written_prefix_ = transforms_.Written(prefix);
    MapRouterKeys();
    for (const auto& [key, prop] : predicates_) {
      if (!used_predicate_.empty() && key.starts_with(Cat("predicates.", used_predicate_, "."))) continue;
      Warn(prop, "no effect: the relay applies the Outbox Event Router to every row of the outbox");
    }
  }

  // The router's `predicate` (and `negate`): Kafka Connect applies the router only to the records the predicate
  // selects. The relay reads only the outbox table's INSERTs, whose change events Debezium writes to the topic
  // "<topic.prefix>.<schema>.<table>" with a value: a predicate that selects those is accepted (it changes nothing),
  // one that leaves them out is refused (Debezium would write its change events as they are), and one the relay
  // cannot judge is refused.
  void MapPredicate(const Prop& predicate, const Prop* negate_prop) {
    const std::string name = predicate.value;
    const auto value = [&](const std::string& key) -> std::optional<std::string> {
      auto it = predicates_.find(Cat("predicates.", name, ".", key));
      return it == predicates_.end() ? std::nullopt : std::optional<std::string>(it->second.value);
    };
    const std::vector<std::string> declared = SplitList(
        predicates_.count("predicates") ? predicates_.at("predicates").value : std::string());
    if (std::find(declared.begin(), declared.end(), name) == declared.end() || !value("type")) {
      Error(predicate.written, Cat(Quoted(name), " is not a predicate declared in predicates (with its type), as "
                                   "Kafka Connect requires"));
      return;
    }
    used_predicate_ = name;
    const std::optional<bool> negated = BoolOf(negate_prop);
    if (negate_prop != nullptr && !negated) return;
    const bool negate = negated.value_or(false);
    const std::string type = *value("type");
    std::optional<bool> selects;  // whether the predicate, negated or not, selects the outbox's change events
    std::string why;
    if (type == "org.apache.kafka.connect.transforms.predicates.TopicNameMatches") {
      const std::optional<std::string> pattern = value("pattern");
      const std::optional<std::string> prefix = connector_.Peek("topic.prefix") != nullptr
                                                    ? std::optional<std::string>(connector_.Peek("topic.prefix")->value)
                                                    : std::nullopt;
      if (connector_.Peek("topic.naming.strategy") != nullptr || connector_.Peek("topic.delimiter") != nullptr ||
          !prefix) {
        why = "the outbox's topic is not known (topic.prefix unset, or another topic naming strategy or delimiter)";
      } else if (!pattern) {
        why = Cat("predicates.", name, ".pattern is required");
      } else if (absl::StatusOr<RouteRegex> regex = RouteRegex::Compile(*pattern); !regex.ok()) {
        why = Cat("predicates.", name, ".pattern ", Quoted(*pattern), ": ", regex.status().message());
      } else {
        const std::string topic = Cat(*prefix, ".", table_name_);
        selects = regex->Matches(topic) != negate;
        why = Cat("TopicNameMatches ", Quoted(*pattern), negate ? " negated" : "", " on the outbox's topic ",
                  Quoted(topic));
      }
    } else if (type == "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone") {
      selects = negate;  // an INSERT's change event has a value
      why = Cat("RecordIsTombstone", negate ? " negated" : "");
    } else if (type == "org.apache.kafka.connect.transforms.predicates.HasHeaderKey") {
      // An INSERT's change event carries only the connector's context headers (EventDispatcher adds them unless
      // extended.headers.enabled=false); the router comes first, so no other transform adds any.
      const std::optional<std::string> header = value("name");
      const Prop* extended = connector_.Peek("extended.headers.enabled");
      const std::optional<bool> with_context =
          extended == nullptr ? std::optional<bool>(true) : BoolOf(extended);
      if (!header || header->empty()) {
        why = Cat("predicates.", name, ".name is required");
      } else if (with_context.has_value()) {
        const bool has = *with_context && std::find(std::begin(kDebeziumContextHeaders),
                                                    std::end(kDebeziumContextHeaders),
                                                    *header) != std::end(kDebeziumContextHeaders);
        selects = has != negate;
        why = Cat("HasHeaderKey ", Quoted(*header), negate ? " negated" : "", " (an INSERT's change event has ",
                  *with_context ? "the four __debezium.context.* headers" : "no header: extended.headers.enabled=false",
                  ")");
      }
    } else {
      why = Cat(Quoted(type), " (the relay judges TopicNameMatches, RecordIsTombstone and HasHeaderKey)");
    }
    if (!selects.has_value()) {
      Error(predicate.written, Cat("a conditional Outbox Event Router the relay cannot judge: ", why));
    } else if (!*selects) {
      Error(predicate.written, Cat(why, " leaves the outbox's change events out of the Outbox Event Router, so "
                                        "Debezium would write them as they are; the relay writes only routed events"));
    } else {
      Warn(predicate, Cat("no effect: ", why, " selects every change event of the outbox"));
    }
  }

  std::string RouterWritten(std::string_view key) const { return Cat(router_written_prefix_, key); }

  // Kafka's (and SmallRye's) boolean: true or false, any case; nullopt when absent or (with an error) neither.
  std::optional<bool> BoolOf(const Prop* prop) {
    if (prop == nullptr) return std::nullopt;
    const std::string lower = Lower(ToStd(absl::StripAsciiWhitespace(prop->value)));
    if (lower == "true") return true;
    if (lower == "false") return false;
    Error(prop->written, Cat("must be true or false, got ", Quoted(prop->value)));
    return std::nullopt;
  }
  std::optional<bool> RouterBool(const std::string& key) { return BoolOf(router_.Take(key)); }
  // JsonConverter's schemas.enable: true when absent (its default); nullopt (with an error) when neither.
  std::optional<bool> SchemasEnabled(const Prop* schemas) { return schemas == nullptr ? true : BoolOf(schemas); }

  // A JsonConverter as the `which` ("key" or "value") converter, with `schemas` its schemas.enable: the relay's
  // json_schema (sets *json_schema) or json. False, with the error SchemasEnabled gives, for a schemas.enable that is
  // neither true nor false.
  bool PutJsonConverter(std::string_view which, const Prop* schemas, bool* json_schema) {
    const std::optional<bool> with = SchemasEnabled(schemas);
    if (!with) return false;
    *json_schema = *json_schema || *with;
    Put(Cat("outbox.", which, "_converter"), *with ? "json_schema" : "json");
    return true;
  }

  // Debezium's BinaryDataConverter as the key or value converter (`which`): a BYTES value (a bytea key or payload) as
  // its bytes, any other through the converter its delegate.converter.type names, configured by the options under
  // that key; without one, any other value fails the record (as under ByteArrayConverter, which the relay then is).
  // Sets *json_schema when the delegate is a JsonConverter with schemas.
  void MapBinaryDataConverter(std::string_view which, const Prop* delegate, const Prop* delegate_schemas,
                              bool* json_schema) {
    const std::string relay_key = Cat("outbox.", which, "_converter");
    const std::string_view type =
        delegate == nullptr ? kByteArrayConverter : ToStd(absl::StripAsciiWhitespace(delegate->value));
    if (type == kByteArrayConverter) {
      Put(relay_key, "bytes");
      return;
    }
    if (type == kStringConverter) {
      Put(relay_key, "string");
    } else if (type == kJsonConverter) {
      if (!PutJsonConverter(which, delegate_schemas, json_schema)) return;
    } else {
      Error(delegate->written, Cat(Quoted(delegate->value), " would change the records; the relay writes what ",
                                   kStringConverter, ", ", kJsonConverter, " or ", kByteArrayConverter, " writes"));
      return;
    }
    Put(Cat(relay_key, "_binary"), "true");
  }

  void MapRouterKeys() {
    // Column names.
    for (const auto& [key, tree_key] : {std::pair{"table.field.event.id", "outbox.fields.id"},
                                        {"table.field.event.key", "outbox.fields.key"},
                                        {"table.field.event.type", "outbox.fields.type"},
                                        {"table.field.event.payload", "outbox.fields.payload"},
                                        {"table.field.event.timestamp", "outbox.fields.timestamp"}}) {
      if (std::optional<std::string> value = router_.Value(key)) Put(tree_key, *value);
    }
    for (const auto& [old_key, replacement] : {std::pair{"table.field.payload", "table.field.event.payload"},
                                               {"table.field.payload.id", "table.field.event.key"},
                                               {"table.field.schema.version", "table.field.event.schema.version"},
                                               {"debezium.op.invalid.behavior", "table.op.invalid.behavior"},
                                               {"table.fields.additional.error.on.missing",
                                                "table.field.additional.missing"}}) {
      if (const Prop* prop = router_.Take(old_key)) Warn(*prop, RouterKeyNoLongerRead(replacement));
    }
    Put("outbox.route.by", router_.Value("route.by.field").value_or("aggregatetype"));

    if (const Prop* placement = router_.Take("table.fields.additional.placement")) MapPlacement(*placement);
    // Header values as Kafka Connect's SimpleHeaderConverter writes the connector's values (true, epoch micros).
    Put("outbox.header_values", "debezium");
    // A typed key or payload under StringConverter: Java's text of Debezium's value (true, epoch micros).
    Put("outbox.string_converter_values", "debezium");
    // A NULL in a column with a default: the default, as Debezium's Struct.get returns it.
    Put("outbox.null_as_column_default", "true");
    // A missing additional column: error (Debezium's default) stops the relay, ignore leaves its header out.
    if (const Prop* missing = router_.Take("table.field.additional.missing")) {
      const std::string value = Lower(ToStd(absl::StripAsciiWhitespace(missing->value)));
      if (value == "ignore") {
        Put("outbox.fields.additional_if_present", "true");
      } else if (value != "error") {
        Error(missing->written, Cat("must be error or ignore, got ", Quoted(missing->value)));
      }
    }

    // UPDATEs of the outbox: Debezium's warn and error both log and drop the row, only fatal stops.
    const Prop* behavior = router_.Take("table.op.invalid.behavior");
    std::string on_update = "warn";
    if (behavior != nullptr) {
      const std::string value = Lower(ToStd(absl::StripAsciiWhitespace(behavior->value)));
      if (value == "warn" || value == "error") {
        on_update = "warn";
      } else if (value == "fatal") {
        on_update = "error";
      } else {
        Error(behavior->written, Cat("must be warn, error or fatal, got ", Quoted(behavior->value)));
      }
    }
    if (skip_updates_) on_update = "ignore";
    Put("outbox.on_update", on_update);

    if (std::optional<bool> tombstone = RouterBool("route.tombstone.on.empty.payload")) {
      Put("outbox.tombstone_on_empty_payload", *tombstone ? "true" : "false");
    }
    MapExpandJsonPayload();
    const Prop* negate = router_.Take("negate");
    if (const Prop* predicate = router_.Take("predicate")) {
      MapPredicate(*predicate, negate);
    } else if (negate != nullptr) {
      Warn(*negate, "no effect without predicate");
    }
    if (const Prop* prop = router_.Take("table.field.event.schema.version")) {
      if (envelope_) {
        Put("outbox.fields.schema_version", prop->value);
      } else {
        Warn(*prop, "no effect without envelope placement (it sets the version of the envelope's schema)");
      }
    }
    if (envelope_) {
      // Debezium names the envelope's schema after the row's: "<topic.prefix>.<schema>.<table>.Value" with the
      // route value inserted before ".Value".
      std::optional<std::string> prefix = connector_.Value("topic.prefix");
      if (!prefix) prefix = connector_.Value("database.server.name");  // Debezium 1.x
      if (!prefix) {
        Error(connector_.Written("topic.prefix"), "required, as in Debezium (with placement envelope it names the "
                                                  "envelope's schema)");
      }
      Put("outbox.envelope_schema_name", Cat(prefix.value_or(""), ".", table_name_, ".${routedByValue}.Value"));
    }
    // Debezium with OpenTelemetry reads the trace context column (default tracingspancontext) and writes W3C
    // headers: the relay propagates the column's traceparent and tracestate when the column exists.
    const Prop* tracing = router_.Take("tracing.span.context.field");
    Put("outbox.fields.tracing_span_context", tracing != nullptr ? tracing->value : std::string("tracingspancontext"));
    Put("outbox.fields.tracing_span_context_if_present", "true");
    // Both shape Debezium's own span, which the relay does not make (docs/debezium.md): the name, and whether rows
    // without a context start a new trace.
    if (const Prop* prop = router_.Take("tracing.operation.name")) {
      Warn(*prop, "no effect on the records (it names Debezium's span; the relay writes the writer's span id)");
    }
    if (const Prop* prop = router_.Take("tracing.with.context.field.only")) {
      Warn(*prop, "no effect on the records (the relay starts no trace for a row without a context)");
    }
    MapRouting();
    for (const auto& [key, prop] : router_.Rest()) {
      Error(prop->written, "not an Outbox Event Router key the relay knows");
    }
  }

  // A scalar the mapping put in the tree, or nullopt.
  std::optional<std::string> TreeScalar(const std::string& key) const {
    const auto it = tree_.find(key);
    if (it == tree_.end() || it->second.kind != RawValue::Kind::kScalar) return std::nullopt;
    return it->second.scalar;
  }

  // column.include.list / column.exclude.list, column.mask.* and column.truncate.*: Debezium applies them to a change
  // event's columns before the Outbox Event Router reads them, each pattern matched whole, ignoring ASCII case,
  // against <schema>.<table>.<column>. One that leaves every column the router reads as it is changes nothing the
  // relay writes (a warning). Excluding a column the router reads makes Debezium's router fail on every record
  // (refused, naming the column), except an additional field under table.field.additional.missing=ignore, which
  // Debezium then leaves out (so does the relay), and the trace context column, whose headers Debezium then does not
  // write (nor does the relay). A mask or truncation of a column the router reads changes the record: refused.
  void MapColumnLists() {
    const Prop* include = connector_.Take("column.include.list");
    const Prop* exclude = connector_.Take("column.exclude.list");
    std::vector<std::pair<std::string, const Prop*>> changes;  // column.mask.* and column.truncate.*
    for (const auto& [key, prop] : connector_.Rest()) {
      if (key.starts_with("column.mask.") || key.starts_with("column.truncate.")) changes.emplace_back(key, prop);
    }
    for (const auto& [key, prop] : changes) connector_.Take(key);
    if (include == nullptr && exclude == nullptr && changes.empty()) return;
    if (include != nullptr && exclude != nullptr) {
      Error(exclude->written, "cannot be set together with column.include.list (Debezium refuses both)");
      return;
    }
    // The columns the router reads, by their role.
    struct Read {
      std::string column;
      std::string role;
      bool may_go = false;  // leaving it out is what Debezium does too (its header, or the trace headers, go)
    };
    std::vector<Read> reads;
    const auto add = [&](const std::string& tree_key, std::string_view fallback, std::string_view role) {
      std::optional<std::string> column = TreeScalar(tree_key);
      if (!column && !fallback.empty()) column = std::string(fallback);
      if (column && !column->empty()) reads.push_back(Read{*column, std::string(role)});
    };
    add("outbox.fields.id", "id", "table.field.event.id");
    add("outbox.fields.key", "aggregateid", "table.field.event.key");
    add("outbox.fields.payload", "payload", "table.field.event.payload");
    add("outbox.route.by", "aggregatetype", "route.by.field");
    add("outbox.fields.timestamp", "", "table.field.event.timestamp");
    add("outbox.fields.schema_version", "", "table.field.event.schema.version");
    const bool additional_may_go = TreeScalar("outbox.fields.additional_if_present") == "true";
    std::vector<std::string> additional;
    if (const auto it = tree_.find("outbox.fields.additional"); it != tree_.end()) additional = it->second.list;
    for (const std::string& entry : additional) {
      reads.push_back(Read{entry.substr(0, entry.find(':')), "table.fields.additional.placement", additional_may_go});
    }
    if (std::optional<std::string> tracing = TreeScalar("outbox.fields.tracing_span_context")) {
      reads.push_back(Read{*tracing, "tracing.span.context.field", true});
    }
    const auto compile = [&](const Prop& prop) -> std::optional<std::vector<RouteRegex>> {
      absl::StatusOr<std::vector<RouteRegex>> patterns = CompileDebeziumPatternList(prop.value);
      if (!patterns.ok()) {
        Error(prop.written, ToStd(patterns.status().message()));
        return std::nullopt;
      }
      return *std::move(patterns);
    };
    const auto selects = [&](const std::vector<RouteRegex>& patterns, const Read& read) {
      const std::string id = Cat(table_name_, ".", read.column);
      return std::any_of(patterns.begin(), patterns.end(), [&](const RouteRegex& p) { return p.Matches(id); });
    };
    for (const Read& read : reads) {
      if (!IsAscii(Cat(table_name_, ".", read.column))) {
        Error((include != nullptr ? include : exclude != nullptr ? exclude : changes.front().second)->written,
              Cat("column \"", read.column, "\" has characters beyond ASCII, whose case Debezium's patterns (Java's, "
                  "ignoring ASCII case) and the relay's fold differently"));
        return;
      }
    }
    if (const Prop* list = include != nullptr ? include : exclude; list != nullptr) {
      const std::optional<std::vector<RouteRegex>> patterns = compile(*list);
      if (!patterns) return;
      std::set<std::string> gone;
      for (const Read& read : reads) {
        if (selects(*patterns, read) == (include != nullptr)) continue;  // kept
        if (!read.may_go) {
          Error(list->written, Cat("leaves out column \"", read.column, "\" (", read.role, "), and Debezium's "
                                   "Outbox Event Router then fails on every record"));
        } else {
          gone.insert(read.column);
        }
      }
      for (const std::string& column : gone) {
        if (TreeScalar("outbox.fields.tracing_span_context") == column) {
          tree_.erase("outbox.fields.tracing_span_context");
          tree_.erase("outbox.fields.tracing_span_context_if_present");
        }
        auto& entries = tree_["outbox.fields.additional"].list;
        std::erase_if(entries, [&](const std::string& e) { return e.substr(0, e.find(':')) == column; });
      }
      Warn(*list, gone.empty() ? "no effect: the columns it leaves out are none the Outbox Event Router reads"
                               : Cat("leaves out ", absl::StrJoin(gone, ", "), ", which the relay leaves out too "
                                     "(an additional field under table.field.additional.missing=ignore, or the trace "
                                     "context); no other effect"));
    }
    for (const auto& [key, prop] : changes) {
      // ColumnMappers.create reads four names; Debezium ignores others.
      const std::string name = key.substr(std::string_view("column.").size());
      ColumnMapperRule rule;
      if (!ParseColumnMapperName(name, &rule)) {
        Warn(*prop, "no effect: Debezium reads no column mapper of this name (column.truncate.to.<N>.chars, "
                    "column.mask.with.<N>.chars, column.mask.hash[.v2].<algorithm>.with.salt.<salt>)");
        continue;
      }
      const std::optional<std::vector<RouteRegex>> patterns = compile(*prop);
      if (!patterns) continue;
      const auto hit = std::find_if(reads.begin(), reads.end(), [&](const Read& r) { return selects(*patterns, r); });
      if (hit == reads.end()) {
        Warn(*prop, "no effect: it selects none of the columns the Outbox Event Router reads");
        continue;
      }
      const bool hash = rule.kind == ColumnMapperRule::Kind::kHash || rule.kind == ColumnMapperRule::Kind::kHashV2;
      if (hash && OpenSslDigestName(rule.algorithm).empty()) {
        Error(prop->written, UnknownDigest(rule.algorithm));
        continue;
      }
      if (hash && !schema_changes_mapped_) {
        // Debezium picks a propagation before a hash; without schemas the relay drops the propagation (it writes
        // nothing there), so it would hash where Debezium does not.
        const Prop* by_column = connector_.Peek("column.propagate.source.type");
        const Prop* by_type = connector_.Peek("datatype.propagate.source.type");
        std::optional<std::vector<RouteRegex>> propagated;
        if (by_column != nullptr) propagated = compile(*by_column);
        const auto both = std::find_if(reads.begin(), reads.end(), [&](const Read& r) {
          return selects(*patterns, r) && propagated.has_value() && selects(*propagated, r);
        });
        if (both != reads.end() || (by_type != nullptr && !JavaTrim(by_type->value).empty())) {
          Error(prop->written, Cat("with ", both != reads.end() ? by_column->written : by_type->written,
                                   " under a converter without schemas: Debezium then propagates the source type of "
                                   "a column both select and does not hash it, which the relay does not reproduce"));
          continue;
        }
      }
      // Debezium changes the value before the router reads it; so does the relay (outbox.column_mappers).
      Put(Cat("outbox.column_mappers.", name), prop->value);
    }
  }

  // table.expand.json.payload and what shapes it: table.json.payload.null.behavior, and the router's own
  // field.name.adjustment.mode (the connector's is not passed to it).
  void MapExpandJsonPayload() {
    const bool expand = RouterBool("table.expand.json.payload").value_or(false);
    if (expand) Put("outbox.expand_json_payload", "true");
    const auto no_effect = [&](const Prop& prop) { Warn(prop, "no effect without table.expand.json.payload=true"); };
    if (const Prop* nulls = router_.Take("table.json.payload.null.behavior")) {
      const std::string value = Lower(ToStd(absl::StripAsciiWhitespace(nulls->value)));
      if (value != "ignore" && value != "optional_bytes") {
        Error(nulls->written, Cat("must be ignore or optional_bytes, got ", Quoted(nulls->value)));
      } else if (!expand) {
        no_effect(*nulls);
      } else {
        Put("outbox.json_payload_null_behavior", value);
      }
    }
    if (const Prop* arrays = router_.Take("table.json.payload.empty.array.behavior")) {
      Warn(*arrays, "no effect in Debezium 3.6.1, whose records the relay writes (the key arrived in Debezium 3.7): "
                    "empty arrays are left out; outbox-relay.outbox.json_payload_empty_array_behavior="
                    "optional_string keeps them as Debezium 3.7 does");
    }
    if (const Prop* mode = router_.Take("field.name.adjustment.mode")) {
      const std::string value = Lower(ToStd(absl::StripAsciiWhitespace(mode->value)));
      if (!expand) {
        no_effect(*mode);
      } else if (value != "none" && value != "avro" && value != "avro_unicode") {
        // FieldNameAdjustmentMode.parse gives null, and the router's configure fails on it.
        Error(mode->written, Cat("must be none, avro or avro_unicode, got ", Quoted(mode->value)));
      } else {
        Put("outbox.json_payload_field_name_adjustment", value);
      }
    }
  }

  // table.fields.additional.placement: column:header[:alias], column:envelope[:alias] and column:partition entries. Split as
  // Debezium splits it (AdditionalFieldsValidator: Java's split on "," then ":"), so that a value Debezium refuses
  // (empty, blank, or with an empty entry between commas) is refused here too, and one it takes means the same.
  void MapPlacement(const Prop& placement) {
    RawValue list{.kind = RawValue::Kind::kList, .scalar = "", .list = {}, .plain = false};
    for (const std::string& entry : JavaSplit(placement.value, ',')) {
      std::vector<std::string> parts = JavaSplit(entry, ':');
      for (std::string& part : parts) absl::StripAsciiWhitespace(&part);
      const std::string where = parts.size() >= 2 ? Lower(parts[1]) : "";
      if (parts.size() < 2 || parts.size() > 3) {
        Error(placement.written, Cat(Quoted(entry), ": a comma-separated list of column:placement pairs or "
                                     "column:placement:alias trios is expected (Debezium refuses this value too)"));
      } else if (parts[0].empty()) {
        Error(placement.written, Cat(Quoted(entry), " must be column:placement[:alias]"));
      } else if (where == "partition") {
        list.list.push_back(Cat(parts[0], ":partition"));  // Debezium has no use for an alias here either
      } else if (where != "header" && where != "envelope") {
        Error(placement.written, Cat(Quoted(entry), ": placement must be header, envelope or partition"));
      } else {
        envelope_ = envelope_ || where == "envelope";
        list.list.push_back(parts.size() == 3 ? Cat(parts[0], ":", where, ":", parts[2]) : Cat(parts[0], ":", where));
      }
    }
    tree_["outbox.fields.additional"] = std::move(list);
  }

  void MapRouting() {
    const Prop* regex_prop = router_.Take("route.topic.regex");
    const Prop* replacement_prop = router_.Take("route.topic.replacement");
    const std::string java_regex = regex_prop ? regex_prop->value : std::string(kDefaultRouteRegex);
    const std::string java_replacement =
        replacement_prop ? replacement_prop->value : std::string(kDefaultRouteReplacement);
    const std::string regex_key = regex_prop ? regex_prop->written : RouterWritten("route.topic.regex");
    const std::string replacement_key =
        replacement_prop ? replacement_prop->written : RouterWritten("route.topic.replacement");

    absl::StatusOr<RouteRegex> regex = RouteRegex::Compile(java_regex);
    if (!regex.ok()) {
      Error(regex_key, Cat(Quoted(java_regex), ": ", regex.status().message()));
      return;
    }
    if (absl::Status st = regex->SetReplacement(java_replacement); !st.ok()) {
      Error(replacement_key, Cat(Quoted(java_replacement), ": ", st.message()));
      return;
    }
    route_ = Route{};
    // (.*) matches every value whole (one with a line terminator aside, and then neither form gives a legal topic),
    // so group 1 and group 0 are the value: the replacement is a plain template.
    static const std::regex kWholeValue(R"(\((\?<[a-zA-Z][a-zA-Z0-9]*>)?\.\*\))");
    if (std::regex_match(java_regex, kWholeValue)) {
      std::string topic_template;
      bool plain = true;
      for (const ReplacementPiece& piece : regex->replacement()) {
        if (piece.is_group) {
          topic_template.append(kRoutedByValue);
        } else {
          plain = plain && !absl::StrContains(piece.literal, ToAbsl(kRoutedByValue));
          topic_template.append(piece.literal);
        }
      }
      if (plain) {
        route_->topic_template = topic_template;
        Put("outbox.route.topic", topic_template);
        return;
      }
    }
    route_->regex = java_regex;
    route_->replacement = java_replacement;
  }

  // key.converter / value.converter / header.converter (Kafka Connect) or debezium.format.* (Debezium Server).
  void MapConverters() {
    if (server_) {
      MapServerFormats();
    } else {
      MapConnectConverters();
    }
    for (const auto& [key, prop] : connector_.Rest()) {
      if (key.starts_with("key.converter.") || key.starts_with("value.converter.") ||
          key.starts_with("header.converter.")) {
        connector_.Take(key);
        Warn(*prop, "no effect on the records the relay writes");
      }
    }
  }

  void MapConnectConverters() {
    bool with_schema = false;  // a JsonConverter writes the columns' schema
    for (std::string_view which : {"key", "value"}) {
      const std::string key = Cat(which, ".converter");
      const Prop* converter = connector_.Take(key);
      const std::string relay_key = Cat("outbox.", which, "_converter");
      if (converter != nullptr && converter->value == kJsonConverter) {
        // JsonConverter's schemas.enable defaults to true: the schema-and-payload envelope.
        if (!PutJsonConverter(which, connector_.Take(Cat(key, ".schemas.enable")), &with_schema)) continue;
      } else if (converter != nullptr && converter->value == kByteArrayConverter) {
        Put(relay_key, "bytes");
      } else if (converter != nullptr && converter->value == kBinaryDataConverter) {
        const std::string delegate = Cat(key, ".delegate.converter.type");
        MapBinaryDataConverter(which, connector_.Take(delegate), connector_.Take(Cat(delegate, ".schemas.enable")),
                               &with_schema);
      } else if (converter != nullptr && converter->value != kStringConverter) {
        Error(converter->written, Cat(Quoted(converter->value), " would change the records; the relay writes what ",
                                      kStringConverter, ", ", kJsonConverter, ", ", kByteArrayConverter, " or ",
                                      kBinaryDataConverter, " writes"));
      } else if (converter == nullptr) {
        WarnAbsent(connector_.Written(key),
                   Cat("not set (the worker's applies): the relay writes what ", kStringConverter, " writes, the ",
                       which == "key" ? "key column's" : "payload column's", " text"));
      }
    }
    if (with_schema) MapSchemaChanges();
    if (const Prop* header = connector_.Take("header.converter")) {
      if (header->value == kJsonConverter) {
        // JsonConverter as the header converter: the header values' JSON, with their schemas unless disabled.
        MapJsonHeaders(connector_.Take("header.converter.schemas.enable"));
      } else if (header->value != "org.apache.kafka.connect.storage.SimpleHeaderConverter" &&
                 header->value != kStringConverter) {
        Error(header->written, Cat(Quoted(header->value), " would change the headers; the relay writes header "
                                                          "values as SimpleHeaderConverter or JsonConverter do"));
      }
    }
  }

  // Debezium Server's formats (debezium-server's DebeziumServer and debezium-embedded's ConverterBuilder):
  // simplestring is Kafka Connect's StringConverter; json (the default) and jsonbytearray its JsonConverter, whose
  // schemas.enable defaults to true. DebeziumServer copies debezium.source.* into the engine's properties, then
  // debezium.format.* over them into <key|value|header>.converter.*, then debezium.format.<key|value|header>.*: so a
  // converter class among debezium.source.* has no effect (the format names the class), and its schemas.enable
  // counts below both debezium.format keys, above debezium.source.converter.schemas.enable (ConverterBuilder's
  // common converter.* properties). binary is Debezium's BinaryDataConverter, with its delegate.converter.type.
  void MapServerFormats() {
    for (std::string_view which : {"key", "value", "header"}) {
      if (const Prop* converter = connector_.Take(Cat(which, ".converter"))) {
        Warn(*converter, Cat("no effect in Debezium Server, which converts with what debezium.format.", which,
                             " names"));
      }
    }
    // A converter option, in DebeziumServer's order of precedence: debezium.format.<which>.<option>,
    // debezium.format.<option>, debezium.source.<which>.converter.<option>, debezium.source.converter.<option>.
    struct Common {
      const Prop* format;  // debezium.format.<option>
      const Prop* source;  // debezium.source.converter.<option>
    };
    std::map<std::string, Common, std::less<>> common;
    for (std::string_view option :
         {"class", "schemas.enable", "delegate.converter.type", "delegate.converter.type.schemas.enable"}) {
      common[std::string(option)] = {formats_.Take(std::string(option)), connector_.Take(Cat("converter.", option))};
    }
    auto option_of = [&](std::string_view which, std::string_view option) -> const Prop* {
      const Common& shared = common.find(option)->second;
      const Prop* own = formats_.Take(Cat(which, ".", option));
      const Prop* source_own = connector_.Take(Cat(which, ".converter.", option));
      for (const Prop* prop : {own, shared.format, source_own, shared.source}) {
        if (prop != nullptr) return prop;
      }
      return nullptr;
    };
    // ConverterBuilder gives the format's converter class only when no `class` option names another.
    auto refuse_other_class = [&](std::string_view which, std::string_view format_class) {
      const Prop* named = option_of(which, "class");
      if (named != nullptr && ToStd(absl::StripAsciiWhitespace(named->value)) != format_class) {
        Error(named->written, Cat(Quoted(named->value), " would change the records; the relay writes what ",
                                  format_class, " writes"));
      }
    };
    bool json_schema = false;
    for (std::string_view which : {"key", "value"}) {
      const Prop* format = formats_.Take(std::string(which));
      const std::string relay_key = Cat("outbox.", which, "_converter");
      const std::string value = format == nullptr ? "json" : Lower(ToStd(absl::StripAsciiWhitespace(format->value)));
      if (value == "simplestring") {
        refuse_other_class(which, kStringConverter);
        Put(relay_key, "string");
      } else if (value == "json" || value == "jsonbytearray") {
        refuse_other_class(which, kJsonConverter);
        if (!PutJsonConverter(which, option_of(which, "schemas.enable"), &json_schema)) continue;
        if (format == nullptr) {
          WarnAbsent(Cat("debezium.format.", which),
                     "not set: Debezium Server's default, json (JsonConverter with schemas unless "
                     "debezium.format.schemas.enable=false), which the relay writes too");
        }
      } else if (value == "binary") {  // BinaryDataConverter
        refuse_other_class(which, kBinaryDataConverter);
        MapBinaryDataConverter(which, option_of(which, "delegate.converter.type"),
                               option_of(which, "delegate.converter.type.schemas.enable"), &json_schema);
      } else {
        Error(format->written, Cat("must be simplestring, json, jsonbytearray or binary, got ", Quoted(format->value),
                                   " (the relay writes what Kafka Connect's StringConverter or JsonConverter, or "
                                   "Debezium's BinaryDataConverter, writes)"));
      }
    }
    if (json_schema) MapSchemaChanges();
    // The header format (default json) is Kafka Connect's JsonConverter too.
    const Prop* header_format = formats_.Take("header");
    if (header_format != nullptr && header_format->value != "json" && header_format->value != "jsonbytearray") {
      Error(header_format->written, Cat("must be json or jsonbytearray (the relay writes the headers as Kafka "
                                        "Connect's JsonConverter does), got ", Quoted(header_format->value)));
    } else {
      refuse_other_class("header", kJsonConverter);
      MapJsonHeaders(option_of("header", "schemas.enable"));
    }
    for (const auto& [key, prop] : formats_.Rest()) Warn(*prop, "no effect on the records the relay writes");
  }

  // Header values through JsonConverter: json_schema unless `schemas` (its schemas.enable) says false.
  void MapJsonHeaders(const Prop* schemas) {
    const std::optional<bool> with = SchemasEnabled(schemas);
    if (!with) return;
    Put("outbox.header_values", *with ? "json_schema" : "json");
    if (*with) MapSchemaChanges();
  }

  // With a JsonConverter that writes schemas: the connector keys that add to the columns' schema.
  // column.propagate.source.type and datatype.propagate.source.type become outbox.propagate_source_type's (their
  // patterns are checked there, and an error names the relay's key, so it is checked here too). Comments:
  // Debezium's PostgreSQL connector builds the columns of a streamed change from pgoutput's Relation message, which
  // carries none, so include.schema.comments gives no doc and no comment parameter.
  void MapSchemaChanges() {
    schema_changes_mapped_ = true;
    for (const auto& [key, relay_key] :
         {std::pair<std::string_view, std::string_view>{"column.propagate.source.type",
                                                        "outbox.propagate_source_type.columns"},
          {"datatype.propagate.source.type", "outbox.propagate_source_type.datatypes"}}) {
      const Prop* prop = connector_.Take(std::string(key));
      if (prop == nullptr || absl::StripAsciiWhitespace(prop->value).empty()) continue;
      if (absl::StatusOr<std::vector<RouteRegex>> patterns = CompileDebeziumPatternList(prop->value); !patterns.ok()) {
        Error(prop->written, ToStd(patterns.status().message()));
      } else {
        Put(std::string(relay_key), prop->value);
      }
    }
    if (const Prop* comments = connector_.Take("include.schema.comments"); comments != nullptr) {
      Warn(*comments, "no effect: Debezium's PostgreSQL connector builds a streamed change's columns from pgoutput's "
                      "Relation message, which carries no comments");
    }
  }

  void MapProducer() {
    for (const auto& [key, prop] : producer_.Rest()) {
      const std::string* value = &prop->value;
      if (key == "key.serializer" || key == "value.serializer") {
        if (*value != kStringSerializer) {
          Error(prop->written, Cat(Quoted(*value), " would change the records; the relay writes text (",
                                   kStringSerializer, ")"));
        }
      } else if (key == "partitioner.class") {
        if (*value != "org.apache.kafka.clients.producer.internals.DefaultPartitioner") {
          Error(prop->written, Cat(Quoted(*value), " would change the partitions; the relay partitions by key as "
                                                   "the Java client does by default (murmur2)"));
        }
      } else if (key == "sasl.jaas.config") {
        MapJaas(*prop);
      } else if (key.starts_with("ssl.truststore.")) {
        Error(prop->written, "Java trust stores are not read by librdkafka: convert it to PEM and set "
                             "kafka.ssl.ca.location (for example with --set)");
      } else if (key == "ssl.keystore.type" && Lower(*value) != "pkcs12") {
        Error(prop->written, "librdkafka reads PKCS#12 key stores only (kafka.ssl.keystore.location)");
      } else if (const Rule* rule = FindRule(ProducerRules(), key)) {
        if (rule->verdict == Verdict::kRefuse) Error(prop->written, rule->reason);
        if (rule->verdict == Verdict::kWarn) Warn(*prop, rule->reason);
      } else {
        Put(Cat("kafka.", key), *value);
      }
    }
  }

  // PlainLoginModule / ScramLoginModule required username="..." password="..."; to sasl.username/sasl.password.
  void MapJaas(const Prop& prop) {
    static const std::regex kModule(
        R"(^\s*org\.apache\.kafka\.common\.security\.(plain\.PlainLoginModule|scram\.ScramLoginModule)\s+required\b)");
    static const std::regex kOption(R"re((\w+)\s*=\s*"((?:[^"\\]|\\.)*)")re");
    if (!std::regex_search(prop.value, kModule)) {
      Error(prop.written, "only PlainLoginModule and ScramLoginModule are mapped (to kafka.sasl.username and "
                          "kafka.sasl.password); set librdkafka's sasl.* keys with --set instead");
      return;
    }
    std::map<std::string, std::string> options;
    for (auto it = std::sregex_iterator(prop.value.begin(), prop.value.end(), kOption); it != std::sregex_iterator();
         ++it) {
      options[(*it)[1].str()] = (*it)[2].str();
    }
    if (!options.contains("username") || !options.contains("password")) {
      Error(prop.written, "needs username=\"...\" and password=\"...\"");
      return;
    }
    Put("kafka.sasl.username", options["username"]);
    Put("kafka.sasl.password", options["password"]);
    secrets_.push_back(options["password"]);
  }

  // The sink's keys: the Kafka producer's become kafka.*, the other sinks' rabbitmq.*, nats.* or http_sink.*, and
  // with a sink other than Kafka the offset store says where the checkpoint goes. Keys of a sink that is not
  // debezium.sink.type have no effect in Debezium Server either.
  void MapSink() {
    const SinkType type = sink_ != nullptr ? sink_->type : SinkType::kKafka;
    if (type == SinkType::kKafka) {
      MapProducer();
    } else {
      for (const auto& [key, prop] : producer_.Rest()) Warn(*prop, Cat("no effect with ", SinkTypeText()));
      MapCheckpoint();
      if (type == SinkType::kRabbitMq) MapRabbitMq();
      if (type == SinkType::kNats) MapNats();
      if (type == SinkType::kHttp) MapHttp();
    }
    for (const auto& [key, prop] : sink_keys_.Rest()) {
      if (sink_ != nullptr && key.starts_with(sink_->prefix)) {
        Warn(*prop, Cat("not a key of Debezium Server's ", sink_->debezium, " sink that the relay knows; ignored"));
      } else {
        Warn(*prop, "a setting of another Debezium Server sink; no effect");
      }
    }
  }

  std::string SinkTypeText() const { return Cat("debezium.sink.type=", sink_->debezium); }
  // The chosen sink's key `name` (after its prefix), taken; nullptr when absent.
  const Prop* SinkProp(std::string_view name) { return sink_keys_.Take(Cat(sink_->prefix, name)); }
  std::string SinkWritten(std::string_view name) const { return sink_keys_.Written(Cat(sink_->prefix, name)); }
  std::optional<bool> SinkBool(std::string_view name) { return BoolOf(SinkProp(name)); }

  // An integer of at least `min` to `tree_key`; an error naming the key otherwise.
  void PutInt(const Prop* prop, const std::string& tree_key, int64_t min) {
    if (prop == nullptr) return;
    int64_t n = 0;
    if (!absl::SimpleAtoi(ToAbsl(prop->value), &n) || n < min) {
      Error(prop->written, Cat("must be an integer of at least ", min, ", got ", Quoted(prop->value)));
      return;
    }
    Put(tree_key, prop->value);
  }

  // A record without a value (a tombstone, a NULL payload): what the sink does with it where that is not what the
  // relay does (publish it with an empty body). Tombstones asked for in the file are an error, since every one
  // would differ; a NULL payload is a fault of the row, so it is a warning.
  void NullValues(std::string_view debezium_does) {
    const auto tombstones = tree_.find("outbox.tombstone_on_empty_payload");
    if (tombstones != tree_.end() && tombstones->second.scalar == "true") {
      Error(RouterWritten("route.tombstone.on.empty.payload"),
            Cat("with ", SinkTypeText(), " Debezium Server ", debezium_does,
                " for a tombstone; the relay publishes it with an empty body"));
    } else {
      Warn(*sink_type_, Cat("Debezium Server ", debezium_does, " for a record without a value (a NULL payload); the "
                            "relay publishes it with an empty body"));
    }
  }

  // With a sink other than Kafka there is no checkpoint topic: Debezium Server's offset store says where the relay
  // keeps its checkpoint. Debezium's offsets file is Kafka Connect's, not the relay's checkpoint, so the relay's goes
  // beside it: neither overwrites the other, and going back to Debezium Server stays possible.
  void MapCheckpoint() {
    if (checkpoint_set_) return;  // outbox-relay.source.checkpoint or --set source.checkpoint
    constexpr std::string_view kFileStore = "org.apache.kafka.connect.storage.FileOffsetBackingStore";
    constexpr std::string_view kMemoryStore = "org.apache.kafka.connect.storage.MemoryOffsetBackingStore";
    const std::string how = "or set outbox-relay.source.checkpoint=file with outbox-relay.source.checkpoint_file=PATH, "
                            "or outbox-relay.source.checkpoint=none";
    const Prop* store = connector_.Take("offset.storage");
    if (store != nullptr && store->value == kMemoryStore) {
      Put("source.checkpoint", "none");
      Warn(*store, "the relay keeps no checkpoint either (source.checkpoint: none): a restart resumes from the "
                   "slot's confirmed position");
      return;
    }
    if (store != nullptr && store->value != kFileStore) {
      Error(store->written, Cat(Quoted(store->value), ": with ", SinkTypeText(),
                                " the relay keeps its checkpoint in a file or nowhere: use ", kFileStore, " ", how));
      return;
    }
    const Prop* file = connector_.Take("offset.storage.file.filename");
    if (file == nullptr || file->value.empty()) {
      Error(connector_.Written("offset.storage.file.filename"),
            Cat("required with ", SinkTypeText(), " (the relay keeps its checkpoint file beside it), ", how));
      return;
    }
    const std::string path = Cat(file->value, ".outbox-relay");
    Put("source.checkpoint", "file");
    Put("source.checkpoint_file", path);
    Warn(*file, Cat("the relay keeps its own checkpoint beside it, in ", path,
                    " (source.checkpoint: file); it neither reads nor writes Debezium's offsets"));
  }

  // debezium.sink.rabbitmq.*: the Java client's connection.* keys become rabbitmq.url and the credentials; the
  // exchange and the routing key become templates that give the names Debezium Server gives.
  void MapRabbitMq() {
    MapAmqpConnection();
    // An empty exchange is the record's topic in Debezium Server.
    const Prop* exchange = SinkProp("exchange");
    if (exchange == nullptr || exchange->value.empty()) {
      Put("rabbitmq.exchange", "${topic}");
    } else {
      CheckLiteral(*exchange);
      Put("rabbitmq.exchange", exchange->value);
    }
    MapRoutingKey();
    if (const Prop* auto_create = SinkProp("autoCreateRoutingKey"); BoolOf(auto_create).value_or(false)) {
      Error(auto_create->written, "Debezium Server declares a queue named after the routing key; the relay declares "
                                  "nothing (declare and bind the queue first, then remove this key)");
    }
    if (const Prop* durable = SinkProp("routingKeyDurable")) Warn(*durable, "no effect: the relay declares no queue");
    if (const Prop* mode = SinkProp("deliveryMode"); mode != nullptr && mode->value != "2") {
      Error(mode->written, Cat("must be 2, got ", Quoted(mode->value), " (the relay publishes persistent messages)"));
    }
    if (const Prop* ack = SinkProp("ackTimeout")) {
      Warn(*ack, "no effect: the relay waits for each publisher confirm and detects a silent broker by its "
                 "heartbeat (rabbitmq.heartbeat_s)");
    }
    // null.value (default "default") is the body Debezium Server publishes for a record without a value.
    const Prop* null_value = SinkProp("null.value");
    if (null_value == nullptr) {
      NullValues("publishes the text \"default\" (null.value)");
    } else if (!null_value->value.empty()) {
      Error(null_value->written, Cat(Quoted(null_value->value), " would be the body of a record without a value (a "
                                                                "tombstone, a NULL payload); the relay publishes an "
                                                                "empty body: set it empty"));
    }
  }

  // connection.uri or connection.host/port/virtual.host/ssl.enabled to rabbitmq.url (the Java client's defaults:
  // localhost, 5672 or 5671 with TLS, vhost "/").
  void MapAmqpConnection() {
    const Prop* uri = SinkProp("connection.uri");
    const Prop* host = SinkProp("connection.host");
    const Prop* port = SinkProp("connection.port");
    const Prop* vhost = SinkProp("connection.virtual.host");
    const Prop* tls_prop = SinkProp("connection.ssl.enabled");
    const bool tls = BoolOf(tls_prop).value_or(false);
    if (uri != nullptr) {
      if (host != nullptr || port != nullptr || vhost != nullptr || tls_prop != nullptr) {
        Error(uri->written, "give either the uri or connection.host, port, virtual.host and ssl.enabled (the Java "
                            "client lets the latter override parts of the uri; the relay does not merge them)");
      }
      Put("rabbitmq.url", uri->value);
    } else {
      std::string port_text = tls ? "5671" : "5672";
      int port_number = 0;
      if (port != nullptr && (!absl::SimpleAtoi(ToAbsl(port->value), &port_number) || port_number < 1 ||
                              port_number > 65535)) {
        Error(port->written, Cat("must be a port number, got ", Quoted(port->value)));
      } else if (port != nullptr) {
        port_text = port->value;
      }
      Put("rabbitmq.url", Cat(tls ? "amqps://" : "amqp://", AmqpHost(host != nullptr ? host->value : "localhost"),
                              ":", port_text, "/", AmqpVhost(vhost != nullptr ? vhost->value : "/")));
    }
    if (const Prop* user = SinkProp("connection.username")) Put("rabbitmq.user", user->value);
    if (const Prop* password = SinkProp("connection.password")) Put("rabbitmq.password", password->value);
    PutInt(SinkProp("connection.connection.heartbeat"), "rabbitmq.heartbeat_s", 0);
    PutInt(SinkProp("connection.connection.timeout"), "rabbitmq.connect_timeout_ms", 1);
    // TLS: the Java client verifies nothing unless asked (ssl.validate.server.certificate); the relay verifies the
    // certificate and the host name unless rabbitmq.tls.verify is false.
    const Prop* validate = SinkProp("connection.ssl.validate.server.certificate");
    if (validate == nullptr) validate = SinkProp("connection.ssl.validate-server-certificate");
    const std::optional<bool> verify = BoolOf(validate);
    if (verify.has_value() && !*verify) {
      Put("rabbitmq.tls.verify", "false");
    } else if (tls && !verify.has_value()) {
      Warn(*tls_prop, "the Java client does not verify the broker's certificate unless "
                      "ssl.validate.server.certificate=true; the relay verifies it and the host name (against the "
                      "system's CAs, or outbox-relay.rabbitmq.tls.ca)");
    }
    for (const auto& [key, prop] : sink_keys_.Rest()) {
      if (!key.starts_with(Cat(sink_->prefix, "connection."))) continue;
      const std::string_view name = std::string_view(key).substr(sink_->prefix.size());
      sink_keys_.Take(key);
      if (name.starts_with("connection.ssl.key") || name.starts_with("connection.ssl.trust")) {
        Error(prop->written, "Java key and trust stores are not read: convert them to PEM and set "
                             "outbox-relay.rabbitmq.tls.ca, outbox-relay.rabbitmq.tls.cert and "
                             "outbox-relay.rabbitmq.tls.key");
      } else if (name.starts_with("connection.ssl.verify")) {
        Warn(*prop, "the relay verifies the host name whenever it verifies the certificate (rabbitmq.tls.verify)");
      } else {
        Warn(*prop, "a Java client setting; not applied");
      }
    }
  }

  // routingKey.source: static (the default, with routingKey), topic or key.
  void MapRoutingKey() {
    const Prop* source = SinkProp("routingKey.source");
    const Prop* key = SinkProp("routingKey");
    const Prop* from_topic = SinkProp("routingKeyFromTopicName");
    if (source == nullptr && BoolOf(from_topic).value_or(false)) {
      Error(from_topic->written, "deprecated, and read differently by Debezium Server versions (older ones route by "
                                 "the topic, newer ones only warn): set routingKey.source=topic or static instead");
      return;
    }
    if (from_topic != nullptr && source != nullptr) Warn(*from_topic, "no effect with routingKey.source");
    const std::string source_value = source != nullptr ? source->value : "static";
    const std::string source_written = source != nullptr ? source->written : SinkWritten("routingKey.source");
    if (source_value == "topic") {
      if (key != nullptr) Warn(*key, "no effect with routingKey.source=topic");
      Put("rabbitmq.routing_key", "${topic}");
    } else if (source_value == "static") {
      if (key == nullptr || key->value.empty()) {
        Error(source_written, "static (Debezium's default) with an empty routingKey publishes every record with the "
                              "routing key \"\", which the relay does not: set routingKey.source=topic (the record's "
                              "topic), or a routingKey");
      } else {
        CheckLiteral(*key);
        Put("rabbitmq.routing_key", key->value);
      }
    } else if (source_value == "key") {
      Error(source_written, "the record's key as the routing key is not reproduced (rabbitmq.routing_key is made "
                            "from the topic and the route column's value): use topic or static");
    } else {
      Error(source_written, Cat("must be static, topic or key, got ", Quoted(source_value)));
    }
  }

  // A name Debezium Server uses as written: the relay's templates would read a ${ in it.
  void CheckLiteral(const Prop& prop) {
    if (absl::StrContains(prop.value, "${")) {
      Error(prop.written, Cat(Quoted(prop.value), ": a ${ would be read as a template by the relay"));
    }
  }

  // debezium.sink.nats-jetstream.*: the URL, the stream and the credentials; the relay never creates the stream.
  void MapNats() {
    if (const Prop* url = SinkProp("url"); url != nullptr && !url->value.empty()) {
      Put("nats.url", url->value);
    } else {
      Error(SinkWritten("url"), "required");
      Put("nats.url", "nats://missing");  // the error above says it
    }
    const Prop* stream = SinkProp("stream-name");
    Put("nats.stream", stream != nullptr ? stream->value : "DebeziumStream");
    const Prop* create = SinkProp("create-stream");
    if (BoolOf(create).value_or(false)) {
      Error(create->written, "the relay never creates the stream: create it (binding the topics' subjects) and "
                             "remove this key");
    }
    for (std::string_view name : {"subjects", "storage"}) {
      if (const Prop* prop = SinkProp(name)) {
        if (create == nullptr || !BoolOf(create).value_or(false)) Warn(*prop, "no effect without create-stream");
      }
    }
    // Debezium Server's credentials, in its order: JWT and seed, user and password, a Java key store.
    const Prop* jwt = SinkProp("auth.jwt");
    const Prop* seed = SinkProp("auth.seed");
    if (jwt != nullptr && seed != nullptr) {
      Error(jwt->written, "a JWT and NKey seed are read from a .creds file by the relay: write them to one and set "
                          "outbox-relay.nats.creds=PATH");
    } else if (const Prop* one = jwt != nullptr ? jwt : seed) {
      Warn(*one, "no effect: Debezium Server uses auth.jwt and auth.seed only together");
    }
    const Prop* user = SinkProp("auth.user");
    const Prop* password = SinkProp("auth.password");
    if (user != nullptr && password != nullptr) {
      Put("nats.user", user->value);
      Put("nats.password", password->value);
    } else if (const Prop* one = user != nullptr ? user : password) {
      Warn(*one, "no effect: Debezium Server uses auth.user and auth.password only together");
    }
    for (std::string_view name : {"auth.tls.keystore", "auth.tls.keystore.password", "auth.tls.password"}) {
      if (const Prop* prop = SinkProp(name)) {
        Error(prop->written, "Java key stores are not read: convert it to PEM and set outbox-relay.nats.tls.cert, "
                             "outbox-relay.nats.tls.key and outbox-relay.nats.tls.ca");
      }
    }
    PutInt(SinkProp("async.timeout.ms"), "nats.ack_timeout_ms", 1);
    if (const Prop* async = SinkProp("async.enabled")) {
      Warn(*async, "no effect: the relay publishes asynchronously, one unacknowledged message per key");
    }
    for (std::string_view name :
         {"sync.retries", "sync.retry.interval.ms", "sync.retry.max.interval.ms", "sync.retry.backoff.multiplier"}) {
      if (const Prop* prop = SinkProp(name)) {
        Warn(*prop, "not applied: the relay rewinds and publishes again, without a limit, after a failed publish");
      }
    }
    NullValues("publishes nothing");
  }

  // debezium.sink.http.*: the URL, the timeout and the retry interval. Debezium Server's header names and values
  // differ from the relay's unless the file turns both of its defaults off.
  void MapHttp() {
    if (const Prop* url = SinkProp("url"); url != nullptr && !url->value.empty()) {
      CheckLiteral(*url);
      Put("http_sink.url", url->value);
    } else {
      Error(SinkWritten("url"), "required");
      Put("http_sink.url", "http://missing");  // the error above says it
    }
    PutInt(SinkProp("timeout.ms"), "http_sink.timeout_ms", 1);
    // A fixed interval between attempts: the relay's backoff with its cap at the same value.
    if (const Prop* interval = SinkProp("retry.interval.ms")) {
      PutInt(interval, "http_sink.retry_backoff_ms", 1);
      PutInt(interval, "http_sink.retry_backoff_max_ms", 1);
    }
    if (const Prop* retries = SinkProp("retries")) {
      Warn(*retries, "not applied: the relay retries 408, 429, 5xx and failed connections without a limit, and "
                     "refuses any other answer at once (delivery.on_error)");
    }
    const Prop* base64 = SinkProp("headers.encode.base64");
    if (base64 == nullptr || BoolOf(base64).value_or(false)) {
      Error(base64 != nullptr ? base64->written : SinkWritten("headers.encode.base64"),
            "Debezium Server sends header values base64-encoded (its default, true); the relay sends them as text: "
            "set it to false");
    }
    const Prop* prefix = SinkProp("headers.prefix");
    if (prefix == nullptr || !prefix->value.empty()) {
      Error(prefix != nullptr ? prefix->written : SinkWritten("headers.prefix"),
            Cat("Debezium Server names each header ", prefix != nullptr ? prefix->value : "X-DEBEZIUM-",
                "<NAME>; the relay sends the record's header names as they are: set it empty (header names are "
                "case-insensitive in HTTP)"));
    }
    const Prop* batch = SinkProp("batch.enabled");
    if (BoolOf(batch).value_or(false)) {
      Error(batch->written, "Debezium Server's batch body (a JSON array of the values, the first record's headers) "
                            "is not the relay's (http_sink.batch_max_events): remove it");
    }
    if (const Prop* size = SinkProp("batch.max-size")) Warn(*size, "no effect: batches are not mapped");
    const Prop* auth = SinkProp("authentication.type");
    if (auth != nullptr) {
      Error(auth->written, Cat(Quoted(auth->value), ": the relay sends a fixed bearer token or basic auth, not "
                                                    "jwt, oauth2 or standard-webhooks: set "
                                                    "outbox-relay.http_sink.bearer_token, or remove it"));
    }
    for (const auto& [key, prop] : sink_keys_.Rest()) {
      if (!key.starts_with(Cat(sink_->prefix, "authentication."))) continue;
      sink_keys_.Take(key);
      if (auth == nullptr) Warn(*prop, "no effect without authentication.type");
    }
    NullValues("sends nothing");
  }

  // skipped.operations: `u` makes UPDATEs of the outbox silent (on_update ignore); `c` would drop every event.
  void ReadSkippedOperations() {
    const Prop* skipped = connector_.Take("skipped.operations");
    if (skipped == nullptr) return;
    for (const std::string& op : SplitList(skipped->value)) {
      if (op == "u") skip_updates_ = true;
      if (op == "c") Error(skipped->written, "skipping inserts (c) would drop every event");
    }
  }

  void ClassifyConnectorRest() {
    const Prop* metadata = connector_.Take("provide.transaction.metadata");
    if (metadata != nullptr && Lower(metadata->value) == "true") {
      Error(metadata->written, "would add transaction records to a topic; the relay writes none");
    }
    // The connector's modes of column values become the relay's keys of the same values (the values it writes as
    // Debezium does); another value is an error.
    struct Mode {
      std::string_view key, relay_key;
      std::vector<std::string_view> values;
    };
    static const std::vector<Mode> kModes = {
        {"binary.handling.mode", "outbox.binary_handling_mode", {"bytes", "base64", "base64-url-safe", "hex"}},
        {"decimal.handling.mode", "outbox.decimal_handling_mode", {"precise", "string", "double"}},
        {"interval.handling.mode", "outbox.interval_handling_mode", {"numeric", "string"}},
        {"time.precision.mode",
         "outbox.time_precision_mode",
         {"adaptive", "adaptive_time_microseconds", "microseconds", "nanoseconds", "connect", "isostring"}},
        {"hstore.handling.mode", "outbox.hstore_handling_mode", {"json", "map"}},
        {"event.converting.failure.handling.mode",
         "outbox.event_converting_failure_handling_mode",
         {"fail", "warn", "skip"}},
        {"include.unknown.datatypes", "outbox.include_unknown_datatypes", {"false", "true"}}};
    // Debezium's default of event.converting.failure.handling.mode is warn (the relay's YAML default is fail).
    if (connector_.Peek("event.converting.failure.handling.mode") == nullptr) {
      Put("outbox.event_converting_failure_handling_mode", "warn");
    }
    for (const Mode& m : kModes) {
      const Prop* mode = connector_.Take(std::string(m.key));
      if (mode == nullptr) continue;
      const std::string value = Lower(ToStd(absl::StripAsciiWhitespace(mode->value)));
      if (std::find(m.values.begin(), m.values.end(), value) != m.values.end()) {
        Put(std::string(m.relay_key), value);
      } else {
        std::string list;
        for (size_t i = 0; i < m.values.size(); ++i) {
          list.append(i == 0 ? "" : i + 1 == m.values.size() ? " or " : ", ").append(m.values[i]);
        }
        Error(mode->written, Cat("must be ", list, ", got ", Quoted(mode->value)));
      }
    }
    // money.fraction.digits: the scale of money's Decimal.
    if (const Prop* digits = connector_.Take("money.fraction.digits")) {
      int value = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(digits->value), &value) && value >= 0 && value <= 1000) {
        Put("outbox.money_fraction_digits", std::to_string(value));
      } else {
        Error(digits->written, Cat("must be a number of digits from 0 to 1000, got ", Quoted(digits->value)));
      }
    }
    // Custom converters (CustomConverter classes) change the values of the columns they select, which the router
    // then reads and writes; the relay runs no Java.
    if (const Prop* converters = connector_.Take("converters");
        converters != nullptr && !absl::StripAsciiWhitespace(converters->value).empty()) {
      Error(converters->written, "custom converters (Java classes) change the column values the Outbox Event Router "
                                 "writes, and the relay does not run them; remove them from the outbox's connector");
    }
    for (const auto& [key, prop] : connector_.Rest()) {
      if (const Rule* rule = FindRule(ConnectorRules(), key)) {
        if (rule->verdict == Verdict::kRefuse) Error(prop->written, rule->reason);
        if (rule->verdict == Verdict::kWarn) Warn(*prop, rule->reason);
      } else {
        Warn(*prop, "not known to the relay; ignored");
      }
    }
    for (auto& [key, value] : relay_) {
      tree_[key] = RawValue{.kind = RawValue::Kind::kScalar, .scalar = std::move(value), .list = {}, .plain = false};
    }
  }

  std::vector<PropertyEntry> entries_;
  const Resolver& resolver_;
  bool server_ = false;
  Section connector_, producer_, transforms_, router_, formats_{"debezium.format."};
  Section sink_keys_{std::string(kServerSink)};  // debezium.sink.* but the type and the Kafka producer's
  std::optional<Prop> sink_type_;
  const ServerSink* sink_ = nullptr;  // debezium.sink.type's, when the relay has it
  bool schema_changes_mapped_ = false;  // MapSchemaChanges ran: the propagations are the relay's
  bool checkpoint_set_ = false;       // the relay's source.checkpoint is given (relay key or --set)
  std::vector<std::pair<std::string, std::string>> relay_;
  std::string router_written_prefix_;
  bool skip_updates_ = false;
  std::string table_name_;  // schema.table of table.include.list
  bool envelope_ = false;   // an additional field has placement envelope
  std::map<std::string, Prop> predicates_;  // predicates and predicates.* (Kafka Connect's keys)
  std::string used_predicate_;              // the one the router names
  RawTree tree_;
  std::optional<Route> route_;
  std::vector<std::string> errors_, secrets_;
  std::vector<std::pair<int, std::string>> warnings_;  // (line, text)
};

}  // namespace

}  // namespace outbox::config::internal

namespace outbox::config::debezium {

using internal::BuildConfig;
using internal::DebeziumMapper;
using internal::MayBeConnectorJson;
using internal::LooksLikeJsonObject;
using internal::ParseConnectorJson;
using internal::ParseJavaProperties;
using internal::PropertyEntry;
using internal::Route;
using internal::AddSecrets;

absl::StatusOr<Config> Load(const std::string& path, const std::string& text,
                            const std::vector<std::pair<std::string, std::string>>& overrides,
                            const Resolver& resolver) {
  const bool json_path = absl::EndsWith(path, ".json");
  // A .json file that is no connector config is a relay config written in JSON (which is YAML).
  if (json_path && !MayBeConnectorJson(text)) return LoadYaml(text, overrides, resolver);
  const bool json = json_path || LooksLikeJsonObject(text);
  absl::StatusOr<std::vector<PropertyEntry>> entries = json ? ParseConnectorJson(text) : ParseJavaProperties(text);
  if (!entries.ok()) return absl::InvalidArgumentError(Cat(path, ": ", ToStd(entries.status().message())));

  const bool checkpoint_overridden = std::any_of(overrides.begin(), overrides.end(),
                                                 [](const auto& o) { return o.first == "source.checkpoint"; });
  DebeziumMapper mapper(*std::move(entries), resolver, checkpoint_overridden);
  mapper.Run();
  std::optional<Route> route = mapper.route();
  std::vector<std::string> problems = std::move(mapper.errors());
  // A regex route given with --set replaces the file's routing, a template too (which would otherwise conflict).
  const bool regex_overridden = std::any_of(overrides.begin(), overrides.end(), [](const auto& o) {
    return o.first == "outbox.route.topic_regex" || o.first == "outbox.route.topic_replacement";
  });
  if (regex_overridden) mapper.tree().erase("outbox.route.topic");
  absl::StatusOr<Config> config = BuildConfig(std::move(mapper.tree()), overrides, resolver);
  if (!config.ok()) {
    std::string message(config.status().message());
    // Name the brokers' key as this file would.
    const std::string hint = mapper.server()
                                 ? "debezium.sink.kafka.producer.bootstrap.servers: required"
                                 : "kafka.bootstrap.servers: required (a connector config does not name the "
                                   "brokers, the worker's does: add --set kafka.bootstrap.servers=HOST:PORT, or "
                                   "outbox-relay.kafka.bootstrap.servers=HOST:PORT to the file)";
    message = absl::StrReplaceAll(message, {{"kafka.bootstrap.servers: required", hint}});
    problems.push_back(std::move(message));
  }
  if (!problems.empty()) {
    Config redactor;
    AddSecrets(std::move(mapper.secrets()), &redactor.secrets);
    return absl::InvalidArgumentError(Redact(redactor, absl::StrJoin(problems, "; ")));
  }
  // A Debezium file is one pipeline.
  PipelineConfig& pipeline = config->pipelines.front();
  pipeline.warnings = mapper.warnings();
  const bool route_overridden = std::any_of(overrides.begin(), overrides.end(),
                                            [](const auto& o) { return o.first == "outbox.route.topic"; });
  if (route.has_value() && !route->topic_template.has_value() && !route_overridden && !regex_overridden) {
    pipeline.outbox.route_topic_regex = route->regex;
    pipeline.outbox.route_topic_replacement = route->replacement;
  }
  AddSecrets(mapper.secrets(), &pipeline.secrets);
  AddSecrets(std::move(mapper.secrets()), &config->secrets);
  return config;
}

}  // namespace outbox::config::debezium
