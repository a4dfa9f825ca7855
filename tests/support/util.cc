#include "support/internal.h"
#include "support/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#ifndef OUTBOX_SOURCE_DIR
#error "OUTBOX_SOURCE_DIR must be defined (tests/support/CMakeLists.txt does)"
#endif

namespace outbox::testing {
namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}() ^
                             (static_cast<uint64_t>(getpid()) << 32) ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return rng;
}

std::mutex& RngMutex() {
  static std::mutex mu;
  return mu;
}

uint64_t RandomU64() {
  std::lock_guard<std::mutex> lock(RngMutex());
  return Rng()();
}

}  // namespace

std::string SourceDir() { return OUTBOX_SOURCE_DIR; }

std::string UniqueName(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  std::string clean;
  for (char c : prefix) {
    if (c >= 'A' && c <= 'Z') {
      clean.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      clean.push_back(c);
    } else {
      clean.push_back('_');
    }
  }
  if (clean.empty() || (clean[0] >= '0' && clean[0] <= '9')) clean.insert(clean.begin(), 't');
  std::string suffix = absl::StrCat("_", getpid(), "_", counter.fetch_add(1) + 1, "_",
                                    absl::Hex(RandomU64() & 0xffff, absl::kZeroPad4));
  constexpr size_t kMax = 63;
  if (clean.size() + suffix.size() > kMax) clean.resize(kMax - suffix.size());
  return clean + suffix;
}

int ClosedPort() {
  static std::mutex mu;
  static std::vector<int> held;  // the bound sockets, open until the process exits
  std::lock_guard<std::mutex> lock(mu);
  // No SO_REUSEADDR: while this socket is bound, no other socket can bind the port, with or without that option.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "ClosedPort: " << std::strerror(errno);
    if (fd >= 0) close(fd);
    return 0;
  }
  held.push_back(fd);
  return ntohs(addr.sin_port);
}

bool PollUntil(const std::function<bool()>& condition, std::chrono::milliseconds deadline,
               std::chrono::milliseconds interval) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    if (condition()) return true;
    auto now = std::chrono::steady_clock::now();
    if (now >= until) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(interval, until - now));
  }
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds deadline, std::string_view what,
             std::chrono::milliseconds interval) {
  auto start = std::chrono::steady_clock::now();
  if (PollUntil(condition, deadline, interval)) return true;
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  ADD_FAILURE() << "timed out after " << waited.count() << " ms waiting for: " << what;
  return false;
}

std::string TempRoot() {
  for (const char* var : {"OUTBOX_TEST_TMPDIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return v;
  }
  return "/tmp";
}

absl::StatusOr<std::string> MakeTempDir(std::string_view prefix) {
  std::string templ = absl::StrCat(TempRoot(), "/", internal::Av(prefix), "XXXXXX");
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", templ, ": ", std::strerror(errno)));
  }
  return templ;
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string TailOfFile(const std::string& path, size_t max_bytes) {
  auto content = ReadFile(path);
  if (!content.ok()) return "";
  if (content->size() <= max_bytes) return *content;
  return content->substr(content->size() - max_bytes);
}

}  // namespace outbox::testing
