#include "outbox/trace_context.h"

#include <cstddef>
#include <vector>

namespace outbox::outbox {
namespace {

// W3C Trace Context level 1: version "-" trace-id "-" parent-id "-" trace-flags, then (versions after 00 only)
// more fields after another '-'.
constexpr size_t kTraceIdAt = 3;
constexpr size_t kTraceIdSize = 32;
constexpr size_t kSpanIdAt = 36;
constexpr size_t kSpanIdSize = 16;
constexpr size_t kFlagsAt = 53;
constexpr size_t kTraceparentSize = 55;
constexpr size_t kMaxMembers = 32;
constexpr size_t kMaxKeySize = 256;
constexpr size_t kMaxValueSize = 256;
constexpr size_t kMaxTenantAt = 241;  // the '@' of a multi-tenant key at most here
constexpr size_t kMaxVendorSize = 14;
constexpr unsigned kKeptFlags = 0x03;  // sampled and random

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
unsigned HexValue(char c) { return c <= '9' ? unsigned(c - '0') : unsigned(c - 'a' + 10); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || IsDigit(c); }
bool IsOptionalWhitespace(char c) { return c == ' ' || c == '\t'; }

// Lower-case hex, not all zeros.
bool IsId(std::string_view id) {
  bool nonzero = false;
  for (char c : id) {
    if (!IsLowerHex(c)) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

// key = simple-key / multi-tenant-key: lower-case letters, digits, '_', '-', '*', '/', one '@' at most (its tenant
// part may start with a digit, its vendor part 1 to 14 characters), 256 at most.
bool IsKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeySize || !IsLowerOrDigit(key[0])) return false;
  bool tenant = false;
  for (size_t i = 1; i < key.size(); ++i) {
    const char c = key[i];
    if (!IsLowerOrDigit(c) && c != '_' && c != '-' && c != '@' && c != '*' && c != '/') return false;
    if (c != '@') continue;
    if (tenant || i > kMaxTenantAt) return false;
    tenant = true;
    const size_t vendor = key.size() - i - 1;
    if (vendor == 0 || vendor > kMaxVendorSize) return false;
  }
  return tenant || !IsDigit(key[0]);
}

// value: printable ASCII but ',' and '=', 256 at most, not ending in a space.
bool IsValue(std::string_view value) {
  if (value.empty() || value.size() > kMaxValueSize || value.back() == ' ') return false;
  for (char c : value) {
    if (c < ' ' || c > '~' || c == ',' || c == '=') return false;
  }
  return true;
}

// The tracestate as the propagator writes it back, or "" when it drops it.
void NormalizeTraceState(std::string_view header, std::string* out) {
  out->clear();
  std::vector<std::string_view> keys;
  size_t members = 0;
  size_t start = 0;
  while (start <= header.size()) {
    size_t end = header.find(',', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view member = header.substr(start, end - start);
    start = end + 1;
    while (!member.empty() && IsOptionalWhitespace(member.front())) member.remove_prefix(1);
    while (!member.empty() && IsOptionalWhitespace(member.back())) member.remove_suffix(1);
    if (member.empty()) continue;
    const size_t eq = member.find('=');
    const std::string_view key = member.substr(0, eq);
    bool valid = ++members <= kMaxMembers && eq != std::string_view::npos && IsKey(key) &&
                 IsValue(member.substr(eq + 1));
    for (std::string_view seen : keys) valid = valid && seen != key;
    if (!valid) {
      out->clear();
      return;
    }
    keys.push_back(key);
    if (!out->empty()) out->push_back(',');
    out->append(member);
  }
}

}  // namespace

bool PropagateTraceContext(std::string_view traceparent, std::string_view tracestate, std::string* traceparent_out,
                           std::string* tracestate_out) {
  const std::string_view tp = traceparent;
  if (tp.size() < kTraceparentSize || (tp.size() > kTraceparentSize && tp[kTraceparentSize] != '-')) return false;
  if (tp[kTraceIdAt - 1] != '-' || tp[kSpanIdAt - 1] != '-' || tp[kFlagsAt - 1] != '-') return false;
  // Versions 00 to fe; 00 has nothing after the flags.
  if (!IsLowerHex(tp[0]) || !IsLowerHex(tp[1]) || tp.substr(0, 2) == "ff") return false;
  if (tp.substr(0, 2) == "00" && tp.size() > kTraceparentSize) return false;
  const std::string_view trace_id = tp.substr(kTraceIdAt, kTraceIdSize);
  const std::string_view span_id = tp.substr(kSpanIdAt, kSpanIdSize);
  if (!IsId(trace_id) || !IsId(span_id)) return false;
  if (!IsLowerHex(tp[kFlagsAt]) || !IsLowerHex(tp[kFlagsAt + 1])) return false;
  const unsigned flags = (HexValue(tp[kFlagsAt]) * 16 + HexValue(tp[kFlagsAt + 1])) & kKeptFlags;
  traceparent_out->assign("00-");
  traceparent_out->append(trace_id);
  traceparent_out->push_back('-');
  traceparent_out->append(span_id);
  traceparent_out->append("-0");
  traceparent_out->push_back(char('0' + flags));
  NormalizeTraceState(tracestate, tracestate_out);
  return true;
}

}  // namespace outbox::outbox
