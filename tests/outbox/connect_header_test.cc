// Header values as Debezium writes them. Every expected text below is what Debezium 3.6.1's PostgreSQL connector
// and Outbox Event Router, under Kafka Connect 4.1.1 with its SimpleHeaderConverter, wrote for the same column
// value (read back with Kafka's console consumer), except where a comment says otherwise.
// tests/config/debezium/debezium_e2e_test.cc compares the two side by side against a real Debezium in CI.
#include "outbox/connect_header.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "absl/strings/escaping.h"

#include <string>

namespace outbox::outbox {
namespace {

// PostgreSQL type OIDs (pg_type.dat).
constexpr uint32_t kBool = 16, kBytea = 17, kInt8 = 20, kInt4 = 23, kText = 25, kFloat4 = 700, kFloat8 = 701,
                   kBpchar = 1042, kDate = 1082, kTime = 1083, kTimestamp = 1114, kTimestampTz = 1184,
                   kNumeric = 1700, kUuid = 2950, kJsonb = 3802, kInterval = 1186, kInt4Array = 1007,
                   kMoney = 790, kTimeTz = 1266;

// numeric(precision, scale)'s type modifier.
int32_t NumericTypmod(int precision, int scale) { return ((precision << 16) | scale) + 4; }

std::string Header(uint32_t type, int32_t typmod, std::string_view text) {
  absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type, typmod);
  EXPECT_TRUE(column.ok()) << column.status();
  if (!column.ok()) return "";
  std::string out;
  const absl::Status st = AppendConnectValue(*column, text, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

TEST(ConnectHeaderTest, BooleansAreWordsIntegersAndTextAsPostgresWritesThem) {
  EXPECT_EQ(Header(kBool, -1, "t"), "true");
  EXPECT_EQ(Header(kBool, -1, "f"), "false");
  EXPECT_EQ(Header(kInt8, -1, "9007199254740993"), "9007199254740993");
  EXPECT_EQ(Header(kInt4, -1, "-42"), "-42");
  EXPECT_EQ(Header(kText, -1, "héllo"), "héllo");
  EXPECT_EQ(Header(kBpchar, 9, "ab   "), "ab   ");  // char(5) keeps its padding
  EXPECT_EQ(Header(kUuid, -1, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  EXPECT_EQ(Header(kJsonb, -1, R"({"b": [1, 2]})"), R"({"b": [1, 2]})");
}

TEST(ConnectHeaderTest, FloatsAreWrittenAsJavaWritesThem) {
  EXPECT_EQ(Header(kFloat4, -1, "1.5"), "1.5");
  EXPECT_EQ(Header(kFloat4, -1, "1e+20"), "1.0E20");
  EXPECT_EQ(Header(kFloat4, -1, "0.001"), "0.001");
  EXPECT_EQ(Header(kFloat4, -1, "1e-05"), "1.0E-5");
  EXPECT_EQ(Header(kFloat4, -1, "3.4028235e+38"), "3.4028235E38");
  EXPECT_EQ(Header(kFloat4, -1, "100"), "100.0");
  EXPECT_EQ(Header(kFloat4, -1, "NaN"), "NaN");
  EXPECT_EQ(Header(kFloat8, -1, "0.1"), "0.1");
  EXPECT_EQ(Header(kFloat8, -1, "123456789.125"), "1.23456789125E8");
  EXPECT_EQ(Header(kFloat8, -1, "10000000"), "1.0E7");
  EXPECT_EQ(Header(kFloat8, -1, "9999999"), "9999999.0");
  EXPECT_EQ(Header(kFloat8, -1, "1e+16"), "1.0E16");
  EXPECT_EQ(Header(kFloat8, -1, "5e-324"), "4.9E-324");  // at least two digits: the nearer 4.9, not 5.0
  EXPECT_EQ(Header(kFloat8, -1, "-Infinity"), "-Infinity");
  EXPECT_EQ(Header(kFloat8, -1, "-0"), "-0.0");
  // JDK 19 and later (JDK 17, which ran the comparison, wrote 1.9999999999999998E23).
  EXPECT_EQ(Header(kFloat8, -1, "2e+23"), "2.0E23");
}

TEST(ConnectHeaderTest, NumericsAreBigDecimalsWithTheColumnsScale) {
  EXPECT_EQ(Header(kNumeric, NumericTypmod(12, 4), "12.5000"), "12.5000");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(12, 4), "-0.0001"), "-0.0001");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(12, 4), "0.0000"), "0.0000");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(30, 10), "0.0000001000"), "1.000E-7");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(30, 10), "1234567.5000000000"), "1234567.5000000000");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(30, 10), "0.0000000000"), "0E-10");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(30, 10), "0.0000000001"), "1E-10");
  EXPECT_EQ(Header(kNumeric, NumericTypmod(10, 0), "-123"), "-123");
}

TEST(ConnectHeaderTest, UnconstrainedNumericsAreVariableScaleDecimalStructs) {
  EXPECT_EQ(Header(kNumeric, -1, "12.5"), R"({"scale":1,"value":"fQ=="})");
  EXPECT_EQ(Header(kNumeric, -1, "0.0000001"), R"({"scale":7,"value":"AQ=="})");
  EXPECT_EQ(Header(kNumeric, -1, "100"), R"({"scale":0,"value":"ZA=="})");
  // java.math.BigInteger.toByteArray: minimal two's complement (not from a Debezium run).
  EXPECT_EQ(Header(kNumeric, -1, "128"), R"({"scale":0,"value":"AIA="})");    // 00 80
  EXPECT_EQ(Header(kNumeric, -1, "-128"), R"({"scale":0,"value":"gA=="})");   // 80
  EXPECT_EQ(Header(kNumeric, -1, "-129"), R"({"scale":0,"value":"/38="})");   // ff 7f
  EXPECT_EQ(Header(kNumeric, -1, "-2.56"), R"({"scale":2,"value":"/wA="})");  // ff 00
  EXPECT_EQ(Header(kNumeric, -1, "0"), R"({"scale":0,"value":"AA=="})");
  EXPECT_EQ(Header(kNumeric, -1, "0.000"), R"({"scale":0,"value":"AA=="})");  // trailing zeros stripped
  EXPECT_EQ(Header(kNumeric, -1, "12.500"), R"({"scale":1,"value":"fQ=="})");
  EXPECT_EQ(Header(kNumeric, -1, "1200"), R"({"scale":0,"value":"BLA="})");  // 04 b0: no negative scale
  EXPECT_EQ(Header(kNumeric, -1, "18446744073709551616"), R"({"scale":0,"value":"AQAAAAAAAAAA"})");  // 2^64
}

TEST(ConnectHeaderTest, DatesAndTimesAreDebeziumsAdaptiveNumbers) {
  EXPECT_EQ(Header(kDate, -1, "2026-12-03"), "20790");
  EXPECT_EQ(Header(kDate, -1, "1969-12-31"), "-1");
  EXPECT_EQ(Header(kTime, -1, "13:45:07.123456"), "49507123456");  // MicroTime
  EXPECT_EQ(Header(kTime, 3, "13:45:07.1"), "49507100");           // time(3): Time, milliseconds
  EXPECT_EQ(Header(kTime, 3, "23:59:59.999"), "86399999");
  EXPECT_EQ(Header(kTime, 0, "13:45:07"), "49507000");
  EXPECT_EQ(Header(kTimestamp, -1, "2026-12-03 13:45:07.123456"), "1796305507123456");  // MicroTimestamp
  EXPECT_EQ(Header(kTimestamp, -1, "1969-12-31 23:59:59.999999"), "-1");
  EXPECT_EQ(Header(kTimestamp, 6, "2026-12-03 13:45:07.5"), "1796305507500000");
  EXPECT_EQ(Header(kTimestamp, 3, "2026-12-03 13:45:07.12"), "1796305507120");  // Timestamp, milliseconds
  EXPECT_EQ(Header(kTimestamp, 0, "2000-02-29 12:00:00"), "951825600000");
}

TEST(ConnectHeaderTest, TimestampsWithTimeZoneAreIsoInUtcWithTheColumnsPrecision) {
  // The relay's session has TimeZone=UTC; other offsets are converted.
  EXPECT_EQ(Header(kTimestampTz, -1, "2026-12-03 11:45:07.123456+00"), "2026-12-03T11:45:07.123456Z");
  EXPECT_EQ(Header(kTimestampTz, -1, "2026-12-03 13:45:07.123456+02"), "2026-12-03T11:45:07.123456Z");
  EXPECT_EQ(Header(kTimestampTz, -1, "1900-01-01 00:00:00+00"), "1900-01-01T00:00:00.000000Z");
  EXPECT_EQ(Header(kTimestampTz, 3, "2026-12-03 13:45:07.5+00"), "2026-12-03T13:45:07.500Z");
  EXPECT_EQ(Header(kTimestampTz, 3, "2026-06-01 07:30:00+00"), "2026-06-01T07:30:00.000Z");
  EXPECT_EQ(Header(kTimestampTz, 0, "2026-12-03 11:45:07+00"), "2026-12-03T11:45:07Z");
  EXPECT_EQ(Header(kTimestampTz, 0, "1970-01-01 00:00:00+00"), "1970-01-01T00:00:00Z");
}

