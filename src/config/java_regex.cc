// java.util.regex routes on PCRE2 (see java_regex.h).
#include "config/java_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/strings.h"

namespace outbox::config {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }
bool IsAsciiLetterCode(uint32_t c) { return c < 0x80 && IsAsciiLetter(static_cast<char>(c)); }
// The other ASCII case of an ASCII letter.
char OtherCase(uint32_t c) { return static_cast<char>(c ^ 0x20); }
bool IsSurrogate(uint32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

uint32_t HexValue(std::string_view hex) {
  uint32_t v = 0;
  for (char c : hex) v = v * 16 + static_cast<uint32_t>(IsAsciiDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
  return v;
}

// PCRE2's spelling of one character, inside or outside a class.
std::string CodeText(uint32_t c) {
  if (c < 0x80 && (IsAsciiLetter(static_cast<char>(c)) || IsAsciiDigit(static_cast<char>(c)))) {
    return std::string(1, static_cast<char>(c));
  }
  return Cat("\\x{", absl::StrFormat("%x", c), "}");
}

// The code point of the UTF-8 sequence at `text[*pos]`, advancing past it; nullopt for bytes that are not UTF-8.
std::optional<uint32_t> DecodeUtf8(std::string_view text, size_t* pos) {
  const auto lead = static_cast<unsigned char>(text[*pos]);
  const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || *pos + length > text.size()) return std::nullopt;
  uint32_t c = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[*pos + i]);
    if ((next & 0xC0) != 0x80) return std::nullopt;
    c = (c << 6) | (next & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
  static constexpr std::array<uint32_t, 5> kLeast = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kLeast[length] || IsSurrogate(c) || c > 0x10FFFF) return std::nullopt;
  *pos += length;
  return c;
}

// Java's `.` (no DOTALL): anything but its line terminators.
constexpr std::string_view kJavaDot = "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]";
// Java's `$` (no MULTILINE): the end, or before a final line terminator (\r\n counts as one; not between them).
constexpr std::string_view kJavaDollar = "(?=\\r\\n\\z|(?<!\\r)\\n\\z|[\\r\\x{85}\\x{2028}\\x{2029}]\\z|\\z)";
// Java's `$` under MULTILINE: the end, or before any line terminator (not between \r and \n).
constexpr std::string_view kJavaDollarMultiline = "(?=\\z|(?<!\\r)\\n|[\\r\\x{85}\\x{2028}\\x{2029}])";
// Any one character (Java's `.` under DOTALL).
constexpr std::string_view kAnyCharacter = "[\\x{0}-\\x{10ffff}]";

// Unicode general categories: the \p{..} names both engines read the same way (Java's LC is PCRE2's L&).
constexpr std::array<std::string_view, 37> kCategories = {
    "L",  "Lu", "Ll", "Lt", "Lm", "Lo", "M",  "Mn", "Mc", "Me", "N",  "Nd", "Nl", "No", "P",  "Pc", "Pd", "Ps", "Pe",
    "Pi", "Pf", "Po", "S",  "Sm", "Sc", "Sk", "So", "Z",  "Zs", "Zl", "Zp", "C",  "Cc", "Cf", "Co", "Cs", "Cn"};

// Where the UTF-8 character that ends at `end` (> 0) begins.
size_t CharacterBefore(std::string_view s, size_t end) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80) --begin;
  return begin;
}

struct CodeRange {
  uint32_t low, high;
};

// Java's \p{..} names for fixed sets of code points: the POSIX classes (US-ASCII, as Java reads them without
// UNICODE_CHARACTER_CLASS), ASCII, L1 and all. Under CASE_INSENSITIVE Java reads Lower and Upper as Alpha.
struct FixedSet {
  std::string_view name;
  std::vector<CodeRange> ranges;
  std::string_view ignoring_case;  // the set read under (?i) instead, if another
};
const std::vector<FixedSet>& FixedSets() {
  static const std::vector<FixedSet> sets = {
      {"ASCII", {{0x00, 0x7F}}, {}},
      {"Alnum", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}, {}},
      {"Alpha", {{'A', 'Z'}, {'a', 'z'}}, {}},
      {"Blank", {{'\t', '\t'}, {' ', ' '}}, {}},
      {"Cntrl", {{0x00, 0x1F}, {0x7F, 0x7F}}, {}},
      {"Digit", {{'0', '9'}}, {}},
      {"Graph", {{0x21, 0x7E}}, {}},
      {"Lower", {{'a', 'z'}}, "Alpha"},
      {"Print", {{0x20, 0x7E}}, {}},
      {"Punct", {{0x21, 0x2F}, {0x3A, 0x40}, {0x5B, 0x60}, {0x7B, 0x7E}}, {}},
      {"Space", {{'\t', '\r'}, {' ', ' '}}, {}},
      {"Upper", {{'A', 'Z'}}, "Alpha"},
      {"XDigit", {{'0', '9'}, {'A', 'F'}, {'a', 'f'}}, {}},
      {"L1", {{0x00, 0xFF}}, {}},
      {"all", {{0x00, 0x10FFFF}}, {}},
  };
  return sets;
}

// The ranges of the FixedSet `name` (one of FixedSets()).
const std::vector<CodeRange>& FixedRanges(std::string_view name) {
  const std::vector<FixedSet>& sets = FixedSets();
  return std::find_if(sets.begin(), sets.end(), [&](const FixedSet& set) { return set.name == name; })->ranges;
}

// PCRE2 class members for ranges (sorted, apart), or for every code point outside them.
std::string RangeMembers(const std::vector<CodeRange>& ranges, bool complement) {
  std::vector<CodeRange> out;
  if (!complement) {
    out = ranges;
  } else {
    uint32_t next = 0;
    for (const CodeRange& r : ranges) {
      if (r.low > next) out.push_back({next, r.low - 1});
      next = r.high + 1;
    }
    if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  }
  std::string members;
  for (CodeRange r : out) {
    // PCRE2 takes no surrogate as a range's end (and a UTF-8 value has none): a range ends short of them.
    if (IsSurrogate(r.low)) r.low = 0xE000;
    if (IsSurrogate(r.high)) r.high = 0xD7FF;
    if (r.low > r.high) continue;
    members += r.low == r.high ? CodeText(r.low) : Cat(CodeText(r.low), "-", CodeText(r.high));
  }
  return members;
}

// PCRE2 class members for a set of code points (in any order, repeats allowed).
std::string CodeMembers(std::vector<uint32_t> codes) {
  std::sort(codes.begin(), codes.end());
  std::vector<CodeRange> ranges;
  for (uint32_t c : codes) {
    if (!ranges.empty() && c <= ranges.back().high + 1) {
      ranges.back().high = std::max(ranges.back().high, c);
    } else {
      ranges.push_back({c, c});
    }
  }
  return RangeMembers(ranges, false);
}

// Which JDK's java.util.regex a callout checks as: the oldest Debezium 3 runs on (17) and the newest (25). They
// read \b apart: Java 17 and 18 count '_' and every letter or decimal digit (Character.isLetterOrDigit) as a word
// character, Java 19 and later [a-zA-Z0-9_] only, as their \w (JDK-8264160); both count a non-spacing mark that
// follows a letter or digit (through other non-spacing marks). A back reference under (?i) to text beyond the BMP,
// which Java 17 reads past (JavaBackReference). And a back reference under (?iu), compared by each one's Unicode
// version's case mappings (UnicodeCase::Fold).
enum class Jdk : uint8_t { k17, k25 };

// Java's Character.toUpperCase and toLowerCase (the simple case mappings, here by ICU's tables), and the characters
// java.util.regex matches for one under CASE_INSENSITIVE with UNICODE_CASE (Pattern.single, SingleU, SliceU,
// BitClass.add, CIRangeU of JDK 17 to 25). Built on first use.
class UnicodeCase {
 public:
  static const UnicodeCase& Tables() {
    static const UnicodeCase tables;
    return tables;
  }
  static uint32_t Upper(uint32_t c) { return static_cast<uint32_t>(u_toupper(static_cast<UChar32>(c))); }
  static uint32_t Lower(uint32_t c) { return static_cast<uint32_t>(u_tolower(static_cast<UChar32>(c))); }
  // What Pattern compares: toLowerCase(toUpperCase(c)).
  static uint32_t Fold(uint32_t c) { return Lower(Upper(c)); }

  // The same as `java` has them. ICU 72 has Unicode 15's mappings. Java 17 has Unicode 13's: those of ICU between
  // characters it knows (Unicode 14 and 15 added pairs of new characters only). Java 25 has Unicode 16's: ICU's and
  // the pairs Unicode 16 added (kUnicode16Pairs), two of them giving an upper case to a lower-case letter of old (ƛ,
  // ɤ). Checked for every code point against each JDK's Character (JavaRouteDifferential.EveryCaseMappingIsJavas).
  static uint32_t Upper(uint32_t c, Jdk java) { return Mapped(c, java, /*upper=*/true); }
  static uint32_t Lower(uint32_t c, Jdk java) { return Mapped(c, java, /*upper=*/false); }
  static uint32_t Fold(uint32_t c, Jdk java) { return Lower(Upper(c, java), java); }

  // A literal outside a class: Java matches it alone as a single character (SingleU of its fold, or itself when its
  // upper case is its fold) or, next to other literals, in a slice (SliceU: its fold, or any character of the same
  // fold). The two differ only for ß of Unicode 15: ẞ folds to it, it does not fold to ẞ.
  struct LiteralSets {
    std::vector<uint32_t> alone, in_slice;
  };
  LiteralSets Literal(uint32_t c) const {
    std::vector<uint32_t> slice = SameFold(Fold(c));
    if (Upper(c) != Fold(c)) return {slice, slice};
    return {{c}, std::move(slice)};
  }

  // A single character in a class (Pattern.bitsOrSingle): one of Latin-1 but for the ten whose case leaves Latin-1
  // or is shared with one beyond it goes into a BitClass as itself, its lower and its upper case; any other
  // character is single(c), which the class never reads as a slice.
  std::vector<uint32_t> ClassLiteral(uint32_t c) const {
    static constexpr std::array<uint32_t, 10> kSpecial = {0xFF, 0xB5, 'I', 'i', 'S', 's', 'K', 'k', 0xC5, 0xE5};
    if (c < 256 && std::find(kSpecial.begin(), kSpecial.end(), c) == kSpecial.end()) {
      if (c < 0x80) return IsAsciiLetterCode(c) ? std::vector<uint32_t>{c, c ^ 0x20} : std::vector<uint32_t>{c};
      return {c, Lower(c), Upper(c)};
    }
    return Upper(c) != Fold(c) ? SameFold(Fold(c)) : std::vector<uint32_t>{c};
  }

  // The characters outside low..high that CIRangeU takes: those whose upper case, or its lower case, is inside.
  std::vector<uint32_t> RangeExtras(uint32_t low, uint32_t high) const {
    std::vector<uint32_t> extras;
    const auto inside = [&](uint32_t c) { return low <= c && c <= high; };
    for (const uint32_t x : cased_) {
      if (!inside(x) && (inside(Upper(x)) || inside(Fold(x)))) extras.push_back(x);
    }
    return extras;
  }

 private:
  UnicodeCase() {
    for (uint32_t x = 0; x <= 0x10FFFF; ++x) {
      const uint32_t upper = Upper(x), fold = Lower(upper);
      if (upper != x || fold != x) cased_.push_back(x);
      if (fold != x) by_fold_.push_back({fold, x});
    }
    std::sort(by_fold_.begin(), by_fold_.end());
  }

  // `fold` and every character that folds to it.
  std::vector<uint32_t> SameFold(uint32_t fold) const {
    std::vector<uint32_t> out = {fold};
    auto it = std::lower_bound(by_fold_.begin(), by_fold_.end(), std::pair<uint32_t, uint32_t>{fold, 0});
    for (; it != by_fold_.end() && it->first == fold; ++it) out.push_back(it->second);
    return out;
  }

  // (upper, lower) pairs Unicode 16 added: ƛ and ɤ's upper cases, Latin and Cyrillic letters, and Garay's 22 (at an
  // offset of 0x20, written as its first pair and a count).
  struct Pair {
    uint32_t upper, lower, count;
  };
  static constexpr std::array<Pair, 6> kUnicode16Pairs = {{{0xA7DC, 0x019B, 1},
                                                           {0xA7CB, 0x0264, 1},
                                                           {0x1C89, 0x1C8A, 1},
                                                           {0xA7CC, 0xA7CD, 1},
                                                           {0xA7DA, 0xA7DB, 1},
                                                           {0x10D50, 0x10D70, 22}}};

  static uint32_t Mapped(uint32_t c, Jdk java, bool upper) {
    if (java == Jdk::k25) {
      for (const Pair& pair : kUnicode16Pairs) {
        const uint32_t from = upper ? pair.lower : pair.upper, to = upper ? pair.upper : pair.lower;
        if (c >= from && c < from + pair.count) return to + (c - from);
      }
      return upper ? Upper(c) : Lower(c);
    }
    const auto java17_knows = [](uint32_t x) {
      UVersionInfo age;
      u_charAge(static_cast<UChar32>(x), age);
      return age[0] != 0 && (age[0] < 13 || (age[0] == 13 && age[1] == 0));
    };
    const uint32_t mapped = upper ? Upper(c) : Lower(c);
    return java17_knows(c) && java17_knows(mapped) ? mapped : c;
  }

  std::vector<uint32_t> cased_;                            // characters whose upper case or fold is another
  std::vector<std::pair<uint32_t, uint32_t>> by_fold_;     // (fold, character) where they differ, sorted
};

// A set of characters as PCRE2 class members: `members`, or (complement) every character not in them. `ranges`,
// when set, are the members as code point ranges, whose complement can be written inside a class too.
struct ClassSet {
  std::string members;
  bool complement = false;
  std::optional<std::vector<CodeRange>> ranges;
};
ClassSet Members(std::string members, bool complement = false) {
  return ClassSet{.members = std::move(members), .complement = complement, .ranges = std::nullopt};
}

// Java's Unicode \w, \d and \s (under U, and \p{IsWord}, \p{IsDigit}, \p{IsWhite_Space}), in PCRE2's properties.
constexpr std::string_view kUnicodeWord = "\\p{Alphabetic}\\p{Mn}\\p{Me}\\p{Mc}\\p{Nd}\\p{Pc}\\x{200c}\\x{200d}";
constexpr std::string_view kUnicodeDigit = "\\p{Nd}";
constexpr std::string_view kUnicodeSpace = "\\p{Z}\\x{9}-\\x{d}\\x{85}";

