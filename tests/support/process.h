// Child processes for tests: the relay binary under test, and the scripts that start throwaway servers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::testing {

struct ProcessOptions {
  // argv[0] is the program; without a '/' it is looked up in PATH.
  std::vector<std::string> argv;
  // Added to (or replacing variables of) this process's environment.
  std::map<std::string, std::string> env;
  // Variables of this process's environment not to pass on.
  std::vector<std::string> unset_env;
  // stdout and stderr are appended to this file; empty: /dev/null.
  std::string output_path;
  // When set, stderr goes to this file instead (appended).
  std::string stderr_path;
  // Working directory; empty: this process's.
  std::string cwd;
  // PR_SET_PDEATHSIG(SIGKILL): the child dies with the test. Linux sends it when the *thread* that spawned the
  // child exits, so spawn long-lived children from a thread that outlives them (the test's own thread).
  bool kill_with_parent = true;
};

// A running child: its own process group, stdin from /dev/null, no other inherited descriptors.
// Not thread-safe. The destructor SIGKILLs and reaps a child that is still running.
class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(ProcessOptions options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t Pid() const { return pid_; }
  // False once the child has exited (it is reaped here).
  bool Running();
  // Sends `signal` to the child (not to its process group). OK when it has already exited.
  absl::Status Kill(int signal = SIGKILL);
  // Sends `signal` to the child's process group (the child and what it spawned without a new group).
  absl::Status KillGroup(int signal = SIGKILL);
  // Waits until the child exits or `deadline` passes. Returns its exit code, 128+N when signal N killed it,
  // nullopt on timeout (the child keeps running).
  std::optional<int> Wait(std::chrono::milliseconds deadline);
  // After the child exited: its exit code / the signal that killed it (nullopt if it exited normally).
  std::optional<int> exit_code() const { return exit_code_; }
  std::optional<int> term_signal() const { return term_signal_; }

  // Peak resident set in kB: VmHWM from /proc while running, ru_maxrss once reaped; -1 when unknown.
  long PeakRssKb();
  // Current resident set in kB (VmRSS); -1 once exited.
  long RssKb();
  // User + system CPU seconds: from /proc while running, from the rusage once reaped.
  double CpuSeconds();

  const std::string& output_path() const { return options_.output_path; }
  // The output file's content so far ("" without one).
  std::string Output() const;
  const ProcessOptions& options() const { return options_; }

 private:
  ChildProcess(ProcessOptions options, pid_t pid) : options_(std::move(options)), pid_(pid) {}
  // waitpid (blocking or not); true once reaped.
  bool Reap(bool block);

  ProcessOptions options_;
  pid_t pid_;
  bool reaped_ = false;
  std::optional<int> exit_code_;
  std::optional<int> term_signal_;
  long maxrss_kb_ = -1;
  double cpu_seconds_ = 0;
};

struct CommandResult {
  int exit_code = -1;  // 128+N when signal N killed it
  std::string out;
  std::string err;
};

// Runs argv to completion, capturing stdout and stderr. DeadlineExceeded (after SIGKILLing its process group)
// when it runs longer than `deadline`; a non-zero exit is not an error here (see exit_code).
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                                         const std::map<std::string, std::string>& env = {});

}  // namespace outbox::testing