// PostgreSQL's infinities as Debezium 3.6.1 writes them (seen side by side): a timestamp's microseconds of pgjdbc's
// DATE_POSITIVE_INFINITY and DATE_NEGATIVE_INFINITY (their thousandth for timestamp(0) to (3)), a date's epoch day of
// -5877611-06-21 and -22, a timestamptz's text. An array's timestamps are a timestamp column's; its dates and its
// -infinity timestamptz are what pgjdbc's java.sql types make of them in the Connect JVM's calendar (UTC), at the
// column's fractional width. Other spellings are not PostgreSQL's output: an error naming the value.
TEST(ConnectHeaderTest, InfinitiesAreDebeziumsSentinels) {
  constexpr uint32_t kDateArray = 1182, kTimestampArray = 1115, kTimestampTzArray = 1185;
  EXPECT_EQ(Header(kTimestamp, -1, "infinity"), "9223372036825200000");
  EXPECT_EQ(Header(kTimestamp, 6, "-infinity"), "-9223372036832400000");
  EXPECT_EQ(Header(kTimestamp, 3, "infinity"), "9223372036825200");
  EXPECT_EQ(Header(kTimestamp, 0, "-infinity"), "-9223372036832400");
  EXPECT_EQ(Header(kDate, -1, "infinity"), "-2147472692");
  EXPECT_EQ(Header(kDate, -1, "-infinity"), "-2147472691");
  EXPECT_EQ(Header(kTimestampTz, 2, "infinity"), "infinity");
  EXPECT_EQ(Header(kTimestampTz, -1, "-infinity"), "-infinity");
  EXPECT_EQ(Header(kTimestampArray, -1, "{infinity,-infinity,\"2024-01-01 00:00:00\"}"),
            "[9223372036825200000,-9223372036832400000,1704067200000000]");
  std::string json;
  ASSERT_TRUE(AppendConnectJsonValue(*ConnectColumnOf(kTimestampTz, -1), kTimestampTz, "infinity", &json).ok());
  EXPECT_EQ(json, R"("infinity")");
  EXPECT_EQ(Header(kTimestampArray, 3, "{infinity,-infinity}"), "[9223372036825200,-9223372036832400]");
  EXPECT_EQ(Header(kDateArray, -1, "{infinity,-infinity,2024-01-01}"), "[-622191234,-625821272,19723]");
  EXPECT_EQ(Header(kTimestampTzArray, -1, "{infinity,-infinity}"),
            R"(["infinity","+292269055-12-02T23:00:00.000000Z"])");
  EXPECT_EQ(Header(kTimestampTzArray, 3, "{-infinity}"), R"(["+292269055-12-02T23:00:00.000Z"])");
  EXPECT_EQ(Header(kTimestampTzArray, 0, "{-infinity}"), R"(["+292269055-12-02T23:00:00Z"])");
  for (const auto& [type, typmod, text] : std::vector<std::tuple<uint32_t, int32_t, std::string>>{
           {kTimestamp, -1, "+infinity"}, {kDate, -1, "infinity "}, {kTimestampTz, -1, "Infinity"}}) {
    std::string out;
    const absl::Status st = AppendConnectValue(*ConnectColumnOf(type, typmod), text, &out);
    EXPECT_FALSE(st.ok()) << text << " gave " << out;
    EXPECT_NE(st.message().find("nfinity"), std::string_view::npos) << st;  // names the value
  }
}

// Under time.precision.mode nanoseconds, isostring and connect (seen side by side): a nanosecond timestamp saturates
// to a long, the ISO forms print the instants of pgjdbc's infinities (of LocalDateTime.MAX and MIN for a default).
TEST(ConnectHeaderTest, InfinitiesUnderTheNanosecondIsoAndConnectModesAreDebeziums) {
  const auto value = [](ConnectForm form, std::string_view text, bool in_array = false) {
    ConnectColumn column{form};
    column.in_array = in_array;
    std::string out;
    const absl::Status st = AppendConnectValue(column, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  EXPECT_EQ(value(ConnectForm::kTimestampNanos, "infinity"), "9223372036854775807");
  EXPECT_EQ(value(ConnectForm::kTimestampNanos, "-infinity"), "-9223372036854775808");
  EXPECT_EQ(value(ConnectForm::kIsoTimestamp, "infinity"), "+294247-01-10T04:00:25.2Z");
  EXPECT_EQ(value(ConnectForm::kIsoTimestamp, "-infinity", true), "-290308-12-21T19:59:27.6Z");
  EXPECT_EQ(value(ConnectForm::kIsoTimestamp, kInfinityDefault), "+999999999-12-31T23:59:59.999999999Z");
  EXPECT_EQ(value(ConnectForm::kIsoTimestamp, kMinusInfinityDefault), "-999999999-01-01T00:00:00Z");
  EXPECT_EQ(value(ConnectForm::kIsoDate, "infinity"), "-5877611-06-21Z");
  EXPECT_EQ(value(ConnectForm::kIsoDate, "-infinity"), "-5877611-06-22Z");
  EXPECT_EQ(value(ConnectForm::kIsoDate, "infinity", true), "+292278994-08-16Z");
  EXPECT_EQ(value(ConnectForm::kIsoDate, "-infinity", true), "+292269055-12-02Z");
  EXPECT_EQ(value(ConnectForm::kIsoDate, kInfinityDefault), "+999999999-12-31Z");
  // Under connect: java.util.Dates of adaptive's milliseconds and days, as SimpleHeaderConverter prints them (a
  // negative one as a time of day).
  EXPECT_EQ(value(ConnectForm::kConnectTimestamp, "infinity"), "294247-01-10T04:00:25.200Z");
  EXPECT_EQ(value(ConnectForm::kConnectTimestamp, "-infinity"), "19:59:27.600Z");
  EXPECT_EQ(value(ConnectForm::kConnectDate, "-infinity", true), "00:00:00.000Z");
  EXPECT_EQ(value(ConnectForm::kConnectDate, kInfinityDefault), "466210-05-14");
  // A nanosecond or connect timestamp has no infinite default (DefaultUnderModes gives none): an error naming it.
  EXPECT_NE(value(ConnectForm::kTimestampNanos, kInfinityDefault).find("\"Infinity\""), std::string::npos);
  EXPECT_NE(value(ConnectForm::kConnectTimestamp, kMinusInfinityDefault).find("\"-Infinity\""), std::string::npos);
}

TEST(ConnectHeaderTest, ByteaIsBase64) {
  EXPECT_EQ(Header(kBytea, -1, "\\x00ff41"), "AP9B");
  EXPECT_EQ(Header(kBytea, -1, "\\x"), "");
}

TEST(ConnectHeaderTest, TypesWhoseDebeziumValueIsNotReproducedAreRefusedByName) {
  for (uint32_t type : {uint32_t{1187} /* interval[] */, uint32_t{603} /* box */, uint32_t{16500}}) {
    absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type, -1);
    ASSERT_FALSE(column.ok()) << type;
    EXPECT_EQ(column.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(column.status().message().find("type OID " + std::to_string(type)), std::string::npos)
        << column.status();
  }
}

// bit(n)[] has a bit(n)'s schema and a value Debezium always loses (null); int2vector and oidvector an array of
// required int16 or int64 whose value is always empty.
TEST(ConnectHeaderTest, TypesWhoseValueDebeziumLosesHaveItsSchema) {
  absl::StatusOr<ConnectColumn> bits = ConnectColumnOf(1561, 3);
  ASSERT_TRUE(bits.ok()) << bits.status();
  EXPECT_EQ(bits->form, ConnectForm::kBits);
  EXPECT_EQ(bits->bits, 3);
  EXPECT_EQ(bits->lost, ConnectColumn::Lost::kNull);
  absl::StatusOr<ConnectColumn> bit = ConnectColumnOf(1561, 1);
  ASSERT_TRUE(bit.ok()) << bit.status();
  EXPECT_EQ(bit->form, ConnectForm::kBitBoolean);
  std::string schema;
  AppendConnectJsonSchema(*bits, 1561, 3, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,)"
                    R"("parameters":{"length":"3"}})");
  for (const auto& [type, items] : {std::pair<uint32_t, std::string>{22, "int16"}, {30, "int64"}}) {
    absl::StatusOr<ConnectColumn> vector = ConnectColumnOf(type, -1);
    ASSERT_TRUE(vector.ok()) << vector.status();
    EXPECT_EQ(vector->lost, ConnectColumn::Lost::kEmptyArray);
    schema.clear();
    AppendConnectJsonSchema(*vector, type, -1, /*optional=*/true, &schema);
    EXPECT_EQ(schema, R"({"type":"array","items":{"type":")" + items + R"(","optional":false},"optional":true})");
  }
}

// pgvector's arrays: lists of required vectors, written as lists of Java's doubles; a sparsevec[] always null.
TEST(ConnectHeaderTest, PgvectorArraysAreListsOfRequiredVectors) {
  std::optional<ConnectColumn> vectors = ExtensionColumn("_vector");
  ASSERT_TRUE(vectors.has_value());
  EXPECT_EQ(vectors->form, ConnectForm::kArray);
  EXPECT_EQ(vectors->element, ConnectForm::kVector);
  EXPECT_TRUE(vectors->required_elements);
  EXPECT_EQ(vectors->lost, ConnectColumn::Lost::kNone);
  std::string out;
  ASSERT_TRUE(AppendConnectValue(*vectors, R"({"[1,2]","[3,4.5]"})", &out).ok());
  EXPECT_EQ(out, "[[1.0,2.0],[3.0,4.5]]");
  std::optional<ConnectColumn> sparse = ExtensionColumn("_sparsevec");
  ASSERT_TRUE(sparse.has_value());
  EXPECT_EQ(sparse->element, ConnectForm::kSparseVector);
  EXPECT_EQ(sparse->lost, ConnectColumn::Lost::kNull);
}

TEST(ConnectHeaderTest, ValuesAFormCannotCarryAreErrorsNamingThem) {
  for (auto [type, typmod, text] : {std::tuple{kTimestamp, -1, "2026-12-03 10:00:00 BC"},
                                    {kTimestampTz, -1, "2026-12-03 10:00:00+00 BC"},
                                    {kDate, -1, "2026-12-03 BC"}, {kNumeric, NumericTypmod(10, 2), "NaN"},
                                    {kNumeric, -1, "Infinity"}, {kBool, -1, "yes"}}) {
    absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type, typmod);
    ASSERT_TRUE(column.ok());
    std::string out;
    const absl::Status st = AppendConnectValue(*column, text, &out);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(st.message().find(text), std::string_view::npos) << st;
  }
}

