// Debezium's route.topic.regex and route.topic.replacement are java.util.regex forms (a Pattern and a Matcher
// replacement string). The relay runs them on PCRE2 (10.42), with Java's routing semantics: the pattern must match
// the whole value (Matcher.matches()), then the first match a search finds is replaced (replaceFirst()); a value
// the pattern does not match whole routes to itself.
//
// PCRE2 and java.util.regex read some patterns differently. RouteRegex::Compile refuses, naming the construct,
// every form whose meaning would differ, and rewrites those whose Java meaning PCRE2 can spell (after removing
// \Q..\E quoting first, as Java does):
//   `.` -> [^\n\r\x{85}\x{2028}\x{2029}] (Java's line terminators; PCRE2's `.` stops at \n only),
//   `$` and \Z -> Java's "end, or before a final line terminator" (PCRE2's `$` knows \n only),
//   \0 octal, \uhhhh (a surrogate pair as one character), \cX, \x.. -> \x{..},
//   the inline flags i, s, m and d ((?is-m), (?d:X)), scoped to their group as in Java: i is CASE_INSENSITIVE
//   without UNICODE_CASE, each ASCII letter written as both cases (a -> [aA], a class's letters and those of its
//   ranges doubled; PCRE2's caseless mode folds by Unicode's rules, k would match the Kelvin sign); s (DOTALL), m
//   (MULTILINE: Java's ^ never matches at the end of the input) and d (UNIX_LINES: \n the only terminator) change
//   what `.`, `^`, `$` and \Z are written as,
//   nested classes and intersections ([a-z&&[^aeiou]], [a[b-c]]: unions and && in Java, literal text in PCRE2) ->
//   a pattern of one character: alternatives for a union, lookaheads for &&, a negative lookahead for [^..],
//   the flag x (COMMENTS): whitespace and comments between items left out, and where Java skips them inside a
//   construct: in a class (before a member, around a range's '-', before ']'), in {n,m} after its first digit,
//   between '(' and '?', in the inline flags while x is on, and in the escapes Java reads with read(),
//   \p{..} and \P{..}: general categories, POSIX classes (US-ASCII), ASCII, L1, all, LC, LD, with the Is and gc=
//   spellings, Java's binary properties after Is, Java 17's scripts and blocks, and java.lang.Character's methods,
//   as Java reads them (also under (?i)); inside a class, the complement of a union -> an alternative of the class,
//   \b, \B and back references under (?i) (compared ignoring ASCII case) -> callouts that check them as Java
//   does, once as Java 17 reads them and once as Java 25 does; a value the two route apart gets no topic (Route's
//   error),
//   the flag U: \w, \d, \s, \b and the POSIX names as Java's Unicode ones,
//   u with i (or U with i): each character as the set Java matches for it by Character's case mappings (ICU's;
//   ß as Java reads it alone or in a run of literals),
//   \N{name}: the character Character.codePointOf names (JavaCodePointOf).
//   back references: of several digits as Java's parser takes them, under (?i) and under (?iu) checked by callouts.
// Refused: a class or \p{..} under the flag c (Java reads them by grapheme clusters), an empty operand of &&, a
// single '&' after a class nested in an operand of &&, a back reference or replacement reading a group whose capture
// Java keeps after backtracking out of a lookaround, an atomic group or a repetition,
// \b{g} and \X (Java 17 and 25 read these apart), the blocks and java.lang.Character methods Java 17 and 25 read
// apart, blocks, properties and \N{..} characters Java 17 does not know,
// escapes of letters Java does not know, back references to a later group, a `{` that is not a quantifier,
// group names Java would refuse.
// tests/config/java_route_differential_test.cc runs a corpus and random patterns through this class and through
// java.util.regex and asserts that every accepted pattern routes every value alike.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::config {

// One piece of a replacement: literal text, or a capturing group's text (0 = the whole match).
struct ReplacementPiece {
  bool is_group = false;
  std::string literal;
  int group = 0;
};

// Reads a Java replacement string (appendReplacement's rules: \x is x, $n takes the longest prefix that names a
// group, ${name}) against a pattern's groups. A reference Java would throw on is INVALID_ARGUMENT.
absl::StatusOr<std::vector<ReplacementPiece>> ParseJavaReplacement(std::string_view replacement, int groups,
                                                                   const std::map<std::string, int>& names);

