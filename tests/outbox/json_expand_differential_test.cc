// ExpandJsonPayload against Debezium 3.6.1's JsonSchemaData and Kafka Connect 4.1.1's converters themselves:
// tests/outbox/JsonExpandOracle.java runs each payload through them on the JDK (as Kafka Connect runs Debezium),
// and every outcome and every byte of the three converters' output must be the same. The payloads: the edge cases
// of json_expand_test and a few thousand generated documents. Arrays of objects whose element schemas differ are
// left out of the generated ones: Debezium merges those in a HashSet's order, which differs from one JVM to the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "outbox/connect_header.h"
#include "outbox/json_expand.h"

namespace outbox::outbox {
namespace {

std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

// Kafka Connect's jars and Debezium's plugin directory, as bench/install-bench-deps.sh caches them ("" if absent).
std::string OracleClassPath() {
  const std::string out = Shell(std::string("bash -c 'source \"$0/scripts/versions.sh\" && source "
                                            "\"$0/bench/bench-versions.sh\" && echo \"$DEBEZIUM_PLUGIN_DIR\" && "
                                            "echo \"$DEBEZIUM_CONNECT_LIB\"' ") + OUTBOX_SOURCE_DIR);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  if (lines.size() < 2 || !std::filesystem::is_directory(lines[0]) || !std::filesystem::is_directory(lines[1])) return "";
  // Debezium's own Jackson first, as Kafka Connect's plugin class loader gives it to the router.
  return lines[0] + "/*:" + lines[1] + "/*";
}

// What the oracle prints for one payload: outcome, JsonConverter without and with schemas, StringConverter.
std::string Ours(std::string_view payload, config::JsonNullBehavior nulls, config::FieldNameAdjustment names) {
  const ExpandedPayload e =
      ExpandJsonPayload(payload, "payload", ExpandOptions{.null_behavior = nulls, .field_names = names});
  std::string text_json;
  AppendJsonString(payload, &text_json);
  switch (e.outcome) {
    case ExpandOutcome::kExpanded:
      return "expanded\n" + e.value_json + "\n" +
             (1 + std::max(e.schema_depth, e.value_depth) > kJacksonMaxWriteDepth
                  ? "FAILS DataException"
                  : "{\"schema\":" + e.schema_json + ",\"payload\":" + e.value_json + "}") +
             "\n" + e.text;
    case ExpandOutcome::kKeptAsText:
      return "kept\n" + text_json + "\n{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":" +
             text_json + "}\n" + std::string(payload);
    case ExpandOutcome::kKeptWithoutSchema:
      return "kept_without_schema\n" + text_json + "\n{\"schema\":null,\"payload\":" + text_json + "}\n" +
             std::string(payload);
    case ExpandOutcome::kFailsInJsonConverter:
      return "fails_in_json_converter\nFAILS DataException\nFAILS DataException\n" + std::string(payload);
  }
  return "";
}

// Documents whose schemas are decided by their first elements only (see the file comment).
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  std::string Document() { return Object(0); }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::string Scalar() {
    static const char* const kScalars[] = {
        "0", "-0", "1", "-1", "2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "0.1", "-0.0", "1e20", "1E-7", "1e400", "-1e400", "1e-400",
        "123.456", "1.0", "0.5e1", "12345678.9", "true", "false", "null", "\"\"", "\"x\"", R"("q\"\\\/\b\f\n\r\t")",
        R"("\u0000\u001f é ☕ 😀 \ud83d\ude00")", R"("\uD800")", "[]", "{}"};
    return kScalars[Pick(std::size(kScalars))];
  }

