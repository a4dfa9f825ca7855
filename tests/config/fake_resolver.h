// FakeResolver: a config::Resolver over in-memory maps, so the config tests reach no environment and no file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "config/config.h"

namespace outbox::config {

// ${env:NAME} looks NAME up in `env`, ${file:/path} looks the path up in `files`; anything absent is nullopt.
inline Resolver FakeResolver(std::map<std::string, std::string> env = {},
                             std::map<std::string, std::string> files = {}) {
  auto lookup = [](std::map<std::string, std::string> values) {
    return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
      auto it = values.find(name);
      if (it == values.end()) return std::nullopt;
      return it->second;
    };
  };
  return Resolver{.env = lookup(std::move(env)), .file = lookup(std::move(files))};
}

}  // namespace outbox::config
