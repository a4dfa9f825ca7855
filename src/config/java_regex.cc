// java.util.regex pattern and replacement to std::regex ECMAScript forms (see java_regex.h).
#include "config/java_regex.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/strings.h"

namespace outbox::config::internal {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// Characters with a meaning in an ECMAScript pattern outside a class.
bool IsEcmaSyntax(char c) { return std::string_view("^$\\.*+?()[]{}|/").find(c) != std::string_view::npos; }

// Characters with a meaning inside an ECMAScript class.
bool IsEcmaClassSyntax(char c) { return c == ']' || c == '\\' || c == '^' || c == '-' || c == '['; }

absl::Status Unsupported(std::string_view what, size_t pos) {
  return absl::InvalidArgumentError(Cat(what, " at index ", pos, " is not supported by the relay's regex engine"));
}

// Scans a Java pattern left to right, writing the ECMAScript pattern. One use.
class RegexTranslator {
 public:
  explicit RegexTranslator(std::string_view java) : in_(java) {}

  absl::StatusOr<TranslatedRegex> Run() {
    while (pos_ < in_.size()) {
      absl::Status st = Step();
      if (!st.ok()) return st;
    }
    return std::move(out_);
  }

 private:
  absl::Status Step() {
    const size_t at = pos_;
    const char c = in_[pos_++];
    const bool after_quantifier = after_quantifier_;
    after_quantifier_ = false;
    switch (c) {
      case '\\':
        return Escape(at);
      case '[':
        return Class(at);
      case '(':
        return Group(at);
      case '*':
      case '+':
      case '?':
        if (after_quantifier && c == '+') return Unsupported("a possessive quantifier", at);
        out_.pattern.push_back(c);
        // `?` after a quantifier makes it lazy (ECMAScript has that); anything after a quantifier is a quantifier.
        after_quantifier_ = !(after_quantifier && c == '?');
        return absl::OkStatus();
      case '{': {
        const size_t close = in_.find('}', pos_);
        const std::string_view body = close == std::string_view::npos ? "" : in_.substr(pos_, close - pos_);
        const bool quantifier = !body.empty() && IsAsciiDigit(body[0]) &&
                                body.find_first_not_of("0123456789,") == std::string_view::npos &&
                                body.find(',') == body.rfind(',');
        if (!quantifier) return absl::InvalidArgumentError(Cat("illegal repetition at index ", at));
        out_.pattern.append(in_.substr(at, close + 1 - at));
        pos_ = close + 1;
        after_quantifier_ = true;
        return absl::OkStatus();
      }
      case ']':
      case '}':
        // Literal in Java outside a class; escaped so that no engine reads them as syntax.
        out_.pattern.push_back('\\');
        out_.pattern.push_back(c);
        return absl::OkStatus();
      default:
        out_.pattern.push_back(c);
        return absl::OkStatus();
    }
  }

  // After a backslash at `at` (outside a class).
  absl::Status Escape(size_t at) {
    if (pos_ >= in_.size()) return absl::InvalidArgumentError(Cat("unexpected trailing backslash at index ", at));
    const char c = in_[pos_++];
    switch (c) {
      case 'Q': {
        size_t end = in_.find("\\E", pos_);
        const std::string_view quoted = in_.substr(pos_, end == std::string_view::npos ? std::string_view::npos
                                                                                           : end - pos_);
        for (char q : quoted) AppendLiteral(q);
        pos_ = end == std::string_view::npos ? in_.size() : end + 2;
        return absl::OkStatus();
      }
      case 'E':
        return absl::OkStatus();  // a \E without \Q is ignored by Java
      case 'A':
        out_.pattern.push_back('^');
        return absl::OkStatus();
      case 'z':
        out_.pattern.push_back('$');
        return absl::OkStatus();
      case 'k': {
        if (pos_ >= in_.size() || in_[pos_] != '<') return absl::InvalidArgumentError(Cat("\\k is not followed by "
                                                                                           "'<' at index ", at));
        const size_t close = in_.find('>', pos_);
        if (close == std::string_view::npos) return absl::InvalidArgumentError(Cat("unclosed \\k<name> at index ", at));
        const std::string name(in_.substr(pos_ + 1, close - pos_ - 1));
        auto it = out_.names.find(name);
        if (it == out_.names.end()) {
          return absl::InvalidArgumentError(Cat("named capturing group <", name, "> does not exist at index ", at));
        }
        out_.pattern.append(Cat("\\", it->second));
        pos_ = close + 1;
        return absl::OkStatus();
      }
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S': case 'b': case 'B':
      case 't': case 'n': case 'r': case 'f': case 'x': case 'c':
      case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        if (c == 'x' && pos_ < in_.size() && in_[pos_] == '{') return Unsupported("\\x{...}", at);
        out_.pattern.push_back('\\');
        out_.pattern.push_back(c);
        return absl::OkStatus();
      default:
        if (IsAsciiLetter(c) || IsAsciiDigit(c)) return Unsupported(Cat("\\", c), at);
        AppendLiteral(c);
        return absl::OkStatus();
    }
  }

  void AppendLiteral(char c) {
    if (IsEcmaSyntax(c)) out_.pattern.push_back('\\');
    out_.pattern.push_back(c);
  }

