// Header values as Debezium writes them (see connect_header.h).
#include "outbox/connect_header.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <regex>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/strings.h"
#include "outbox/mapper.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

// PostgreSQL's built-in type OIDs the forms below cover.
namespace type = ::outbox::pg::oid;

// The element type of an array type ConnectColumnOf takes, or 0.
uint32_t ArrayElementType(uint32_t array_type) {
  switch (array_type) {
    case type::kBoolArray: return type::kBool;
    case type::kInt2Array: return type::kInt2;
    case type::kInt4Array: return type::kInt4;
    case type::kInt8Array: return type::kInt8;
    case type::kOidArray: return type::kOid;
    case type::kTextArray: return type::kText;
    case type::kBpcharArray: return type::kBpchar;
    case type::kVarcharArray: return type::kVarchar;
    case type::kFloat4Array: return type::kFloat4;
    case type::kFloat8Array: return type::kFloat8;
    case type::kUuidArray: return type::kUuid;
    case type::kJsonArray: return type::kJson;
    case type::kJsonbArray: return type::kJsonb;
    case type::kInetArray: return type::kInet;
    case type::kCidrArray: return type::kCidr;
    case type::kMacaddrArray: return type::kMacaddr;
    case type::kMacaddr8Array: return type::kMacaddr8;
    case type::kByteaArray: return type::kBytea;
    case type::kDateArray: return type::kDate;
    case type::kTimeArray: return type::kTime;
    case type::kTimestampArray: return type::kTimestamp;
    case type::kTimestampTzArray: return type::kTimestampTz;
    case type::kTimeTzArray: return type::kTimeTz;
    case type::kNumericArray: return type::kNumeric;
    case type::kInt4RangeArray: return type::kInt4Range;
    case type::kNumRangeArray: return type::kNumRange;
    case type::kTsRangeArray: return type::kTsRange;
    case type::kTsTzRangeArray: return type::kTsTzRange;
    case type::kDateRangeArray: return type::kDateRange;
    case type::kInt8RangeArray: return type::kInt8Range;
    case type::kCharArray: return type::kChar;
    case type::kTsvectorArray: return type::kTsvector;
    default: return 0;
  }
}

// The column an array's elements have.
ConnectColumn ElementColumn(const ConnectColumn& array) {
  ConnectColumn element;
  element.form = array.element;
  element.fraction_digits = array.fraction_digits;  // the array's modifier is its elements'
  element.allowed = array.allowed;                  // an enum's labels
  element.logical_name = array.logical_name;        // an extension type's (kArray keeps its elements')
  element.money_digits = array.money_digits;
  element.binary = array.binary;  // bytea[] under binary.handling.mode
  element.text_bytes = array.text_bytes;
  element.java_doubles = array.java_doubles;
  element.in_array = true;
  return element;
}

// The character between an array's elements in PostgreSQL's text of it (the element type's typdelim, which pgjdbc's
// array parser reads too): the column's when its form names it (a box[]'s ';', a user-defined type's from the
// catalog), ':' for PostGIS's geometry and geography, ',' for the others.
char ArrayDelimiter(const ConnectColumn& array) {
  if (array.delimiter != 0) return array.delimiter;
  return array.element == ConnectForm::kGeometry ? ':' : ',';
}

// Whether Values.convertToString quotes an element of the form (a Java String inside a list).
bool QuotedInList(const ConnectColumn& array) {
  switch (array.element) {
    case ConnectForm::kText: return !IsIntegerType(array.element_type);
    case ConnectForm::kEnum:
    case ConnectForm::kZonedTimestamp:
    case ConnectForm::kZonedTime:
    case ConnectForm::kHstore:  // io.debezium.data.Json, a string
    case ConnectForm::kBytes:
    case ConnectForm::kDecimalString:  // the modes' strings
    case ConnectForm::kBinaryString:
    case ConnectForm::kIsoDate:
    case ConnectForm::kIsoTime:
    case ConnectForm::kIsoTimestamp: return true;
    default: return false;
  }
}

// Whether an array's elements are required in Debezium's schema of it: an enum's (SchemaBuilder.array(Enum.builder(
// ...)), unlike the optional elements of the other arrays.
bool RequiredElements(const ConnectColumn& array) {
  return array.element == ConnectForm::kEnum || array.required_elements;
}

constexpr std::string_view kLtreeName = "io.debezium.data.Ltree";
constexpr std::string_view kTsvectorName = "io.debezium.data.Tsvector";

// Whether microseconds since the epoch overflow a long of nanoseconds (past 2262-04-11), as Debezium's
// Conversions.toEpochNanos does (Math.multiplyExact).
bool BeyondLongOfNanos(int64_t micros) {
  constexpr int64_t kMaxMicros = std::numeric_limits<int64_t>::max() / 1000;
  return micros > kMaxMicros || micros < -kMaxMicros;
}

// Why Debezium's value of `array` cannot hold a NULL element, or "" when it can: Kafka Connect's validation refuses
// one in an enum's array or an isbn[] (required elements), and Debezium's converter of an ltree[] (convertLtreeArray,
// each element's toString) fails on one.
std::string_view NullElementRefusal(const ConnectColumn& array) {
  if (RequiredElements(array)) {
    return "a NULL element, which Debezium's schema of it (an array of required strings) does not allow";
  }
  if (array.element == ConnectForm::kText && array.logical_name == kLtreeName) {
    return "a NULL element, on which Debezium's converter of an ltree[] fails (it calls each element's toString)";
  }
  return "";
}

// Whether Debezium's element converter gives null for an inner array of a multi-dimensional `array` (pgjdbc reads
// {{1,2},{3,4}} as an Object[] of Integer[], and each Integer[] reaches the element type's converter): the numbers,
// booleans, dates, times, timestamps, timestamptz, timetz and bytea, under every mode, whose converters know no Java
// array and so give null for an optional element (JdbcValueConverters.handleUnknownData; each seen side by side). The
// strings print the Java array's identity hash code ("[Ljava.lang.String;@1b6d3586"), which no other program
// reproduces.
bool InnerArraysAreNull(const ConnectColumn& array) {
  if (array.text_bytes) return false;  // not seen side by side: refused
  switch (array.element) {
    case ConnectForm::kText: return IsIntegerType(array.element_type);
    case ConnectForm::kBoolean:
    case ConnectForm::kFloat32:
    case ConnectForm::kFloat64:
    case ConnectForm::kDecimal:
    case ConnectForm::kVariableDecimal:
    case ConnectForm::kDecimalString:
    case ConnectForm::kDate:
    case ConnectForm::kTimeMillis:
    case ConnectForm::kTimeMicros:
    case ConnectForm::kTimeNanos:
    case ConnectForm::kTimestampMillis:
    case ConnectForm::kTimestampMicros:
    case ConnectForm::kTimestampNanos:
    case ConnectForm::kZonedTimestamp:
    case ConnectForm::kZonedTime:
    case ConnectForm::kBytes:
    case ConnectForm::kBinaryString:
    case ConnectForm::kIsoDate:
    case ConnectForm::kIsoTime:
    case ConnectForm::kIsoTimestamp:
    case ConnectForm::kConnectDate:
    case ConnectForm::kConnectTime:
    case ConnectForm::kConnectTimestamp: return true;
    default: return false;
  }
}

// Appends `array`'s `text` as [e1<separator>e2...]: null for a NULL element (or the error NullElementRefusal gives),
// `append_element(e)` for the others; a multi-dimensional array whose inner arrays Debezium writes as nulls as one
// null per inner array.
template <typename AppendElement>
absl::Status AppendList(const ConnectColumn& array, std::string_view text, std::string_view separator,
                        AppendElement append_element, std::string* out) {
  if (const std::optional<size_t> inner = MultiDimensionalLength(text, ArrayDelimiter(array));
      inner && InnerArraysAreNull(array)) {
    out->push_back('[');
    for (size_t i = 0; i < *inner; ++i) out->append(i > 0 ? separator : "").append("null");
    out->push_back(']');
    return absl::OkStatus();
  }
  auto elements = ParsePgArray(text, ArrayDelimiter(array));
  if (!elements.ok()) return elements.status();
  out->push_back('[');
  for (size_t i = 0; i < elements->size(); ++i) {
    if (i > 0) out->append(separator);
    const std::optional<std::string>& e = (*elements)[i];
    if (!e) {
      if (const std::string_view refusal = NullElementRefusal(array); !refusal.empty()) {
        return absl::InvalidArgumentError(Cat("array \"", text, "\": ", refusal));
      }
      out->append("null");
    } else if (absl::Status st = append_element(*e); !st.ok()) {
      return st;
    }
  }
  out->push_back(']');
  return absl::OkStatus();
}

// Whether Double.toString's text is NaN or an infinity (Jackson writes these as strings: WRITE_NAN_AS_STRINGS).
bool IsJavaNonFinite(std::string_view text) { return text == "NaN" || text == "Infinity" || text == "-Infinity"; }

// A point as Debezium's Point.createValue gives it: PostgreSQL's text "(x,y)" read as pgjdbc's PGpoint reads it (each
// coordinate by Double.parseDouble; PostgreSQL prints them exactly, as extra_float_digits is above 0 in both
// sessions), and its well-known binary: the byte order (1, little-endian), the type (1, a point) as a little-endian
// int32, then x and y as little-endian doubles (ByteBuffer.putDouble: the raw bits, Java's one NaN).
struct PointValue {
  std::string x, y;  // Double.toString of each
  std::string wkb;   // base64
};

std::optional<PointValue> ParsePoint(std::string_view text) {
  if (text.size() < 5 || text.front() != '(' || text.back() != ')') return std::nullopt;
  const std::string_view body = text.substr(1, text.size() - 2);
  const size_t comma = body.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::string wkb = {'\x01', '\x01', '\0', '\0', '\0'};
  PointValue point;
  for (const auto& [coordinate, out] : {std::pair{body.substr(0, comma), &point.x}, {body.substr(comma + 1), &point.y}}) {
    double value = 0;
    const auto [end, ec] = std::from_chars(coordinate.data(), coordinate.data() + coordinate.size(), value);
    if (ec != std::errc() || end != coordinate.data() + coordinate.size()) return std::nullopt;
    if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
    absl::StatusOr<std::string> java = JavaDoubleText(coordinate, /*is_float=*/false);
    if (!java.ok()) return std::nullopt;
    *out = *std::move(java);
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    for (int byte = 0; byte < 8; ++byte) wkb.push_back(static_cast<char>((bits >> (8 * byte)) & 0xFF));
  }
  point.wkb = absl::Base64Escape(wkb);
  return point;
}

// Appends Values.convertToString of Debezium's Point struct (json = false; each field's value "embedded": the base64
// quoted, Double.toString, null) or JsonConverter's JSON of it (json = true: NaN and the infinities as strings).
absl::Status AppendPoint(std::string_view text, bool json, std::string* out) {
  const std::optional<PointValue> point = ParsePoint(text);
  if (!point) return absl::InvalidArgumentError(Cat("unparsable point \"", text, "\""));
  const auto coordinate = [&](const std::string& value) {
    if (json && IsJavaNonFinite(value)) {
      AppendJsonString(value, out);
    } else {
      out->append(value);
    }
  };
  out->append(R"({"x":)");
  coordinate(point->x);
  out->append(R"(,"y":)");
  coordinate(point->y);
  out->append(R"(,"wkb":")").append(point->wkb).append(R"(","srid":null})");
  return absl::OkStatus();
}

// Appends Debezium's Geometry or Geography struct of a PostGIS value (PostgisGeometry.fromHexEwkb): wkb is the EWKB
// PostGIS prints in hex, kept whole (its SRID too); srid is the SRID the EWKB carries (the type word's 0x20000000
// flag, then a 4-byte int in the EWKB's byte order), or null. SimpleHeaderConverter and JsonConverter write it
// alike: {"wkb":"<base64>","srid":4326}.
absl::Status AppendGeometry(std::string_view text, std::string* out) {
  absl::StatusOr<std::string> ewkb = DecodeHex(text);
  if (!ewkb.ok() || ewkb->size() < 9) {  // Debezium's parseSrid: "Invalid EWKB length" below 9 bytes
    return absl::InvalidArgumentError(Cat("unreadable PostGIS value \"", text.substr(0, 64), "\": ",
                                          ewkb.ok() ? "shorter than 9 bytes" : ewkb.status().message(),
                                          " (PostGIS prints a geometry as the hex of its extended well-known binary)"));
  }
  const bool little_endian = (*ewkb)[0] != 0;
  const auto word = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) {
      const uint32_t byte = static_cast<unsigned char>((*ewkb)[at + i]);
      v |= little_endian ? byte << (8 * i) : byte << (8 * (3 - i));
    }
    return v;
  };
  constexpr uint32_t kEwkbSrid = 0x20000000;
  out->append(R"({"wkb":")").append(absl::Base64Escape(*ewkb)).append(R"(","srid":)");
  if ((word(1) & kEwkbSrid) != 0) {
    out->append(absl::StrCat(static_cast<int32_t>(word(5))));
  } else {
    out->append("null");
  }
  out->push_back('}');
  return absl::OkStatus();
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The date of a day count (Howard Hinnant's civil_from_days).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool ReadDigits(std::string_view s, size_t& pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

// "HH:MM:SS[.ffffff]" from `pos`: microseconds past midnight (a time column may hold 24:00:00, the end of the day;
// a timestamp never does).
bool ReadTime(std::string_view s, size_t& pos, int64_t* micros_out, int64_t max_hour = 23) {
  int64_t hour, minute, second;
  if (!ReadDigits(s, pos, 2, &hour) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, &minute) ||
      !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, &second)) {
    return false;
  }
  if (hour > max_hour || minute > 59 || second > 60) return false;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    for (int d = digits; d < 6; ++d) micros *= 10;
  }
  *micros_out = ((hour * 60 + minute) * 60 + second) * 1000000 + micros;
  return true;
}

