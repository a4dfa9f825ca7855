// Debezium Server application.properties and Kafka Connect connector configs read as relay configs: the mapped
// keys, the warnings for keys with no effect, the errors naming refused keys, reference expansion, and routing
// that gives the topics Debezium's Outbox Event Router gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/load_file.h"
#include "config/fake_resolver.h"
#include "config/loaded.h"
#include "config/java_properties.h"
#include "config/java_regex.h"
#include "outbox/mapper.h"

namespace outbox::config {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;
using Overrides = std::vector<std::pair<std::string, std::string>>;

constexpr char kPath[] = "/etc/debezium/application.properties";

absl::StatusOr<Loaded> Load(const std::string& text, const Overrides& overrides = {},
                            std::map<std::string, std::string> env = {},
                            std::map<std::string, std::string> files = {}, const std::string& path = kPath) {
  files[path] = text;
  return Flatten(LoadFile(path, overrides, FakeResolver(std::move(env), std::move(files))));
}

std::string ErrorOf(const absl::StatusOr<Loaded>& loaded) {
  EXPECT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(loaded.status().message());
}

// A Debezium Server configuration for the outbox, as its documentation and the Outbox Event Router's describe it.
constexpr char kServer[] = R"(# Debezium Server: PostgreSQL outbox to Kafka
debezium.sink.type=kafka
debezium.sink.kafka.producer.bootstrap.servers=kafka-1:9092,kafka-2:9092
debezium.sink.kafka.producer.key.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.sink.kafka.producer.value.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.sink.kafka.producer.compression.type=zstd
debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector
debezium.source.offset.storage.file.filename=data/offsets.dat
debezium.source.offset.flush.interval.ms=0
debezium.source.database.hostname=db.internal
debezium.source.database.port=5433
debezium.source.database.user=debezium
debezium.source.database.password=s3cr3t pass
debezium.source.database.dbname=orders
debezium.source.topic.prefix=orders
debezium.source.plugin.name=pgoutput
debezium.source.slot.name=orders_outbox
debezium.source.publication.name=orders_outbox_pub
debezium.source.table.include.list=public.outbox
debezium.source.snapshot.mode=never
debezium.source.tombstones.on.delete=false
debezium.transforms=outbox
debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
debezium.transforms.outbox.table.fields.additional.placement=type:header:eventType
debezium.transforms.outbox.route.tombstone.on.empty.payload=true
debezium.transforms.outbox.table.op.invalid.behavior=fatal
debezium.format.key=simplestring
debezium.format.value=simplestring
quarkus.log.console.json=false
)";

// The same outbox as a Kafka Connect connector (no prefixes; the brokers are in the worker's config).
constexpr char kConnect[] = R"(name=orders-outbox
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=db.internal
database.port=5433
database.user=debezium
database.password=s3cr3t pass
database.dbname=orders
topic.prefix=orders
slot.name=orders_outbox
publication.name=orders_outbox_pub
table.include.list=public\\.outbox
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.table.fields.additional.placement=type:header:eventType
transforms.outbox.route.tombstone.on.empty.payload=true
transforms.outbox.table.op.invalid.behavior=fatal
)";

// What both files mean.
void ExpectOrdersOutbox(const Loaded& c) {
  EXPECT_EQ(c.source.conninfo, "host=db.internal port=5433 user=debezium password='s3cr3t pass' dbname=orders");
  EXPECT_EQ(c.source.slot, "orders_outbox");
  EXPECT_EQ(c.source.publication, "orders_outbox_pub");
  EXPECT_EQ(c.outbox.table, "public.outbox");
  EXPECT_EQ(c.outbox.fields.id, "id");
  EXPECT_EQ(c.outbox.fields.key, "aggregateid");
  EXPECT_EQ(c.outbox.fields.payload, "payload");
  EXPECT_EQ(c.outbox.fields.timestamp, std::nullopt);
  ASSERT_EQ(c.outbox.fields.additional.size(), 1u);
  EXPECT_EQ(c.outbox.fields.additional[0].column, "type");
  EXPECT_EQ(c.outbox.fields.additional[0].placement, "header");
  EXPECT_EQ(c.outbox.fields.additional[0].name, "eventType");
  EXPECT_EQ(c.outbox.route_by, "aggregatetype");  // Debezium's default, not the relay's `type`
  EXPECT_EQ(c.outbox.route_topic, "outbox.event.${routedByValue}");
  EXPECT_EQ(c.outbox.route_topic_regex, "");
  EXPECT_EQ(c.outbox.on_update, OnUpdate::kError);  // fatal
  EXPECT_TRUE(c.outbox.tombstone_on_empty_payload);
  EXPECT_THAT(c.secrets, Contains("s3cr3t pass"));
}

std::vector<std::string> WarnedKeys(const Loaded& c) {
  std::vector<std::string> keys;
  for (const std::string& w : c.warnings) keys.push_back(w.substr(0, w.find(':')));
  return keys;
}

TEST(DebeziumProperties, DebeziumServerFileMapsToTheExpectedConfig) {
  absl::StatusOr<Loaded> c = Load(kServer);
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectOrdersOutbox(*c);
  // The producer's keys, minus the Java serializers (the relay writes text).
  EXPECT_EQ(c->kafka, (std::map<std::string, std::string>{{"bootstrap.servers", "kafka-1:9092,kafka-2:9092"},
                                                          {"compression.type", "zstd"}}));
  // The relay's own settings keep their defaults.
  EXPECT_EQ(c->source.checkpoint, CheckpointStore::kKafka);
  EXPECT_EQ(c->delivery.on_error, OnError::kHalt);
  // One warning per key with no effect, in the file's order.
  EXPECT_THAT(WarnedKeys(*c), ElementsAre("debezium.source.offset.storage.file.filename",
                                          "debezium.source.offset.flush.interval.ms", "debezium.source.topic.prefix",
                                          "debezium.source.snapshot.mode", "debezium.source.tombstones.on.delete",
                                          "quarkus.log.console.json"));
  // Debezium Server's header format (json, its default) is JsonConverter with schemas.
  EXPECT_EQ(c->outbox.header_values, config::HeaderValues::kJsonSchema);
}

TEST(DebeziumProperties, KafkaConnectFileMapsLikeTheServerFile) {
  absl::StatusOr<Loaded> c = Load(kConnect, {{"kafka.bootstrap.servers", "kafka-1:9092"}});
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectOrdersOutbox(*c);
  EXPECT_EQ(c->kafka, (std::map<std::string, std::string>{{"bootstrap.servers", "kafka-1:9092"}}));
  EXPECT_THAT(WarnedKeys(*c), ElementsAre("topic.prefix"));
  // Header values as Debezium writes them (SimpleHeaderConverter over the connector's values); a relay key may
  // ask for the columns' text instead.
  EXPECT_EQ(c->outbox.header_values, config::HeaderValues::kDebezium);
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kString);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kString);
  // StringConverter's keys and payloads as Java prints Debezium's values, which a relay key may turn to text too.
  EXPECT_EQ(c->outbox.string_converter_values, config::StringValues::kDebezium);
  absl::StatusOr<Loaded> text = Load(std::string(kConnect) + "outbox-relay.outbox.header_values=text\n"
                                                             "outbox-relay.outbox.string_converter_values=text\n",
                                     {{"kafka.bootstrap.servers", "kafka-1:9092"}});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->outbox.header_values, config::HeaderValues::kText);
  EXPECT_EQ(text->outbox.string_converter_values, config::StringValues::kText);
}

TEST(DebeziumProperties, TracingSpanContextColumnIsReadWhenPresent) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  absl::StatusOr<Loaded> c = Load(kConnect, brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.fields.tracing_span_context, "tracingspancontext");  // Debezium's default column
  EXPECT_TRUE(c->outbox.fields.tracing_span_context_if_present);
  c = Load(std::string(kConnect) + "transforms.outbox.tracing.span.context.field=trace_ctx\n", brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.fields.tracing_span_context, "trace_ctx");
  // What shapes Debezium's own span is accepted with a warning saying why it changes nothing.
  c = Load(std::string(kConnect) + "transforms.outbox.tracing.operation.name=relay\n"
                                   "transforms.outbox.tracing.with.context.field.only=false\n",
           brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->warnings, IsSupersetOf({HasSubstr("tracing.operation.name: no effect on the records (it names "
                                                   "Debezium's span"),
                                         HasSubstr("tracing.with.context.field.only: no effect on the records (the "
                                                   "relay starts no trace")}));
}

TEST(DebeziumProperties, AdditionalMissingIgnoreLeavesMissingColumnsOut) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  EXPECT_FALSE(Load(kConnect, brokers)->outbox.fields.additional_if_present);  // error, Debezium's default
  EXPECT_TRUE(Load(std::string(kConnect) + "transforms.outbox.table.field.additional.missing=ignore\n", brokers)
                  ->outbox.fields.additional_if_present);
  EXPECT_FALSE(Load(std::string(kConnect) + "transforms.outbox.table.field.additional.missing=error\n", brokers)
                   ->outbox.fields.additional_if_present);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "transforms.outbox.table.field.additional.missing=skip\n", brokers)),
              HasSubstr("table.field.additional.missing: must be error or ignore, got \"skip\""));
}

TEST(DebeziumProperties, ModesThatChangeHeaderValuesAreRefusedNamingTheKey) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  EXPECT_TRUE(Load(std::string(kConnect) + "decimal.handling.mode=precise\ntime.precision.mode=adaptive\n", brokers).ok());
  for (const char* mode : {"string", "double", " Precise"}) {  // decimal.handling.mode maps to the relay's key
    absl::StatusOr<Loaded> c = Load(std::string(kConnect) + "decimal.handling.mode=" + mode + "\n", brokers);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->outbox.decimal_handling_mode, std::string(mode) == "string"   ? config::DecimalHandling::kString
                                               : std::string(mode) == "double" ? config::DecimalHandling::kDouble
                                                                               : config::DecimalHandling::kPrecise);
  }
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "decimal.handling.mode=exact\n", brokers)),
              HasSubstr("decimal.handling.mode: must be precise, string or double, got \"exact\""));

  for (const auto& [mode, expected] : std::vector<std::pair<std::string, config::TimePrecision>>{
           {"adaptive_time_microseconds", config::TimePrecision::kAdaptiveTimeMicroseconds},
           {"microseconds", config::TimePrecision::kMicroseconds},
           {"NANOSECONDS", config::TimePrecision::kNanoseconds},
           {"connect", config::TimePrecision::kConnect},
           {"isostring", config::TimePrecision::kIsoString}}) {
    absl::StatusOr<Loaded> c = Load(std::string(kConnect) + "time.precision.mode=" + mode + "\n", brokers);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->outbox.time_precision_mode, expected) << mode;
  }
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "time.precision.mode=millis\n", brokers)),
              HasSubstr("time.precision.mode: must be adaptive, adaptive_time_microseconds, microseconds, "
                        "nanoseconds, connect or isostring, got \"millis\""));
  EXPECT_TRUE(Load(std::string(kConnect) + "interval.handling.mode=numeric\nmoney.fraction.digits=2\n", brokers).ok());
  absl::StatusOr<Loaded> iso = Load(std::string(kConnect) + "interval.handling.mode=string\n", brokers);
  ASSERT_TRUE(iso.ok()) << iso.status();
  EXPECT_EQ(iso->outbox.interval_handling_mode, config::IntervalHandling::kString);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "interval.handling.mode=iso\n", brokers)),
              HasSubstr("interval.handling.mode: must be numeric or string, got \"iso\""));
  absl::StatusOr<Loaded> map = Load(std::string(kConnect) + "hstore.handling.mode=map\n", brokers);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->outbox.hstore_handling_mode, config::HstoreHandling::kMap);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "hstore.handling.mode=list\n", brokers)),
              HasSubstr("hstore.handling.mode: must be json or map, got \"list\""));
  absl::StatusOr<Loaded> unknown = Load(std::string(kConnect) + "include.unknown.datatypes=True\n", brokers);
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_TRUE(unknown->outbox.include_unknown_datatypes);
  EXPECT_FALSE(map->outbox.include_unknown_datatypes);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "include.unknown.datatypes=yes\n", brokers)),
              HasSubstr("include.unknown.datatypes: must be false or true, got \"yes\""));
  absl::StatusOr<Loaded> hex = Load(std::string(kConnect) + "binary.handling.mode=hex\n", brokers);
  ASSERT_TRUE(hex.ok()) << hex.status();
  EXPECT_EQ(hex->outbox.binary_handling_mode, config::BinaryHandling::kHex);
  absl::StatusOr<Loaded> digits = Load(std::string(kConnect) + "money.fraction.digits=4\n", brokers);
  ASSERT_TRUE(digits.ok()) << digits.status();
  EXPECT_EQ(digits->outbox.money_fraction_digits, 4);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "money.fraction.digits=-1\n", brokers)),
              HasSubstr("money.fraction.digits: must be a number of digits from 0 to 1000, got \"-1\""));
  // event.converting.failure.handling.mode: Debezium's default warn when absent (YAML's is fail).
  EXPECT_EQ(digits->outbox.event_converting_failure_handling_mode, config::ConvertingFailure::kWarn);
  absl::StatusOr<Loaded> fail = Load(std::string(kConnect) + "event.converting.failure.handling.mode=FAIL\n", brokers);
  ASSERT_TRUE(fail.ok()) << fail.status();
  EXPECT_EQ(fail->outbox.event_converting_failure_handling_mode, config::ConvertingFailure::kFail);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "event.converting.failure.handling.mode=ignore\n", brokers)),
              HasSubstr("event.converting.failure.handling.mode: must be fail, warn or skip, got \"ignore\""));
  EXPECT_EQ(config::OutboxConfig{}.event_converting_failure_handling_mode, config::ConvertingFailure::kFail);
}

