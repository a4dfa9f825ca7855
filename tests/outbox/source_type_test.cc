// outbox.propagate_source_type: the parameters Debezium 3.6.1 adds to a selected column's schema, as its
// ColumnMetaData and pgjdbc 42.7's TypeInfoCache work them out from a Relation message's type and modifier.
#include "outbox/source_type.h"

#include <gtest/gtest.h>

#include <string>

#include "outbox/connect_header.h"

namespace outbox::outbox {
namespace {

std::string Parameters(std::string_view column, std::string_view type_name, uint32_t oid, int32_t typmod,
                       uint32_t root = 0, int32_t root_typmod = -1) {
  absl::StatusOr<std::string> out = SourceTypeParameters(SourceColumnType{.column = column,
                                                                          .type_name = type_name,
                                                                          .type_oid = oid,
                                                                          .type_modifier = typmod,
                                                                          .domain_root_oid = root,
                                                                          .domain_root_modifier = root_typmod});
  return out.ok() ? *out : std::string(out.status().message());
}

std::string Expected(std::string_view type, std::string_view length, std::string_view scale, std::string_view name) {
  return std::string(R"("__debezium.source.column.type":")") + std::string(type) +
         R"(","__debezium.source.column.length":")" + std::string(length) +
         R"(","__debezium.source.column.scale":")" + std::string(scale) + R"(","__debezium.source.column.name":")" +
         std::string(name) + R"(")";
}

// With a modifier: pgjdbc's precision and scale under it; without: its precision, or its display size where the
// precision is 0 (numeric), and Integer.MAX_VALUE for the types pgjdbc has no size for.
TEST(SourceTypeTest, LengthAndScaleAreThoseDebeziumTakesFromPgjdbc) {
  EXPECT_EQ(Parameters("kind", "varchar", 1043, 68), Expected("VARCHAR", "64", "0", "kind"));
  EXPECT_EQ(Parameters("c", "bpchar", 1042, 7), Expected("BPCHAR", "3", "0", "c"));
  EXPECT_EQ(Parameters("t", "text", 25, -1), Expected("TEXT", "2147483647", "0", "t"));
  EXPECT_EQ(Parameters("v", "varchar", 1043, -1), Expected("VARCHAR", "2147483647", "0", "v"));
  EXPECT_EQ(Parameters("payload", "jsonb", 3802, -1), Expected("JSONB", "2147483647", "0", "payload"));
  EXPECT_EQ(Parameters("id", "uuid", 2950, -1), Expected("UUID", "2147483647", "0", "id"));
  EXPECT_EQ(Parameters("n", "int2", 21, -1), Expected("INT2", "5", "0", "n"));
  EXPECT_EQ(Parameters("n", "int4", 23, -1), Expected("INT4", "10", "0", "n"));
  EXPECT_EQ(Parameters("n", "int8", 20, -1), Expected("INT8", "19", "0", "n"));
  EXPECT_EQ(Parameters("f", "float4", 700, -1), Expected("FLOAT4", "8", "8", "f"));
  EXPECT_EQ(Parameters("f", "float8", 701, -1), Expected("FLOAT8", "17", "17", "f"));
  EXPECT_EQ(Parameters("b", "bool", 16, -1), Expected("BOOL", "1", "0", "b"));
  // numeric(10,2): the modifier is ((10 << 16) | 2) + 4.
  EXPECT_EQ(Parameters("amount", "numeric", 1700, (10 << 16 | 2) + 4), Expected("NUMERIC", "10", "2", "amount"));
  EXPECT_EQ(Parameters("amount", "numeric", 1700, -1), Expected("NUMERIC", "131089", "0", "amount"));
  // The times: their display size (date 13; time 8, a zone 6 more, a timestamp's date and space 14 more; the
  // fraction its digits and the point, 7 without a modifier), their precision the scale (6 without one).
  EXPECT_EQ(Parameters("d", "date", 1082, -1), Expected("DATE", "13", "0", "d"));
  EXPECT_EQ(Parameters("at", "timestamptz", 1184, -1), Expected("TIMESTAMPTZ", "35", "6", "at"));
  EXPECT_EQ(Parameters("at", "timestamptz", 1184, 3), Expected("TIMESTAMPTZ", "32", "3", "at"));
  EXPECT_EQ(Parameters("at", "timestamp", 1114, 0), Expected("TIMESTAMP", "22", "0", "at"));
  EXPECT_EQ(Parameters("at", "time", 1083, 1), Expected("TIME", "11", "1", "at"));
  EXPECT_EQ(Parameters("at", "timetz", 1266, -1), Expected("TIMETZ", "21", "6", "at"));
  EXPECT_EQ(Parameters("span", "interval", 1186, -1), Expected("INTERVAL", "49", "6", "span"));
  EXPECT_EQ(Parameters("bits", "bit", 1560, 5), Expected("BIT", "5", "0", "bits"));
  EXPECT_EQ(Parameters("bits", "varbit", 1562, -1), Expected("VARBIT", "2147483647", "0", "bits"));
  // An enum or an extension's type: no size in pgjdbc.
  EXPECT_EQ(Parameters("status", "order_status", 16500, -1), Expected("ORDER_STATUS", "2147483647", "0", "status"));
  EXPECT_EQ(Parameters("e", "vector", 17001, 3), Expected("VECTOR", "2147483647", "0", "e"));
}

// An array of a core type is sized as its elements (the Relation gives it their modifier); a domain without a
// modifier of its own as its base type under the domain's; the column's name escaped as JSON.
TEST(SourceTypeTest, ArraysDomainsAndNamesAreDebeziums) {
  EXPECT_EQ(Parameters("tags", "_varchar", 1015, 14), Expected("_VARCHAR", "10", "0", "tags"));
  EXPECT_EQ(Parameters("ns", "_int4", 1007, -1), Expected("_INT4", "10", "0", "ns"));
  EXPECT_EQ(Parameters("price", "d_amount", 16600, -1, 1700, (10 << 16 | 2) + 4),
            Expected("D_AMOUNT", "10", "2", "price"));
  EXPECT_EQ(Parameters("mail", "d_email", 16601, -1, 25, -1), Expected("D_EMAIL", "2147483647", "0", "mail"));
  EXPECT_EQ(Parameters("say \"hi\"", "text", 25, -1), Expected("TEXT", "2147483647", "0", R"(say \"hi\")"));
  // An array pgjdbc learns of only when its connection reads one: refused, naming the column.
  EXPECT_NE(Parameters("ids", "_uuid", 2951, -1).find("column \"ids\" of type _uuid"), std::string::npos);
  EXPECT_NE(Parameters("x", "t\xC3\xA9st", 16700, -1).find("not ASCII"), std::string::npos);
}

// The parameters follow the schema's own (a Decimal's scale and precision, an Enum's allowed labels), after its
// name, version and doc, also for structs and arrays (asJsonSchema's order).
TEST(SourceTypeTest, ParametersFollowTheSchemasOwnInJsonConvertersOrder) {
  const std::string more = R"("k":"v")";
  std::string decimal;
  AppendConnectJsonSchema(ConnectColumn{.form = ConnectForm::kDecimal}, 1700, (10 << 16 | 2) + 4, false, &decimal,
                          more);
  EXPECT_EQ(decimal, R"({"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,)"
                     R"("parameters":{"scale":"2","connect.decimal.precision":"10","k":"v"}})");
  std::string text;
  AppendConnectJsonSchema(ConnectColumn{}, 25, -1, true, &text, more);
  EXPECT_EQ(text, R"({"type":"string","optional":true,"parameters":{"k":"v"}})");
  std::string point;
  AppendConnectJsonSchema(ConnectColumn{.form = ConnectForm::kPoint}, 600, -1, true, &point, more);
  EXPECT_TRUE(point.ends_with(R"("optional":true,"name":"io.debezium.data.geometry.Point","version":1,)"
                              R"js("doc":"Geometry (POINT)","parameters":{"k":"v"}})js"))
      << point;
  std::string array;
  AppendConnectJsonSchema(ConnectColumn{.form = ConnectForm::kArray, .element = ConnectForm::kText,
                                        .element_type = 23},
                          1007, -1, true, &array, more);
  EXPECT_EQ(array, R"({"type":"array","items":{"type":"int32","optional":true},"optional":true,)"
                   R"("parameters":{"k":"v"}})");
  std::string plain;
  AppendConnectJsonSchema(ConnectColumn{}, 25, -1, true, &plain);
  EXPECT_EQ(plain, R"({"type":"string","optional":true})");
}

}  // namespace
}  // namespace outbox::outbox

