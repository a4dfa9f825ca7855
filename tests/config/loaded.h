// Tests of single-pipeline files read a loaded config as its one pipeline with the process's keys beside it:
// `c->source.slot` and `c->http_listen` alike. `process` is the whole config as loaded.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"

namespace outbox::config {

struct Loaded : PipelineConfig {
  std::string http_listen;
  std::string log_level;
  LogFormat log_format = LogFormat::kText;
  std::vector<PipelineConfig> pipelines;
  Config process;
};

inline absl::StatusOr<Loaded> Flatten(absl::StatusOr<Config> config) {
  if (!config.ok()) return config.status();
  Loaded loaded;
  static_cast<PipelineConfig&>(loaded) = config->pipelines.front();
  loaded.http_listen = config->http_listen;
  loaded.log_level = config->log_level;
  loaded.log_format = config->log_format;
  loaded.pipelines = config->pipelines;
  loaded.process = *std::move(config);
  return loaded;
}

}  // namespace outbox::config
