// Helpers of the NATS tests: running tests/nats/nats_tool.py (nats-py, the second client) and shell commands.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "support/shell.h"

namespace outbox::testing {

// The shared server's URL (OUTBOX_TEST_NATS_URL), "" when unset: then the tests skip with kNoNatsServer.
inline std::string SharedNatsUrl() {
  const char* url = std::getenv("OUTBOX_TEST_NATS_URL");
  return url != nullptr ? url : "";
}
inline constexpr char kNoNatsServer[] =
    "OUTBOX_TEST_NATS_URL is not set: scripts/test.sh starts a nats-server -js and sets it";


inline std::string NatsPython() {
  if (const char* py = std::getenv("OUTBOX_TEST_NATS_PY"); py != nullptr && *py != '\0') return py;
  const char* cache = std::getenv("OUTBOX_RELAY_CACHE");
  const std::string root = cache != nullptr && *cache != '\0' ? cache : std::string(std::getenv("HOME")) +
                                                                           "/.cache/outbox-relay";
  return root + "/nats-py-2.15.0/bin/python";
}

// nats_tool.py with `args`; a tls:// `url` trusts `ca_file` (NATS_TOOL_CA).
inline std::pair<int, std::string> Tool(const std::string& url, const std::vector<std::string>& args,
                                        const std::string& ca_file = "") {
  std::string cmd = (ca_file.empty() ? "" : "NATS_TOOL_CA=" + ShellQuote(ca_file) + " ") + ShellQuote(NatsPython()) +
                    " " + ShellQuote(OUTBOX_NATS_TOOL) + " " + ShellQuote(url);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  return Run(cmd);
}

}  // namespace outbox::testing