namespace outbox::outbox {
namespace {

// Debezium's header text of `text` in `column`, or in a column of `form`, or the error.
std::string ValueOf(const ConnectColumn& column, std::string_view text) {
  std::string out;
  absl::Status st = AppendConnectValue(column, text, &out);
  return st.ok() ? out : std::string(st.message());
}
std::string ValueOf(ConnectForm form, std::string_view text) { return ValueOf(ConnectColumn{form}, text); }

// decimal.handling.mode string and double: numeric as its plain text or Java's double, money parsed first; their
// schemas a bare string or double; JsonConverter quotes the string and writes NaN as a string.
TEST(DecimalModeTest, NumericAndMoneyAreTheirPlainTextOrJavasDouble) {
  const auto header = [](ConnectForm form, std::string_view text) { return ValueOf(form, text); };
  EXPECT_EQ(header(ConnectForm::kDecimalString, "-0.0100"), "-0.0100");
  EXPECT_NE(header(ConnectForm::kDecimalString, "NaN"), "NaN");
  EXPECT_EQ(header(ConnectForm::kMoneyString, "-$1,234.50"), "-1234.50");
  EXPECT_EQ(header(ConnectForm::kMoneyDouble, "$1,234.50"), "1234.5");
  EXPECT_EQ(header(ConnectForm::kFloat64, "123456789012345678901234567890.123"), "1.2345678901234568E29");
  std::string json;
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kDecimalString}, 1700, "12.50", &json).ok());
  EXPECT_EQ(json, R"("12.50")");
  json.clear();
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kMoneyDouble}, 790, "$0.10", &json).ok());
  EXPECT_EQ(json, "0.1");
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kMoneyString}, 790, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true})");
  schema.clear();
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kMoneyDouble}, 790, -1, false, &schema);
  EXPECT_EQ(schema, R"({"type":"double","optional":false})");
}