// kConnect without its key.converter and value.converter lines.
std::string ConnectWithoutConverters() {
  std::string file = kConnect;
  for (const char* line : {"key.converter=org.apache.kafka.connect.storage.StringConverter\n",
                           "value.converter=org.apache.kafka.connect.storage.StringConverter\n"}) {
    file.erase(file.find(line), std::string(line).size());
  }
  return file;
}

TEST(DebeziumProperties, JsonAndByteArrayConvertersMapToTheRelaysConverters) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  const std::string file = ConnectWithoutConverters();
  absl::StatusOr<Loaded> json = Load(file + "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
                                            "key.converter.schemas.enable=false\n"
                                            "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n",
                                     brokers);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->outbox.key_converter, config::Converter::kJson);
  EXPECT_EQ(json->outbox.value_converter, config::Converter::kBytes);
  // schemas.enable=true, JsonConverter's default: the schema-and-payload envelope (json_schema).
  for (const char* schemas : {"value.converter.schemas.enable=true\n", "value.converter.schemas.enable= TRUE\n", ""}) {
    absl::StatusOr<Loaded> enveloped = Load(file + "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
                                                   "value.converter=org.apache.kafka.connect.json.JsonConverter\n" +
                                                schemas,
                                            brokers);
    ASSERT_TRUE(enveloped.ok()) << enveloped.status();
    EXPECT_EQ(enveloped->outbox.key_converter, config::Converter::kJsonSchema) << schemas;
    EXPECT_EQ(enveloped->outbox.value_converter, config::Converter::kJsonSchema) << schemas;
  }
  EXPECT_THAT(ErrorOf(Load(file + "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                                  "value.converter.schemas.enable=yes\n",
                           brokers)),
              HasSubstr("value.converter.schemas.enable: must be true or false"));
}

// With schemas written, column.propagate.source.type and datatype.propagate.source.type become the relay's
// outbox.propagate_source_type keys (Debezium's list syntax kept), and a pattern Java or the relay would read otherwise
// is an error naming the key; include.schema.comments changes nothing (a streamed column has no comment). Without
// schemas, all three change nothing the relay writes (a warning).
TEST(DebeziumProperties, KeysThatAddTheSourceTypeToColumnSchemasMapToTheRelaysKeys) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  std::string file = kConnect;
  file.erase(file.find("value.converter=org.apache.kafka.connect.storage.StringConverter\n"),
             std::string("value.converter=org.apache.kafka.connect.storage.StringConverter\n").size());
  const std::string with_schema = file + "value.converter=org.apache.kafka.connect.json.JsonConverter\n";
  // A properties file reads \\ as one backslash (and drops a lone one: \. is .).
  absl::StatusOr<Loaded> mapped = Load(with_schema + "column.propagate.source.type=public\\\\.outbox\\\\.payload, "
                                                     "public\\\\.outbox\\\\.x{1\\\\,2}\n"
                                                     "datatype.propagate.source.type=.+\\.JSONB\n"
                                                     "include.schema.comments=true\n",
                                       brokers);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ(mapped->outbox.propagate_source_type_columns, "public\\.outbox\\.payload, public\\.outbox\\.x{1\\,2}");
  EXPECT_EQ(mapped->outbox.propagate_source_type_datatypes, ".+.JSONB");
  EXPECT_THAT(WarnedKeys(*mapped), Contains("include.schema.comments"));
  EXPECT_THAT(ErrorOf(Load(with_schema + "column.propagate.source.type=public\\.outbox\\.(payload\n", brokers)),
              AllOf(HasSubstr("column.propagate.source.type: "), HasSubstr("(payload")));
  EXPECT_THAT(ErrorOf(Load(with_schema + "datatype.propagate.source.type=.+\\\\.\\\\p{InVithkuqi}+\n", brokers)),
              AllOf(HasSubstr("datatype.propagate.source.type: "),
                    HasSubstr("\\p{InVithkuqi} (a block Java 17 does not know")));
  for (const std::string line : {"column.propagate.source.type=public.outbox.payload",
                                 "datatype.propagate.source.type=.+\\.JSONB", "include.schema.comments=true"}) {
    const std::string key = line.substr(0, line.find('='));
    absl::StatusOr<Loaded> plain = Load(file + "value.converter=org.apache.kafka.connect.storage.StringConverter\n" +
                                            line + "\n",
                                        brokers);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_THAT(WarnedKeys(*plain), Contains(key));
    EXPECT_EQ(plain->outbox.propagate_source_type_columns, "") << line;
    EXPECT_EQ(plain->outbox.propagate_source_type_datatypes, "") << line;
  }
}

// Column include and exclude lists, masks and truncations: accepted with a warning when they leave the columns the
// Outbox Event Router reads as they are; an additional field under table.field.additional.missing=ignore and the trace
// context column may be left out (the relay leaves them out too); any other router column left out is an error naming
// the key and the column; a mask or truncation of one becomes outbox.column_mappers. Patterns ignore ASCII case.
TEST(DebeziumProperties, ColumnListsThatLeaveTheRoutersColumnsAloneAreAccepted) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  const std::string file = std::string(kConnect) +
                           "transforms.outbox.table.fields.additional.placement=type:header:eventType,"
                           "secret:header,region:envelope\n";
  absl::StatusOr<Loaded> excluded = Load(file + "column.exclude.list=public\\\\.outbox\\\\.(ssn|notes)\n"
                                                "column.mask.with.8.chars=PUBLIC\\\\.OUTBOX\\\\.SSN\n"
                                                "column.truncate.to.20.chars=.*\\\\.notes\n",
                                         brokers);
  ASSERT_TRUE(excluded.ok()) << excluded.status();
  EXPECT_THAT(WarnedKeys(*excluded),
              AllOf(Contains("column.exclude.list"), Contains("column.mask.with.8.chars"),
                    Contains("column.truncate.to.20.chars")));
  EXPECT_EQ(excluded->outbox.fields.additional.size(), 3u);
  // An include list keeping the router's columns (id, aggregateid, payload, aggregatetype, the placed ones).
  absl::StatusOr<Loaded> included =
      Load(file + "column.include.list=public\\\\.outbox\\\\.(id|aggregate.*|payload|type|secret|region)\n", brokers);
  ASSERT_TRUE(included.ok()) << included.status();
  EXPECT_EQ(included->outbox.fields.additional.size(), 3u);
  EXPECT_EQ(included->outbox.fields.tracing_span_context, std::nullopt);  // tracingspancontext is left out
  // Leaving out a placed column: with missing=ignore its header goes, as in Debezium; else an error.
  absl::StatusOr<Loaded> ignored = Load(file + "transforms.outbox.table.field.additional.missing=ignore\n"
                                               "column.exclude.list=public\\\\.outbox\\\\.secret\n",
                                        brokers);
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  ASSERT_EQ(ignored->outbox.fields.additional.size(), 2u);
  EXPECT_EQ(ignored->outbox.fields.additional[1].column, "region");
  EXPECT_THAT(ErrorOf(Load(file + "column.exclude.list=public\\\\.outbox\\\\.secret\n", brokers)),
              HasSubstr("column.exclude.list: leaves out column \"secret\" (table.fields.additional.placement)"));
  EXPECT_THAT(ErrorOf(Load(file + "column.include.list=public\\\\.outbox\\\\.(id|payload)\n", brokers)),
              HasSubstr("column.include.list: leaves out column \"aggregateid\" (table.field.event.key)"));
  // A mask or truncation of a router column becomes the relay's (outbox.column_mappers), as Debezium applies it
  // before the router reads the row; an unknown name is no mapper (Debezium ignores it); a digest the relay does not
  // have is an error naming the key.
  absl::StatusOr<Loaded> masked = Load(file + "column.mask.hash.SHA-256.with.salt.pep.per=public\\\\.outbox\\\\.region\n"
                                              "column.truncate.to.3.chars=public\\\\.outbox\\\\.(secret|notes)\n"
                                              "column.mask.hash.v2.md5.with.salt.s=public\\\\.outbox\\\\.secret\n"
                                              "column.mask.with.x.chars=public\\\\.outbox\\\\.secret\n",
                                       brokers);
  ASSERT_TRUE(masked.ok()) << masked.status();
  ASSERT_EQ(masked->outbox.column_mappers.size(), 3u);
  const auto rule = [&](std::string_view key) -> const config::ColumnMapperRule* {
    for (const config::ColumnMapperRule& r : masked->outbox.column_mappers) {
      if (r.key == key) return &r;
    }
    return nullptr;
  };
  const config::ColumnMapperRule* hash = rule("outbox.column_mappers.mask.hash.SHA-256.with.salt.pep.per");
  ASSERT_NE(hash, nullptr);
  EXPECT_EQ(hash->kind, config::ColumnMapperRule::Kind::kHash);
  EXPECT_EQ(hash->algorithm, "SHA-256");
  EXPECT_EQ(hash->salt, "pep.per");
  EXPECT_EQ(hash->columns, "public\\.outbox\\.region");
  const config::ColumnMapperRule* truncate = rule("outbox.column_mappers.truncate.to.3.chars");
  ASSERT_NE(truncate, nullptr);
  EXPECT_EQ(truncate->kind, config::ColumnMapperRule::Kind::kTruncate);
  EXPECT_EQ(truncate->chars, 3);
  const config::ColumnMapperRule* v2 = rule("outbox.column_mappers.mask.hash.v2.md5.with.salt.s");
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->kind, config::ColumnMapperRule::Kind::kHashV2);
  EXPECT_THAT(WarnedKeys(*masked), Contains("column.mask.with.x.chars"));
  EXPECT_THAT(ErrorOf(Load(file + "column.mask.hash.MD2.with.salt.s=public\\\\.outbox\\\\.region\n", brokers)),
              HasSubstr("column.mask.hash.MD2.with.salt.s: no digest \"MD2\""));
  // Without schemas the relay drops a propagation, which Debezium picks before a hash: refused.
  EXPECT_THAT(ErrorOf(Load(file + "column.mask.hash.SHA-256.with.salt.s=public\\\\.outbox\\\\.region\n"
                                  "column.propagate.source.type=.*\\\\.region\n",
                           brokers)),
              HasSubstr("column.mask.hash.SHA-256.with.salt.s: with column.propagate.source.type under a converter "
                        "without schemas"));
  // Debezium 1.x's column.whitelist and column.blacklist: Debezium 3.6.1 does not read them.
  absl::StatusOr<Loaded> legacy = Load(file + "column.blacklist=public\\\\.outbox\\\\.payload\n", brokers);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  EXPECT_THAT(WarnedKeys(*legacy), Contains("column.blacklist"));
  // Nor table.whitelist: a file naming the outbox only there names no table Debezium 3 captures alone.
  std::string whitelisted = file;
  const size_t at = whitelisted.find("table.include.list=");
  ASSERT_NE(at, std::string::npos);
  whitelisted.replace(at, std::string_view("table.include.list").size(), "table.whitelist");
  EXPECT_THAT(ErrorOf(Load(whitelisted, brokers)), HasSubstr("table.include.list: required"));
  absl::StatusOr<Loaded> both = Load(file + "table.whitelist=public.other\n", brokers);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->outbox.table, "public.outbox");
  EXPECT_THAT(WarnedKeys(*both), Contains("table.whitelist"));
  EXPECT_THAT(ErrorOf(Load(file + "column.include.list=.*\ncolumn.exclude.list=x\n", brokers)),
              HasSubstr("column.exclude.list: cannot be set together with column.include.list"));
  EXPECT_THAT(ErrorOf(Load(file + "column.exclude.list=(\n", brokers)),
              HasSubstr("column.exclude.list: \"(\": not a valid regular expression"));
}

