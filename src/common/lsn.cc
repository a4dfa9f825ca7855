// Lsn formatting and parsing.
#include "common/strings.h"
#include "common/lsn.h"

#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace outbox {

std::string Lsn::ToString() const {
  // Called for every record (its source LSN): std::to_chars, not snprintf's format parsing.
  char buf[20];
  char* end = std::to_chars(buf, buf + 8, static_cast<uint32_t>(value_ >> 32), 16).ptr;
  *end++ = '/';
  end = std::to_chars(end, end + 8, static_cast<uint32_t>(value_), 16).ptr;
  for (char* c = buf; c != end; ++c) *c = absl::ascii_toupper(static_cast<unsigned char>(*c));
  return std::string(buf, end);
}

namespace {
bool ParseHex32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 8) return false;
  uint32_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}
}  // namespace

absl::StatusOr<Lsn> Lsn::Parse(std::string_view text) {
  const size_t slash = text.find('/');
  uint32_t hi = 0, lo = 0;
  if (slash == std::string_view::npos || !ParseHex32(text.substr(0, slash), &hi) ||
      !ParseHex32(text.substr(slash + 1), &lo)) {
    return absl::InvalidArgumentError(Cat("invalid LSN \"", text, "\": expected X/X in hex"));
  }
  return Lsn((static_cast<uint64_t>(hi) << 32) | lo);
}

}  // namespace outbox