// What Debezium 3.6.1 with value.converter=JsonConverter (schemas.enable=false) wrote for a jsonb payload.
TEST(ConnectHeaderTest, JsonStringsEscapeAsJacksonDoes) {
  std::string out;
  AppendJsonString("{\"s\": \"quote\\\" back\\\\ slash/ nl\\n tab\\t ctl\\u0001 \xC3\xA9 \xE2\x98\x95 \xF0\x9F\x98\x80\"}",
                   &out);
  EXPECT_EQ(out,
            R"("{\"s\": \"quote\\\" back\\\\ slash/ nl\\n tab\\t ctl\\u0001 )"
            "\xC3\xA9 \xE2\x98\x95 "
            R"(\uD83D\uDE00\"}")");
  out.clear();
  AppendJsonString(std::string("a\nb\tc\rd\be\ff\x1F" "g\0", 14), &out);
  EXPECT_EQ(out, R"("a\nb\tc\rd\be\ff\u001Fg\u0000")");
  out.clear();
  AppendJsonString("[]", &out);
  EXPECT_EQ(out, R"("[]")");
}

std::string JsonSchema(uint32_t type, bool optional, int32_t type_modifier = -1) {
  std::string out;
  const absl::Status st = AppendConnectJsonSchema(type, type_modifier, optional, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

// The schemas Debezium gives key and payload columns, as JsonConverter (schemas.enable=true) writes them: type,
// optional, then the logical type's name and version (json, jsonb, uuid, xml).
TEST(ConnectHeaderTest, JsonSchemasAreDebeziumsColumnSchemasInJsonConvertersOrder) {
  EXPECT_EQ(JsonSchema(kText, false), R"({"type":"string","optional":false})");
  EXPECT_EQ(JsonSchema(kBpchar, true), R"({"type":"string","optional":true})");
  EXPECT_EQ(JsonSchema(kJsonb, true), R"({"type":"string","optional":true,"name":"io.debezium.data.Json","version":1})");
  EXPECT_EQ(JsonSchema(114, false), R"({"type":"string","optional":false,"name":"io.debezium.data.Json","version":1})");
  EXPECT_EQ(JsonSchema(kUuid, false), R"({"type":"string","optional":false,"name":"io.debezium.data.Uuid","version":1})");
  EXPECT_EQ(JsonSchema(142, true), R"({"type":"string","optional":true,"name":"io.debezium.data.Xml","version":1})");
  EXPECT_EQ(JsonSchema(21, false), R"({"type":"int16","optional":false})");
  EXPECT_EQ(JsonSchema(kInt4, true), R"({"type":"int32","optional":true})");
  EXPECT_EQ(JsonSchema(kInt8, false), R"({"type":"int64","optional":false})");
  EXPECT_EQ(JsonSchema(26, false), R"({"type":"int64","optional":false})");  // oid
  EXPECT_EQ(JsonSchema(kBytea, true), R"({"type":"bytes","optional":true})");
  // The other forms (envelope fields): Debezium's logical types under its default modes.
  EXPECT_EQ(JsonSchema(kBool, true), R"({"type":"boolean","optional":true})");
  EXPECT_EQ(JsonSchema(700, false), R"({"type":"float","optional":false})");
  EXPECT_EQ(JsonSchema(kFloat8, true), R"({"type":"double","optional":true})");
  EXPECT_EQ(JsonSchema(kNumeric, true, ((12 << 16) | 4) + 4),
            R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,)"
            R"("parameters":{"scale":"4","connect.decimal.precision":"12"}})");
  EXPECT_EQ(JsonSchema(kNumeric, false),
            R"({"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},)"
            R"({"type":"bytes","optional":false,"field":"value"}],"optional":false,)"
            R"("name":"io.debezium.data.VariableScaleDecimal","version":1,"doc":"Variable scaled decimal"})");
  EXPECT_EQ(JsonSchema(kDate, true), R"({"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1})");
  EXPECT_EQ(JsonSchema(kTimestamp, true, 3),
            R"({"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1})");
  EXPECT_EQ(JsonSchema(kTimestamp, true),
            R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1})");
  EXPECT_EQ(JsonSchema(kTimestampTz, false),
            R"({"type":"string","optional":false,"name":"io.debezium.time.ZonedTimestamp","version":1})");
  // A type without a form is refused.
  std::string out;
  EXPECT_EQ(AppendConnectJsonSchema(uint32_t{1187} /* interval[] */, -1, true, &out).code(),
            absl::StatusCode::kFailedPrecondition);
}

std::string JsonValue(uint32_t type, std::string_view text, int32_t type_modifier = -1) {
  absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type, type_modifier);
  EXPECT_TRUE(column.ok()) << column.status();
  std::string out;
  const absl::Status st = AppendConnectJsonValue(*column, type, text, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

// JsonConverter's JSON of Debezium's values (envelope fields): strings escaped, numbers and booleans bare, floats as
// Java prints them with NaN quoted, a Decimal as the base64 of its unscaled value, times as their numbers.
TEST(ConnectHeaderTest, JsonValuesAreWhatJsonConverterWritesOfDebeziumsValues) {
  EXPECT_EQ(JsonValue(kText, "a\"b"), R"("a\"b")");
  EXPECT_EQ(JsonValue(kInt8, "-9007199254740993"), "-9007199254740993");
  EXPECT_EQ(JsonValue(kBool, "t"), "true");
  EXPECT_EQ(JsonValue(kFloat8, "1e+20"), "1.0E20");
  EXPECT_EQ(JsonValue(kFloat8, "NaN"), R"("NaN")");
  EXPECT_EQ(JsonValue(kNumeric, "12.5000", ((12 << 16) | 4) + 4), R"("AehI")");  // 125000 = 0x01E848
  EXPECT_EQ(JsonValue(kNumeric, "-1", ((5 << 16) | 0) + 4), R"("/w==")");
  EXPECT_EQ(JsonValue(kNumeric, "12.50"), R"({"scale":1,"value":"fQ=="})");
  EXPECT_EQ(JsonValue(kDate, "1970-01-02"), "1");
  EXPECT_EQ(JsonValue(kTimestampTz, "2026-12-03 13:45:07.5+02"), R"("2026-12-03T11:45:07.500000Z")");
  EXPECT_EQ(JsonValue(kBytea, "\\x00ff41"), R"("AP9B")");
  std::string out;
  EXPECT_EQ(AppendConnectJsonValue(ConnectColumn{ConnectForm::kDate}, kDate, "2026-12-03 BC", &out).code(),
            absl::StatusCode::kInvalidArgument);
}

std::string Default(uint32_t type, std::optional<std::string> expression, int32_t type_modifier = -1) {
  const ConnectDefault d = DebeziumColumnDefault(type, type_modifier, expression, /*generated=*/false);
  switch (d.kind) {
    case ConnectDefault::Kind::kNone: return "(none)";
    case ConnectDefault::Kind::kNotReproduced: return "(not reproduced)";
    case ConnectDefault::Kind::kValue: return d.text;
  }
  return "";
}

// Debezium's default of a column from its pg_get_expr text, as PostgresDefaultValueConverter parses it: the quoted
// literal (up to the next quote), a bare value, a placeholder for a function call, none for NULL:: casts, types it
// has no parser for, or values Java's parsers refuse; date and time types are not reproduced.
TEST(ConnectHeaderTest, ColumnDefaultsAreWhatDebeziumsParserMakesOfTheExpression) {
  EXPECT_EQ(Default(kText, "'dflt'::text"), "dflt");
  EXPECT_EQ(Default(kText, "'it''s'::text"), "it");  // Debezium's '(.*?)' stops at the doubled quote
  EXPECT_EQ(Default(kText, "md5('x'::text)"), "");  // a function: the placeholder
  EXPECT_EQ(Default(kText, "NULL::text"), "(none)");
  EXPECT_EQ(Default(kText, std::nullopt), "(none)");
  EXPECT_EQ(Default(kJsonb, "'{\"d\": 1}'::jsonb"), "{\"d\": 1}");
  EXPECT_EQ(Default(kJsonb, "jsonb_build_object('a', 1)"), "{}");
  EXPECT_EQ(Default(kInt4, "42"), "42");
  EXPECT_EQ(Default(kInt4, "'-7'::integer"), "-7");
  EXPECT_EQ(Default(kInt4, "nextval('outbox_seq'::regclass)"), "0");
  EXPECT_EQ(Default(kInt4, "'3000000000'::bigint"), "(none)");  // Integer.parseInt throws: no default
  EXPECT_EQ(Default(kInt8, "'9223372036854775807'::bigint"), "9223372036854775807");
  EXPECT_EQ(Default(kBool, "true"), "t");
  EXPECT_EQ(Default(kBool, "false"), "f");
  EXPECT_EQ(Default(kUuid, "gen_random_uuid()"), "00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(Default(kUuid, "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  EXPECT_EQ(Default(kNumeric, "1.5", ((10 << 16) | 3) + 4), "1.500");  // setScale(3)
  EXPECT_EQ(Default(kNumeric, "'-2'::numeric", ((10 << 16) | 2) + 4), "-2.00");
  // Without a scale: a VariableScaleDecimal struct, which Debezium drops as a default ("Struct can't be used as
  // default value").
  EXPECT_EQ(Default(kNumeric, "1.5"), "(none)");
  EXPECT_EQ(Default(kFloat8, "2.5"), "2.5");
  EXPECT_EQ(Default(kBytea, "'\\x00'::bytea"), "(none)");  // no parser for bytea
  // Dates and times: a function or CURRENT_* gives the epoch (midnight for time), a literal without an offset is read
  // in the JVM's time zone, taken to be UTC; what the forms cannot carry is not reproduced.
  EXPECT_EQ(Default(kTimestampTz, "now()"), "1970-01-01 00:00:00+00");
  EXPECT_EQ(Default(kTimestampTz, "CURRENT_TIMESTAMP"), "1970-01-01 00:00:00+00");
  EXPECT_EQ(Default(kTimestampTz, "'2024-05-01 08:00:00+00'::timestamp with time zone"), "2024-05-01 08:00:00+00");
  EXPECT_EQ(Default(kTimestamp, "'2024-05-01 10:00:00.5'::timestamp without time zone"), "2024-05-01 10:00:00.5");
  EXPECT_EQ(Default(kTimestamp, "LOCALTIMESTAMP"), "1970-01-01 00:00:00");
  EXPECT_EQ(Default(kDate, "'2024-01-01'::date"), "2024-01-01");
  EXPECT_EQ(Default(kDate, "CURRENT_DATE"), "1970-01-01");
  EXPECT_EQ(Default(kTime, "'10:30:00'::time without time zone"), "10:30:00");
  EXPECT_EQ(Default(kTime, "CURRENT_TIME"), "00:00:00");
  // An infinity's default is not read as a value's (seen side by side): pgjdbc's LocalDateTime.MAX or MIN overflows
  // a timestamp(0) to (3)'s and a timestamptz's converter, so there is no default; a longer timestamp's saturates
  // (MAX's then wraps) and a date's is cut to an int: kInfinityDefault and kMinusInfinityDefault, which the forms
  // write as those.
  EXPECT_EQ(Default(kTimestampTz, "'infinity'::timestamp with time zone"), "(none)");
  EXPECT_EQ(Default(kTimestampTz, "'-infinity'::timestamp with time zone", 3), "(none)");
  EXPECT_EQ(Default(kTimestamp, "'infinity'::timestamp without time zone", 3), "(none)");
  EXPECT_EQ(Default(kTimestamp, "'-infinity'::timestamp without time zone", 0), "(none)");
  EXPECT_EQ(Default(kTimestamp, "'infinity'::timestamp without time zone"), "Infinity");
  EXPECT_EQ(Default(kTimestamp, "'-infinity'::timestamp without time zone", 4), "-Infinity");
  EXPECT_EQ(Default(kDate, "'infinity'::date"), "Infinity");
  EXPECT_EQ(Default(kDate, "'-infinity'::date"), "-Infinity");
  EXPECT_EQ(Header(kTimestamp, -1, std::string(kInfinityDefault)), "-9223372036853775810");
  EXPECT_EQ(Header(kTimestamp, 4, std::string(kMinusInfinityDefault)), "-9223372036854775808");
  EXPECT_EQ(Header(kDate, -1, std::string(kInfinityDefault)), "169560311");
  EXPECT_EQ(Header(kDate, -1, std::string(kMinusInfinityDefault)), "-170999002");
  EXPECT_EQ(Default(kTimeTz, "CURRENT_TIME"), "(none)");  // Debezium has no parser for timetz
  // An interval's literal, which pg_get_expr prints in the relay's session in ISO 8601, is read as its values are; a
  // function's placeholder ("epoch", which PGInterval's parser skips) is a zero interval; a literal in another style
  // is not reproduced.
  EXPECT_EQ(Default(kInterval, "'P1DT2H3M4.5S'::interval"), "P1DT2H3M4.5S");
  EXPECT_EQ(Header(kInterval, -1, "P1DT2H3M4.5S"), "93784500000");
  EXPECT_EQ(Default(kInterval, "(now() - now())"), "PT0S");
  EXPECT_EQ(Default(kInterval, "make_interval(days => 2)"), "PT0S");
  EXPECT_EQ(Header(kInterval, -1, "PT0S"), "0");
  EXPECT_EQ(Default(kInterval, "'1 day'::interval"), "(not reproduced)");
  EXPECT_EQ(Default(kInterval, "NULL::interval"), "(none)");
  EXPECT_EQ(DebeziumColumnDefault(kText, -1, "'x'::text", /*generated=*/true).kind,
            ConnectDefault::Kind::kNotReproduced);
}

// An enum column's default as Debezium's extractEnumDefault reads it: the quoted text before a cast to the column's
// own type (a schema before the type's name, quotes around it, are ignored), quotes left doubled; nothing else.
TEST(ConnectHeaderTest, EnumDefaultsAreTheQuotedLabelCastToTheColumnsType) {
  const auto enum_default = [](std::optional<std::string> expression) {
    const ConnectDefault d = DebeziumEnumDefault("order_status", expression, /*generated=*/false);
    return d.kind == ConnectDefault::Kind::kValue ? d.text : std::string("(none)");
  };
  EXPECT_EQ(enum_default("'new'::order_status"), "new");
  EXPECT_EQ(enum_default("'new'::shop.order_status"), "new");
  EXPECT_EQ(enum_default("'new'::\"order_status\""), "new");
  EXPECT_EQ(enum_default("'it''s'::order_status"), "it''s");
  EXPECT_EQ(enum_default("'new'::other_status"), "(none)");
  EXPECT_EQ(enum_default("NULL::order_status"), "(none)");
  EXPECT_EQ(enum_default("first_status()"), "(none)");
  EXPECT_EQ(enum_default(std::nullopt), "(none)");
  EXPECT_EQ(DebeziumEnumDefault("order_status", "'new'::order_status", /*generated=*/true).kind,
            ConnectDefault::Kind::kNotReproduced);
  // Its schema: a string named io.debezium.data.Enum with the labels as "allowed".
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kEnum, 0, "new,shipped,it's \"x\""}, 16500, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,)"
                    R"("parameters":{"allowed":"new,shipped,it's \"x\""}})");
}

