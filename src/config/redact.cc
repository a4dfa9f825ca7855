// Secrets out of text: Redact() masks the config's secret values and any password in conninfo- or URI-like text;
// ConninfoPasswords() finds the passwords a libpq conninfo carries, so that the loader can list them as secrets.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "config/config.h"
#include "config/config_internal.h"

namespace outbox::config {
namespace {

constexpr char kMask[] = "****";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding as libpq does for URIs (a malformed escape is kept as written).
std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

void AddPassword(absl::string_view as_written, std::string decoded, std::vector<std::string>* out) {
  if (!as_written.empty()) out->emplace_back(as_written);
  if (!decoded.empty() && decoded != as_written) out->push_back(std::move(decoded));
}

// postgresql://[user[:password]@][host][:port][/dbname][?param=value&...]
void UriPasswords(absl::string_view uri, std::vector<std::string>* out) {
  absl::string_view rest = uri.substr(uri.find("://") + 3);
  // libpq takes the user info up to the first '@' before any '/'.
  size_t stop = rest.find_first_of("@/");
  if (stop != absl::string_view::npos && rest[stop] == '@') {
    absl::string_view user_info = rest.substr(0, stop);
    size_t colon = user_info.find(':');
    if (colon != absl::string_view::npos) {
      absl::string_view password = user_info.substr(colon + 1);
      AddPassword(password, PercentDecode(password), out);
    }
  }
  size_t query = rest.find('?');
  if (query == absl::string_view::npos) return;
  for (absl::string_view param : absl::StrSplit(rest.substr(query + 1), '&')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(param, absl::MaxSplits('=', 1));
    if (IsSecretKey(std::string_view(kv.first.data(), kv.first.size()))) {
      AddPassword(kv.second, PercentDecode(kv.second), out);  // password, sslpassword
    }
  }
}

// keyword = value pairs separated by whitespace; a value is 'single quoted' or bare, with backslash escapes.
void KeyValuePasswords(absl::string_view conninfo, std::vector<std::string>* out) {
  size_t i = 0;
  const size_t n = conninfo.size();
  while (i < n) {
    while (i < n && IsSpace(conninfo[i])) ++i;
    size_t key_begin = i;
    while (i < n && conninfo[i] != '=' && !IsSpace(conninfo[i])) ++i;
    absl::string_view key = conninfo.substr(key_begin, i - key_begin);
    while (i < n && IsSpace(conninfo[i])) ++i;
    if (i >= n || conninfo[i] != '=') return;  // malformed: libpq refuses it, nothing more to find
    ++i;
    while (i < n && IsSpace(conninfo[i])) ++i;
    const bool quoted = i < n && conninfo[i] == '\'';
    if (quoted) ++i;
    size_t value_begin = i;
    std::string decoded;
    while (i < n && (quoted ? conninfo[i] != '\'' : !IsSpace(conninfo[i]))) {
      if (conninfo[i] == '\\' && i + 1 < n) ++i;
      decoded.push_back(conninfo[i]);
      ++i;
    }
    absl::string_view as_written = conninfo.substr(value_begin, i - value_begin);
    if (quoted && i < n) ++i;  // the closing quote
    if (IsSecretKey(std::string_view(key.data(), key.size()))) AddPassword(as_written, std::move(decoded), out);
  }
}

// Masks the value of every `password=...` (any case, spaces allowed around '='; 'quoted' values whole), which
// also covers sasl.password=..., PGPASSWORD=... and URI query parameters.
std::string MaskPasswordAssignments(const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(text);
  const std::string kWord = "password";
  std::string out;
  size_t copied = 0;
  size_t pos = 0;
  while ((pos = lower.find(kWord, pos)) != std::string::npos) {
    size_t i = pos + kWord.size();
    pos = i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t value_begin = i;
    if (i < text.size() && text[i] == '\'') {
      ++i;
      while (i < text.size() && text[i] != '\'') i += text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, text.size());
    } else {
      while (i < text.size() && !IsSpace(text[i]) && text[i] != '&' && text[i] != '"' && text[i] != '\'') ++i;
    }
    if (i == value_begin) continue;
    out.append(text, copied, value_begin - copied);
    out.append(kMask);
    copied = i;
    pos = i;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

// Masks the password of every `scheme://user:password@host` in `text`.
std::string MaskUriPasswords(const std::string& text) {
  std::string out;
  size_t copied = 0;
  size_t pos = 0;
  while ((pos = text.find("://", pos)) != std::string::npos) {
    size_t begin = pos + 3;
    size_t i = begin;
    while (i < text.size() && text[i] != '@' && text[i] != '/' && text[i] != '?' && text[i] != '#' &&
           text[i] != '"' && !IsSpace(text[i])) {
      ++i;
    }
    pos = i;
    if (i >= text.size() || text[i] != '@') continue;
    size_t colon = text.find(':', begin);
    if (colon >= i || colon + 1 == i) continue;
    out.append(text, copied, colon + 1 - copied);
    out.append(kMask);
    copied = i;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace

namespace internal {

std::vector<std::string> UrlPasswords(absl::string_view url) {
  std::vector<std::string> out;
  if (absl::StrContains(url, "://")) UriPasswords(url, &out);
  return out;
}

std::vector<std::string> ConninfoPasswords(absl::string_view conninfo) {
  std::vector<std::string> out;
  if (absl::StartsWith(conninfo, "postgresql://") || absl::StartsWith(conninfo, "postgres://")) {
    UriPasswords(conninfo, &out);
  } else {
    KeyValuePasswords(conninfo, &out);
  }
  return out;
}

}  // namespace internal

namespace {

std::string RedactSecrets(const std::vector<std::string>& all, std::string text) {
  // Longest first, so that a secret containing another is masked whole.
  // A secret also appears C-escaped in error messages that quote a value (Quoted()): mask that form too.
  std::vector<std::string> escaped;
  for (const std::string& secret : all) {
    std::string e = absl::CHexEscape(secret);
    if (e != secret) escaped.push_back(std::move(e));
  }
  std::vector<absl::string_view> secrets;
  for (const std::string& secret : all) {
    if (!secret.empty()) secrets.emplace_back(secret);
  }
  for (const std::string& e : escaped) secrets.emplace_back(e);
  std::sort(secrets.begin(), secrets.end(),
            [](absl::string_view a, absl::string_view b) { return a.size() > b.size(); });
  for (absl::string_view secret : secrets) absl::StrReplaceAll({{secret, kMask}}, &text);
  return MaskUriPasswords(MaskPasswordAssignments(text));
}

}  // namespace

std::string Redact(const Config& config, std::string text) { return RedactSecrets(config.secrets, std::move(text)); }
std::string Redact(const PipelineConfig& pipeline, std::string text) {
  return RedactSecrets(pipeline.secrets, std::move(text));
}

}  // namespace outbox::config