// The Unicode binary properties and POSIX names Java reads after \p{Is (CharPredicates.forUnicodeProperty, the
// name upper-cased), as JDK 17 to 25 define them, in PCRE2's properties (its Unicode tables, as for the general
// categories). `cased`: under CASE_INSENSITIVE Java reads it as any of Lowercase, Uppercase and Lt.
struct BinaryProperty {
  std::string_view names;  // Java's spellings, upper-cased, space-separated
  std::string_view members;
  bool complement = false;
  bool cased = false;
};
constexpr std::array<BinaryProperty, 20> kBinaryProperties = {{
    {"ALPHABETIC ALPHA", "\\p{Alphabetic}"},
    {"ASSIGNED", "\\P{Cn}"},
    {"CONTROL CNTRL", "\\p{Cc}"},
    {"HEXDIGIT HEX_DIGIT XDIGIT", "\\p{Nd}A-Fa-f\\x{ff10}-\\x{ff19}\\x{ff21}-\\x{ff26}\\x{ff41}-\\x{ff46}"},
    {"IDEOGRAPHIC", "\\p{Ideographic}"},
    {"JOINCONTROL JOIN_CONTROL", "\\x{200c}\\x{200d}"},
    {"LETTER", "\\p{L}"},
    {"LOWERCASE LOWER", "\\p{Lowercase}", false, true},
    {"UPPERCASE UPPER", "\\p{Uppercase}", false, true},
    {"TITLECASE", "\\p{Lt}", false, true},
    {"NONCHARACTERCODEPOINT NONCHARACTER_CODE_POINT", "\\p{Noncharacter_Code_Point}"},
    {"PUNCTUATION PUNCT", "\\p{P}"},
    {"WHITESPACE WHITE_SPACE SPACE", kUnicodeSpace},
    {"WORD", kUnicodeWord},
    {"ALNUM", "\\p{Alphabetic}\\p{Nd}"},
    {"DIGIT", kUnicodeDigit},
    {"BLANK", "\\p{Zs}\\x{9}"},
    {"GRAPH", "\\p{Z}\\p{Cc}\\p{Cs}\\p{Cn}", true},
    {"PRINT", "\\p{Zl}\\p{Zp}\\p{Cc}\\p{Cs}\\p{Cn}", true},
    // Java 21 added these; Java 17 refuses them, so Debezium's start depends on its JDK.
    {"EMOJI EMOJI_PRESENTATION EMOJI_MODIFIER EMOJI_MODIFIER_BASE EMOJI_COMPONENT EXTENDED_PICTOGRAPHIC", ""},
}};

// Java's \p{java*} names (CharPredicates.forProperty: java.lang.Character's methods), in PCRE2's properties, as
// JDK 17 to 25 define them. `cased`: under CASE_INSENSITIVE Java reads it as any of Lowercase, Uppercase and Lt.
struct JavaMethod {
  std::string_view name;
  std::string members;  // empty: refused, Java 17 and Java 25 read it apart
  bool cased = false;
};
constexpr std::string_view kJavaIgnorable = "\\x{0}-\\x{8}\\x{e}-\\x{1b}\\x{7f}-\\x{9f}\\p{Cf}";
constexpr std::string_view kOtherIdStart = "\\x{1885}\\x{1886}\\x{2118}\\x{212e}\\x{309b}\\x{309c}";
const std::vector<JavaMethod>& JavaMethods() {
  static const std::vector<JavaMethod> methods = {
      {"javaLowerCase", "\\p{Lowercase}", true},  // Ll and Other_Lowercase
      {"javaUpperCase", "\\p{Uppercase}", true},
      {"javaTitleCase", "\\p{Lt}", true},
      {"javaAlphabetic", "\\p{Alphabetic}"},
      {"javaIdeographic", "\\p{Ideographic}"},
      {"javaDigit", "\\p{Nd}"},
      {"javaDefined", "\\P{Cn}"},
      {"javaLetter", "\\p{L}"},
      {"javaLetterOrDigit", "\\p{L}\\p{Nd}"},
      {"javaJavaIdentifierStart", "\\p{L}\\p{Nl}\\p{Sc}\\p{Pc}"},
      {"javaJavaIdentifierPart", Cat("\\p{L}\\p{Sc}\\p{Pc}\\p{Nd}\\p{Nl}\\p{Mc}\\p{Mn}", kJavaIgnorable)},
      // isLetter, Nl and Other_ID_Start
      {"javaUnicodeIdentifierStart", Cat("\\p{L}\\p{Nl}", kOtherIdStart)},
      // Java 21 added U+30FB and U+FF65 (Unicode 15.1's Other_ID_Continue)
      {"javaUnicodeIdentifierPart", ""},
      {"javaIdentifierIgnorable", std::string(kJavaIgnorable)},
      {"javaSpaceChar", "\\p{Z}"},
      // Z but the no-break spaces, and the ASCII controls Java counts
      {"javaWhitespace", "\\x{9}-\\x{d}\\x{1c}-\\x{20}\\x{1680}\\x{2000}-\\x{2006}\\x{2008}-\\x{200a}\\x{2028}\\x{2029}"
                         "\\x{205f}\\x{3000}"},
      {"javaISOControl", "\\x{0}-\\x{1f}\\x{7f}-\\x{9f}"},
      // Java 25 counts U+226D (Unicode 16 made it mirrored), which Java 17 does not
      {"javaMirrored", ""},
  };
  return methods;
}

// Java 17's Character.UnicodeScript names and their aliases (the 157 scripts of Unicode 13; later JDKs add more,
// which Java 17 refuses). PCRE2's \p{sc:..} reads each.
constexpr std::array<std::pair<std::string_view, std::string_view>, 157> kJava17Scripts = {{
    {"COMMON", "ZYYY"}, {"LATIN", "LATN"}, {"GREEK", "GREK"}, {"CYRILLIC", "CYRL"},
    {"ARMENIAN", "ARMN"}, {"HEBREW", "HEBR"}, {"ARABIC", "ARAB"}, {"SYRIAC", "SYRC"},
    {"THAANA", "THAA"}, {"DEVANAGARI", "DEVA"}, {"BENGALI", "BENG"}, {"GURMUKHI", "GURU"},
    {"GUJARATI", "GUJR"}, {"ORIYA", "ORYA"}, {"TAMIL", "TAML"}, {"TELUGU", "TELU"},
    {"KANNADA", "KNDA"}, {"MALAYALAM", "MLYM"}, {"SINHALA", "SINH"}, {"THAI", "THAI"},
    {"LAO", "LAOO"}, {"TIBETAN", "TIBT"}, {"MYANMAR", "MYMR"}, {"GEORGIAN", "GEOR"},
    {"HANGUL", "HANG"}, {"ETHIOPIC", "ETHI"}, {"CHEROKEE", "CHER"}, {"CANADIAN_ABORIGINAL", "CANS"},
    {"OGHAM", "OGAM"}, {"RUNIC", "RUNR"}, {"KHMER", "KHMR"}, {"MONGOLIAN", "MONG"},
    {"HIRAGANA", "HIRA"}, {"KATAKANA", "KANA"}, {"BOPOMOFO", "BOPO"}, {"HAN", "HANI"},
    {"YI", "YIII"}, {"OLD_ITALIC", "ITAL"}, {"GOTHIC", "GOTH"}, {"DESERET", "DSRT"},
    {"INHERITED", "ZINH"}, {"TAGALOG", "TGLG"}, {"HANUNOO", "HANO"}, {"BUHID", "BUHD"},
    {"TAGBANWA", "TAGB"}, {"LIMBU", "LIMB"}, {"TAI_LE", "TALE"}, {"LINEAR_B", "LINB"},
    {"UGARITIC", "UGAR"}, {"SHAVIAN", "SHAW"}, {"OSMANYA", "OSMA"}, {"CYPRIOT", "CPRT"},
    {"BRAILLE", "BRAI"}, {"BUGINESE", "BUGI"}, {"COPTIC", "COPT"}, {"NEW_TAI_LUE", "TALU"},
    {"GLAGOLITIC", "GLAG"}, {"TIFINAGH", "TFNG"}, {"SYLOTI_NAGRI", "SYLO"}, {"OLD_PERSIAN", "XPEO"},
    {"KHAROSHTHI", "KHAR"}, {"BALINESE", "BALI"}, {"CUNEIFORM", "XSUX"}, {"PHOENICIAN", "PHNX"},
    {"PHAGS_PA", "PHAG"}, {"NKO", "NKOO"}, {"SUNDANESE", "SUND"}, {"BATAK", "BATK"},
    {"LEPCHA", "LEPC"}, {"OL_CHIKI", "OLCK"}, {"VAI", "VAII"}, {"SAURASHTRA", "SAUR"},
    {"KAYAH_LI", "KALI"}, {"REJANG", "RJNG"}, {"LYCIAN", "LYCI"}, {"CARIAN", "CARI"},
    {"LYDIAN", "LYDI"}, {"CHAM", "CHAM"}, {"TAI_THAM", "LANA"}, {"TAI_VIET", "TAVT"},
    {"AVESTAN", "AVST"}, {"EGYPTIAN_HIEROGLYPHS", "EGYP"}, {"SAMARITAN", "SAMR"}, {"MANDAIC", "MAND"},
    {"LISU", "LISU"}, {"BAMUM", "BAMU"}, {"JAVANESE", "JAVA"}, {"MEETEI_MAYEK", "MTEI"},
    {"IMPERIAL_ARAMAIC", "ARMI"}, {"OLD_SOUTH_ARABIAN", "SARB"}, {"INSCRIPTIONAL_PARTHIAN", "PRTI"},
    {"INSCRIPTIONAL_PAHLAVI", "PHLI"},
    {"OLD_TURKIC", "ORKH"}, {"BRAHMI", "BRAH"}, {"KAITHI", "KTHI"}, {"MEROITIC_HIEROGLYPHS", "MERO"},
    {"MEROITIC_CURSIVE", "MERC"}, {"SORA_SOMPENG", "SORA"}, {"CHAKMA", "CAKM"}, {"SHARADA", "SHRD"},
    {"TAKRI", "TAKR"}, {"MIAO", "PLRD"}, {"CAUCASIAN_ALBANIAN", "AGHB"}, {"BASSA_VAH", "BASS"},
    {"DUPLOYAN", "DUPL"}, {"ELBASAN", "ELBA"}, {"GRANTHA", "GRAN"}, {"PAHAWH_HMONG", "HMNG"},
    {"KHOJKI", "KHOJ"}, {"LINEAR_A", "LINA"}, {"MAHAJANI", "MAHJ"}, {"MANICHAEAN", "MANI"},
    {"MENDE_KIKAKUI", "MEND"}, {"MODI", "MODI"}, {"MRO", "MROO"}, {"OLD_NORTH_ARABIAN", "NARB"},
    {"NABATAEAN", "NBAT"}, {"PALMYRENE", "PALM"}, {"PAU_CIN_HAU", "PAUC"}, {"OLD_PERMIC", "PERM"},
    {"PSALTER_PAHLAVI", "PHLP"}, {"SIDDHAM", "SIDD"}, {"KHUDAWADI", "SIND"}, {"TIRHUTA", "TIRH"},
    {"WARANG_CITI", "WARA"}, {"AHOM", "AHOM"}, {"ANATOLIAN_HIEROGLYPHS", "HLUW"}, {"HATRAN", "HATR"},
    {"MULTANI", "MULT"}, {"OLD_HUNGARIAN", "HUNG"}, {"SIGNWRITING", "SGNW"}, {"ADLAM", "ADLM"},
    {"BHAIKSUKI", "BHKS"}, {"MARCHEN", "MARC"}, {"NEWA", "NEWA"}, {"OSAGE", "OSGE"},
    {"TANGUT", "TANG"}, {"MASARAM_GONDI", "GONM"}, {"NUSHU", "NSHU"}, {"SOYOMBO", "SOYO"},
    {"ZANABAZAR_SQUARE", "ZANB"}, {"HANIFI_ROHINGYA", "ROHG"}, {"OLD_SOGDIAN", "SOGO"}, {"SOGDIAN", "SOGD"},
    {"DOGRA", "DOGR"}, {"GUNJALA_GONDI", "GONG"}, {"MAKASAR", "MAKA"}, {"MEDEFAIDRIN", "MEDF"},
    {"ELYMAIC", "ELYM"}, {"NANDINAGARI", "NAND"}, {"NYIAKENG_PUACHUE_HMONG", "HMNP"}, {"WANCHO", "WCHO"},
    {"YEZIDI", "YEZI"}, {"CHORASMIAN", "CHRS"}, {"DIVES_AKURU", "DIAK"}, {"KHITAN_SMALL_SCRIPT", "KITS"},
    {"UNKNOWN", "ZZZZ"}
}};

// A set spelled for PCRE2: class members (inside a class), or a pattern that matches one of its characters (outside
// a class; `alternative`: inside a class too, where the set cannot be written as members, so that the class becomes a
// union of it and its members).
struct Spelled {
  std::string text;
  bool alternative = false;
};

// The \p{..} or \P{..} (`negate`) that `set` is, as PCRE2 class members (`in_class`) or a PCRE2 class.
Spelled SpellClassSet(const ClassSet& set, bool negate, bool in_class) {
  if (negate == set.complement) return {in_class ? set.members : Cat("[", set.members, "]")};
  if (set.ranges) {
    const std::string members = RangeMembers(*set.ranges, true);
    if (members.empty()) return {"(?!)", in_class};  // \P{all}: nothing
    return {in_class ? members : Cat("[", members, "]")};
  }
  if (!in_class) return {Cat("[^", set.members, "]")};
  // Inside a class only a single property's complement can be written as members: \p{X} <-> \P{X}. The complement
  // of a union is an alternative.
  const std::string& m = set.members;
  if (m.size() > 4 && m[0] == '\\' && (m[1] == 'p' || m[1] == 'P') && m.find('\\', 1) == std::string::npos) {
    return {Cat("\\", m[1] == 'p' ? "P" : "p", m.substr(2))};
  }
  return {Cat("[^", set.members, "]"), true};
}

