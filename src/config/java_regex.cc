// java.util.regex routes on PCRE2 (see java_regex.h).
#include "config/java_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/strings.h"

namespace outbox::config {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Java's `.` (no DOTALL): anything but its line terminators.
constexpr std::string_view kJavaDot = "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]";
// Java's `$` (no MULTILINE): the end, or before a final line terminator (\r\n counts as one; not between them).
constexpr std::string_view kJavaDollar = "(?=\\r\\n\\z|(?<!\\r)\\n\\z|[\\r\\x{85}\\x{2028}\\x{2029}]\\z|\\z)";

// Unicode general categories: the \p{..} names both engines read the same way.
constexpr std::array<std::string_view, 38> kCategories = {
    "L",  "Lu", "Ll", "Lt", "Lm", "Lo", "M",  "Mn", "Mc", "Me", "N",  "Nd", "Nl", "No", "P",  "Pc", "Pd", "Ps", "Pe",
    "Pi", "Pf", "Po", "S",  "Sm", "Sc", "Sk", "So", "Z",  "Zs", "Zl", "Zp", "C",  "Cc", "Cf", "Co", "Cs", "Cn", "Lc"};

absl::Status Differs(std::string_view what, size_t at) {
  return absl::InvalidArgumentError(
      Cat(what, " at index ", at, " is refused: java.util.regex and the relay's PCRE2 would read it differently"));
}

// Checks a Java pattern left to right and writes the PCRE2 pattern with the same meaning. One use.
class Translator {
 public:
  explicit Translator(std::string_view java) : in_(java) {}

