// java.util.Properties and Kafka Connect connector JSON to ordered entries (see java_properties.h).
#include "config/java_properties.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "common/strings.h"

namespace outbox::config::internal {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One logical line (continuations joined, their backslashes and the next lines' leading blanks removed), still
// escaped, and the line it starts on.
struct LogicalLine {
  std::string text;
  int line = 0;
};

// Splits text into natural lines (\n, \r or \r\n) and joins continued ones; comment and blank lines are dropped.
std::vector<LogicalLine> LogicalLines(std::string_view text) {
  std::vector<LogicalLine> lines;
  LogicalLine current;
  bool continuing = false;
  int line_number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view natural = text.substr(pos, end - pos);
    ++line_number;
    pos = end + 1;
    if (end < text.size() && text[end] == '\r' && pos < text.size() && text[pos] == '\n') ++pos;

    size_t first = 0;
    while (first < natural.size() && IsBlank(natural[first])) ++first;
    natural.remove_prefix(first);
    if (!continuing) {
      if (natural.empty() || natural[0] == '#' || natural[0] == '!') {
        if (end >= text.size()) break;
        continue;
      }
      current = LogicalLine{.text = "", .line = line_number};
    }
    size_t backslashes = 0;
    while (backslashes < natural.size() && natural[natural.size() - 1 - backslashes] == '\\') ++backslashes;
    continuing = backslashes % 2 == 1;
    if (continuing) natural.remove_suffix(1);
    current.text.append(natural);
    if (!continuing) lines.push_back(std::move(current));
    if (end >= text.size()) break;
  }
  if (continuing) lines.push_back(std::move(current));  // a continuation at the end of the file: Java keeps it
  return lines;
}

// Java's loadConvert: resolves escapes. `*kept` is the length of the result up to and including the last
// escaped character, so that trimming never removes an escaped blank.
absl::StatusOr<std::string> Unescape(std::string_view text, int line, size_t* kept) {
  std::string out;
  *kept = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (++i == text.size()) break;  // a lone trailing backslash is dropped, as Java does
    const char c = text[i];
    switch (c) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        uint32_t code = 0;
        for (int k = 1; k <= 4; ++k) {
          const int digit = i + k < text.size() ? HexDigit(text[i + k]) : -1;
          if (digit < 0) return absl::InvalidArgumentError(Cat("line ", line, ": malformed \\uxxxx escape"));
          code = code * 16 + static_cast<uint32_t>(digit);
        }
        i += 4;
        // A UTF-16 surrogate pair written as two escapes.
        if (code >= 0xD800 && code < 0xDC00 && i + 6 < text.size() && text[i + 1] == '\\' && text[i + 2] == 'u') {
          uint32_t low = 0;
          bool ok = true;
          for (int k = 3; k <= 6; ++k) {
            const int digit = HexDigit(text[i + k]);
            ok = ok && digit >= 0;
            low = low * 16 + static_cast<uint32_t>(digit < 0 ? 0 : digit);
          }
          if (ok && low >= 0xDC00 && low < 0xE000) {
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          }
        }
        AppendUtf8(code, &out);
        break;
      }
      default: out.push_back(c); break;
    }
    *kept = out.size();
  }
  return out;
}

absl::StatusOr<std::string> UnescapeTrimmed(std::string_view text, int line) {
  size_t kept = 0;
  absl::StatusOr<std::string> out = Unescape(text, line, &kept);
  if (!out.ok()) return out;
  size_t end = out->size();
  while (end > kept && (IsBlank((*out)[end - 1]) || (*out)[end - 1] == '\n' || (*out)[end - 1] == '\r')) --end;
  out->resize(end);
  return out;
}

// Appends or replaces (keeping the first position) an entry.
void Put(PropertyEntry entry, std::vector<PropertyEntry>* entries, std::map<std::string, size_t>* index) {
  auto [it, inserted] = index->emplace(entry.key, entries->size());
  if (inserted) {
    entries->push_back(std::move(entry));
  } else {
    (*entries)[it->second] = std::move(entry);
  }
}

}  // namespace