TEST(DebeziumProperties, KafkaConnectExactlyOnceSourceSupportMapsToTheGuarantee) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  absl::StatusOr<Loaded> c = Load(std::string(kConnect) + "exactly.once.support=required\n"
                                  "transaction.boundary=interval\ntransaction.boundary.interval.ms=250\n", brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->delivery.guarantee, config::Guarantee::kExactlyOnce);
  EXPECT_EQ(c->delivery.transaction_interval_ms, 250);
  EXPECT_THAT(WarnedKeys(*c), ElementsAre("topic.prefix"));
  absl::StatusOr<Loaded> poll = Load(std::string(kConnect) + "exactly.once.support=requested\n", brokers);
  ASSERT_TRUE(poll.ok()) << poll.status();
  EXPECT_EQ(poll->delivery.guarantee, config::Guarantee::kExactlyOnce);
  EXPECT_EQ(poll->delivery.transaction_interval_ms, 100);
  EXPECT_EQ(Load(kConnect, brokers)->delivery.guarantee, config::Guarantee::kAtLeastOnce);
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "exactly.once.support=required\ntransaction.boundary=connector\n",
                           brokers)),
              HasSubstr("transaction.boundary: must be poll or interval"));
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "exactly.once.support=maybe\n", brokers)),
              HasSubstr("exactly.once.support: must be required or requested"));
}

TEST(DebeziumProperties, ConnectorJsonMapsLikeTheProperties) {
  constexpr char kJson[] = R"({
    "name": "orders-outbox",
    "config": {
      "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
      "tasks.max": 1,
      "plugin.name": "pgoutput",
      "database.hostname": "db.internal", "database.port": 5433, "database.user": "debezium",
      "database.password": "s3cr3t pass", "database.dbname": "orders",
      "slot.name": "orders_outbox", "publication.name": "orders_outbox_pub",
      "table.include.list": "public.outbox",
      "key.converter": "org.apache.kafka.connect.storage.StringConverter",
      "value.converter": "org.apache.kafka.connect.storage.StringConverter",
      "transforms": "outbox",
      "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
      "transforms.outbox.table.fields.additional.placement": "type:header:eventType",
      "transforms.outbox.route.tombstone.on.empty.payload": true,
      "transforms.outbox.table.op.invalid.behavior": "fatal",
      "producer.override.bootstrap.servers": "kafka-1:9092"
    }
  })";
  absl::StatusOr<Loaded> c = Load(kJson, {}, {}, {}, "/etc/connectors/orders.json");
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectOrdersOutbox(*c);
  EXPECT_EQ(c->kafka, (std::map<std::string, std::string>{{"bootstrap.servers", "kafka-1:9092"}}));
  EXPECT_THAT(c->warnings, IsEmpty());
}

TEST(DebeziumProperties, JsonWithoutConnectorClassIsARelayConfig) {
  absl::StatusOr<Loaded> c = Load(R"({"source": {"conninfo": "host=h", "slot": "s", "publication": "p"},
                                      "kafka": {"bootstrap.servers": "k:9092"}})",
                                  {}, {}, {}, "/etc/relay.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.slot, "s");
  EXPECT_EQ(c->outbox.route_by, "type");  // a relay config keeps the relay's defaults
}

TEST(DebeziumProperties, DefaultsAreDebeziumsOwn) {
  absl::StatusOr<Loaded> c = Load(R"(connector.class=io.debezium.connector.postgresql.PostgresConnector
plugin.name=pgoutput
database.hostname=h
database.user=u
database.dbname=d
table.include.list=app.events
transforms=router
transforms.router.type=io.debezium.transforms.outbox.EventRouter
producer.override.bootstrap.servers=k:9092
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.conninfo, "host=h port=5432 user=u dbname=d");
  EXPECT_EQ(c->source.slot, "debezium");
  EXPECT_EQ(c->source.publication, "dbz_publication");
  EXPECT_EQ(c->outbox.table, "app.events");
  EXPECT_EQ(c->outbox.route_by, "aggregatetype");
  EXPECT_EQ(c->outbox.route_topic, "outbox.event.${routedByValue}");
  EXPECT_EQ(c->outbox.on_update, OnUpdate::kWarn);
  EXPECT_FALSE(c->outbox.tombstone_on_empty_payload);
  // Unset converters come from the worker's config: said once each.
  EXPECT_THAT(WarnedKeys(*c), ElementsAre("key.converter", "value.converter"));
}

constexpr char kBase[] = R"(debezium.sink.type=kafka
debezium.sink.kafka.producer.bootstrap.servers=k:9092
debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector
debezium.source.plugin.name=pgoutput
debezium.source.database.hostname=h
debezium.source.database.user=u
debezium.source.database.dbname=d
debezium.source.table.include.list=public.outbox
debezium.transforms=outbox
debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
debezium.format.key=simplestring
debezium.format.value=simplestring
)";

absl::StatusOr<Loaded> LoadWith(const std::string& extra, const Overrides& overrides = {},
                                std::map<std::string, std::string> env = {},
                                std::map<std::string, std::string> files = {}) {
  return Load(std::string(kBase) + extra, overrides, std::move(env), std::move(files));
}

TEST(DebeziumProperties, FieldNamesAndRoutingKeysAreMapped) {
  absl::StatusOr<Loaded> c = LoadWith(R"(debezium.transforms.outbox.table.field.event.id=event_id
debezium.transforms.outbox.table.field.event.key=stream_key
debezium.transforms.outbox.table.field.event.type=event_type
debezium.transforms.outbox.table.field.event.payload=body
debezium.transforms.outbox.table.field.event.timestamp=occurred_at
debezium.transforms.outbox.table.fields.additional.placement=event_type:header, tenant:HEADER:x-tenant,shard:partition
debezium.transforms.outbox.route.by.field=stream
debezium.transforms.outbox.route.topic.replacement=${routedByValue}.events
debezium.transforms.outbox.table.expand.json.payload=false
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.fields.id, "event_id");
  EXPECT_EQ(c->outbox.fields.key, "stream_key");
  EXPECT_EQ(c->outbox.fields.type, "event_type");
  EXPECT_EQ(c->outbox.fields.payload, "body");
  EXPECT_EQ(c->outbox.fields.timestamp, "occurred_at");
  ASSERT_EQ(c->outbox.fields.additional.size(), 3u);
  EXPECT_EQ(c->outbox.fields.additional[0].name, "event_type");
  EXPECT_EQ(c->outbox.fields.additional[1].column, "tenant");
  EXPECT_EQ(c->outbox.fields.additional[1].name, "x-tenant");
  EXPECT_EQ(c->outbox.fields.additional[2].column, "shard");  // the record's partition
  EXPECT_EQ(c->outbox.fields.additional[2].placement, "partition");
  EXPECT_EQ(c->outbox.route_by, "stream");
  EXPECT_EQ(c->outbox.route_topic, "${routedByValue}.events");
  EXPECT_EQ(c->outbox.route_topic_regex, "");
}

// Debezium splits table.fields.additional.placement with Java's split (AdditionalFieldsValidator): trailing empty
// pieces are dropped, and every other entry must be a pair or a trio. What it refuses at start is refused here,
// naming the key; what it takes means the same.
TEST(DebeziumProperties, PlacementIsSplitAsDebeziumSplitsIt) {
  const std::string key = "debezium.transforms.outbox.table.fields.additional.placement";
  for (const std::string refused : {"", " ", "type:header,,aggregateid:header", "type", "type:header:alias:more"}) {
    EXPECT_THAT(ErrorOf(LoadWith(key + "=" + refused + "\n")),
                AllOf(HasSubstr(key + ": "), HasSubstr("pairs or column:placement:alias trios")))
        << "\"" << refused << "\"";
  }
  // A trailing comma or colon is dropped, as Java's split drops it.
  absl::StatusOr<Loaded> c = LoadWith(key + "=type:header:eventType,aggregateid:header:,\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->outbox.fields.additional.size(), 2u);
  EXPECT_EQ(c->outbox.fields.additional[0].name, "eventType");
  EXPECT_EQ(c->outbox.fields.additional[1].column, "aggregateid");
  EXPECT_EQ(c->outbox.fields.additional[1].name, "aggregateid");
}

// Placement envelope: the fields go into Debezium's envelope struct, whose schema Debezium names after the row's
// ("<topic.prefix>.<schema>.<table>.Value" with the route value before ".Value") and versions by
// table.field.event.schema.version, which without envelope placement has no effect (a warning).
TEST(DebeziumProperties, EnvelopePlacementMapsWithDebeziumsSchemaNameAndVersion) {
  const std::string key = "debezium.transforms.outbox.table.fields.additional.placement";
  absl::StatusOr<Loaded> c = LoadWith(key + "=type:envelope:eventType,aggregateid:ENVELOPE,type:header\n"
                                      "debezium.transforms.outbox.table.field.event.schema.version=v\n"
                                      "debezium.source.topic.prefix=orders\n");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->outbox.fields.additional.size(), 3u);
  EXPECT_EQ(c->outbox.fields.additional[0].placement, "envelope");
  EXPECT_EQ(c->outbox.fields.additional[0].name, "eventType");
  EXPECT_EQ(c->outbox.fields.additional[1].placement, "envelope");
  EXPECT_EQ(c->outbox.fields.additional[1].name, "aggregateid");
  EXPECT_EQ(c->outbox.fields.additional[2].placement, "header");
  EXPECT_EQ(c->outbox.fields.schema_version, "v");
  EXPECT_EQ(c->outbox.envelope_schema_name, "orders.public.outbox.${routedByValue}.Value");
  EXPECT_THAT(WarnedKeys(*c), Not(Contains("debezium.source.topic.prefix")));
  EXPECT_THAT(ErrorOf(LoadWith(key + "=type:envelope\n")),
              HasSubstr("debezium.source.topic.prefix: required, as in Debezium"));
  absl::StatusOr<Loaded> headers = LoadWith("debezium.transforms.outbox.table.field.event.schema.version=v\n");
  ASSERT_TRUE(headers.ok()) << headers.status();
  EXPECT_FALSE(headers->outbox.fields.schema_version.has_value());
  EXPECT_THAT(WarnedKeys(*headers), Contains("debezium.transforms.outbox.table.field.event.schema.version"));
}

// Header values through Kafka Connect's JsonConverter: Kafka Connect's header.converter, and Debezium Server's header
// format (json by default), with schemas unless schemas.enable (the header's, else debezium.format's) is false.
TEST(DebeziumProperties, JsonHeaderConvertersMapToJsonHeaderValues) {
  absl::StatusOr<Loaded> plain = LoadWith("debezium.format.header.schemas.enable=false\n");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->outbox.header_values, config::HeaderValues::kJson);
  absl::StatusOr<Loaded> common = LoadWith("debezium.format.schemas.enable=false\ndebezium.format.header=json\n");
  ASSERT_TRUE(common.ok()) << common.status();
  EXPECT_EQ(common->outbox.header_values, config::HeaderValues::kJson);
  EXPECT_THAT(ErrorOf(LoadWith("debezium.format.header.schemas.enable=maybe\n")),
              HasSubstr("debezium.format.header.schemas.enable: must be true or false"));
  absl::StatusOr<Loaded> connect =
      Load(std::string(kConnect) + "header.converter=org.apache.kafka.connect.json.JsonConverter\n",
           {{"kafka.bootstrap.servers", "k:9092"}});
  ASSERT_TRUE(connect.ok()) << connect.status();
  EXPECT_EQ(connect->outbox.header_values, config::HeaderValues::kJsonSchema);
  absl::StatusOr<Loaded> simple = Load(kConnect, {{"kafka.bootstrap.servers", "k:9092"}});
  ASSERT_TRUE(simple.ok()) << simple.status();
  EXPECT_EQ(simple->outbox.header_values, config::HeaderValues::kDebezium);
}