// A pattern that matches one character of a class's union: its members (a PCRE2 class's contents, may be empty)
// or one of `alternatives` (each a one-character pattern). At least one of the two is not empty.
std::string OneOf(const std::string& members, std::vector<std::string> alternatives) {
  // An empty set (\P{all}) adds nothing beside another member, and would make the class's width vary (a lookbehind
  // takes it only when fixed).
  if (!members.empty() || alternatives.size() > 1) {
    std::erase(alternatives, std::string("(?!)"));
    if (members.empty() && alternatives.empty()) alternatives.push_back("(?!)");
  }
  if (!members.empty()) alternatives.insert(alternatives.begin(), Cat("[", members, "]"));
  return alternatives.size() == 1 ? alternatives[0] : Cat("(?:", absl::StrJoin(alternatives, "|"), ")");
}

// A pattern that matches one character that the one-character pattern `matcher` does not match.
std::string NoneOf(const std::string& matcher) {
  if (matcher.size() > 1 && matcher.front() == '[' && matcher[1] != '^' && matcher.find('[', 1) == std::string::npos) {
    return Cat("[^", matcher.substr(1));  // a plain class: its complement
  }
  return Cat("(?:(?!", matcher, ")", kAnyCharacter, ")");
}

// What Java's \p{name} matches (CharPredicates.forProperty, the name as given): a general category, a POSIX class
// (US-ASCII), ASCII, L1, all, LC, LD, java.lang.Character's methods. nullopt for another name; kUnimplemented for the
// method Java 17 and 25 read apart.
absl::StatusOr<std::optional<ClassSet>> JavaPlainProperty(std::string_view plain, bool ignore_case) {
  // Under (?i) Java reads Lu, Ll and Lt as all three (PCRE2's L&), and Lower and Upper as Alpha.
  const bool cased = plain == "LC" || (ignore_case && (plain == "Lu" || plain == "Ll" || plain == "Lt"));
  if (cased || std::find(kCategories.begin(), kCategories.end(), plain) != kCategories.end()) {
    return Members(Cat("\\p{", cased ? "L&" : plain, "}"));
  }
  if (plain == "LD") return Members("\\p{L}\\p{Nd}");
  for (const FixedSet& set : FixedSets()) {
    if (set.name != plain) continue;
    if (ignore_case && !set.ignoring_case.empty()) return JavaPlainProperty(set.ignoring_case, false);
    return ClassSet{.members = RangeMembers(set.ranges, false), .complement = false, .ranges = set.ranges};
  }
  for (const JavaMethod& method : JavaMethods()) {
    if (method.name != plain) continue;
    if (method.members.empty()) {
      return absl::UnimplementedError("a java.lang.Character method Java 17 and 25 read apart");
    }
    return Members(ignore_case && method.cased ? "\\p{Lowercase}\\p{Uppercase}\\p{Lt}" : method.members);
  }
  return std::nullopt;
}

