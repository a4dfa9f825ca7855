// Config loading: defaults, validation messages, overrides, ${env:}/${file:} substitution, secrets and redaction.
#include "config/config.h"
#include "config/java_regex.h"
#include "config/load_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "config/fake_resolver.h"
#include "config/loaded.h"

namespace outbox::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Overrides = std::vector<std::pair<std::string, std::string>>;

// The minimal file of SPEC.md §3, verbatim.
constexpr char kMinimal[] = R"(source:
  conninfo: "host=127.0.0.1 port=5432 dbname=app user=relay"   # libpq conninfo or URI
  slot: outbox_relay
  publication: outbox_pub
outbox:
  table: public.outbox
kafka:
  bootstrap.servers: "127.0.0.1:9092"
)";

absl::StatusOr<Loaded> Load(const std::string& yaml, const Overrides& overrides = {},
                            const Resolver& resolver = FakeResolver()) {
  return Flatten(LoadYaml(yaml, overrides, resolver));
}

// kMinimal without the line that contains `needle`.
std::string MinimalWithout(absl::string_view needle) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(kMinimal, '\n')) {
    if (line.find(needle) == absl::string_view::npos) kept.emplace_back(line);
  }
  return absl::StrJoin(kept, "\n");
}

std::string ErrorOf(const absl::StatusOr<Loaded>& config) {
  EXPECT_FALSE(config.ok());
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << config.status();
  return std::string(config.status().message());
}

TEST(Config, MinimalSpecFileLoadsWithEveryDefault) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Loaded& c = *loaded;

  EXPECT_EQ(c.source.conninfo, "host=127.0.0.1 port=5432 dbname=app user=relay");
  EXPECT_EQ(c.source.slot, "outbox_relay");
  EXPECT_EQ(c.source.publication, "outbox_pub");
  EXPECT_FALSE(c.source.create_slot);
  EXPECT_FALSE(c.source.failover);
  EXPECT_EQ(c.source.checkpoint, CheckpointStore::kKafka);
  EXPECT_EQ(c.source.checkpoint_topic, "outbox_relay.checkpoints");
  EXPECT_EQ(c.source.checkpoint_file, "");
  EXPECT_EQ(c.source.instance, "");
  EXPECT_EQ(c.source.status_interval_ms, 1000);
  EXPECT_FALSE(c.source.messages);
  EXPECT_THAT(c.source.message_prefixes, ElementsAre("outbox"));
  EXPECT_FALSE(c.source.streaming);

  EXPECT_EQ(c.outbox.table, "public.outbox");
  EXPECT_EQ(c.outbox.fields.id, "id");
  EXPECT_EQ(c.outbox.fields.key, "aggregateid");
  EXPECT_EQ(c.outbox.fields.type, "type");
  EXPECT_EQ(c.outbox.fields.payload, "payload");
  EXPECT_EQ(c.outbox.fields.timestamp, std::nullopt);
  EXPECT_TRUE(c.outbox.fields.additional.empty());
  EXPECT_EQ(c.outbox.route_by, "type");
  EXPECT_EQ(c.outbox.route_topic, "outbox.event.${routedByValue}");
  EXPECT_EQ(c.outbox.route_topic_regex, "");
  EXPECT_EQ(c.outbox.route_topic_replacement, "");
  EXPECT_EQ(c.outbox.on_update, OnUpdate::kWarn);
  EXPECT_FALSE(c.outbox.tombstone_on_empty_payload);
  EXPECT_EQ(c.outbox.format, Format::kRaw);
  EXPECT_EQ(c.outbox.header_values, HeaderValues::kText);
  EXPECT_EQ(c.outbox.string_converter_values, StringValues::kText);
  EXPECT_EQ(c.outbox.debezium_context_logical_name, "");

  EXPECT_EQ(c.kafka, (std::map<std::string, std::string>{{"bootstrap.servers", "127.0.0.1:9092"}}));

  EXPECT_EQ(c.delivery.max_inflight_bytes, 32 * 1024 * 1024);
  EXPECT_EQ(c.delivery.max_inflight_events, 100000);
  EXPECT_EQ(c.delivery.release_slot_after_ms, 30000);
  EXPECT_EQ(c.delivery.shutdown_timeout_ms, 30000);
  EXPECT_EQ(c.delivery.on_error, OnError::kHalt);
  EXPECT_EQ(c.delivery.dead_letter_topic, "outbox.dead_letter");
  EXPECT_FALSE(c.delivery.unsafe);

  EXPECT_EQ(c.http_listen, "127.0.0.1:9188");
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.log_format, LogFormat::kText);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_TRUE(c.secrets.empty());
}

TEST(Config, ReadsEveryKeyOfTheLayout) {
  absl::StatusOr<Loaded> loaded = Load(R"(
source:
  conninfo: postgresql://relay@db/app
  slot: s1
  publication: p1
  create_slot: true
  failover: true
  checkpoint: file
  checkpoint_topic: cp.topic
  checkpoint_file: /var/lib/relay/cp
  instance: relay-a
  status_interval_ms: 250
  messages: no  # (yes with streaming is refused: Config.MessagesWithStreamingAreRefusedNamingBothKeys)
  message_prefixes: [outbox, billing]
  streaming: true
outbox:
  table: events.outbox_events
  fields:
    id: event_id
    key: agg_id
    type: event_type
    payload: body
    timestamp: created_at
    additional: ["tenant:header", "trace_id:header:traceparent"]
  route:
    by: aggregatetype
    topic: ${routedByValue}.events
  on_update: error
  tombstone_on_empty_payload: true
  format: cloudevents
  debezium_context_logical_name: shop
kafka:
  bootstrap.servers: b1:9092,b2:9092
delivery:
  max_inflight_bytes: 1048576
  max_inflight_events: 500
  release_slot_after_ms: 10000
  shutdown_timeout_ms: 5000
  on_error: dead_letter
  dead_letter_topic: dlq
  unsafe: true
http:
  listen: 0.0.0.0:0
log:
  level: debug
  format: json
)");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Loaded& c = *loaded;
  EXPECT_EQ(c.source.conninfo, "postgresql://relay@db/app");
  EXPECT_TRUE(c.source.create_slot);
  EXPECT_TRUE(c.source.failover);
  EXPECT_EQ(c.source.checkpoint, CheckpointStore::kFile);
  EXPECT_EQ(c.source.checkpoint_topic, "cp.topic");
  EXPECT_EQ(c.source.checkpoint_file, "/var/lib/relay/cp");
  EXPECT_EQ(c.source.instance, "relay-a");
  EXPECT_EQ(c.source.status_interval_ms, 250);
  EXPECT_FALSE(c.source.messages);
  EXPECT_THAT(c.source.message_prefixes, ElementsAre("outbox", "billing"));
  EXPECT_TRUE(c.source.streaming);
  EXPECT_EQ(c.outbox.table, "events.outbox_events");
  EXPECT_EQ(c.outbox.fields.id, "event_id");
  EXPECT_EQ(c.outbox.fields.key, "agg_id");
  EXPECT_EQ(c.outbox.fields.type, "event_type");
  EXPECT_EQ(c.outbox.fields.payload, "body");
  EXPECT_EQ(c.outbox.fields.timestamp, "created_at");
  ASSERT_EQ(c.outbox.fields.additional.size(), 2u);
  EXPECT_EQ(c.outbox.route_by, "aggregatetype");
  EXPECT_EQ(c.outbox.route_topic, "${routedByValue}.events");
  EXPECT_EQ(c.outbox.on_update, OnUpdate::kError);
  EXPECT_TRUE(c.outbox.tombstone_on_empty_payload);
  EXPECT_EQ(c.outbox.format, Format::kCloudEvents);
  EXPECT_EQ(c.outbox.debezium_context_logical_name, "shop");
  EXPECT_EQ(c.kafka.at("bootstrap.servers"), "b1:9092,b2:9092");
  EXPECT_EQ(c.delivery.max_inflight_bytes, 1048576);
  EXPECT_EQ(c.delivery.max_inflight_events, 500);
  EXPECT_EQ(c.delivery.release_slot_after_ms, 10000);
  EXPECT_EQ(c.delivery.shutdown_timeout_ms, 5000);
  EXPECT_EQ(c.delivery.on_error, OnError::kDeadLetter);
  EXPECT_EQ(c.delivery.dead_letter_topic, "dlq");
  EXPECT_TRUE(c.delivery.unsafe);
  EXPECT_EQ(c.http_listen, "0.0.0.0:0");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.log_format, LogFormat::kJson);
}

struct MissingCase {
  const char* line;      // the line of kMinimal removed
  const char* expected;  // the whole error message
};
void PrintTo(const MissingCase& c, std::ostream* os) { *os << c.expected; }

class RequiredKey : public ::testing::TestWithParam<MissingCase> {};

TEST_P(RequiredKey, MissingKeyIsNamed) {
  EXPECT_EQ(ErrorOf(Load(MinimalWithout(GetParam().line))), GetParam().expected);
}

// "source.slot: required" -> "source_slot".
std::string KeyOf(const std::string& message) {
  std::string key = message.substr(0, message.find(':'));
  std::replace(key.begin(), key.end(), '.', '_');
  return key;
}

