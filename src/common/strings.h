// String helpers that accept both std::string_view and absl::string_view. Debian's abseil (20220623) is built
// with its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0), so absl::StrCat does not take a
// std::string_view; the relay's public types use std::string_view, and these bridge the two.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }
inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The status message as a std::string (for logs).
inline std::string Msg(const absl::Status& status) { return std::string(status.message()); }

// Java's String.trim: leading and trailing characters up to ' '.
inline std::string_view JavaTrim(std::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

// Whether every byte of `text` is ASCII.
inline bool IsAscii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

namespace strings_internal {
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s.data(), s.size()); }
inline void AppendPiece(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void AppendPiece(std::string& out, const std::string& s) { out.append(s); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s ? s : "(null)"); }
inline void AppendPiece(std::string& out, char c) { out.push_back(c); }
inline void AppendPiece(std::string& out, bool b) { out.append(b ? "true" : "false"); }
template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
void AppendPiece(std::string& out, T v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}
inline void AppendPiece(std::string& out, double v) { out.append(std::to_string(v)); }
}  // namespace strings_internal

// Concatenates strings (either string_view), C strings, characters and integers.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (strings_internal::AppendPiece(out, args), ...);
  return out;
}

template <typename... Args>
void Append(std::string* out, const Args&... args) {
  (strings_internal::AppendPiece(*out, args), ...);
}

// Appends a code point (up to U+10FFFF) in UTF-8; a surrogate, which Java's strings may hold alone, as its three
// bytes (WTF-8).
inline void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace outbox

// Lets spdlog/fmt print absl::string_view (e.g. a status message) directly.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view s, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