// Whether `name` is one of the space-separated `spellings`, whole.
bool IsSpelling(std::string_view spellings, std::string_view name) {
  for (size_t start = 0; start <= spellings.size();) {
    size_t end = spellings.find(' ', start);
    if (end == std::string_view::npos) end = spellings.size();
    if (spellings.substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

// Java's binary property or POSIX name `name` (in any case: CharPredicates.forUnicodeProperty, or with
// `posix_only` forPOSIXName); nullopt for another name.
absl::StatusOr<std::optional<ClassSet>> BinaryPropertySet(std::string_view name, bool ignore_case, bool posix_only) {
  static constexpr std::string_view kPosix = "ALPHA LOWER UPPER SPACE PUNCT XDIGIT ALNUM CNTRL DIGIT BLANK GRAPH PRINT";
  const std::string upper = JavaChangeCase(name, /*upper=*/true);
  if (posix_only && !IsSpelling(kPosix, upper)) return std::nullopt;
  for (const BinaryProperty& property : kBinaryProperties) {
    if (!IsSpelling(property.names, upper)) continue;
    if (property.members.empty()) return absl::UnimplementedError("a property Java 17 does not know");
    const bool cased = ignore_case && property.cased;
    return Members(cased ? "\\p{Lowercase}\\p{Uppercase}\\p{Lt}" : std::string(property.members), property.complement);
  }
  return std::nullopt;
}

// Java's Unicode blocks (Character.UnicodeBlock): each block's range and the names forName takes for it (upper-cased;
// forName upper-cases what it is given), built on first use from ICU's blocks. Java 17 knows the blocks of Unicode 13:
// a block whose characters were all assigned later is `newer` (Java 17 refuses its names, Java 25 takes some).
class JavaBlocks {
 public:
  struct Block {
    std::vector<std::string> names;
    std::vector<CodeRange> ranges;  // empty: SURROGATES_AREA, a name no character's block has, and the surrogates
    bool newer = false;
    bool disputed = false;  // a range Java 17 and Java 25 read apart
  };

  static const JavaBlocks& Get() {
    static const JavaBlocks blocks;
    return blocks;
  }

  // The block `name` names (in any case), or null.
  const Block* Find(std::string_view name) const {
    const std::string upper = JavaChangeCase(name, /*upper=*/true);
    for (const Block& block : blocks_) {
      if (std::find(block.names.begin(), block.names.end(), upper) != block.names.end()) return &block;
    }
    return nullptr;
  }

  // Java's names for a block from ICU's long name (Latin_1_Supplement): the constant's name (LATIN_1_SUPPLEMENT),
  // Unicode's name (LATIN-1 SUPPLEMENT) and that without spaces (LATIN-1SUPPLEMENT). Unicode's names have a hyphen
  // before a variant's letter (LATIN EXTENDED-A) but for Linear A and the CJK extensions; three blocks keep the
  // constant and the names of older Unicode versions.
  static std::vector<std::string> Names(const char* icu_name) {
    const std::string upper = absl::AsciiStrToUpper(icu_name == nullptr ? "" : icu_name);
    std::string unicode = absl::StrReplaceAll(upper, {{"_", " "}});
    const bool variant = upper.size() > 2 && upper[upper.size() - 2] == '_' && IsAsciiLetter(upper.back()) &&
                         upper != "LINEAR_A" && !upper.starts_with("CJK_UNIFIED_IDEOGRAPHS_EXTENSION");
    if (variant) unicode[unicode.size() - 2] = '-';
    if (upper == "LATIN_1_SUPPLEMENT") unicode = "LATIN-1 SUPPLEMENT";
    if (upper == "PHAGS_PA") unicode = "PHAGS-PA";
    std::string constant = absl::StrReplaceAll(unicode, {{" ", "_"}, {"-", "_"}});
    std::vector<std::string> older;
    if (upper == "GREEK_AND_COPTIC") constant = "GREEK";
    if (upper == "CYRILLIC_SUPPLEMENT") {
      constant = "CYRILLIC_SUPPLEMENTARY";
      older = {"CYRILLIC SUPPLEMENTARY", "CYRILLICSUPPLEMENTARY"};
    }
    if (upper == "COMBINING_DIACRITICAL_MARKS_FOR_SYMBOLS") {
      constant = "COMBINING_MARKS_FOR_SYMBOLS";
      older = {"COMBINING MARKS FOR SYMBOLS", "COMBININGMARKSFORSYMBOLS"};
    }
    std::vector<std::string> names = {constant, unicode, absl::StrReplaceAll(unicode, {{" ", ""}})};
    names.insert(names.end(), older.begin(), older.end());
    return names;
  }

 private:
  JavaBlocks() {
    std::map<int, Block> by_code;
    std::map<int, bool> known;  // block code -> has a character Unicode 13 assigned
    for (uint32_t c = 0; c <= 0x10FFFF; ++c) {
      const auto cp = static_cast<UChar32>(c);
      const int code = ublock_getCode(cp);
      if (code == UBLOCK_NO_BLOCK || code == UBLOCK_INVALID_CODE) continue;
      if (u_charType(cp) != U_UNASSIGNED && !known[code]) {
        UVersionInfo age;
        u_charAge(cp, age);
        known[code] = age[0] < 13 || (age[0] == 13 && age[1] == 0);
      }
      std::vector<CodeRange>& ranges = by_code[code].ranges;
      if (IsSurrogate(c)) continue;  // no UTF-8 value has one
      if (!ranges.empty() && ranges.back().high + 1 == c) {
        ranges.back().high = c;
      } else {
        ranges.push_back({c, c});
      }
    }
    // Unicode 14 and 15 moved the end of these (Java 17 has Unicode 13's, Java 25 Unicode 16's, as ICU's here).
    static constexpr std::array<UBlockCode, 3> kMoved = {UBLOCK_AHOM, UBLOCK_EGYPTIAN_HIEROGLYPH_FORMAT_CONTROLS,
                                                         UBLOCK_TANGUT_SUPPLEMENT};
    for (auto& [code, block] : by_code) {
      block.newer = !known[code];
      block.disputed = std::find(kMoved.begin(), kMoved.end(), code) != kMoved.end();
      block.names = Names(u_getPropertyValueName(UCHAR_BLOCK, code, U_LONG_PROPERTY_NAME));
      blocks_.push_back(std::move(block));
    }
    blocks_.push_back(Block{.names = {"SURROGATES_AREA"}, .ranges = {}, .newer = false});
  }

  std::vector<Block> blocks_;
};

// Java's \p{InX} and \p{blk=X} (Character.UnicodeBlock.forName(X)); kInvalidArgument for a name Java refuses,
// kUnimplemented for a block Java 17 does not know.
absl::StatusOr<ClassSet> JavaBlock(std::string_view name) {
  const JavaBlocks::Block* block = JavaBlocks::Get().Find(name);
  if (block == nullptr) return absl::InvalidArgumentError("an unknown Unicode block");
  if (block->newer) return absl::UnimplementedError("a block Java 17 does not know");
  if (block->disputed) return absl::UnimplementedError("a block whose range Java 17 and Java 25 read apart");
  if (block->ranges.empty()) {  // no character: the complement of every one
    const std::vector<CodeRange> all = {{0, 0x10FFFF}};
    return ClassSet{.members = RangeMembers(all, false), .complement = true, .ranges = all};
  }
  return ClassSet{.members = RangeMembers(block->ranges, false), .complement = false, .ranges = block->ranges};
}

// What Java 17's Character.getName gives for `c` (see JavaCharacterName), and whether Unicode assigned `c` after
// version 13, which Java 17 has: then Java 17 has no name for it (Java 25 has the one here, for what ICU knows).
struct CharacterName {
  std::string name;  // empty: unassigned
  bool newer = false;
};

// Java's names of the control characters, U+0000 to U+001F and U+007F to U+009F, which Unicode's names leave out
// (its UnicodeData gives them "<control>", and ICU no name); "" for U+0084, which Java names by its block. The same
// in Java 17 and 25.
constexpr std::array<std::string_view, 65> kJavaControlNames = {
    "NULL", "START OF HEADING", "START OF TEXT", "END OF TEXT", "END OF TRANSMISSION", "ENQUIRY", "ACKNOWLEDGE",
    "BEL", "BACKSPACE", "CHARACTER TABULATION", "LINE FEED (LF)", "LINE TABULATION", "FORM FEED (FF)",
    "CARRIAGE RETURN (CR)", "SHIFT OUT", "SHIFT IN", "DATA LINK ESCAPE", "DEVICE CONTROL ONE", "DEVICE CONTROL TWO",
    "DEVICE CONTROL THREE", "DEVICE CONTROL FOUR", "NEGATIVE ACKNOWLEDGE", "SYNCHRONOUS IDLE",
    "END OF TRANSMISSION BLOCK", "CANCEL", "END OF MEDIUM", "SUBSTITUTE", "ESCAPE", "INFORMATION SEPARATOR FOUR",
    "INFORMATION SEPARATOR THREE", "INFORMATION SEPARATOR TWO", "INFORMATION SEPARATOR ONE", "DELETE",
    "PADDING CHARACTER", "HIGH OCTET PRESET", "BREAK PERMITTED HERE", "NO BREAK HERE", "", "NEXT LINE (NEL)",
    "START OF SELECTED AREA", "END OF SELECTED AREA", "CHARACTER TABULATION SET",
    "CHARACTER TABULATION WITH JUSTIFICATION", "LINE TABULATION SET", "PARTIAL LINE FORWARD", "PARTIAL LINE BACKWARD",
    "REVERSE LINE FEED", "SINGLE SHIFT TWO", "SINGLE SHIFT THREE", "DEVICE CONTROL STRING", "PRIVATE USE ONE",
    "PRIVATE USE TWO", "SET TRANSMIT STATE", "CANCEL CHARACTER", "MESSAGE WAITING", "START OF GUARDED AREA",
    "END OF GUARDED AREA", "START OF STRING", "SINGLE GRAPHIC CHARACTER INTRODUCER", "SINGLE CHARACTER INTRODUCER",
    "CONTROL SEQUENCE INTRODUCER", "STRING TERMINATOR", "OPERATING SYSTEM COMMAND", "PRIVACY MESSAGE",
    "APPLICATION PROGRAM COMMAND"};

// Java's name for `c` by Character.getName's rules: its Unicode name as UnicodeData lists it; for a control
// character the name above; and for a character UnicodeData gives no name of its own (private use, surrogates, and
// the ranges it names by a rule: CJK unified ideographs, Hangul syllables, Tangut ideographs) its block's constant,
// with spaces for underscores, and its code point in upper-case hex ("CJK UNIFIED IDEOGRAPHS 4E00").
CharacterName NameOf(uint32_t c) {
  const auto cp = static_cast<UChar32>(c);
  if (c > 0x10FFFF || u_charType(cp) == U_UNASSIGNED) return {};
  UVersionInfo age;
  u_charAge(cp, age);
  const bool newer = age[0] > 13 || (age[0] == 13 && age[1] > 0);
  if (c <= 0x1F || (c >= 0x7F && c <= 0x9F)) {
    const std::string_view name = kJavaControlNames[c <= 0x1F ? c : c - 0x7F + 0x20];
    if (!name.empty()) return {std::string(name), newer};
  } else {
    std::array<char, 128> buffer{};
    UErrorCode error = U_ZERO_ERROR;
    const int32_t length = u_charName(cp, U_UNICODE_CHAR_NAME, buffer.data(), buffer.size(), &error);
    const std::string_view name(buffer.data(), U_SUCCESS(error) ? static_cast<size_t>(length) : 0);
    const bool by_rule = name.starts_with("CJK UNIFIED IDEOGRAPH-") || name.starts_with("HANGUL SYLLABLE ") ||
                         name.starts_with("TANGUT IDEOGRAPH-");
    if (!name.empty() && !by_rule) return {std::string(name), newer};
  }
  const std::vector<std::string> block_names =
      JavaBlocks::Names(u_getPropertyValueName(UCHAR_BLOCK, ublock_getCode(cp), U_LONG_PROPERTY_NAME));
  return {Cat(absl::StrReplaceAll(block_names.front(), {{"_", " "}}), " ", absl::StrFormat("%X", c)), newer};
}

// Java's script names (Character.UnicodeScript.forName: a name or alias in any case) as PCRE2's Script property.
std::optional<ClassSet> JavaScript(std::string_view name) {
  const std::string upper = JavaChangeCase(name, /*upper=*/true);
  for (const auto& [script, alias] : kJava17Scripts) {
    if (upper == script || upper == alias) return Members(Cat("\\p{sc:", script, "}"));
  }
  return std::nullopt;
}

// What Java's \p{name} (or \P{name}, `negate`) matches, as PCRE2 class members (`in_class`) or a PCRE2 class,
// following Pattern.family and CharPredicates of JDK 17 to 25. kInvalidArgument: a name Java refuses (it throws at
// compile); kUnimplemented: a name the relay does not spell here (the java.lang.Character method and the blocks
// Java 17 and 25 read apart; blocks and properties Java 17 does not know), with why.
absl::StatusOr<Spelled> JavaProperty(std::string_view name, bool negate, bool ignore_case, bool unicode_classes,
                                     bool in_class) {
  if (name.empty()) return absl::InvalidArgumentError("an empty character family");
  // Java changes the case of a name, or of its key, by Unicode's full mappings (JavaChangeCase), where a few
  // characters beyond ASCII become ASCII: \p{InBasic Latın} is Basic Latin, \p{bl\u212A=Greek} (the Kelvin sign) a
  // block. Every name Java knows is ASCII, so any other name beyond ASCII is unknown, as in Java.
  std::optional<ClassSet> set;
  if (const size_t eq = name.find('='); eq != std::string_view::npos) {
    const std::string key = JavaChangeCase(name.substr(0, eq), /*upper=*/false);
    const std::string_view value = name.substr(eq + 1);
    if (key == "blk" || key == "block") {
      absl::StatusOr<ClassSet> block = JavaBlock(value);
      if (!block.ok()) return block.status();
      set = *std::move(block);
    } else if (key == "sc" || key == "script") {
      set = JavaScript(value);
    } else if (key == "gc" || key == "general_category") {
      absl::StatusOr<std::optional<ClassSet>> plain = JavaPlainProperty(value, ignore_case);
      if (!plain.ok()) return plain.status();
      set = *plain;
    }
    if (!set) return absl::InvalidArgumentError("an unknown Unicode property");
  } else if (name.starts_with("In")) {
    absl::StatusOr<ClassSet> block = JavaBlock(name.substr(2));
    if (!block.ok()) return block.status();
    set = *std::move(block);
  } else if (name.starts_with("Is")) {
    // \p{IsX}: a binary property or POSIX name (X in any case), else a plain name, else a script.
    absl::StatusOr<std::optional<ClassSet>> binary = BinaryPropertySet(name.substr(2), ignore_case, false);
    if (!binary.ok()) return binary.status();
    set = *binary;
    if (!set) {
      absl::StatusOr<std::optional<ClassSet>> plain = JavaPlainProperty(name.substr(2), ignore_case);
      if (!plain.ok()) return plain.status();
      set = plain->has_value() ? *plain : JavaScript(name.substr(2));
    }
  } else {
    // Under U a POSIX name (in any case) is Java's Unicode one, as after Is.
    if (unicode_classes) {
      absl::StatusOr<std::optional<ClassSet>> posix = BinaryPropertySet(name, ignore_case, true);
      if (!posix.ok()) return posix.status();
      set = *posix;
    }
    if (!set) {
      absl::StatusOr<std::optional<ClassSet>> plain = JavaPlainProperty(name, ignore_case);
      if (!plain.ok()) return plain.status();
      set = *plain;
    }
  }
  if (!set) return absl::InvalidArgumentError("an unknown character property name");
  return SpellClassSet(*set, negate, in_class);
}

// Java's first step (Pattern.RemoveQEQuoting): each \Q..\E becomes the quoted characters, a letter or a character
// beyond ASCII as itself, a digit as itself (as \x3n when first after \Q, so that it cannot lengthen an escape
// before), anything else escaped; an empty \Q\E is nothing. Everything after reads the result, so a quote can
// stand anywhere, even inside a construct (\N{A \QB\E}, [\Qa\E-z]), as in Java.
std::string RemoveQuoting(std::string_view java) {
  size_t i = 0;
  while (i + 1 < java.size() && !(java[i] == '\\' && java[i + 1] == 'Q')) i += java[i] == '\\' ? 2 : 1;
  if (i + 1 >= java.size()) return std::string(java);
  std::string out(java.substr(0, i));
  i += 2;
  bool quoting = true, first = true;
  while (i < java.size()) {
    const char c = java[i++];
    if (static_cast<unsigned char>(c) >= 0x80 || IsAsciiLetter(c)) {
      out.push_back(c);
    } else if (IsAsciiDigit(c)) {
      if (first) out.append("\\x3");
      out.push_back(c);
    } else if (c != '\\') {
      if (quoting) out.push_back('\\');
      out.push_back(c);
    } else if (quoting) {
      if (i < java.size() && java[i] == 'E') {
        ++i;
        quoting = false;
      } else {
        out.append("\\\\");
      }
    } else if (i < java.size() && java[i] == 'Q') {
      ++i;
      quoting = first = true;
      continue;
    } else {
      out.push_back(c);
      if (i < java.size()) out.push_back(java[i++]);
    }
    first = false;
  }
  return out;
}

// Why \X and \b{g} are refused: Java 17 and 25 split grapheme clusters apart (Java 25 has Unicode 15.1's rule that
// keeps an Indic conjunct whole: \X takes U+0915 U+094D U+0937 in one, Java 17 in two).
constexpr std::string_view kGraphemesApart = "grapheme clusters, which Java 17 and 25 split apart";
// Why a class or \p{..} under the flag c is refused: Java's CANON_EQ set inline (Pattern.compile normalizes the
// pattern only for the flag given to it) makes each a NFCCharProperty, which reads the value by grapheme clusters.
constexpr std::string_view kUnderCanonEq =
    "a class or \\p{..} under the flag c (Java then reads the value by grapheme clusters, which Java 17 and 25 split "
    "apart)";
// Why a back reference or a replacement may not read some groups (Translator::kept_apart_).
constexpr std::string_view kKeptApart =
    "a group inside a lookaround, an atomic group or a repeated or possessive group, or repeated itself: after "
    "backtracking out of it Java's matcher keeps what it captured, PCRE2 does not";
// Why an empty operand of && is refused (see CompoundClass).
constexpr std::string_view kEmptyOperand = "a quirk of Java's parser, which Java 17 and 25 read apart in some classes";

absl::Status Differs(std::string_view what, size_t at) {
  return absl::InvalidArgumentError(
      Cat(what, " at index ", at, " is refused: java.util.regex and the relay's PCRE2 would read it differently"));
}

// Checks a Java pattern left to right and writes the PCRE2 pattern with the same meaning. One use.
//
// Case-insensitive parts ((?i), (?i:X), or the whole pattern for Case::kIgnoreAsciiCase) are Java's
// CASE_INSENSITIVE without UNICODE_CASE: ASCII letters match either case, nothing else folds. PCRE2's caseless mode
// folds by Unicode's rules (k matches the Kelvin sign), so it is not used: each ASCII letter is written as both
// (a -> [aA], a class's letters and the letters of its ranges doubled); a \p{..} is the set Java reads under
// (?i) (JavaProperty), not folded further; a back reference is compared ignoring ASCII case by a callout
// (CaseInsensitiveBackReference). Under (?iu) each character is written as the set Java matches for it by
// Character's case mappings (UnicodeCase), and a back reference is compared by them. The inline flags i, s, m, d, x,
// u, U and c are scoped as in Java: (?i) holds to the end of the group it is in, (?i:X) for X. Under x (COMMENTS)
// whitespace and # comments between items are left out, and inside a construct where Java skips them; the few
// places where Java's parser reads them oddly are refused.
class Translator {
 public:
  Translator(std::string_view java, bool ignore_case) : in_(java) { flags_.i = ignore_case; }

  absl::Status Run() {
    while (pos_ < in_.size()) {
      if (absl::Status st = Step(); !st.ok()) return st;
    }
    EndRun(/*quantified=*/false);
    for (const auto& [group, at] : back_references_) {
      if (kept_apart_.contains(group)) {
        return Differs(Cat("a back reference to group ", group, " (", kKeptApart, ")"), at);
      }
    }
    return absl::OkStatus();
  }
  // Groups whose captures Java keeps after backtracking where PCRE2 undoes them (see kept_apart_).
  const std::set<int>& kept_apart() const { return kept_apart_; }
  const std::string& pattern() const { return out_; }
  int groups() const { return groups_; }
  const std::map<std::string, int>& names() const { return names_; }
  bool callouts() const { return callouts_; }

 private:
  // Java's inline flags the relay reads: CASE_INSENSITIVE (ASCII), DOTALL, MULTILINE, UNIX_LINES, COMMENTS,
  // UNICODE_CASE (under CASE_INSENSITIVE: UnicodeCase) and UNICODE_CHARACTER_CLASS (U, which sets UNICODE_CASE).
  struct Flags {
    bool i = false, s = false, m = false, d = false, x = false, u = false, U = false, c = false;
  };

  // One item of a class, or an escape outside one: a single character (`literal`), or something already written
  // (a class escape such as \d, an anchor).
  struct Item {
    std::optional<uint32_t> literal;
  };

  // Java reads a run of literal characters outside a class as one node (Pattern.atom): a slice when it holds two or
  // more, else a single character; a quantifier after a run of two or more takes its last character on its own.
  // Under (?iu) ß is matched apart in a slice and alone (UnicodeCase::Literal): its spelling waits, with where it
  // goes in out_, until its run ends.
  struct Waiting {
    size_t offset;
    int index;  // in its run
    std::string alone, in_slice;
  };

  // Ends the run of literals (before a quantifier when `quantified`), writing the spellings that waited for it.
  void EndRun(bool quantified) {
    const int slice = quantified && run_ > 1 ? run_ - 1 : run_;  // the literals Java reads as one slice
    for (auto it = waiting_.rbegin(); it != waiting_.rend(); ++it) {  // from the back: earlier offsets hold
      out_.insert(it->offset, slice > 1 && it->index < slice ? it->in_slice : it->alone);
    }
    waiting_.clear();
    run_ = 0;
  }

  // A set spelled by SpellClassSet: written, or (an alternative) kept for the class being read.
  void Write(Spelled spelled) {
    if (spelled.alternative) {
      class_alternatives_.push_back(std::move(spelled.text));
    } else {
      out_.append(spelled.text);
    }
  }

  absl::Status Step() {
    const size_t at = pos_;
    if (AtSpaceOrComment()) {
      // COMMENTS: whitespace and comments between items are not part of the pattern. Written without them, the
      // items that Java reads as separate stay separate in PCRE2 (a back reference is written \g{n}, so that a
      // digit after it stays a digit; the places where Java would not are read as it reads them, or refused).
      const size_t past = PastSpace(pos_);
      if (past == std::string_view::npos) return Differs("a NUL inside a comment under (?x)", at);
      pos_ = past;
      return absl::OkStatus();
    }
    const char c = in_[pos_++];
    // Anything but a literal ends a run of them (a literal escape and the default case's literals go on).
    const bool quantifier = c == '*' || c == '+' || c == '?' || c == '{';
    // A group repeated (Java's GroupCurly and Loop) or possessive keeps captures apart; one made optional by '?'
    // (a Branch) does not.
    if (!quantifier) {
      closed_.reset();
    } else if (closed_ && c != '?') {
      KeptApart(closed_->first);
      // Java matches the body of a group it repeats by GroupCurly once, without going back into it.
      if (closed_->line_ending) return Differs("\\R inside a repeated group (Java does not backtrack into it)", at);
    }
    if (quantifier || std::string_view("|[().$^").find(c) != std::string_view::npos) EndRun(quantifier);
    switch (c) {
      case '\\': {
        absl::StatusOr<Item> item = Escape(at, /*in_class=*/false);
        if (!item.ok()) return item.status();
        if (item->literal) {
          WriteLiteral(*item->literal);
          return absl::OkStatus();
        }
        EndRun(/*quantified=*/false);  // written after the waiting literals' place
        return absl::OkStatus();
      }
      case '[':
        if (flags_.c) return Differs(kUnderCanonEq, at);
        return Class(at);
      case '(': return Group(at);
      case ')':
        if (!scopes_.empty()) {
          flags_ = scopes_.back();
          scopes_.pop_back();
          const Opened opened = opened_.back();
          opened_.pop_back();
          if (opened.lookaround != Lookaround::kNone) KeptApart(opened.first);
          if (opened.line_ending && !opened_.empty()) opened_.back().line_ending = true;
          closed_ = opened;
        }
        out_.push_back(c);
        return absl::OkStatus();
      case '.':
        out_.append(flags_.s ? kAnyCharacter : flags_.d ? std::string_view("[^\\n]") : kJavaDot);
        return absl::OkStatus();
      case '$': out_.append(Dollar(flags_.m)); return absl::OkStatus();
      case '^':
        // Java's ^ under MULTILINE: at the start or after a line terminator (not between \r and \n), never at the
        // end of the input; without it the start only, as PCRE2's.
        if (!flags_.m) {
          out_.push_back('^');
        } else if (flags_.d) {
          out_.append("(?!\\z)(?:\\A|(?<=\\n))");
        } else {
          out_.append("(?!\\z)(?:\\A|(?<=[\\n\\x{85}\\x{2028}\\x{2029}])|(?<=\\r)(?!\\n))");
        }
        return absl::OkStatus();
      case '{': {
        // Its digits, ',' and '}', which under x Java reads past whitespace and comments (not before the first digit).
        std::string body;
        size_t close = pos_;
        if (close < in_.size() && IsAsciiDigit(in_[close])) {
          while (close != std::string_view::npos && close < in_.size() && in_[close] != '}') {
            body.push_back(in_[close]);
            close = PastSpace(close + 1);
          }
        }
        const size_t comma = body.find(',');
        const bool quantifier = close != std::string_view::npos && close < in_.size() && !body.empty() &&
                                IsAsciiDigit(body[0]) && body.find_first_not_of("0123456789,") == std::string::npos &&
                                comma == body.rfind(',');
        if (!quantifier) return Differs("a '{' that is not a quantifier {n}, {n,} or {n,m}", at);
        // Java's Loop stops repeating a group after a pass that took nothing, even below its minimum; PCRE2 goes on
        // to its count. They agree for * and + ({0,} and {1,}) and at most one pass; otherwise a group that can
        // match nothing is refused.
        if (closed_) {
          const int least = std::atoi(body.c_str());
          const bool bounded = comma != std::string::npos && comma + 1 < body.size();  // {n,m}
          const int most = bounded ? std::atoi(body.c_str() + comma + 1) : least;     // {n} and {n,}: least decides
          if ((least >= 2 || most >= 2) && CanMatchNothing(out_.substr(closed_->out_start))) {
            return Differs("a group that can match nothing, repeated a counted number of times (Java stops after an "
                           "empty pass, even below the count)",
                           at);
          }
          // Possessive, Java's Curly makes each pass of the group atomic on its own; PCRE2's the whole count.
          if (const size_t next = PastSpace(close + 1);
              least >= 2 && next != std::string_view::npos && next < in_.size() && in_[next] == '+') {
            return Differs("a group repeated possessively at least twice (Java makes each pass atomic)", at);
          }
        }
        out_.append(Cat("{", body, "}"));
        pos_ = close + 1;
        return absl::OkStatus();
      }
      case ']':
      case '}':
        ++run_;
        out_.push_back('\\');
        out_.push_back(c);
        return absl::OkStatus();
      default:
        if (flags_.i && IsAsciiLetter(c)) {
          WriteLiteral(static_cast<unsigned char>(c));
          return absl::OkStatus();
        }
        if (UnicodeCaseOn() && static_cast<unsigned char>(c) >= 0x80) {
          pos_ = at;
          const std::optional<uint32_t> code = DecodeUtf8(in_, &pos_);
          if (!code) return absl::InvalidArgumentError(Cat("bytes that are not UTF-8 at index ", at));
          WriteLiteral(*code);
          return absl::OkStatus();
        }
        if (!quantifier && c != '|' && (static_cast<unsigned char>(c) & 0xC0) != 0x80) ++run_;
        out_.push_back(c);
        return absl::OkStatus();
    }
  }

  // Where a quantifier's first character ('*', '+', '?' or '{') stands at `from`, under x past whitespace and
  // comments; npos where none does.
  size_t QuantifierAt(size_t from) const {
    const size_t next = PastSpace(from);
    return next < in_.size() && std::string_view("*+?{").find(in_[next]) != std::string_view::npos
               ? next
               : std::string_view::npos;
  }

  // Java's ASCII.isSpace, the whitespace COMMENTS skips.
  static bool IsJavaSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\x0B' || c == '\f' || c == '\r';
  }

  // Under x, whether whitespace or a comment starts at pos_.
  bool AtSpaceOrComment() const {
    return flags_.x && pos_ < in_.size() && (IsJavaSpace(in_[pos_]) || in_[pos_] == '#');
  }

  // Under x, the index of the first character at or after `from` that is neither whitespace nor in a comment (# to
  // a line terminator, which Java reads as the next character unless it is whitespace too: U+0085, U+2028 and
  // U+2029 end a comment and are themselves); `from` itself without x. npos for a NUL inside a comment, which
  // Java's parser reads as the pattern's end.
  size_t PastSpace(size_t from) const { return PastSpace(from, flags_); }
  size_t PastSpace(size_t from, const Flags& flags) const {
    if (!flags.x) return from;
    size_t p = from;
    while (p < in_.size()) {
      if (IsJavaSpace(in_[p])) {
        ++p;
        continue;
      }
      if (in_[p] != '#') break;
      while (p < in_.size()) {
        const std::string_view rest = in_.substr(p);
        if (rest[0] == '\0') return std::string_view::npos;
        if (rest[0] == '\n' ||
            (!flags.d && (rest[0] == '\r' || rest.starts_with("\xC2\x85") || rest.starts_with("\xE2\x80\xA8") ||
                           rest.starts_with("\xE2\x80\xA9")))) {
          break;
        }
        ++p;
      }
    }
    return p;
  }

  // Inside a class under x, past whitespace and comments (Java's peek and next skip them there too).
  absl::Status SkipClassSpace() {
    const size_t past = PastSpace(pos_);
    if (past == std::string_view::npos) return Differs("a NUL inside a comment under (?x)", pos_);
    pos_ = past;
    return absl::OkStatus();
  }

  // The next `n` characters from pos_ as Java's read() takes them inside an escape: under x past whitespace and
  // comments. Bytes (callers look at ASCII ones), each with the index just past it; fewer at the pattern's end.
  struct Ahead {
    std::string chars;
    std::vector<size_t> ends;
  };
  Ahead ReadAhead(size_t n) const {
    Ahead ahead;
    for (size_t p = pos_; ahead.chars.size() < n;) {
      p = PastSpace(p);
      if (p == std::string_view::npos || p >= in_.size()) break;
      ahead.chars.push_back(in_[p]);
      ahead.ends.push_back(++p);
    }
    return ahead;
  }

  // Java's CASE_INSENSITIVE with UNICODE_CASE (u, or U, which sets u): case folded by Character's mappings.
  bool UnicodeCaseOn() const { return flags_.i && flags_.u; }

  // A single character outside a class, one of a run (EndRun): under (?i) an ASCII letter as both cases; under (?iu)
  // every character Java matches for it.
  void WriteLiteral(uint32_t c) {
    ++run_;
    if (UnicodeCaseOn()) {
      const UnicodeCase::LiteralSets sets = UnicodeCase::Tables().Literal(c);
      const auto text = [](const std::vector<uint32_t>& set) {
        return set.size() == 1 ? CodeText(set[0]) : Cat("[", CodeMembers(set), "]");
      };
      if (sets.alone == sets.in_slice) {
        out_.append(text(sets.alone));
      } else {
        waiting_.push_back({out_.size(), run_ - 1, text(sets.alone), text(sets.in_slice)});
      }
    } else if (flags_.i && IsAsciiLetterCode(c)) {
      out_.append({'[', static_cast<char>(c), OtherCase(c), ']'});
    } else {
      out_.append(CodeText(c));
    }
  }

  // The escape at `at` (its backslash; pos_ is past it). A single character is returned, not written (the caller
  // writes it, or makes it a range's end); anything else is written.
  absl::StatusOr<Item> Escape(size_t at, bool in_class) {
    if (pos_ >= in_.size()) return absl::InvalidArgumentError(Cat("a trailing '\\' at index ", at));
    const char c = in_[pos_++];
    const auto copy = [&]() -> absl::StatusOr<Item> {
      out_.append(in_.substr(at, pos_ - at));
      return Item{};
    };
    const auto literal = [](uint32_t code) -> absl::StatusOr<Item> { return Item{code}; };
    if (static_cast<unsigned char>(c) >= 0x80) return Differs("'\\' before a non-ASCII character", at);
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c)) return literal(static_cast<unsigned char>(c));  // an escaped symbol
    switch (c) {
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S': {
        // Java's ASCII classes, as PCRE2's without UCP; under U (UNICODE_CHARACTER_CLASS) Java's Unicode ones. Inside
        // a class they are written as ranges: PCRE2 10.42 matches every character above U+00FF for a negated class
        // that holds a \p{..} and \W, \D or \S ([^\p{Lu}\W] matches U+0101).
        const char lower = static_cast<char>(c | 0x20);
        if (!flags_.U) {
          if (!in_class) return copy();
          // \d and \s are Java's POSIX Digit and Space (both ctype sets in Pattern); \w adds '_' to Alnum.
          static const std::vector<CodeRange> kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
          out_.append(RangeMembers(lower == 'w' ? kWord : FixedRanges(lower == 'd' ? "Digit" : "Space"), c != lower));
          return Item{};
        }
        Write(SpellClassSet(
            Members(std::string(lower == 'd' ? kUnicodeDigit : lower == 'w' ? kUnicodeWord : kUnicodeSpace)),
            c != lower, in_class));
        return Item{};
      }
      case 'v':
        // In a class Java reads \v right before a '-' as the vertical tab, a range's start ([\v-x]).
        if (in_class && pos_ < in_.size() && in_[pos_] == '-') return literal(0x0B);
        return copy();
      case 'h': case 'H': case 'V':
        return copy();
      case 'X':
        return Differs(Cat("\\X (", kGraphemesApart, ")"), at);
      case 't': return literal('\t');
      case 'n': return literal('\n');
      case 'r': return literal('\r');
      case 'f': return literal('\f');
      case 'e': return literal(0x1B);
      case 'a': return literal(0x07);
      case 'R': {
        // Java's LineEnding takes \r\n, and on backtracking \r alone; PCRE2's \R is atomic. Quantified (Curly,
        // Ques), Java matches it once per repetition, as PCRE2's; inside a repeated group, see Step.
        if (in_class) return Differs("\\R inside a class", at);
        if (QuantifierAt(pos_) != std::string_view::npos) {
          out_.append("\\R");
        } else {
          out_.append("(?:\\r\\n|[\\n\\x0B\\f\\r\\x{85}\\x{2028}\\x{2029}])");
        }
        if (!opened_.empty()) opened_.back().line_ending = true;
        return Item{};
      }
      case 'A': case 'z': case 'G':
        if (in_class) return Differs(Cat("\\", std::string(1, c), " inside a class"), at);
        return copy();
      case 'Z':
        // Java's \Z is its $ without MULTILINE: the end, or before a final line terminator.
        if (in_class) return Differs("\\Z inside a class", at);
        out_.append(Dollar(/*multiline=*/false));
        return Item{};
      case 'x': {
        // Java's \xhh and \x{h..h}, whose digits and braces under x it reads past whitespace and comments.
        const Ahead ahead = ReadAhead(8);
        const std::string& h = ahead.chars;
        if (h.size() >= 2 && IsHexDigit(h[0]) && IsHexDigit(h[1])) {
          pos_ = ahead.ends[1];
          return literal(HexValue(h.substr(0, 2)));
        }
        if (const size_t close = h.find('}'); !h.empty() && h[0] == '{' && close != std::string::npos && close > 1 &&
                                              std::all_of(h.begin() + 1, h.begin() + close, IsHexDigit)) {
          const uint32_t code = HexValue(h.substr(1, close - 1));
          pos_ = ahead.ends[close];
          if (code > 0x10FFFF || IsSurrogate(code)) return Differs("\\x{..} of a surrogate or past U+10FFFF", at);
          return literal(code);
        }
        return Differs("\\x without two hex digits or {hex} (of at most six digits)", at);
      }
      case 'N': {
        // Java's \N{name}: the character Character.codePointOf(name) gives. Under x Java finds the '{' past
        // whitespace and comments, and a '#' in the name would start a comment (refused).
        const Ahead brace = ReadAhead(1);
        const size_t close = brace.chars == "{" ? in_.find('}', brace.ends[0]) : std::string_view::npos;
        if (close == std::string_view::npos) {
          return absl::InvalidArgumentError(Cat("an illegal or unclosed character name escape \\N at index ", at));
        }
        const std::string_view name = in_.substr(brace.ends[0], close - brace.ends[0]);
        pos_ = close + 1;
        if (flags_.x && name.find('#') != std::string_view::npos) {
          return Differs("a comment inside \\N{..} under (?x)", at);
        }
        const absl::StatusOr<uint32_t> code = JavaCodePointOf(name);
        if (absl::IsUnimplemented(code.status())) {
          return Differs(Cat("\\N{", name, "} (", code.status().message(), ")"), at);
        }
        if (!code.ok()) {
          return absl::InvalidArgumentError(Cat("an unknown character name \\N{", name, "} at index ", at));
        }
        if (IsSurrogate(*code)) return Differs("\\N{..} of a surrogate", at);
        return literal(*code);
      }
      case '0': {
        // Java's octal escape: \0n, \0nn, \0mnn with m at most 3 (under x its digits past whitespace and comments).
        const Ahead ahead = ReadAhead(3);
        size_t digits = 0;
        while (digits < ahead.chars.size() && IsOctalDigit(ahead.chars[digits])) ++digits;
        if (digits == 3 && ahead.chars[0] > '3') digits = 2;
        if (digits == 0) return absl::InvalidArgumentError(Cat("an illegal octal escape \\0 at index ", at));
        uint32_t code = 0;
        for (size_t i = 0; i < digits; ++i) code = code * 8 + static_cast<uint32_t>(ahead.chars[i] - '0');
        pos_ = ahead.ends[digits - 1];
        return literal(code);
      }
      case 'u': {
        // Java's \uhhhh: four hex digits; a high surrogate then \u and a low one make one character (under x each
        // past whitespace and comments).
        const Ahead ahead = ReadAhead(10);
        const std::string& h = ahead.chars;
        const auto four = [&](size_t from) -> std::optional<uint32_t> {
          if (from + 4 > h.size() || !std::all_of(h.begin() + from, h.begin() + from + 4, IsHexDigit)) {
            return std::nullopt;
          }
          return HexValue(h.substr(from, 4));
        };
        const std::optional<uint32_t> high = four(0);
        if (!high) return absl::InvalidArgumentError(Cat("an illegal Unicode escape \\u at index ", at));
        pos_ = ahead.ends[3];
        if (*high >= 0xD800 && *high <= 0xDBFF && h.substr(4, 2) == "\\u") {
          const std::optional<uint32_t> low = four(6);
          if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
            pos_ = ahead.ends[9];
            return literal(0x10000 + ((*high - 0xD800) << 10) + (*low - 0xDC00));
          }
        }
        if (IsSurrogate(*high)) return Differs("\\u of a lone surrogate", at);
        return literal(*high);
      }
      case 'c': {
        // Java's \cX: X (under x past whitespace and comments) with bit 6 flipped.
        const Ahead ahead = ReadAhead(1);
        if (ahead.chars.empty()) {
          return absl::InvalidArgumentError(Cat("an illegal control escape \\c at index ", at));
        }
        const auto x = static_cast<unsigned char>(ahead.chars[0]);
        if (x >= 0x80) return Differs("\\c before a non-ASCII character", at);
        pos_ = ahead.ends[0];
        return literal(x ^ 0x40u);
      }
      case 'p':
      case 'P': {
        if (flags_.c && !in_class) return Differs(kUnderCanonEq, at);
        // Under x Java skips whitespace and comments before the '{' or the one letter, and before the name (\p{ L},
        // \p L); whitespace after the name is part of it (\p{L } is unknown).
        const Ahead ahead = ReadAhead(1);
        std::string_view name;
        if (ahead.chars == "{") {
          const size_t start = PastSpace(ahead.ends[0]);
          const size_t close = start == std::string_view::npos ? start : in_.find('}', start);
          if (close == std::string_view::npos) {
            return absl::InvalidArgumentError(Cat("an unclosed character family at index ", at));
          }
          name = in_.substr(start, close - start);
          pos_ = close + 1;
        } else if (!ahead.chars.empty()) {
          name = in_.substr(ahead.ends[0] - 1, 1);
          pos_ = ahead.ends[0];
        }
        absl::StatusOr<Spelled> property = JavaProperty(name, c == 'P', flags_.i, flags_.U, in_class);
        if (absl::IsUnimplemented(property.status())) {
          return Differs(Cat("\\", std::string(1, c), "{", name, "} (", property.status().message(),
                             "; the relay reads categories, POSIX classes, binary properties, scripts, blocks and "
                             "Character's methods)"),
                         at);
        }
        if (!property.ok()) {
          return absl::InvalidArgumentError(
              Cat(property.status().message(), " \\", std::string(1, c), "{", name, "} at index ", at));
        }
        Write(*std::move(property));
        return Item{};
      }
      case 'k': {
        if (in_class) return Differs("\\k inside a class", at);
        const size_t close = in_.find('>', pos_);
        if (pos_ >= in_.size() || in_[pos_] != '<' || close == std::string_view::npos) {
          return absl::InvalidArgumentError(Cat("\\k at index ", at, " without a <name>"));
        }
        const std::string name(in_.substr(pos_ + 1, close - pos_ - 1));
        if (!names_.contains(name)) {
          return absl::InvalidArgumentError(
              Cat("\\k<", name, "> at index ", at, ": no group with that name before it"));
        }
        pos_ = close + 1;
        if (InLookbehind()) return LookbehindReference(at);
        back_references_.emplace_back(names_.at(name), at);
        if (flags_.i) return CaseInsensitiveBackReference(names_.at(name));
        return copy();
      }
      case 'b': case 'B':
        // Java's word boundary, checked by a callout (JavaCallout) as Java checks it.
        if (in_class) return absl::InvalidArgumentError(Cat("\\", std::string(1, c), " inside a class at index ", at));
        if (pos_ < in_.size() && in_[pos_] == '{') {
          return Differs(Cat("\\", std::string(1, c), "{..} (", kGraphemesApart, ")"), at);
        }
        // 1 and 2; 3 and 4 under U, whose word characters are Unicode's in every JDK (each by its Unicode version).
        out_.append(Cat("(?:(?C", (c == 'b' ? 1 : 2) + (flags_.U ? 2 : 0), "))"));
        callouts_ = true;
        return Item{};
      default:
        if (IsAsciiDigit(c)) {
          if (in_class) return Differs("a back reference inside a class", at);
          if (c - '0' > groups_) return Differs("a back reference to a group not opened before it", at);
          // Java's ref(): a further digit (under x past whitespace and comments, as its peek() reads) is taken
          // while the number still names a group opened before it; else it is a literal after the reference.
          int group = c - '0';
          for (size_t next = PastSpace(pos_); next < in_.size() && IsAsciiDigit(in_[next]) &&
                                              group * 10 + (in_[next] - '0') <= groups_;
               next = PastSpace(pos_)) {
            group = group * 10 + (in_[next] - '0');
            pos_ = next + 1;
          }
          if (InLookbehind()) return LookbehindReference(at);
          back_references_.emplace_back(group, at);
          if (flags_.i) return CaseInsensitiveBackReference(group);
          // \g{n}, not \n: a digit written after it (\x32, \062) must not lengthen the number.
          out_.append(Cat("\\g{", group, "}"));
          return Item{};
        }
        return Differs(Cat("\\", std::string(1, c)), at);
    }
  }

  static absl::Status LookbehindReference(size_t at) {
    return absl::InvalidArgumentError(
        Cat("a back reference at index ", at, " inside a lookbehind, which Java refuses (no obvious maximum length)"));
  }

  // Java's back reference under CASE_INSENSITIVE (CIBackRef): the group's text again, ignoring ASCII case. A string
  // callout (JavaBackReference) checks it as Java does; PCRE2's caseless back reference then takes the same
  // characters (they equal the group's but for the case of ASCII letters, so Unicode's folding takes them too).
  // Under (?iu) Java compares by Character's case mappings, which PCRE2's caseless back reference does not follow
  // (Java matches i, I, the dotted I and the dotless i with each other; PCRE2 the first two only). The callout 'u'
  // checks it and notes where Java's reference ends; the characters up to there are taken one by one, the callout
  // 'e' stopping them at that end. Atomic: the reference takes its characters in one way only, and no other callout
  // comes between the two.
  absl::StatusOr<Item> CaseInsensitiveBackReference(int group) {
    if (UnicodeCaseOn()) {
      out_.append(Cat("(?>(?C'u", group, "')(?s:.)*?(?C'e'))"));
    } else {
      out_.append(Cat("(?:(?C'", group, "')(?i:\\g{", group, "}))"));
    }
    callouts_ = true;
    return Item{};
  }

  // A single character in a class: under (?i) an ASCII letter and its other case; under (?iu) what Java's class
  // takes for it.
  void WriteClassLiteral(uint32_t c) {
    if (UnicodeCaseOn()) {
      out_.append(CodeMembers(UnicodeCase::Tables().ClassLiteral(c)));
      return;
    }
    out_.append(CodeText(c));
    if (flags_.i && IsAsciiLetterCode(c)) out_.push_back(OtherCase(c));
  }

  // The class item at pos_: a single character (returned, not written) or a class escape (written). A range's end
  // (`range_end`) is read as Java's range() reads it, any other item as its clazz() does.
  absl::StatusOr<Item> ClassItem(bool range_end = false) {
    // Java skips whitespace and comments inside a class too, also between a range's ends.
    if (absl::Status st = SkipClassSpace(); !st.ok()) return st;
    const size_t here = pos_;
    if (pos_ >= in_.size()) return absl::InvalidArgumentError(Cat("an unclosed character class at index ", here));
    if (in_[pos_] == '\\') {
      ++pos_;
      return Escape(here, /*in_class=*/true);
    }
    // A nested class and && are read by the class itself (CompoundClass); here they would end a range.
    if (in_[pos_] == '[') return Differs("a class as a range's end", here);
    if (in_[pos_] == '&' && pos_ + 1 < in_.size() && in_[pos_ + 1] == '&') return Differs("&& as a range's end", here);
    // Under x Java's clazz() reads '&' then whitespace or a comment as the first '&' of a && that finds none: it steps
    // back one character from the next one and reads a member from there with range(), so the '&' is dropped
    // ([& a] is [a], [a & b] is [ab]) and a '[' or ']' there is itself ([a& ]] is [a\]]). A range's end is read as
    // itself ([!-& ] ends in '&').
    if (in_[pos_] == '&' && flags_.x && !range_end) {
      if (const size_t next = DroppedAmpersandEnd(pos_); next != pos_ + 1) {
        if (next == std::string_view::npos) return Differs("a NUL inside a comment under (?x)", here);
        if (next >= in_.size()) return absl::InvalidArgumentError(Cat("an unclosed character class at index ", here));
        // (A second '&' makes a && across them, which CompoundClass reads before this.)
        if (in_[next] == '&') return Differs("'&' then whitespace or a comment, then '&', as a class member", here);
        pos_ = next;
        if (!IsJavaSpace(in_[next - 1])) {
          // A comment that NEL, LS or PS ends: the step back lands on its last character, read as a member (after
          // it the terminator too, as Java's peek() does not take it for whitespace).
          pos_ = CharacterBefore(in_, next);
        }
        if (in_[pos_] == '[' || in_[pos_] == ']') return Item{static_cast<uint32_t>(in_[pos_++])};
        return ClassItem();
      }
    }
    const std::optional<uint32_t> code = DecodeUtf8(in_, &pos_);
    if (!code) return absl::InvalidArgumentError(Cat("bytes that are not UTF-8 at index ", here));
    return Item{code};
  }

  // One class member at pos_: a character, a range or a class escape, written.
  absl::Status ClassMember() {
    const size_t here = pos_;
    absl::StatusOr<Item> item = ClassItem();
    if (!item.ok()) return item.status();
    if (!item->literal) return absl::OkStatus();
    // A range: a character, '-', then another, unless the '-' is last in the class (Java looks at the character
    // right after the '-'; under x it skips whitespace and comments before the '-' and before the range's end).
    if (absl::Status st = SkipClassSpace(); !st.ok()) return st;
    if (pos_ + 1 < in_.size() && in_[pos_] == '-' && in_[pos_ + 1] != ']') {
      ++pos_;
      absl::StatusOr<Item> end = ClassItem(/*range_end=*/true);
      if (!end.ok()) return end.status();
      if (!end->literal) return Differs("a range that ends in a class escape", here);
      const uint32_t low = *item->literal, high = *end->literal;
      if (low > high) return absl::InvalidArgumentError(Cat("an illegal character range at index ", here));
      out_.append(Cat(CodeText(low), "-", CodeText(high)));
      if (UnicodeCaseOn()) {
        out_.append(CodeMembers(UnicodeCase::Tables().RangeExtras(low, high)));
      } else if (flags_.i) {
        for (uint32_t c = low; c <= std::min<uint32_t>(high, 0x7F); ++c) {
          if (IsAsciiLetterCode(c)) out_.push_back(OtherCase(c));
        }
      }
      return absl::OkStatus();
    }
    WriteClassLiteral(*item->literal);
    return absl::OkStatus();
  }

  // Under x, where a class's '&' at `amp` is followed by whitespace or a comment (Java then drops it: ClassItem),
  // the position past them; else amp + 1.
  size_t DroppedAmpersandEnd(size_t amp) const { return PastSpace(amp + 1); }

  // Whether the '&' at `amp` starts a && (Java's clazz() looks for the second past whitespace and comments under x):
  // the second's position, else npos.
  size_t SecondAmpersand(size_t amp) const {
    const size_t next = DroppedAmpersandEnd(amp);
    return next != std::string_view::npos && next < in_.size() && in_[next] == '&' ? next : std::string_view::npos;
  }

  // Whether the class whose contents start at pos_ (after its '[') nests a class or has an intersection (&&).
  bool ClassIsCompound() const {
    size_t i = pos_;
    if (i < in_.size() && in_[i] == '^') ++i;
    if (i < in_.size() && in_[i] == ']') ++i;  // first: itself
    while ((i = PastSpace(i)) != std::string_view::npos && i < in_.size()) {
      const char c = in_[i];
      if (c == ']') return false;
      if (c == '[' || (c == '&' && SecondAmpersand(i) != std::string_view::npos)) return true;
      if (c == '&' && flags_.x) {  // a dropped '&' before a '[' or ']', which is then itself
        if (const size_t next = DroppedAmpersandEnd(i); next != i + 1 && next < in_.size() &&
                                                        (in_[next] == '[' || in_[next] == ']')) {
          i = next + 1;
          continue;
        }
      }
      i += c == '\\' ? 2 : 1;
    }
    return false;
  }

  absl::Status Class(size_t at) {
    if (ClassIsCompound()) {
      absl::StatusOr<std::string> matcher = CompoundClass(at);
      if (!matcher.ok()) return matcher.status();
      out_.append(*matcher);
      return absl::OkStatus();
    }
    std::vector<std::string> enclosing = std::exchange(class_alternatives_, {});
    const size_t start = out_.size();
    out_.push_back('[');
    const bool negate = pos_ < in_.size() && in_[pos_] == '^';
    if (negate) out_.push_back(in_[pos_++]);
    bool first = true;  // a ']' first in a class is itself in both
    while (pos_ < in_.size()) {
      if (absl::Status st = SkipClassSpace(); !st.ok()) return st;
      if (pos_ >= in_.size()) break;
      if (in_[pos_] == ']' && !first) {
        ++pos_;
        out_.push_back(']');
        if (!class_alternatives_.empty()) {  // a union after all: members and alternatives
          const size_t from = start + (negate ? 2 : 1);
          const std::string members = out_.substr(from, out_.size() - 1 - from);
          out_.resize(start);
          const std::string matcher = OneOf(members, std::exchange(class_alternatives_, {}));
          out_.append(negate ? NoneOf(matcher) : matcher);
        }
        class_alternatives_ = std::move(enclosing);
        return absl::OkStatus();
      }
      first = false;
      if (absl::Status st = ClassMember(); !st.ok()) return st;
    }
    return absl::InvalidArgumentError(Cat("an unclosed character class at index ", at));
  }

  // Java's compound classes, pos_ after the '[' at `at`: the members of a class and the classes nested in it are a
  // union; `&&` intersects the unions on either side (of lower precedence); a '^' first negates the whole. PCRE2's
  // classes have neither, so the class becomes a pattern that matches one character the same way: a union of
  // alternatives (?:[members]|nested...), an intersection of lookaheads (?:(?=A)B), a negation (?:(?!A)any).
  // Empty operands of && are refused: Java reads them in ways of its own ([xa-c&&] is [a-c]), and Java 17 and 25
  // apart (Java 17 throws a NullPointerException at match time for [b-ca&&], which Java 25 refuses to compile).
  absl::StatusOr<std::string> CompoundClass(size_t at) {
    bool negate = false;
    if (pos_ < in_.size() && in_[pos_] == '^') {
      negate = true;
      ++pos_;
    }
    std::vector<std::string> operands;  // of the intersection, each one character's pattern
    std::string members;                // the current union's members, as a PCRE2 class's contents
    std::vector<std::string> nested;    // the current union's nested classes and alternatives
    std::vector<std::string> enclosing = std::exchange(class_alternatives_, {});
    const auto close_union = [&]() -> absl::Status {
      if (members.empty() && nested.empty()) {
        return Differs(Cat("an empty operand of && (", kEmptyOperand, ")"), at);
      }
      operands.push_back(OneOf(members, std::exchange(nested, {})));
      members.clear();
      return absl::OkStatus();
    };
    bool first = true;  // a ']' first in the class is itself, as in a simple class
    bool after_nested = false;  // the last item was a nested class
    while (pos_ < in_.size()) {
      if (absl::Status st = SkipClassSpace(); !st.ok()) return st;
      if (pos_ >= in_.size()) break;
      const size_t here = pos_;
      const char c = in_[pos_];
      // Java's clazz() ends an operand of && at a single '&' after a class nested in it, and reads the rest into the
      // members before the && ([a&&[b]&x] matches a, & and x): refused.
      if (c == '&' && after_nested && !operands.empty() && SecondAmpersand(pos_) == std::string_view::npos) {
        return Differs("a single '&' after a class nested in an operand of &&", here);
      }
      after_nested = c == '[';
      if (c == ']' && !first) {
        ++pos_;
        if (absl::Status st = close_union(); !st.ok()) return st;
        std::string matcher = operands.back();
        if (operands.size() > 1) {
          matcher = "(?:";
          for (size_t i = 0; i + 1 < operands.size(); ++i) matcher += Cat("(?=", operands[i], ")");
          matcher += Cat(operands.back(), ")");
        }
        class_alternatives_ = std::move(enclosing);
        return negate ? NoneOf(matcher) : matcher;
      }
      first = false;
      if (c == '[') {
        ++pos_;
        if (ClassIsCompound()) {
          absl::StatusOr<std::string> inner = CompoundClass(here);
          if (!inner.ok()) return inner.status();
          nested.push_back(*std::move(inner));
        } else {
          std::string saved = std::exchange(out_, std::string());
          absl::Status st = Class(here);
          nested.push_back(std::exchange(out_, std::move(saved)));
          if (!st.ok()) return st;
        }
        continue;
      }
      if (const size_t second = c == '&' ? SecondAmpersand(pos_) : std::string_view::npos;
          second != std::string_view::npos) {
        pos_ = second + 1;
        if (const size_t next = PastSpace(pos_);
            next == std::string_view::npos || (next < in_.size() && (in_[next] == '&' || in_[next] == ']'))) {
          return Differs(Cat("an empty operand of && (", kEmptyOperand, ")"), here);
        }
        if (absl::Status st = close_union(); !st.ok()) return st;
        continue;
      }
      std::string saved = std::exchange(out_, std::string());
      absl::Status st = ClassMember();
      members += std::exchange(out_, std::move(saved));
      if (!st.ok()) return st;
      for (std::string& alternative : std::exchange(class_alternatives_, {})) nested.push_back(std::move(alternative));
    }
    return absl::InvalidArgumentError(Cat("an unclosed character class at index ", at));
  }

  absl::Status Group(size_t at) {
    if (pos_ < in_.size() && in_[pos_] == '*') return Differs("(*", at);
    // Under x Java reads "( ?:" as "(?:", and "( *" as a dangling '*' (refused: written without the space, PCRE2
    // would read "(*" as a verb).
    if (const size_t next = PastSpace(pos_); next != pos_ && next < in_.size()) {
      if (in_[next] == '*') return Differs("whitespace or a comment between '(' and '*' under (?x)", at);
      if (in_[next] == '?') pos_ = next;
    }
    if (pos_ >= in_.size() || in_[pos_] != '?') {
      ++groups_;
      OpenScope(/*capturing=*/true);
      out_.push_back('(');
      return absl::OkStatus();
    }
    const std::string_view rest = in_.substr(pos_);
    // Inline flags: (?is-md) to the end of the enclosing group, (?is-md:X) for X. Of Java's flags, i, s, m, d and
    // x, u (UNICODE_CASE), U (UNICODE_CHARACTER_CLASS, which sets u) and c (CANON_EQ: set inline, after the pattern
    // was read for normalizing, it changes only a class or \p{..} outside one, which are then refused). Java reads
    // past whitespace and comments inside the flags while x is on, as it stands after each flag ((? i) under x,
    // (?x i) set i).
    const size_t first = PastSpace(pos_ + 1);
    // (?) sets nothing, as in Java.
    if (first != std::string_view::npos && first < in_.size() &&
        (IsAsciiLetter(in_[first]) || in_[first] == '-' || in_[first] == ')')) {
      Flags flags = flags_;
      bool on = true;
      size_t i = first;
      for (; i != std::string_view::npos && i < in_.size() && in_[i] != ')' && in_[i] != ':';
           i = PastSpace(i + 1, flags)) {
        const char f = in_[i];
        if (f == '-' && on) {
          on = false;
          continue;
        }
        bool* flag = f == 'i'   ? &flags.i
                     : f == 's' ? &flags.s
                     : f == 'm' ? &flags.m
                     : f == 'd' ? &flags.d
                     : f == 'x' ? &flags.x
                     : f == 'u' ? &flags.u
                     : f == 'U' ? &flags.U
                     : f == 'c' ? &flags.c
                                : nullptr;
        if (flag == nullptr) {
          return absl::InvalidArgumentError(Cat("an unknown inline flag ", std::string(1, f), " at index ", at));
        }
        *flag = on;
        if (f == 'U') flags.u = on;  // Java's U sets and clears UNICODE_CASE with it
      }
      if (i == std::string_view::npos || i >= in_.size() || (i == first && in_[i] != ')')) {
        return absl::InvalidArgumentError(Cat("an unclosed inline flag at index ", at));
      }
      pos_ = i + 1;
      if (in_[i] == ':') {
        OpenScope();
        flags_ = flags;
        out_.append("(?:");
        return absl::OkStatus();
      }
      flags_ = flags;
      // Java reads a quantifier right after it (under x, after whitespace and comments too) as dangling; PCRE2
      // would apply it to what came before.
      if (const size_t next = QuantifierAt(pos_); next != std::string_view::npos) {
        return absl::InvalidArgumentError(Cat("a quantifier at index ", next, " after an inline flag"));
      }
      return absl::OkStatus();
    }
    for (std::string_view plain : {"?:", "?=", "?!", "?>", "?<=", "?<!"}) {
      if (rest.starts_with(plain)) {
        OpenScope(/*capturing=*/false, plain == "?:"             ? Lookaround::kNone
                                       : plain.starts_with("?<") ? Lookaround::kBehind
                                                                 : Lookaround::kOther);
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
      OpenScope(/*capturing=*/true);
      out_.push_back('(');
      out_.append(rest.substr(0, close + 1));
      pos_ += close + 1;
      return absl::OkStatus();
    }
    // Java reads anything else after "(?" as inline flags and refuses it (PCRE2's (?#, (?|, (?P<, (?R), (?(..)).
    return absl::InvalidArgumentError(Cat("an unknown group or inline flag at index ", at));
  }

  // Java's $ (and \Z, multiline false) under the flags in force.
  std::string_view Dollar(bool multiline) const {
    if (flags_.d) return multiline ? "(?=\\n|\\z)" : "(?=\\n?\\z)";  // UNIX_LINES: \n is the only terminator
    return multiline ? kJavaDollarMultiline : kJavaDollar;
  }

  // A lookbehind; a lookahead or an atomic group (kOther): their captures Java keeps when it backtracks out of them.
  enum class Lookaround : uint8_t { kNone, kBehind, kOther };

  // A group opens: its end restores the flags it opened with. `capturing`: it is the group groups_.
  void OpenScope(bool capturing = false, Lookaround lookaround = Lookaround::kNone) {
    scopes_.push_back(flags_);
    opened_.push_back(
        Opened{.first = capturing ? groups_ : groups_ + 1, .lookaround = lookaround, .out_start = out_.size()});
  }

  // Whether the PCRE2 group `group` may match an empty string (PCRE2's lower bound of a match's length is 0); true
  // when it does not compile alone (a back reference to a group outside it).
  static bool CanMatchNothing(const std::string& group) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(group.data()), group.size(), PCRE2_UTF, &error,
                                     &offset, nullptr);
    if (code == nullptr) return true;
    uint32_t least = 0;
    const int rc = pcre2_pattern_info(code, PCRE2_INFO_MINLENGTH, &least);
    pcre2_code_free(code);
    return rc != 0 || least == 0;
  }

  // Whether the innermost lookaround open at pos_ is a lookbehind (Java refuses a back reference there: its length
  // has no obvious maximum).
  bool InLookbehind() const {
    for (auto it = opened_.rbegin(); it != opened_.rend(); ++it) {
      if (it->lookaround != Lookaround::kNone) return it->lookaround == Lookaround::kBehind;
    }
    return false;
  }

  // The capturing groups from `first` up to the last opened: Java keeps what they captured where PCRE2 undoes it.
  void KeptApart(int first) {
    for (int g = first; g <= groups_; ++g) kept_apart_.insert(g);
  }

  std::string_view in_;
  Flags flags_;                       // in force at pos_
  std::vector<Flags> scopes_;         // the flags of each open group at its start
  // Of each open group: its first capturing group (itself, or the first inside it), and what kind of lookaround.
  struct Opened {
    int first;
    Lookaround lookaround;
    size_t out_start;           // where its PCRE2 text starts in out_
    bool line_ending = false;   // it has a \R
  };
  std::vector<Opened> opened_;
  // The group that closed last, while a quantifier may follow it.
  std::optional<Opened> closed_;
  // Java's matcher keeps what these groups captured when it backtracks out of them where PCRE2 undoes it: inside a
  // lookaround or an atomic group, or a repeated or possessive group (its captures, its own). A back reference or
  // a replacement that reads one is refused.
  std::set<int> kept_apart_;
  std::vector<std::pair<int, size_t>> back_references_;  // (group, index)
  int groups_ = 0;                    // capturing groups opened so far
  std::map<std::string, int> names_;  // named group -> its number
  size_t pos_ = 0;
  std::string out_;
  bool callouts_ = false;  // a callout was written: \b, \B, a back reference under (?i)
  int run_ = 0;                    // literals in the current run (EndRun)
  std::vector<Waiting> waiting_;   // of the current run
  // Of the class being read: sets that are not written as its members (SpellClassSet's alternatives).
  std::vector<std::string> class_alternatives_;
};