// "YYYY-MM-DD" from `pos`: days since the epoch.
bool ReadDate(std::string_view s, size_t& pos, int64_t* days) {
  int64_t year, month, day;
  if (!ReadDigits(s, pos, 4, &year) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, &month) ||
      !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, &day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  *days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return true;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The decimal's sign, its digits without leading zeros ("0" for zero) and its scale (digits after the point).
struct Decimal {
  bool negative = false;
  std::string digits;
  int scale = 0;
};

std::optional<Decimal> ParseDecimal(std::string_view text) {
  Decimal d;
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) d.negative = text[pos++] == '-';
  bool point = false, any = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      any = true;
      if (point) ++d.scale;
      if (!(d.digits.empty() && c == '0')) d.digits.push_back(c);
    } else {
      return std::nullopt;  // NaN, Infinity, exponents: numeric's output has none but NaN and Infinity
    }
  }
  if (!any) return std::nullopt;
  if (d.digits.empty()) {
    d.digits = "0";
    d.negative = false;
  }
  return d;
}

// java.math.BigInteger.toByteArray of the decimal's unscaled value: big-endian two's complement, minimal.
std::string TwosComplementBytes(const Decimal& d) {
  // The magnitude in base 256, by repeated division of the decimal digits.
  std::vector<int> digits;
  for (char c : d.digits) digits.push_back(c - '0');
  std::string magnitude;  // little-endian
  while (!(digits.size() == 1 && digits[0] == 0) && !digits.empty()) {
    std::vector<int> quotient;
    int rest = 0;
    for (int digit : digits) {
      rest = rest * 10 + digit;
      if (!quotient.empty() || rest / 256 != 0) quotient.push_back(rest / 256);
      rest %= 256;
    }
    magnitude.push_back(static_cast<char>(rest));
    digits = quotient.empty() ? std::vector<int>{0} : quotient;
  }
  if (!d.negative || magnitude.empty()) {
    if (magnitude.empty() || (static_cast<unsigned char>(magnitude.back()) & 0x80) != 0) magnitude.push_back('\0');
    return std::string(magnitude.rbegin(), magnitude.rend());
  }
  // Negative: 2^(8n) - magnitude over n bytes, with a 0xFF in front when its top bit is clear.
  std::string out = magnitude;
  int carry = 1;
  for (char& c : out) {
    const int v = (~static_cast<unsigned char>(c) & 0xFF) + carry;
    c = static_cast<char>(v & 0xFF);
    carry = v >> 8;
  }
  if ((static_cast<unsigned char>(out.back()) & 0x80) == 0) out.push_back(static_cast<char>(0xFF));
  return std::string(out.rbegin(), out.rend());
}

absl::Status Unreadable(std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(Cat(what, " \"", text, "\" has no Debezium header value the relay reproduces"));
}

void AppendTwoDigits(std::string* out, int64_t v) {
  out->push_back(static_cast<char>('0' + v / 10));
  out->push_back(static_cast<char>('0' + v % 10));
}

absl::StatusOr<int64_t> ConnectMillis(const ConnectColumn& column, std::string_view text);  // below
std::optional<int64_t> InfinityNumber(const ConnectColumn& column, std::string_view text);  // below

// Values.append of a String in a list or map ("embedded"): quoted, with backslash and quote escaped (Values.escape).
void AppendValuesString(std::string_view text, std::string* out) {
  out->push_back('"');
  out->append(absl::StrReplaceAll(ToAbsl(text), {{"\\", "\\\\"}, {"\"", "\\\""}}));
  out->push_back('"');
}

}  // namespace

bool DebeziumConversionFails(const ConnectColumn& column, std::string_view text) {
  if (column.form == ConnectForm::kArray && !NullElementRefusal(column).empty()) {
    auto elements = ParsePgArray(text, ArrayDelimiter(column));
    return elements.ok() && std::any_of(elements->begin(), elements->end(),
                                        [](const std::optional<std::string>& e) { return !e.has_value(); });
  }
  return false;
}

bool DebeziumConvertsToNull(const ConnectColumn& column, std::string_view text) {
  if (column.form == ConnectForm::kTimestampNanos) {
    absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, /*with_zone=*/false);
    return micros.ok() && BeyondLongOfNanos(*micros);
  }
  return false;
}

bool IsIntegerType(uint32_t type_oid) {
  return type_oid == type::kInt2 || type_oid == type::kInt4 || type_oid == type::kInt8 || type_oid == type::kOid;
}

// The logical names of Debezium's PostGIS structs (io.debezium.data.geometry.Geometry / Geography.LOGICAL_NAME).
constexpr std::string_view kGeometryName = "io.debezium.data.geometry.Geometry";
constexpr std::string_view kGeographyName = "io.debezium.data.geometry.Geography";
// pgvector's vector and halfvec (io.debezium.data.DoubleVector / FloatVector.LOGICAL_NAME).
constexpr std::string_view kDoubleVectorName = "io.debezium.data.DoubleVector";
constexpr std::string_view kFloatVectorName = "io.debezium.data.FloatVector";

std::optional<ConnectColumn> ExtensionColumn(std::string_view type_name) {
  if (type_name == "vector" || type_name == "halfvec") {
    ConnectColumn column{ConnectForm::kVector};
    column.logical_name = std::string(type_name == "vector" ? kDoubleVectorName : kFloatVectorName);
    return column;
  }
  if (type_name == "sparsevec") return ConnectColumn{ConnectForm::kSparseVector};
  // An array of one of them: PostgreSQL names an array type '_' and its element type's name. Debezium's TypeRegistry
  // finds _citext, _ltree, _hstore, _geometry and _geography by these names. An isbn[] is a list of the elements'
  // text whose schema makes them required strings (seen side by side: a NULL element fails it).
  if (type_name == "_isbn") {
    ConnectColumn array{ConnectForm::kArray};
    array.required_elements = true;
    return array;
  }
  // pgvector's arrays: lists of required vectors (a vector[] of DoubleVectors, a halfvec[] of FloatVectors); a
  // sparsevec[] has the schema of a list of required SparseDoubleVectors, but its value is always null (seen side by
  // side).
  if (type_name == "_citext" || type_name == "_ltree" || type_name == "_hstore" || type_name == "_geometry" ||
      type_name == "_geography" || type_name == "_vector" || type_name == "_halfvec" || type_name == "_sparsevec") {
    std::optional<ConnectColumn> element = ExtensionColumn(type_name.substr(1));
    ConnectColumn array;
    array.form = ConnectForm::kArray;
    array.element = element->form;
    array.logical_name = std::move(element->logical_name);
    array.required_elements = element->form == ConnectForm::kVector || element->form == ConnectForm::kSparseVector;
    if (type_name == "_sparsevec") array.lost = ConnectColumn::Lost::kNull;
    return array;
  }
  if (type_name == "hstore") return ConnectColumn{ConnectForm::kHstore};
  if (type_name == "geometry" || type_name == "geography") {
    ConnectColumn column{ConnectForm::kGeometry};
    column.logical_name = std::string(type_name == "geometry" ? kGeometryName : kGeographyName);
    return column;
  }
  if (type_name != "citext" && type_name != "ltree" && type_name != "isbn") return std::nullopt;
  ConnectColumn column{ConnectForm::kText};
  if (type_name == "ltree") column.logical_name = std::string(kLtreeName);
  return column;
}

namespace {

// A built-in type Debezium's PostgresValueConverter has no schema for (its schemaBuilder's null): its columns are left
// out of Debezium's records.
struct LeftOutType {
  uint32_t element = 0;    // an array's element type; 0: not an array
  bool always = false;     // left out under include.unknown.datatypes=true too (else bytes of the text there)
  bool geometric = false;  // bytes of pgjdbc's text of it (Java's doubles)
};

const absl::flat_hash_map<uint32_t, LeftOutType>& LeftOutTypes() {
  constexpr LeftOutType kAlways = {0, true, false}, kScalar = {}, kGeometric = {0, false, true};
  auto array = [](uint32_t element) { return LeftOutType{element, false, false}; };
  auto geometric_array = [](uint32_t element) { return LeftOutType{element, false, true}; };
  static const auto* types = new absl::flat_hash_map<uint32_t, LeftOutType>{
      // money[], name[], interval[], varbit[], xml[], point[], refcursor[]
      {type::kMoneyArray, kAlways}, {type::kNameArray, kAlways}, {1187, kAlways}, {type::kVarbitArray, kAlways},
      {143, kAlways}, {type::kPointArray, kAlways}, {type::kRefCursorArray, kAlways},
      // lseg, path, box, polygon, line, circle, and their arrays
      {601, kGeometric}, {602, kGeometric}, {603, kGeometric}, {604, kGeometric}, {628, kGeometric},
      {718, kGeometric}, {1018, geometric_array(601)}, {1019, geometric_array(602)}, {1020, geometric_array(603)},
      {1027, geometric_array(604)}, {629, geometric_array(628)}, {719, geometric_array(718)},
      // tid, xid, cid, xid8, pg_lsn, txid_snapshot, pg_snapshot, tsquery, jsonpath, aclitem, and their arrays
      {27, kScalar}, {28, kScalar}, {29, kScalar}, {5069, kScalar}, {3220, kScalar}, {2970, kScalar},
      {5038, kScalar}, {3615, kScalar}, {4072, kScalar}, {1033, kScalar}, {1010, array(27)}, {1011, array(28)},
      {1012, array(29)}, {271, array(5069)}, {3221, array(3220)}, {2949, array(2970)}, {5039, array(5038)},
      {3645, array(3615)}, {4073, array(4072)}, {1034, array(1033)},
      // regproc, regprocedure, regoper, regoperator, regclass, regtype, regconfig, regdictionary, regnamespace,
      // regrole, regcollation, and their arrays
      {24, kScalar}, {2202, kScalar}, {2203, kScalar}, {2204, kScalar}, {2205, kScalar}, {2206, kScalar},
      {3734, kScalar}, {3769, kScalar}, {4089, kScalar}, {4096, kScalar}, {4191, kScalar}, {1008, array(24)},
      {2207, array(2202)}, {2208, array(2203)}, {2209, array(2204)}, {2210, array(2205)}, {2211, array(2206)},
      {3735, array(3734)}, {3770, array(3769)}, {4090, array(4089)}, {4097, array(4096)}, {4192, array(4191)},
      // the built-in multiranges, and their arrays
      {4451, kScalar}, {4532, kScalar}, {4533, kScalar}, {4534, kScalar}, {4535, kScalar}, {4536, kScalar},
      {6150, array(4451)}, {6151, array(4532)}, {6152, array(4533)}, {6153, array(4534)}, {6155, array(4535)},
      {6157, array(4536)}};
  return *types;
}

const LeftOutType* FindLeftOut(uint32_t type_oid) {
  const auto it = LeftOutTypes().find(type_oid);
  return it == LeftOutTypes().end() ? nullptr : &it->second;
}

}  // namespace

bool DebeziumLeavesOut(uint32_t type_oid, bool unknown_included) {
  const LeftOutType* t = FindLeftOut(type_oid);
  return t != nullptr && (t->always || !unknown_included);
}

// pgjdbc's text of a geometric value (PGbox, PGline, PGlseg, PGpath, PGpolygon and PGcircle's getValue): PostgreSQL's
// text, the same brackets and commas, with each coordinate as Java's Double.toString prints it.
absl::StatusOr<std::string> PgjdbcGeometricText(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = std::min(text.find_first_of("()[]{}<>,", i), text.size());
    if (end == i) {
      out.push_back(text[i++]);
      continue;
    }
    absl::StatusOr<std::string> java = JavaDoubleText(text.substr(i, end - i), /*is_float=*/false);
    if (!java.ok()) return Unreadable("geometric value", text.substr(0, 64));
    out.append(*java);
    i = end;
  }
  return out;
}

absl::StatusOr<std::string> BytesOf(const ConnectColumn& column, std::string_view text) {
  if (!column.text_bytes) return DecodeByteaHex(text);
  if (column.java_doubles) return PgjdbcGeometricText(text);
  return std::string(text);
}

std::optional<ConnectColumn> UnknownDatatypeColumn(uint32_t type_oid) {
  const LeftOutType* t = FindLeftOut(type_oid);
  if (t == nullptr || t->always) return std::nullopt;
  ConnectColumn column = TextBytesColumn(t->element, t->element == type::kBox ? ';' : 0);  // box's typdelim
  column.java_doubles = t->geometric;
  return column;
}

ConnectColumn TextBytesColumn(uint32_t element_type, char delimiter) {
  ConnectColumn column{ConnectForm::kBytes};
  column.text_bytes = true;
  if (element_type != 0) {
    column.form = ConnectForm::kArray;
    column.element = ConnectForm::kBytes;
    column.element_type = element_type;
    column.required_elements = true;
    column.delimiter = delimiter;
  }
  return column;
}