// A conditional router: a predicate that selects the outbox's change events (topic "<topic.prefix>.<schema>.<table>",
// with a value) changes nothing and is accepted with a warning; one that leaves them out is refused, as Debezium would
// then write its change events unrouted; one the relay cannot judge is refused.
TEST(DebeziumProperties, ARouterPredicateIsAcceptedWhenItSelectsTheOutboxsChangeEvents) {
  const std::string base = "debezium.source.topic.prefix=orders\n"
                           "debezium.predicates=isOutbox\n"
                           "debezium.transforms.outbox.predicate=isOutbox\n";
  const auto with = [&](const std::string& predicate) { return LoadWith(base + predicate); };
  const std::string topic_matches = "debezium.predicates.isOutbox.type=org.apache.kafka.connect.transforms.predicates."
                                    "TopicNameMatches\n";
  absl::StatusOr<Loaded> selected = with(topic_matches + "debezium.predicates.isOutbox.pattern=orders\\.public\\..*\n");
  ASSERT_TRUE(selected.ok()) << selected.status();
  EXPECT_THAT(WarnedKeys(*selected), Contains("debezium.transforms.outbox.predicate"));
  EXPECT_THAT(WarnedKeys(*selected), Not(Contains("debezium.predicates.isOutbox.pattern")));
  EXPECT_THAT(ErrorOf(with(topic_matches + "debezium.predicates.isOutbox.pattern=orders\\.public\\..*\n"
                                           "debezium.transforms.outbox.negate=true\n")),
              HasSubstr("debezium.transforms.outbox.predicate: TopicNameMatches \"orders.public..*\" negated on "
                        "the outbox's topic \"orders.public.outbox\" leaves the outbox's change events out"));
  EXPECT_THAT(ErrorOf(with(topic_matches + "debezium.predicates.isOutbox.pattern=other\n")),
              HasSubstr("leaves the outbox's change events out of the Outbox Event Router"));
  const std::string tombstone =
      "debezium.predicates.isOutbox.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone\n";
  EXPECT_TRUE(with(tombstone + "debezium.transforms.outbox.negate=true\n").ok());
  EXPECT_THAT(ErrorOf(with(tombstone)), HasSubstr("RecordIsTombstone leaves the outbox's change events out"));
  // HasHeaderKey: an INSERT's change event carries the connector's four context headers, unless
  // extended.headers.enabled=false.
  const std::string has_header =
      "debezium.predicates.isOutbox.type=org.apache.kafka.connect.transforms.predicates.HasHeaderKey\n";
  absl::StatusOr<Loaded> context = with(has_header + "debezium.predicates.isOutbox.name=__debezium.context.taskId\n");
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_THAT(WarnedKeys(*context), Contains("debezium.transforms.outbox.predicate"));
  EXPECT_TRUE(with(has_header + "debezium.predicates.isOutbox.name=traceparent\n"
                                "debezium.transforms.outbox.negate=true\n").ok());
  EXPECT_THAT(ErrorOf(with(has_header + "debezium.predicates.isOutbox.name=traceparent\n")),
              HasSubstr("HasHeaderKey \"traceparent\" (an INSERT's change event has the four __debezium.context.* "
                        "headers) leaves the outbox's change events out"));
  EXPECT_THAT(ErrorOf(with(has_header + "debezium.predicates.isOutbox.name=__debezium.context.taskId\n"
                                        "debezium.source.extended.headers.enabled=false\n")),
              HasSubstr("no header: extended.headers.enabled=false) leaves the outbox's change events out"));
  EXPECT_THAT(ErrorOf(with(has_header)),
              HasSubstr("a conditional Outbox Event Router the relay cannot judge: predicates.isOutbox.name is "
                        "required"));
  EXPECT_THAT(ErrorOf(with("debezium.predicates.isOutbox.type=com.example.MyPredicate\n")),
              HasSubstr("a conditional Outbox Event Router the relay cannot judge"));
}

TEST(DebeziumProperties, SlotFailoverMapsToSourceFailover) {
  absl::StatusOr<Loaded> c = LoadWith("debezium.source.slot.failover=true\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->source.failover);
  EXPECT_THAT(WarnedKeys(*c), Not(Contains("debezium.source.slot.failover")));
  absl::StatusOr<Loaded> unset = LoadWith("");
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_FALSE(unset->source.failover);
}

TEST(DebeziumProperties, InvalidOperationBehaviorMapsToOnUpdateAsDebeziumActs) {
  // Debezium's warn and error both log and drop an UPDATE; only fatal stops.
  for (const auto& [behavior, expected] : std::vector<std::pair<std::string, OnUpdate>>{
           {"warn", OnUpdate::kWarn}, {"error", OnUpdate::kWarn}, {"FATAL", OnUpdate::kError}}) {
    absl::StatusOr<Loaded> c = LoadWith("debezium.transforms.outbox.table.op.invalid.behavior=" + behavior + "\n");
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->outbox.on_update, expected) << behavior;
  }
  // UPDATEs that the connector skips never reach the router.
  absl::StatusOr<Loaded> skipped = LoadWith("debezium.source.skipped.operations=u,t\n"
                                            "debezium.transforms.outbox.table.op.invalid.behavior=fatal\n");
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_EQ(skipped->outbox.on_update, OnUpdate::kIgnore);
  EXPECT_EQ(ErrorOf(LoadWith("debezium.transforms.outbox.table.op.invalid.behavior=skip\n")),
            "debezium.transforms.outbox.table.op.invalid.behavior: must be warn, error or fatal, got \"skip\"");
}

TEST(DebeziumProperties, KeysWithNoEffectOnRecordsAreAcceptedWithAWarningEach) {
  const std::vector<std::string> keys = {
      "debezium.source.offset.storage",
      "debezium.source.offset.storage.file.filename",
      "debezium.source.schema.history.internal",
      "debezium.source.topic.prefix",
      "debezium.source.database.server.name",
      "debezium.source.topic.creation.default.partitions",
      "debezium.source.snapshot.mode",
      "debezium.source.heartbeat.interval.ms",
      "debezium.source.heartbeat.action.query",
      "debezium.source.slot.drop.on.stop",
      "debezium.source.publication.autocreate.mode",
      "debezium.source.tombstones.on.delete",
      "debezium.source.max.batch.size",
      "debezium.source.errors.max.retries",
      "debezium.source.schema.include.list",
      "debezium.source.message.key.columns",
      "debezium.source.some.future.setting",
      "debezium.sink.kafka.wait.message.delivery.timeout.ms",
      "debezium.sink.kafka.producer.delivery.timeout.ms",
      "debezium.sink.kafka.producer.buffer.memory",
      "debezium.transforms.outbox.table.field.event.schema.version",
      "debezium.format.value.schemas.enable",  // the value's format is simplestring
      "debezium.source.key.converter",          // Debezium Server converts with the format's class
      "debezium.source.header.converter",
      "debezium.api.enabled",
      "quarkus.http.port",
  };
  std::string extra;
  for (const std::string& key : keys) extra += key + "=1\n";
  absl::StatusOr<Loaded> c = LoadWith(extra);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const std::string& key : keys) EXPECT_THAT(WarnedKeys(*c), Contains(key));
  EXPECT_EQ(c->warnings.size(), keys.size());
  EXPECT_EQ(c->kafka.count("delivery.timeout.ms"), 0u);  // not passed to librdkafka
  EXPECT_EQ(c->kafka.count("buffer.memory"), 0u);
}

// Earlier Debezium's router keys (1.x's, and 2.x's table.fields.additional.error.on.missing), which 3.6.1's
// EventRouterConfigDefinition no longer reads (no aliases): accepted with a
// warning naming the key and its 3.x name, and changing nothing, as the same file changes nothing in Debezium 3.6.1
// (the payload stays the payload column, the key aggregateid, a missing additional column an error, an UPDATE a warn).
TEST(DebeziumProperties, RouterKeysOfDebezium1xHaveNoEffectAsInDebezium3) {
  absl::StatusOr<Loaded> c = LoadWith("debezium.transforms.outbox.table.field.payload=body\n"
                                      "debezium.transforms.outbox.table.field.payload.id=ref\n"
                                      "debezium.transforms.outbox.table.field.schema.version=v\n"
                                      "debezium.transforms.outbox.debezium.op.invalid.behavior=fatal\n"
                                      "debezium.transforms.outbox.table.fields.additional.error.on.missing=false\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.fields.payload, "payload");
  EXPECT_EQ(c->outbox.fields.key, "aggregateid");
  EXPECT_FALSE(c->outbox.fields.additional_if_present);
  EXPECT_EQ(c->outbox.on_update, OnUpdate::kWarn);
  EXPECT_THAT(c->warnings,
              IsSupersetOf({HasSubstr("debezium.transforms.outbox.table.field.payload: no effect: an earlier Debezium's name, "
                                      "which Debezium 3.6.1's Outbox Event Router does not read "
                                      "(table.field.event.payload replaces it)"),
                            HasSubstr("table.field.payload.id: no effect"), HasSubstr("table.field.schema.version: no effect"),
                            HasSubstr("debezium.op.invalid.behavior: no effect"),
                            HasSubstr("table.fields.additional.error.on.missing: no effect")}));
}

TEST(DebeziumProperties, EachKeyThatWouldChangeTheRecordsIsAnErrorNamingIt) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"debezium.transforms.outbox.table.json.payload.null.behavior=keep", "must be ignore or optional_bytes"},
      {"debezium.transforms.outbox.predicate=isOutbox", "not a predicate declared in predicates"},
      {"debezium.transforms.outbox.table.field.event.payload.id=x", "not an Outbox Event Router key"},
      {"debezium.source.converters=isbn", "custom converters (Java classes) change the column values"},
      // Debezium Server takes the converter class from the format unless a `class` option names another.
      {"debezium.format.key.class=org.apache.kafka.connect.converters.LongConverter", "would change the records"},
      {"debezium.source.value.converter.class=io.confluent.connect.avro.AvroConverter", "would change the records"},
      {"debezium.format.class=org.apache.kafka.connect.converters.ByteArrayConverter", "would change the records"},
      {"debezium.source.converter.class=org.apache.kafka.connect.converters.ByteArrayConverter",
       "would change the records"},
      {"debezium.format.header=protobuf", "must be json or jsonbytearray"},
      {"debezium.source.column.exclude.list=public.outbox.payload", "leaves out column \"payload\""},
      {"debezium.source.column.mask.hash.Whirlpool.with.salt.x=public.outbox.aggregateid", "no digest \"Whirlpool\""},
      {"debezium.source.binary.handling.mode=base32", "must be bytes, base64, base64-url-safe or hex"},
      {"debezium.source.provide.transaction.metadata=true", "transaction records"},
      {"debezium.source.skipped.operations=c", "drop every event"},
      {"debezium.sink.kafka.producer.value.serializer=org.apache.kafka.common.serialization.ByteArraySerializer",
       "would change the records"},
      {"debezium.sink.kafka.producer.partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
       "partitions"},
      {"debezium.sink.kafka.producer.interceptor.classes=com.example.Audit", "interceptors"},
  };
  for (const auto& [line, reason] : refused) {
    const std::string key = line.substr(0, line.find('='));
    EXPECT_THAT(ErrorOf(LoadWith(line + "\n")), AllOf(HasSubstr(key + ": "), HasSubstr(reason))) << line;
  }
  // Another transform in the chain, and the formats.
  EXPECT_THAT(ErrorOf(Load(std::string(kBase) + "debezium.transforms=unwrap,outbox\n"
                                                "debezium.transforms.unwrap.type=io.debezium.transforms."
                                                "ExtractNewRecordState\n")),
              HasSubstr("debezium.transforms.unwrap.type: \"io.debezium.transforms.ExtractNewRecordState\" would "
                        "change the records"));
  EXPECT_THAT(ErrorOf(LoadWith("debezium.format.value=cloudevents\n")),
              HasSubstr("debezium.format.value: must be simplestring, json, jsonbytearray or binary, got "
                        "\"cloudevents\""));
}

// Debezium Server's key and value formats: simplestring is StringConverter; json (the default, also when the keys are
// absent) and jsonbytearray are JsonConverter, with schemas unless debezium.format.<key|value>.schemas.enable, or
// debezium.format.schemas.enable, says false.
TEST(DebeziumProperties, DebeziumServerFormatsMapToTheRelaysConverters) {
  std::string no_formats = kBase;
  no_formats = no_formats.substr(0, no_formats.find("debezium.format.key"));
  absl::StatusOr<Loaded> c = Load(no_formats);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kJsonSchema);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJsonSchema);
  EXPECT_THAT(WarnedKeys(*c), Contains("debezium.format.value"));
  c = Load(no_formats + "debezium.format.key=simplestring\ndebezium.format.value=jsonbytearray\n"
                        "debezium.format.schemas.enable=false\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kString);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJson);
  EXPECT_EQ(c->outbox.header_values, config::HeaderValues::kJson);  // the common key reaches the headers too
  c = Load(no_formats + "debezium.format.key=json\ndebezium.format.value=json\ndebezium.format.schemas.enable=false\n"
                        "debezium.format.value.schemas.enable=true\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kJson);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJsonSchema);
  // A converter class among debezium.source.* has no effect (the format names it); its schemas.enable counts below
  // both debezium.format keys, and debezium.source.converter.schemas.enable below it.
  c = Load(no_formats + "debezium.source.value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                        "debezium.source.value.converter.schemas.enable=false\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kJsonSchema);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJson);
  EXPECT_EQ(c->outbox.header_values, config::HeaderValues::kJsonSchema);
  EXPECT_THAT(WarnedKeys(*c), Contains("debezium.source.value.converter"));
  c = Load(no_formats + "debezium.source.value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                        "debezium.source.value.converter.schemas.enable=false\ndebezium.format.schemas.enable=true\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJsonSchema);
  c = Load(no_formats + "debezium.source.converter.schemas.enable=false\n"
                        "debezium.source.key.converter.schemas.enable=true\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kJsonSchema);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJson);
  EXPECT_EQ(c->outbox.header_values, config::HeaderValues::kJson);
  c = Load(no_formats + "debezium.format.key=simplestring\n"
                        "debezium.format.key.class=org.apache.kafka.connect.storage.StringConverter\n"
                        "debezium.source.value.converter.class=org.apache.kafka.connect.json.JsonConverter\n");
  ASSERT_TRUE(c.ok()) << c.status();  // each format's own class, named
  EXPECT_THAT(WarnedKeys(*c), Not(Contains("debezium.format.key.class")));
  EXPECT_THAT(ErrorOf(Load(no_formats + "debezium.source.header.converter.schemas.enable=no\n")),
              HasSubstr("debezium.source.header.converter.schemas.enable: must be true or false"));
  EXPECT_THAT(ErrorOf(Load(no_formats + "debezium.format.value.schemas.enable=yes\n")),
              HasSubstr("debezium.format.value.schemas.enable: must be true or false"));
  c = Load(no_formats + "debezium.source.column.propagate.source.type=.*\n");  // json's schemas: the relay's key
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.propagate_source_type_columns, ".*");
  EXPECT_THAT(ErrorOf(Load(no_formats + "debezium.source.column.propagate.source.type=(\n")),
              HasSubstr("debezium.source.column.propagate.source.type: \"(\": not a valid regular expression"));
}

