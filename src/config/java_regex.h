// Debezium's route.topic.regex and route.topic.replacement are java.util.regex forms (a Pattern and a Matcher
// replacement string); the relay matches with std::regex (ECMAScript), which has no named groups, and expands
// ECMAScript format strings. These translate the common Java forms, and refuse the rest by name, at load time:
//   pattern:     (?<name>X) -> (X) (groups keep their numbers), \k<name> -> \N, \Q...\E -> escaped text,
//                \A -> ^, \z -> $; lookbehind, atomic groups, inline flags, possessive quantifiers, nested or
//                intersected classes and escapes ECMAScript lacks (\p{..}, \R, \G, \Z, \h, ...) are errors.
//   replacement: \x -> x, $n (the longest prefix that names an existing group, as Java reads it), ${name};
//                a missing or unknown group is an error (Java would throw on every record).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace outbox::config::internal {

struct TranslatedRegex {
  std::string pattern;               // ECMAScript
  int groups = 0;                    // capturing groups
  std::map<std::string, int> names;  // named group -> its number
};

// Errors are INVALID_ARGUMENT and do not name the key (the caller does).
absl::StatusOr<TranslatedRegex> TranslateJavaRegex(std::string_view java);

// One piece of a replacement: literal text, or a capturing group's text (0 = the whole match).
struct ReplacementPiece {
  bool is_group = false;
  std::string literal;
  int group = 0;
};

// Reads a Java replacement string against `regex`'s groups.
absl::StatusOr<std::vector<ReplacementPiece>> ParseJavaReplacement(std::string_view replacement,
                                                                   const TranslatedRegex& regex);

// The pieces as an ECMAScript format string for std::regex_replace: `$` as `$$`, group n as `$nn` (two digits,
// so a digit after it is never read as part of the number). At most 99 groups.
std::string ToEcmaScriptFormat(const std::vector<ReplacementPiece>& pieces);

}  // namespace outbox::config::internal
