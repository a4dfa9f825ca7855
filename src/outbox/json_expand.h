// Debezium's expanded JSON payload (the Outbox Event Router's table.expand.json.payload=true), redone byte for byte:
// the payload column's text is parsed as Jackson's ObjectMapper.readTree parses it, a Kafka Connect schema is
// inferred from it and a value built as Debezium 3.6.1's JsonSchemaData does (toConnectSchema, toConnectData), and
// the result is written the three ways a converter writes it: the schema and the value as Kafka Connect's
// JsonConverter writes them (asJsonSchema, convertToJson), and the value as StringConverter writes it
// (Struct.toString). Pure: no I/O, no state; any thread.
//
// The steps, and where each can stop (EventRouterDelegate.apply catches any exception of both steps and only
// warns, but by then the payload's schema may already have been replaced):
//
//   text --(starts with { or [, readTree)--> tree --(toConnectSchema)--> schema --(toConnectData)--> Struct
//            | no / not JSON                          | throws       | null               | throws
//            v                                        v              v                    v
//        kKeptAsText                             kKeptAsText   kKeptWithoutSchema   kFailsInJsonConverter
//
// Numbers keep Jackson's classes: an integer in int range is INT32, in long range INT64, a bigger one a
// BigInteger (schema FLOAT64, value a BigDecimal that the Struct refuses); a fraction or exponent a double
// (FLOAT64, written with Java's Double.toString). Arrays of objects merge their element schemas (mergeSchema):
// Debezium iterates those schemas in a HashSet, whose order depends on identity hash codes and so changes from one
// JVM to the next; here they merge in the order their elements come. Field names are adjusted as the router's
// field.name.adjustment.mode says (AdjustFieldName).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"

namespace outbox::outbox {

// What became of one payload.
enum class ExpandOutcome : uint8_t {
  kExpanded,              // schema_json, value_json and text hold the expanded payload
  kKeptAsText,            // not expanded (not JSON, no { or [ first, or no schema could be inferred): the payload
                          // stays its text with its column's schema, as if expansion were off
  kKeptWithoutSchema,     // the payload stays its text but its schema became null (a top-level [] that the empty
                          // array behavior ignores): JsonConverter writes it as a schemaless string,
                          // {"schema":null,"payload":"[]"} with schemas; envelope placement would fail
  kFailsInJsonConverter,  // a schema was inferred (schema_json) but the value does not fit it (a top-level array,
                          // an integer beyond long, an array whose elements differ deeper down): the payload stays
                          // its text under that schema, which JsonConverter refuses (Kafka Connect fails the task)
                          // and StringConverter writes as the text
};

// The field name Debezium's router gives the JSON key `name` (WTF-8) under field.name.adjustment.mode
// (FieldNameSelector over SchemaNameAdjuster.AVRO_FIELD_NAMER or AVRO_UNICODE_FIELD_NAMER), Java character by Java
// character (UTF-16 code unit: a character beyond U+FFFF is two):
//   avro          legal: a-z A-Z _ and, after the first, 0-9; any other character becomes _, and a leading digit
//                 _ and itself (1a: _1a)
//   avro_unicode  legal: a-z A-Z and, after the first, 0-9; any other character becomes _u and its code in lower
//                 hex, padded with 00 only when it has one or two digits (_: _u005f, é: _u00e9, Ā: _u100)
// Two names may become one (a-b and a.b: a_b). The adjuster's conflict check never fires: it keeps its memory of
// earlier replacements in a ReplacementOccurred.firstTimeOnly() that it makes anew at every call.
std::string AdjustFieldName(const std::string& name, config::FieldNameAdjustment mode);

struct ExpandOptions {
  config::JsonNullBehavior null_behavior = config::JsonNullBehavior::kIgnore;
  config::JsonEmptyArrayBehavior empty_array_behavior = config::JsonEmptyArrayBehavior::kIgnore;
  config::FieldNameAdjustment field_names = config::FieldNameAdjustment::kNone;
};

struct ExpandedPayload {
  ExpandOutcome outcome = ExpandOutcome::kKeptAsText;
  // kExpanded and kFailsInJsonConverter: the schema as JsonConverter.asJsonSchema writes it
  // ({"type":"struct","fields":[…],"optional":true,"name":"payload"}).
  std::string schema_json;
  // kExpanded: the value as JsonConverter writes it with schemas.enable=false ({"a":1,"b":null}).
  std::string value_json;
  // kExpanded: the value as StringConverter writes it (Struct.toString: Struct{a=1}, null fields left out).
  std::string text;
  // kExpanded: how deep schema_json and value_json nest (the outermost object counts 1). Jackson's writer refuses
  // to nest deeper than kJacksonMaxWriteDepth: JsonConverter with schemas.enable=true, which nests both one deeper,
  // fails on a payload nested 1000 deep that it reads and writes without schemas.
  int schema_depth = 0;
  int value_depth = 0;
  // Otherwise: why, in one lowercase phrase (what Debezium's warning or JsonConverter's exception would say).
  std::string reason;
};

// Jackson's StreamWriteConstraints default (2.16 and later; Kafka Connect 4.1.1's JsonConverter has 2.19).
inline constexpr int kJacksonMaxWriteDepth = 1000;

// Whether Debezium's value of a payload column of `type_oid` is a Java String, the only kind it expands (text,
// varchar, char, name, json, jsonb, uuid, xml, inet, cidr, macaddr): a bytea payload, for one, is left as it is.
bool ExpandsColumnType(uint32_t type_oid);

// Expands one payload `text` (UTF-8) of the column `field_name` (the root struct's name).
ExpandedPayload ExpandJsonPayload(std::string_view text, std::string_view field_name, const ExpandOptions& options);

}  // namespace outbox::outbox
