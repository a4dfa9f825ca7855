// Shell helpers of the tests that drive a second client or a server script: quoting and running a command.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/str_replace.h"
#include "support/util.h"

namespace outbox::testing {

inline std::string ShellQuote(const std::string& s) { return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'"; }

// Runs a command (stderr joined to stdout); its exit code and output.
inline std::pair<int, std::string> Run(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

// The value of the line NAME=value in a script's output (e.g. NATS_URL=...), "" when there is none.
inline std::string LineValue(const std::string& out, const std::string& name) {
  const std::string prefix = name + "=";
  for (size_t at = 0; at < out.size();) {
    const size_t end = std::min(out.find('\n', at), out.size());
    if (out.compare(at, prefix.size(), prefix) == 0) return out.substr(at + prefix.size(), end - at - prefix.size());
    at = end + 1;
  }
  return "";
}

// A throwaway CA in `dir` (dir/ca.crt), with a server certificate for localhost and 127.0.0.1 and a client
// certificate it signs (dir/server.{crt,key}, dir/client.{crt,key}): scripts/lib.sh make_test_certs, the function the
// *-temp.sh scripts make their servers' certificates with.
inline std::pair<int, std::string> MakeTestCerts(const std::string& dir) {
  const std::string script = "source " + ShellQuote(SourceDir() + "/scripts/lib.sh") + " && make_test_certs " +
                             ShellQuote(dir);
  return Run("bash -c " + ShellQuote(script));
}

}  // namespace outbox::testing