absl::StatusOr<std::vector<PropertyEntry>> ParseJavaProperties(std::string_view text) {
  std::vector<PropertyEntry> entries;
  std::map<std::string, size_t> index;
  for (const LogicalLine& logical : LogicalLines(text)) {
    const std::string_view line = logical.text;
    // The key ends at the first unescaped '=', ':' or blank.
    size_t key_end = 0;
    bool escaped = false;
    for (; key_end < line.size(); ++key_end) {
      const char c = line[key_end];
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '=' || c == ':' || IsBlank(c)) {
        break;
      }
    }
    size_t value_begin = key_end;
    while (value_begin < line.size() && IsBlank(line[value_begin])) ++value_begin;
    if (value_begin < line.size() && (line[value_begin] == '=' || line[value_begin] == ':')) {
      ++value_begin;
      while (value_begin < line.size() && IsBlank(line[value_begin])) ++value_begin;
    }
    absl::StatusOr<std::string> key = UnescapeTrimmed(line.substr(0, key_end), logical.line);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::string> value = UnescapeTrimmed(line.substr(value_begin), logical.line);
    if (!value.ok()) return value.status();
    if (key->empty()) return absl::InvalidArgumentError(Cat("line ", logical.line, ": empty key"));
    Put(PropertyEntry{.key = *std::move(key), .value = *std::move(value), .line = logical.line}, &entries, &index);
  }
  return entries;
}

bool LooksLikeJsonObject(std::string_view text) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // a UTF-8 byte order mark
  while (i < text.size() && (IsBlank(text[i]) || text[i] == '\n' || text[i] == '\r')) ++i;
  return i < text.size() && text[i] == '{';
}

bool MayBeConnectorJson(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return true;  // unparsable: the connector reader says why
  if (doc.contains("connector.class")) return true;
  auto config = doc.find("config");
  return config != doc.end() && config->is_object() && config->contains("connector.class");
}

absl::StatusOr<std::vector<PropertyEntry>> ParseConnectorJson(std::string_view text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(Cat("invalid JSON: ", e.what()));
  }
  if (!doc.is_object()) return absl::InvalidArgumentError("a connector config must be a JSON object");
  const nlohmann::json* config = &doc;
  std::optional<std::string> name;
  if (auto it = doc.find("config"); it != doc.end() && it->is_object()) {
    config = &*it;
    for (const auto& [key, value] : doc.items()) {
      if (key == "config") continue;
      if (key == "name" && value.is_string()) {
        name = value.get<std::string>();
      } else if (key != "tasks" && key != "type") {  // GET /connectors/x also returns these
        return absl::InvalidArgumentError(Cat(key, ": unexpected next to \"config\" in a connector JSON"));
      }
    }
  }
  std::vector<PropertyEntry> entries;
  std::map<std::string, size_t> index;
  if (name.has_value()) Put(PropertyEntry{.key = "name", .value = *name, .line = 0}, &entries, &index);
  for (const auto& [key, value] : config->items()) {
    std::string text_value;
    switch (value.type()) {
      case nlohmann::json::value_t::null:
        continue;
      case nlohmann::json::value_t::string:
        text_value = value.get<std::string>();
        break;
      case nlohmann::json::value_t::boolean:
        text_value = value.get<bool>() ? "true" : "false";
        break;
      case nlohmann::json::value_t::number_integer:
      case nlohmann::json::value_t::number_unsigned:
      case nlohmann::json::value_t::number_float:
        text_value = value.dump();
        break;
      default:
        return absl::InvalidArgumentError(Cat(key, ": expected a string, number or boolean"));
    }
    Put(PropertyEntry{.key = key, .value = std::move(text_value), .line = 0}, &entries, &index);
  }
  return entries;
}

}  // namespace outbox::config::internal