// Debezium's BinaryDataConverter (Kafka Connect's io.debezium.converters.BinaryDataConverter, Debezium Server's binary
// format): a bytea key or payload as its bytes, any other through the delegate.converter.type it names (its options
// under that key); without a delegate it is ByteArrayConverter (anything else fails the record in both); another
// delegate is an error naming the key.
TEST(DebeziumProperties, BinaryDataConverterMapsToTheRelaysBinaryConverterWithItsDelegate) {
  const Overrides brokers = {{"kafka.bootstrap.servers", "kafka-1:9092"}};
  const std::string file = ConnectWithoutConverters();
  absl::StatusOr<Loaded> c =
      Load(file + "key.converter=io.debezium.converters.BinaryDataConverter\n"
                  "key.converter.delegate.converter.type=org.apache.kafka.connect.storage.StringConverter\n"
                  "value.converter=io.debezium.converters.BinaryDataConverter\n"
                  "value.converter.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\n"
                  "value.converter.delegate.converter.type.schemas.enable=false\n",
           brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kString);
  EXPECT_TRUE(c->outbox.key_converter_binary);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJson);
  EXPECT_TRUE(c->outbox.value_converter_binary);
  EXPECT_THAT(WarnedKeys(*c), Not(Contains("value.converter.delegate.converter.type.schemas.enable")));
  c = Load(file + "value.converter=io.debezium.converters.BinaryDataConverter\n", brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kBytes);  // no delegate: bytes or a failed record
  EXPECT_FALSE(c->outbox.value_converter_binary);
  c = Load(file + "value.converter=io.debezium.converters.BinaryDataConverter\n"
                  "value.converter.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\n",
           brokers);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJsonSchema);  // JsonConverter's schemas by default
  EXPECT_THAT(ErrorOf(Load(file + "value.converter=io.debezium.converters.BinaryDataConverter\n"
                                  "value.converter.delegate.converter.type=io.confluent.connect.avro.AvroConverter\n",
                           brokers)),
              HasSubstr("value.converter.delegate.converter.type: \"io.confluent.connect.avro.AvroConverter\" would "
                        "change the records"));
  // Debezium Server: debezium.format.value=binary, the delegate among the format's options.
  std::string no_formats = kBase;
  no_formats = no_formats.substr(0, no_formats.find("debezium.format.key"));
  c = Load(no_formats + "debezium.format.key=simplestring\ndebezium.format.value=binary\n"
                        "debezium.format.value.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\n"
                        "debezium.format.value.delegate.converter.type.schemas.enable=false\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.key_converter, config::Converter::kString);
  EXPECT_FALSE(c->outbox.key_converter_binary);
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kJson);
  EXPECT_TRUE(c->outbox.value_converter_binary);
  c = Load(no_formats + "debezium.format.key=simplestring\ndebezium.format.value=binary\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.value_converter, config::Converter::kBytes);
  EXPECT_THAT(ErrorOf(Load(no_formats + "debezium.format.value=binary\n"
                                        "debezium.format.value.class=org.apache.kafka.connect.json.JsonConverter\n")),
              HasSubstr("debezium.format.value.class: \"org.apache.kafka.connect.json.JsonConverter\" would change "
                        "the records"));
}

// table.expand.json.payload, the null behavior and the router's field name adjustment map to the relay's keys; the
// empty array behavior, which Debezium 3.6.1 does not have, is not taken.
TEST(DebeziumProperties, ExpandedJsonPayloadsMapToTheRelaysKeys) {
  absl::StatusOr<Loaded> plain = LoadWith("");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->outbox.expand_json_payload);
  absl::StatusOr<Loaded> c = LoadWith("debezium.transforms.outbox.table.expand.json.payload=TRUE\n"
                                      "debezium.transforms.outbox.table.json.payload.null.behavior= Optional_Bytes\n"
                                      "debezium.transforms.outbox.table.json.payload.empty.array.behavior=optional_string\n"
                                      "debezium.transforms.outbox.field.name.adjustment.mode=none\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->outbox.expand_json_payload);
  EXPECT_EQ(c->outbox.json_payload_null_behavior, config::JsonNullBehavior::kOptionalBytes);
  EXPECT_EQ(c->outbox.json_payload_empty_array_behavior, config::JsonEmptyArrayBehavior::kIgnore);
  EXPECT_THAT(WarnedKeys(*c), Contains("debezium.transforms.outbox.table.json.payload.empty.array.behavior"));
  absl::StatusOr<Loaded> off = LoadWith("debezium.transforms.outbox.table.json.payload.null.behavior=optional_bytes\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->outbox.json_payload_null_behavior, config::JsonNullBehavior::kIgnore);
  EXPECT_THAT(WarnedKeys(*off), Contains("debezium.transforms.outbox.table.json.payload.null.behavior"));
  EXPECT_EQ(c->outbox.json_payload_field_name_adjustment, config::FieldNameAdjustment::kNone);
  for (const auto& [written, mode] : {std::pair<std::string, config::FieldNameAdjustment>{"avro", config::FieldNameAdjustment::kAvro},
                                      {" AVRO_Unicode ", config::FieldNameAdjustment::kAvroUnicode}}) {
    absl::StatusOr<Loaded> adjusted = LoadWith("debezium.transforms.outbox.table.expand.json.payload=true\n"
                                               "debezium.transforms.outbox.field.name.adjustment.mode=" + written + "\n");
    ASSERT_TRUE(adjusted.ok()) << adjusted.status();
    EXPECT_EQ(adjusted->outbox.json_payload_field_name_adjustment, mode) << written;
  }
  // Debezium's FieldNameAdjustmentMode.parse gives null for another value, and the router fails to start.
  EXPECT_THAT(ErrorOf(LoadWith("debezium.transforms.outbox.table.expand.json.payload=true\n"
                               "debezium.transforms.outbox.field.name.adjustment.mode=avro-unicode\n")),
              HasSubstr("debezium.transforms.outbox.field.name.adjustment.mode: must be none, avro or avro_unicode, "
                        "got \"avro-unicode\""));
  // Without expansion the router never reads it.
  absl::StatusOr<Loaded> unread = LoadWith("debezium.transforms.outbox.field.name.adjustment.mode=avro\n");
  ASSERT_TRUE(unread.ok()) << unread.status();
  EXPECT_EQ(unread->outbox.json_payload_field_name_adjustment, config::FieldNameAdjustment::kNone);
  EXPECT_THAT(WarnedKeys(*unread), Contains("debezium.transforms.outbox.field.name.adjustment.mode"));
}

TEST(DebeziumProperties, EveryProblemIsInOneError) {
  EXPECT_EQ(ErrorOf(Load("debezium.sink.type=kinesis\n"
                         "debezium.source.connector.class=io.debezium.connector.mysql.MySqlConnector\n"
                         "debezium.source.plugin.name=decoderbufs\n"
                         "debezium.source.database.hostname=h\n"
                         "debezium.source.table.include.list=public.a,public.b\n"
                         "debezium.transforms=outbox\n"
                         "debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
                         "debezium.transforms.outbox.route.topic.regex=\\\\b{g}x\n"
                         "debezium.format.key=simplestring\n"
                         "debezium.format.value=simplestring\n")),
            "debezium.sink.type: must be kafka, rabbitmq, nats-jetstream or http (the sinks the relay has), got "
            "\"kinesis\"; "
            "debezium.source.connector.class: must be io.debezium.connector.postgresql.PostgresConnector, got "
            "\"io.debezium.connector.mysql.MySqlConnector\"; "
            "debezium.source.plugin.name: must be pgoutput, got \"decoderbufs\"; "
            "debezium.source.database.user: required; "
            "debezium.source.database.dbname: required; "
            "debezium.source.table.include.list: must name exactly one table (the outbox), got 2; "
            "debezium.transforms.outbox.route.topic.regex: \"\\b{g}x\": \\b{..} (grapheme clusters, which Java 17 "
            "and 25 split apart) at index 0 is refused: "
            "java.util.regex and the relay's PCRE2 would read it differently; "
            "debezium.sink.kafka.producer.bootstrap.servers: required");
}

TEST(DebeziumProperties, PluginMustBePgoutputAndTheTableOnePlainName) {
  std::string without_plugin = kBase;
  without_plugin.erase(without_plugin.find("debezium.source.plugin.name"),
                       std::string("debezium.source.plugin.name=pgoutput\n").size());
  EXPECT_EQ(ErrorOf(Load(without_plugin)),
            "debezium.source.plugin.name: required: must be pgoutput (Debezium's default is decoderbufs)");
  EXPECT_THAT(ErrorOf(LoadWith("debezium.source.table.include.list=public.outbox_.*\n")),
              HasSubstr("\"public.outbox_.*\" must be schema.table (one table, no regex)"));
  EXPECT_THAT(ErrorOf(LoadWith("debezium.source.table.include.list=outbox\n")), HasSubstr("must be schema.table"));
}

TEST(DebeziumProperties, KafkaConnectFileWithoutBrokersSaysHowToNameThem) {
  EXPECT_THAT(ErrorOf(Load(kConnect)),
              HasSubstr("kafka.bootstrap.servers: required (a connector config does not name the brokers, the "
                        "worker's does: add --set kafka.bootstrap.servers=HOST:PORT"));
}

TEST(DebeziumProperties, ProducerKeysBecomeLibrdkafkaKeys) {
  absl::StatusOr<Loaded> c = LoadWith(
      "debezium.sink.kafka.producer.security.protocol=SASL_SSL\n"
      "debezium.sink.kafka.producer.sasl.mechanism=SCRAM-SHA-512\n"
      "debezium.sink.kafka.producer.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
      "required username=\"relay\" password=\"k-pass\";\n"
      "debezium.sink.kafka.producer.linger.ms=20\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kafka, (std::map<std::string, std::string>{{"bootstrap.servers", "k:9092"},
                                                          {"linger.ms", "20"},
                                                          {"sasl.mechanism", "SCRAM-SHA-512"},
                                                          {"sasl.password", "k-pass"},
                                                          {"sasl.username", "relay"},
                                                          {"security.protocol", "SASL_SSL"}}));
  EXPECT_THAT(c->secrets, Contains("k-pass"));
  EXPECT_THAT(ErrorOf(LoadWith("debezium.sink.kafka.producer.ssl.truststore.location=/etc/kafka/trust.jks\n")),
              HasSubstr("debezium.sink.kafka.producer.ssl.truststore.location: Java trust stores are not read by "
                        "librdkafka"));
  EXPECT_THAT(ErrorOf(LoadWith("debezium.sink.kafka.producer.sasl.jaas.config=com.example.Login required;\n")),
              HasSubstr("only PlainLoginModule and ScramLoginModule are mapped"));
}