absl::StatusOr<ConnectColumn> ConnectColumnOf(uint32_t type_oid, int32_t type_modifier) {
  // time, timestamp and timestamptz keep their precision in the modifier (-1: none, which is 6).
  const int precision = type_modifier < 0 ? 6 : type_modifier;
  switch (type_oid) {
    case type::kBool:
      return ConnectColumn{ConnectForm::kBoolean};
    case type::kInt2:
    case type::kInt4:
    case type::kInt8:
    case type::kOid:
    case type::kText:
    case type::kVarchar:
    case type::kBpchar:
    case type::kName:
    case type::kUuid:
    case type::kJson:
    case type::kJsonb:
    case type::kXml:
    case type::kInet:
    case type::kCidr:
    case type::kMacaddr:
    case type::kMacaddr8:
    case type::kInt4Range:  // ranges: Debezium's string is PostgreSQL's text; tstzrange's in the session's time
    case type::kInt8Range:  // zone, which pgjdbc sets to the Connect JVM's and the relay to UTC: the same text when
    case type::kNumRange:   // Connect runs in UTC
    case type::kDateRange:
    case type::kTsRange:
    case type::kTsTzRange:
      return ConnectColumn{ConnectForm::kText};
    case type::kChar:  // "char": pgjdbc's CHAR, a string
      return ConnectColumn{ConnectForm::kText};
    case type::kTsvector: {  // PostgreSQL's text, as io.debezium.data.Tsvector
      ConnectColumn column{ConnectForm::kText};
      column.logical_name = std::string(kTsvectorName);
      return column;
    }
    case type::kInterval:
      return ConnectColumn{ConnectForm::kInterval};
    case type::kTimeTz:
      return ConnectColumn{ConnectForm::kZonedTime};
    case type::kFloat4:
      return ConnectColumn{ConnectForm::kFloat32};
    case type::kFloat8:
      return ConnectColumn{ConnectForm::kFloat64};
    case type::kNumeric:
      return ConnectColumn{type_modifier < 0 ? ConnectForm::kVariableDecimal : ConnectForm::kDecimal};
    case type::kDate:
      return ConnectColumn{ConnectForm::kDate};
    case type::kTime:
      return ConnectColumn{precision <= 3 ? ConnectForm::kTimeMillis : ConnectForm::kTimeMicros};
    case type::kTimestamp:
      return ConnectColumn{precision <= 3 ? ConnectForm::kTimestampMillis : ConnectForm::kTimestampMicros};
    case type::kTimestampTz:
      return ConnectColumn{ConnectForm::kZonedTimestamp, precision};
    case type::kBytea:
      return ConnectColumn{ConnectForm::kBytes};
    case type::kMoney:
      return ConnectColumn{ConnectForm::kMoney};
    case type::kPoint:
      return ConnectColumn{ConnectForm::kPoint};
    case type::kBit:
    case type::kVarbit:
    case type::kBitArray: {
      // Debezium's length: n for bit(n) and varbit(n), and for varbit without one JDBC's column size,
      // Integer.MAX_VALUE. A bit(n)[] has the schema of a bit(n) (PostgresValueConverter.schemaBuilder) and no
      // converter of its own: its value is always null.
      ConnectColumn bits;
      bits.bits = type_modifier < 0 ? 2147483647 : type_modifier;
      bits.form = bits.bits > 1 ? ConnectForm::kBits : ConnectForm::kBitBoolean;
      if (type_oid == type::kBitArray) bits.lost = ConnectColumn::Lost::kNull;
      return bits;
    }
    case type::kInt2Vector:
    case type::kOidVector: {
      // Debezium's schema is an array of required int16 or int64, and its value an empty array whatever the column
      // holds (seen side by side for '1 2' and '4 5').
      ConnectColumn vector{ConnectForm::kArray};
      vector.element = ConnectForm::kText;
      vector.element_type = type_oid == type::kInt2Vector ? type::kInt2 : type::kOid;
      vector.required_elements = true;
      vector.lost = ConnectColumn::Lost::kEmptyArray;
      return vector;
    }
    default:
      if (const uint32_t element = ArrayElementType(type_oid); element != 0) {
        // pgoutput gives an array column its elements' modifier: timestamp(3)[] has 3, numeric(10,2)[] (10,2).
        absl::StatusOr<ConnectColumn> of = ConnectColumnOf(element, type_modifier);
        if (!of.ok()) return of.status();
        ConnectColumn array;
        array.form = ConnectForm::kArray;
        array.element = of->form;
        array.element_type = element;
        array.fraction_digits = of->fraction_digits;
        // A tsvector[]'s elements are Debezium's Tsvector, a required string (seen side by side: a NULL element
        // fails it).
        array.logical_name = of->logical_name;
        array.required_elements = element == type::kTsvector;
        return array;
      }
      return absl::FailedPreconditionError(
          Cat("type OID ", type_oid,
              " has no Debezium header value the relay reproduces (it does booleans, integers, floats, numerics, "
              "text types, \"char\", uuid, json, jsonb, xml, network addresses, ranges, tsvector, date, time, timetz, "
              "timestamp, timestamptz, interval, bytea, money, bit, varbit, point, bit[], int2vector, oidvector, "
              "arrays of text types, \"char\", "
              "tsvector, integers, booleans, "
              "floats, numerics, uuid, json, jsonb, network addresses, ranges, date, time, timetz, timestamp, "
              "timestamptz and bytea, enums, domains, the extension types citext, ltree, isbn, hstore, PostGIS's "
              "geometry and geography and pgvector's vector, halfvec and sparsevec, and arrays of citext, ltree, "
              "hstore, geometry, geography, vector, halfvec and sparsevec)"));
  }
}

absl::Status AppendConnectJsonSchema(uint32_t type_oid, int32_t type_modifier, bool optional, std::string* out) {
  absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type_oid, type_modifier);
  if (!column.ok()) return absl::FailedPreconditionError(Cat("type OID ", type_oid, " has no schema the relay reproduces"));
  AppendConnectJsonSchema(*column, type_oid, type_modifier, optional, out);
  return absl::OkStatus();
}

void AppendConnectJsonSchema(const ConnectColumn& column, uint32_t type_oid, int32_t type_modifier, bool optional,
                             std::string* out, std::string_view more_parameters) {
  // Debezium's schema of the column (PostgresValueConverter under its default modes): the Connect type, and the name
  // of its logical type, version 1; a Decimal's scale and precision as parameters. The branches write the schema up
  // to its parameters; JsonConverter.asJsonSchema's order is type, (items, keys, values or fields), optional, name,
  // version, doc, parameters.
  std::string parameters;  // "k":"v" pairs, before more_parameters (a LinkedHashMap: the builder's first)
  const auto type_optional_named = [&](std::string_view connect_type, std::string_view name) {
    out->append(R"({"type":")").append(connect_type).append(R"(","optional":)");
    out->append(optional ? "true" : "false");
    if (!name.empty()) out->append(R"(,"name":")").append(name).append(R"(","version":1)");
  };
  const auto optional_named = [&](bool is_optional, std::string_view name, std::string_view doc) {
    out->append(R"(,"optional":)").append(is_optional ? "true" : "false");
    if (!name.empty()) out->append(R"(,"name":")").append(name).append(R"(","version":1)");
    if (!doc.empty()) out->append(R"(,"doc":")").append(doc).push_back('"');
  };
  switch (column.form) {
    case ConnectForm::kArray:
      out->append(R"({"type":"array","items":)");
      AppendConnectJsonSchema(ElementColumn(column), column.element_type, type_modifier,
                              /*optional=*/!RequiredElements(column), out);
      optional_named(optional, "", "");
      break;
    case ConnectForm::kText:
      switch (type_oid) {
        case type::kInt2: type_optional_named("int16", ""); break;
        case type::kInt4: type_optional_named("int32", ""); break;
        case type::kInt8:
        case type::kOid: type_optional_named("int64", ""); break;
        case type::kJson:
        case type::kJsonb: type_optional_named("string", "io.debezium.data.Json"); break;
        case type::kUuid: type_optional_named("string", "io.debezium.data.Uuid"); break;
        case type::kXml: type_optional_named("string", "io.debezium.data.Xml"); break;
        default: type_optional_named("string", column.logical_name);
      }
      break;
    case ConnectForm::kBoolean: type_optional_named("boolean", ""); break;
    case ConnectForm::kFloat32: type_optional_named("float", ""); break;
    case ConnectForm::kFloat64: type_optional_named("double", ""); break;
    case ConnectForm::kDecimal: {
      // numeric(p,s): the modifier is ((p << 16) | s) + 4, s an 11-bit signed number since PostgreSQL 13.
      const int32_t packed = type_modifier - 4;
      const int precision = (packed >> 16) & 0xffff;
      const int scale = ((packed & 0x7ff) ^ 0x400) - 0x400;
      type_optional_named("bytes", "org.apache.kafka.connect.data.Decimal");
      parameters = Cat(R"("scale":")", scale, R"(","connect.decimal.precision":")", precision, R"(")");
      break;
    }
    case ConnectForm::kBits:
      type_optional_named("bytes", "io.debezium.data.Bits");
      parameters = Cat(R"("length":")", column.bits, R"(")");
      break;
    case ConnectForm::kBitBoolean: type_optional_named("boolean", ""); break;
    case ConnectForm::kHstore: type_optional_named("string", "io.debezium.data.Json"); break;
    case ConnectForm::kHstoreMap:  // SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_STRING_SCHEMA)
      out->append(R"({"type":"map","keys":{"type":"string","optional":false},"values":{"type":"string",)"
                  R"("optional":true})");
      optional_named(optional, "", "");
      break;
    case ConnectForm::kDecimalString:
    case ConnectForm::kMoneyString: type_optional_named("string", ""); break;
    case ConnectForm::kMoneyDouble: type_optional_named("double", ""); break;
    case ConnectForm::kMoney:  // Decimal.builder(moneyFractionDigits): the scale alone
      type_optional_named("bytes", "org.apache.kafka.connect.data.Decimal");
      parameters = Cat(R"("scale":")", column.money_digits, R"(")");
      break;
    case ConnectForm::kPoint:  // Point.builder()
      out->append(R"({"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},)"
                  R"({"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},)"
                  R"({"type":"int32","optional":true,"field":"srid"}])");
      optional_named(optional, "io.debezium.data.geometry.Point", "Geometry (POINT)");
      break;
    case ConnectForm::kGeometry: {
      // Geometry.builder() is optional even for a NOT NULL column, Geography.builder() is not.
      const bool geometry = column.logical_name == kGeometryName;
      out->append(R"({"type":"struct","fields":[{"type":"bytes","optional":false,"field":"wkb"},)"
                  R"({"type":"int32","optional":true,"field":"srid"}])");
      optional_named(optional || geometry, column.logical_name, geometry ? "Geometry" : "Geography");
      break;
    }
    case ConnectForm::kVector:  // SchemaBuilder.array(Schema.FLOAT64_SCHEMA / FLOAT32_SCHEMA), named
      out->append(R"({"type":"array","items":{"type":")");
      out->append(column.logical_name == kFloatVectorName ? "float" : "double").append(R"(","optional":false})");
      optional_named(optional, column.logical_name, "");
      break;
    case ConnectForm::kSparseVector:
      out->append(R"({"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},)"
                  R"({"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double",)"
                  R"("optional":false},"optional":false,"field":"vector"}])");
      optional_named(optional, "io.debezium.data.SparseDoubleVector", "Sparse double vector");
      break;
    case ConnectForm::kVariableDecimal:
      out->append(R"({"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},)"
                  R"({"type":"bytes","optional":false,"field":"value"}])");
      optional_named(optional, "io.debezium.data.VariableScaleDecimal", "Variable scaled decimal");
      break;
    case ConnectForm::kDate: type_optional_named("int32", "io.debezium.time.Date"); break;
    case ConnectForm::kTimeMillis: type_optional_named("int32", "io.debezium.time.Time"); break;
    case ConnectForm::kTimeMicros: type_optional_named("int64", "io.debezium.time.MicroTime"); break;
    case ConnectForm::kTimestampMillis: type_optional_named("int64", "io.debezium.time.Timestamp"); break;
    case ConnectForm::kTimestampMicros: type_optional_named("int64", "io.debezium.time.MicroTimestamp"); break;
    case ConnectForm::kIsoDate: type_optional_named("string", "io.debezium.time.IsoDate"); break;
    case ConnectForm::kIsoTime: type_optional_named("string", "io.debezium.time.IsoTime"); break;
    case ConnectForm::kIsoTimestamp: type_optional_named("string", "io.debezium.time.IsoTimestamp"); break;
    case ConnectForm::kConnectDate: type_optional_named("int32", "org.apache.kafka.connect.data.Date"); break;
    case ConnectForm::kConnectTime: type_optional_named("int32", "org.apache.kafka.connect.data.Time"); break;
    case ConnectForm::kConnectTimestamp:
      type_optional_named("int64", "org.apache.kafka.connect.data.Timestamp");
      break;
    case ConnectForm::kTimeNanos: type_optional_named("int64", "io.debezium.time.NanoTime"); break;
    case ConnectForm::kTimestampNanos: type_optional_named("int64", "io.debezium.time.NanoTimestamp"); break;
    case ConnectForm::kZonedTimestamp: type_optional_named("string", "io.debezium.time.ZonedTimestamp"); break;
    case ConnectForm::kInterval: type_optional_named("int64", "io.debezium.time.MicroDuration"); break;
    case ConnectForm::kIntervalString: type_optional_named("string", "io.debezium.time.Interval"); break;
    case ConnectForm::kBinaryString: type_optional_named("string", ""); break;
    case ConnectForm::kZonedTime: type_optional_named("string", "io.debezium.time.ZonedTime"); break;
    case ConnectForm::kBytes: type_optional_named("bytes", ""); break;
    case ConnectForm::kEnum:
      type_optional_named("string", "io.debezium.data.Enum");
      parameters = R"("allowed":)";
      AppendJsonString(column.allowed, &parameters);
      break;
  }
  if (!more_parameters.empty()) {
    if (!parameters.empty()) parameters.push_back(',');
    parameters.append(more_parameters);
  }
  if (!parameters.empty()) out->append(R"(,"parameters":{)").append(parameters).push_back('}');
  out->push_back('}');
}

