// The CLI commands other than `run`: init, status, check. Each prints to `out` and returns the exit code.
#pragma once

#include <ostream>

#include "config/config.h"

namespace outbox::app {

int Init(const config::Config& config, bool print, bool create_table, std::ostream& out, std::ostream& err);
int Status(const config::Config& config, bool json, std::ostream& out, std::ostream& err);
int Check(const config::Config& config, std::ostream& out, std::ostream& err);

}  // namespace outbox::app