INSTANTIATE_TEST_SUITE_P(Config, RequiredKey,
                         ::testing::Values(MissingCase{"conninfo:", "source.conninfo: required"},
                                           MissingCase{"slot:", "source.slot: required"},
                                           MissingCase{"publication:", "source.publication: required"},
                                           MissingCase{"bootstrap.servers:", "kafka.bootstrap.servers: required"}),
                         [](const auto& info) { return KeyOf(info.param.expected); });

TEST(Config, MessagesWithStreamingAreRefusedNamingBothKeys) {
  const std::string error = ErrorOf(Load(kMinimal, {{"source.messages", "true"}, {"source.streaming", "true"}}));
  EXPECT_THAT(error, HasSubstr("source.messages: cannot be used with source.streaming"));
  EXPECT_THAT(error, HasSubstr("savepoint"));
  EXPECT_TRUE(Load(kMinimal, {{"source.messages", "true"}}).ok());
  EXPECT_TRUE(Load(kMinimal, {{"source.streaming", "true"}}).ok());
}

// The converters YAML chooses as a Debezium file does; json_schema (JsonConverter with schemas) writes the columns'
// schemas, which a logical message has not.
TEST(Config, ConvertersAreReadAndJsonSchemaIsRefusedWithMessages) {
  std::string yaml = kMinimal;
  yaml.insert(yaml.find("kafka:"), "  key_converter: json_schema\n  value_converter: json_schema\n");
  auto c = Load(yaml);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, Converter::kJsonSchema);
  EXPECT_EQ(c->outbox.value_converter, Converter::kJsonSchema);
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.value_converter", "json_schema"}, {"source.messages", "true"}})),
            "outbox.value_converter: json_schema writes the columns' schema, which a logical message "
            "(source.messages) has not");
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.key_converter", "jsonschema"}})),
              HasSubstr("outbox.key_converter: must be string, json, json_schema or bytes"));
}

// outbox.key_converter_binary / value_converter_binary (Debezium's BinaryDataConverter in front of the converter):
// read as booleans; only for the raw format of table rows, as it chooses by the column's type.
TEST(Config, BinaryConverterKeysAreReadAndRefusedWithOtherFormatsAndMessages) {
  auto plain = Load(kMinimal);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->outbox.key_converter_binary);
  EXPECT_FALSE(plain->outbox.value_converter_binary);
  auto c = Load(kMinimal, {{"outbox.value_converter", "json"}, {"outbox.value_converter_binary", "true"},
                           {"outbox.key_converter_binary", "true"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->outbox.key_converter_binary);
  EXPECT_TRUE(c->outbox.value_converter_binary);
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.value_converter_binary", "true"}, {"outbox.format", "cloudevents"}})),
              HasSubstr("outbox.value_converter_binary: only with outbox.format: raw"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.key_converter_binary", "true"}, {"source.messages", "true"}})),
              HasSubstr("outbox.key_converter_binary: chooses by the column's type"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.value_converter_binary", "sometimes"}})),
              HasSubstr("outbox.value_converter_binary"));
}

// outbox.string_converter_values: read; the other formats write the key's and the payload's text, so it falls back to
// text there (a Debezium file's debezium does not stop --set outbox.format).
TEST(Config, StringConverterValuesAreReadAndTextWithOtherFormats) {
  auto c = Load(kMinimal, {{"outbox.string_converter_values", "debezium"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.string_converter_values, StringValues::kDebezium);
  c = Load(kMinimal, {{"outbox.string_converter_values", "debezium"}, {"outbox.format", "protobuf"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.string_converter_values, StringValues::kText);
}

// outbox.expand_json_payload, its two behaviors and its field name adjustment; only for the raw format of table rows.
TEST(Config, ExpandedJsonPayloadKeysAreReadAndRefusedWithOtherFormatsAndMessages) {
  auto plain = Load(kMinimal);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->outbox.expand_json_payload);
  EXPECT_EQ(plain->outbox.json_payload_null_behavior, JsonNullBehavior::kIgnore);
  EXPECT_EQ(plain->outbox.json_payload_empty_array_behavior, JsonEmptyArrayBehavior::kIgnore);
  auto c = Load(kMinimal, {{"outbox.expand_json_payload", "true"},
                           {"outbox.json_payload_null_behavior", "optional_bytes"},
                           {"outbox.json_payload_empty_array_behavior", "optional_string"},
                           {"outbox.json_payload_field_name_adjustment", "avro_unicode"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->outbox.expand_json_payload);
  EXPECT_EQ(plain->outbox.json_payload_field_name_adjustment, config::FieldNameAdjustment::kNone);
  EXPECT_EQ(c->outbox.json_payload_field_name_adjustment, config::FieldNameAdjustment::kAvroUnicode);
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.json_payload_field_name_adjustment", "avro-unicode"}})),
              HasSubstr("outbox.json_payload_field_name_adjustment: must be"));
  EXPECT_EQ(c->outbox.json_payload_null_behavior, JsonNullBehavior::kOptionalBytes);
  EXPECT_EQ(c->outbox.json_payload_empty_array_behavior, JsonEmptyArrayBehavior::kOptionalString);
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.json_payload_null_behavior", "keep"}})),
              HasSubstr("outbox.json_payload_null_behavior"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.expand_json_payload", "true"}, {"outbox.format", "cloudevents"}})),
              HasSubstr("outbox.expand_json_payload: only with outbox.format: raw"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.expand_json_payload", "true"}, {"source.messages", "true"}})),
              HasSubstr("outbox.expand_json_payload: expands a payload column"));
}

// outbox.propagate_source_type.columns and .datatypes: Debezium's lists of patterns, only where a json_schema
// converter writes schemas; a list or pattern that cannot be read as Debezium reads it is an error naming the key.
TEST(Config, PropagateSourceTypeListsAreReadOnlyWithSchemasAndCheckedNamingTheKey) {
  auto c = Load(kMinimal, {{"outbox.value_converter", "json_schema"},
                           {"outbox.propagate_source_type.columns", R"(public\.outbox\.(payload|kind))"},
                           {"outbox.propagate_source_type.datatypes", R"(.+\.NUMERIC, .+\.x{1\,2})"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.propagate_source_type_columns, R"(public\.outbox\.(payload|kind))");
  EXPECT_EQ(c->outbox.propagate_source_type_datatypes, R"(.+\.NUMERIC, .+\.x{1\,2})");
  for (const char* converter : {"outbox.key_converter", "outbox.header_values"}) {
    EXPECT_TRUE(Load(kMinimal, {{converter, "json_schema"}, {"outbox.propagate_source_type.columns", ".*"}}).ok())
        << converter;
  }
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.propagate_source_type.columns", ".*"}})),
              HasSubstr("outbox.propagate_source_type.columns: only with a json_schema converter"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.value_converter", "json_schema"},
                                      {"outbox.propagate_source_type.datatypes", "ok, (broken"}})),
              HasSubstr("outbox.propagate_source_type.datatypes: \"(broken\": not a valid regular expression"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.value_converter", "json_schema"},
                                      {"outbox.propagate_source_type.columns", "public.outbox.caf\xC3\xA9"}})),
              AllOf(HasSubstr("outbox.propagate_source_type.columns: \"public.outbox.caf"),
                    HasSubstr("has characters beyond ASCII")));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.value_converter", "json_schema"},
                                      {"outbox.propagate_source_type.columns", "a,b\\"}})),
              HasSubstr("outbox.propagate_source_type.columns: ends in an unterminated escape"));
}

// outbox.column_mappers.<Debezium's name after "column.">: the rules in YAML (a map under outbox.column_mappers) or
// --set, each a list of patterns; a name Debezium would not read, a list that does not compile and a digest the relay
// does not have are errors naming the key; `check` shows each rule.
TEST(Config, ColumnMappersAreReadByDebeziumsNamesAndCheckedNamingTheKey) {
  std::string yaml = kMinimal;
  yaml.replace(yaml.find("  table: public.outbox\n"), 0,
               "  column_mappers:\n"
               "    truncate.to.20.chars: 'public\\.outbox\\.note'\n"
               "    mask.hash.v2.sha-256.with.salt.a.b: '.*\\.email, .*\\.ssn'\n");
  auto c = Load(yaml, {{"outbox.column_mappers.mask.with.4.chars", R"(public\.outbox\.secret)"}});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->outbox.column_mappers.size(), 3u);
  std::map<std::string, const ColumnMapperRule*> by_key;
  for (const ColumnMapperRule& r : c->outbox.column_mappers) by_key[r.key] = &r;
  const ColumnMapperRule* truncate = by_key["outbox.column_mappers.truncate.to.20.chars"];
  ASSERT_NE(truncate, nullptr);
  EXPECT_EQ(truncate->kind, ColumnMapperRule::Kind::kTruncate);
  EXPECT_EQ(truncate->chars, 20);
  EXPECT_EQ(truncate->columns, R"(public\.outbox\.note)");
  const ColumnMapperRule* hash = by_key["outbox.column_mappers.mask.hash.v2.sha-256.with.salt.a.b"];
  ASSERT_NE(hash, nullptr);
  EXPECT_EQ(hash->kind, ColumnMapperRule::Kind::kHashV2);
  EXPECT_EQ(hash->algorithm, "sha-256");
  EXPECT_EQ(hash->salt, "a.b");
  const ColumnMapperRule* mask = by_key["outbox.column_mappers.mask.with.4.chars"];
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->kind, ColumnMapperRule::Kind::kMask);
  EXPECT_EQ(mask->chars, 4);
  const std::vector<std::pair<std::string, std::string>> shown = EffectiveValues(c->process, *c);
  EXPECT_THAT(shown, ::testing::Contains(std::pair<std::string, std::string>("outbox.column_mappers.truncate.to.20.chars",
                                                                  R"(public\.outbox\.note)")));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.column_mappers.mask.with.x.chars", "a"}})),
              HasSubstr("outbox.column_mappers.mask.with.x.chars: expected truncate.to.<N>.chars"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.column_mappers.mask.hash.SHA-256.with.salt.", "a"}})),
              HasSubstr("outbox.column_mappers.mask.hash.SHA-256.with.salt.: expected"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.column_mappers.mask.hash.MD2.with.salt.s", "a"}})),
              HasSubstr("outbox.column_mappers.mask.hash.MD2.with.salt.s: no digest \"MD2\""));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.column_mappers.truncate.to.3.chars", "(broken"}})),
              HasSubstr("outbox.column_mappers.truncate.to.3.chars: \"(broken\": not a valid regular expression"));
}