// money as Debezium's PostgresMoney reads it and setScale(2, HALF_UP) rounds it: a leading currency symbol (one
// character, also a multi-byte one), parentheses and a leading '-' for negatives, ',' grouping; a Decimal of scale 2.
TEST(ConnectHeaderTest, MoneyIsTheDecimalDebeziumParsesFromItsText) {
  EXPECT_EQ(DebeziumMoneyText("$1,234.56"), "1234.56");
  EXPECT_EQ(DebeziumMoneyText("-$0.50"), "-0.50");
  EXPECT_EQ(DebeziumMoneyText("($7.00)"), "-7.00");
  EXPECT_EQ(DebeziumMoneyText("$0.00"), "0.00");
  EXPECT_EQ(DebeziumMoneyText("-$0.00"), "0.00");  // BigDecimal has no negative zero
  EXPECT_EQ(DebeziumMoneyText("\u00a31,000"), "1000.00");  // a locale without fraction digits
  EXPECT_EQ(DebeziumMoneyText("$99.995"), "100.00");  // three fraction digits, rounded HALF_UP
  EXPECT_EQ(DebeziumMoneyText("$12.344"), "12.34");
  EXPECT_EQ(DebeziumMoneyText("-$92,233,720,368,547,758.08"), "-92233720368547758.08");
  EXPECT_EQ(DebeziumMoneyText("1.234,56 \u20ac"), std::nullopt);  // Debezium's parse fails too
  EXPECT_EQ(DebeziumMoneyText(""), std::nullopt);
  EXPECT_EQ(Header(kMoney, -1, "-$1,234.5"), "-1234.50");
  EXPECT_EQ(JsonValue(kMoney, "$1.00"), R"("ZA==")");  // 100 unscaled: BigInteger.toByteArray 0x64
  std::string schema;
  ASSERT_TRUE(AppendConnectJsonSchema(kMoney, -1, /*optional=*/true, &schema).ok());
  EXPECT_EQ(schema, R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,)"
                    R"("parameters":{"scale":"2"}})");
}