// A match runs out after this many backtracking steps (PCRE2's default is 10,000,000): a pattern such as (a*)*b
// on a long value gives no topic instead of holding the loop thread.
constexpr uint32_t kMatchLimit = 1'000'000;

// Every pattern compiles without PCRE2's start-of-match optimizations, which in 10.42 fail a group repeated {0} that
// has an alternative starting with a lookahead ((?:a|(?=b)c){0}x does not match x), which the relay writes for a
// class like [a[b&&c]]; and without its auto-possession, which in 10.42 makes a* possessive before an optional
// possessive or atomic group (a*(b)?+a did not match aa).
constexpr uint32_t kNoOptimizations = PCRE2_NO_START_OPTIMIZE | PCRE2_NO_AUTO_POSSESS;

// With callouts, PCRE2 takes the paths a backtracking matcher takes, as Java's does: those optimizations (a
// character the match needs that the value lacks) and auto-possession would skip callouts, and so would a leading .*
// anchored; and a callout can throw as Java 17 does (JavaBackReference).
constexpr uint32_t kWalkEveryPath = kNoOptimizations | PCRE2_NO_DOTSTAR_ANCHOR;


// A one-character PCRE2 class, for what Java asks of Character (PCRE2's Unicode tables).
class UnicodeClass {
 public:
  explicit UnicodeClass(std::string_view pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF, &error, &offset,
                          nullptr);
  }
  UnicodeClass(const UnicodeClass&) = delete;
  UnicodeClass& operator=(const UnicodeClass&) = delete;
  ~UnicodeClass() { pcre2_code_free(code_); }

  bool Has(uint32_t c) const {
    if (code_ == nullptr) return false;
    std::string text;
    AppendUtf8(c, &text);
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(pcre2_match_data_create(1, nullptr),
                                                                              &pcre2_match_data_free);
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                       PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NO_UTF_CHECK, data.get(), nullptr) >= 0;
  }

 private:
  pcre2_code* code_ = nullptr;
};