// time.precision.mode=nanoseconds: NanoTime and NanoTimestamp, a thousand times the microseconds; a timestamp a Java
// long cannot hold in nanoseconds is refused.
TEST(DecimalModeTest, NanosecondFormsAreAThousandTimesTheMicroseconds) {
  std::string out;
  ASSERT_TRUE(AppendConnectValue(ConnectColumn{ConnectForm::kTimeNanos}, "13:45:07.123456", &out).ok());
  EXPECT_EQ(out, "49507123456000");
  out.clear();
  ASSERT_TRUE(AppendConnectValue(ConnectColumn{ConnectForm::kTimestampNanos}, "1969-12-31 23:59:59.999999", &out).ok());
  EXPECT_EQ(out, "-1000");
  out.clear();
  EXPECT_FALSE(AppendConnectValue(ConnectColumn{ConnectForm::kTimestampNanos}, "2262-04-12 00:00:00", &out).ok());
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kTimestampNanos}, 1114, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1})");
}

// interval.handling.mode=string: Interval.toIsoString of pgjdbc's PGInterval, seconds through Double.toString,
// stripped of trailing zeros, printed plain.
TEST(DecimalModeTest, IntervalsAsStringsAreDebeziumsIsoText) {
  const auto iso = [](std::string_view text) { return ValueOf(ConnectForm::kIntervalString, text); };
  EXPECT_EQ(iso("P1Y2M-3DT4H5M6.789S"), "P1Y2M-3DT4H5M6.789S");
  EXPECT_EQ(iso("PT0S"), "P0Y0M0DT0H0M0S");
  EXPECT_EQ(iso("PT-0.000001S"), "P0Y0M0DT0H0M-0.000001S");
  EXPECT_EQ(iso("P-1DT-2H-3M-4.50S"), "P0Y0M-1DT-2H-3M-4.5S");
  EXPECT_EQ(iso("PT59.999999S"), "P0Y0M0DT0H0M59.999999S");
  EXPECT_EQ(iso("P178000000Y"), "P178000000Y0M0DT0H0M0S");
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kIntervalString}, 1186, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":true,"name":"io.debezium.time.Interval","version":1})");
}

// money.fraction.digits: the money's Decimal has that scale, its value rounded HALF_UP to it.
TEST(DecimalModeTest, MoneyIsRoundedToItsFractionDigits) {
  EXPECT_EQ(DebeziumMoneyText("$1,234.56", 0), "1235");
  EXPECT_EQ(DebeziumMoneyText("-$0.50", 0), "-1");
  EXPECT_EQ(DebeziumMoneyText("-$0.49", 0), "0");
  EXPECT_EQ(DebeziumMoneyText("$9.95", 1), "10.0");
  EXPECT_EQ(DebeziumMoneyText("$0.05", 4), "0.0500");
  EXPECT_EQ(DebeziumMoneyText("($12.34)"), "-12.34");
  ConnectColumn money{ConnectForm::kMoney};
  money.money_digits = 4;
  std::string schema;
  AppendConnectJsonSchema(money, 790, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,)"
                    R"("parameters":{"scale":"4"}})");
  std::string header;
  ASSERT_TRUE(AppendConnectValue(money, "$1.5", &header).ok());
  EXPECT_EQ(header, "1.5000");
}