// bit(n) and varbit(n) for n > 1, and varbit, are Debezium's Bits: the string as a number (last character lowest),
// little-endian, as few bytes as needed, with the length as a schema parameter; bit(1) and varbit(1) a boolean, read
// as Integer.valueOf(s, 2) reads it.
TEST(ConnectHeaderTest, BitStringsAreDebeziumsBitsOrABoolean) {
  constexpr uint32_t kBit = 1560, kVarbit = 1562;
  EXPECT_EQ(Header(kBit, 5, "10110"), "Fg==");              // 0x16
  EXPECT_EQ(Header(kBit, 12, "000100000001"), "AQE=");      // 0x101: 01 01
  EXPECT_EQ(Header(kBit, 9, "100000000"), "AAE=");          // 0x100: 00 01
  EXPECT_EQ(Header(kBit, 8, "00000000"), "");               // no bit set: no bytes
  EXPECT_EQ(Header(kVarbit, 20, "1"), "AQ==");
  EXPECT_EQ(Header(kBit, 1, "1"), "true");
  EXPECT_EQ(Header(kVarbit, 1, "0"), "false");
  EXPECT_EQ(Header(kVarbit, -1, "0001"), "AQ==");
  std::string schema;
  ASSERT_TRUE(AppendConnectJsonSchema(kVarbit, -1, /*optional=*/true, &schema).ok());
  EXPECT_NE(schema.find(R"("parameters":{"length":"2147483647"})"), std::string::npos) << schema;
  std::string out;
  const ConnectColumn boolean = *ConnectColumnOf(kVarbit, 1);
  EXPECT_EQ(AppendConnectValue(boolean, "1" + std::string(31, '0'), &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendConnectValue(boolean, "", &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonValue(kBit, "10110", 5), R"("Fg==")");
  EXPECT_EQ(JsonValue(kBit, "1", 1), "true");
  schema.clear();
  ASSERT_TRUE(AppendConnectJsonSchema(kBit, 5, /*optional=*/true, &schema).ok());
  EXPECT_EQ(schema, R"({"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,)"
                    R"("parameters":{"length":"5"}})");
  EXPECT_FALSE(CheckJavaText(*ConnectColumnOf(kBit, 5)).ok());
  // A default is its literal, read as a value is (a function: "00" for bit, "0" for varbit, which read as no bit set).
  EXPECT_EQ(Default(kBit, "B'101'::\"bit\"", 3), "101");
  EXPECT_EQ(Default(kBit, "B'1'::\"bit\"", 1), "1");
  EXPECT_EQ(Default(kVarbit, "B'0101'::\"bit\"", -1), "0101");
  // One character for a longer bit(n): Debezium's mapper makes it a Boolean, which the Bits converter writes as one
  // byte (AA== for false), unlike the value "0".
  EXPECT_EQ(Default(kBit, "(B'0'::\"bit\" || B'1'::\"bit\")", 2), "(not reproduced)");
  EXPECT_EQ(Default(kBit, "f_bits()", 3), "00");
  EXPECT_EQ(Header(kBit, 3, "00"), "");
  EXPECT_EQ(Default(kVarbit, "f_bits()", 1), "0");
  EXPECT_EQ(Default(kBit, "NULL::\"bit\"", 3), "(none)");
}

// point is Debezium's io.debezium.data.geometry.Point: a struct of x and y (Double.toString), its well-known binary
// (byte order 1, type 1, x and y little-endian) in base64, and srid null. Kafka Connect's Values.convertToString
// prints a struct {"field":value,...}; JsonConverter writes NaN and the infinities as strings. Java prints the
// struct with the byte array's identity hash code, so it cannot be an envelope field under StringConverter.
TEST(ConnectHeaderTest, PointsAreDebeziumsPointStructs) {
  constexpr uint32_t kPoint = 600;
  EXPECT_EQ(Header(kPoint, -1, "(1.5,2)"), R"({"x":1.5,"y":2.0,"wkb":"AQEAAAAAAAAAAAD4PwAAAAAAAABA","srid":null})");
  EXPECT_EQ(Header(kPoint, -1, "(-0,1e+300)"),
            R"({"x":-0.0,"y":1.0E300,"wkb":"AQEAAAAAAAAAAAAAgJx1AIg85Dd+","srid":null})");
  EXPECT_EQ(Header(kPoint, -1, "(NaN,Infinity)"),
            R"({"x":NaN,"y":Infinity,"wkb":"AQEAAAAAAAAAAAD4fwAAAAAAAPB/","srid":null})");
  EXPECT_EQ(JsonValue(kPoint, "(NaN,Infinity)"),
            R"({"x":"NaN","y":"Infinity","wkb":"AQEAAAAAAAAAAAD4fwAAAAAAAPB/","srid":null})");
  EXPECT_EQ(JsonValue(kPoint, "(1.5,2)"), R"({"x":1.5,"y":2.0,"wkb":"AQEAAAAAAAAAAAD4PwAAAAAAAABA","srid":null})");
  std::string schema;
  ASSERT_TRUE(AppendConnectJsonSchema(kPoint, -1, /*optional=*/true, &schema).ok());
  EXPECT_EQ(schema, R"({"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},)"
                    R"({"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},)"
                    R"({"type":"int32","optional":true,"field":"srid"}],"optional":true,)"
                    R"js("name":"io.debezium.data.geometry.Point","version":1,"doc":"Geometry (POINT)"})js");
  EXPECT_FALSE(CheckJavaText(*ConnectColumnOf(kPoint, -1)).ok());
  std::string out;
  EXPECT_EQ(AppendConnectValue(*ConnectColumnOf(kPoint, -1), "(1,2", &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendConnectValue(*ConnectColumnOf(kPoint, -1), "(1;2)", &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Default(kPoint, "'(1,2)'::point"), "(none)");  // Debezium has no default parser for point
}

// The extension types Debezium's TypeRegistry finds by name and reads as strings: citext and isbn plain strings,
// ltree a string named io.debezium.data.Ltree; any other name is not one.
TEST(ConnectHeaderTest, CitextLtreeAndIsbnAreStringsFoundByTheirTypesName) {
  for (std::string_view name : {"citext", "ltree", "isbn"}) {
    const std::optional<ConnectColumn> column = ExtensionColumn(name);
    ASSERT_TRUE(column.has_value()) << name;
    std::string out;
    ASSERT_TRUE(AppendConnectValue(*column, "Top.Science", &out).ok());
    EXPECT_EQ(out, "Top.Science");
    out.clear();
    ASSERT_TRUE(AppendConnectJsonValue(*column, 16800, "a\"b", &out).ok());
    EXPECT_EQ(out, R"("a\"b")");
  }
  std::string schema;
  AppendConnectJsonSchema(*ExtensionColumn("ltree"), 16800, -1, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true,"name":"io.debezium.data.Ltree","version":1})");
  schema.clear();
  AppendConnectJsonSchema(*ExtensionColumn("citext"), 16801, -1, /*optional=*/false, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":false})");
  EXPECT_EQ(ExtensionColumn("hstore")->form, ConnectForm::kHstore);
  EXPECT_FALSE(ExtensionColumn("_cube").has_value());
  EXPECT_FALSE(ExtensionColumn("__citext").has_value());  // an array of an array type: no such type
}

