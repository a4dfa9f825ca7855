// The log formatter: JSON lines that parse whatever the message holds, text lines that stay one line, and the
// redactor applied to every message.
#include "ops/logging.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace outbox::ops {
namespace {

// A logger named `name` writing through MakeFormatter into a string stream.
struct CapturedLogger {
  CapturedLogger(bool json, Redactor redact, const std::string& name = "relay") {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream);
    sink->set_formatter(MakeFormatter(json, std::move(redact)));
    logger = std::make_shared<spdlog::logger>(name, sink);
    logger->set_level(spdlog::level::trace);
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    std::istringstream in(stream.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  std::ostringstream stream;
  std::shared_ptr<spdlog::logger> logger;
};

std::string Escaped(std::string_view text) {
  std::string out;
  AppendJsonEscaped(text, &out);
  return out;
}

// Parses `"` + escaped + `"` as a JSON string.
std::string RoundTrip(std::string_view text) { return nlohmann::json::parse("\"" + Escaped(text) + "\"").get<std::string>(); }

TEST(JsonEscape, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Escaped(R"(a "b" \c)"), R"(a \"b\" \\c)");
  EXPECT_EQ(Escaped("line\nnext\r\ttab"), R"(line\nnext\r\ttab)");
  EXPECT_EQ(Escaped(std::string("nul\0bell\a", 9)), R"(nul\u0000bell\u0007)");
  EXPECT_EQ(Escaped("\x1f\x7f"), R"(\u001f\u007f)");
  for (std::string_view text : {std::string_view(R"({"json":"inside"})"), std::string_view("C:\\path\\\"x\"\n"),
                                std::string_view("\b\f\x01\x02")}) {
    EXPECT_EQ(RoundTrip(text), text);
  }
}

TEST(JsonEscape, KeepsValidUtf8AndReplacesInvalidBytes) {
  const std::string valid = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // café € 😀
  EXPECT_EQ(Escaped(valid), valid);
  EXPECT_EQ(RoundTrip(valid), valid);
  const std::string replaced = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(RoundTrip("a\xff" "b"), "a" + replaced + "b");
  EXPECT_EQ(RoundTrip("\xc3"), replaced);                       // truncated sequence
  EXPECT_EQ(RoundTrip("\xc0\xaf"), replaced + replaced);         // overlong '/'
  EXPECT_EQ(RoundTrip("\xed\xa0\x80"), replaced + replaced + replaced);  // a UTF-16 surrogate
  EXPECT_EQ(RoundTrip("\xf4\x90\x80\x80"), replaced + replaced + replaced + replaced);  // above U+10FFFF
}

TEST(LogFormatter, JsonLinesParseAndCarryTsLevelLoggerMsg) {
  CapturedLogger log(/*json=*/true, nullptr, "kafka");
  const std::string tricky = "topic \"a\\b\"\nsecond line\t{\"not\":\"json\"} \x01 caf\xc3\xa9 \xff";
  log.logger->info("{}", tricky);
  log.logger->warn("plain");
  log.logger->error("");
  const auto lines = log.Lines();
  ASSERT_EQ(lines.size(), 3u) << log.stream.str();
  std::vector<nlohmann::json> parsed;
  for (const std::string& line : lines) {
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(line)) << line;
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_EQ(j.size(), 4u) << line;
    for (const char* key : {"ts", "level", "logger", "msg"}) {
      ASSERT_TRUE(j.contains(key) && j[key].is_string()) << key << " in " << line;
    }
    EXPECT_EQ(j["logger"], "kafka");
    EXPECT_TRUE(j["ts"].get<std::string>().ends_with("Z")) << line;
    parsed.push_back(j);
  }
  EXPECT_EQ(parsed[0]["level"], "info");
  EXPECT_EQ(parsed[0]["msg"], "topic \"a\\b\"\nsecond line\t{\"not\":\"json\"} \x01 caf\xc3\xa9 \xef\xbf\xbd");
  EXPECT_EQ(parsed[1]["level"], "warning");
  EXPECT_EQ(parsed[1]["msg"], "plain");
  EXPECT_EQ(parsed[2]["level"], "error");
  EXPECT_EQ(parsed[2]["msg"], "");
}

TEST(LogFormatter, TextKeepsOneEventOnOneLine) {
  CapturedLogger log(/*json=*/false, nullptr, "pg");
  log.logger->info("first\nsecond\r\nthird");
  const auto lines = log.Lines();
  ASSERT_EQ(lines.size(), 1u) << log.stream.str();
  EXPECT_TRUE(lines[0].ends_with(" info [pg] first\\nsecond\\r\\nthird")) << lines[0];
}

TEST(LogFormatter, APipelineThreadNamesItsPipeline) {
  for (bool json : {false, true}) {
    CapturedLogger log(json, nullptr, "relay");
    log.logger->info("before");
    SetThreadPipeline("orders");
    log.logger->info("during");
    SetThreadPipeline("");
    log.logger->info("after");
    const auto lines = log.Lines();
    ASSERT_EQ(lines.size(), 3u);
    if (json) {
      EXPECT_FALSE(nlohmann::json::parse(lines[0]).contains("pipeline"));
      EXPECT_EQ(nlohmann::json::parse(lines[1])["pipeline"], "orders") << lines[1];
      EXPECT_EQ(nlohmann::json::parse(lines[1])["msg"], "during");
      EXPECT_FALSE(nlohmann::json::parse(lines[2]).contains("pipeline"));
    } else {
      EXPECT_TRUE(lines[0].ends_with(" info [relay] before")) << lines[0];
      EXPECT_TRUE(lines[1].ends_with(" info [relay] [orders] during")) << lines[1];
      EXPECT_TRUE(lines[2].ends_with(" info [relay] after")) << lines[2];
    }
  }
}

TEST(LogFormatter, EveryMessageGoesThroughTheRedactor) {
  const Redactor redact = [](std::string text) {
    for (size_t pos; (pos = text.find("hunter2")) != std::string::npos;) text.replace(pos, 7, "****");
    return text;
  };
  for (bool json : {false, true}) {
    CapturedLogger log(json, redact);
    log.logger->warn("could not connect: password=hunter2 rejected");
    log.logger->info("{} and {}", "hunter2", std::string("hunter") + "2");
    const std::string out = log.stream.str();
    EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
    EXPECT_NE(out.find("password=**** rejected"), std::string::npos) << out;
    EXPECT_NE(out.find("**** and ****"), std::string::npos) << out;
  }
}

TEST(SetupLogging, RegistersTheModuleLoggersAndRefusesUnknownLevels) {
  ASSERT_TRUE(SetupLogging("debug", /*json=*/true).ok());
  for (const char* name : {"relay", "pg", "kafka", "http"}) {
    auto logger = spdlog::get(name);
    ASSERT_NE(logger, nullptr) << name;
    EXPECT_EQ(logger->level(), spdlog::level::debug) << name;
  }
  EXPECT_EQ(spdlog::default_logger()->name(), "relay");
  EXPECT_TRUE(SetupLogging("warn", false).ok());
  EXPECT_EQ(spdlog::get("pg")->level(), spdlog::level::warn);
  EXPECT_TRUE(SetupLogging("off", false).ok());
  absl::Status st = SetupLogging("verbose", false);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("log.level"), std::string::npos) << st;
}

}  // namespace
}  // namespace outbox::ops