absl::Status AppendConnectJsonValue(const ConnectColumn& column, uint32_t type_oid, std::string_view text,
                                    std::string* out) {
  switch (column.form) {
    case ConnectForm::kEnum:
      AppendJsonString(text, out);
      return absl::OkStatus();
    case ConnectForm::kArray: {
      const ConnectColumn element = ElementColumn(column);
      return AppendList(
          column, text, ",",
          [&](const std::string& e) { return AppendConnectJsonValue(element, column.element_type, e, out); }, out);
    }
    case ConnectForm::kText:
      if (IsIntegerType(type_oid)) {
        out->append(text);  // a JSON number: PostgreSQL's text is Jackson's
      } else {
        AppendJsonString(text, out);
      }
      return absl::OkStatus();
    case ConnectForm::kMoney: {
      std::optional<std::string> money = DebeziumMoneyText(text, column.money_digits);
      if (!money) return Unreadable("money", text);
      return AppendConnectJsonValue(ConnectColumn{ConnectForm::kDecimal}, type::kNumeric, *money, out);
    }
    case ConnectForm::kDecimalString:
    case ConnectForm::kMoneyString:
    case ConnectForm::kIntervalString:
    case ConnectForm::kBinaryString:
    case ConnectForm::kIsoDate:
    case ConnectForm::kIsoTime:
    case ConnectForm::kIsoTimestamp: {
      std::string plain;
      if (absl::Status st = AppendConnectValue(column, text, &plain); !st.ok()) return st;
      AppendJsonString(plain, out);
      return absl::OkStatus();
    }
    case ConnectForm::kConnectDate:
    case ConnectForm::kConnectTime:
    case ConnectForm::kConnectTimestamp: {  // JsonConverter: days, or milliseconds
      absl::StatusOr<int64_t> millis = ConnectMillis(column, text);
      if (!millis.ok()) return millis.status();
      constexpr int64_t kDay = 86400000;
      out->append(std::to_string(column.form == ConnectForm::kConnectDate ? FloorDiv(*millis, kDay) : *millis));
      return absl::OkStatus();
    }
    case ConnectForm::kHstoreMap: {  // a JSON object (a map's keys are strings)
      absl::StatusOr<std::vector<HstorePair>> pairs = HstoreInHashMapOrder(text);
      if (!pairs.ok()) return pairs.status();
      AppendHstore(*pairs, HstoreText::kJsonConverter, out);
      return absl::OkStatus();
    }
    case ConnectForm::kPoint:
      return AppendPoint(text, /*json=*/true, out);
    case ConnectForm::kGeometry:
      return AppendGeometry(text, out);
    case ConnectForm::kVector:
    case ConnectForm::kSparseVector:
      return AppendVector(column, text, VectorText::kJson, out);
    case ConnectForm::kDecimal: {
      // JsonConverter's decimal.format=BASE64 (its default): the unscaled value's two's complement bytes.
      std::optional<Decimal> d = ParseDecimal(text);
      if (!d) return Unreadable("numeric", text);
      out->push_back('"');
      out->append(absl::Base64Escape(TwosComplementBytes(*d)));
      out->push_back('"');
      return absl::OkStatus();
    }
    default:
      break;
  }
  std::string converted;
  if (absl::Status st = AppendConnectValue(column, text, &converted); !st.ok()) return st;
  const bool non_finite = (column.form == ConnectForm::kFloat32 || column.form == ConnectForm::kFloat64 ||
                           column.form == ConnectForm::kMoneyDouble) &&
                          IsJavaNonFinite(converted);
  if (column.form == ConnectForm::kZonedTimestamp || column.form == ConnectForm::kZonedTime ||
      column.form == ConnectForm::kBytes || column.form == ConnectForm::kBits || column.form == ConnectForm::kHstore ||
      non_finite) {
    AppendJsonString(converted, out);  // Jackson writes NaN and the infinities as strings (WRITE_NAN_AS_STRINGS)
  } else {
    out->append(converted);  // booleans, numbers, and VariableScaleDecimal's struct, already JSON
  }
  return absl::OkStatus();
}

std::string JavaByteBufferText(size_t n) { return absl::StrCat("java.nio.HeapByteBuffer[pos=0 lim=", n, " cap=", n, "]"); }

absl::Status CheckJavaText(const ConnectColumn& column) {
  if (column.form == ConnectForm::kBytes && !column.text_bytes) return absl::OkStatus();  // a bytea's ByteBuffer
  const ConnectForm form = column.form == ConnectForm::kArray ? column.element : column.form;
  if (form == ConnectForm::kConnectDate || form == ConnectForm::kConnectTime ||
      form == ConnectForm::kConnectTimestamp) {
    return absl::FailedPreconditionError(
        "Java prints its value (a java.util.Date) with Date.toString in the Connect JVM's time zone, which the relay "
        "does not reproduce");
  }
  if (form == ConnectForm::kBytes || form == ConnectForm::kBits || form == ConnectForm::kVariableDecimal ||
      form == ConnectForm::kPoint || form == ConnectForm::kGeometry) {
    return absl::FailedPreconditionError(
        "Java prints its value (a byte array, or a struct holding one) with an identity hash code, which no other "
        "program can reproduce");
  }
  return absl::OkStatus();
}

namespace {

void AppendJacksonString(std::string_view text, bool escape_beyond_bmp, std::string* out);  // below

// Java's String.hashCode of UTF-8 text: over its UTF-16 code units, in int arithmetic.
int32_t JavaStringHash(std::string_view text) {
  uint32_t h = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (int k = 1; k < n && i + static_cast<size_t>(k) < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + static_cast<size_t>(k)]) & 0x3Fu);
    }
    i += static_cast<size_t>(n);
    if (cp > 0xFFFF) {
      h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
      h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      h = 31 * h + cp;
    }
  }
  return static_cast<int32_t>(h);
}

// The table size of a java.util.HashMap after putting keys of `hashes` (HashMap.hash's, distinct keys) in order into one
// made with a table of `initial` (a power of two: 16 for new HashMap<>(), tableSizeFor(n) for new HashMap<>(n)), as
// HashMap.putVal leaves it: doubled when the size passes three quarters of it, and when a bucket of a table below 64
// would get a ninth node (treeifyBin resizes instead). Its iteration order is then by bucket (hash & (table - 1)),
// and by insertion within one. nullopt when a bucket of a table of 64 or more gets a ninth node: a tree bin, whose
// order is not reproduced.
std::optional<size_t> JavaHashMapTable(const std::vector<uint32_t>& hashes, size_t initial) {
  size_t table = initial;
  std::vector<size_t> in_bucket(table, 0);
  const auto resize = [&](size_t inserted) {
    table *= 2;
    in_bucket.assign(table, 0);
    for (size_t i = 0; i < inserted; ++i) ++in_bucket[hashes[i] & (table - 1)];
  };
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (++in_bucket[hashes[i] & (table - 1)] > 8) {
      if (table >= 64) return std::nullopt;
      resize(i + 1);
    }
    if (i + 1 > table * 3 / 4) resize(i + 1);
  }
  return table;
}

// Java's Short.parseShort of `text` (an optional sign and decimal digits, within -32768..32767).
std::optional<int> JavaShort(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
  int value = 0;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos || digits.size() > 6 ||
      !absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &value) || value < -32768 || value > 32767) {
    return std::nullopt;
  }
  return value;
}

// `text` split at every `separator`.
std::vector<std::string_view> SplitAt(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

absl::Status AppendVector(const ConnectColumn& column, std::string_view text, VectorText as, std::string* out) {
  const auto unreadable = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("pgvector value \"", text.substr(0, 64), "\": ", why));
  };
  const bool is_float = column.logical_name == kFloatVectorName;
  if (column.form == ConnectForm::kVector) {
    // Vectors.fromVectorString: [x,y,...], each element trimmed and read by Double.parseDouble / Float.parseFloat.
    const std::string_view trimmed = JavaTrim(text);
    if (trimmed.size() < 2 || trimmed.front() != '[' || trimmed.back() != ']') return unreadable("not [x,y,...]");
    out->push_back('[');
    bool first = true;
    for (std::string_view e : SplitAt(trimmed.substr(1, trimmed.size() - 2), ',')) {
      absl::StatusOr<std::string> java = JavaDoubleText(JavaTrim(e), is_float);
      if (!java.ok()) return unreadable(Cat("the element \"", e, "\" is not a number"));
      if (!first) out->append(as == VectorText::kJava ? ", " : ",");
      first = false;
      out->append(*java);
    }
    out->push_back(']');
    return absl::OkStatus();
  }
  // Vectors.fromSparseVectorString: {i:x,...}/dimensions, the indices and the dimensions read by Short.parseShort (so
  // Debezium fails on a sparsevec of more than 32,767 dimensions), the values by Double.parseDouble, into a
  // HashMap<Short, Double> made for as many elements.
  const std::vector<std::string_view> parts = SplitAt(JavaTrim(text), '/');
  if (parts.size() != 2) return unreadable("not {i:x,...}/dimensions");
  const std::optional<int> dimensions = JavaShort(JavaTrim(parts[1]));
  if (!dimensions) return unreadable("its dimensions are not a Java short, which Debezium's converter fails on");
  const std::string_view braces = JavaTrim(parts[0]);
  if (braces.size() < 2 || braces.front() != '{' || braces.back() != '}') return unreadable("not {i:x,...}/dimensions");
  struct Entry {
    int index;
    std::string value;
  };
  std::vector<Entry> entries;
  std::vector<uint32_t> hashes;
  absl::flat_hash_set<int> indices;
  if (const std::string_view body = JavaTrim(braces.substr(1, braces.size() - 2)); !body.empty()) {
    for (std::string_view element : SplitAt(body, ',')) {
      const std::vector<std::string_view> pair = SplitAt(element, ':');
      if (pair.size() != 2) return unreadable("not {i:x,...}/dimensions");
      const std::optional<int> index = JavaShort(JavaTrim(pair[0]));
      if (!index) return unreadable("an index that is not a Java short, which Debezium's converter fails on");
      if (!indices.insert(*index).second) return unreadable("a repeated index");
      absl::StatusOr<std::string> value = JavaDoubleText(JavaTrim(pair[1]), /*is_float=*/false);
      if (!value.ok()) return unreadable(Cat("the value \"", pair[1], "\" is not a number"));
      entries.push_back(Entry{*index, *std::move(value)});
      const uint32_t h = static_cast<uint32_t>(*index);  // Short.hashCode, then HashMap.hash
      hashes.push_back(h ^ (h >> 16));
    }
  }
  size_t initial = 1;  // new HashMap<>(n): tableSizeFor(n)
  while (initial < entries.size()) initial *= 2;
  const std::optional<size_t> table = JavaHashMapTable(hashes, initial);
  if (!table) return unreadable("nine indices in one bucket of Java's HashMap (a tree bin): not reproduced");
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (hashes[a] & (*table - 1)) < (hashes[b] & (*table - 1)); });
  // SimpleHeaderConverter: {"dimensions":5,"vector":{1:1.5}}; JsonConverter: the map as pairs, its keys not being
  // strings; Struct.toString: Struct{dimensions=5,vector={1=1.5, 3=2.0}} (HashMap.toString).
  out->append(as == VectorText::kJava ? "Struct{dimensions=" : R"({"dimensions":)").append(Cat(*dimensions));
  out->append(as == VectorText::kJava ? ",vector=" : R"(,"vector":)");
  out->push_back(as == VectorText::kJson ? '[' : '{');
  for (size_t i = 0; i < order.size(); ++i) {
    const Entry& e = entries[order[i]];
    if (i > 0) out->append(as == VectorText::kJava ? ", " : ",");
    switch (as) {
      case VectorText::kHeader: out->append(Cat(e.index, ":", e.value)); break;
      case VectorText::kJson: out->append(Cat("[", e.index, ",", e.value, "]")); break;
      case VectorText::kJava: out->append(Cat(e.index, "=", e.value)); break;
    }
  }
  out->push_back(as == VectorText::kJson ? ']' : '}');
  out->push_back('}');
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HstorePair>> HstoreInHashMapOrder(std::string_view text) {
  const auto unreadable = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("hstore \"", text.substr(0, 64), "\": ", why));
  };
  // HStoreConverter.fromString: "key"=>"value" or "key"=>NULL, separated by ", " (backslash escapes a character).
  struct Pair {
    std::string key;
    std::optional<std::string> value;
    uint32_t hash = 0;  // HashMap.hash: h ^ (h >>> 16)
  };
  std::vector<Pair> pairs;
  absl::flat_hash_map<std::string, size_t> index;  // key -> its place in pairs
  size_t pos = 0;
  const auto quoted = [&](std::string* into) {
    if (pos >= text.size() || text[pos] != '"') return false;
    for (++pos; pos < text.size() && text[pos] != '"'; ++pos) {
      if (text[pos] == '\\' && pos + 1 < text.size()) ++pos;
      into->push_back(text[pos]);
    }
    if (pos >= text.size()) return false;
    ++pos;
    return true;
  };
  while (pos < text.size()) {
    Pair p;
    if (!quoted(&p.key) || text.substr(pos, 2) != "=>") return unreadable("not hstore text");
    pos += 2;
    if (text.substr(pos, 4) == "NULL") {
      pos += 4;
    } else if (std::string v; quoted(&v)) {
      p.value = std::move(v);
    } else {
      return unreadable("not hstore text");
    }
    const uint32_t h = static_cast<uint32_t>(JavaStringHash(p.key));
    p.hash = h ^ (h >> 16);
    // HashMap.put of a key it holds replaces the value in place.
    if (auto [at, added] = index.try_emplace(p.key, pairs.size()); !added) {
      pairs[at->second].value = std::move(p.value);
    } else {
      pairs.push_back(std::move(p));
    }
    if (pos < text.size()) {
      if (text.substr(pos, 2) != ", ") return unreadable("not hstore text");
      pos += 2;
    }
  }
  std::vector<uint32_t> hashes;
  hashes.reserve(pairs.size());
  for (const Pair& p : pairs) hashes.push_back(p.hash);
  const std::optional<size_t> table = JavaHashMapTable(hashes, 16);  // new HashMap<>()
  if (!table) return unreadable("nine keys in one bucket of Java's HashMap (a tree bin): not reproduced");
  std::stable_sort(pairs.begin(), pairs.end(),
                   [&](const Pair& a, const Pair& b) { return (a.hash & (*table - 1)) < (b.hash & (*table - 1)); });
  std::vector<HstorePair> ordered;
  ordered.reserve(pairs.size());
  for (Pair& p : pairs) ordered.push_back(HstorePair{std::move(p.key), std::move(p.value)});
  return ordered;
}