// PostGIS's geometry and geography, found by their types' names: Debezium's Geometry and Geography structs of the
// EWKB PostGIS prints in hex (kept whole, SRID included) and the SRID read from it in its own byte order, or null;
// SimpleHeaderConverter and JsonConverter write them alike. Geometry's schema is optional even for a NOT NULL column
// (Geometry.builder() says so), Geography's follows the column. Text that is not hex EWKB of 9 bytes or more (Debezium:
// "Invalid EWKB length") is an error for the event.
TEST(ConnectHeaderTest, PostgisGeometriesAreDebeziumsStructsOfTheirEwkbAndSrid) {
  const ConnectColumn geometry = *ExtensionColumn("geometry");
  const ConnectColumn geography = *ExtensionColumn("geography");
  ASSERT_EQ(geometry.form, ConnectForm::kGeometry);
  std::string out;
  ASSERT_TRUE(AppendConnectValue(geometry, "0101000020E6100000000000000000F03F0000000000000040", &out).ok());
  EXPECT_EQ(out, R"({"wkb":"AQEAACDmEAAAAAAAAAAA8D8AAAAAAAAAQA==","srid":4326})");
  out.clear();
  ASSERT_TRUE(AppendConnectJsonValue(geography, 17000, "0020000001000010e63ff00000000000004000000000000000", &out).ok());
  EXPECT_EQ(out, R"({"wkb":"ACAAAAEAABDmP/AAAAAAAABAAAAAAAAAAA==","srid":4326})");  // big-endian, lower-case hex
  out.clear();
  ASSERT_TRUE(AppendConnectValue(geometry, "0101000000000000000000F03F0000000000000040", &out).ok());
  EXPECT_EQ(out, R"({"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA","srid":null})");
  out.clear();
  ASSERT_TRUE(AppendConnectValue(geometry, "010700000000000000", &out).ok());  // GEOMETRYCOLLECTION EMPTY
  EXPECT_EQ(out, R"({"wkb":"AQcAAAAAAAAA","srid":null})");
  for (std::string_view bad : {"0107000000000000", "01070000000000000", "0107000000000000ZZ", "POINT(1 2)"}) {
    out.clear();
    EXPECT_EQ(AppendConnectValue(geometry, bad, &out).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  std::string schema;
  AppendConnectJsonSchema(geometry, 17000, -1, /*optional=*/false, &schema);
  EXPECT_EQ(schema, R"({"type":"struct","fields":[{"type":"bytes","optional":false,"field":"wkb"},)"
                    R"({"type":"int32","optional":true,"field":"srid"}],"optional":true,)"
                    R"("name":"io.debezium.data.geometry.Geometry","version":1,"doc":"Geometry"})");
  schema.clear();
  AppendConnectJsonSchema(geography, 17001, -1, /*optional=*/false, &schema);
  EXPECT_EQ(schema, R"({"type":"struct","fields":[{"type":"bytes","optional":false,"field":"wkb"},)"
                    R"({"type":"int32","optional":true,"field":"srid"}],"optional":false,)"
                    R"("name":"io.debezium.data.geometry.Geography","version":1,"doc":"Geography"})");
  EXPECT_EQ(CheckJavaText(geometry).code(), absl::StatusCode::kFailedPrecondition);  // a byte array in the struct
}

// The values Debezium's converter fails on (its event.converting.failure.handling.mode decides): a NULL element of an
// enum's array, an isbn[] or an ltree[]; not a NULL element of another array. A timestamp past 2262 in nanoseconds is
// one it gives null for, whatever the mode: null as an array's element, an error as a (NOT NULL) column's value.
TEST(ConnectHeaderTest, DebeziumsConverterFailsOnRequiredNullElementsAndNullsANanosecondOverflow) {
  ConnectColumn flags{ConnectForm::kArray, 0, "gift,urgent"};
  flags.element = ConnectForm::kEnum;
  EXPECT_TRUE(DebeziumConversionFails(flags, "{urgent,NULL}"));
  EXPECT_FALSE(DebeziumConversionFails(flags, "{urgent,\"NULL\"}"));  // a quoted "NULL" is a string
  EXPECT_FALSE(DebeziumConversionFails(flags, "{}"));
  EXPECT_TRUE(DebeziumConversionFails(*ExtensionColumn("_ltree"), "{a.b,NULL}"));
  EXPECT_FALSE(DebeziumConversionFails(*ExtensionColumn("_citext"), "{a,NULL}"));
  // An isbn[]: its elements' text, required strings (as an enum array's).
  const ConnectColumn isbns = *ExtensionColumn("_isbn");
  EXPECT_TRUE(DebeziumConversionFails(isbns, "{0-393-04002-X,NULL}"));
  EXPECT_FALSE(DebeziumConversionFails(isbns, "{0-393-04002-X}"));
  std::string out;
  ASSERT_TRUE(AppendConnectValue(isbns, "{0-393-04002-X,979-10-90636-07-1}", &out).ok());
  EXPECT_EQ(out, R"(["0-393-04002-X","979-10-90636-07-1"])");
  std::string schema;
  AppendConnectJsonSchema(isbns, 0, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":false},"optional":true})");
  EXPECT_FALSE(DebeziumConversionFails(*ConnectColumnOf(kInt4Array, -1), "{1,NULL}"));
  const ConnectColumn nanos{ConnectForm::kTimestampNanos};
  EXPECT_FALSE(DebeziumConversionFails(nanos, "2263-01-01 00:00:00"));
  EXPECT_TRUE(DebeziumConvertsToNull(nanos, "2263-01-01 00:00:00"));
  EXPECT_TRUE(DebeziumConvertsToNull(nanos, "1677-09-21 00:00:00"));
  EXPECT_FALSE(DebeziumConvertsToNull(nanos, "2262-04-11 23:47:16.854775"));
  EXPECT_FALSE(DebeziumConvertsToNull(ConnectColumn{ConnectForm::kTimestampMicros}, "2263-01-01 00:00:00"));
  out.clear();
  EXPECT_FALSE(AppendConnectValue(nanos, "2263-01-01 00:00:00", &out).ok());
  ConnectColumn nanos_array{ConnectForm::kArray};
  nanos_array.element = ConnectForm::kTimestampNanos;
  nanos_array.element_type = 1114;
  EXPECT_FALSE(DebeziumConvertsToNull(nanos_array, "{\"2263-01-01 00:00:00\"}"));  // its element is null instead
  out.clear();
  ASSERT_TRUE(AppendConnectValue(nanos_array, "{\"2026-12-03 00:00:00\",\"2263-01-01 00:00:00\",NULL}", &out).ok());
  EXPECT_EQ(out, "[1796256000000000000,null,null]");
  out.clear();
  ASSERT_TRUE(AppendConnectJsonValue(nanos_array, 1115, "{\"2263-01-01 00:00:00\"}", &out).ok());
  EXPECT_EQ(out, "[null]");
}

// "char" and tsvector: strings of PostgreSQL's text (a tsvector's named io.debezium.data.Tsvector), and their arrays
// lists of them, a tsvector[]'s of required elements (a NULL element fails Debezium's converter). Side by side:
// TypesDebeziumLeavesOut...
TEST(ConnectHeaderTest, CharAndTsvectorAreStringsAndTheirArraysListsOfThem) {
  EXPECT_EQ(Header(18, -1, "x"), "x");
  EXPECT_EQ(Header(3614, -1, "'a':1 'b':2"), "'a':1 'b':2");
  EXPECT_EQ(Header(1002, -1, R"({x,NULL,""})"), R"(["x",null,""])");
  EXPECT_EQ(Header(3643, -1, R"({"'a':1 'b'"})"), R"(["'a':1 'b'"])");
  std::string schema;
  AppendConnectJsonSchema(*ConnectColumnOf(3614, -1), 3614, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true,"name":"io.debezium.data.Tsvector","version":1})");
  schema.clear();
  AppendConnectJsonSchema(*ConnectColumnOf(3643, -1), 3643, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":false,"name":"io.debezium.data.Tsvector",)"
                    R"("version":1},"optional":true})");
  schema.clear();
  AppendConnectJsonSchema(*ConnectColumnOf(1002, -1), 1002, -1, false, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":true},"optional":false})");
  EXPECT_TRUE(DebeziumConversionFails(*ConnectColumnOf(3643, -1), R"({"'a'",NULL})"));
  EXPECT_FALSE(DebeziumConversionFails(*ConnectColumnOf(1002, -1), "{x,NULL}"));
}

// The built-in types Debezium leaves out of its change events, against some it writes.
TEST(ConnectHeaderTest, DebeziumLeavesOutGeometricRegAndSnapshotTypesAndSomeArrays) {
  for (uint32_t type : {601, 602, 603, 604, 628, 718, 1020, 791, 1003, 1187, 1563, 143, 1017, 2201, 27, 3220, 5038,
                        3615, 4072, 1033, 2205, 4096, 4451, 6150}) {
    EXPECT_TRUE(DebeziumLeavesOut(type)) << type;
    EXPECT_FALSE(ConnectColumnOf(type, -1).ok()) << type;
  }
  for (uint32_t type : {16, 18, 25, 600, 1002, 1561, 3614, 3643, 3904, 22, 30, 16500}) {
    EXPECT_FALSE(DebeziumLeavesOut(type)) << type;
  }
  // Under include.unknown.datatypes=true only the arrays PostgresValueConverter names stay out; the others are bytes.
  for (uint32_t type : {791, 1003, 1187, 1563, 143, 1017, 2201}) EXPECT_TRUE(DebeziumLeavesOut(type, true)) << type;
  for (uint32_t type : {603, 1020, 3220, 4451, 2205}) EXPECT_FALSE(DebeziumLeavesOut(type, true)) << type;
}

// include.unknown.datatypes=true: the bytes of the value's PostgreSQL text (base64 in a header, hex under
// binary.handling.mode=hex), an array a list of required bytes; none for the geometric types, whose bytes are pgjdbc's
// text, nor for the arrays Debezium leaves out either way. Side by side: UnknownDatatypesIncluded...
TEST(ConnectHeaderTest, UnknownDatatypesIncludedAreTheBytesOfTheirText) {
  const ConnectColumn lsn = *UnknownDatatypeColumn(3220);
  std::string out;
  ASSERT_TRUE(AppendConnectValue(lsn, "16/B374D848", &out).ok());
  EXPECT_EQ(out, "MTYvQjM3NEQ4NDg=");
  ConnectColumn hex = lsn;
  hex.form = ConnectForm::kBinaryString;
  hex.binary = ConnectColumn::BinaryText::kHex;
  out.clear();
  ASSERT_TRUE(AppendConnectValue(hex, "0/1", &out).ok());
  EXPECT_EQ(out, "302f31");
  const ConnectColumn tids = *UnknownDatatypeColumn(1010);
  ASSERT_EQ(tids.form, ConnectForm::kArray);
  out.clear();
  ASSERT_TRUE(AppendConnectValue(tids, R"x({"(1,2)","(3,4)"})x", &out).ok());
  EXPECT_EQ(out, R"(["KDEsMik=","KDMsNCk="])");
  EXPECT_TRUE(DebeziumConversionFails(tids, R"x({"(1,2)",NULL})x"));
  std::string schema;
  AppendConnectJsonSchema(tids, 1010, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"bytes","optional":false},"optional":true})");
  for (uint32_t type : {791, 1187, 25, 600, 16500}) EXPECT_FALSE(UnknownDatatypeColumn(type)) << type;
  // The geometric types: pgjdbc's text of them, each coordinate a Java double; a box[]'s elements split at ';'.
  for (const auto& [type, text, java] : std::vector<std::tuple<uint32_t, std::string, std::string>>{
           {603, "(3,4),(1,2)", "(3.0,4.0),(1.0,2.0)"},
           {628, "{1,-2.5,3e+20}", "{1.0,-2.5,3.0E20}"},
           {601, "[(1,2),(-0,0.001)]", "[(1.0,2.0),(-0.0,0.001)]"},
           {602, "[(1,2),(3,4)]", "[(1.0,2.0),(3.0,4.0)]"},
           {604, "((1,2),(3,4),(5,6))", "((1.0,2.0),(3.0,4.0),(5.0,6.0))"},
           {718, "<(1,2),Infinity>", "<(1.0,2.0),Infinity>"}}) {
    std::string hex;
    ConnectColumn column = *UnknownDatatypeColumn(type);
    column.form = ConnectForm::kBinaryString;
    column.binary = ConnectColumn::BinaryText::kHex;
    ASSERT_TRUE(AppendConnectValue(column, text, &hex).ok()) << type;
    EXPECT_EQ(hex, absl::BytesToHexString(java)) << type;
  }
  out.clear();
  ASSERT_TRUE(AppendConnectValue(*UnknownDatatypeColumn(1020), "{(3,4),(1,2);(1,1),(0,0)}", &out).ok());
  EXPECT_EQ(out, R"x([")x" + absl::Base64Escape("(3.0,4.0),(1.0,2.0)") + R"x(",")x" +
                     absl::Base64Escape("(1.0,1.0),(0.0,0.0)") + R"x("])x");
}

// Arrays of the extension types (_citext, _ltree, _hstore, _geometry, _geography by name): lists of each element's
// value; PostGIS's arrays separate their elements with ':' (the types' typdelim); hstore's JSON text quoted in a
// header's list like any string; schemas of optional elements with the elements' names. A NULL element of an ltree[]
// is an error (Debezium's converter of it fails; the mapper decides, outbox.event_converting_failure_handling_mode), of
// the others null.
TEST(ConnectHeaderTest, ArraysOfExtensionTypesAreListsOfTheirElementsValues) {
  const ConnectColumn citexts = *ExtensionColumn("_citext");
  ASSERT_EQ(citexts.form, ConnectForm::kArray);
  std::string out;
  ASSERT_TRUE(AppendConnectValue(citexts, R"({MiXeD,"b c",NULL,"q\"x"})", &out).ok());
  EXPECT_EQ(out, R"(["MiXeD","b c",null,"q\"x"])");
  out.clear();
  ASSERT_TRUE(AppendJavaToString(citexts, R"({MiXeD,"b c",NULL})", &out).ok());
  EXPECT_EQ(out, "[MiXeD, b c, null]");

  const ConnectColumn stores = *ExtensionColumn("_hstore");
  out.clear();
  ASSERT_TRUE(AppendConnectValue(stores, R"({"\"a\"=>\"1\"",NULL})", &out).ok());
  EXPECT_EQ(out, R"(["{\"a\":\"1\"}",null])");
  out.clear();
  ASSERT_TRUE(AppendConnectJsonValue(stores, 0, R"({"\"a\"=>\"1\""})", &out).ok());
  EXPECT_EQ(out, R"(["{\"a\":\"1\"}"])");

  const ConnectColumn geometries = *ExtensionColumn("_geometry");
  out.clear();
  ASSERT_TRUE(AppendConnectValue(geometries,
                                 "{0101000020E6100000000000000000F03F0000000000000040:NULL:010700000000000000}", &out)
                  .ok());
  EXPECT_EQ(out, R"([{"wkb":"AQEAACDmEAAAAAAAAAAA8D8AAAAAAAAAQA==","srid":4326},null,{"wkb":"AQcAAAAAAAAA","srid":null}])");
  EXPECT_EQ(CheckJavaText(geometries).code(), absl::StatusCode::kFailedPrecondition);
  std::string schema;
  AppendConnectJsonSchema(*ExtensionColumn("_geography"), 0, -1, /*optional=*/false, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"struct","fields":[{"type":"bytes","optional":false,)"
                    R"("field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,)"
                    R"("name":"io.debezium.data.geometry.Geography","version":1,"doc":"Geography"},"optional":false})");

  const ConnectColumn trees = *ExtensionColumn("_ltree");
  schema.clear();
  AppendConnectJsonSchema(trees, 0, -1, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":true,"name":"io.debezium.data.Ltree",)"
                    R"("version":1},"optional":true})");
  out.clear();
  ASSERT_TRUE(AppendConnectValue(trees, "{Top.Science,a}", &out).ok());
  EXPECT_EQ(out, R"(["Top.Science","a"])");
  const absl::Status null_tree = AppendConnectValue(trees, "{a,NULL}", &out);
  EXPECT_EQ(null_tree.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(null_tree.message().find("ltree[]"), std::string_view::npos) << null_tree;
  EXPECT_FALSE(ExtensionColumn("_cube").has_value());  // an array of a type Debezium does not know
}

