// Debezium's expanded JSON payload. The expected texts are what Debezium 3.6.1's JsonSchemaData (under Jackson 2.21)
// and Kafka Connect 4.1.1's JsonConverter and Struct.toString make of each payload on Java 17, as
// tests/outbox/JsonExpandOracle.java prints them (json_expand_differential_test runs them all through it again),
// except the optional_string cases: that behaviour arrived in Debezium 3.7, and its expected texts follow its code.
#include "outbox/json_expand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace outbox::outbox {
namespace {

using config::JsonEmptyArrayBehavior;
using config::JsonNullBehavior;

constexpr ExpandOptions kIgnore{};
constexpr ExpandOptions kKeepNullsAndEmptyArrays{.null_behavior = JsonNullBehavior::kOptionalBytes,
                                                 .empty_array_behavior = JsonEmptyArrayBehavior::kOptionalString};

ExpandedPayload Expand(std::string_view text, const ExpandOptions& options = kIgnore) {
  return ExpandJsonPayload(text, "payload", options);
}

// The value as JsonConverter (schemas.enable=false) and StringConverter write it, once expanded.
void ExpectExpanded(std::string_view text, std::string_view json, std::string_view to_string,
                    const ExpandOptions& options = kIgnore) {
  const ExpandedPayload e = Expand(text, options);
  ASSERT_EQ(e.outcome, ExpandOutcome::kExpanded) << text << ": " << e.reason;
  EXPECT_EQ(e.value_json, json) << text;
  EXPECT_EQ(e.text, to_string) << text;
}

void ExpectOutcome(std::string_view text, ExpandOutcome outcome, const ExpandOptions& options = kIgnore) {
  EXPECT_EQ(Expand(text, options).outcome, outcome) << text << ": " << Expand(text, options).reason;
}

TEST(JsonExpandTest, IntegersAreInt32WithinIntAndInt64WithinLong) {
  const ExpandedPayload e = Expand(R"({"i":2147483647,"j":2147483648,"k":-2147483648,"l":-2147483649,"z":-0})");
  ASSERT_EQ(e.outcome, ExpandOutcome::kExpanded) << e.reason;
  EXPECT_EQ(e.schema_json,
            R"({"type":"struct","fields":[{"type":"int32","optional":true,"field":"i"},)"
            R"({"type":"int64","optional":true,"field":"j"},{"type":"int32","optional":true,"field":"k"},)"
            R"({"type":"int64","optional":true,"field":"l"},{"type":"int32","optional":true,"field":"z"}],)"
            R"("optional":true,"name":"payload"})");
  EXPECT_EQ(e.value_json, R"({"i":2147483647,"j":2147483648,"k":-2147483648,"l":-2147483649,"z":0})");
  EXPECT_EQ(e.text, "Struct{i=2147483647,j=2147483648,k=-2147483648,l=-2147483649,z=0}");
  ExpectExpanded(R"({"m":9223372036854775807,"n":-9223372036854775808})",
                 R"({"m":9223372036854775807,"n":-9223372036854775808})",
                 "Struct{m=9223372036854775807,n=-9223372036854775808}");
}

TEST(JsonExpandTest, AnIntegerBeyondLongGetsADoubleSchemaThatItsBigDecimalDoesNotFit) {
  for (std::string_view text : {R"({"big":9223372036854775808})", R"({"big":-9223372036854775809})",
                                R"({"a":[1.5,123456789012345678901]})", R"({"a":{"b":[99999999999999999999]}})"}) {
    const ExpandedPayload e = Expand(text);
    EXPECT_EQ(e.outcome, ExpandOutcome::kFailsInJsonConverter) << text;
  }
  EXPECT_EQ(Expand(R"({"big":9223372036854775808})").schema_json,
            R"({"type":"struct","fields":[{"type":"double","optional":true,"field":"big"}],"optional":true,)"
            R"("name":"payload"})");
}

TEST(JsonExpandTest, FractionsAndExponentsAreDoublesInJavasDoubleToString) {
  ExpectExpanded(R"({"a":1e20,"b":0.1,"c":-0.0,"d":1.0,"e":1E-7,"f":1e400,"g":-1e400,"h":1e-400,"i":123456789.0,)"
                 R"("j":0.001,"k":1e7,"l":1.5e-3})",
                 R"({"a":1.0E20,"b":0.1,"c":-0.0,"d":1.0,"e":1.0E-7,"f":"Infinity","g":"-Infinity","h":0.0,)"
                 R"("i":1.23456789E8,"j":0.001,"k":1.0E7,"l":0.0015})",
                 "Struct{a=1.0E20,b=0.1,c=-0.0,d=1.0,e=1.0E-7,f=Infinity,g=-Infinity,h=0.0,i=1.23456789E8,j=0.001,"
                 "k=1.0E7,l=0.0015}");
  EXPECT_EQ(Expand(R"({"a":0.5})").schema_json,
            R"({"type":"struct","fields":[{"type":"double","optional":true,"field":"a"}],"optional":true,)"
            R"("name":"payload"})");
}

TEST(JsonExpandTest, NestedObjectsAreStructsNamedByTheirKeyPath) {
  const ExpandedPayload e = ExpandJsonPayload(R"({"a":{"b":{"c":"x"},"t":true}})", "body", kIgnore);
  ASSERT_EQ(e.outcome, ExpandOutcome::kExpanded) << e.reason;
  EXPECT_EQ(e.schema_json,
            R"({"type":"struct","fields":[{"type":"struct","fields":[{"type":"struct","fields":[)"
            R"({"type":"string","optional":true,"field":"c"}],"optional":true,"name":"body.a.b","field":"b"},)"
            R"({"type":"boolean","optional":true,"field":"t"}],"optional":true,"name":"body.a","field":"a"}],)"
            R"("optional":true,"name":"body"})");
  EXPECT_EQ(e.value_json, R"({"a":{"b":{"c":"x"},"t":true}})");
  EXPECT_EQ(e.text, "Struct{a=Struct{b=Struct{c=x},t=true}}");
  ExpectExpanded("{}", "{}", "Struct{}");
  EXPECT_EQ(Expand("{}").schema_json, R"({"type":"struct","fields":[],"optional":true,"name":"payload"})");
}

TEST(JsonExpandTest, ArraysOfScalarsAreListsOfTheFirstElementsType) {
  ExpectExpanded(R"({"a":[1,2,3],"s":["x","y"],"b":[true,false],"n":[null,1,null,2]})",
                 R"({"a":[1,2,3],"s":["x","y"],"b":[true,false],"n":[null,1,null,2]})",
                 "Struct{a=[1, 2, 3],s=[x, y],b=[true, false],n=[null, 1, null, 2]}");
  EXPECT_EQ(Expand(R"({"a":[1]})").schema_json,
            R"({"type":"struct","fields":[{"type":"array","items":{"type":"int32","optional":true},)"
            R"("optional":true,"field":"a"}],"optional":true,"name":"payload"})");
  ExpectExpanded(R"({"a":[[1],[2,3],[]]})", R"({"a":[[1],[2,3],[]]})", "Struct{a=[[1], [2, 3], []]}");
}

TEST(JsonExpandTest, AnArrayOfMixedTypesIsNotExpandedButOneMixedDeeperDownFailsInTheConverter) {
  for (std::string_view text : {R"({"a":[1,"x"]})", R"({"a":[1,2.5]})", R"({"a":[1,3000000000]})",
                                R"({"a":[{"x":1},2]})", R"({"a":[[],[1]]})", R"({"a":[null]})"}) {
    ExpectOutcome(text, ExpandOutcome::kKeptAsText);
  }
  // Only the first element of an array of arrays gives the schema; the others meet it in Struct.put.
  ExpectOutcome(R"({"a":[[1],["x"]]})", ExpandOutcome::kFailsInJsonConverter);
  ExpectOutcome(R"({"a":[[1],[{"b":1}]]})", ExpandOutcome::kFailsInJsonConverter);
}

TEST(JsonExpandTest, ArraysOfObjectsMergeTheirSchemasIntoARequiredStruct) {
  const ExpandedPayload merged = Expand(R"({"a":[{"x":1,"y":2},{"x":3}]})");
  ASSERT_EQ(merged.outcome, ExpandOutcome::kExpanded) << merged.reason;
  EXPECT_EQ(merged.schema_json,
            R"({"type":"struct","fields":[{"type":"array","items":{"type":"struct","fields":[)"
            R"({"type":"int32","optional":true,"field":"x"},{"type":"int32","optional":true,"field":"y"}],)"
            R"("optional":false,"name":"payload.a"},"optional":true,"field":"a"}],"optional":true,"name":"payload"})");
  EXPECT_EQ(merged.value_json, R"({"a":[{"x":1,"y":2},{"x":3,"y":null}]})");
  EXPECT_EQ(merged.text, "Struct{a=[Struct{x=1,y=2}, Struct{x=3}]}");
  // Elements of one schema are not merged: the struct stays optional, and a null element fits it.
  const ExpandedPayload same = Expand(R"({"a":[{"x":1},null,{"x":2}]})");
  ASSERT_EQ(same.outcome, ExpandOutcome::kExpanded) << same.reason;
  EXPECT_NE(same.schema_json.find(R"("optional":true,"name":"payload.a")"), std::string::npos) << same.schema_json;
  EXPECT_EQ(same.text, "Struct{a=[Struct{x=1}, null, Struct{x=2}]}");
  // A null element of a merged (required) struct, and a field whose types differ, fail in Struct.put.
  ExpectOutcome(R"({"a":[{"x":1},{"y":2},null]})", ExpandOutcome::kFailsInJsonConverter);
  ExpectOutcome(R"({"a":[{"x":1},{"x":"s"}]})", ExpandOutcome::kFailsInJsonConverter);
  // A null field's bytes schema gives way to another element's.
  ExpectExpanded(R"({"a":[{"x":null},{"x":1}]})", R"({"a":[{"x":null},{"x":1}]})", "Struct{a=[Struct{}, Struct{x=1}]}",
                 kKeepNullsAndEmptyArrays);
  // Objects in an array of arrays have no key: their struct has no name, and their fields' keys start afresh.
  const ExpandedPayload deep = Expand(R"({"a":[[{"x":{"y":1}}]]})");
  ASSERT_EQ(deep.outcome, ExpandOutcome::kExpanded) << deep.reason;
  EXPECT_EQ(deep.schema_json,
            R"({"type":"struct","fields":[{"type":"array","items":{"type":"array","items":{"type":"struct",)"
            R"("fields":[{"type":"struct","fields":[{"type":"int32","optional":true,"field":"y"}],"optional":true,)"
            R"("name":"x","field":"x"}],"optional":true},"optional":true},"optional":true,"field":"a"}],)"
            R"("optional":true,"name":"payload"})");
}

TEST(JsonExpandTest, NullsAndEmptyArraysAreLeftOutOrKeptAsTheBehaviorsSay) {
  const std::string_view text = R"({"a":null,"b":1,"c":[],"d":{"e":null}})";
  const ExpandedPayload ignored = Expand(text);
  ASSERT_EQ(ignored.outcome, ExpandOutcome::kExpanded);
  EXPECT_EQ(ignored.schema_json,
            R"({"type":"struct","fields":[{"type":"int32","optional":true,"field":"b"},{"type":"struct","fields":[],)"
            R"("optional":true,"name":"payload.d","field":"d"}],"optional":true,"name":"payload"})");
  EXPECT_EQ(ignored.value_json, R"({"b":1,"d":{}})");
  EXPECT_EQ(ignored.text, "Struct{b=1,d=Struct{}}");
  const ExpandedPayload kept = Expand(text, kKeepNullsAndEmptyArrays);
  ASSERT_EQ(kept.outcome, ExpandOutcome::kExpanded);
  EXPECT_EQ(kept.schema_json,
            R"({"type":"struct","fields":[{"type":"bytes","optional":true,"field":"a"},)"
            R"({"type":"int32","optional":true,"field":"b"},{"type":"array","items":{"type":"string",)"
            R"("optional":true},"optional":true,"field":"c"},{"type":"struct","fields":[{"type":"bytes",)"
            R"("optional":true,"field":"e"}],"optional":true,"name":"payload.d","field":"d"}],"optional":true,)"
            R"("name":"payload"})");
  EXPECT_EQ(kept.value_json, R"({"a":null,"b":1,"c":[],"d":{"e":null}})");
  EXPECT_EQ(kept.text, "Struct{b=1,c=[],d=Struct{}}");
  ExpectExpanded(R"({"a":[null,null]})", R"({"a":[null,null]})", "Struct{a=[null, null]}", kKeepNullsAndEmptyArrays);
  // An empty array first makes the element schema an array of strings, which the next one meets.
  ExpectExpanded(R"({"a":[[],["x"]]})", R"({"a":[[],["x"]]})", "Struct{a=[[], [x]]}", kKeepNullsAndEmptyArrays);
  ExpectOutcome(R"({"a":[[],[1]]})", ExpandOutcome::kFailsInJsonConverter, kKeepNullsAndEmptyArrays);
}

TEST(JsonExpandTest, ATopLevelArrayIsNeverAStruct) {
  ExpectOutcome("[1,2]", ExpandOutcome::kFailsInJsonConverter);
  ExpectOutcome(R"([{"a":1}])", ExpandOutcome::kFailsInJsonConverter);
  ExpectOutcome("[1,\"x\"]", ExpandOutcome::kKeptAsText);  // no schema: never reassigned
  ExpectOutcome("[]", ExpandOutcome::kKeptWithoutSchema);  // its schema, null, replaces the column's
  ExpectOutcome("[]", ExpandOutcome::kFailsInJsonConverter, kKeepNullsAndEmptyArrays);
  EXPECT_EQ(Expand("[1,2]").schema_json, R"({"type":"array","items":{"type":"int32","optional":true},"optional":true})");
}

TEST(JsonExpandTest, StringsAndNamesAreWrittenWithJacksonsEscapes) {
  ExpectExpanded(R"({"s":"q\" b\\ \/ \n\t\u0001 é ☕ 😀 \ud83d\ude00 \uD800x \udc00","k\"\u00e9":1})",
                 R"({"s":"q\" b\\ / \n\t\u0001 é ☕ \uD83D\uDE00 \uD83D\uDE00 \uD800x \uDC00","k\"é":1})",
                 "Struct{s=q\" b\\ / \n\t\x01 é ☕ 😀 😀 ?x ?,k\"é=1}");
}