bool IsLetterOrDigit(uint32_t c) {
  static const UnicodeClass letter_or_digit("[\\p{L}\\p{Nd}]");
  return letter_or_digit.Has(c);
}
bool IsNonSpacingMark(uint32_t c) {
  static const UnicodeClass mark("\\p{Mn}");
  return mark.Has(c);
}

// The code point whose UTF-8 starts at `at`; nullopt for bytes that are not UTF-8.
std::optional<uint32_t> CodePointAt(std::string_view s, size_t at) { return DecodeUtf8(s, &at); }

// Java's hasBaseCharacter for the non-spacing mark `c` at `begin`: back over non-spacing marks to a letter or digit.
// Java steps back one UTF-16 unit at a time, so a character beyond the BMP met on the way is read as its low
// surrogate, which ends the walk.
bool HasBaseCharacter(std::string_view s, size_t begin, uint32_t c) {
  while (!IsLetterOrDigit(c)) {
    if (!IsNonSpacingMark(c) || begin == 0) return false;
    begin = CharacterBefore(s, begin);
    const std::optional<uint32_t> previous = CodePointAt(s, begin);
    if (!previous || *previous > 0xFFFF) return false;
    c = *previous;
  }
  return true;
}

// Whether Java's Bound counts the character `c` at `begin` as part of a word, on the `left` of the position or on
// its right.
bool CountsAsWord(std::string_view s, size_t begin, uint32_t c, bool left, Jdk java, bool unicode_word) {
  static const UnicodeClass unicode(Cat("[", kUnicodeWord, "]"));
  const bool word = unicode_word         ? unicode.Has(c)
                    : java == Jdk::k17 ? c == '_' || IsLetterOrDigit(c)
                                       : c < 0x80 && (IsAsciiLetter(static_cast<char>(c)) ||
                                                      IsAsciiDigit(static_cast<char>(c)) || c == '_');
  if (word) return true;
  if (!IsNonSpacingMark(c)) return false;
  if (left && c > 0xFFFF) return false;  // Java's walk starts at i-1: the mark's low surrogate
  return HasBaseCharacter(s, begin, c);
}

