// Logging setup: the message flag (%*) that redacts and escapes, and the per-module loggers.
#include "ops/logging.h"

#include "common/strings.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace outbox::ops {
namespace {

constexpr const char* kLoggers[] = {"relay", "pg", "kafka", "nats", "http"};
constexpr char kMessageFlag = '*';
constexpr char kPipelineFlag = '&';

thread_local std::string t_pipeline;
constexpr char kReplacement[] = "\\ufffd";

// The length of the valid UTF-8 sequence starting at text[i], 0 when it is not one (overlong forms, surrogates
// and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

// Formats the message (%v), redacted, then escaped for a JSON string or for one text line.
class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  MessageFlag(bool json, Redactor redact) : json_(json), redact_(std::move(redact)) {}

  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string text(msg.payload.data(), msg.payload.size());
    if (redact_) text = redact_(std::move(text));
    std::string escaped;
    if (json_) {
      AppendJsonEscaped(text, &escaped);
    } else {
      escaped.reserve(text.size());
      for (char c : text) {
        if (c == '\n') {
          escaped += "\\n";
        } else if (c == '\r') {
          escaped += "\\r";
        } else {
          escaped.push_back(c);
        }
      }
    }
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }

  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<MessageFlag>(json_, redact_);
  }

 private:
  bool json_;
  Redactor redact_;
};

// The calling thread's pipeline (SetThreadPipeline), or nothing.
class PipelineFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit PipelineFlag(bool json) : json_(json) {}

  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (t_pipeline.empty()) return;
    std::string text;
    if (json_) {
      text = ",\"pipeline\":\"";
      AppendJsonEscaped(t_pipeline, &text);
      text += "\"";
    } else {
      text = Cat(" [", t_pipeline, "]");
    }
    dest.append(text.data(), text.data() + text.size());
  }

  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<PipelineFlag>(json_); }

 private:
  bool json_;
};

}  // namespace

void SetThreadPipeline(std::string name) { t_pipeline = std::move(name); }

void AppendJsonEscaped(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(text, i);
      if (n == 0) {
        out->append(kReplacement);
        ++i;
      } else {
        out->append(text.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xf]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
}

std::unique_ptr<spdlog::formatter> MakeFormatter(bool json, Redactor redact) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<MessageFlag>(kMessageFlag, json, std::move(redact));
  formatter->add_flag<PipelineFlag>(kPipelineFlag, json);
  formatter->set_pattern(json ? R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n"%&,"msg":"%*"})"
                              : "%Y-%m-%dT%H:%M:%S.%eZ %l [%n]%& %*");
  return formatter;
}

absl::Status SetupLogging(const std::string& level, bool json, Redactor redact) {
  const spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  // from_str maps anything unknown to off; only "off" itself may mean off.
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(Cat("log.level: unknown level \"", level, "\""));
  }
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  sink->set_formatter(MakeFormatter(json, std::move(redact)));
  for (const char* name : kLoggers) {
    spdlog::drop(name);
    auto logger = std::make_shared<spdlog::logger>(name, sink);
    logger->set_level(lvl);
    spdlog::register_logger(logger);
  }
  spdlog::set_default_logger(spdlog::get("relay"));
  return absl::OkStatus();
}

}  // namespace outbox::ops
