#include "support/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/internal.h"
#include "support/util.h"

extern char** environ;

namespace outbox::testing {
namespace {

absl::Status Errno(std::string_view what) {
  return absl::InternalError(absl::StrCat(internal::Av(what), ": ", std::strerror(errno)));
}

// argv[0] resolved against PATH in the parent (execve in the child does no lookup and allocates nothing).
absl::StatusOr<std::string> ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(program, " not found in PATH"));
}

int OpenForAppend(const std::string& path) {
  return open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// Fields of /proc/<pid>/status, in kB.
long StatusFieldKb(pid_t pid, std::string_view field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0 && line.size() > field.size() && line[field.size()] == ':') {
      absl::string_view rest = absl::string_view(line).substr(field.size() + 1);
      std::vector<absl::string_view> parts = absl::StrSplit(rest, ' ', absl::SkipWhitespace());
      long value = 0;
      if (!parts.empty() && absl::SimpleAtoi(parts[0], &value)) return value;
    }
  }
  return -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(ProcessOptions options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("empty argv");
  auto program = ResolveProgram(options.argv[0]);
  if (!program.ok()) return program.status();

  // Everything the child needs is prepared here: between fork and exec only async-signal-safe calls.
  std::vector<char*> argv;
  for (auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    bool drop = options.env.count(std::string(name)) > 0;
    for (const auto& u : options.unset_env) drop = drop || u == name;
    if (!drop) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : options.env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return Errno("open /dev/null");
  int out_fd = options.output_path.empty() ? devnull : OpenForAppend(options.output_path);
  if (out_fd < 0) {
    close(devnull);
    return Errno(absl::StrCat("open ", options.output_path));
  }
  int err_fd = options.stderr_path.empty() ? out_fd : OpenForAppend(options.stderr_path);
  if (err_fd < 0) {
    if (out_fd != devnull) close(out_fd);
    close(devnull);
    return Errno(absl::StrCat("open ", options.stderr_path));
  }
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const pid_t parent = getpid();
  const bool kill_with_parent = options.kill_with_parent;

  pid_t pid = fork();
  if (pid == 0) {
    // Child.
    setpgid(0, 0);
    if (kill_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
    }
    // Default signal dispositions and an empty mask (the test may block signals in its threads).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) signal(sig, SIG_DFL);
    if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(127);
    // No other descriptor of the test (sockets, pipes) leaks into the child.
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < 65536; ++fd) close(fd);
    }
    if (cwd != nullptr && chdir(cwd) != 0) _exit(127);
    execve(program->c_str(), argv.data(), envp.data());
    _exit(127);
  }
  // Parent.
  int fork_errno = errno;
  if (err_fd != out_fd) close(err_fd);
  if (out_fd != devnull) close(out_fd);
  close(devnull);
  if (pid < 0) {
    errno = fork_errno;
    return Errno("fork");
  }
  setpgid(pid, pid);  // also here, so the group exists before we might signal it
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(options), pid));
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    Reap(true);
  }
}

bool ChildProcess::Reap(bool block) {
  if (reaped_) return true;
  int status = 0;
  rusage usage{};
  pid_t r;
  do {
    r = wait4(pid_, &status, block ? 0 : WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  if (r < 0) {
    // Not our child any more (someone else reaped it): treat as gone.
    reaped_ = true;
    exit_code_ = -1;
    return true;
  }
  reaped_ = true;
  if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    term_signal_ = WTERMSIG(status);
    exit_code_ = 128 + WTERMSIG(status);
  }
  maxrss_kb_ = usage.ru_maxrss;
  cpu_seconds_ = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                 static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return true;
}

bool ChildProcess::Running() { return !Reap(false); }

absl::Status ChildProcess::Kill(int signal) {
  if (reaped_) return absl::OkStatus();
  if (kill(pid_, signal) != 0 && errno != ESRCH) return Errno(absl::StrCat("kill ", pid_));
  return absl::OkStatus();
}

absl::Status ChildProcess::KillGroup(int signal) {
  if (kill(-pid_, signal) != 0 && errno != ESRCH) return Errno(absl::StrCat("kill -", pid_));
  return absl::OkStatus();
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  auto interval = std::chrono::milliseconds(1);
  while (!Reap(false)) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until) return std::nullopt;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(interval, until - now));
    interval = std::min(interval * 2, std::chrono::milliseconds(20));
  }
  return exit_code_;
}

long ChildProcess::PeakRssKb() {
  if (!Reap(false)) {
    long v = StatusFieldKb(pid_, "VmHWM");
    if (v >= 0) return v;
    Reap(false);
  }
  return reaped_ ? maxrss_kb_ : -1;
}

long ChildProcess::RssKb() {
  if (Reap(false)) return -1;
  return StatusFieldKb(pid_, "VmRSS");
}

double ChildProcess::CpuSeconds() {
  if (Reap(false)) return cpu_seconds_;
  std::ifstream in(absl::StrCat("/proc/", pid_, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command (which may contain spaces) start after the last ')'.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return cpu_seconds_;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(close_paren + 2), ' ', absl::SkipWhitespace());
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  long utime = 0;
  long stime = 0;
  if (fields.size() > 13 && absl::SimpleAtoi(fields[11], &utime) && absl::SimpleAtoi(fields[12], &stime)) {
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return cpu_seconds_;
}

std::string ChildProcess::Output() const {
  if (options_.output_path.empty()) return "";
  auto content = ReadFile(options_.output_path);
  return content.ok() ? *content : "";
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                                         const std::map<std::string, std::string>& env) {
  auto dir = MakeTempDir("outbox-cmd-");
  if (!dir.ok()) return dir.status();
  ProcessOptions options;
  options.argv = argv;
  options.env = env;
  options.output_path = *dir + "/out";
  options.stderr_path = *dir + "/err";
  options.kill_with_parent = false;
  auto child = ChildProcess::Spawn(std::move(options));
  if (!child.ok()) {
    RemoveTree(*dir);
    return child.status();
  }
  std::optional<int> code = (*child)->Wait(deadline);
  CommandResult result;
  if (!code.has_value()) {
    (void)(*child)->KillGroup(SIGKILL);
    (*child)->Wait(std::chrono::seconds(10));
  }
  result.out = ReadFile(*dir + "/out").value_or("");
  result.err = ReadFile(*dir + "/err").value_or("");
  RemoveTree(*dir);
  if (!code.has_value()) {
    return absl::DeadlineExceededError(absl::StrCat(absl::StrJoin(argv, " "), " did not finish in ",
                                                    deadline.count(), " ms; stderr: ", result.err));
  }
  result.exit_code = *code;
  return result;
}

}  // namespace outbox::testing