  absl::Status Run() {
    while (pos_ < in_.size()) {
      if (absl::Status st = Step(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  const std::string& pattern() const { return out_; }
  int groups() const { return groups_; }
  const std::map<std::string, int>& names() const { return names_; }

 private:
  absl::Status Step() {
    const size_t at = pos_;
    const char c = in_[pos_++];
    switch (c) {
      case '\\': return Escape(at, /*in_class=*/false);
      case '[': return Class(at);
      case '(': return Group(at);
      case '.': out_.append(kJavaDot); return absl::OkStatus();
      case '$': out_.append(kJavaDollar); return absl::OkStatus();
      case '{': {
        const size_t close = in_.find('}', pos_);
        const std::string_view body = close == std::string_view::npos ? "" : in_.substr(pos_, close - pos_);
        const size_t comma = body.find(',');
        const bool quantifier = !body.empty() && IsAsciiDigit(body[0]) &&
                                body.find_first_not_of("0123456789,") == std::string_view::npos &&
                                comma == body.rfind(',');
        if (!quantifier) return Differs("a '{' that is not a quantifier {n}, {n,} or {n,m}", at);
        out_.append(in_.substr(at, close + 1 - at));
        pos_ = close + 1;
        return absl::OkStatus();
      }
      case ']':
      case '}':
        out_.push_back('\\');
        out_.push_back(c);
        return absl::OkStatus();
      default:
        out_.push_back(c);
        return absl::OkStatus();
    }
  }

  absl::Status Escape(size_t at, bool in_class) {
    if (pos_ >= in_.size()) return absl::InvalidArgumentError(Cat("a trailing '\\' at index ", at));
    const char c = in_[pos_++];
    const auto copy = [&] {
      out_.append(in_.substr(at, pos_ - at));
      return absl::OkStatus();
    };
    if (static_cast<unsigned char>(c) >= 0x80) return Differs("'\\' before a non-ASCII character", at);
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c)) return copy();  // an escaped symbol is itself in both
    switch (c) {
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S': case 't': case 'n': case 'r': case 'f':
      case 'e': case 'a': case 'h': case 'H': case 'v': case 'V':
        return copy();
      case 'R': case 'A': case 'z': case 'G':
        if (in_class) return Differs(Cat("\\", std::string(1, c), " inside a class"), at);
        return copy();
      case 'Q': {
        const size_t end = in_.find("\\E", pos_);
        pos_ = end == std::string_view::npos ? in_.size() : end + 2;
        return copy();
      }
      case 'x':
        if (pos_ + 2 <= in_.size() && IsHexDigit(in_[pos_]) && IsHexDigit(in_[pos_ + 1])) {
          pos_ += 2;
          return copy();
        }
        if (pos_ < in_.size() && in_[pos_] == '{') {
          const size_t close = in_.find('}', pos_);
          if (close != std::string_view::npos && close > pos_ + 1 && close - pos_ <= 7 &&
              std::all_of(in_.begin() + pos_ + 1, in_.begin() + close, IsHexDigit)) {
            pos_ = close + 1;
            return copy();
          }
        }
        return Differs("\\x without two hex digits or {hex}", at);
      case 'p':
      case 'P': {
        std::string_view name;
        if (pos_ < in_.size() && in_[pos_] == '{') {
          const size_t close = in_.find('}', pos_);
          if (close != std::string_view::npos) {
            name = in_.substr(pos_ + 1, close - pos_ - 1);
            pos_ = close + 1;
          }
        } else if (pos_ < in_.size()) {
          name = in_.substr(pos_++, 1);
        }
        if (std::find(kCategories.begin(), kCategories.end(), name) == kCategories.end()) {
          return Differs(Cat("\\", std::string(1, c), "{", name, "} (only Unicode general categories such as \\p{Lu})"),
                         at);
        }
        return copy();
      }
      case 'k': {
        if (in_class) return Differs("\\k inside a class", at);
        const size_t close = in_.find('>', pos_);
        if (pos_ >= in_.size() || in_[pos_] != '<' || close == std::string_view::npos) {
          return absl::InvalidArgumentError(Cat("\\k at index ", at, " without a <name>"));
        }
        const std::string name(in_.substr(pos_ + 1, close - pos_ - 1));
        if (!names_.contains(name)) {
          return absl::InvalidArgumentError(Cat("\\k<", name, "> at index ", at, ": no group with that name before it"));
        }
        pos_ = close + 1;
        return copy();
      }
      case 'b': case 'B':
        return Differs(Cat("\\", std::string(1, c), " (Java's word boundary knows Unicode letters)"), at);
      case 'Z': return Differs("\\Z (use \\z or $)", at);
      case '0': return Differs("an octal escape \\0", at);
      case 'u': return Differs("\\u (write \\x{hhhh})", at);
      default:
        if (IsAsciiDigit(c)) {
          if (in_class) return Differs("a back reference inside a class", at);
          if (pos_ < in_.size() && IsAsciiDigit(in_[pos_])) return Differs("a back reference of two or more digits", at);
          if (c - '0' > groups_) return Differs("a back reference to a group not opened before it", at);
          return copy();
        }
        return Differs(Cat("\\", std::string(1, c)), at);
    }
  }

  absl::Status Class(size_t at) {
    out_.push_back('[');
    if (pos_ < in_.size() && in_[pos_] == '^') out_.push_back(in_[pos_++]);
    if (pos_ < in_.size() && in_[pos_] == ']') out_.push_back(in_[pos_++]);  // first in a class: literal in both
    while (pos_ < in_.size()) {
      const size_t here = pos_;
      const char c = in_[pos_++];
      if (c == ']') {
        out_.push_back(c);
        return absl::OkStatus();
      }
      if (c == '\\') {
        if (absl::Status st = Escape(here, /*in_class=*/true); !st.ok()) return st;
        continue;
      }
      if (c == '[') return Differs("a class inside a class (a union in Java)", here);
      if (c == '&' && pos_ < in_.size() && in_[pos_] == '&') return Differs("a class intersection &&", here);
      out_.push_back(c);
    }
    return absl::InvalidArgumentError(Cat("an unclosed character class at index ", at));
  }

  absl::Status Group(size_t at) {
    if (pos_ < in_.size() && in_[pos_] == '*') return Differs("(*", at);
    if (pos_ >= in_.size() || in_[pos_] != '?') {
      ++groups_;
      out_.push_back('(');
      return absl::OkStatus();
    }
    const std::string_view rest = in_.substr(pos_);
    for (std::string_view plain : {"?:", "?=", "?!", "?>", "?<=", "?<!"}) {
      if (rest.starts_with(plain)) {
        out_.push_back('(');
        out_.append(plain);
        pos_ += plain.size();
        return absl::OkStatus();
      }
    }
    if (rest.starts_with("?<")) {
      const size_t close = rest.find('>');
      const std::string_view name = close == std::string_view::npos ? "" : rest.substr(2, close - 2);
      if (name.empty() || !IsAsciiLetter(name[0]) ||
          !std::all_of(name.begin(), name.end(), [](char n) { return IsAsciiLetter(n) || IsAsciiDigit(n); })) {
        return absl::InvalidArgumentError(
            Cat("a group name at index ", at, " must be a letter then letters or digits (Java's rule)"));
      }
      if (!names_.emplace(std::string(name), ++groups_).second) {
        return absl::InvalidArgumentError(Cat("the group name ", name, " at index ", at, " is used twice"));
      }
      out_.push_back('(');
      out_.append(rest.substr(0, close + 1));
      pos_ += close + 1;
      return absl::OkStatus();
    }
    return Differs("an inline flag or a (? construct other than (?:, (?=, (?!, (?<=, (?<!, (?> and (?<name>", at);
  }

  std::string_view in_;
  int groups_ = 0;                    // capturing groups opened so far
  std::map<std::string, int> names_;  // named group -> its number
  size_t pos_ = 0;
  std::string out_;
};

// A match runs out after this many backtracking steps (PCRE2's default is 10,000,000): a pattern such as (a*)*b
// on a long value gives no topic instead of holding the loop thread.
constexpr uint32_t kMatchLimit = 1'000'000;

}  // namespace

struct RouteRegex::Code {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

absl::StatusOr<std::vector<std::string>> SplitDebeziumRegexList(std::string_view list) {
  std::vector<std::string> out;
  std::string part;
  const auto finish = [&] {
    // part.trim().replace("\\,", ",").
    if (const std::string_view trimmed = JavaTrim(part); !trimmed.empty()) {
      out.push_back(absl::StrReplaceAll(ToAbsl(trimmed), {{"\\,", ","}}));
    }
    part.clear();
  };
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '\\') {
      if (i + 1 == list.size()) return absl::InvalidArgumentError("ends in an unterminated escape (a lone backslash)");
      part.push_back(list[i]);
      part.push_back(list[++i]);
    } else if (list[i] == ',') {
      finish();
    } else {
      part.push_back(list[i]);
    }
  }
  finish();
  return out;
}

absl::StatusOr<std::vector<RouteRegex>> CompileDebeziumPatternList(std::string_view list) {
  absl::StatusOr<std::vector<std::string>> patterns = SplitDebeziumRegexList(list);
  if (!patterns.ok()) return patterns.status();
  std::vector<RouteRegex> out;
  std::vector<std::string> problems;
  for (const std::string& pattern : *patterns) {
    absl::StatusOr<RouteRegex> regex = RouteRegex::Compile(pattern, RouteRegex::Case::kIgnoreAsciiCase);
    if (regex.ok()) {
      out.push_back(*std::move(regex));
    } else {
      problems.push_back(Cat("\"", pattern, "\": ", regex.status().message()));
    }
  }
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  return out;
}

absl::StatusOr<RouteRegex> RouteRegex::Compile(std::string_view java_pattern, Case letter_case) {
  const bool ignore_case = letter_case == Case::kIgnoreAsciiCase;
  if (ignore_case && !IsAscii(java_pattern)) {
    return absl::InvalidArgumentError("has characters beyond ASCII, whose case Java and PCRE2 fold differently");
  }
  if (ignore_case) {
    for (size_t i = 0; i < java_pattern.size(); ++i) {
      const char c = java_pattern[i];
      if (c == '\\' && i + 1 < java_pattern.size()) {
        const char escaped = java_pattern[++i];
        if (escaped == 'p' || escaped == 'P') {
          return absl::InvalidArgumentError("uses \\p{..}, which case-insensitive Java and PCRE2 read differently");
        }
      }
    }
  }
  Translator t(java_pattern);
  if (absl::Status st = t.Run(); !st.ok()) return st;
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto code = std::make_shared<Code>();
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(t.pattern().data()), t.pattern().size(),
                             PCRE2_UTF | (ignore_case ? PCRE2_CASELESS : 0u), &error, &offset, nullptr);
  if (code->code == nullptr) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    return absl::InvalidArgumentError(Cat("not a valid regular expression (", reinterpret_cast<char*>(message.data()),
                                          ")"));
  }
  uint32_t captures = 0;
  pcre2_pattern_info(code->code, PCRE2_INFO_CAPTURECOUNT, &captures);
  if (static_cast<int>(captures) != t.groups()) {
    return absl::InvalidArgumentError("could not be read the same way (group count differs)");
  }
  code->context = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(code->context, kMatchLimit);
  RouteRegex regex;
  regex.code_ = std::move(code);
  regex.groups_ = t.groups();
  regex.names_ = t.names();
  regex.pieces_ = {ReplacementPiece{.is_group = true, .literal = "", .group = 0}};  // replaceFirst("$0")
  return regex;
}