// outbox.route.topic_regex and outbox.route.topic_replacement: Debezium's regex routing in YAML, both keys together and
// not beside outbox.route.topic; a pattern or replacement Java would read differently or throw on names its key.
TEST(Config, ARegexRouteNeedsBothKeysAndNoTemplate) {
  absl::StatusOr<Loaded> c = Load(kMinimal, {{"outbox.route.topic_regex", "(?<routedByValue>[a-z]+)_(v\\d+)"},
                                             {"outbox.route.topic_replacement", "${routedByValue}.events.$2"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.route_topic_regex, "(?<routedByValue>[a-z]+)_(v\\d+)");
  EXPECT_EQ(c->outbox.route_topic_replacement, "${routedByValue}.events.$2");
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic_regex", "(.*)"}})),
              HasSubstr("outbox.route.topic_replacement: required with outbox.route.topic_regex"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic_replacement", "$1"}})),
              HasSubstr("outbox.route.topic_regex: required with outbox.route.topic_replacement"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic", "t.${routedByValue}"},
                                      {"outbox.route.topic_regex", "(.*)"},
                                      {"outbox.route.topic_replacement", "$1"}})),
              HasSubstr("outbox.route.topic_regex: set either outbox.route.topic or"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic_regex", "(broken"},
                                      {"outbox.route.topic_replacement", "$1"}})),
              HasSubstr("outbox.route.topic_regex: \"(broken\""));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic_regex", "(.*)"},
                                      {"outbox.route.topic_replacement", "$2"}})),
              HasSubstr("outbox.route.topic_replacement: \"$2\""));
}

// Debezium's lists of patterns: split at commas (`\,` one inside a pattern), trimmed, empties dropped; matched whole,
// ignoring the case of ASCII letters only (Pattern.CASE_INSENSITIVE).
TEST(Config, DebeziumPatternListsSplitAndMatchIgnoringAsciiCase) {
  auto parts = SplitDebeziumRegexList(R"( a\.b ,, x{1\,2} ,\\,)");
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(*parts, (std::vector<std::string>{R"(a\.b)", "x{1,2}", R"(\\)"}));
  EXPECT_FALSE(SplitDebeziumRegexList("a\\").ok());
  auto regex = RouteRegex::Compile(R"(public\.outbox\.[a-z]+_ID)", RouteRegex::Case::kIgnoreAsciiCase);
  ASSERT_TRUE(regex.ok()) << regex.status();
  EXPECT_TRUE(regex->Matches("PUBLIC.Outbox.order_id"));
  EXPECT_FALSE(regex->Matches("public.outbox.order_id2"));
  auto sensitive = RouteRegex::Compile(R"(public\.outbox\.[a-z]+_ID)");
  ASSERT_TRUE(sensitive.ok());
  EXPECT_FALSE(sensitive->Matches("public.outbox.order_id"));
  EXPECT_FALSE(RouteRegex::Compile("caf\xC3\xA9", RouteRegex::Case::kIgnoreAsciiCase).ok());
  // Java reads \p{Lu} under CASE_INSENSITIVE as any cased letter, and \p{Lower} as \p{Alpha}.
  auto upper = RouteRegex::Compile(R"(\p{Lu}\p{Lower})", RouteRegex::Case::kIgnoreAsciiCase);
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_TRUE(upper->Matches("kK"));
  EXPECT_FALSE(upper->Matches("k1"));
  EXPECT_TRUE(RouteRegex::Compile(R"(\\p)", RouteRegex::Case::kIgnoreAsciiCase).ok());
  // A list is matched once per column; \b, which Java 17 and 19 read apart beyond ASCII, is refused there.
  EXPECT_FALSE(RouteRegex::Compile(R"(\bx)", RouteRegex::Case::kIgnoreAsciiCase).ok());
}

TEST(Config, ExactlyOnceIsReadAndItsContradictionsAreRefusedNamingTheKey) {
  auto loaded = Load(kMinimal, {{"delivery.guarantee", "exactly_once"}, {"delivery.transaction_interval_ms", "250"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->delivery.guarantee, config::Guarantee::kExactlyOnce);
  EXPECT_EQ(loaded->delivery.transaction_interval_ms, 250);
  EXPECT_EQ(Load(kMinimal)->delivery.guarantee, config::Guarantee::kAtLeastOnce);
  EXPECT_EQ(Load(kMinimal)->delivery.transaction_interval_ms, 100);
  const Overrides eo = {{"delivery.guarantee", "exactly_once"}};
  const auto with = [&](Overrides more) {
    more.insert(more.begin(), eo.begin(), eo.end());
    return ErrorOf(Load(kMinimal, more));
  };
  EXPECT_THAT(with({{"source.checkpoint", "file"}, {"source.checkpoint_file", "/tmp/x"}}),
              HasSubstr("delivery.guarantee: exactly_once needs source.checkpoint: kafka"));
  EXPECT_THAT(with({{"source.checkpoint", "none"}, {"source.create_slot", "false"}}),
              HasSubstr("delivery.guarantee: exactly_once needs source.checkpoint: kafka"));
  EXPECT_THAT(with({{"delivery.unsafe", "true"}}), HasSubstr("delivery.guarantee: exactly_once cannot be used with delivery.unsafe"));
  EXPECT_THAT(with({{"source.streaming", "true"}}), HasSubstr("delivery.guarantee: exactly_once cannot be used with source.streaming"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"delivery.guarantee", "exactly-once"}})),
              HasSubstr("delivery.guarantee: must be"));
}

TEST(Config, ReceiveTimeoutBelowTwiceTheStatusIntervalIsRefused) {
  const std::string error =
      ErrorOf(Load(kMinimal, {{"source.status_interval_ms", "1000"}, {"source.receive_timeout_ms", "1500"}}));
  EXPECT_THAT(error, HasSubstr("source.receive_timeout_ms: 1500 is less than twice source.status_interval_ms"));
}

TEST(Config, ReadBatchWaitDefaultsTo200MicrosecondsAndIsBounded) {
  auto c = Load(kMinimal);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.read_batch_us, 200);
  auto off = Load(kMinimal, {{"source.read_batch_us", "0"}});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->source.read_batch_us, 0);
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.read_batch_us", "100001"}})),
              HasSubstr("source.read_batch_us: 100001 is more than 100000"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.read_batch_us", "-1"}})), HasSubstr("source.read_batch_us"));
}

TEST(Config, ReceiveBufferIsTheKernelsDefaultUnlessSetWithinBounds) {
  auto c = Load(kMinimal);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.receive_buffer_bytes, 0);
  auto set = Load(kMinimal, {{"source.receive_buffer_bytes", "262144"}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->source.receive_buffer_bytes, 262144);
  EXPECT_TRUE(Load(kMinimal, {{"source.receive_buffer_bytes", "65536"}}).ok());
  EXPECT_TRUE(Load(kMinimal, {{"source.receive_buffer_bytes", "268435456"}}).ok());
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.receive_buffer_bytes", "65535"}})),
              HasSubstr("source.receive_buffer_bytes: 65535 is not 0 (the kernel's default) or between 65536 and"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.receive_buffer_bytes", "268435457"}})),
              HasSubstr("source.receive_buffer_bytes: 268435457 is not 0"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.receive_buffer_bytes", "-1"}})), HasSubstr("source.receive_buffer_bytes"));
}

TEST(Config, EmptyRequiredValueIsMissing) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.slot", ""}})), "source.slot: required");
}

TEST(Config, EmptyFileNamesEveryRequiredKey) {
  std::string error = ErrorOf(Load(""));
  EXPECT_THAT(error, StartsWith("source.conninfo: required"));
  for (const char* key : {"source.slot", "source.publication", "kafka.bootstrap.servers"}) {
    EXPECT_THAT(error, HasSubstr(absl::StrCat(key, ": required")));
  }
}

struct EnumCase {
  const char* key;
  const char* expected;
};
void PrintTo(const EnumCase& c, std::ostream* os) { *os << c.expected; }

class BadEnum : public ::testing::TestWithParam<EnumCase> {};

TEST_P(BadEnum, ErrorNamesKeyChoicesAndValue) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{GetParam().key, "x"}})), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Config, BadEnum,
    ::testing::Values(EnumCase{"source.checkpoint", "source.checkpoint: must be kafka, file or none, got \"x\""},
                      EnumCase{"outbox.on_update", "outbox.on_update: must be warn, error or ignore, got \"x\""},
                      EnumCase{"delivery.on_error", "delivery.on_error: must be halt or dead_letter, got \"x\""},
                      EnumCase{"outbox.format", "outbox.format: must be raw, cloudevents or protobuf, got \"x\""},
                      EnumCase{"outbox.header_values", "outbox.header_values: must be text, debezium, json or json_schema, got \"x\""},
                      EnumCase{"outbox.string_converter_values", "outbox.string_converter_values: must be text or debezium, got \"x\""},
                      EnumCase{"log.format", "log.format: must be text or json, got \"x\""},
                      EnumCase{"log.level", "log.level: must be trace, debug, info, warn or error, got \"x\""}),
    [](const auto& info) { return KeyOf(info.param.key); });

