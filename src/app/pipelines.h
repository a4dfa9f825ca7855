// Pipelines: every command over each pipeline of a config (SPEC.md §3 `pipelines:`). `run` gives each pipeline
// its own Relay on its own loop thread (own replication connection, slot, producer, checkpoint key and Metrics);
// a pipeline that stops on a fatal error or a halt leaves the others streaming, and the process exits once all
// have stopped (1 if any failed). init, status and check run per pipeline, under a heading naming it.
#pragma once

#include <atomic>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/relay.h"
#include "config/config.h"
#include "ops/logging.h"

namespace outbox::app {

struct PipelineSelection {
  std::optional<std::string> only;  // --pipeline NAME: that pipeline alone (init, status, check) or the one
                                    // --start-lsn applies to (run)
};

// The pipelines `selection` names, or an error naming the unknown pipeline (or --start-lsn without a name when
// there are several).
absl::StatusOr<std::vector<const config::PipelineConfig*>> SelectPipelines(const config::Config& config,
                                                                   const PipelineSelection& selection);

// `run`: serves /metrics, /healthz, /readyz for all and streams every pipeline until `stop` is set.
int RunPipelines(const config::Config& config, const RunOptions& options, const PipelineSelection& selection,
                 const std::atomic<bool>* stop, ops::Redactor redact);

enum class Command { kInit, kStatus, kCheck };
struct CommandOptions {
  bool print = false, create_table = false, json = false;
  bool offline = false;                 // check --offline
  std::vector<std::string> unresolved;  // with offline: the references config::OfflineResolver stood in for
};
// init, status or check over the selected pipelines; the highest exit code wins. With several pipelines, text
// output has a "== pipeline <name> ==" heading per pipeline and `status --json` prints
// {"pipelines": {"<name>": <status>, …}}.
int RunCommand(Command command, const config::Config& config, const PipelineSelection& selection,
               const CommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace outbox::app