absl::Status RouteRegex::SetReplacement(std::string_view java_replacement) {
  absl::StatusOr<std::vector<ReplacementPiece>> pieces = ParseJavaReplacement(java_replacement, groups_, names_);
  if (!pieces.ok()) return pieces.status();
  pieces_ = *std::move(pieces);
  return absl::OkStatus();
}

bool RouteRegex::Matches(std::string_view value) const {
  if (code_ == nullptr) return false;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  return pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(value.data()), value.size(), 0,
                     PCRE2_ANCHORED | PCRE2_ENDANCHORED, data.get(), code_->context) >= 0;
}

std::string RouteRegex::Route(std::string_view value) const {
  if (code_ == nullptr) return std::string();
  const auto subject = reinterpret_cast<PCRE2_SPTR>(value.data());
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  // Matcher.matches(): the whole value.
  int rc = pcre2_match(code_->code, subject, value.size(), 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, data.get(),
                       code_->context);
  if (rc == PCRE2_ERROR_NOMATCH) return std::string(value);
  if (rc < 0) return std::string();
  // replaceFirst(): the first match a search finds.
  rc = pcre2_match(code_->code, subject, value.size(), 0, PCRE2_NO_UTF_CHECK, data.get(), code_->context);
  if (rc < 0) return std::string();
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
  const uint32_t pairs = pcre2_get_ovector_count(data.get());
  std::string out(value.substr(0, ov[0]));
  for (const ReplacementPiece& piece : pieces_) {
    if (!piece.is_group) {
      out.append(piece.literal);
      continue;
    }
    const auto g = static_cast<uint32_t>(piece.group);
    if (g < pairs && ov[2 * g] != PCRE2_UNSET) out.append(value.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]));
  }
  out.append(value.substr(ov[1]));
  return out;
}

