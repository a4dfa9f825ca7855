// libFuzzer target for the config loader: any input loads or gives INVALID_ARGUMENT, never crashes or throws
// (yaml-cpp's exceptions must stop inside the config module), and no text the resolver handed out (a secret by
// definition) shows in an error message or survives Redact().
//
// Input: YAML text, optionally followed by a NUL byte and `--set` overrides, one `key=value` per line (a line
// without '=' sets that key to ""). The seeds in corpus/config are plain YAML files (no overrides) and a few with.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "config/config.h"

namespace {

using outbox::config::Config;
using outbox::config::Resolver;
using Overrides = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kMaxOverrides = 16;

// The fake environment and file system: a fixed table; every other name is unset. The secrets carry "Zq" so that
// they are unlikely to be spelled by the input itself or by the loader's own message text.
std::optional<std::string> FakeEnv(const std::string& name) {
  if (name == "PASSWORD") return "Zq-hunter2";
  if (name == "SLOT") return "zq_env_slot";
  if (name == "TOPIC") return "Zq.env.topic";
  if (name == "SERVERS") return "zq-broker:9092";
  if (name == "NUMBER") return "2500";
  if (name == "FLAG") return "true";
  if (name == "CONNINFO") return "host=zq-db user=relay password=Zq-pw-in-conninfo";
  if (name == "EMPTY") return "";
  if (name == "QUOTED") return "Zq\"qu\\ote\xc3\xa9";  // what Quoted() escapes: a quote, a backslash, UTF-8
  // Text a naive ${...} scanner would substitute again.
  if (name == "NESTED") return "Zq${env:PASSWORD}";
  return std::nullopt;
}

std::optional<std::string> FakeFile(const std::string& path) {
  if (path == "/run/secrets/password") return "Zq-file-s3cret";
  if (path == "/run/secrets/conninfo") return "postgresql://relay:Zq-uri-pw@zq-db/app";
  if (path == "/run/secrets/empty") return "";
  return std::nullopt;
}

// The input split into YAML text and overrides.
std::pair<std::string, Overrides> Split(std::string_view input) {
  const size_t nul = input.find('\0');
  std::string yaml(input.substr(0, nul));
  Overrides overrides;
  if (nul == std::string_view::npos) return {std::move(yaml), std::move(overrides)};
  std::string_view rest = input.substr(nul + 1);
  while (!rest.empty() && overrides.size() < kMaxOverrides) {
    const size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      overrides.emplace_back(std::string(line), "");
    } else {
      overrides.emplace_back(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    }
  }
  return {std::move(yaml), std::move(overrides)};
}

bool OnlyStars(const std::string& text) { return text.find_first_not_of('*') == std::string::npos; }

// Whether `text` spells `secret` as is (or, with OUTBOX_FUZZ_CHECK_ESCAPED=1, C-escaped as Quoted() prints it).
bool Shows(std::string_view text, const std::string& secret) {
  if (text.find(secret) != std::string_view::npos) return true;
  static const bool check_escaped = [] {
    const char* flag = std::getenv("OUTBOX_FUZZ_CHECK_ESCAPED");
    return flag != nullptr && std::string_view(flag) == "1";
  }();
  if (!check_escaped) return false;
  const std::string escaped = absl::CHexEscape(secret);
  return escaped != secret && text.find(escaped) != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto [yaml, overrides] = Split(input);

  // Every non-empty text the resolver handed out during this load.
  auto handed_out = std::make_shared<std::vector<std::string>>();
  auto recording = [handed_out](std::optional<std::string> (*lookup)(const std::string&)) {
    return [handed_out, lookup](const std::string& name) {
      std::optional<std::string> value = lookup(name);
      if (value.has_value() && !value->empty()) handed_out->push_back(*value);
      return value;
    };
  };
  const Resolver resolver{.env = recording(FakeEnv), .file = recording(FakeFile)};

  absl::StatusOr<Config> loaded;
  try {
    loaded = outbox::config::LoadYaml(yaml, overrides, resolver);
  } catch (...) {
    __builtin_trap();  // an exception escaped the config module
  }

  // A secret the input spells itself is no secret; and a mask made of stars cannot hide a text made of stars.
  auto hidden = [&input](const std::string& secret) {
    return !OnlyStars(secret) && input.find(secret) == std::string_view::npos &&
           input.find(absl::CHexEscape(secret)) == std::string_view::npos;
  };

  if (!loaded.ok()) {
    if (loaded.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    const absl::string_view message = loaded.status().message();
    for (const std::string& secret : *handed_out) {
      if (hidden(secret) && Shows(std::string_view(message.data(), message.size()), secret)) __builtin_trap();
    }
    return 0;
  }

  // Loaded: every resolved text is among the config's secrets, and Redact() hides each of them.
  const Config& config = *loaded;
  for (const std::string& secret : config.secrets) {
    if (secret.empty()) __builtin_trap();
  }
  for (const std::string& secret : *handed_out) {
    bool listed = false;
    for (const std::string& s : config.secrets) listed = listed || s == secret;
    if (!listed) __builtin_trap();
  }
  for (const std::string& secret : config.secrets) {
    if (secret.find('*') != std::string::npos) continue;
    const std::string redacted = outbox::config::Redact(config, "\n" + secret + "\n");
    if (redacted.find(secret) != std::string::npos) __builtin_trap();
  }
  if (config.pipelines.empty()) __builtin_trap();  // a loaded config has at least one pipeline
  for (const outbox::config::PipelineConfig& pipeline : config.pipelines) {
    (void)outbox::config::SplitTableName(pipeline.outbox.table);
  }
  return 0;
}