TEST(JsonExpandTest, ARepeatedKeyKeepsItsFirstPlaceAndItsLastValue) {
  ExpectExpanded(R"({"a":1,"b":2,"a":"x"})", R"({"a":"x","b":2})", "Struct{a=x,b=2}");
  ExpectExpanded(R"({"a":{"x":1},"a":null,"b":2})", R"({"b":2})", "Struct{b=2}");
}

TEST(JsonExpandTest, AnEmptyFieldNameStopsTheSchemaUnlessTheFieldIsLeftOut) {
  ExpectOutcome(R"({"":1})", ExpandOutcome::kKeptAsText);
  ExpectExpanded(R"({"":null,"a":1})", R"({"a":1})", "Struct{a=1}");
  ExpectOutcome(R"({"":null})", ExpandOutcome::kKeptAsText, kKeepNullsAndEmptyArrays);
}

TEST(JsonExpandTest, OnlyJsonThatStartsWithABraceOrBracketIsRead) {
  for (std::string_view text : {"", "hello", " {\"a\":1}", "\n[1]", "\"{}\"", "123", "null"}) {
    ExpectOutcome(text, ExpandOutcome::kKeptAsText);
  }
  // readTree reads the first value and never looks further.
  ExpectExpanded(R"({"a":1} and then some)", R"({"a":1})", "Struct{a=1}");
  ExpectExpanded(R"({"a":1}})", R"({"a":1})", "Struct{a=1}");
  ExpectExpanded("{ \"a\" :\r\n\t[ 1 , 2 ] }", R"({"a":[1,2]})", "Struct{a=[1, 2]}");
}