TEST(Config, BadEnumInTheFileIsNamed) {
  EXPECT_EQ(ErrorOf(Load(absl::StrCat(kMinimal, "delivery:\n  on_error: retry\n"))),
            "delivery.on_error: must be halt or dead_letter, got \"retry\"");
}

TEST(Config, UnknownKeyIsNamedWithASuggestion) {
  std::string yaml = absl::StrCat(kMinimal, "delivery:\n  on_eror: halt\n");
  EXPECT_EQ(ErrorOf(Load(yaml)), "unknown key \"delivery.on_eror\" (did you mean \"delivery.on_error\"?)");
  EXPECT_THAT(ErrorOf(Load(absl::StrCat(kMinimal, "colour: blue\n"))), StartsWith("unknown key \"colour\""));
}

TEST(Config, MistypedRequiredKeyReportsTheUnknownKeyFirst) {
  std::string yaml = absl::StrReplaceAll(kMinimal, {{"  slot:", "  slott:"}});
  EXPECT_EQ(ErrorOf(Load(yaml)),
            "unknown key \"source.slott\" (did you mean \"source.slot\"?); source.slot: required");
}

TEST(Config, UnknownKeyInAnOverrideIsNamed) {
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.slott", "x"}})), StartsWith("unknown key \"source.slott\""));
}

TEST(Config, ValueWhereAMapBelongsAndMapWhereAValueBelongs) {
  EXPECT_EQ(ErrorOf(Load(absl::StrCat(kMinimal, "delivery: 5\n"))), "delivery: expected a map, got a value");
  EXPECT_EQ(ErrorOf(Load(absl::StrCat(kMinimal, "http:\n  listen:\n    host: x\n"))),
            "http.listen: expected a value, got a map");
  EXPECT_EQ(ErrorOf(Load(absl::StrCat(kMinimal, "log:\n  level: [info]\n"))),
            "log.level: expected a single value, got a list");
  const Overrides source = {{"source.conninfo", "a"}, {"source.slot", "s"}, {"source.publication", "p"}};
  EXPECT_EQ(ErrorOf(Load("kafka: x\n", source)),
            "kafka: expected a map, got a value; kafka.bootstrap.servers: required");
}

TEST(Config, NullSectionIsAbsent) {
  absl::StatusOr<Loaded> loaded = Load(absl::StrCat(kMinimal, "delivery:\nlog: {}\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->delivery.on_error, OnError::kHalt);
}

TEST(Config, NumbersArePositiveIntegersNamedOnError) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"delivery.max_inflight_bytes", "32MiB"}})),
            "delivery.max_inflight_bytes: must be a positive integer, got \"32MiB\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"delivery.max_inflight_events", "0"}})),
            "delivery.max_inflight_events: must be a positive integer, got \"0\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.status_interval_ms", "5"}})),
            "source.status_interval_ms: must be an integer >= 10, got \"5\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"delivery.shutdown_timeout_ms", "1.5"}})),
            "delivery.shutdown_timeout_ms: must be a positive integer, got \"1.5\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"delivery.release_slot_after_ms", "99999999999999999999"}})),
            "delivery.release_slot_after_ms: must be a positive integer, got \"99999999999999999999\"");
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"source.status_interval_ms", "10"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.status_interval_ms, 10);
}

TEST(Config, BooleansAcceptYamlSpellingsAndNameTheKeyOtherwise) {
  absl::StatusOr<Loaded> loaded = Load(absl::StrCat(kMinimal, "  enable.idempotence: true\n"),
                                       {{"source.streaming", "on"}, {"delivery.unsafe", "TRUE"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->source.streaming);
  EXPECT_TRUE(loaded->delivery.unsafe);
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.create_slot", "maybe"}})),
            "source.create_slot: must be true or false, got \"maybe\"");
}

TEST(Config, SlotNameIsChecked) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.slot", "Bad-Name"}})),
            "source.slot: \"Bad-Name\" may contain only [a-z0-9_]");
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.slot", std::string(64, 'a')}})),
              StartsWith("source.slot: \"aaaa"));
}

TEST(Config, CreateSlotWithoutCheckpointIsRefused) {
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.create_slot", "true"}, {"source.checkpoint", "none"}})),
              StartsWith("source.create_slot: cannot be true with source.checkpoint: none"));
  EXPECT_TRUE(Load(kMinimal, {{"source.create_slot", "true"}}).ok());
  EXPECT_TRUE(Load(kMinimal, {{"source.checkpoint", "none"}}).ok());
}

TEST(Config, FileCheckpointNeedsAFile) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.checkpoint", "file"}})),
            "source.checkpoint_file: required when source.checkpoint is file");
  absl::StatusOr<Loaded> loaded =
      Load(kMinimal, {{"source.checkpoint", "file"}, {"source.checkpoint_file", "/var/lib/relay/cp"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.checkpoint, CheckpointStore::kFile);
}

TEST(Config, TopicsAreChecked) {
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.checkpoint_topic", "a b"}})),
              StartsWith("source.checkpoint_topic: \"a b\" is not a legal Kafka topic name"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"delivery.dead_letter_topic", ".."}})),
              StartsWith("delivery.dead_letter_topic: \"..\" is not a legal Kafka topic name"));
}

TEST(Config, RouteTopicIsATemplateOrALegalTopic) {
  absl::StatusOr<Loaded> literal = Load(kMinimal, {{"outbox.route.topic", "all.events"}});
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->outbox.route_topic, "all.events");
  EXPECT_TRUE(Load(kMinimal, {{"outbox.route.topic", "${routedByValue}"}}).ok());
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic", "events/${routedByValue}"}})),
              StartsWith("outbox.route.topic: \"events/${routedByValue}\" can never give a legal Kafka topic name"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.route.topic", "outbox.${routedBy}"}})),
              StartsWith("outbox.route.topic: \"outbox.${routedBy}\" is neither a template with ${routedByValue} "
                         "nor a legal Kafka topic name"));
}

TEST(Config, BareTableMeansPublicSchema) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"outbox.table", "outbox"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->outbox.table, "public.outbox");
  EXPECT_EQ(SplitTableName(loaded->outbox.table), (std::pair<std::string, std::string>{"public", "outbox"}));
  EXPECT_EQ(SplitTableName("events.outbox"), (std::pair<std::string, std::string>{"events", "outbox"}));
  EXPECT_EQ(SplitTableName("outbox"), (std::pair<std::string, std::string>{"public", "outbox"}));
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.table", "a.b.c"}})),
            "outbox.table: \"a.b.c\" must be table or schema.table");
}

TEST(Config, ColumnNamesMustNotBeEmptyButTimestampMayBe) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.fields.key", ""}})), "outbox.fields.key: must not be empty");
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"outbox.fields.timestamp", ""}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->outbox.fields.timestamp, std::nullopt);
}

TEST(Config, AdditionalFieldsParseColumnHeaderAndName) {
  constexpr char kFields[] = R"(  table: public.outbox
  fields:
    additional:
      - tenant:header
      - "trace_id:Header:traceparent"
)";
  absl::StatusOr<Loaded> loaded = Load(absl::StrReplaceAll(kMinimal, {{"  table: public.outbox\n", kFields}}));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->outbox.fields.additional.size(), 2u);
  EXPECT_EQ(loaded->outbox.fields.additional[0].column, "tenant");
  EXPECT_EQ(loaded->outbox.fields.additional[0].placement, "header");
  EXPECT_EQ(loaded->outbox.fields.additional[0].name, "tenant");
  EXPECT_EQ(loaded->outbox.fields.additional[1].column, "trace_id");
  EXPECT_EQ(loaded->outbox.fields.additional[1].placement, "header");
  EXPECT_EQ(loaded->outbox.fields.additional[1].name, "traceparent");
}

TEST(Config, AdditionalFieldsRefuseOtherPlacementsNamingTheEntry) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "tenant:body"}})),
            "outbox.fields.additional: \"tenant:body\": placement must be header, envelope or partition, got \"body\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "tenant"}})),
            "outbox.fields.additional: \"tenant\" must be column:header[:name], column:envelope[:name] or "
            "column:partition");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "a:header:b:c"}})),
            "outbox.fields.additional: \"a:header:b:c\" must be column:header[:name], column:envelope[:name] or "
            "column:partition");
}

