// Pipelines: run, init, status and check over every pipeline of a config.
#include "app/pipelines.h"

#include <algorithm>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "common/status_tag.h"
#include "common/strings.h"
#include "app/sinks.h"
#include "kafka/producer_config.h"
#include "nlohmann/json.hpp"
#include "ops/http_server.h"
#include "ops/metrics.h"
#include "spdlog/spdlog.h"

namespace outbox::app {
namespace {

// What `run` cannot honour is a usage error (exit 2), found before anything connects.
absl::Status CheckRunnable(const config::PipelineConfig& config) {
  if (config.sink != config::SinkType::kKafka) return absl::OkStatus();
  auto producer = ProducerConfigOf(config);
  if (!producer.ok()) return producer.status();
  return absl::OkStatus();
}

std::string Prefixed(const config::PipelineConfig& pipeline, absl::string_view message) {
  return pipeline.pipeline.empty() ? std::string(message) : Cat("pipeline ", pipeline.pipeline, ": ", message);
}

// One pipeline's loop thread and what it ended with.
struct Running {
  const config::PipelineConfig* config = nullptr;
  std::unique_ptr<ops::Metrics> metrics = std::make_unique<ops::Metrics>();
  std::thread thread;
  int exit_code = kExitOk;
};

// Every pipeline of `config`.
std::vector<const config::PipelineConfig*> All(const config::Config& config) {
  std::vector<const config::PipelineConfig*> all;
  for (const config::PipelineConfig& p : config.pipelines) all.push_back(&p);
  return all;
}

bool Named(const config::Config& config) { return !config.pipelines.empty() && !config.pipelines[0].pipeline.empty(); }

}  // namespace

absl::StatusOr<std::vector<const config::PipelineConfig*>> SelectPipelines(const config::Config& config,
                                                                           const PipelineSelection& selection) {
  std::vector<const config::PipelineConfig*> all = All(config);
  if (!selection.only.has_value()) return all;
  for (const config::PipelineConfig* p : all) {
    if (p->pipeline == *selection.only) return std::vector<const config::PipelineConfig*>{p};
  }
  std::string names;
  for (const config::PipelineConfig* p : all) Append(&names, names.empty() ? "" : ", ", p->pipeline);
  return absl::InvalidArgumentError(!Named(config)
                                        ? Cat("--pipeline ", *selection.only, ": the config has no pipelines")
                                        : Cat("--pipeline ", *selection.only, ": no such pipeline (", names, ")"));
}

int RunPipelines(const config::Config& config, const RunOptions& options, const PipelineSelection& selection,
                 const std::atomic<bool>* stop, ops::Redactor redact) {
  const std::vector<const config::PipelineConfig*> all = All(config);
  if (options.start_lsn.has_value() && all.size() > 1 && !selection.only.has_value()) {
    spdlog::error("--start-lsn: the config has {} pipelines: name the one it applies to with --pipeline",
                  all.size());
    return kExitUsage;
  }
  auto chosen = SelectPipelines(config, selection);
  if (!chosen.ok()) {
    spdlog::error("{}", chosen.status().message());
    return kExitUsage;
  }
  for (const config::PipelineConfig* p : all) {
    if (absl::Status st = CheckRunnable(*p); !st.ok()) {
      spdlog::error("{}", config::Redact(config, Prefixed(*p, st.message())));
      return kExitUsage;
    }
  }

  std::vector<Running> running(all.size());
  std::vector<ops::PipelineMetrics> labelled;
  for (size_t i = 0; i < all.size(); ++i) {
    running[i].config = all[i];
    labelled.push_back({all[i]->pipeline, running[i].metrics.get(), std::string(config::SinkTypeName(all[i]->sink))});
  }
  ops::HttpServer http(labelled, redact);
  if (absl::Status st = http.Start(config.http_listen); !st.ok()) {
    spdlog::error("{}", st.message());
    return kExitFatal;
  }
  for (Running& r : running) {
    spdlog::info("outbox-relay {} starting{}: slot {}, publication {}, table {}, http {}:{}", OUTBOX_RELAY_VERSION,
                 r.config->pipeline.empty() ? "" : Cat(" pipeline ", r.config->pipeline), r.config->source.slot,
                 r.config->source.publication, r.config->outbox.table,
                 config.http_listen.substr(0, config.http_listen.rfind(':')), http.port());
  }
  for (Running& r : running) {
    RunOptions own = options;
    // --start-lsn and --accept-gap are about one slot: with several pipelines, the --pipeline one's.
    if (all.size() > 1 && r.config != chosen->front()) own = RunOptions{};
    r.thread = std::thread([&r, own, stop, &config] {
      ops::SetThreadPipeline(r.config->pipeline);
      Relay relay(*r.config, own, r.metrics.get(), stop);
      const absl::Status st = relay.Run();
      r.metrics->loop_running = false;
      r.metrics->streaming = false;
      if (st.ok()) {
        r.metrics->SetStopped("stopped cleanly");
        spdlog::info("stopped cleanly");
        return;
      }
      const std::string message = config::Redact(config, Msg(st));
      r.metrics->SetStopped(Cat("fatal: ", message));
      spdlog::critical("fatal: {}", message);
      if (config.pipelines.size() > 1) spdlog::error("the other pipelines go on");
      r.exit_code = ReasonOf(st) == StatusReason::kUsage ? kExitUsage : kExitFatal;
    });
  }
  for (Running& r : running) r.thread.join();
  http.Stop();
  int code = kExitOk;
  for (const Running& r : running) code = std::max(code, r.exit_code);
  return code;
}

int RunCommand(Command command, const config::Config& config, const PipelineSelection& selection,
               const CommandOptions& options, std::ostream& out, std::ostream& err) {
  auto chosen = SelectPipelines(config, selection);
  if (!chosen.ok()) {
    err << "outbox-relay: " << chosen.status().message() << "\n";
    return kExitUsage;
  }
  const auto one = [&](const config::PipelineConfig& p, std::ostream& o) {
    switch (command) {
      case Command::kInit: return Init(p, options.print, options.create_table, o, err);
      case Command::kStatus: return Status(p, options.json, o, err);
      case Command::kCheck:
        return options.offline ? CheckOffline(config, p, options.unresolved, o) : Check(config, p, o, err);
    }
    return kExitUsage;
  };
  if (!Named(config)) return one(config.pipelines.front(), out);
  int code = kExitOk;
  if (command == Command::kStatus && options.json) {
    nlohmann::json all = nlohmann::json::object();
    for (const config::PipelineConfig* p : *chosen) {
      std::ostringstream text;
      code = std::max(code, one(*p, text));
      all[p->pipeline] = text.str().empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(text.str(), nullptr, false);
    }
    out << nlohmann::json{{"pipelines", all}}.dump(2) << "\n";
    return code;
  }
  for (const config::PipelineConfig* p : *chosen) {
    out << "== pipeline " << p->pipeline << " ==\n";
    code = std::max(code, one(*p, out));
  }
  return code;
}

}  // namespace outbox::app