// Debezium's list of regular expressions (Strings.RegExSplitter): split at commas, `\,` a comma inside one, each
// trimmed, empty ones dropped. INVALID_ARGUMENT for a list that ends in a lone backslash, as Debezium refuses it.
absl::StatusOr<std::vector<std::string>> SplitDebeziumRegexList(std::string_view list);

// Java's Character.getName(c) as Java 17 gives it (the Unicode 13 names, the names Java gives control characters,
// and "BLOCK NAME HEX" for a character without a name of its own, as "CJK UNIFIED IDEOGRAPHS 4E00" and "HIGH
// SURROGATES D800"); nullopt for a code point Java 17 leaves unassigned.
std::optional<std::string> JavaCharacterName(uint32_t c);

// Java's Character.codePointOf(name), which the pattern \N{name} reads: the name trimmed, in any case (by
// JavaChangeCase: \N{latın small letter a} is a). INVALID_ARGUMENT for a name Java refuses; UNIMPLEMENTED for a
// character Java 17 does not know (Java 25 does).
absl::StatusOr<uint32_t> JavaCodePointOf(std::string_view name);

// Java's Character.toUpperCase(c) (or toLowerCase, `upper` false) in Java 17 (`java_version` 17, Unicode 13) or
// Java 25 (25, Unicode 16), with which a back reference under (?iu) compares characters.
uint32_t JavaCharacterCase(uint32_t c, bool upper, int java_version);

// Java's String.toUpperCase(Locale.ROOT) (or toLowerCase, `upper` false), with which Pattern reads the names of
// properties, blocks and scripts and Character reads \N's names: Unicode's full case mappings, by ICU's, where
// ı and ſ become I and S, ß becomes SS and the Latin ligatures (ﬁ) their letters, and the Kelvin sign becomes k.
// Text that is not UTF-8 is returned as it is.
std::string JavaChangeCase(std::string_view text, bool upper);

class RouteRegex;
// A Debezium list of patterns (SplitDebeziumRegexList), each compiled ignoring ASCII case, as Debezium's column and
// type lists are (Pattern.CASE_INSENSITIVE). INVALID_ARGUMENT naming each pattern that does not compile (without the
// key: the caller names it).
absl::StatusOr<std::vector<RouteRegex>> CompileDebeziumPatternList(std::string_view list);

class RouteRegex {
 public:
  // Compiles a Java pattern. INVALID_ARGUMENT (without the key: the caller names it) for a pattern Java or PCRE2
  // refuses, or whose meaning would differ.
  // kIgnoreAsciiCase: Pattern.CASE_INSENSITIVE (ASCII letters only, as Debezium's lists of column and type names
  // are compiled): the whole pattern as under (?i); a pattern with characters beyond ASCII, or with \b, \B or a back
  // reference, is refused.
  enum class Case : uint8_t { kSensitive, kIgnoreAsciiCase };
  static absl::StatusOr<RouteRegex> Compile(std::string_view java_pattern, Case letter_case = Case::kSensitive);

  // The Java replacement string; INVALID_ARGUMENT for a reference Java would throw on.
  absl::Status SetReplacement(std::string_view java_replacement);

  // The topic for `value`: Java's matches() then replaceFirst(); the value itself when the pattern does not match
  // it whole. INVALID_ARGUMENT (a per-event error) when PCRE2 gives up (its match limit), the value is not UTF-8,
  // or, with \b, \B or a back reference under (?i), Java 17 and Java 25 would route it apart (they read those
  // differently beyond ASCII).
  absl::StatusOr<std::string> Route(std::string_view value) const;

  // Java's Matcher.matches(): whether the pattern matches `value` whole (PCRE2 giving up counts as no match; with
  // callouts, whether it matches as both Java 17 and Java 25 read it).
  bool Matches(std::string_view value) const;

  int groups() const { return groups_; }
  const std::vector<ReplacementPiece>& replacement() const { return pieces_; }

 private:
  struct Code;
  std::shared_ptr<const Code> code_;  // immutable after Compile, shared by copies (PCRE2 code is thread-safe)
  int groups_ = 0;
  std::map<std::string, int> names_;
  std::set<int> kept_apart_;  // groups a replacement may not read (Translator::kept_apart_ in java_regex.cc)
  std::vector<ReplacementPiece> pieces_;
};

}  // namespace outbox::config