// Placement envelope: the value becomes Debezium's envelope struct; its schema's name (json_schema) defaults to the
// table's with the route value, and outbox.fields.schema_version versions it. What cannot hold an envelope is refused.
TEST(Config, AdditionalFieldPlacedInTheEnvelopeIsReadWithItsSchemaName) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"outbox.fields.additional", "type:envelope:eventType,tenant:header"},
                                                  {"outbox.fields.schema_version", "v"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->outbox.fields.additional[0].placement, "envelope");
  EXPECT_EQ(loaded->outbox.fields.additional[0].name, "eventType");
  EXPECT_TRUE(loaded->outbox.HasEnvelope());
  EXPECT_EQ(loaded->outbox.fields.schema_version, "v");
  EXPECT_EQ(loaded->outbox.envelope_schema_name, "public.outbox.${routedByValue}.Value");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"outbox.fields.schema_version", "v"}})),
            "outbox.fields.schema_version: only with placement envelope (it versions the envelope's schema)");
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "type:envelope"}, {"outbox.format", "cloudevents"}})),
              HasSubstr("outbox.fields.additional: placement envelope only with outbox.format: raw"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "type:envelope"}, {"outbox.value_converter", "bytes"}})),
              HasSubstr("outbox.value_converter: bytes (ByteArrayConverter) cannot write the envelope"));
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"outbox.fields.additional", "type:envelope"}, {"source.messages", "true"}})),
              HasSubstr("outbox.fields.additional: placement envelope writes the columns' values by their types"));
}

TEST(Config, AdditionalFieldPlacedAsThePartitionIsRead) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"outbox.fields.additional", "type:header:eventType,shard:Partition"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->outbox.fields.additional.size(), 2u);
  EXPECT_EQ(loaded->outbox.fields.additional[1].column, "shard");
  EXPECT_EQ(loaded->outbox.fields.additional[1].placement, "partition");
}

TEST(Config, OverridesSetScalarsListsAndKafkaProperties) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"source.slot", "other_slot"},
                                                  {"kafka.bootstrap.servers", "k1:9092"},
                                                  {"kafka.linger.ms", "20"},
                                                  {"source.message_prefixes", "outbox, billing"},
                                                  {"outbox.fields.additional", "tenant:header,trace:header:tp"},
                                                  {"delivery.max_inflight_events", "7"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.slot, "other_slot");
  EXPECT_EQ(loaded->kafka,
            (std::map<std::string, std::string>{{"bootstrap.servers", "k1:9092"}, {"linger.ms", "20"}}));
  EXPECT_THAT(loaded->source.message_prefixes, ElementsAre("outbox", "billing"));
  ASSERT_EQ(loaded->outbox.fields.additional.size(), 2u);
  EXPECT_EQ(loaded->outbox.fields.additional[1].name, "tp");
  EXPECT_EQ(loaded->delivery.max_inflight_events, 7);
}

TEST(Config, OverrideWinsOverTheFileAndTheLastOverrideWins) {
  absl::StatusOr<Loaded> loaded =
      Load(absl::StrCat(kMinimal, "log:\n  level: warn\n"), {{"log.level", "debug"}, {"log.level", "error"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->log_level, "error");
}

TEST(Config, OverrideReplacesANestedKafkaProperty) {
  absl::StatusOr<Loaded> loaded = Load(R"(
source: {conninfo: "host=db", slot: s, publication: p}
kafka:
  bootstrap:
    servers: from-file:9092
)", {{"kafka.bootstrap.servers", "from-flag:9092"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kafka.at("bootstrap.servers"), "from-flag:9092");
}

TEST(Config, OverrideCanSupplyARequiredKey) {
  absl::StatusOr<Loaded> loaded = Load(MinimalWithout("slot:"), {{"source.slot", "from_flag"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.slot, "from_flag");
}

TEST(Config, EmptyListOverrideClearsTheList) {
  absl::StatusOr<Loaded> loaded = Load(kMinimal, {{"source.message_prefixes", ""}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->source.message_prefixes.empty());
}

TEST(Config, KafkaAcceptsFlatAndNestedKeysAsStrings) {
  absl::StatusOr<Loaded> loaded = Load(R"(
source: {conninfo: "host=db", slot: s, publication: p}
kafka:
  bootstrap.servers: [b1:9092, b2:9092]
  linger.ms: 5
  enable:
    idempotence: yes
  socket.keepalive.enable: False
  client.id: "yes"
  message.timeout.ms: 0
  ssl:
    ca:
      location: /etc/ca.pem
  debug: ~
)");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kafka, (std::map<std::string, std::string>{
                               {"bootstrap.servers", "b1:9092,b2:9092"},
                               {"linger.ms", "5"},
                               {"enable.idempotence", "true"},
                               {"socket.keepalive.enable", "false"},
                               {"client.id", "yes"},
                               {"message.timeout.ms", "0"},
                               {"ssl.ca.location", "/etc/ca.pem"},
                           }));
}

TEST(Config, KeyGivenTwiceIsAnError) {
  EXPECT_EQ(ErrorOf(Load("source:\n  slot: a\n  slot: b\n")), "duplicate key \"source.slot\"");
}

TEST(Config, OpsSettingsAreChecked) {
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"http.listen", "9188"}})), "http.listen: must be host:port, got \"9188\"");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"http.listen", "localhost:http"}})),
            "http.listen: must be host:port, got \"localhost:http\"");
  EXPECT_TRUE(Load(kMinimal, {{"http.listen", "[::1]:9188"}}).ok());
  EXPECT_THAT(ErrorOf(Load(kMinimal, {{"source.instance", "a/b"}})),
              StartsWith("source.instance: \"a/b\" may not contain \"/\""));
}

TEST(Config, KafkaPropertyGivenTwiceIsAnError) {
  EXPECT_EQ(ErrorOf(Load(R"(
kafka:
  bootstrap.servers: a:9092
  bootstrap:
    servers: b:9092
)")),
            "duplicate key \"kafka.bootstrap.servers\"");
}

TEST(Config, EnvAndFileReferencesAreSubstitutedAnywhereInAValue) {
  Resolver resolver = FakeResolver({{"PGHOST", "db.internal"}, {"PGPASS", "s3cret"}, {"SLOT", "slot_a"}},
                                   {{"/run/secrets/sasl", "kafka-pw"}});
  absl::StatusOr<Loaded> loaded = Load(R"(
source:
  conninfo: "host=${env:PGHOST} password=${env:PGPASS} dbname=app"
  slot: ${env:SLOT}
  publication: outbox_pub
kafka:
  bootstrap.servers: "127.0.0.1:9092"
  sasl.password: ${file:/run/secrets/sasl}
)", {}, resolver);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.conninfo, "host=db.internal password=s3cret dbname=app");
  EXPECT_EQ(loaded->source.slot, "slot_a");
  EXPECT_EQ(loaded->kafka.at("sasl.password"), "kafka-pw");
  // The routing placeholder is not a reference.
  EXPECT_EQ(loaded->outbox.route_topic, "outbox.event.${routedByValue}");
}

TEST(Config, ReferencesWorkInOverridesAndListEntries) {
  Resolver resolver = FakeResolver({{"BROKERS", "k1:9092"}, {"PREFIXES", "a,b"}});
  absl::StatusOr<Loaded> loaded =
      Load(kMinimal, {{"kafka.bootstrap.servers", "${env:BROKERS}"}, {"source.message_prefixes", "${env:PREFIXES},c"}},
           resolver);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kafka.at("bootstrap.servers"), "k1:9092");
  EXPECT_THAT(loaded->source.message_prefixes, ElementsAre("a", "b", "c"));
}

TEST(Config, MissingReferenceNamesKeyAndVariableButNoSecret) {
  Resolver resolver = FakeResolver({{"PGPASS", "s3cret"}});
  std::string error = ErrorOf(Load(kMinimal,
                                   {{"source.conninfo", "host=db user=relay password=${env:PGPASS} x=${env:MISSING}"}},
                                   resolver));
  EXPECT_EQ(error, "source.conninfo: environment variable MISSING is not set");
  EXPECT_THAT(error, Not(HasSubstr("s3cret")));

  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"kafka.sasl.password", "${file:/run/secrets/nope}"}}, resolver)),
            "kafka.sasl.password: file /run/secrets/nope cannot be read");
  EXPECT_EQ(ErrorOf(Load(kMinimal, {{"source.slot", "${env:SLOT"}}, resolver)),
            "source.slot: unterminated ${env: reference");
}

TEST(Config, BadValueFromAReferenceIsRedactedInTheError) {
  Resolver resolver = FakeResolver({{"MODE", "hush-hush"}});
  std::string error = ErrorOf(Load(kMinimal, {{"delivery.on_error", "${env:MODE}"}}, resolver));
  EXPECT_EQ(error, "delivery.on_error: must be halt or dead_letter, got \"****\"");
}