TEST(JsonExpandTest, JsonJacksonRefusesIsKeptAsText) {
  for (std::string_view text :
       {R"({"a":01})", R"({"a":-01})", R"({"a":1,})", R"([1,])", R"({"a":NaN})", R"({'a':1})", R"({a:1})",
        R"({"a":1)", "{\"a\":\"x\ny\"}", R"({"a":.5})", R"({"a":1.})", R"({"a":1e})", R"({"a":+1})",
        R"({"a":-})", R"({"a":tru})", R"({"a":"\x"})", R"({"a":"\u12"})", R"({"a":1 /* c */})", "{\"a\":1\f}",
        R"({"a" 1})", R"({"a":[1 2]})", "{\"a\":\"unterminated}"}) {
    ExpectOutcome(text, ExpandOutcome::kKeptAsText);
  }
}

TEST(JsonExpandTest, JacksonsLimitsOnDepthAndNumberLength) {
  const auto nested = [](int arrays) {
    return "{\"a\":" + std::string(arrays, '[') + "1" + std::string(arrays, ']') + "}";
  };
  ExpectOutcome(nested(999), ExpandOutcome::kExpanded);  // depth 1000 with the object
  ExpectOutcome(nested(1000), ExpandOutcome::kKeptAsText);
  ExpectOutcome("{\"a\":" + std::string(1000, '9') + "}", ExpandOutcome::kFailsInJsonConverter);
  ExpectOutcome("{\"a\":" + std::string(1001, '9') + "}", ExpandOutcome::kKeptAsText);
  // A fraction's digits count, and the integer part's unless it is a lone 0.
  ExpectOutcome("{\"a\":1." + std::string(999, '5') + "}", ExpandOutcome::kExpanded);
  ExpectOutcome("{\"a\":1." + std::string(1000, '5') + "}", ExpandOutcome::kKeptAsText);
  ExpectOutcome("{\"a\":0." + std::string(1000, '5') + "}", ExpandOutcome::kExpanded);
  ExpectOutcome("{\"a\":0." + std::string(1001, '5') + "}", ExpandOutcome::kKeptAsText);
  // Read 1000 deep, written 1000 deep without a schema, but deeper inside JsonConverter's envelope.
  const ExpandedPayload deepest = Expand(nested(999));
  EXPECT_EQ(deepest.value_depth, 1000);
  EXPECT_GT(deepest.schema_depth, kJacksonMaxWriteDepth);
}

