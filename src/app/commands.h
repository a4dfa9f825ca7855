// The CLI commands other than `run`: init, status, check. Each prints to `out` and returns the exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config/config.h"

namespace outbox::app {

int Init(const config::PipelineConfig& config, bool print, bool create_table, std::ostream& out, std::ostream& err);
int Status(const config::PipelineConfig& config, bool json, std::ostream& out, std::ostream& err);
int Check(const config::Config& process, const config::PipelineConfig& config, std::ostream& out, std::ostream& err);
// `check --offline`: the config alone (loaded with config::OfflineResolver, whose stand-ins are `unresolved`), and
// the producer settings as librdkafka takes them; nothing is contacted. Exit 0, or 2 naming the problem.
int CheckOffline(const config::Config& process, const config::PipelineConfig& config,
                 const std::vector<std::string>& unresolved, std::ostream& out);

}  // namespace outbox::app