  std::string Value(int depth) {
    const size_t kind = depth > 3 ? 0 : Pick(6);
    if (kind <= 2) return Scalar();
    if (kind == 3) return Object(depth + 1);
    if (kind == 4) {
      // An array of one scalar kind, sometimes with nulls, sometimes mixed.
      const std::string element = Scalar();
      std::string out = "[";
      const size_t n = Pick(4);
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ",";
        out += Pick(4) == 0 ? "null" : Pick(8) == 0 ? Scalar() : element;
      }
      return out + "]";
    }
    // An array of the same object, sometimes with a null.
    const std::string element = Object(depth + 1);
    std::string out = "[" + element;
    for (size_t i = Pick(3); i > 0; --i) out += Pick(3) == 0 ? ",null" : "," + element;
    return out + "]";
  }

  std::string Object(int depth) {
    // With the names an Avro adjustment changes: a-b, a.b and a b all become a_b, which is a key of its own beside
    // them.
    static const char* const kKeys[] = {"a", "b", "c", "é", "a.b", " ", "x\\\"y", "a", "a-b", "a_b", "1a", "_x",
                                        "😀", "Āb", "a b", "A9"};
    std::string out = "{";
    const size_t n = Pick(5);
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out += Pick(2) == 0 ? "," : " , ";
      out += std::string("\"") + kKeys[Pick(std::size(kKeys))] + "\":" + Value(depth);
    }
    return out + "}";
  }

  std::mt19937 rng_;
};

std::vector<std::string> Payloads() {
  std::vector<std::string> payloads = {
      R"({"i":2147483647,"j":2147483648,"k":-2147483648,"l":-2147483649,"z":-0})",
      R"({"m":9223372036854775807,"n":-9223372036854775808,"big":9223372036854775808})",
      R"({"a":1e20,"b":0.1,"c":-0.0,"d":1.0,"e":1E-7,"f":1e400,"g":-1e400,"h":1e-400,"i":123456789.0})",
      R"({"a":{"b":{"c":"x"},"t":true}})", "{}", "[]", "[1,2]", R"([{"a":1}])", "[1,\"x\"]",
      R"({"a":[1,"x"]})", R"({"a":[1,2.5]})", R"({"a":[1,3000000000]})", R"({"a":[1.5,123456789012345678901]})",
      R"({"a":[[1],[2,3],[]]})", R"({"a":[[1],["x"]]})", R"({"a":[[],[1]]})", R"({"a":[null]})",
      R"({"a":[null,null]})", R"({"a":[{"x":1,"y":2},{"x":3}]})", R"({"a":[{"x":1},null,{"x":2}]})",
      R"({"a":[{"x":1},{"x":"s"}]})", R"({"a":[{"x":null},{"x":1}]})", R"({"a":[[{"x":{"y":1}}]]})",
      R"({"a":null,"b":1,"c":[],"d":{"e":null}})", R"({"a":1,"b":2,"a":"x"})", R"({"a":{"x":1},"a":null,"b":2})",
      R"({"":1})", R"({"":null,"a":1})", R"({"a":1} and then some)", R"({"a":1}})",
      "{ \"a\" :\r\n\t[ 1 , 2 ] }", "hello", " {\"a\":1}", R"({"a":01})", R"({"a":1,})", R"({"a":NaN})",
      R"({'a':1})", "{\"a\":\"x\ny\"}", R"({"a":.5})", R"({"a":1.})", "{\"a\":1\f}", R"({"a":"\x"})",
      R"({"s":"q\" b\\ \/ \n\t\u0001 é ☕ 😀 \ud83d\ude00 \uD800x \udc00","k\"\u00e9":1})",
      "{\"a\":" + std::string(999, '[') + "1" + std::string(999, ']') + "}",
      "{\"a\":" + std::string(1000, '[') + "1" + std::string(1000, ']') + "}",
      "{\"a\":" + std::string(1000, '9') + "}", "{\"a\":" + std::string(1001, '9') + "}",
      "{\"a\":0." + std::string(1000, '5') + "}", "{\"a\":0." + std::string(1001, '5') + "}",
      "{\"a\":1." + std::string(999, '5') + "}", "{\"a\":1." + std::string(1000, '5') + "}",
      "{\"a\":0e" + std::string(1000, '1') + "}", "{\"a\":0e" + std::string(1001, '1') + "}",
      // Names an adjustment changes (json_expand_test's).
      "{\"a-b\":1,\"1a\":true,\"_x\":\"s\",\"\u00e9\":2,\"\U0001F600\":3,\"A9\":4}", R"({"a-b":1,"a_b":2})",
      R"({"x-y":{"p q":1}})", "{\"a_b\":1,\"\u00e9\":2,\"\u0100b\":3,\"1a\":4,\"a b\":5,\"ok9\":6}",
      R"({"a-b":1,"a.b":"x","a b":true})", R"({"a.b":"x","a_b":"y"})", R"({"a-b":1,"a_b":"y"})",
      "{\"\u00ff\u0fff\u1000\t\":1}",
  };
  Generator generator(20261204);
  for (int i = 0; i < 3000; ++i) payloads.push_back(generator.Document());
  for (int i = 0; i < 300; ++i) payloads.push_back("[" + generator.Document() + "]");
  return payloads;
}