// binary.handling.mode base64, base64-url-safe and hex: the bytes as a string in that encoding (Java's encoders:
// padded, the URL-safe alphabet, lower-case hex).
TEST(DecimalModeTest, BinaryStringsAreJavasEncodings) {
  ConnectColumn column{ConnectForm::kBinaryString};
  const auto text = [&](ConnectColumn::BinaryText as) {
    column.binary = as;
    std::string out;
    absl::Status st = AppendConnectValue(column, "\\xfbff3e", &out);
    return st.ok() ? out : std::string(st.message());
  };
  EXPECT_EQ(text(ConnectColumn::BinaryText::kBase64), "+/8+");
  EXPECT_EQ(text(ConnectColumn::BinaryText::kBase64UrlSafe), "-_8-");
  EXPECT_EQ(text(ConnectColumn::BinaryText::kHex), "fbff3e");
  std::string json;
  column.binary = ConnectColumn::BinaryText::kBase64;
  ASSERT_TRUE(AppendConnectJsonValue(column, 17, "\\x00", &json).ok());
  EXPECT_EQ(json, R"("AA==")");
  std::string schema;
  AppendConnectJsonSchema(column, 17, -1, false, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":false})");
}

// hstore.handling.mode=map: the HashMap's pairs as SimpleHeaderConverter, JsonConverter and HashMap.toString write
// a map, in the map's order (as the JSON mode's).
TEST(DecimalModeTest, HstoreMapsAreWrittenAsConnectWritesAMap) {
  const std::string text = R"("b"=>"2", "a"=>NULL, "q\"x"=>"\\")";
  EXPECT_EQ(ValueOf(ConnectForm::kHstoreMap, text), R"({"a":null,"b":"2","q\"x":"\\"})");
  std::string json, java;
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kHstoreMap}, 0, text, &json).ok());
  EXPECT_EQ(json, R"({"a":null,"b":"2","q\"x":"\\"})");
  ASSERT_TRUE(AppendJavaToString(ConnectColumn{ConnectForm::kHstoreMap}, text, &java).ok());
  EXPECT_EQ(java, R"({a=null, b=2, q"x=\})");
  EXPECT_EQ(*DebeziumHstoreJson(text), R"({"a":null,"b":"2","q\"x":"\\"})");
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kHstoreMap}, 0, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"map","keys":{"type":"string","optional":false},"values":{"type":"string",)"
                    R"("optional":true},"optional":true})");
}

// time.precision.mode=connect: a java.util.Date of the value, which SimpleHeaderConverter formats by its value alone
// (a date before 1970, or midnight 1970-01-01, as a time; 24:00:00 as a date) and JsonConverter writes as days or
// milliseconds.
TEST(DecimalModeTest, ConnectTemporalsAreJavaUtilDatesAsKafkaConnectFormatsThem) {
  EXPECT_EQ(ValueOf(ConnectForm::kConnectDate, "2026-12-03"), "2026-12-03");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectDate, "1970-01-01"), "00:00:00.000Z");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectDate, "1900-02-28"), "00:00:00.000Z");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectTime, "13:45:07.123456"), "13:45:07.123Z");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectTime, "24:00:00"), "1970-01-02");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectTimestamp, "2026-12-03 13:45:07.1239"), "2026-12-03T13:45:07.123Z");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectTimestamp, "2026-12-03 00:00:00"), "2026-12-03");
  EXPECT_EQ(ValueOf(ConnectForm::kConnectTimestamp, "1969-12-31 23:59:59.9995"), "23:59:59.999Z");
  std::string json;
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kConnectDate}, 1082, "1969-12-31", &json).ok());
  EXPECT_EQ(json, "-1");
  json.clear();
  ASSERT_TRUE(AppendConnectJsonValue(ConnectColumn{ConnectForm::kConnectTimestamp}, 1114, "1969-12-31 23:59:59.9995",
                                     &json).ok());
  EXPECT_EQ(json, "-1");
  EXPECT_FALSE(CheckJavaText(ConnectColumn{ConnectForm::kConnectTime}).ok());
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kConnectTime}, 1083, 3, true, &schema);
  EXPECT_EQ(schema, R"({"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time","version":1})");
}