absl::StatusOr<std::string> DebeziumHstoreJson(std::string_view text) {
  absl::StatusOr<std::vector<HstorePair>> pairs = HstoreInHashMapOrder(text);
  if (!pairs.ok()) return pairs.status();
  std::string json;
  AppendHstore(*pairs, HstoreText::kJackson, &json);
  return json;
}

void AppendHstore(const std::vector<HstorePair>& pairs, HstoreText as, std::string* out) {
  const bool java = as == HstoreText::kJava;
  out->push_back('{');
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0) out->append(java ? ", " : ",");
    const auto string = [&](std::string_view text) {
      switch (as) {
        case HstoreText::kJackson: AppendJacksonString(text, /*escape_beyond_bmp=*/false, out); break;
        case HstoreText::kJsonConverter: AppendJsonString(text, out); break;
        case HstoreText::kValues: AppendValuesString(text, out); break;
        case HstoreText::kJava: out->append(text); break;
      }
    };
    string(pairs[i].key);
    out->push_back(java ? '=' : ':');
    if (pairs[i].value) {
      string(*pairs[i].value);
    } else {
      out->append("null");
    }
  }
  out->push_back('}');
}

namespace {

// AppendJsonString, or with `escape_beyond_bmp` false as Jackson's generator over a java.io.Writer writes a string:
// the same escapes, but characters beyond U+FFFF as their UTF-8 bytes.
void AppendJacksonString(std::string_view text, bool escape_beyond_bmp, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const auto escape_unit = [&](unsigned unit) {
    out->append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
  };
  out->push_back('"');
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\b': out->append("\\b"); continue;
      case '\t': out->append("\\t"); continue;
      case '\n': out->append("\\n"); continue;
      case '\f': out->append("\\f"); continue;
      case '\r': out->append("\\r"); continue;
      default: break;
    }
    if (c < 0x20) {
      escape_unit(c);
    } else if (escape_beyond_bmp && c >= 0xF0 && i + 3 < text.size()) {
      // A four-byte sequence: a character beyond U+FFFF, written as its UTF-16 surrogate pair.
      const unsigned cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 12) |
                          ((static_cast<unsigned char>(text[i + 2]) & 0x3Fu) << 6) |
                          (static_cast<unsigned char>(text[i + 3]) & 0x3Fu);
      const unsigned v = cp - 0x10000;
      escape_unit(0xD800 + (v >> 10));
      escape_unit(0xDC00 + (v & 0x3FF));
      i += 3;
    } else if (c == 0xED && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0xA0) {
      // A lone surrogate in generalized UTF-8 (a Java String cut inside a pair, outbox/column_mapper.h): \uXXXX.
      escape_unit(0xD000 | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
                  (static_cast<unsigned char>(text[i + 2]) & 0x3Fu));
      i += 2;
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  AppendJacksonString(text, /*escape_beyond_bmp=*/true, out);
}

absl::StatusOr<int64_t> ParseTimestampMicros(std::string_view text, bool with_zone) {
  const auto bad = [&] { return absl::InvalidArgumentError(Cat("unparsable timestamp \"", text, "\"")); };
  size_t pos = 0;
  int64_t days = 0, micros = 0;
  if (!ReadDate(text, pos, &days) || !Expect(text, pos, ' ') || !ReadTime(text, pos, &micros)) return bad();
  int64_t offset_seconds = 0;
  if (with_zone) {
    if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) return bad();
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh = 0, om = 0, os = 0;
    if (!ReadDigits(text, pos, 2, &oh)) return bad();
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!ReadDigits(text, pos, 2, &om)) return bad();
      if (pos < text.size() && text[pos] == ':') {
        ++pos;
        if (!ReadDigits(text, pos, 2, &os)) return bad();
      }
    }
    offset_seconds = sign * (oh * 3600 + om * 60 + os);
  }
  if (pos != text.size()) return bad();  // BC dates, infinity and other forms
  return (days * 86400 - offset_seconds) * 1000000 + micros;
}

absl::StatusOr<std::string> JavaDoubleText(std::string_view text, bool is_float) {
  if (text == "NaN" || text == "Infinity" || text == "-Infinity") return std::string(text);
  double value = 0;
  float fvalue = 0;
  const char* end = text.data() + text.size();
  const std::from_chars_result parsed = is_float ? std::from_chars(text.data(), end, fvalue)
                                                 : std::from_chars(text.data(), end, value);
  if (parsed.ec != std::errc() || parsed.ptr != end) return Unreadable("float", text);
  if (is_float) value = fvalue;
  const bool negative = std::signbit(value);
  if (value == 0) return std::string(negative ? "-0.0" : "0.0");
  // The shortest decimal that rounds back (of the float, for float4), as d.ddde±x.
  char buf[64];
  std::to_chars_result r = is_float ? std::to_chars(buf, buf + sizeof buf, std::fabs(fvalue), std::chars_format::scientific)
                                    : std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  size_t e = 0;
  std::string digits;
  const auto read_mantissa = [&] {  // the digits before 'e', without the point
    e = sci.find('e');
    digits.clear();
    for (char c : sci.substr(0, e)) {
      if (c != '.') digits.push_back(c);
    }
  };
  read_mantissa();
  if (digits.size() == 1) {
    // Java writes at least two digits: the two-digit decimal nearest the value (it rounds back too).
    const int n = is_float ? std::snprintf(buf, sizeof buf, "%.1e", static_cast<double>(std::fabs(fvalue)))
                           : std::snprintf(buf, sizeof buf, "%.1e", std::fabs(value));
    sci = std::string_view(buf, static_cast<size_t>(n));
    read_mantissa();
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent >= -3 && exponent < 7) {
    // Plain: 10^-3 <= |value| < 10^7.
    if (exponent < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    } else {
      const size_t whole = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= whole) {
        out += digits;
        out.append(whole - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, whole);
        out += '.';
        out += digits.substr(whole);
      }
    }
  } else {
    out += digits[0];
    out += '.';
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += 'E';
    out += std::to_string(exponent);
  }
  return out;
}

absl::StatusOr<std::string> JavaBigDecimalText(std::string_view text) {
  const std::optional<Decimal> d = ParseDecimal(text);
  if (!d) return Unreadable("numeric", text);
  const int64_t adjusted = -static_cast<int64_t>(d->scale) + static_cast<int64_t>(d->digits.size()) - 1;
  std::string out = d->negative ? "-" : "";
  if (adjusted >= -6) {
    if (d->scale == 0) {
      out += d->digits;
    } else if (d->digits.size() > static_cast<size_t>(d->scale)) {
      const size_t whole = d->digits.size() - static_cast<size_t>(d->scale);
      out += d->digits.substr(0, whole);
      out += '.';
      out += d->digits.substr(whole);
    } else {
      out += "0.";
      out.append(static_cast<size_t>(d->scale) - d->digits.size(), '0');
      out += d->digits;
    }
  } else {
    out += d->digits[0];
    if (d->digits.size() > 1) {
      out += '.';
      out += d->digits.substr(1);
    }
    out += 'E';
    out += std::to_string(adjusted);  // negative here, so its sign is written
  }
  return out;
}

namespace {

std::optional<int64_t> IntervalMicros(std::string_view text);  // below
std::optional<std::string> IntervalIsoText(std::string_view text);  // below

// PostgresDefaultValueConverter.extractDefault(value, placeholder): a function call (FUNCTION_DEFAULT_PATTERN,
// anchored at the start) or a current date/time keyword gives the placeholder; text without a quote is the value
// itself (NULL:: casts: none); else the first quoted run, up to the next quote (Debezium's non-greedy '(.*?)').
std::optional<std::string> ExtractDefault(std::string_view expression, std::string_view placeholder) {
  static const std::regex kFunction(R"(^[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\))");
  std::string lower(expression);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (std::regex_search(std::string(expression), kFunction, std::regex_constants::match_continuous) ||
      lower == "current_timestamp" || lower == "current_time" || lower == "current_date" || lower == "localtime" ||
      lower == "localtimestamp") {
    return std::string(placeholder);
  }
  const size_t open = expression.find('\'');
  if (open == std::string_view::npos) {
    if (expression.starts_with("NULL::")) return std::nullopt;
    return std::string(expression);
  }
  const size_t close = expression.find('\'', open + 1);
  if (close == std::string_view::npos) return std::nullopt;  // Matcher.group would throw: no default
  return std::string(expression.substr(open + 1, close - open - 1));
}

// Java's Integer/Long/Short.parseXxx: an optional sign, then decimal digits, within the type's range.
bool JavaParsesInteger(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && begin != end && v >= min && v <= max;
}

}  // namespace