struct Variant {
  config::JsonNullBehavior nulls;
  config::FieldNameAdjustment names;
  const char* oracle_args;  // the oracle's arguments after the input file's place
};

// The variant as the test's name shows it (ctest's name of each test carries it): ignore,none; optional_bytes,avro ...
void PrintTo(const Variant& v, std::ostream* os) {
  *os << (v.nulls == config::JsonNullBehavior::kIgnore ? "ignore" : "optional_bytes") << ","
      << (v.oracle_args[0] != '\0' ? v.oracle_args : "none");
}

class JsonExpandDifferential : public ::testing::TestWithParam<Variant> {};

TEST_P(JsonExpandDifferential, EveryPayloadComesOutAsDebeziumAndKafkaConnectWriteIt) {
  const std::string class_path = OracleClassPath();
  if (class_path.empty()) {
    const char* required = std::getenv("OUTBOX_REQUIRE_DEBEZIUM");
    if (required != nullptr && std::string(required) == "1") FAIL() << "Debezium is not installed";
    GTEST_SKIP() << "Debezium is not installed (bench/install-bench-deps.sh)";
  }
  const std::vector<std::string> payloads = Payloads();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("outbox-json-expand-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream in(dir / "in.bin", std::ios::binary);
    for (const std::string& p : payloads) in << p << '\0';
  }
  const std::string behavior = GetParam().nulls == config::JsonNullBehavior::kIgnore ? "ignore" : "optional_bytes";
  const std::string theirs = Shell("java -cp '" + class_path + "' " + OUTBOX_JSON_EXPAND_ORACLE + " " + behavior +
                                   " " + (dir / "in.bin").string() + " " + GetParam().oracle_args + " 2>/dev/null");
  std::filesystem::remove_all(dir);
  std::vector<std::string> answers;
  for (absl::string_view line : absl::StrSplit(theirs, '\n', absl::SkipEmpty())) {
    std::string answer;
    ASSERT_TRUE(absl::Base64Unescape(line, &answer)) << line;
    answers.push_back(std::move(answer));
  }
  ASSERT_GE(answers.size(), payloads.size()) << "the oracle answered " << answers.size() << " payloads: " << theirs;
  int failures = 0;
  for (size_t i = 0; i < payloads.size() && failures < 10; ++i) {
    const std::string ours = Ours(payloads[i], GetParam().nulls, GetParam().names);
    EXPECT_EQ(ours, answers[i]) << "payload " << i << ": " << payloads[i];
    failures += ours != answers[i];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, JsonExpandDifferential,
    ::testing::Values(Variant{config::JsonNullBehavior::kIgnore, config::FieldNameAdjustment::kNone, ""},
                      Variant{config::JsonNullBehavior::kOptionalBytes, config::FieldNameAdjustment::kNone, ""},
                      Variant{config::JsonNullBehavior::kIgnore, config::FieldNameAdjustment::kAvro, "avro"},
                      Variant{config::JsonNullBehavior::kOptionalBytes, config::FieldNameAdjustment::kAvroUnicode,
                              "avro_unicode"}));

}  // namespace
}  // namespace outbox::outbox