absl::StatusOr<std::vector<ReplacementPiece>> ParseJavaReplacement(std::string_view replacement, int groups,
                                                                   const std::map<std::string, int>& names) {
  std::vector<ReplacementPiece> pieces;
  const auto literal = [&pieces](char c) {
    if (pieces.empty() || pieces.back().is_group) pieces.push_back(ReplacementPiece{});
    pieces.back().literal.push_back(c);
  };
  size_t pos = 0;
  while (pos < replacement.size()) {
    const char c = replacement[pos++];
    if (c == '\\') {
      if (pos >= replacement.size()) return absl::InvalidArgumentError("character to be escaped is missing");
      literal(replacement[pos++]);
      continue;
    }
    if (c != '$') {
      literal(c);
      continue;
    }
    if (pos >= replacement.size()) {
      return absl::InvalidArgumentError("illegal group reference: group index is missing");
    }
    int group = 0;
    if (replacement[pos] == '{') {
      const size_t begin = ++pos;
      while (pos < replacement.size() && (IsAsciiLetter(replacement[pos]) || IsAsciiDigit(replacement[pos]))) ++pos;
      const std::string name(replacement.substr(begin, pos - begin));
      if (name.empty()) return absl::InvalidArgumentError("named capturing group has 0 length name");
      if (pos >= replacement.size() || replacement[pos] != '}') {
        return absl::InvalidArgumentError("named capturing group is missing trailing '}'");
      }
      ++pos;
      auto it = names.find(name);
      if (it == names.end()) return absl::InvalidArgumentError(Cat("no group with name {", name, "}"));
      group = it->second;
    } else {
      if (!IsAsciiDigit(replacement[pos])) return absl::InvalidArgumentError("illegal group reference");
      group = replacement[pos++] - '0';
      // Java takes further digits while the number still names an existing group.
      while (pos < replacement.size() && IsAsciiDigit(replacement[pos]) &&
             group * 10 + (replacement[pos] - '0') <= groups) {
        group = group * 10 + (replacement[pos++] - '0');
      }
      if (group > groups) return absl::InvalidArgumentError(Cat("no group ", group));
    }
    pieces.push_back(ReplacementPiece{.is_group = true, .literal = "", .group = group});
  }
  return pieces;
}

}  // namespace outbox::config