  // After '(' at `at`.
  absl::Status Group(size_t at) {
    if (pos_ >= in_.size() || in_[pos_] != '?') {
      ++out_.groups;
      out_.pattern.push_back('(');
      return absl::OkStatus();
    }
    const std::string_view rest = in_.substr(pos_ + 1);
    if (rest.starts_with(":") || rest.starts_with("=") || rest.starts_with("!")) {
      out_.pattern.append(in_.substr(at, 3));
      pos_ += 2;
      return absl::OkStatus();
    }
    if (rest.starts_with("<=") || rest.starts_with("<!")) return Unsupported("a lookbehind group", at);
    if (rest.starts_with("<")) {
      const size_t close = rest.find('>');
      const std::string name(rest.substr(1, close == std::string_view::npos ? 0 : close - 1));
      const bool valid = !name.empty() && IsAsciiLetter(name[0]) && std::all_of(name.begin(), name.end(), [](char n) {
                           return IsAsciiLetter(n) || IsAsciiDigit(n);
                         });
      if (close == std::string_view::npos || !valid) {
        return absl::InvalidArgumentError(Cat("bad named group at index ", at,
                                              " (a name is a letter then letters or digits, closed by '>')"));
      }
      ++out_.groups;
      if (!out_.names.emplace(name, out_.groups).second) {
        return absl::InvalidArgumentError(Cat("named group <", name, "> is defined twice"));
      }
      out_.pattern.push_back('(');
      pos_ += 1 + close + 1;  // '?', then "<name>"
      return absl::OkStatus();
    }
    if (rest.starts_with(">")) return Unsupported("an atomic group", at);
    return Unsupported("an inline flag group", at);
  }

  // After '[' at `at`: copies the class, refusing Java's nested classes and intersections.
  absl::Status Class(size_t at) {
    out_.pattern.push_back('[');
    if (pos_ < in_.size() && in_[pos_] == '^') {
      out_.pattern.push_back('^');
      ++pos_;
    }
    bool first = true;
    while (pos_ < in_.size()) {
      const size_t here = pos_;
      const char c = in_[pos_++];
      if (c == ']' && !first) {
        out_.pattern.push_back(']');
        return absl::OkStatus();
      }
      first = false;
      if (c == ']') {
        out_.pattern.append("\\]");  // a ']' first in a Java class is literal
      } else if (c == '[') {
        return Unsupported("a nested character class", here);
      } else if (c == '&' && pos_ < in_.size() && in_[pos_] == '&') {
        return Unsupported("a character class intersection (&&)", here);
      } else if (c == '\\') {
        if (pos_ >= in_.size()) break;
        const char e = in_[pos_++];
        if (std::string_view("dDwWsStnrfxc").find(e) != std::string_view::npos) {
          if (e == 'x' && pos_ < in_.size() && in_[pos_] == '{') return Unsupported("\\x{...}", here);
          out_.pattern.push_back('\\');
          out_.pattern.push_back(e);
        } else if (IsAsciiLetter(e) || IsAsciiDigit(e)) {
          return Unsupported(Cat("\\", e, " in a character class"), here);
        } else {
          if (IsEcmaClassSyntax(e)) out_.pattern.push_back('\\');
          out_.pattern.push_back(e);
        }
      } else {
        out_.pattern.push_back(c);
      }
    }
    return absl::InvalidArgumentError(Cat("unclosed character class at index ", at));
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool after_quantifier_ = false;
  TranslatedRegex out_;
};

}  // namespace

absl::StatusOr<TranslatedRegex> TranslateJavaRegex(std::string_view java) { return RegexTranslator(java).Run(); }

absl::StatusOr<std::vector<ReplacementPiece>> ParseJavaReplacement(std::string_view replacement,
                                                                   const TranslatedRegex& regex) {
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
      auto it = regex.names.find(name);
      if (it == regex.names.end()) return absl::InvalidArgumentError(Cat("no group with name {", name, "}"));
      group = it->second;
    } else {
      if (!IsAsciiDigit(replacement[pos])) return absl::InvalidArgumentError("illegal group reference");
      group = replacement[pos++] - '0';
      // Java takes further digits while the number still names an existing group.
      while (pos < replacement.size() && IsAsciiDigit(replacement[pos]) &&
             group * 10 + (replacement[pos] - '0') <= regex.groups) {
        group = group * 10 + (replacement[pos++] - '0');
      }
      if (group > regex.groups) return absl::InvalidArgumentError(Cat("no group ", group));
    }
    if (group > 99) return absl::InvalidArgumentError(Cat("group ", group, ": at most 99 groups are supported"));
    pieces.push_back(ReplacementPiece{.is_group = true, .literal = "", .group = group});
  }
  return pieces;
}

std::string ToEcmaScriptFormat(const std::vector<ReplacementPiece>& pieces) {
  std::string out;
  for (const ReplacementPiece& piece : pieces) {
    if (piece.is_group) {
      out.push_back('$');
      out.push_back(static_cast<char>('0' + piece.group / 10));
      out.push_back(static_cast<char>('0' + piece.group % 10));
      continue;
    }
    for (char c : piece.literal) {
      if (c == '$') out.push_back('$');
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace outbox::config::internal
