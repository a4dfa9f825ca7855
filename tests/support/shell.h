// Shell helpers of the tests that drive a second client or a server script: quoting and running a command.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/str_replace.h"

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

}  // namespace outbox::testing
