// outbox-relay's entry point: argument parsing and signals only; everything else is in the app library.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <csignal>
#include <iostream>

#include "common/strings.h"
#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "app/allocator.h"
#include "app/commands.h"
#include "app/pipelines.h"
#include "app/relay.h"
#include "app/test_hooks.h"
#include "config/config.h"
#include "config/load_file.h"
#include "ops/logging.h"
#include "spdlog/spdlog.h"

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

std::vector<std::pair<std::string, std::string>> ParseSets(const std::vector<std::string>& sets, bool* ok) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "--set " << s << ": expected key=value\n";
      *ok = false;
      continue;
    }
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using outbox::app::kExitOk;
  using outbox::app::kExitUsage;

  CLI::App app{"outbox-relay: streams outbox INSERTs from a PostgreSQL pgoutput slot to Kafka"};
  app.require_subcommand(1);
  std::string config_path;
  std::vector<std::string> sets;
  std::string start_lsn;
  std::string pipeline;
  bool accept_gap = false, print = false, create_table = false, json = false, offline = false;

  auto add_common = [&](CLI::App* cmd) {
    cmd->add_option("-c,--config", config_path, "relay.yaml")->required();
    cmd->add_option("--set", sets, "override a config key: key=value (repeatable)");
    cmd->add_option("--pipeline", pipeline, "with a pipelines: config, the pipeline to act on (run: --start-lsn's)");
  };
  CLI::App* run = app.add_subcommand("run", "stream until SIGTERM/SIGINT");
  add_common(run);
  run->add_option("--start-lsn", start_lsn, "skip whole transactions whose commit LSN is below X/Y");
  run->add_flag("--accept-gap", accept_gap, "go on despite a detected gap");
  CLI::App* init = app.add_subcommand("init", "create the publication, the slot and the first checkpoint");
  add_common(init);
  init->add_flag("--print", print, "print the SQL instead of running it");
  init->add_flag("--create-table", create_table, "also create the outbox table");
  CLI::App* status = app.add_subcommand("status", "print the slot's state");
  add_common(status);
  status->add_flag("--json", json, "JSON output");
  CLI::App* check = app.add_subcommand("check", "validate the config and the connections");
  check->add_flag("--offline", offline,
                  "the config alone: contact nothing; a ${env:}/${file:} that is not here gets a stand-in value");
  add_common(check);
  app.add_subcommand("version", "print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (app.got_subcommand("version")) {
    std::cout << "outbox-relay " << OUTBOX_RELAY_VERSION << "\nallocator: " << outbox::app::AllocatorName() << "\n";
    return kExitOk;
  }

  bool sets_ok = true;
  const auto overrides = ParseSets(sets, &sets_ok);
  if (!sets_ok) return kExitUsage;
  std::vector<std::string> unresolved;
  const bool check_offline = app.got_subcommand("check") && offline;
  if (check_offline && !outbox::config::SystemResolver().file(config_path).has_value()) {
    std::cerr << "outbox-relay: " << config_path << ": cannot read the config file\n";
    return kExitUsage;
  }
  auto config = outbox::config::LoadFile(
      config_path, overrides,
      check_offline ? outbox::config::OfflineResolver(&unresolved) : outbox::config::SystemResolver());
  if (!config.ok()) {
    std::cerr << "outbox-relay: " << config.status().message() << "\n";
    return kExitUsage;
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (outbox::config::PipelineConfig& p : config->pipelines) {
    if (p.source.instance.empty()) p.source.instance = host[0] ? host : "relay";
  }
  // Every log line goes through Redact: secrets never reach the log, whatever module wrote the message.
  outbox::config::Config masking;
  masking.secrets = config->secrets;
  outbox::ops::Redactor redact = [masking](std::string text) {
    return outbox::config::Redact(masking, std::move(text));
  };
  if (absl::Status st = outbox::ops::SetupLogging(config->log_level,
                                                  config->log_format == outbox::config::LogFormat::kJson, redact);
      !st.ok()) {
    std::cerr << "outbox-relay: " << st.message() << "\n";
    return kExitUsage;
  }
  for (const outbox::config::PipelineConfig& p : config->pipelines) {
    for (const std::string& w : p.warnings) {
      spdlog::warn("{}{}", p.pipeline.empty() ? "" : "pipeline " + p.pipeline + ": ", w);
    }
  }

  outbox::app::PipelineSelection selection;
  if (!pipeline.empty()) selection.only = pipeline;
  outbox::app::CommandOptions command_options{.print = print, .create_table = create_table, .json = json,
                                              .offline = check_offline, .unresolved = unresolved};
  using outbox::app::Command;
  for (const auto& [name, command] : {std::pair{"init", Command::kInit}, std::pair{"status", Command::kStatus},
                                      std::pair{"check", Command::kCheck}}) {
    if (app.got_subcommand(name)) {
      return outbox::app::RunCommand(command, *config, selection, command_options, std::cout, std::cerr);
    }
  }

  outbox::app::RunOptions options;
  options.accept_gap = accept_gap;
  if (!start_lsn.empty()) {
    auto lsn = outbox::Lsn::Parse(start_lsn);
    if (!lsn.ok()) {
      std::cerr << "outbox-relay: --start-lsn: " << lsn.status().message() << "\n";
      return kExitUsage;
    }
    options.start_lsn = *lsn;
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // A file size limit (RLIMIT_FSIZE) reached while writing a spill file must fail that write (EFBIG: a rewind,
  // then fatal naming the file), not kill the relay with SIGXFSZ.
  signal(SIGXFSZ, SIG_IGN);
  outbox::app::test_hooks::InstallFromEnvironment();

  return outbox::app::RunPipelines(*config, options, selection, &g_stop, redact);
}