// field.name.adjustment.mode avro: an illegal character becomes _, a leading digit _ and itself. Debezium then looks
// each field up in the document by its new name, so a field whose name changed is null unless the document also
// has a key of that name (whose value it then takes).
TEST(JsonExpandTest, AvroAdjustedFieldNamesAreLookedUpByTheirNewNames) {
  const ExpandOptions avro{.field_names = config::FieldNameAdjustment::kAvro};
  ExpectExpanded("{\"a-b\":1,\"1a\":true,\"_x\":\"s\",\"\u00e9\":2,\"\U0001F600\":3,\"A9\":4}",
                 R"({"a_b":null,"_1a":null,"_x":"s","_":null,"__":null,"A9":4})", "Struct{_x=s,A9=4}", avro);
  ExpectExpanded(R"({"a-b":1,"a_b":2})", R"({"a_b":2})", "Struct{a_b=2}", avro);
  const ExpandedPayload nested = Expand(R"({"x-y":{"p q":1}})", avro);
  ASSERT_EQ(nested.outcome, ExpandOutcome::kExpanded) << nested.reason;
  EXPECT_EQ(nested.schema_json,
            R"({"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":true,"field":"p_q"}],)"
            R"("optional":true,"name":"payload.x_y","field":"x_y"}],"optional":true,"name":"payload"})");
  EXPECT_EQ(nested.value_json, R"({"x_y":null})");
}