TEST(Config, RedactMasksKeyValueConninfoPasswords) {
  absl::StatusOr<Loaded> loaded =
      Load(kMinimal, {{"source.conninfo", "host=db user=relay password='p@ss w\\'rd' dbname=app"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->secrets, ::testing::Contains("p@ss w'rd"));
  std::string redacted = Redact(*loaded, absl::StrCat("connecting with ", loaded->source.conninfo,
                                                      "; auth failed for p@ss w'rd"));
  EXPECT_EQ(redacted, "connecting with host=db user=relay password=**** dbname=app; auth failed for ****");
}

TEST(Config, RedactMasksUriConninfoPasswords) {
  absl::StatusOr<Loaded> loaded =
      Load(kMinimal, {{"source.conninfo", "postgresql://relay:pa%40ss@db:5432/app?sslmode=require"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->secrets, ::testing::IsSupersetOf({"pa%40ss", "pa@ss"}));
  EXPECT_EQ(Redact(*loaded, loaded->source.conninfo), "postgresql://relay:****@db:5432/app?sslmode=require");
  EXPECT_EQ(Redact(*loaded, "decoded pa@ss"), "decoded ****");

  absl::StatusOr<Loaded> query =
      Load(kMinimal, {{"source.conninfo", "postgres://relay@db/app?password=qpass&sslmode=require"}});
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_THAT(query->secrets, ::testing::Contains("qpass"));
  EXPECT_EQ(Redact(*query, query->source.conninfo), "postgres://relay@db/app?password=****&sslmode=require");
}

TEST(Config, RedactMasksKafkaPasswordsAndReferencedValues) {
  Resolver resolver = FakeResolver({{"HOST", "db.internal"}}, {{"/run/secrets/sasl", "kafka-pw"}});
  absl::StatusOr<Loaded> loaded = Load(absl::StrCat(kMinimal, R"(  sasl.username: kafka-user
  sasl.password: ${file:/run/secrets/sasl}
  ssl.key.password: plain-key-pw
)"), {{"source.conninfo", "host=${env:HOST} user=relay"}}, resolver);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kafka.at("sasl.username"), "kafka-user");
  // sasl.username too: librdkafka documents it as sensitive. The PostgreSQL user is not a secret.
  EXPECT_EQ(Redact(*loaded, "sasl kafka-pw key plain-key-pw host db.internal user kafka-user pg relay"),
            "sasl **** key **** host **** user **** pg relay");
}

// The conninfo's secrets are its keywords IsSecretKey names: password, and sslpassword (the client key's).
TEST(Config, TheConninfosPasswordAndSslpasswordAreSecrets) {
  auto c = Load(kMinimal, {{"source.conninfo", "host=db user=relay password=pw-one sslpassword='key pw two'"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Redact(*c, "a pw-one b key pw two c"), "a **** b **** c");
  auto uri = Load(kMinimal, {{"source.conninfo", "postgresql://relay@db/app?sslpassword=uri-key-pw"}});
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(Redact(*uri, "x uri-key-pw"), "x ****");
}

TEST(Config, RedactMasksPasswordsInAnyConninfoLikeText) {
  Config empty;
  EXPECT_EQ(Redact(empty, "host=x password=abc port=1"), "host=x password=**** port=1");
  EXPECT_EQ(Redact(empty, "host=x password = 'a b' port=1"), "host=x password = **** port=1");
  EXPECT_EQ(Redact(empty, "PGPASSWORD=abc sasl.password=def"), "PGPASSWORD=**** sasl.password=****");
  EXPECT_EQ(Redact(empty, "see postgresql://u:p@h/db and http://host:80/x"),
            "see postgresql://u:****@h/db and http://host:80/x");
  EXPECT_EQ(Redact(empty, "no secrets here"), "no secrets here");
}

TEST(Config, YamlSyntaxErrorIsAnErrorWithLineNotAnException) {
  absl::StatusOr<Loaded> loaded = Load("source:\n  slot: [unclosed\n  publication: p\nkafka: {\n");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loaded.status().message()), StartsWith("invalid YAML at line "));
  EXPECT_EQ(ErrorOf(Load("source:\n  slot: a\n   bad: indent\n")),
            "invalid YAML at line 3, column 7: illegal map value");
}

TEST(Config, TopLevelMustBeAMap) {
  EXPECT_THAT(ErrorOf(Load("- a\n- b\n")), StartsWith("config: the top level must be a map"));
}

TEST(Config, LoadFileReadsThroughTheResolver) {
  Resolver resolver = FakeResolver({}, {{"/etc/relay.yaml", kMinimal}, {"/etc/debezium.properties", "a=b\n"}});
  absl::StatusOr<Loaded> loaded = Flatten(LoadFile("/etc/relay.yaml", {{"source.slot", "s2"}}, resolver));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.slot, "s2");
  EXPECT_EQ(loaded->secrets, std::vector<std::string>{});  // the config file itself is no secret

  EXPECT_EQ(ErrorOf(Flatten(LoadFile("/etc/missing.yaml", {}, resolver))), "/etc/missing.yaml: cannot read the config file");

  // A .properties file is read as a Debezium config (debezium_properties_test.cc): this one is not a complete one.
  absl::StatusOr<Loaded> properties = Flatten(LoadFile("/etc/debezium.properties", {}, resolver));
  EXPECT_EQ(properties.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(properties.status().message()), HasSubstr("connector.class: required"));
}

TEST(SystemResolver, ReadsEnvironmentAndFilesStrippingTrailingNewlines) {
  std::string dir = ::testing::TempDir();
  std::string path = absl::StrCat(dir, "/config_test_secret_", ::getpid());
  {
    std::ofstream out(path);
    out << "file-secret\n\n";
  }
  ASSERT_EQ(::setenv("OUTBOX_CONFIG_TEST_SLOT", "env_slot", 1), 0);
  ::unsetenv("OUTBOX_CONFIG_TEST_UNSET");

  Resolver resolver = SystemResolver();
  EXPECT_EQ(resolver.env("OUTBOX_CONFIG_TEST_SLOT"), "env_slot");
  EXPECT_EQ(resolver.env("OUTBOX_CONFIG_TEST_UNSET"), std::nullopt);
  EXPECT_EQ(resolver.file(path), "file-secret");
  EXPECT_EQ(resolver.file(absl::StrCat(path, ".missing")), std::nullopt);
  EXPECT_EQ(resolver.file(dir), std::nullopt);

  absl::StatusOr<Loaded> loaded = Flatten(LoadYaml(kMinimal,
                                           {{"source.slot", "${env:OUTBOX_CONFIG_TEST_SLOT}"},
                                            {"kafka.sasl.password", absl::StrCat("${file:", path, "}")}},
                                           resolver));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.slot, "env_slot");
  EXPECT_EQ(loaded->kafka.at("sasl.password"), "file-secret");
  EXPECT_EQ(Redact(*loaded, "pw file-secret"), "pw ****");

  std::remove(path.c_str());
  ::unsetenv("OUTBOX_CONFIG_TEST_SLOT");
}

// One predicate decides what is secret, for the config dump (`check`) and for redaction alike.
TEST(IsSecretKey, RecognizesEverySensitiveLibrdkafkaPropertyAndEveryCredentialKey) {
  for (std::string_view property : kLibrdkafkaSensitiveProperties) {
    const std::string name(property);
    for (const std::string& key : {name, "kafka." + name, "debezium.sink.kafka.producer." + name,
                                   absl::AsciiStrToUpper(name)}) {
      EXPECT_TRUE(IsSecretKey(key)) << key;
    }
  }
  for (const char* key : {"kafka.ssl.truststore.password", "nats.password", "nats.token", "rabbitmq.password",
                          "http_sink.password", "http_sink.bearer_token", "debezium.sink.nats-jetstream.auth.jwt",
                          "debezium.sink.nats-jetstream.auth.seed", "debezium.source.database.password",
                          "debezium.sink.kafka.producer.sasl.jaas.config"}) {
    EXPECT_TRUE(IsSecretKey(key)) << key;
  }
  for (const char* key : {"kafka.bootstrap.servers", "kafka.sasl.mechanism", "kafka.security.protocol",
                          "kafka.ssl.ca.location", "kafka.ssl.certificate.location", "kafka.client.id", "kafka.acks",
                          "kafka.sasl.oauthbearer.client.id", "kafka.sasl.oauthbearer.token.endpoint.url",
                          "kafka.xssl.key.location", "nats.user", "http_sink.user", "source.conninfo"}) {
    EXPECT_FALSE(IsSecretKey(key)) << key;
  }
}

// Review (issue 13): sasl.oauthbearer.config was masked in `check` but not collected for redaction, so its value
// could reach a log line or an error.
TEST(Redact, MasksEverySecretKafkaPropertyIncludingTheOauthbearerConfig) {
  auto loaded = Flatten(LoadYaml(kMinimal,
                         {{"kafka.sasl.oauthbearer.config", "principal=relay secret=oauth-s3cret"},
                          {"kafka.ssl.key.pem", "-----BEGIN KEY-----pemdata"},
                          {"kafka.sasl.oauthbearer.client.secret", "client-s3cret"}},
                         FakeResolver()));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(Redact(*loaded, "a: principal=relay secret=oauth-s3cret b: -----BEGIN KEY-----pemdata c: client-s3cret"),
            "a: **** b: **** c: ****");
}

TEST(OfflineResolver, ResolvesWhatExistsAndStandsInForTheRestListingIt) {
  std::string path = absl::StrCat(::testing::TempDir(), "/config_test_offline_", ::getpid());
  {
    std::ofstream out(path);
    out << "present\n";
  }
  ASSERT_EQ(::setenv("OUTBOX_CONFIG_TEST_SET", "env_slot", 1), 0);
  ::unsetenv("OUTBOX_CONFIG_TEST_UNSET");
  std::vector<std::string> unresolved;
  Resolver resolver = OfflineResolver(&unresolved);
  absl::StatusOr<Loaded> loaded =
      Flatten(LoadYaml(kMinimal,
               {{"source.slot", "${env:OUTBOX_CONFIG_TEST_SET}"},
                {"kafka.sasl.username", absl::StrCat("${file:", path, "}")},
                {"kafka.sasl.password", "${file:/var/run/secrets/outbox/kafka-password}"},
                {"source.conninfo", "host=db password=${env:OUTBOX_CONFIG_TEST_UNSET}"}},
               resolver));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->source.slot, "env_slot");
  EXPECT_EQ(loaded->kafka.at("sasl.username"), "present");
  EXPECT_EQ(loaded->kafka.at("sasl.password"), kOfflineStandIn);
  EXPECT_EQ(loaded->source.conninfo, absl::StrCat("host=db password=", kOfflineStandIn));
  EXPECT_THAT(unresolved, ::testing::UnorderedElementsAre("${file:/var/run/secrets/outbox/kafka-password}",
                                                          "${env:OUTBOX_CONFIG_TEST_UNSET}"));
  // A stand-in is masked like any other resolved secret.
  EXPECT_EQ(Redact(*loaded, absl::StrCat("pw ", kOfflineStandIn)), "pw ****");
  std::remove(path.c_str());
  ::unsetenv("OUTBOX_CONFIG_TEST_SET");
}

// Found by config_fuzz: an alias inside its own anchor recursed until the stack overflowed.
TEST(ConfigFuzzFindings, AliasInsideItsOwnAnchorIsAnErrorNotACrash) {
  auto config = Flatten(LoadYaml("a: &a\n  b: *a\n", {}, FakeResolver()));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
}

// Found by config_fuzz: a secret quoted in an error message appears C-escaped; Redact masks that form too.
TEST(ConfigFuzzFindings, EscapedSecretInAnErrorMessageIsMasked) {
  const std::string secret = "Zq\"qu\\ote\xc3\xa9";
  auto config = Flatten(LoadYaml(
      "source:\n  conninfo: \"host=x\"\n  slot: s\n  publication: p\n  checkpoint_topic: ${env:QUOTED}\n"
      "kafka:\n  bootstrap.servers: b\n",
      {}, FakeResolver({{"QUOTED", secret}})));
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_EQ(message.find("Zq"), std::string::npos) << message;
}

constexpr char kTwoPipelines[] = R"(source:
  conninfo: "host=db port=5432 user=relay password=s3cret-top"
  publication: outbox_pub
  status_interval_ms: 250
kafka:
  bootstrap.servers: "k:9092"
http:
  listen: "127.0.0.1:9300"
pipelines:
  orders:
    source:
      conninfo: "host=db dbname=orders user=relay password=s3cret-orders"
      slot: orders_relay
    outbox:
      route.by: aggregatetype
  billing:
    source:
      slot: billing_relay
    kafka:
      client.id: mine
)";

TEST(Pipelines, EachPipelineIsTheTopLevelOverriddenByItsOwnKeys) {
  auto c = Load(kTwoPipelines);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->pipelines.size(), 2u);
  std::map<std::string, const PipelineConfig*> by_name;
  for (const PipelineConfig& p : c->pipelines) by_name[p.pipeline] = &p;
  ASSERT_EQ(by_name.size(), 2u);
  const PipelineConfig& orders = *by_name.at("orders");
  const PipelineConfig& billing = *by_name.at("billing");
  EXPECT_EQ(orders.source.slot, "orders_relay");
  EXPECT_EQ(orders.source.conninfo, "host=db dbname=orders user=relay password=s3cret-orders");
  EXPECT_EQ(orders.source.publication, "outbox_pub");  // from the top level
  EXPECT_EQ(orders.source.status_interval_ms, 250);
  EXPECT_EQ(orders.outbox.route_by, "aggregatetype");
  EXPECT_EQ(billing.outbox.route_by, "type");
  EXPECT_EQ(billing.source.conninfo, "host=db port=5432 user=relay password=s3cret-top");
  // Each producer is named after its pipeline unless the pipeline names it.
  EXPECT_EQ(orders.kafka.at("client.id"), "outbox-relay.orders");
  EXPECT_EQ(billing.kafka.at("client.id"), "mine");
  EXPECT_EQ(billing.kafka.at("bootstrap.servers"), "k:9092");
  EXPECT_EQ(c->http_listen, "127.0.0.1:9300");
  // The process's Redact masks every pipeline's secrets.
  const std::string text = Redact(c->process, "s3cret-orders s3cret-top");
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
}

