// Logging setup.
#include "common/strings.h"
#include "ops/logging.h"

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace outbox::ops {

absl::Status SetupLogging(const std::string& level, bool json) {
  const spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  if (spdlog::level::to_string_view(lvl) != level && !(level == "warn" && lvl == spdlog::level::warn)) {
    return absl::InvalidArgumentError(Cat("log.level: unknown level \"", level, "\""));
  }
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  for (const char* name : {"relay", "pg", "kafka", "http"}) {
    spdlog::drop(name);
    auto logger = std::make_shared<spdlog::logger>(name, sink);
    logger->set_level(lvl);
    if (json) {
      logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":"%v"})",
                          spdlog::pattern_time_type::utc);
    } else {
      logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l [%n] %v", spdlog::pattern_time_type::utc);
    }
    spdlog::register_logger(logger);
  }
  spdlog::set_default_logger(spdlog::get("relay"));
  return absl::OkStatus();
}

}  // namespace outbox::ops
