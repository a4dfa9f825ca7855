// Logging setup: spdlog to stderr in text or JSON lines, one named logger per module ("relay", "pg", "kafka",
// "http"). Every message goes through a redactor (secrets out) before it is written; in JSON mode it is then
// escaped, so that every line is one JSON object: {"ts":…,"level":…,"logger":…,"msg":…}.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/formatter.h"

namespace outbox::ops {

// Masks secrets in a message (config::Redact bound to the loaded config). May be empty: no redaction.
using Redactor = std::function<std::string(std::string)>;

// Appends `text` to `out` as the inside of a JSON string: quote, backslash and control characters escaped,
// invalid UTF-8 replaced by U+FFFD.
void AppendJsonEscaped(std::string_view text, std::string* out);

// The formatter every logger uses: text "<ts> <level> [<logger>] <msg>" (CR and LF in the message escaped, so one
// event stays one line) or one JSON object per line. Exposed for tests.
std::unique_ptr<spdlog::formatter> MakeFormatter(bool json, Redactor redact);

// Names the pipeline of the calling thread's log lines ("" for none): text lines get " [<pipeline>]" after the
// logger, JSON lines a "pipeline" field. Each pipeline's loop thread sets it once.
void SetThreadPipeline(std::string name);

// level: trace|debug|info|warn|error|critical|off; json: one JSON object per line. Replaces the loggers of an
// earlier call (tests call it more than once).
absl::Status SetupLogging(const std::string& level, bool json, Redactor redact = nullptr);

}  // namespace outbox::ops