TEST(Pipelines, ASingleFileIsOneUnnamedPipeline) {
  absl::StatusOr<Config> c = LoadYaml(kMinimal, {}, FakeResolver());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->pipelines.size(), 1u);
  EXPECT_EQ(c->pipelines[0].pipeline, "");
  EXPECT_EQ(c->pipelines[0].source.slot, "outbox_relay");
  EXPECT_EQ(c->http_listen, "127.0.0.1:9188");  // the process's part, not the pipeline's
}

TEST(Pipelines, OverridesReachOnePipelineOrAll) {
  auto c = Load(kTwoPipelines, {{"pipelines.billing.source.slot", "other"}, {"source.status_interval_ms", "900"}});
  ASSERT_TRUE(c.ok()) << c.status();
  for (const PipelineConfig& p : c->pipelines) {
    EXPECT_EQ(p.source.status_interval_ms, 900) << p.pipeline;
    if (p.pipeline == "billing") {
      EXPECT_EQ(p.source.slot, "other");
    }
  }
}

TEST(Pipelines, ErrorsNameThePipelineAndTheKey) {
  struct Case {
    std::string extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"  third:\n    source:\n      slott: x\n", "pipelines.third: unknown key \"source.slott\""},
      {"  third:\n    http:\n      listen: \"1:2\"\n", "pipelines.third.http.listen: a pipeline sets only"},
      {"  third:\n    source:\n      slot: orders_relay\n      conninfo: \"host=db dbname=orders user=relay "
       "password=s3cret-orders\"\n",
       "same source.conninfo as pipeline"},
      {"  bad.name:\n    source:\n      slot: x\n", "pipelines.bad.name.source.slot: a pipeline sets only"},
      {"  third:\n    source:\n      status_interval_ms: -1\n", "source.status_interval_ms: must be an integer"},
  };
  for (const Case& k : cases) {
    auto c = Load(std::string(kTwoPipelines) + k.extra);
    ASSERT_FALSE(c.ok()) << k.extra;
    EXPECT_THAT(std::string(c.status().message()), HasSubstr(k.message)) << k.extra;
    EXPECT_EQ(std::string(c.status().message()).find("s3cret"), std::string::npos) << c.status();
  }
  // A pipeline without a slot of its own or from the top level.
  auto missing = Load("kafka: {bootstrap.servers: k}\npipelines:\n  a:\n    source: {conninfo: x, publication: p}\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("pipelines.a: source.slot: required"));
  auto empty = Load("kafka: {bootstrap.servers: k}\npipelines: {}\n");
  ASSERT_FALSE(empty.ok());
}

}  // namespace
}  // namespace outbox::config

// sink.type: nats (issue 18).
namespace outbox::config {
namespace {

constexpr char kNats[] = R"(source:
  conninfo: "host=127.0.0.1 dbname=app"
  slot: s
  publication: p
  checkpoint: file
  checkpoint_file: /var/lib/relay/checkpoint
sink:
  type: nats
nats:
  url: "nats://127.0.0.1:4222"
  stream: OUTBOX
)";

TEST(NatsConfig, MinimalNeedsNoKafkaSetting) {
  auto c = Flatten(LoadYaml(kNats, {}, FakeResolver()));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sink, SinkType::kNats);
  EXPECT_EQ(c->nats.url, "nats://127.0.0.1:4222");
  EXPECT_EQ(c->nats.stream, "OUTBOX");
  EXPECT_EQ(c->nats.ack_timeout_ms, 10000);
}

TEST(NatsConfig, DefaultSinkIsKafka) {
  auto c = Flatten(LoadYaml(kMinimal, {}, FakeResolver()));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sink, SinkType::kKafka);
}