// field.name.adjustment.mode avro_unicode: _ is illegal too, and an illegal character becomes _u and its lower-case
// hex code, padded with 00 only when that has one or two digits.
TEST(JsonExpandTest, AvroUnicodeAdjustedFieldNamesSpellTheCharactersCode) {
  const ExpandOptions unicode{.field_names = config::FieldNameAdjustment::kAvroUnicode};
  ExpectExpanded("{\"a_b\":1,\"\u00e9\":2,\"\u0100b\":3,\"1a\":4,\"a b\":5,\"ok9\":6}",
                 R"({"a_u005fb":null,"_u00e9":null,"_u100b":null,"_u0031a":null,"a_u0020b":null,"ok9":6})",
                 "Struct{ok9=6}", unicode);
}

// Two names that become one make one field, the first one's schema: Debezium's adjuster would throw on such a
// conflict, but its memory of earlier replacements is made anew at every call, so it never does.
TEST(JsonExpandTest, NamesThatBecomeOneMakeOneField) {
  const ExpandOptions avro{.field_names = config::FieldNameAdjustment::kAvro};
  ExpectExpanded(R"({"a-b":1,"a.b":"x","a b":true})", R"({"a_b":null})", "Struct{}", avro);
  const ExpandedPayload e = Expand(R"({"a.b":"x","a_b":"y"})", avro);
  ASSERT_EQ(e.outcome, ExpandOutcome::kExpanded) << e.reason;
  EXPECT_EQ(e.schema_json,
            R"({"type":"struct","fields":[{"type":"string","optional":true,"field":"a_b"}],"optional":true,)"
            R"("name":"payload"})");
  EXPECT_EQ(e.value_json, R"({"a_b":"y"})");
  // The value under the new name need not fit the first one's schema: Struct.put fails, as in Debezium.
  ExpectOutcome(R"({"a-b":1,"a_b":"y"})", ExpandOutcome::kFailsInJsonConverter, avro);
  // none, the default, leaves them as they are.
  ExpectExpanded(R"({"a-b":1,"a.b":2})", R"({"a-b":1,"a.b":2})", "Struct{a-b=1,a.b=2}");
}

TEST(JsonExpandTest, OnlyPayloadsDebeziumHoldsAsStringsAreExpanded) {
  constexpr uint32_t kBytea = 17, kInt8 = 20, kInt4 = 23, kText = 25, kJson = 114, kVarchar = 1043, kUuid = 2950,
                     kJsonb = 3802, kTextArray = 1009, kTimestamp = 1114;
  for (uint32_t type : {kText, kJson, kVarchar, kUuid, kJsonb}) EXPECT_TRUE(ExpandsColumnType(type)) << type;
  for (uint32_t type : {kBytea, kInt8, kInt4, kTextArray, kTimestamp}) EXPECT_FALSE(ExpandsColumnType(type)) << type;
}

}  // namespace
}  // namespace outbox::outbox