// What a match's callouts read: the JDK they check as, and where the back reference under (?iu) being matched ends.
struct CalloutState {
  Jdk java;
  PCRE2_SIZE reference_end = 0;
};

// The callout a back reference under (?i) is written with (its group's number as the callout string, after a 'u'
// under UNICODE_CASE): Java's CIBackRef at the current position. Java takes the group's length in UTF-16 units and
// compares, in Java 17, that many code points, each ignoring ASCII case (under UNICODE_CASE: equal when
// toLowerCase(toUpperCase(c)) is), stepping over each by its own length: past a character beyond the BMP it compares
// the characters after the group too, and throws when that runs past the value's end (PCRE2_ERROR_CALLOUT); Java 25
// compares the group's code points. Either goes on at the group's length in UTF-16 units, which is noted in
// `reference_end` as a byte offset. 0 goes on, 1 fails here.
int JavaBackReference(const pcre2_callout_block* block, std::string_view s, bool unicode_case, CalloutState* state) {
  const Jdk java = state->java;
  int group = 0;
  for (PCRE2_SIZE k = unicode_case ? 1 : 0; k < block->callout_string_length; ++k) {
    group = group * 10 + (block->callout_string[k] - '0');
  }
  const PCRE2_SIZE* ov = block->offset_vector;
  if (static_cast<uint32_t>(group) >= block->capture_top || ov[2 * group] == PCRE2_UNSET) return 1;
  const std::string_view text = s.substr(ov[2 * group], ov[2 * group + 1] - ov[2 * group]);
  // UTF-16 units of `utf8`, counted up to `most`.
  const auto utf16_units = [](std::string_view utf8, size_t most) {
    size_t units = 0;
    for (size_t k = 0; k < utf8.size() && units < most;) {
      const std::optional<uint32_t> c = DecodeUtf8(utf8, &k);
      if (!c) return units;
      units += *c > 0xFFFF ? 2 : 1;
    }
    return units;
  };
  const size_t units = utf16_units(text, text.size() * 2);
  if (utf16_units(s.substr(block->current_position), units) < units) return 1;
  const auto lower = [](uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 0x20 : c; };
  size_t x = block->current_position;
  size_t j = ov[2 * group];
  size_t compares = units;
  for (size_t index = 0; index < compares; ++index) {
    if (x >= s.size() || j >= s.size()) return PCRE2_ERROR_CALLOUT;
    const std::optional<uint32_t> c1 = DecodeUtf8(s, &x);
    const std::optional<uint32_t> c2 = DecodeUtf8(s, &j);
    if (!c1 || !c2) return PCRE2_ERROR_CALLOUT;
    if (*c1 != *c2 &&
        (unicode_case ? UnicodeCase::Fold(*c1, java) != UnicodeCase::Fold(*c2, java) : lower(*c1) != lower(*c2))) {
      return 1;
    }
    if (java == Jdk::k25 && *c1 > 0xFFFF) --compares;
  }
  // Java goes on `units` UTF-16 units after the current position. Never inside a character: each compared pair is
  // of one length, as no case mapping crosses the BMP's end, so the value's characters cover the group's units.
  size_t end = block->current_position;
  for (size_t covered = 0; covered < units;) {
    const std::optional<uint32_t> c = DecodeUtf8(s, &end);
    if (!c) return PCRE2_ERROR_CALLOUT;
    covered += *c > 0xFFFF ? 2 : 1;
    if (covered > units) return PCRE2_ERROR_CALLOUT;
  }
  state->reference_end = end;
  return 0;
}