ConnectDefault DebeziumColumnDefault(uint32_t type_oid, int32_t type_modifier,
                                     const std::optional<std::string>& expression, bool generated,
                                     std::optional<ConnectForm> form) {
  using Kind = ConnectDefault::Kind;
  if (generated) return {Kind::kNotReproduced, ""};
  if (!expression.has_value()) return {};
  std::string_view expr = *expression;
  const auto value = [](std::optional<std::string> v) {
    return v ? ConnectDefault{Kind::kValue, *std::move(v)} : ConnectDefault{};
  };
  // A literal the column's converter reads as it reads a value; else not reproduced.
  const auto value_as_read = [&](std::string text) {
    absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type_oid, type_modifier);
    std::string ignored;
    if (!column.ok() || !AppendConnectValue(*column, text, &ignored).ok()) return ConnectDefault{Kind::kNotReproduced, ""};
    return ConnectDefault{Kind::kValue, std::move(text)};
  };
  switch (type_oid) {
    case type::kText:
    case type::kVarchar:
    case type::kBpchar:
    case type::kXml:
      return value(ExtractDefault(expr, ""));
    case type::kJson:
    case type::kJsonb:
      return value(ExtractDefault(expr, "{}"));
    case type::kBool: {
      expr = JavaTrim(expr);  // TRIM_DATA_TYPES: String.trim
      if (expr.starts_with("NULL::")) return {};
      std::optional<std::string> v = ExtractDefault(expr, "false");
      if (!v) return {};
      std::transform(v->begin(), v->end(), v->begin(), [](unsigned char c) { return std::tolower(c); });
      return {Kind::kValue, *v == "true" ? "t" : "f"};  // Boolean.parseBoolean
    }
    case type::kInt2:
    case type::kInt4:
    case type::kInt8: {
      expr = JavaTrim(expr);  // TRIM_DATA_TYPES: String.trim
      if (expr.starts_with("NULL::")) return {};
      std::optional<std::string> v = ExtractDefault(expr, "0");
      const int64_t max = type_oid == type::kInt2 ? INT16_MAX : type_oid == type::kInt4 ? INT32_MAX : INT64_MAX;
      if (!v || !JavaParsesInteger(*v, -max - 1, max)) return {};  // Debezium logs it and has no default
      if (v->starts_with('+')) v->erase(0, 1);
      return {Kind::kValue, *v};
    }
    case type::kFloat4:
    case type::kFloat8: {
      expr = JavaTrim(expr);  // TRIM_DATA_TYPES: String.trim
      if (expr.starts_with("NULL::")) return {};
      std::optional<std::string> v = ExtractDefault(expr, "0.0");
      if (!v || !JavaDoubleText(*v, type_oid == type::kFloat4).ok()) return {Kind::kNotReproduced, ""};
      return {Kind::kValue, *v};
    }
    case type::kNumeric: {
      expr = JavaTrim(expr);  // TRIM_DATA_TYPES: String.trim
      if (expr.starts_with("NULL::")) return {};
      // Without a scale: a VariableScaleDecimal struct, which Debezium drops as a default ("Struct can't be used as
      // default value"), so its schema has none.
      if (type_modifier < 0) return {};
      std::optional<std::string> v = ExtractDefault(expr, "0.0");
      std::optional<Decimal> d = v ? ParseDecimal(*v) : std::nullopt;
      const int scale = (((type_modifier - 4) & 0x7ff) ^ 0x400) - 0x400;
      if (!d || d->scale > scale || scale < 0) return {Kind::kNotReproduced, ""};
      // BigDecimal.setScale(column scale): trailing zeros added.
      std::string text = *v;
      if (d->scale == 0 && scale > 0) text.push_back('.');
      text.append(static_cast<size_t>(scale - d->scale), '0');
      return {Kind::kValue, text};
    }
    case type::kUuid: {
      expr = JavaTrim(expr);  // TRIM_DATA_TYPES: String.trim
      std::optional<std::string> v = ExtractDefault(expr, "00000000-0000-0000-0000-000000000000");
      if (!v) return {};
      std::transform(v->begin(), v->end(), v->begin(), [](unsigned char c) { return std::tolower(c); });
      static const std::regex kUuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
      if (!std::regex_match(*v, kUuid)) return {Kind::kNotReproduced, ""};
      return {Kind::kValue, *v};
    }
    case type::kDate:
    case type::kTime:
    case type::kTimestamp:
    case type::kTimestampTz: {
      // pgjdbc's TimestampUtils parses the literal (a function or CURRENT_*: the epoch, or midnight) and reads a
      // date and time without an offset in the JVM's time zone, taken to be UTC; the column's converter then writes
      // it as it writes values. A literal the forms cannot carry (BC, epoch) is not reproduced.
      const bool time = type_oid == type::kTime;
      std::optional<std::string> v = ExtractDefault(expr, time ? "00:00:00" : "1970-01-01");
      if (!v) return {};
      if (*v == "infinity" || *v == "-infinity") {
        // pgjdbc gives LocalDateTime.MAX or MIN (OffsetDateTime's for the timestamps), which Debezium's converters
        // take otherwise than a value's infinity (seen side by side under every time.precision.mode): a microsecond
        // timestamp saturates (MAX's then wraps), a date's epoch day is cut to an int, the ISO forms print them, and
        // the forms write those for kInfinityDefault and kMinusInfinityDefault; a millisecond, nanosecond, zoned or
        // java.util.Date timestamp's converter overflows, so the schema has no default.
        if (!form) {
          absl::StatusOr<ConnectColumn> column = ConnectColumnOf(type_oid, type_modifier);
          if (!column.ok()) return {Kind::kNotReproduced, ""};
          form = column->form;
        }
        switch (*form) {
          case ConnectForm::kTimestampMicros:
          case ConnectForm::kDate:
          case ConnectForm::kIsoTimestamp:
          case ConnectForm::kIsoDate:
          case ConnectForm::kConnectDate:
            return {Kind::kValue, std::string(*v == "infinity" ? kInfinityDefault : kMinusInfinityDefault)};
          default:
            return {};
        }
      }
      std::string text = *std::move(v);
      if ((type_oid == type::kTimestamp || type_oid == type::kTimestampTz) && text.find(' ') == std::string::npos) {
        text += " 00:00:00";
      }
      if (time && text.size() == 5) text += ":00";  // HH:MM
      if (type_oid == type::kTimestampTz && !ParseTimestampMicros(text, /*with_zone=*/true).ok()) text += "+00";
      return value_as_read(text);
    }
    case type::kTimeTz:  // Debezium has no mapper for it: no default
      return {};
    case type::kInterval: {
      // new PGInterval(literal): the same interval as the column's values, whose text the relay's session prints in
      // ISO 8601 (pg_get_expr too). A function's placeholder, "epoch", is a token PGInterval's parser skips: a zero
      // interval (seen side by side for now() - now(), make_interval(...) and justify_hours(...)).
      std::optional<std::string> v = ExtractDefault(expr, "epoch");
      if (!v) return {};
      if (*v == "epoch") return {Kind::kValue, "PT0S"};
      if (!IntervalMicros(*v)) return {Kind::kNotReproduced, ""};
      return {Kind::kValue, *v};
    }
    case type::kBit:
    case type::kVarbit: {
      // The literal of B'101'::"bit" (a function: "00" for bit, "0" for varbit), read by the column's converter as
      // it reads values: a String, or for bit a Boolean when it is one character long, which the bit(1) converter
      // reads as the value "1" or "0" would be (bit without a length is bit(1)).
      std::optional<std::string> v = ExtractDefault(expr, type_oid == type::kBit ? "00" : "0");
      if (!v) return {};
      // A Boolean for a longer bit(n) (a literal in an expression): the Bits converter writes one byte, 0 or 1.
      if (type_oid == type::kBit && v->size() == 1 && type_modifier != 1) return {Kind::kNotReproduced, ""};
      return value_as_read(*v);
    }
    default:
      return {};  // no mapper in Debezium (bytea, network addresses, arrays...): no default
  }
}

ConnectDefault DebeziumEnumDefault(std::string_view type_name, const std::optional<std::string>& expression,
                                   bool generated) {
  using Kind = ConnectDefault::Kind;
  if (generated) return {Kind::kNotReproduced, ""};
  if (!expression.has_value()) return {};
  const std::string_view expr = *expression;
  const size_t cast = expr.rfind("::");
  if (cast == std::string_view::npos) return {};
  // TypeId.parse of the cast's type: an optional schema before a dot, the name maybe in double quotes.
  std::string_view suffix = expr.substr(cast + 2);
  const size_t dot = suffix.ends_with('"') ? suffix.rfind(".\"") : suffix.rfind('.');
  if (dot != std::string_view::npos) suffix.remove_prefix(dot + 1);
  std::string cast_name(suffix);
  if (cast_name.size() >= 2 && cast_name.front() == '"' && cast_name.back() == '"') {
    cast_name = absl::StrReplaceAll(cast_name.substr(1, cast_name.size() - 2), {{"\"\"", "\""}});
  }
  if (cast_name != type_name) return {};
  const std::string_view value = expr.substr(0, cast);
  if (value.size() < 2 || !value.starts_with('\'') || !value.ends_with('\'')) return {};
  return {Kind::kValue, std::string(value.substr(1, value.size() - 2))};
}

namespace {

// An interval as pgjdbc's PGInterval holds it, from PostgreSQL's text of it in the relay's session (IntervalStyle
// iso_8601: "P1Y2M-3DT4H5M6.789S", each part signed, "PT0S" for none): years, months, days, hours, minutes, and
// seconds kept as whole seconds plus Math.round'ed microseconds, added back in a double (setSeconds / getSeconds).
struct IntervalParts {
  int64_t years = 0, months = 0, days = 0, hours = 0, minutes = 0;
  double seconds = 0;
};

std::optional<IntervalParts> ParseIntervalParts(std::string_view text) {
  if (!text.starts_with('P')) return std::nullopt;
  IntervalParts p;
  double seconds = 0;
  bool time = false;
  size_t pos = 1;
  while (pos < text.size()) {
    if (text[pos] == 'T' && !time) {
      time = true;
      ++pos;
      continue;
    }
    size_t end = pos;
    if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
    while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
    if (end == pos || end >= text.size()) return std::nullopt;
    const std::string_view number = text.substr(pos, end - pos);
    const char unit = text[end];
    pos = end + 1;
    if (time && unit == 'S') {
      const char* begin = number.data() + (number.starts_with('+') ? 1 : 0);
      if (std::from_chars(begin, number.data() + number.size(), seconds).ptr != number.data() + number.size()) {
        return std::nullopt;
      }
      continue;
    }
    int64_t n = 0;
    if (!JavaParsesInteger(number, INT32_MIN, INT32_MAX)) return std::nullopt;
    std::from_chars(number.data() + (number.starts_with('+') ? 1 : 0), number.data() + number.size(), n);
    if (!time && unit == 'Y') {
      p.years = n;
    } else if (!time && unit == 'M') {
      p.months = n;
    } else if (!time && unit == 'D') {
      p.days = n;
    } else if (time && unit == 'H') {
      p.hours = n;
    } else if (time && unit == 'M') {
      p.minutes = n;
    } else {
      return std::nullopt;
    }
  }
  const double whole = std::trunc(seconds);
  const double micros = std::floor((seconds - whole) * 1e6 + 0.5);
  p.seconds = whole + micros / 1000000;
  return p;
}

// Debezium's MicroDuration of an interval (interval.handling.mode=numeric): MicroDuration.durationMicros adds the
// parts up in doubles with 365.25 / 12 days a month, truncated.
std::optional<int64_t> IntervalMicros(std::string_view text) {
  const std::optional<IntervalParts> p = ParseIntervalParts(text);
  if (!p) return std::nullopt;
  const double number_of_days =
      static_cast<double>(p->years * 12 + p->months) * (365.25 / 12.0) + static_cast<double>(p->days);
  const double number_of_seconds =
      ((number_of_days * 24 + static_cast<double>(p->hours)) * 60 + static_cast<double>(p->minutes)) * 60 + p->seconds;
  return static_cast<int64_t>(number_of_seconds * 1e6 + 0);
}

// Debezium's io.debezium.time.Interval of an interval (interval.handling.mode=string): Interval.toIsoString, "P" years
// "Y" months "M" days "DT" hours "H" minutes "M" seconds "S", the seconds BigDecimal.valueOf(getSeconds()) (Java's
// Double.toString) cut to 9 digits, stripped of trailing zeros and printed plain ("P1Y2M-3DT4H5M6.789S",
// "P0Y0M0DT0H0M0S").
std::optional<std::string> IntervalIsoText(std::string_view text) {
  const std::optional<IntervalParts> p = ParseIntervalParts(text);
  if (!p) return std::nullopt;
  char round_trip[32];
  std::snprintf(round_trip, sizeof round_trip, "%.17g", p->seconds);
  absl::StatusOr<std::string> java = JavaDoubleText(round_trip, /*is_float=*/false);
  if (!java.ok()) return std::nullopt;
  // Double.toString: [-]digits.digits[E[-]n]; as a BigDecimal, an unscaled digit string and a scale.
  std::string_view t = *java;
  const bool negative = t.starts_with('-');
  if (negative) t.remove_prefix(1);
  const size_t e = t.find('E');
  const std::string_view mantissa = t.substr(0, e);
  int exponent = 0;
  if (e != std::string_view::npos) std::from_chars(t.data() + e + 1, t.data() + t.size(), exponent);
  const size_t dot = mantissa.find('.');
  std::string digits = Cat(mantissa.substr(0, dot), dot == std::string_view::npos ? "" : mantissa.substr(dot + 1));
  int scale = (dot == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1)) - exponent;
  if (scale > 9) {  // setScale(9, RoundingMode.DOWN)
    digits.resize(digits.size() > static_cast<size_t>(scale - 9) ? digits.size() - (scale - 9) : 0);
    scale = 9;
  }
  const size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  if (digits == "0") {
    scale = 0;
  } else {
    while (digits.size() > 1 && digits.back() == '0') {  // stripTrailingZeros
      digits.pop_back();
      --scale;
    }
  }
  std::string plain;
  if (scale <= 0) {
    plain = Cat(digits, std::string(static_cast<size_t>(-scale), '0'));
  } else if (digits.size() > static_cast<size_t>(scale)) {
    plain = Cat(digits.substr(0, digits.size() - scale), ".", digits.substr(digits.size() - scale));
  } else {
    plain = Cat("0.", std::string(static_cast<size_t>(scale) - digits.size(), '0'), digits);
  }
  return Cat("P", p->years, "Y", p->months, "M", p->days, "DT", p->hours, "H", p->minutes, "M",
             negative && plain != "0" ? "-" : "", plain, "S");
}

// "HH:MM:SS[.ffffff]+HH[:MM[:SS]]" (timetz): shifted to UTC within the day, printed as DateTimeFormatter's
// ISO_OFFSET_TIME prints it ("11:45:07.5Z").
std::optional<std::string> ZonedTimeText(std::string_view text) {
  size_t pos = 0;
  int64_t micros = 0;
  if (!ReadTime(text, pos, &micros, /*max_hour=*/24) || pos >= text.size()) return std::nullopt;
  const int64_t sign = text[pos] == '-' ? -1 : text[pos] == '+' ? 1 : 0;
  if (sign == 0) return std::nullopt;
  ++pos;
  int64_t oh = 0, om = 0, os = 0;
  if (!ReadDigits(text, pos, 2, &oh)) return std::nullopt;
  if (pos < text.size() && (!Expect(text, pos, ':') || !ReadDigits(text, pos, 2, &om))) return std::nullopt;
  if (pos < text.size() && (!Expect(text, pos, ':') || !ReadDigits(text, pos, 2, &os))) return std::nullopt;
  if (pos != text.size()) return std::nullopt;
  constexpr int64_t kDay = 86400LL * 1000000;
  int64_t utc = micros - sign * ((oh * 60 + om) * 60 + os) * 1000000;
  utc = ((utc % kDay) + kDay) % kDay;
  std::string out;
  const int64_t secs = utc / 1000000;
  AppendTwoDigits(&out, secs / 3600);
  out.push_back(':');
  AppendTwoDigits(&out, secs / 60 % 60);
  out.push_back(':');
  AppendTwoDigits(&out, secs % 60);
  if (const int64_t fraction = utc % 1000000; fraction != 0) {
    char f[16];
    std::snprintf(f, sizeof f, "%06d", static_cast<int>(fraction));
    std::string_view digits(f, 6);
    while (digits.back() == '0') digits.remove_suffix(1);
    out.push_back('.');
    out.append(digits);
  }
  out.push_back('Z');
  return out;
}

}  // namespace

std::optional<size_t> MultiDimensionalLength(std::string_view text, char delimiter) {
  std::string_view braces = text;
  if (braces.starts_with('[')) {  // bounds: [lo:hi][lo:hi]=
    const size_t equals = braces.find("]=");
    if (equals == std::string_view::npos) return std::nullopt;
    braces.remove_prefix(equals + 2);
  }
  if (!braces.starts_with("{{") || !braces.ends_with('}')) return std::nullopt;
  size_t inner = 0;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < braces.size(); ++i) {
    const char c = braces[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      if (++depth == 2) ++inner;
    } else if (c == '}') {
      if (--depth == 0 && i + 1 != braces.size()) return std::nullopt;
    } else if (depth == 1 && c != delimiter) {
      return std::nullopt;  // an element beside the inner arrays: not PostgreSQL's text
    }
  }
  if (depth != 0 || quoted) return std::nullopt;
  return inner;
}