TEST(NatsConfig, UrlAndStreamAreRequired) {
  auto c = Flatten(LoadYaml(kNats, {{"nats.url", ""}, {"nats.stream", ""}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("nats.url: required when sink.type is nats"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("nats.stream: required when sink.type is nats"));
}

TEST(NatsConfig, KafkaCheckpointIsRefusedNamingBothKeys) {
  auto c = Flatten(LoadYaml(kNats, {{"source.checkpoint", "kafka"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("source.checkpoint: kafka cannot be used with sink.type: nats"));
  EXPECT_TRUE(Flatten(LoadYaml(kNats, {{"source.checkpoint", "none"}}, FakeResolver())).ok());
}

TEST(NatsConfig, UnknownSinkTypeNamesTheKey) {
  auto c = Flatten(LoadYaml(kNats, {{"sink.type", "carrier-pigeon"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("sink.type: must be"));
}

TEST(NatsConfig, OneKindOfCredentials) {
  auto c = Flatten(LoadYaml(kNats, {{"nats.user", "relay"}, {"nats.password", "pw-value"}, {"nats.token", "tok-value"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("nats.token: give one of"));
  auto no_user = Flatten(LoadYaml(kNats, {{"nats.password", "pw-value"}}, FakeResolver()));
  ASSERT_FALSE(no_user.ok());
  EXPECT_THAT(std::string(no_user.status().message()), HasSubstr("nats.password: needs nats.user"));
  auto half_tls = Flatten(LoadYaml(kNats, {{"nats.tls.cert", "/c.pem"}}, FakeResolver()));
  ASSERT_FALSE(half_tls.ok());
  EXPECT_THAT(std::string(half_tls.status().message()), HasSubstr("nats.tls.key"));
}

TEST(NatsConfig, PasswordAndTokenAreSecrets) {
  auto c = Flatten(LoadYaml(kNats, {{"nats.user", "relay"}, {"nats.password", "${env:NATS_PASSWORD}"}},
                    FakeResolver({{"NATS_PASSWORD", "hunter2-nats"}})));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->nats.password, "hunter2-nats");
  EXPECT_EQ(Redact(*c, "connect failed for hunter2-nats"), "connect failed for ****");
  auto t = Flatten(LoadYaml(kNats, {{"nats.token", "plain-token-value"}}, FakeResolver()));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Redact(*t, "token plain-token-value"), "token ****");
}

TEST(NatsConfig, UnknownNatsKeyIsAnError) {
  auto c = Flatten(LoadYaml(std::string(kNats) + "  streem: X\n", {}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("unknown key \"nats.streem\""));
}

}  // namespace
}  // namespace outbox::config

// sink.type: rabbitmq (issue 17).
namespace outbox::config {
namespace {

constexpr char kRabbitMq[] = R"(source:
  conninfo: "host=127.0.0.1 dbname=app"
  slot: s
  publication: p
  checkpoint: file
  checkpoint_file: /var/lib/relay/checkpoint
sink:
  type: rabbitmq
rabbitmq:
  url: "amqp://127.0.0.1:5672/"
  exchange: outbox
)";

TEST(RabbitMqConfig, MinimalNeedsNoKafkaSettingAndHasTheDefaults) {
  auto c = Flatten(LoadYaml(kRabbitMq, {}, FakeResolver()));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sink, SinkType::kRabbitMq);
  EXPECT_EQ(c->rabbitmq.exchange, "outbox");
  EXPECT_EQ(c->rabbitmq.routing_key, "${topic}");
  EXPECT_EQ(c->rabbitmq.content_type, "application/json");
  EXPECT_EQ(c->rabbitmq.heartbeat_s, 10);
  EXPECT_TRUE(c->rabbitmq.tls_verify);
}

TEST(RabbitMqConfig, UrlAndExchangeAreRequiredAndTheUrlIsAmqp) {
  auto c = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.url", ""}, {"rabbitmq.exchange", ""}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("rabbitmq.url: required when sink.type is rabbitmq"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("rabbitmq.exchange: required when sink.type is rabbitmq"));
  auto http = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.url", "http://127.0.0.1:15672"}}, FakeResolver()));
  ASSERT_FALSE(http.ok());
  EXPECT_THAT(std::string(http.status().message()), HasSubstr("rabbitmq.url: must start with amqp://"));
  auto half_tls = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.tls.key", "/k.pem"}}, FakeResolver()));
  ASSERT_FALSE(half_tls.ok());
  EXPECT_THAT(std::string(half_tls.status().message()), HasSubstr("rabbitmq.tls.cert"));
}

TEST(RabbitMqConfig, KafkaCheckpointIsRefusedNamingBothKeys) {
  auto c = Flatten(LoadYaml(kRabbitMq, {{"source.checkpoint", "kafka"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("source.checkpoint: kafka cannot be used with sink.type: rabbitmq"));
  EXPECT_TRUE(Flatten(LoadYaml(kRabbitMq, {{"source.checkpoint", "none"}}, FakeResolver())).ok());
}

TEST(RabbitMqConfig, PasswordsAreSecretsInTheKeyAndInTheUrl) {
  auto c = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.password", "${env:RMQ_PASSWORD}"}},
                    FakeResolver({{"RMQ_PASSWORD", "hunter2-rmq"}})));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rabbitmq.password, "hunter2-rmq");
  EXPECT_EQ(Redact(*c, "login failed for hunter2-rmq"), "login failed for ****");
  auto u = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.url", "amqp://relay:in-url-secret@rabbit:5672/v"}}, FakeResolver()));
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(Redact(*u, "amqp://relay:in-url-secret@rabbit:5672/v"), "amqp://relay:****@rabbit:5672/v");
}

TEST(RabbitMqConfig, TemplatesKeepRoutedByValue) {
  auto c = Flatten(LoadYaml(kRabbitMq, {{"rabbitmq.exchange", "ex.${routedByValue}"}, {"rabbitmq.routing_key", "${routedByValue}.v1"}},
                    FakeResolver()));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rabbitmq.exchange, "ex.${routedByValue}");
  EXPECT_EQ(c->rabbitmq.routing_key, "${routedByValue}.v1");
}

TEST(RabbitMqConfig, UnknownRabbitMqKeyIsAnError) {
  auto c = Flatten(LoadYaml(std::string(kRabbitMq) + "  exchang: X\n", {}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("unknown key \"rabbitmq.exchang\""));
}

}  // namespace
}  // namespace outbox::config

// sink.type: http (issue 19).
namespace outbox::config {
namespace {

constexpr char kHttp[] = R"(source:
  conninfo: "host=127.0.0.1 dbname=app"
  slot: s
  publication: p
  checkpoint: file
  checkpoint_file: /var/lib/relay/checkpoint
sink:
  type: http
http_sink:
  url: "https://hooks.example.com/events/${routedByValue}"
)";

TEST(HttpSinkConfig, MinimalNeedsNoKafkaSettingAndHasDefaults) {
  auto c = Flatten(LoadYaml(kHttp, {}, FakeResolver()));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sink, SinkType::kHttp);
  EXPECT_EQ(c->http_sink.url, "https://hooks.example.com/events/${routedByValue}");
  EXPECT_EQ(c->http_sink.content_type, "application/json");
  EXPECT_EQ(c->http_sink.max_in_flight, 16);
  EXPECT_EQ(c->http_sink.timeout_ms, 10000);
}

TEST(HttpSinkConfig, UrlIsRequiredAndMustBeHttp) {
  auto c = Flatten(LoadYaml(kHttp, {{"http_sink.url", ""}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("http_sink.url: required when sink.type is http"));
  auto ftp = Flatten(LoadYaml(kHttp, {{"http_sink.url", "ftp://h/x"}}, FakeResolver()));
  ASSERT_FALSE(ftp.ok());
  EXPECT_THAT(std::string(ftp.status().message()), HasSubstr("http_sink.url: must start with http:// or https://"));
}

TEST(HttpSinkConfig, KafkaCheckpointAndMixedCredentialsAreRefusedByName) {
  auto c = Flatten(LoadYaml(kHttp, {{"source.checkpoint", "kafka"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("source.checkpoint: kafka cannot be used with sink.type: http"));
  auto both = Flatten(LoadYaml(kHttp, {{"http_sink.bearer_token", "a-long-token"}, {"http_sink.user", "relay"}}, FakeResolver()));
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(std::string(both.status().message()), HasSubstr("http_sink.bearer_token: give one of"));
  auto half_tls = Flatten(LoadYaml(kHttp, {{"http_sink.tls.key", "/k.pem"}}, FakeResolver()));
  ASSERT_FALSE(half_tls.ok());
  EXPECT_THAT(std::string(half_tls.status().message()), HasSubstr("http_sink.tls.cert"));
}

TEST(HttpSinkConfig, RoutedByValueNeedsATemplateThatHoldsItOnce) {
  auto c = Flatten(LoadYaml(kHttp, {{"outbox.route.topic", "fixed_topic"}}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("http_sink.url: ${routedByValue} needs outbox.route.topic"));
  EXPECT_TRUE(Flatten(LoadYaml(kHttp, {{"outbox.route.topic", "fixed_topic"}, {"http_sink.url", "http://h/${topic}"}},
                       FakeResolver()))
                  .ok());
}

TEST(HttpSinkConfig, TokenAndPasswordAreSecrets) {
  auto c = Flatten(LoadYaml(kHttp, {{"http_sink.bearer_token", "${env:HOOK_TOKEN}"}},
                    FakeResolver({{"HOOK_TOKEN", "hook-token-value"}})));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->http_sink.bearer_token, "hook-token-value");
  EXPECT_EQ(Redact(*c, "401 for hook-token-value"), "401 for ****");
  auto p = Flatten(LoadYaml(kHttp, {{"http_sink.user", "relay"}, {"http_sink.password", "plain-hook-password"}}, FakeResolver()));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Redact(*p, "auth plain-hook-password"), "auth ****");
}

TEST(HttpSinkConfig, UnknownHttpSinkKeyIsAnError) {
  auto c = Flatten(LoadYaml(std::string(kHttp) + "  timout_ms: 5\n", {}, FakeResolver()));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("http_sink.timout_ms"));
}

}  // namespace
}  // namespace outbox::config