// pgvector's vector and halfvec: Debezium's DoubleVector / FloatVector, lists of Java's Double / Float text of each
// element; sparsevec: its SparseDoubleVector struct, whose map of index to value is a HashMap<Short, Double> made for
// as many elements (new HashMap<>(n)) and so iterates by index modulo its table, then in insertion order; JsonConverter
// writes that map as pairs (its keys are not strings), Struct.toString as {i=x, j=y}. Dimensions or indices beyond a
// Java short, on which Debezium's converter fails, are an error for the event.
TEST(ConnectHeaderTest, PgvectorTypesAreDebeziumsVectorsAndSparseVectors) {
  const ConnectColumn vector = *ExtensionColumn("vector");
  const ConnectColumn halfvec = *ExtensionColumn("halfvec");
  const ConnectColumn sparse = *ExtensionColumn("sparsevec");
  ASSERT_EQ(vector.form, ConnectForm::kVector);
  ASSERT_EQ(sparse.form, ConnectForm::kSparseVector);
  // Each text as SimpleHeaderConverter, JsonConverter and Java's toString write it.
  const auto header = [](const ConnectColumn& column, std::string_view text) {
    std::string out;
    const absl::Status st = AppendConnectValue(column, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  const auto json = [](const ConnectColumn& column, std::string_view text) {
    std::string out;
    const absl::Status st = AppendConnectJsonValue(column, 0, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  const auto java = [](const ConnectColumn& column, std::string_view text) {
    std::string out;
    const absl::Status st = AppendJavaToString(column, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  EXPECT_EQ(header(vector, "[1,2.5,-3e-05,1e+08]"), "[1.0,2.5,-3.0E-5,1.0E8]");
  EXPECT_EQ(json(halfvec, "[1,0.099975586,-0]"), "[1.0,0.099975586,-0.0]");
  EXPECT_EQ(java(vector, "[1,2.5]"), "[1.0, 2.5]");
  // Three elements: a table of 4, where 1 and 17 share a bucket before 3's.
  EXPECT_EQ(header(sparse, "{1:1.5,3:2,17:-1}/40"), R"({"dimensions":40,"vector":{1:1.5,17:-1.0,3:2.0}})");
  EXPECT_EQ(json(sparse, "{1:1.5,3:2,17:-1}/40"), R"({"dimensions":40,"vector":[[1,1.5],[17,-1.0],[3,2.0]]})");
  EXPECT_EQ(java(sparse, "{1:1.5,3:2,17:-1}/40"), "Struct{dimensions=40,vector={1=1.5, 17=-1.0, 3=2.0}}");
  // Five elements: a table of 8.
  EXPECT_EQ(header(sparse, "{1:1,8:2,9:3,16:4,17:5}/30"), R"({"dimensions":30,"vector":{8:2.0,16:4.0,1:1.0,9:3.0,17:5.0}})");
  EXPECT_EQ(json(sparse, "{}/5"), R"({"dimensions":5,"vector":[]})");
  std::string out;
  for (std::string_view bad : {"{1:1}/40000", "{40000:1}/5", "{1:1}", "[1,2]", "{1:x}/5", "{1:1,1:2}/5"}) {
    out.clear();
    EXPECT_EQ(AppendConnectValue(sparse, bad, &out).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  out.clear();
  EXPECT_EQ(AppendConnectValue(vector, "{1,2}", &out).code(), absl::StatusCode::kInvalidArgument);

  std::string schema;
  AppendConnectJsonSchema(halfvec, 0, -1, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"float","optional":false},"optional":true,)"
                    R"("name":"io.debezium.data.FloatVector","version":1})");
  schema.clear();
  AppendConnectJsonSchema(sparse, 0, -1, /*optional=*/false, &schema);
  EXPECT_EQ(schema, R"({"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},)"
                    R"({"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double",)"
                    R"("optional":false},"optional":false,"field":"vector"}],"optional":false,)"
                    R"("name":"io.debezium.data.SparseDoubleVector","version":1,"doc":"Sparse double vector"})");
  EXPECT_TRUE(CheckJavaText(sparse).ok());
}

// An array of an enum (its labels from the catalog): a list of the labels, quoted in headers; its schema's elements are
// the enum's and required, as Debezium builds it (SchemaBuilder.array(Enum.builder(...))), so a NULL element is an
// error naming the array.
TEST(ConnectHeaderTest, ArraysOfAnEnumAreListsOfRequiredLabels) {
  ConnectColumn array{ConnectForm::kArray, 0, "new,it's \"x\",shipped"};
  array.element = ConnectForm::kEnum;
  std::string out;
  ASSERT_TRUE(AppendConnectValue(array, R"({new,"it's \"x\""})", &out).ok());
  EXPECT_EQ(out, R"(["new","it's \"x\""])");
  out.clear();
  ASSERT_TRUE(AppendConnectJsonValue(array, 16501, "{shipped,new}", &out).ok());
  EXPECT_EQ(out, R"(["shipped","new"])");
  out.clear();
  ASSERT_TRUE(AppendJavaToString(array, "{shipped,new}", &out).ok());
  EXPECT_EQ(out, "[shipped, new]");
  out.clear();
  const absl::Status null_element = AppendConnectValue(array, "{new,NULL}", &out);
  EXPECT_EQ(null_element.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(null_element.message().find("{new,NULL}"), std::string_view::npos) << null_element;
  std::string schema;
  AppendConnectJsonSchema(array, 16501, -1, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":false,"name":"io.debezium.data.Enum",)"
                    R"("version":1,"parameters":{"allowed":"new,it's \"x\",shipped"}},"optional":true})");
}

// hstore under Debezium's hstore.handling.mode=json: the JSON object of pgjdbc's HashMap, in its iteration order. The
// expected orders are what Java 17's HashMap gave for the same keys put in PostgreSQL's output order (by length, then
// bytes): 40 keys pass two resizes; "😀x" hashes over its UTF-16 surrogates and stays unescaped (Jackson's generator
// over a Writer); NULL values are null.
TEST(ConnectHeaderTest, HstoreIsTheJsonOfJavasHashMapInItsOrder) {
  EXPECT_EQ(*DebeziumHstoreJson(R"("a"=>"1", "b"=>NULL, "key with \"q\""=>"v\\x")"),
            R"({"a":"1","b":null,"key with \"q\"":"v\\x"})");
  EXPECT_EQ(*DebeziumHstoreJson(""), "{}");
  EXPECT_EQ(*DebeziumHstoreJson("\"z\"=>\"1\", \"é\"=>\"2\", \"😀x\"=>\"3\", \"日本\"=>\"4\n\""),  // a newline
            "{\"😀x\":\"3\",\"é\":\"2\",\"z\":\"1\",\"日本\":\"4\\n\"}");
  std::string forty;
  for (int i = 1; i <= 40; ++i) forty += (i > 1 ? ", " : "") + ("\"key" + std::to_string(i) + "\"=>\"v\"");
  absl::StatusOr<std::string> json = DebeziumHstoreJson(forty);
  ASSERT_TRUE(json.ok()) << json.status();
  std::string order;
  for (size_t at = json->find("\"key"); at != std::string::npos; at = json->find("\"key", at + 1)) {
    order += json->substr(at + 1, json->find('"', at + 1) - at - 1) + "|";
  }
  EXPECT_EQ(order,
            "key1|key2|key5|key6|key3|key4|key9|key40|key7|key8|key22|key21|key20|key15|key37|key14|key36|key13|"
            "key35|key12|key34|key19|key18|key17|key39|key16|key38|key11|key33|key10|key32|key31|key30|key26|key25|"
            "key24|key23|key29|key28|key27|");
  EXPECT_EQ(DebeziumHstoreJson(R"("a"=>)").status().code(), absl::StatusCode::kInvalidArgument);
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kHstore}, 16900, -1, /*optional=*/true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true,"name":"io.debezium.data.Json","version":1})");
  std::string value;
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kHstore}, 16900, R"("a"=>"1")", &value).ok());
  EXPECT_EQ(value, R"("{\"a\":\"1\"}")");
}

// PostgreSQL's array text: quoted elements unescaped, unquoted NULL (any case) as null, "NULL" quoted as text, {} as
// no elements; a one-dimensional array's explicit bounds skipped (as pgjdbc's parser skips them, so Debezium writes the
// elements); multi-dimensional arrays refused (Debezium writes each inner array as null or as Java's identity-hash text
// of it).
TEST(ConnectHeaderTest, ArrayTextIsSplitIntoItsElements) {
  using Elements = std::vector<std::optional<std::string>>;
  EXPECT_EQ(*ParsePgArray(R"({a,"b c",NULL,null,"NULL","q\"x","back\\slash",""})"),
            (Elements{"a", "b c", std::nullopt, std::nullopt, "NULL", "q\"x", "back\\slash", ""}));
  EXPECT_EQ(*ParsePgArray("{}"), Elements{});
  EXPECT_EQ(*ParsePgArray("{1,-2}"), (Elements{"1", "-2"}));
  EXPECT_EQ(*ParsePgArray("[0:1]={1,2}"), (Elements{"1", "2"}));
  EXPECT_EQ(*ParsePgArray(R"([-3:-2]={"a]=b",NULL})"), (Elements{"a]=b", std::nullopt}));
  EXPECT_EQ(*ParsePgArray(R"({01ab:NULL:"x,y"})", ':'), (Elements{"01ab", std::nullopt, "x,y"}));
  EXPECT_EQ(ParsePgArray("{a:b}").value(), Elements{"a:b"});
  for (const char* bad : {"{{1,2},{3,4}}", "[0:1][1:2]={{1,2},{3,4}}", "[0:1]{1,2}", "1,2", "{a,,b}", "{\"a}",
                          "{a\"b}"}) {
    EXPECT_EQ(ParsePgArray(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// Arrays: SimpleHeaderConverter's [e1,e2] (strings quoted, \ and " escaped), Struct.toString's [e1, e2], JsonConverter's
// JSON array, and the array schema of optional elements; types without an element form are refused.
TEST(ConnectHeaderTest, ArraysAreConnectArraysOfOptionalElements) {
  constexpr uint32_t kTextArray = 1009, kFloat8Array = 1022, kUuidArray = 2951;
  EXPECT_EQ(Header(kTextArray, -1, R"({a,"q\"x","b\\s",NULL})"), R"(["a","q\"x","b\\s",null])");
  EXPECT_EQ(Header(kInt4Array, -1, "{1,-2,NULL}"), "[1,-2,null]");
  EXPECT_EQ(Header(kFloat8Array, -1, "{1e20,NaN}"), "[1.0E20,NaN]");
  EXPECT_EQ(Header(kInt4Array, -1, "{}"), "[]");
  EXPECT_EQ(JsonValue(kTextArray, R"({a,"q\"x",NULL})"), R"(["a","q\"x",null])");
  EXPECT_EQ(JsonValue(kFloat8Array, "{1e20,NaN}"), R"([1.0E20,"NaN"])");
  const ConnectColumn texts = *ConnectColumnOf(kTextArray, -1);
  std::string java;
  ASSERT_TRUE(AppendJavaToString(texts, R"({a,"y, z",NULL})", &java).ok());
  EXPECT_EQ(java, "[a, y, z, null]");
  std::string schema;
  ASSERT_TRUE(AppendConnectJsonSchema(kUuidArray, -1, /*optional=*/false, &schema).ok());
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"string","optional":true,"name":"io.debezium.data.Uuid",)"
                    R"("version":1},"optional":false})");
  std::string out;
  EXPECT_EQ(AppendConnectValue(texts, "{{a},{b}}", &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ConnectColumnOf(1187 /* interval[]: no Debezium schema */, -1).ok());
}

// A multi-dimensional array: Debezium's element converter gets each inner array (a Java array from pgjdbc); those of
// numbers, booleans, dates, times and timestamps give null for it, so the value is one null per inner array, in every
// converter's text; those of strings print Java's identity hash code: refused.
TEST(ConnectHeaderTest, MultiDimensionalArraysOfNumbersAreOneNullPerInnerArrayAndOfStringsRefused) {
  EXPECT_EQ(MultiDimensionalLength("{{1,2},{3,4},{5,6}}"), 3u);
  EXPECT_EQ(MultiDimensionalLength("[0:1][1:2]={{1,2},{3,NULL}}"), 2u);
  EXPECT_EQ(MultiDimensionalLength(R"({{{"}",b}},{{c,d}}})"), 2u);  // three dimensions; a quoted brace
  EXPECT_EQ(MultiDimensionalLength("{1,2}"), std::nullopt);
  EXPECT_EQ(MultiDimensionalLength("{}"), std::nullopt);
  EXPECT_EQ(MultiDimensionalLength("{{1},2}"), std::nullopt);
  EXPECT_EQ(MultiDimensionalLength("{{1}}{"), std::nullopt);
  const ConnectColumn ints = *ConnectColumnOf(kInt4Array, -1);
  EXPECT_EQ(Header(kInt4Array, -1, "{{1,2},{3,4}}"), "[null,null]");
  EXPECT_EQ(JsonValue(kInt4Array, "{{1,2},{3,4}}"), "[null,null]");
  std::string java;
  ASSERT_TRUE(AppendJavaToString(ints, "[0:1][1:1]={{1},{2}}", &java).ok());
  EXPECT_EQ(java, "[null, null]");
  constexpr uint32_t kTimestampArray = 1115, kTextArray = 1009;
  EXPECT_EQ(Header(kTimestampArray, -1, R"({{"2026-12-03 00:00:00"}})"), "[null]");
  EXPECT_EQ(Header(1001 /* bytea[] */, -1, R"({{"\\x00ff"},{NULL}})"), "[null,null]");
  EXPECT_EQ(Header(1185 /* timestamptz[] */, -1, R"({{"2026-12-03 13:45:07+00"}})"), "[null]");
  std::string out;
  EXPECT_EQ(AppendConnectValue(*ConnectColumnOf(kTextArray, -1), "{{a},{b}}", &out).code(),
            absl::StatusCode::kInvalidArgument);
}

// Arrays of the types with logical values: each element as Debezium converts it, the array's modifier being its
// elements' (time(3)[], numeric(10,2)[]); times and timetz as pgjdbc's java.sql.Time carries them (milliseconds,
// whole seconds); strings (timestamptz, timetz, ranges, bytea's base64) quoted. The expected texts are Debezium
// 3.6.1's (DebeziumSideBySide.TemporalNumericBinaryAndRangeArrays*).
TEST(ConnectHeaderTest, ArraysOfDatesTimesNumericsBytesAndRangesAreArraysOfTheirValues) {
  constexpr uint32_t kDateArray = 1182, kTimeArray = 1183, kTimeTzArray = 1270, kTimestampArray = 1115,
                     kTimestampTzArray = 1185, kNumericArray = 1231, kByteaArray = 1001, kInt4RangeArray = 3905;
  EXPECT_EQ(Header(kDateArray, -1, "{2026-12-03,NULL,1969-12-31}"), "[20790,null,-1]");
  EXPECT_EQ(Header(kTimeArray, -1, "{13:45:07.123999,00:00:00.0005}"), "[49507123000,0]");
  EXPECT_EQ(Header(kTimeArray, 3, "{13:45:07.5}"), "[49507500]");
  EXPECT_EQ(Header(kTimeTzArray, -1, "{13:45:07.999+02,10:00:00.123456-03}"), R"(["11:45:07Z","13:00:00Z"])");
  EXPECT_EQ(Header(kTimestampArray, 3, "{\"2026-12-03 13:45:07.125\"}"), "[1796305507125]");
  EXPECT_EQ(Header(kTimestampTzArray, 2, "{\"2026-12-03 13:45:07.1+00\"}"), R"(["2026-12-03T13:45:07.10Z"])");
  EXPECT_EQ(Header(kNumericArray, (10 << 16 | 2) + 4, "{12.50,-0.01,NULL}"), "[12.50,-0.01,null]");
  EXPECT_EQ(Header(kByteaArray, -1, R"({"\\x00ff41",NULL})"), R"(["AP9B",null])");
  EXPECT_EQ(Header(kInt4RangeArray, -1, R"x({"[1,5)",empty})x"), R"x(["[1,5)","empty"])x");
  std::string schema;
  ASSERT_TRUE(AppendConnectJsonSchema(kNumericArray, (10 << 16 | 2) + 4, /*optional=*/true, &schema).ok());
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"bytes","optional":true,)"
                    R"("name":"org.apache.kafka.connect.data.Decimal","version":1,)"
                    R"("parameters":{"scale":"2","connect.decimal.precision":"10"}},"optional":true})");
  // Struct.toString of a list of byte arrays prints identity hash codes.
  EXPECT_FALSE(CheckJavaText(*ConnectColumnOf(kByteaArray, -1)).ok());
}

// interval as Debezium's MicroDuration (365.25 / 12 days a month, the time part's sign on all of it), timetz as its
// ZonedTime (UTC, within the day, minimal fraction digits), ranges as their text; with their schemas.
TEST(ConnectHeaderTest, IntervalsTimesWithZonesAndRangesAreDebeziumsValues) {
  constexpr uint32_t kInt4Range = 3904;
  // The relay's session prints intervals in ISO 8601 (IntervalStyle iso_8601).
  EXPECT_EQ(Header(kInterval, -1, "P1D"), "86400000000");
  EXPECT_EQ(Header(kInterval, -1, "P1M"), "2629800000000");
  EXPECT_EQ(Header(kInterval, -1, "P-1DT2H"), "-79200000000");
  EXPECT_EQ(Header(kInterval, -1, "PT-1.5S"), "-1500000");
  EXPECT_EQ(Header(kInterval, -1, "PT0S"), "0");
  EXPECT_EQ(Header(kInterval, -1, "P-3MT-1.5S"), "-7889401500000");
  // Doubles as Debezium adds them up: 100 years 11 mons 29 days 23:59:59.999999 is one microsecond short.
  EXPECT_EQ(Header(kInterval, -1, "P100Y11M29DT23H59M59.999999S"), "3187279799999999");
  EXPECT_EQ(Header(kTimeTz, -1, "13:45:07.5+02"), "11:45:07.5Z");
  EXPECT_EQ(Header(kTimeTz, -1, "01:00:00+02"), "23:00:00Z");
  EXPECT_EQ(Header(kTimeTz, -1, "23:30:00-01:30"), "01:00:00Z");
  EXPECT_EQ(Header(kInt4Range, -1, "[1,5)"), "[1,5)");
  EXPECT_EQ(JsonSchema(kInterval, true),
            R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroDuration","version":1})");
  EXPECT_EQ(JsonSchema(kTimeTz, false),
            R"({"type":"string","optional":false,"name":"io.debezium.time.ZonedTime","version":1})");
  EXPECT_EQ(JsonValue(kTimeTz, "13:45:07+02"), R"("11:45:07Z")");
  std::string out;
  EXPECT_EQ(AppendConnectValue(ConnectColumn{ConnectForm::kInterval}, "1 day", &out).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox::outbox