// Why ParsePgArray refuses a multi-dimensional array (AppendList writes those whose inner arrays are null before).
constexpr std::string_view kMultiDimensionalRefusal =
    "a multi-dimensional array of this type: Debezium writes each inner array as Java's identity-hash text of it, "
    "which no other program reproduces";

absl::StatusOr<std::vector<std::optional<std::string>>> ParsePgArray(std::string_view text, char delimiter) {
  const auto unreadable = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("array \"", text, "\": ", why));
  };
  // PostgreSQL prints lower bounds other than 1 before the braces, [lo:hi] per dimension and then '=': pgjdbc's array
  // parser skips them, so Debezium writes a one-dimensional array's elements without its bounds.
  std::string_view braces = text;
  if (braces.starts_with('[')) {
    const size_t equals = braces.find("]=");
    if (equals == std::string_view::npos) return unreadable("not an array");
    if (braces.substr(0, equals).find("][") != std::string_view::npos) {
      return unreadable(kMultiDimensionalRefusal);
    }
    braces.remove_prefix(equals + 2);
  }
  if (braces.size() < 2 || braces.front() != '{' || braces.back() != '}') return unreadable("not an array");
  std::vector<std::optional<std::string>> elements;
  const std::string_view body = braces.substr(1, braces.size() - 2);
  if (body.empty()) return elements;
  size_t i = 0;
  while (true) {
    if (i < body.size() && body[i] == '{') {
      return unreadable(kMultiDimensionalRefusal);
    }
    if (i < body.size() && body[i] == '"') {
      std::string e;
      ++i;
      while (i < body.size() && body[i] != '"') {
        if (body[i] == '\\' && i + 1 < body.size()) ++i;
        e.push_back(body[i++]);
      }
      if (i >= body.size()) return unreadable("an unterminated quoted element");
      ++i;
      elements.emplace_back(std::move(e));
    } else {
      const size_t end = std::min(body.find(delimiter, i), body.size());
      const std::string_view e = body.substr(i, end - i);
      if (e.empty() || e.find_first_of("{}\"\\") != std::string_view::npos) return unreadable("not an array");
      if (absl::EqualsIgnoreCase(absl::string_view(e.data(), e.size()), "NULL")) {
        elements.emplace_back(std::nullopt);
      } else {
        elements.emplace_back(std::string(e));
      }
      i = end;
    }
    if (i == body.size()) return elements;
    if (body[i] != delimiter) return unreadable("not an array");
    ++i;
  }
}

std::optional<std::string> DebeziumMoneyText(std::string_view text, int fraction_digits) {
  if (text.empty()) return std::nullopt;
  const bool negative = text.front() == '(' || text.front() == '-';
  if (text.front() == '-') text.remove_prefix(1);  // "-x" is read as "(x)"
  if (text.starts_with('(')) text.remove_prefix(1);  // PGtokenizer.removePara: each side on its own
  if (text.ends_with(')')) text.remove_suffix(1);
  if (!text.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(text.front())) && text.front() != '.') {
    // One Java char: the code point's UTF-8 bytes (a currency symbol is within the BMP).
    size_t n = 1;
    while (n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) ++n;
    text.remove_prefix(n);
  }
  std::string digits;  // new BigDecimal(...) of the rest without ','
  for (char c : text) {
    if (c != ',') digits.push_back(c);
  }
  const size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
  const auto all_digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return absl::ascii_isdigit(c); });
  };
  if ((whole.empty() && fraction.empty()) || !all_digits(whole) || !all_digits(fraction)) return std::nullopt;
  if (whole.empty()) whole = "0";
  // setScale(fraction_digits, RoundingMode.HALF_UP): a dropped part from 5 up rounds the magnitude up.
  const size_t scale = static_cast<size_t>(std::max(fraction_digits, 0));
  const bool round_up = fraction.size() > scale && fraction[scale] >= '5';
  fraction.resize(scale, '0');
  std::string unscaled = whole + fraction;
  if (round_up) {
    size_t i = unscaled.size();
    while (i > 0 && unscaled[i - 1] == '9') unscaled[--i] = '0';
    if (i == 0) {
      unscaled.insert(unscaled.begin(), '1');
    } else {
      ++unscaled[i - 1];
    }
  }
  const size_t first = std::min(unscaled.find_first_not_of('0'), unscaled.size() - scale - 1);
  unscaled.erase(0, first);  // no leading zeros, but at least "0.00" (scale 2)
  const bool zero = unscaled.find_first_not_of('0') == std::string::npos;
  if (scale == 0) return Cat(negative && !zero ? "-" : "", unscaled);
  return Cat(negative && !zero ? "-" : "", unscaled.substr(0, unscaled.size() - scale), ".",
             unscaled.substr(unscaled.size() - scale));
}

absl::Status AppendJavaToString(const ConnectColumn& column, std::string_view text, std::string* out) {
  if (column.form == ConnectForm::kVector || column.form == ConnectForm::kSparseVector) {
    return AppendVector(column, text, VectorText::kJava, out);
  }
  if (column.form == ConnectForm::kHstoreMap) {  // HashMap.toString: {k=v, n=null}
    absl::StatusOr<std::vector<HstorePair>> pairs = HstoreInHashMapOrder(text);
    if (!pairs.ok()) return pairs.status();
    AppendHstore(*pairs, HstoreText::kJava, out);
    return absl::OkStatus();
  }
  if (column.form == ConnectForm::kBytes && !column.text_bytes) {
    // A bytea's PostgreSQL text: \x and two hex digits a byte.
    out->append(JavaByteBufferText(text.size() >= 2 ? (text.size() - 2) / 2 : 0));
    return absl::OkStatus();
  }
  if (column.form != ConnectForm::kArray) return AppendConnectValue(column, text, out);
  const ConnectColumn element = ElementColumn(column);
  return AppendList(column, text, ", ", [&](const std::string& e) { return AppendJavaToString(element, e, out); },
                    out);
}

namespace {

// The milliseconds of the java.util.Date Debezium makes of a date (days * 86,400,000), a time (its milliseconds past
// midnight, 24:00:00 included) or a timestamp (floored to the millisecond) under time.precision.mode=connect.
absl::StatusOr<int64_t> ConnectMillis(const ConnectColumn& column, std::string_view text) {
  // The infinities are the java.util.Dates of the days and milliseconds adaptive's forms write (InfinityNumber; seen
  // side by side), a timestamp's whatever its precision; a timestamp's infinite default has none in Debezium.
  if (column.form == ConnectForm::kConnectDate || column.form == ConnectForm::kConnectTimestamp) {
    ConnectColumn adaptive = column;
    adaptive.form = column.form == ConnectForm::kConnectDate ? ConnectForm::kDate : ConnectForm::kTimestampMillis;
    if (std::optional<int64_t> n = InfinityNumber(adaptive, text)) {
      return column.form == ConnectForm::kConnectDate ? *n * 86400000 : *n;
    }
  }
  size_t pos = 0;
  switch (column.form) {
    case ConnectForm::kConnectDate: {
      int64_t days = 0;
      if (!ReadDate(text, pos, &days) || pos != text.size()) return Unreadable("date", text);
      return days * 86400000;
    }
    case ConnectForm::kConnectTime: {
      int64_t micros = 0;
      if (!ReadTime(text, pos, &micros, /*max_hour=*/24) || pos != text.size()) return Unreadable("time", text);
      return micros / 1000;
    }
    default: {
      absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, /*with_zone=*/false);
      if (!micros.ok()) return Unreadable("timestamp", text);
      return FloorDiv(*micros, 1000);
    }
  }
}

// Values.convertToString of a java.util.Date (Kafka Connect's Values.dateFormatFor, SimpleDateFormat in the JVM's
// zone, UTC): a value below one day as "HH:mm:ss.SSS'Z'" (a date before 1970 too), a whole number of days as
// "yyyy-MM-dd", any other as "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'".
void AppendJavaUtilDate(int64_t millis, std::string* out) {
  constexpr int64_t kDay = 86400000;
  const int64_t days = FloorDiv(millis, kDay);
  const int64_t in_day = millis - days * kDay;
  const auto time = [&] {
    out->append(absl::StrFormat("%02d:%02d:%02d.%03dZ", in_day / 3600000, in_day / 60000 % 60, in_day / 1000 % 60,
                                in_day % 1000));
  };
  if (millis < kDay) {
    time();
    return;
  }
  int64_t year = 0;
  unsigned month = 0, day = 0;
  CivilFromDays(days, &year, &month, &day);
  out->append(absl::StrFormat("%04d-%02d-%02d", year, month, day));
  if (in_day == 0) return;
  out->push_back('T');
  time();
}

// Debezium's IsoDate, IsoTime and IsoTimestamp (DateTimeFormatter's ISO_OFFSET_DATE, ISO_OFFSET_TIME and
// ISO_OFFSET_DATE_TIME in UTC): seconds always, a fraction only as long as needed; a time is a Duration added to
// midnight, so 24:00:00 is 00:00:00. Years beyond 0..9999 (Java prints a sign) are refused.
absl::Status AppendIsoText(const ConnectColumn& column, std::string_view text, std::string* out) {
  constexpr int64_t kDayMicros = 86400LL * 1000000;
  const auto date = [&](int64_t days) {
    int64_t year = 0;
    unsigned month = 0, day = 0;
    CivilFromDays(days, &year, &month, &day);
    if (year < 0 || year > 9999) return false;
    out->append(absl::StrFormat("%04d-%02d-%02d", year, month, day));
    return true;
  };
  const auto time = [&](int64_t micros) {
    out->append(absl::StrFormat("%02d:%02d:%02d", micros / 3600000000, micros / 60000000 % 60, micros / 1000000 % 60));
    if (int64_t fraction = micros % 1000000; fraction != 0) {
      std::string digits = absl::StrFormat("%06d", fraction);
      while (digits.back() == '0') digits.pop_back();
      out->append(".").append(digits);
    }
  };
  size_t pos = 0;
  switch (column.form) {
    case ConnectForm::kIsoDate: {
      int64_t days = 0;
      if (!ReadDate(text, pos, &days) || pos != text.size() || !date(days)) return Unreadable("date", text);
      break;
    }
    case ConnectForm::kIsoTime: {
      int64_t micros = 0;
      if (!ReadTime(text, pos, &micros, /*max_hour=*/24) || pos != text.size()) return Unreadable("time", text);
      if (column.in_array) micros -= micros % 1000;  // pgjdbc's java.sql.Time keeps milliseconds
      time(micros % kDayMicros);
      break;
    }
    default: {
      absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, /*with_zone=*/false);
      if (!micros.ok()) return Unreadable("timestamp", text);
      const int64_t days = FloorDiv(*micros, kDayMicros);
      if (!date(days)) return Unreadable("timestamp", text);
      out->push_back('T');
      time(*micros - days * kDayMicros);
    }
  }
  out->push_back('Z');
  return absl::OkStatus();
}

// PostgreSQL's infinity and -infinity as Debezium writes them (seen side by side), as numbers: under
// time.precision.mode=adaptive (PostgresValueConverter's POSITIVE_/NEGATIVE_INFINITY constants, pgjdbc's
// DATE_POSITIVE_INFINITY and DATE_NEGATIVE_INFINITY milliseconds taken as microseconds) a timestamp's microseconds, or
// their thousandth for timestamp(0) to (3), a date's epoch day of -5877611-06-21 and -22; an array's timestamps as a
// timestamp column's, its dates through pgjdbc's java.sql.Date in the Connect JVM's calendar (UTC, as the relay takes
// it): the epoch days -622191234 and -625821272. The texts kInfinityDefault and kMinusInfinityDefault (a default's,
// from DebeziumColumnDefault) give Debezium's defaults instead: pgjdbc's LocalDateTime.MAX and MIN through its
// converters, a timestamp's microseconds saturated (then, for MAX, wrapped by the zone offset's subtraction) and a
// date's epoch day cut to an int. Under nanoseconds a timestamp saturates to a long (and has no default). nullopt: not
// an infinity of a numeric form that has one.
struct Infinity {
  bool positive;
  bool is_default;  // kInfinityDefault or kMinusInfinityDefault
};
std::optional<Infinity> InfinityOf(std::string_view text) {
  if (text == "infinity" || text == "-infinity") return Infinity{text == "infinity", false};
  if (IsInfinityDefault(text)) return Infinity{text == kInfinityDefault, true};
  return std::nullopt;
}

std::optional<int64_t> InfinityNumber(const ConnectColumn& column, std::string_view text) {
  const std::optional<Infinity> inf = InfinityOf(text);
  if (!inf) return std::nullopt;
  const auto [positive, is_default] = *inf;
  switch (column.form) {
    case ConnectForm::kTimestampMicros:
      if (is_default) return positive ? -9223372036853775807LL - 3 : INT64_MIN;
      return positive ? 9223372036825200000LL : -9223372036832400000LL;
    case ConnectForm::kTimestampMillis:
      if (is_default) return std::nullopt;  // Debezium's converter overflows: DebeziumColumnDefault gives no default
      return positive ? 9223372036825200LL : -9223372036832400LL;
    case ConnectForm::kDate:
      if (is_default) return positive ? 169560311 : -170999002;
      if (column.in_array) return positive ? -622191234 : -625821272;
      return positive ? -2147472692 : -2147472691;
    case ConnectForm::kTimestampNanos:
      if (is_default) return std::nullopt;  // as for kTimestampMillis
      return positive ? INT64_MAX : INT64_MIN;
    default:
      return std::nullopt;
  }
}