// time.precision.mode=isostring: ISO 8601 text in UTC, the fraction as long as needed, 24:00:00 as midnight.
TEST(DecimalModeTest, IsoStringTemporalsAreDebeziumsIsoText) {
  EXPECT_EQ(ValueOf(ConnectForm::kIsoDate, "2026-12-03"), "2026-12-03Z");
  EXPECT_EQ(ValueOf(ConnectForm::kIsoTime, "13:45:07.120"), "13:45:07.12Z");
  EXPECT_EQ(ValueOf(ConnectForm::kIsoTime, "13:45:00"), "13:45:00Z");
  EXPECT_EQ(ValueOf(ConnectForm::kIsoTime, "24:00:00"), "00:00:00Z");
  EXPECT_EQ(ValueOf(ConnectForm::kIsoTimestamp, "1960-01-01 00:00:00.000001"), "1960-01-01T00:00:00.000001Z");
  EXPECT_EQ(ValueOf(ConnectForm::kIsoTimestamp, "2026-12-03 00:00:00"), "2026-12-03T00:00:00Z");
  std::string schema;
  AppendConnectJsonSchema(ConnectColumn{ConnectForm::kIsoTimestamp}, 1114, -1, false, &schema);
  EXPECT_EQ(schema, R"({"type":"string","optional":false,"name":"io.debezium.time.IsoTimestamp","version":1})");
}

// An array under the modes (Debezium converts each element with its type's converter, from pgjdbc's java.sql value):
// numeric elements as strings or doubles, bytea elements as hex, time elements with milliseconds only, hstore elements
// as maps; strings quoted by SimpleHeaderConverter and not by List.toString; the schema an array of the mode's schema.
TEST(DecimalModeTest, ArrayElementsAreWrittenAsTheModeWritesAColumnOfTheirType) {
  const auto array = [](ConnectForm element, uint32_t element_type) {
    ConnectColumn column{ConnectForm::kArray};
    column.element = element;
    column.element_type = element_type;
    return column;
  };
  const auto header = [](const ConnectColumn& column, std::string_view text) { return ValueOf(column, text); };
  const auto json = [](const ConnectColumn& column, std::string_view text) {
    std::string out;
    absl::Status st = AppendConnectJsonValue(column, 0, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  const auto java = [](const ConnectColumn& column, std::string_view text) {
    std::string out;
    absl::Status st = AppendJavaToString(column, text, &out);
    return st.ok() ? out : std::string(st.message());
  };
  const ConnectColumn strings = array(ConnectForm::kDecimalString, 1700);
  EXPECT_EQ(header(strings, "{12.50,NULL,-0.001}"), R"(["12.50",null,"-0.001"])");
  EXPECT_EQ(json(strings, "{12.50,NULL}"), R"(["12.50",null])");
  EXPECT_EQ(java(strings, "{12.50,NULL}"), "[12.50, null]");
  const ConnectColumn doubles = array(ConnectForm::kFloat64, 1700);
  EXPECT_EQ(header(doubles, "{12.50,12345678901234567890}"), "[12.5,1.2345678901234567E19]");
  std::string schema;
  AppendConnectJsonSchema(doubles, 1231, -1, true, &schema);
  EXPECT_EQ(schema, R"({"type":"array","items":{"type":"double","optional":true},"optional":true})");

  ConnectColumn hex = array(ConnectForm::kBinaryString, 17);
  hex.binary = ConnectColumn::BinaryText::kHex;
  EXPECT_EQ(header(hex, R"({"\\xfbff3e",NULL})"), R"(["fbff3e",null])");

  const ConnectColumn iso = array(ConnectForm::kIsoTime, 1083);
  EXPECT_EQ(header(iso, "{13:45:07.123456,00:00:00.000999}"), R"(["13:45:07.123Z","00:00:00Z"])");
  EXPECT_EQ(java(iso, "{12:00:00.5}"), "[12:00:00.5Z]");
  EXPECT_EQ(header(array(ConnectForm::kTimeNanos, 1083), "{13:45:07.123456}"), "[49507123000000]");
  EXPECT_EQ(header(array(ConnectForm::kConnectTime, 1083), "{13:45:07.123456}"), "[13:45:07.123Z]");
  EXPECT_EQ(header(array(ConnectForm::kIsoTimestamp, 1114), "{\"2026-12-03 13:45:07.123456\"}"),
            R"(["2026-12-03T13:45:07.123456Z"])");

  const ConnectColumn maps = array(ConnectForm::kHstoreMap, 0);
  EXPECT_EQ(header(maps, R"({"\"b\"=>\"2\", \"a\"=>NULL",NULL})"), R"([{"a":null,"b":"2"},null])");
  EXPECT_EQ(json(maps, R"({"\"b\"=>\"2\""})"), R"([{"b":"2"}])");
  EXPECT_EQ(java(maps, R"({"\"b\"=>\"2\", \"a\"=>NULL"})"), "[{a=null, b=2}]");
}

}  // namespace
}  // namespace outbox::outbox