TEST(DebeziumProperties, RelayKeysAndOverridesApply) {
  absl::StatusOr<Loaded> c = LoadWith("outbox-relay.source.checkpoint=file\n"
                                      "outbox-relay.source.checkpoint_file=${env:CKPT}\n"
                                      "outbox-relay.http.listen=127.0.0.1:9999\n",
                                      {{"source.slot", "other_slot"}, {"delivery.on_error", "dead_letter"}},
                                      {{"CKPT", "/var/lib/relay/ckpt"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.checkpoint, CheckpointStore::kFile);
  EXPECT_EQ(c->source.checkpoint_file, "/var/lib/relay/ckpt");
  EXPECT_EQ(c->http_listen, "127.0.0.1:9999");
  EXPECT_EQ(c->source.slot, "other_slot");
  EXPECT_EQ(c->delivery.on_error, OnError::kDeadLetter);
  EXPECT_THAT(ErrorOf(LoadWith("outbox-relay.source.slots=x\n")), HasSubstr("unknown key \"source.slots\""));
}

TEST(DebeziumProperties, ServerExpressionsExpandLikeDebeziumServer) {
  absl::StatusOr<Loaded> c = LoadWith(
      "db.port=6543\n"
      "debezium.source.database.port=${db.port}\n"
      "debezium.source.database.password=${DB_PASSWORD}\n"
      "debezium.source.slot.name=${SLOT_NAME:outbox_slot}\n"
      "debezium.transforms.outbox.route.topic.replacement=$${routedByValue}.v${VERSION:1}\n",
      {}, {{"DB_PASSWORD", "from env"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.conninfo, "host=h port=6543 user=u password='from env' dbname=d");
  EXPECT_EQ(c->source.slot, "outbox_slot");
  EXPECT_EQ(c->outbox.route_topic, "${routedByValue}.v1");
  EXPECT_THAT(c->secrets, Contains("from env"));
  EXPECT_EQ(ErrorOf(LoadWith("debezium.source.database.password=${NOPE}\n")),
            "debezium.source.database.password: cannot expand ${NOPE}: no such property or environment variable");
}

TEST(DebeziumProperties, ConfigProviderReferencesExpandInConnectorFiles) {
  absl::StatusOr<Loaded> c = Load(
      std::string(kConnect) + "database.password=${file:/run/secrets/db.properties:password}\n"
                              "database.user=${env:DB_USER}\n",
      {{"kafka.bootstrap.servers", "k:9092"}}, {{"DB_USER", "relay"}},
      {{"/run/secrets/db.properties", "# credentials\npassword = from\\ file\n"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.conninfo, "host=db.internal port=5433 user=relay password='from file' dbname=orders");
  EXPECT_THAT(c->secrets, Contains("from file"));
  EXPECT_THAT(ErrorOf(Load(std::string(kConnect) + "database.password=${vault:secret/db:password}\n",
                           {{"kafka.bootstrap.servers", "k:9092"}})),
              HasSubstr("database.password: config provider \"vault\" is not supported"));
}

TEST(DebeziumProperties, SecretsNeverAppearInErrors) {
  const std::string error = ErrorOf(LoadWith("debezium.source.database.password=${PGPASS}\n"
                                             "debezium.source.plugin.name=${PGPASS}\n",
                                             {}, {{"PGPASS", "hunter2-secret"}}));
  EXPECT_THAT(error, HasSubstr("debezium.source.plugin.name: must be pgoutput, got \"****\""));
  EXPECT_THAT(error, Not(HasSubstr("hunter2-secret")));
}

TEST(DebeziumProperties, ParseErrorsNameTheFileAndLine) {
  EXPECT_EQ(ErrorOf(Load("a=1\nb=\\u12x4\n")), std::string(kPath) + ": line 2: malformed \\uxxxx escape");
  EXPECT_THAT(ErrorOf(Load("{\"config\": [", {}, {}, {}, "/etc/c.json")), StartsWith("/etc/c.json: invalid JSON"));
}

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(OUTBOX_EXAMPLES_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

TEST(DebeziumProperties, TheExampleFilesLoad) {
  absl::StatusOr<Loaded> server = Load(ReadExample("debezium/application.properties"), {},
                                       {{"OUTBOX_DB_PASSWORD", "example-pass"}});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(server->source.conninfo,
            "host=postgres port=5432 user=outbox_relay password=example-pass dbname=app");
  EXPECT_EQ(server->source.slot, "outbox_relay");  // the relay's key wins over Debezium's slot.name
  EXPECT_EQ(server->outbox.route_topic, "outbox.event.${routedByValue}");
  EXPECT_THAT(WarnedKeys(*server), ElementsAre("debezium.source.offset.storage.file.filename",
                                               "debezium.source.offset.flush.interval.ms",
                                               "debezium.source.topic.prefix", "debezium.source.snapshot.mode"));

  absl::StatusOr<Loaded> connect =
      Load(ReadExample("debezium/outbox-connector.json"), {{"kafka.bootstrap.servers", "kafka:9092"}}, {},
           {{"/run/secrets/postgres.properties", "password=example-pass\n"}}, "/etc/outbox-connector.json");
  ASSERT_TRUE(connect.ok()) << connect.status();
  EXPECT_EQ(connect->source.slot, "debezium");
  EXPECT_EQ(connect->outbox.route_topic_regex, "(?<routedByValue>[a-z]+)");
  const outbox::TopicRouter router(connect->outbox);
  EXPECT_EQ(outbox::RouteTopic(router, "order"), "order.events");
  EXPECT_EQ(outbox::RouteTopic(router, "Order"), "Order");
}

// A Debezium file's regex routing that no template can say, and the same pair in YAML (outbox.route.topic_regex and
// outbox.route.topic_replacement): the same topics, a value the pattern does not match whole staying itself.
TEST(DebeziumRouting, TheYamlFormOfARegexRouteGivesTheSameTopics) {
  absl::StatusOr<Loaded> debezium =
      LoadWith("debezium.transforms.outbox.route.topic.regex=(?<routedByValue>[a-z]+)_(v\\\\d+)\n"
               "debezium.transforms.outbox.route.topic.replacement=${routedByValue}.events.$2\n");
  ASSERT_TRUE(debezium.ok()) << debezium.status();
  ASSERT_EQ(debezium->outbox.route_topic_regex, "(?<routedByValue>[a-z]+)_(v\\d+)");
  absl::StatusOr<Loaded> yaml = Load(R"(source:
  conninfo: "host=127.0.0.1 dbname=app"
  slot: s
  publication: p
outbox:
  route:
    topic_regex: '(?<routedByValue>[a-z]+)_(v\d+)'
    topic_replacement: '${routedByValue}.events.$2'
kafka:
  bootstrap.servers: "127.0.0.1:9092"
)", {}, {}, {}, "/etc/relay.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const outbox::TopicRouter from_debezium(debezium->outbox), from_yaml(yaml->outbox);
  for (const std::string value : {"order_v1", "invoice_v22", "Order_v1", "order", "order_v1x", ""}) {
    EXPECT_EQ(outbox::RouteTopic(from_yaml, value), outbox::RouteTopic(from_debezium, value)) << value;
  }
  EXPECT_EQ(outbox::RouteTopic(from_yaml, "order_v1"), "order.events.v1");
  EXPECT_EQ(outbox::RouteTopic(from_yaml, "Order_v1"), "Order_v1");
}

// --set outbox.route.topic_regex (with its replacement) on a Debezium file replaces the file's routing, a template or
// a regex alike.
TEST(DebeziumRouting, ARegexRouteSetOverridesTheFilesRouting) {
  const Overrides regex = {{"outbox.route.topic_regex", "(?<routedByValue>[a-z]+)_(v\\d+)"},
                           {"outbox.route.topic_replacement", "${routedByValue}.$2"}};
  for (const std::string& file_route : {std::string(""),  // the default: a template
                                       std::string("debezium.transforms.outbox.route.topic.regex=(x)(y)\n"
                                                   "debezium.transforms.outbox.route.topic.replacement=$2$1\n")}) {
    absl::StatusOr<Loaded> c = LoadWith(file_route, regex);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(outbox::RouteTopic(outbox::TopicRouter(c->outbox), "order_v1"), "order.v1") << file_route;
  }
}

// --- Debezium Server files with a RabbitMQ, NATS JetStream or HTTP sink.

// kServer with its Kafka sink replaced by `sink` (and, for sinks that skip them, without the tombstones).
std::string ServerWithSink(const std::string& sink, bool tombstones = true) {
  std::istringstream in(kServer);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.starts_with("debezium.sink.")) continue;
    if (!tombstones && line.starts_with("debezium.transforms.outbox.route.tombstone.on.empty.payload")) continue;
    out += line + "\n";
  }
  return out + sink;
}

constexpr char kRabbitMqSink[] = R"(debezium.sink.type=rabbitmq
debezium.sink.rabbitmq.connection.host=rabbit.internal
debezium.sink.rabbitmq.connection.port=5673
debezium.sink.rabbitmq.connection.username=relay
debezium.sink.rabbitmq.connection.password=rabbit-pass
debezium.sink.rabbitmq.connection.virtual.host=orders
debezium.sink.rabbitmq.connection.connection.heartbeat=30
debezium.sink.rabbitmq.connection.connection.timeout=4000
debezium.sink.rabbitmq.exchange=outbox
debezium.sink.rabbitmq.routingKey.source=topic
debezium.sink.rabbitmq.deliveryMode=2
debezium.sink.rabbitmq.ackTimeout=30000
debezium.sink.rabbitmq.null.value=
)";

constexpr char kNatsSink[] = R"(debezium.sink.type=nats-jetstream
debezium.sink.nats-jetstream.url=nats://nats-1:4222,nats://nats-2:4222
debezium.sink.nats-jetstream.stream-name=OUTBOX
debezium.sink.nats-jetstream.auth.user=relay
debezium.sink.nats-jetstream.auth.password=nats-pass
debezium.sink.nats-jetstream.async.enabled=true
debezium.sink.nats-jetstream.async.timeout.ms=8000
debezium.sink.nats-jetstream.sync.retries=3
)";

constexpr char kHttpSink[] = R"(debezium.sink.type=http
debezium.sink.http.url=https://hooks.example.com/orders
debezium.sink.http.timeout.ms=15000
debezium.sink.http.retries=10
debezium.sink.http.retry.interval.ms=2000
debezium.sink.http.headers.prefix=
debezium.sink.http.headers.encode.base64=false
)";

// The checkpoint every non-Kafka file gets from kServer's offsets file.
void ExpectCheckpointBesideTheOffsets(const Loaded& c) {
  EXPECT_EQ(c.source.checkpoint, CheckpointStore::kFile);
  EXPECT_EQ(c.source.checkpoint_file, "data/offsets.dat.outbox-relay");
  EXPECT_THAT(c.warnings, Contains(HasSubstr("debezium.source.offset.storage.file.filename: the relay keeps its own "
                                             "checkpoint beside it, in data/offsets.dat.outbox-relay")));
}

TEST(DebeziumSinks, RabbitMqFileMapsToTheRabbitMqSink) {
  absl::StatusOr<Loaded> c = Load(ServerWithSink(kRabbitMqSink));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectOrdersOutbox(*c);
  ExpectCheckpointBesideTheOffsets(*c);
  EXPECT_EQ(c->sink, SinkType::kRabbitMq);
  EXPECT_EQ(c->rabbitmq.url, "amqp://rabbit.internal:5673/orders");
  EXPECT_EQ(c->rabbitmq.user, "relay");
  EXPECT_EQ(c->rabbitmq.password, "rabbit-pass");
  EXPECT_EQ(c->rabbitmq.heartbeat_s, 30);
  EXPECT_EQ(c->rabbitmq.connect_timeout_ms, 4000);
  EXPECT_EQ(c->rabbitmq.exchange, "outbox");
  EXPECT_EQ(c->rabbitmq.routing_key, "${topic}");
  EXPECT_TRUE(c->rabbitmq.tls_verify);
  EXPECT_THAT(c->secrets, Contains("rabbit-pass"));
  EXPECT_THAT(WarnedKeys(*c), Contains("debezium.sink.rabbitmq.ackTimeout"));
}

TEST(DebeziumSinks, RabbitMqDefaultsAreTheJavaClientsAndDebeziumServers) {
  // No connection keys: localhost, 5672, vhost "/"; no exchange: the record's topic, as Debezium Server names it.
  absl::StatusOr<Loaded> c = Load(ServerWithSink("debezium.sink.type=rabbitmq\n"
                                                 "debezium.sink.rabbitmq.routingKey=orders\n"
                                                 "debezium.sink.rabbitmq.null.value=\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rabbitmq.url, "amqp://localhost:5672/%2F");
  EXPECT_EQ(c->rabbitmq.exchange, "${topic}");
  EXPECT_EQ(c->rabbitmq.routing_key, "orders");  // routingKey.source static, Debezium's default

  c = Load(ServerWithSink("debezium.sink.type=rabbitmq\n"
                          "debezium.sink.rabbitmq.connection.ssl.enabled=true\n"
                          "debezium.sink.rabbitmq.connection.ssl.validate.server.certificate=false\n"
                          "debezium.sink.rabbitmq.routingKey.source=topic\n"
                          "debezium.sink.rabbitmq.null.value=\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rabbitmq.url, "amqps://localhost:5671/%2F");
  EXPECT_FALSE(c->rabbitmq.tls_verify);

  c = Load(ServerWithSink("debezium.sink.type=rabbitmq\n"
                          "debezium.sink.rabbitmq.connection.uri=amqp://relay:uri-pass@rabbit:5672/orders\n"
                          "debezium.sink.rabbitmq.routingKey.source=topic\n"
                          "debezium.sink.rabbitmq.null.value=\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rabbitmq.url, "amqp://relay:uri-pass@rabbit:5672/orders");
  EXPECT_THAT(c->secrets, Contains("uri-pass"));
}

TEST(DebeziumSinks, NatsJetStreamFileMapsToTheNatsSink) {
  absl::StatusOr<Loaded> c = Load(ServerWithSink(kNatsSink, /*tombstones=*/false));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectCheckpointBesideTheOffsets(*c);
  EXPECT_EQ(c->sink, SinkType::kNats);
  EXPECT_EQ(c->nats.url, "nats://nats-1:4222,nats://nats-2:4222");
  EXPECT_EQ(c->nats.stream, "OUTBOX");
  EXPECT_EQ(c->nats.user, "relay");
  EXPECT_EQ(c->nats.password, "nats-pass");
  EXPECT_EQ(c->nats.ack_timeout_ms, 8000);
  EXPECT_THAT(c->secrets, Contains("nats-pass"));
  EXPECT_THAT(WarnedKeys(*c), AllOf(Contains("debezium.sink.nats-jetstream.async.enabled"),
                                    Contains("debezium.sink.nats-jetstream.sync.retries"),
                                    Contains("debezium.sink.type")));  // a NULL payload: Debezium publishes nothing

  // Debezium Server's default stream name.
  c = Load(ServerWithSink("debezium.sink.type=nats-jetstream\ndebezium.sink.nats-jetstream.url=nats://n:4222\n", false));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->nats.stream, "DebeziumStream");
}

TEST(DebeziumSinks, HttpFileMapsToTheHttpSink) {
  absl::StatusOr<Loaded> c = Load(ServerWithSink(kHttpSink, /*tombstones=*/false));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectCheckpointBesideTheOffsets(*c);
  EXPECT_EQ(c->sink, SinkType::kHttp);
  EXPECT_EQ(c->http_sink.url, "https://hooks.example.com/orders");
  EXPECT_EQ(c->http_sink.timeout_ms, 15000);
  EXPECT_EQ(c->http_sink.retry_backoff_ms, 2000);  // Debezium's fixed interval: the backoff capped at it
  EXPECT_EQ(c->http_sink.retry_backoff_max_ms, 2000);
  EXPECT_EQ(c->http_sink.content_type, "application/json");  // what Debezium Server sends with simplestring
  EXPECT_THAT(WarnedKeys(*c), Contains("debezium.sink.http.retries"));
}

// Each line added to (or, with a leading '-', removed from) a working file, and the key its error must name.
struct Refusal {
  std::string change;
  std::string error;
};

void ExpectEachRefused(const std::string& sink, bool tombstones, const std::vector<Refusal>& refusals) {
  for (const Refusal& r : refusals) {
    std::string file = ServerWithSink(sink, tombstones);
    if (r.change.starts_with("-")) {
      const size_t at = file.find(r.change.substr(1));
      ASSERT_NE(at, std::string::npos) << r.change;
      file.erase(at, file.find('\n', at) + 1 - at);
    } else {
      file += r.change + "\n";
    }
    const std::string error = ErrorOf(Load(file));
    EXPECT_THAT(error, StartsWith(r.error)) << r.change;
    EXPECT_THAT(error, Not(ContainsRegex("; [a-z_.-]+: "))) << r.change << ": one problem, one error";
  }
}

TEST(DebeziumSinks, RabbitMqKeysThatWouldChangeTheMessagesAreErrorsNamingThem) {
  ExpectEachRefused(
      kRabbitMqSink, true,
      {
          {"-debezium.sink.rabbitmq.routingKey.source=topic",
           "debezium.sink.rabbitmq.routingKey.source: static (Debezium's default) with an empty routingKey"},
          {"debezium.sink.rabbitmq.routingKey.source=key",
           "debezium.sink.rabbitmq.routingKey.source: the record's key as the routing key is not reproduced"},
          {"debezium.sink.rabbitmq.autoCreateRoutingKey=true",
           "debezium.sink.rabbitmq.autoCreateRoutingKey: Debezium Server declares a queue"},
          {"debezium.sink.rabbitmq.deliveryMode=1", "debezium.sink.rabbitmq.deliveryMode: must be 2, got \"1\""},
          {"debezium.sink.rabbitmq.null.value=default",
           "debezium.sink.rabbitmq.null.value: \"default\" would be the body of a record without a value"},
          {"-debezium.sink.rabbitmq.null.value=",
           "debezium.transforms.outbox.route.tombstone.on.empty.payload: with debezium.sink.type=rabbitmq Debezium "
           "Server publishes the text \"default\""},
          {"debezium.sink.rabbitmq.connection.ssl.trust.store=/etc/rabbit/trust.jks",
           "debezium.sink.rabbitmq.connection.ssl.trust.store: Java key and trust stores are not read"},
          {"debezium.sink.rabbitmq.connection.uri=amqp://rabbit",
           "debezium.sink.rabbitmq.connection.uri: give either the uri or"},
          {"debezium.sink.rabbitmq.connection.port=http", "debezium.sink.rabbitmq.connection.port: must be a port"},
          {"debezium.sink.rabbitmq.exchange=${routedByValue}", "debezium.sink.rabbitmq.exchange: \"${routedByValue}\""},
      });
  // The deprecated switch, without routingKey.source, means different things in different Debezium versions.
  EXPECT_THAT(ErrorOf(Load(ServerWithSink("debezium.sink.type=rabbitmq\n"
                                          "debezium.sink.rabbitmq.routingKeyFromTopicName=true\n"
                                          "debezium.sink.rabbitmq.null.value=\n"))),
              StartsWith("debezium.sink.rabbitmq.routingKeyFromTopicName: deprecated"));
}

TEST(DebeziumSinks, NatsJetStreamKeysTheRelayCannotKeepAreErrorsNamingThem) {
  ExpectEachRefused(
      kNatsSink, false,
      {
          {"debezium.sink.nats-jetstream.create-stream=true",
           "debezium.sink.nats-jetstream.create-stream: the relay never creates the stream"},
          {"-debezium.sink.nats-jetstream.url=", "debezium.sink.nats-jetstream.url: required"},
          {"debezium.sink.nats-jetstream.auth.tls.keystore=/etc/nats/keystore.jks",
           "debezium.sink.nats-jetstream.auth.tls.keystore: Java key stores are not read"},
          {"debezium.transforms.outbox.route.tombstone.on.empty.payload=true",
           "debezium.transforms.outbox.route.tombstone.on.empty.payload: with debezium.sink.type=nats-jetstream "
           "Debezium Server publishes nothing for a tombstone"},
      });
  const std::string error = ErrorOf(Load(ServerWithSink(std::string(kNatsSink) +
                                                            "debezium.sink.nats-jetstream.auth.jwt=eyJ0eXAi.jwt\n"
                                                            "debezium.sink.nats-jetstream.auth.seed=SUAIBDPBAUTW\n",
                                                        false)));
  EXPECT_THAT(error, StartsWith("debezium.sink.nats-jetstream.auth.jwt: a JWT and NKey seed are read from a .creds "
                                "file by the relay"));
}

TEST(DebeziumSinks, HttpKeysThatWouldChangeTheRequestsAreErrorsNamingThem) {
  ExpectEachRefused(
      kHttpSink, false,
      {
          {"-debezium.sink.http.headers.prefix=",
           "debezium.sink.http.headers.prefix: Debezium Server names each header X-DEBEZIUM-<NAME>"},
          {"-debezium.sink.http.headers.encode.base64=false",
           "debezium.sink.http.headers.encode.base64: Debezium Server sends header values base64-encoded"},
          {"debezium.sink.http.batch.enabled=true", "debezium.sink.http.batch.enabled: Debezium Server's batch body"},
          {"debezium.sink.http.authentication.type=oauth2", "debezium.sink.http.authentication.type: \"oauth2\""},
          {"-debezium.sink.http.url=", "debezium.sink.http.url: required"},
          {"debezium.transforms.outbox.route.tombstone.on.empty.payload=true",
           "debezium.transforms.outbox.route.tombstone.on.empty.payload: with debezium.sink.type=http Debezium "
           "Server sends nothing for a tombstone"},
      });
}

TEST(DebeziumSinks, TheOffsetStoreGivesTheCheckpoint) {
  const std::string sink = std::string(kHttpSink);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string file = ServerWithSink(sink, false);
    file.replace(file.find(from), from.size(), to);
    return file;
  };
  // Memory offsets: no checkpoint either.
  absl::StatusOr<Loaded> c = Load(with("debezium.source.offset.storage.file.filename=data/offsets.dat",
                                       "debezium.source.offset.storage="
                                       "org.apache.kafka.connect.storage.MemoryOffsetBackingStore"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.checkpoint, CheckpointStore::kNone);
  // A store the relay has no equivalent of, or no file: an error naming the key, unless the relay's key says.
  const std::string redis = with("debezium.source.offset.storage.file.filename=data/offsets.dat",
                                 "debezium.source.offset.storage=io.debezium.storage.redis.offset.RedisOffsetBackingStore");
  EXPECT_THAT(ErrorOf(Load(redis)),
              StartsWith("debezium.source.offset.storage: \"io.debezium.storage.redis.offset.RedisOffsetBackingStore\": "
                         "with debezium.sink.type=http the relay keeps its checkpoint in a file or nowhere"));
  const std::string no_file = with("debezium.source.offset.storage.file.filename=data/offsets.dat\n", "");
  EXPECT_THAT(ErrorOf(Load(no_file)),
              StartsWith("debezium.source.offset.storage.file.filename: required with debezium.sink.type=http"));
  c = Load(no_file + "outbox-relay.source.checkpoint=none\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.checkpoint, CheckpointStore::kNone);
  c = Load(redis, {{"source.checkpoint", "file"}, {"source.checkpoint_file", "/var/lib/relay/cp.json"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source.checkpoint_file, "/var/lib/relay/cp.json");
}

TEST(DebeziumSinks, SinkSecretsNeverAppearInErrors) {
  // Every credential key of the three sinks, each value then echoed by a key whose error quotes it.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(kRabbitMqSink) + "debezium.sink.rabbitmq.deliveryMode=${debezium.sink.rabbitmq.connection.password}\n",
       "rabbit-pass"},
      {std::string(kNatsSink) + "debezium.sink.nats-jetstream.auth.jwt=j\n"
                                "debezium.sink.nats-jetstream.auth.seed=SUAIBDPB-seed\n"
                                "debezium.sink.nats-jetstream.async.timeout.ms=${debezium.sink.nats-jetstream.auth.seed}\n",
       "SUAIBDPB-seed"},
      {std::string(kNatsSink) + "debezium.sink.nats-jetstream.auth.jwt=eyJ0eXAi.jwt-token\n"
                                "debezium.sink.nats-jetstream.async.timeout.ms=${debezium.sink.nats-jetstream.auth.jwt}\n",
       "eyJ0eXAi.jwt-token"},
      {std::string(kHttpSink) + "debezium.sink.http.authentication.type=oauth2\n"
                                "debezium.sink.http.authentication.oauth2.client-secret=oauth-secret\n"
                                "debezium.sink.http.timeout.ms=${debezium.sink.http.authentication.oauth2.client-secret}\n",
       "oauth-secret"},
  };
  for (const auto& [sink, secret] : cases) {
    const std::string error = ErrorOf(Load(ServerWithSink(sink, false)));
    EXPECT_THAT(error, HasSubstr("\"****\"")) << error;
    EXPECT_THAT(error, Not(HasSubstr(secret)));
  }
}

TEST(DebeziumSinks, OtherSinksKeysAndTheProducersHaveNoEffect) {
  absl::StatusOr<Loaded> c =
      Load(ServerWithSink(std::string(kHttpSink) + "debezium.sink.kafka.producer.bootstrap.servers=kafka:9092\n"
                                                   "debezium.sink.rabbitmq.exchange=outbox\n"
                                                   "debezium.sink.http.some.future.key=1\n",
                          false));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->warnings, AllOf(Contains("debezium.sink.kafka.producer.bootstrap.servers: no effect with "
                                          "debezium.sink.type=http"),
                                 Contains("debezium.sink.rabbitmq.exchange: a setting of another Debezium Server "
                                          "sink; no effect"),
                                 Contains(StartsWith("debezium.sink.http.some.future.key: not a key of"))));
  EXPECT_THAT(c->kafka, IsEmpty());
}

// --- The .properties reader.

TEST(JavaProperties, ReadsWhatJavaUtilPropertiesReads) {
  absl::StatusOr<std::vector<internal::PropertyEntry>> entries = internal::ParseJavaProperties(
      "# comment\n"
      "! also a comment\n"
      "  plain = value  \n"
      "colon:value\n"
      "space value with spaces\n"
      "continued = first, \\\n"
      "            second\n"
      "escaped\\ key\\=x = \\ lead\\tand\\u00e9\\\\ \n"
      "empty\n"
      "plain=replaced\r\n"
      "last=no newline");
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::vector<std::pair<std::string, std::string>> got;
  for (const internal::PropertyEntry& e : *entries) got.emplace_back(e.key, e.value);
  EXPECT_THAT(got, ElementsAre(std::pair<std::string, std::string>{"plain", "replaced"},
                               std::pair<std::string, std::string>{"colon", "value"},
                               std::pair<std::string, std::string>{"space", "value with spaces"},
                               std::pair<std::string, std::string>{"continued", "first, second"},
                               std::pair<std::string, std::string>{"escaped key=x", " lead\tand\xC3\xA9\\"},
                               std::pair<std::string, std::string>{"empty", ""},
                               std::pair<std::string, std::string>{"last", "no newline"}));
  EXPECT_EQ((*entries)[3].line, 6);
}

TEST(JavaProperties, RandomTextNeverCrashes) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab=: \t\\\n\r#!u0{}$";
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 40, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    (void)internal::ParseJavaProperties(text);
    (void)internal::ParseConnectorJson(text);
    (void)Load(text);
  }
}

// --- Routing: the topics Debezium's Outbox Event Router gives (Kafka's RegexRouter over the route column's
// value: the regex must match the whole value, then the replacement applies as Java's replaceFirst does; no match
// leaves the bare value as the topic).

struct RouteCase {
  std::string value, regex, replacement, topic;
};

std::string RouteThroughTheConfig(const RouteCase& rc) {
  std::string extra;
  if (!rc.regex.empty()) extra += "debezium.transforms.outbox.route.topic.regex=" + rc.regex + "\n";
  if (!rc.replacement.empty()) extra += "debezium.transforms.outbox.route.topic.replacement=" + rc.replacement + "\n";
  absl::StatusOr<Loaded> c = LoadWith(extra);
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return "<error>";
  return outbox::RouteTopic(outbox::TopicRouter(c->outbox), rc.value);
}

TEST(DebeziumRouting, GivesTheTopicsDebeziumGives) {
  // Properties-file text: a backslash is written twice.
  const std::vector<RouteCase> cases = {
      // The defaults: (?<routedByValue>.*) and outbox.event.${routedByValue}.
      {"Order", "", "", "outbox.event.Order"},
      {"", "", "", "outbox.event."},
      {"Order", "", "$${routedByValue}.events", "Order.events"},
      {"Order", "", "events.$1", "events.Order"},
      {"Order", "", "v1\\\\.$${routedByValue}", "v1.Order"},  // \x in a Java replacement is x
      // A regex that matches some values: the others route to their bare value.
      {"order", "(?<routedByValue>order|customer)", "$${routedByValue}-events", "order-events"},
      {"invoice", "(?<routedByValue>order|customer)", "$${routedByValue}-events", "invoice"},
      {"orders", "(?<routedByValue>order|customer)", "$${routedByValue}-events", "orders"},  // whole value only
      {"Order", "order", "x", "Order"},                                                        // case matters
      // Several named groups, by name and by number.
      {"order_created", "(?<agg>[a-z]+)_(?<event>[a-z]+)", "$${agg}.$${event}.v1", "order.created.v1"},
      {"order_created", "(?<agg>[a-z]+)_(?<event>[a-z]+)", "$2.$1", "created.order"},
      {"Order_created", "(?<agg>[a-z]+)_(?<event>[a-z]+)", "$${agg}.$${event}.v1", "Order_created"},
      // Java reads $10 as group 1 then "0" when there is no group 10.
      {"abc", "(a.*)", "$10", "abc0"},
      {"abcdefghij", "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10.$1", "j.a"},
      // Non-capturing and optional groups, classes, escapes and quoting.
      {"order.v2", "(?<t>[^.]+)(?:\\\\.v(?<v>\\\\d+))?", "$${t}-v$${v}", "order-v2"},
      {"order", "(?<t>[^.]+)(?:\\\\.v(?<v>\\\\d+))?", "$${t}-v$${v}", "order-v"},  // an unmatched group is empty
      {"order.v1", "(?<t>.*)\\\\Q.v1\\\\E", "$${t}", "order"},
      {"orderXv1", "(?<t>.*)\\\\Q.v1\\\\E", "$${t}", "orderXv1"},
      {"a]b", "(?<x>[]a]+)\\\\]?b", "$${x}", "a]"},  // ']' first in a Java class is literal
      {"xx", "(?<a>x)\\\\k<a>", "$${a}2", "x2"},
      {"Order", "\\\\A(?<v>.*)\\\\z", "t.$${v}", "t.Order"},
      // replaceFirst after matches(): the first match a search finds is replaced, and it need not be the whole
      // value (Java and the relay alike).
      {"ab", "a|ab", "X", "Xb"},
      {"order42", "(?<head>.*?)(?<tail>[0-9]*)", "$${head}", "order42"},
      // (?i) folds ASCII letters only, as Java's CASE_INSENSITIVE without UNICODE_CASE: not k to the Kelvin sign.
      {"Order_Created", "(?i)(?<agg>[a-z]+)_(?<event>[a-z]+)", "$${agg}.$${event}", "Order.Created"},
      {"ORDER_created", "(?i:order)_(?<e>[A-Z]+)", "o.$${e}", "ORDER_created"},  // (?i:..) ends with its group
      {"ORDER_CREATED", "(?i:order)_(?<e>[A-Z]+)", "o.$${e}", "o.CREATED"},
      {"\xe2\x84\xaa", "(?i)(?<v>k)", "x", "\xe2\x84\xaa"},
      {"K", "(?i)(?<v>k)", "x.$${v}", "x.K"},
      {"\xc3\x89", "(?i)\\u00e9", "x", "\xc3\x89"},  // no case beyond ASCII
      // Java's compound classes: a union with a nested class, an intersection, a negation of the whole.
      {"order", "(?<c>[a-z&&[^aeiou]]+)", "c.$${c}", "order"},
      {"rdr", "(?<c>[a-z&&[^aeiou]]+)", "c.$${c}", "c.rdr"},
      {"x9", "(?<c>[^a-w[0-8]]+)", "n.$${c}", "n.x9"},
      {"Order!", "(?<c>\\\\p{Alpha}+)\\\\p{Punct}", "p.$${c}", "p.Order"},
      {"kÉ", "(?i)(?<c>\\\\p{Lu}+)", "i.$${c}", "i.kÉ"},
      {"αβ-x", "(?<c>\\\\p{IsGreek}+)\\\\P{IsAlphabetic}.*", "g.$${c}", "g.αβ"},
      {"Order-ORDER", "(?i)(?<c>[a-z]+)-\\\\k<c>", "c.$${c}", "c.Order"},
      {"Order-ORDERS", "(?i)(?<c>[a-z]+)-\\\\k<c>", "c.$${c}", "Order-ORDERS"},
      // java.lang.Character's methods
      {"order_v2 x", "(?<c>\\\\p{javaJavaIdentifierStart}\\\\p{javaJavaIdentifierPart}*)\\\\p{javaWhitespace}.*", "c.$${c}",
       "c.order_v2"},
      // (?iu): Character's case mappings
      {"\xc4\xb1nvoice", "(?iu)(?<c>invoice)", "c.$${c}", "c.\xc4\xb1nvoice"},
      {"\xe2\x84\xaa", "(?iu)(?<c>k)", "c.$${c}", "c.\xe2\x84\xaa"},
      {"\xc3\x89t\xc3\xa9", "(?iu)(?<c>[\\u00e9t]+)", "c.$${c}", "c.\xc3\x89t\xc3\xa9"},
      // ß under (?iu): capital sharp s too in a run of literals, not alone
      {"STRA\xe1\xba\x9e" "E", "(?iu)(?<c>stra\\u00dfe)", "c.$${c}", "c.STRA\xe1\xba\x9e" "E"},
      {"\xe1\xba\x9e", "(?iu)(?<c>\\u00df)", "c.$${c}", "\xe1\xba\x9e"},
      // \N{name}
      {"\xc3\xa9" "1", "(?<c>\\\\N{latin small letter e with acute})\\\\d", "c.$${c}", "c.\xc3\xa9"},
  };
  for (const RouteCase& rc : cases) {
    EXPECT_EQ(RouteThroughTheConfig(rc), rc.topic)
        << "value " << rc.value << ", regex " << rc.regex << ", replacement " << rc.replacement;
  }
}

TEST(DebeziumRouting, ARegexOrReplacementJavaWouldRefuseIsAConfigErrorNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"debezium.transforms.outbox.route.topic.regex=(?<x", "route.topic.regex: \"(?<x\": a group name at index 0"},
      {"debezium.transforms.outbox.route.topic.regex=(a", "route.topic.regex: \"(a\": not a valid regular expression"},
      {"debezium.transforms.outbox.route.topic.regex=(?c)[a]",
       "a class or \\p{..} under the flag c (Java then reads the value by grapheme clusters"},
      {"debezium.transforms.outbox.route.topic.regex=(?<routedByValue>.*)\\\\N{SHAKING FACE}",
       "\\N{SHAKING FACE} (a character Java 17 does not know) at index 20 is refused"},
      {"debezium.transforms.outbox.route.topic.regex=(?<routedByValue>.*)\\\\N{NO SUCH NAME}",
       "an unknown character name \\N{NO SUCH NAME} at index 20"},
      {"debezium.transforms.outbox.route.topic.regex=(?<routedByValue>\\\\X+)",
       "\\X (grapheme clusters, which Java 17 and 25 split apart) at index 17 is refused"},
      {"debezium.transforms.outbox.route.topic.regex=(?i)(?<v>.*)\\\\p{javaUnicodeIdentifierPart}",
       "a java.lang.Character method Java 17 and 25 read apart"},
      {"debezium.transforms.outbox.route.topic.regex=\\\\p{InVithkuqi}+",
       "\\p{InVithkuqi} (a block Java 17 does not know"},
      {"debezium.transforms.outbox.route.topic.regex=\\\\p{InAhom}+",
       "\\p{InAhom} (a block whose range Java 17 and Java 25 read apart"},
      {"debezium.transforms.outbox.route.topic.regex=\\\\p{InGreek_And_Coptic}+",
       "an unknown Unicode block \\p{InGreek_And_Coptic}"},
      {"debezium.transforms.outbox.route.topic.regex=\\\\p{IsEmoji}+",
       "\\p{IsEmoji} (a property Java 17 does not know"},
      {"debezium.transforms.outbox.route.topic.regex=\\\\p{Lc}+",
       "an unknown character property name \\p{Lc} at index 0"},
      {"debezium.transforms.outbox.route.topic.regex=[a-z&&]",
       "an empty operand of && (a quirk of Java's parser, which Java 17 and 25 read apart in some classes) at index 4 "
       "is refused"},
      {"debezium.transforms.outbox.route.topic.replacement=$${type}", "route.topic.replacement: "
                                                                      "\"${type}\": no group with name {type}"},
      {"debezium.transforms.outbox.route.topic.replacement=$2", "no group 2"},
      {"debezium.transforms.outbox.route.topic.replacement=x$", "group index is missing"},
      {"debezium.transforms.outbox.route.topic.replacement=x\\\\", "character to be escaped is missing"},
  };
  for (const auto& [line, expected] : bad) {
    EXPECT_THAT(ErrorOf(LoadWith(line + "\n")), HasSubstr(expected)) << line;
  }
}

TEST(DebeziumRouting, ARegexRouteIsCompiledOnceAndNeverThrows) {
  absl::StatusOr<Loaded> c = LoadWith("debezium.transforms.outbox.route.topic.regex=(?<v>.*)\\\\.evt\n"
                                      "debezium.transforms.outbox.route.topic.replacement=$${v}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.route_topic_regex, "(?<v>.*)\\.evt");  // the Java forms, which RouteRegex runs
  EXPECT_EQ(c->outbox.route_topic_replacement, "${v}");
  const outbox::TopicRouter router(c->outbox);
  EXPECT_EQ(outbox::RouteTopic(router, "order.evt"), "order");
  // A long value is matched like a short one (PCRE2 does not recurse per character).
  const std::string long_value(100000, 'a');
  EXPECT_EQ(outbox::RouteTopic(router, long_value + ".evt"), long_value);
  // A match PCRE2 gives up on (its match limit) gives no topic, a per-event error, instead of holding the loop.
  OutboxConfig exponential;
  exponential.route_topic_regex = "(a*)*b";
  exponential.route_topic_replacement = "t";
  const absl::StatusOr<std::string> gave_up = outbox::TopicRouter(exponential).Route(std::string(40, 'a') + "cb");
  EXPECT_THAT(gave_up.status().message(), HasSubstr("could not be matched (match limit exceeded)"));
  // A regex that does not compile (the loader refuses those) gives no topic rather than an exception.
  OutboxConfig broken;
  broken.route_topic_regex = "(unclosed";
  EXPECT_EQ(outbox::TopicRouter(broken).Route("x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DebeziumRouting, RandomPatternsNeverThrowAtLoadOrOnTheDataPath) {
  std::mt19937 rng(11);
  const std::string alphabet = "a.*+?()[]{}|^$\\<>?:=!kQEdw0123,-";
  // Short values: a backtracking engine (Java's as well as std::regex) is exponential on some patterns.
  const std::vector<std::string> values = {"", "a", "aa", "a.b", "a]b", "ab0"};
  int compiled = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string java(1 + rng() % 10, ' ');
    for (char& c : java) c = alphabet[rng() % alphabet.size()];
    absl::StatusOr<RouteRegex> regex = RouteRegex::Compile(java);
    if (!regex.ok()) continue;
    OutboxConfig outbox;
    outbox.route_topic_regex = java;
    outbox.route_topic_replacement = "t.$0\\$";
    const outbox::TopicRouter router(outbox);  // must not throw, whatever the pattern
    compiled += regex->groups() > 0;
    for (const std::string& value : values) (void)outbox::RouteTopic(router, value);
  }
  EXPECT_GT(compiled, 100);
}

TEST(DebeziumRouting, ASetRouteTopicOverridesTheFilesRegex) {
  absl::StatusOr<Loaded> c = LoadWith("debezium.transforms.outbox.route.topic.regex=(?<v>.*)\\\\.evt\n"
                                      "debezium.transforms.outbox.route.topic.replacement=$${v}\n",
                                      {{"outbox.route.topic", "all.events"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outbox.route_topic_regex, "");
  EXPECT_EQ(outbox::RouteTopic(outbox::TopicRouter(c->outbox), "order.evt"), "all.events");
}

}  // namespace
}  // namespace outbox::config