// The same as text: InfinityNumber's numbers, and under isostring Java's ISO text of the instants above (of
// LocalDateTime.MAX and MIN for a default, of java.sql.Date's for an array's dates); a timestamptz's is PostgreSQL's
// text, but an array's -infinity goes through java.sql.Timestamp: +292269055-12-02T23:00:00 at the column's fractional
// width. (Under connect ConnectMillis takes InfinityNumber's.) False: not an infinity of a form that has one.
bool AppendDebeziumInfinity(const ConnectColumn& column, std::string_view text, std::string* out) {
  if (std::optional<int64_t> n = InfinityNumber(column, text)) {
    out->append(std::to_string(*n));
    return true;
  }
  const std::optional<Infinity> inf = InfinityOf(text);
  if (!inf) return false;
  const auto [positive, is_default] = *inf;
  switch (column.form) {
    case ConnectForm::kIsoTimestamp:
      if (is_default) {
        out->append(positive ? "+999999999-12-31T23:59:59.999999999Z" : "-999999999-01-01T00:00:00Z");
      } else {
        out->append(positive ? "+294247-01-10T04:00:25.2Z" : "-290308-12-21T19:59:27.6Z");
      }
      return true;
    case ConnectForm::kIsoDate:
      if (is_default) {
        out->append(positive ? "+999999999-12-31Z" : "-999999999-01-01Z");
      } else if (column.in_array) {
        out->append(positive ? "+292278994-08-16Z" : "+292269055-12-02Z");
      } else {
        out->append(positive ? "-5877611-06-21Z" : "-5877611-06-22Z");
      }
      return true;
    case ConnectForm::kZonedTimestamp:
      if (is_default) return false;  // Debezium's converter overflows: no default
      if (!column.in_array || positive) {
        out->append(text);
        return true;
      }
      out->append("+292269055-12-02T23:00:00");
      if (column.fraction_digits > 0) {
        out->push_back('.');
        out->append(static_cast<size_t>(column.fraction_digits), '0');
      }
      out->push_back('Z');
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::Status AppendConnectValue(const ConnectColumn& column, std::string_view text, std::string* out) {
  if (AppendDebeziumInfinity(column, text, out)) return absl::OkStatus();
  switch (column.form) {
    case ConnectForm::kArray: {
      // Values.convertToString of a List: [e1,e2], each element appended "embedded": strings quoted with \ and "
      // escaped, numbers and booleans as Java prints them, null as null.
      const ConnectColumn element = ElementColumn(column);
      const bool quoted = QuotedInList(column);
      return AppendList(
          column, text, ",",
          [&](const std::string& e) {
            if (!quoted) return AppendConnectValue(element, e, out);
            std::string value;
            if (absl::Status st = AppendConnectValue(element, e, &value); !st.ok()) return st;
            AppendValuesString(value, out);
            return absl::OkStatus();
          },
          out);
    }
    case ConnectForm::kText:
    case ConnectForm::kEnum:
      out->append(text);
      return absl::OkStatus();
    case ConnectForm::kBoolean:
      if (text == "t" || text == "f") {
        out->append(text == "t" ? "true" : "false");
        return absl::OkStatus();
      }
      return Unreadable("boolean", text);
    case ConnectForm::kFloat32:
    case ConnectForm::kFloat64: {
      absl::StatusOr<std::string> s = JavaDoubleText(text, column.form == ConnectForm::kFloat32);
      if (!s.ok()) return s.status();
      out->append(*s);
      return absl::OkStatus();
    }
    case ConnectForm::kMoney: {
      std::optional<std::string> money = DebeziumMoneyText(text, column.money_digits);
      if (!money) return Unreadable("money", text);
      out->append(*money);  // a scale of 0 or more: BigDecimal.toString is plain
      return absl::OkStatus();
    }
    case ConnectForm::kMoneyString:
    case ConnectForm::kMoneyDouble: {
      std::optional<std::string> money = DebeziumMoneyText(text);
      if (!money) return Unreadable("money", text);
      if (column.form == ConnectForm::kMoneyString) {
        out->append(*money);
        return absl::OkStatus();
      }
      absl::StatusOr<std::string> d = JavaDoubleText(*money, /*is_float=*/false);
      if (!d.ok()) return d.status();
      out->append(*d);
      return absl::OkStatus();
    }
    case ConnectForm::kDecimalString: {
      // BigDecimal.toPlainString of pgjdbc's value: PostgreSQL's text, digits and scale as stored.
      if (!ParseDecimal(text)) return Unreadable("numeric", text);
      out->append(text);
      return absl::OkStatus();
    }
    case ConnectForm::kBits: {
      // A BitSet of the string (its last character bit 0), BitSet.toByteArray: little-endian, up to the highest set
      // bit.
      if (text.find_first_not_of("01") != std::string_view::npos) return Unreadable("bit string", text);
      std::string bytes((text.size() + 7) / 8, '\0');
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[text.size() - 1 - i] == '1') bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
      }
      while (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();
      out->append(absl::Base64Escape(bytes));
      return absl::OkStatus();
    }
    case ConnectForm::kPoint:
      return AppendPoint(text, /*json=*/false, out);
    case ConnectForm::kGeometry:
      return AppendGeometry(text, out);
    case ConnectForm::kVector:
    case ConnectForm::kSparseVector:
      return AppendVector(column, text, VectorText::kHeader, out);
    case ConnectForm::kHstore: {
      absl::StatusOr<std::string> json = DebeziumHstoreJson(text);
      if (!json.ok()) return json.status();
      out->append(*json);
      return absl::OkStatus();
    }
    case ConnectForm::kHstoreMap: {  // Values.convertToString of a Map: {"k":"v","n":null}
      absl::StatusOr<std::vector<HstorePair>> pairs = HstoreInHashMapOrder(text);
      if (!pairs.ok()) return pairs.status();
      AppendHstore(*pairs, HstoreText::kValues, out);
      return absl::OkStatus();
    }
    case ConnectForm::kBitBoolean:
    {
      // Integer.valueOf(s, 2): a value below 2^31, else Debezium's conversion fails.
      const size_t one = text.find('1');
      if (text.empty() || text.find_first_not_of("01") != std::string_view::npos ||
          (one != std::string_view::npos && text.size() - one > 31)) {
        return Unreadable("bit string", text);
      }
      out->append(one != std::string_view::npos ? "true" : "false");
      return absl::OkStatus();
    }
    case ConnectForm::kDecimal: {
      absl::StatusOr<std::string> s = JavaBigDecimalText(text);
      if (!s.ok()) return s.status();
      out->append(*s);
      return absl::OkStatus();
    }
    case ConnectForm::kVariableDecimal: {
      std::optional<Decimal> d = ParseDecimal(text);
      if (!d) return Unreadable("numeric", text);
      // Debezium strips the trailing zeros (BigDecimal.stripTrailingZeros, then a negative scale set to 0).
      while (d->scale > 0 && d->digits.size() > 1 && d->digits.back() == '0') {
        d->digits.pop_back();
        --d->scale;
      }
      if (d->digits == "0") d->scale = 0;
      out->append(Cat("{\"scale\":", d->scale, ",\"value\":\"", absl::Base64Escape(TwosComplementBytes(*d)), "\"}"));
      return absl::OkStatus();
    }
    case ConnectForm::kDate: {
      size_t pos = 0;
      int64_t days = 0;
      if (!ReadDate(text, pos, &days) || pos != text.size()) return Unreadable("date", text);
      out->append(std::to_string(days));
      return absl::OkStatus();
    }
    case ConnectForm::kTimeMillis:
    case ConnectForm::kTimeMicros:
    case ConnectForm::kTimeNanos: {
      size_t pos = 0;
      int64_t micros = 0;
      if (!ReadTime(text, pos, &micros, /*max_hour=*/24) || pos != text.size()) return Unreadable("time", text);
      if (column.in_array) micros -= micros % 1000;
      out->append(std::to_string(column.form == ConnectForm::kTimeMillis  ? micros / 1000
                                 : column.form == ConnectForm::kTimeNanos ? micros * 1000
                                                                          : micros));
      return absl::OkStatus();
    }
    case ConnectForm::kConnectDate:
    case ConnectForm::kConnectTime:
    case ConnectForm::kConnectTimestamp: {
      absl::StatusOr<int64_t> millis = ConnectMillis(column, text);
      if (!millis.ok()) return millis.status();
      AppendJavaUtilDate(*millis, out);
      return absl::OkStatus();
    }
    case ConnectForm::kIsoDate:
    case ConnectForm::kIsoTime:
    case ConnectForm::kIsoTimestamp:
      return AppendIsoText(column, text, out);
    case ConnectForm::kTimestampMillis:
    case ConnectForm::kTimestampMicros:
    case ConnectForm::kTimestampNanos: {
      absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, /*with_zone=*/false);
      if (!micros.ok()) return Unreadable("timestamp", text);
      if (column.form == ConnectForm::kTimestampNanos) {
        if (BeyondLongOfNanos(*micros)) {
          // Debezium's converter gives null (DebeziumConvertsToNull): an array's element is null; a NOT NULL
          // column's value fails.
          if (!column.in_array) return Unreadable("timestamp in nanoseconds", text);
          out->append("null");
          return absl::OkStatus();
        }
        out->append(std::to_string(*micros * 1000));
        return absl::OkStatus();
      }
      out->append(std::to_string(column.form == ConnectForm::kTimestampMillis ? FloorDiv(*micros, 1000) : *micros));
      return absl::OkStatus();
    }
    case ConnectForm::kZonedTimestamp: {
      absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, /*with_zone=*/true);
      if (!micros.ok()) return Unreadable("timestamptz", text);
      const int64_t seconds = FloorDiv(*micros, 1000000);
      const int64_t fraction = *micros - seconds * 1000000;
      const int64_t days = FloorDiv(seconds, 86400);
      int64_t in_day = seconds - days * 86400;
      int64_t year = 0;
      unsigned month = 0, day = 0;
      CivilFromDays(days, &year, &month, &day);
      if (year < 0 || year > 9999) return Unreadable("timestamptz", text);  // Java writes these with a sign
      char date[40];
      std::snprintf(date, sizeof date, "%04d-%02u-%02u", static_cast<int>(year), month, day);
      out->append(date);
      out->push_back('T');
      AppendTwoDigits(out, in_day / 3600);
      out->push_back(':');
      AppendTwoDigits(out, in_day / 60 % 60);
      out->push_back(':');
      AppendTwoDigits(out, in_day % 60);
      if (column.fraction_digits > 0) {
        // Exactly the column's precision of digits (ZonedTimestamp's fractional width).
        char f[16];
        std::snprintf(f, sizeof f, "%06d", static_cast<int>(fraction));
        out->push_back('.');
        out->append(f, static_cast<size_t>(std::min(column.fraction_digits, 6)));
        out->append(static_cast<size_t>(std::max(0, column.fraction_digits - 6)), '0');
      } else if (fraction != 0) {
        // ISO_OFFSET_DATE_TIME: as many digits as needed.
        char f[16];
        std::snprintf(f, sizeof f, "%06d", static_cast<int>(fraction));
        std::string_view digits(f, 6);
        while (digits.back() == '0') digits.remove_suffix(1);
        out->push_back('.');
        out->append(digits);
      }
      out->push_back('Z');
      return absl::OkStatus();
    }
    case ConnectForm::kInterval: {
      const std::optional<int64_t> micros = IntervalMicros(text);
      if (!micros) return Unreadable("interval", text);
      out->append(std::to_string(*micros));
      return absl::OkStatus();
    }
    case ConnectForm::kIntervalString: {
      const std::optional<std::string> iso = IntervalIsoText(text);
      if (!iso) return Unreadable("interval", text);
      out->append(*iso);
      return absl::OkStatus();
    }
    case ConnectForm::kZonedTime: {
      std::string whole;  // an array's element: the fraction dropped
      if (column.in_array) {
        const size_t dot = text.find('.');
        if (dot != std::string_view::npos) {
          const size_t end = text.find_first_not_of("0123456789", dot + 1);
          whole = Cat(text.substr(0, dot), end == std::string_view::npos ? "" : text.substr(end));
          text = whole;
        }
      }
      const std::optional<std::string> time = ZonedTimeText(text);
      if (!time) return Unreadable("timetz", text);
      out->append(*time);
      return absl::OkStatus();
    }
    case ConnectForm::kBytes: {
      absl::StatusOr<std::string> bytes = BytesOf(column, text);
      if (!bytes.ok()) return Unreadable("bytea", text.substr(0, 32));
      out->append(absl::Base64Escape(*bytes));
      return absl::OkStatus();
    }
    case ConnectForm::kBinaryString: {
      absl::StatusOr<std::string> bytes = BytesOf(column, text);
      if (!bytes.ok()) return Unreadable("bytea", text.substr(0, 32));
      switch (column.binary) {
        case ConnectColumn::BinaryText::kBase64: out->append(absl::Base64Escape(*bytes)); break;
        case ConnectColumn::BinaryText::kBase64UrlSafe: {
          std::string encoded = absl::Base64Escape(*bytes);  // Base64.getUrlEncoder() keeps the padding
          std::replace(encoded.begin(), encoded.end(), '+', '-');
          std::replace(encoded.begin(), encoded.end(), '/', '_');
          out->append(encoded);
          break;
        }
        case ConnectColumn::BinaryText::kHex: out->append(absl::BytesToHexString(*bytes)); break;
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown header form");
}

}  // namespace outbox::outbox
