// SystemResolver: the real environment and file system behind ${env:NAME} and ${file:/path}. The config module's
// only impure code.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace outbox::config {
namespace {

std::optional<std::string> GetEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// The whole file, trailing newlines stripped (secret files usually end with one); nullopt if it cannot be read.
std::optional<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string content;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {  // EISDIR, EIO
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) content.pop_back();
  return content;
}

}  // namespace

Resolver SystemResolver() { return Resolver{.env = GetEnv, .file = ReadFile}; }

Resolver OfflineResolver(std::vector<std::string>* unresolved) {
  const auto stand_in = [unresolved](std::string reference, std::optional<std::string> value) {
    if (value.has_value()) return value;
    unresolved->push_back(std::move(reference));
    return std::optional<std::string>(kOfflineStandIn);
  };
  return Resolver{
      .env = [stand_in](const std::string& name) { return stand_in("${env:" + name + "}", GetEnv(name)); },
      .file = [stand_in](const std::string& path) { return stand_in("${file:" + path + "}", ReadFile(path)); },
  };
}

}  // namespace outbox::config
