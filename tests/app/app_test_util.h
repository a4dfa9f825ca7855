// Helpers shared by the tests of the outbox-relay binary's commands and operations surface: running a command
// with stdout and stderr apart, rewriting the harness's config, and the OS user
// a throwaway PostgreSQL runs as.
#pragma once

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/harness.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {

// `outbox-relay <args...> -c <config>`, to completion, with stdout and stderr apart.
inline CommandResult RunRelay(const std::string& config_path, std::vector<std::string> args,
                              const std::map<std::string, std::string>& env = {},
                              std::chrono::milliseconds deadline = std::chrono::seconds(90)) {
  std::vector<std::string> argv = {RelayBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!config_path.empty()) {
    argv.push_back("-c");
    argv.push_back(config_path);
  }
  auto result = RunCommand(argv, deadline, env);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.value_or(CommandResult{});
}

// `outbox-relay run -c <config> <args...>` in the background with extra environment variables; its output goes to
// <dir>/<log_name>.
inline std::unique_ptr<ChildProcess> SpawnRelay(const RelayHarness& h, const std::vector<std::string>& args,
                                                const std::map<std::string, std::string>& env,
                                                const std::string& log_name) {
  ProcessOptions o;
  o.argv = {RelayBin(), "run", "-c", h.config_path()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = env;
  o.output_path = h.dir() + "/" + log_name;
  auto child = ChildProcess::Spawn(o);
  EXPECT_TRUE(child.ok()) << child.status();
  return child.ok() ? std::move(*child) : nullptr;
}

// The lines of `text` that start with `prefix` (`check`'s "problem:" lines, say).
inline std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) lines.push_back(line);
  }
  return lines;
}

inline std::string ReadText(const std::string& path) { return ReadFile(path).value_or(""); }

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Replaces the `conninfo:` line of the harness's relay.yaml (written as `  conninfo: "..."`).
inline void SetConninfo(const RelayHarness& h, const std::string& yaml_value) {
  std::istringstream in(ReadText(h.config_path()));
  std::string out, line;
  bool replaced = false;
  while (std::getline(in, line)) {
    if (line.starts_with("  conninfo: ")) {
      line = "  conninfo: " + yaml_value;
      replaced = true;
    }
    out += line + "\n";
  }
  ASSERT_TRUE(replaced) << "no conninfo line in " << h.config_path();
  WriteText(h.config_path(), out);
}

// Adds `  key: value` lines under the `kafka:` section of the harness's relay.yaml.
inline void AddKafkaKeys(const RelayHarness& h, const std::vector<std::pair<std::string, std::string>>& keys) {
  std::istringstream in(ReadText(h.config_path()));
  std::string out, line;
  bool added = false;
  while (std::getline(in, line)) {
    out += line + "\n";
    if (line == "kafka:") {
      for (const auto& [k, v] : keys) out += "  " + k + ": " + v + "\n";
      added = true;
    }
  }
  ASSERT_TRUE(added) << "no kafka section in " << h.config_path();
  WriteText(h.config_path(), out);
}

// The OS user scripts/pg-temp.sh runs a throwaway server as (empty when this process is not root).
inline std::string PgServerUser() {
  if (geteuid() != 0) return "";
  if (const char* u = std::getenv("OUTBOX_TEST_USER"); u != nullptr && *u != '\0') return u;
  if (getpwnam("outbox-test") != nullptr) return "outbox-test";
  return "nobody";
}

}  // namespace outbox::testing