// Every callout a translated pattern has, checked as `data` (a CalloutState) reads it: a string one is a back
// reference under (?i) (JavaBackReference, "u" and its group under (?iu), then "e" where it ends); 1 and 2 are \b
// and \B, 3 and 4 the same under U: Java's Bound.check at the current position, the region being the whole value
// (matches() and replaceFirst() on a fresh Matcher). 0 goes on, 1 fails here.
int JavaCallout(pcre2_callout_block* block, void* data) {
  auto* state = static_cast<CalloutState*>(data);
  const Jdk java = state->java;
  const std::string_view s(reinterpret_cast<const char*>(block->subject), block->subject_length);
  if (block->callout_string != nullptr) {
    const char first = static_cast<char>(block->callout_string[0]);
    if (first == 'e') return block->current_position == state->reference_end ? 0 : 1;
    return JavaBackReference(block, s, /*unicode_case=*/first == 'u', state);
  }
  const bool unicode_word = block->callout_number >= 3;  // \b and \B under U
  const size_t i = block->current_position;
  bool left = false;
  bool right = false;
  if (i > 0) {
    const size_t begin = CharacterBefore(s, i);
    const std::optional<uint32_t> c = CodePointAt(s, begin);
    left = c && CountsAsWord(s, begin, *c, /*left=*/true, java, unicode_word);
  }
  if (i < s.size()) {
    const std::optional<uint32_t> c = CodePointAt(s, i);
    right = c && CountsAsWord(s, i, *c, /*left=*/false, java, unicode_word);
  }
  const bool boundary = left != right;
  return boundary == (block->callout_number % 2 == 1) ? 0 : 1;
}

constexpr char kJavaThrows[] =
    "makes Java's matcher throw (a back reference under (?i) to text beyond the BMP reads past the value's end)";

std::string MatchError(int rc) {
  std::array<PCRE2_UCHAR, 256> message{};
  pcre2_get_error_message(rc, message.data(), message.size());
  return Cat("could not be matched (", reinterpret_cast<char*>(message.data()), ")");
}

// Java's matches() then replaceFirst() under one match context. kAborted: Java's matcher throws (a callout said so).
absl::StatusOr<std::string> RouteOnce(const pcre2_code* code, pcre2_match_context* context,
                                      const std::vector<ReplacementPiece>& pieces, std::string_view value) {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(value.data());
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  // Matcher.matches(): the whole value.
  int rc = pcre2_match(code, subject, value.size(), 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, data.get(), context);
  if (rc == PCRE2_ERROR_NOMATCH) return std::string(value);
  if (rc == PCRE2_ERROR_CALLOUT) return absl::AbortedError(kJavaThrows);
  if (rc < 0) return absl::InvalidArgumentError(MatchError(rc));
  // replaceFirst(): the first match a search finds.
  rc = pcre2_match(code, subject, value.size(), 0, PCRE2_NO_UTF_CHECK, data.get(), context);
  if (rc == PCRE2_ERROR_CALLOUT) return absl::AbortedError(kJavaThrows);
  if (rc < 0) return absl::InvalidArgumentError(MatchError(rc));
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
  const uint32_t pairs = pcre2_get_ovector_count(data.get());
  std::string out(value.substr(0, ov[0]));
  for (const ReplacementPiece& piece : pieces) {
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

// A copy of `base` whose callouts check as `state`'s JDK reads (`state` must outlive it).
std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> JdkContext(const pcre2_match_context* base,
                                                                                     CalloutState* state) {
  std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> context(
      pcre2_match_context_copy(const_cast<pcre2_match_context*>(base)), &pcre2_match_context_free);
  if (context != nullptr) pcre2_set_callout(context.get(), &JavaCallout, state);
  return context;
}

}  // namespace

struct RouteRegex::Code {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  bool callouts = false;  // \b, \B or a back reference under (?i): matched as Java 17 and as Java 25 read them
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

std::string JavaChangeCase(std::string_view text, bool upper) {
  if (IsAscii(text)) {
    std::string ascii(text);
    upper ? absl::AsciiStrToUpper(&ascii) : absl::AsciiStrToLower(&ascii);
    return ascii;
  }
  UErrorCode error = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &error);
  if (error != U_BUFFER_OVERFLOW_ERROR) return std::string(text);  // not UTF-8: no name
  std::u16string utf16(static_cast<size_t>(length), u'\0');
  error = U_ZERO_ERROR;
  u_strFromUTF8(utf16.data(), length, nullptr, text.data(), static_cast<int32_t>(text.size()), &error);
  // The root locale's full mappings: one character may become several (ß is SS).
  std::u16string changed(utf16.size() * 3 + 1, u'\0');
  error = U_ZERO_ERROR;
  const int32_t changed_length =
      (upper ? u_strToUpper : u_strToLower)(changed.data(), static_cast<int32_t>(changed.size()), utf16.data(),
                                            length, "", &error);
  if (U_FAILURE(error)) return std::string(text);
  std::string out(static_cast<size_t>(changed_length) * 3, '\0');
  int32_t out_length = 0;
  error = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_length, changed.data(), changed_length, &error);
  if (U_FAILURE(error)) return std::string(text);
  out.resize(static_cast<size_t>(out_length));
  return out;
}

uint32_t JavaCharacterCase(uint32_t c, bool upper, int java_version) {
  const Jdk java = java_version >= 25 ? Jdk::k25 : Jdk::k17;
  return upper ? UnicodeCase::Upper(c, java) : UnicodeCase::Lower(c, java);
}

std::optional<std::string> JavaCharacterName(uint32_t c) {
  CharacterName named = NameOf(c);
  if (named.name.empty() || named.newer) return std::nullopt;
  return std::move(named.name);
}

absl::StatusOr<uint32_t> JavaCodePointOf(std::string_view name) {
  // Java trims the name (characters up to U+0020) and upper-cases it by Unicode's full mappings (JavaChangeCase),
  // where ı, ſ, ß and the ligatures become ASCII; a name that stays beyond ASCII is no character's.
  while (!name.empty() && static_cast<unsigned char>(name.front()) <= 0x20) name.remove_prefix(1);
  while (!name.empty() && static_cast<unsigned char>(name.back()) <= 0x20) name.remove_suffix(1);
  const std::string upper = JavaChangeCase(name, /*upper=*/true);
  if (!IsAscii(upper)) return absl::InvalidArgumentError("an unknown character name");
  // The code point `c` if its name is `upper`; kUnimplemented if it would be but for Java 17's Unicode version.
  const auto named = [&](uint32_t c) -> std::optional<absl::StatusOr<uint32_t>> {
    const CharacterName of = NameOf(c);
    if (of.name.empty() || of.name != upper) return std::nullopt;
    if (of.newer) return absl::UnimplementedError("a character Java 17 does not know");
    return c;
  };
  // The names of Java's table: the controls', and Unicode's (ICU finds those, and names by rule, which `named`
  // turns away).
  for (uint32_t i = 0; i < kJavaControlNames.size(); ++i) {
    if (!upper.empty() && kJavaControlNames[i] == upper) return i <= 0x1F ? i : i - 0x20 + 0x7F;
  }
  UErrorCode error = U_ZERO_ERROR;
  const UChar32 found = u_charFromName(U_UNICODE_CHAR_NAME, upper.c_str(), &error);
  if (U_SUCCESS(error) && found >= 0) {
    if (auto c = named(static_cast<uint32_t>(found))) return *std::move(c);
  }
  // Else the form for a character without a name of its own: a block and the code point after the last space.
  if (const size_t space = upper.rfind(' '); space != std::string::npos) {
    const std::string_view hex = std::string_view(upper).substr(space + 1);
    if (!hex.empty() && hex.size() <= 6 && std::all_of(hex.begin(), hex.end(), IsHexDigit)) {
      if (auto c = named(HexValue(hex))) return *std::move(c);
    }
  }
  return absl::InvalidArgumentError("an unknown character name");
}

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
  const std::string unquoted = RemoveQuoting(java_pattern);
  Translator t(unquoted, ignore_case);
  if (absl::Status st = t.Run(); !st.ok()) return st;
  if (ignore_case && t.callouts()) {
    return absl::InvalidArgumentError(
        "uses \\b, \\B or a back reference, which Java 17 and Java 25 read differently beyond ASCII");
  }
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto code = std::make_shared<Code>();
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(t.pattern().data()), t.pattern().size(),
                             PCRE2_UTF | (t.callouts() ? kWalkEveryPath : kNoOptimizations), &error, &offset, nullptr);
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
  code->callouts = t.callouts();
  RouteRegex regex;
  regex.code_ = std::move(code);
  regex.groups_ = t.groups();
  regex.kept_apart_ = t.kept_apart();
  regex.names_ = t.names();
  regex.pieces_ = {ReplacementPiece{.is_group = true, .literal = "", .group = 0}};  // replaceFirst("$0")
  return regex;
}

absl::Status RouteRegex::SetReplacement(std::string_view java_replacement) {
  absl::StatusOr<std::vector<ReplacementPiece>> pieces = ParseJavaReplacement(java_replacement, groups_, names_);
  if (!pieces.ok()) return pieces.status();
  for (const ReplacementPiece& piece : *pieces) {
    if (piece.is_group && kept_apart_.contains(piece.group)) {
      return absl::UnimplementedError(Cat("refers to group ", piece.group, ", which is refused here (", kKeptApart,
                                          ")"));
    }
  }
  pieces_ = *std::move(pieces);
  return absl::OkStatus();
}

bool RouteRegex::Matches(std::string_view value) const {
  if (code_ == nullptr) return false;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  const auto matches = [&](pcre2_match_context* context) {
    return pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(value.data()), value.size(), 0,
                       PCRE2_ANCHORED | PCRE2_ENDANCHORED, data.get(), context) >= 0;
  };
  if (!code_->callouts) return matches(code_->context);
  CalloutState java17{.java = Jdk::k17}, java25{.java = Jdk::k25};
  const auto old_java = JdkContext(code_->context, &java17);
  const auto new_java = JdkContext(code_->context, &java25);
  return old_java != nullptr && new_java != nullptr && matches(old_java.get()) && matches(new_java.get());
}

absl::StatusOr<std::string> RouteRegex::Route(std::string_view value) const {
  if (code_ == nullptr) return absl::FailedPreconditionError("no pattern");
  if (!code_->callouts) return RouteOnce(code_->code, code_->context, pieces_, value);
  CalloutState java17{.java = Jdk::k17}, java25{.java = Jdk::k25};
  const auto context17 = JdkContext(code_->context, &java17);
  const auto context25 = JdkContext(code_->context, &java25);
  if (context17 == nullptr || context25 == nullptr) return absl::ResourceExhaustedError("no memory for a match");
  absl::StatusOr<std::string> old_java = RouteOnce(code_->code, context17.get(), pieces_, value);
  absl::StatusOr<std::string> new_java = RouteOnce(code_->code, context25.get(), pieces_, value);
  const auto throws = [](const absl::StatusOr<std::string>& route) { return absl::IsAborted(route.status()); };
  if ((!old_java.ok() && !throws(old_java)) || (!new_java.ok() && !throws(new_java))) {
    return !old_java.ok() ? old_java.status() : new_java.status();
  }
  if (old_java.ok() && new_java.ok() && *old_java == *new_java) return old_java;
  if (!old_java.ok() && !new_java.ok()) return absl::InvalidArgumentError(kJavaThrows);  // both throw
  const auto says = [&](const absl::StatusOr<std::string>& route) {
    return route.ok() ? Cat("routes it to \"", *route, "\"") : std::string("throws on it");
  };
  return absl::InvalidArgumentError(Cat("Java 17 ", says(old_java), " and Java 25 ", says(new_java),
                                        " (their \\b, and their back references under (?i), read characters beyond "
                                        "ASCII differently)"));
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
