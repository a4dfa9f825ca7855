// Header values as Debezium writes them: Debezium's PostgreSQL connector turns a column into a Kafka Connect value
// (under its defaults: decimal.handling.mode=precise, time.precision.mode=adaptive, binary.handling.mode=bytes),
// and Kafka Connect's SimpleHeaderConverter writes that value as text (Values.convertToString). The relay starts
// from PostgreSQL's text output of the column (pgoutput sends text), so for each type it redoes both steps:
// `t` becomes `true`, a timestamp the microseconds since the epoch, a bytea its base64, and so on. Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::outbox {

enum class ConnectForm : uint8_t {
  kText,              // STRING and the integers: PostgreSQL's text is what Java prints (text, varchar, bpchar with
                      // its padding, name, uuid, json, jsonb, xml, inet, cidr, macaddr, int2/4/8, oid)
  kBoolean,           // BOOLEAN: true / false
  kFloat32,           // FLOAT32: Float.toString
  kFloat64,           // FLOAT64: Double.toString
  kDecimal,           // numeric(p,s): Decimal (BigDecimal.toString)
  kVariableDecimal,   // numeric without a scale: io.debezium.data.VariableScaleDecimal, a struct printed
                      // {"scale":S,"value":"<base64 of the unscaled value's two's complement bytes>"}, trailing
                      // zeros stripped (12.50 has scale 1, 0.000 scale 0)
  kDate,              // io.debezium.time.Date: days since 1970-01-01
  kTimeMillis,        // time(0..3): io.debezium.time.Time, milliseconds past midnight
  kTimeMicros,        // time(4..6) and time: io.debezium.time.MicroTime, microseconds past midnight
  kTimestampMillis,   // timestamp(0..3): io.debezium.time.Timestamp, milliseconds since the epoch
  kTimestampMicros,   // timestamp(4..6) and timestamp: io.debezium.time.MicroTimestamp
  kZonedTimestamp,    // timestamptz: io.debezium.time.ZonedTimestamp, ISO-8601 in UTC ("...T11:45:07.123456Z")
  kBytes,             // bytea: BYTES, written base64
  kInterval,          // interval: io.debezium.time.MicroDuration, microseconds with a month of 365.25 / 12 days
                      // (interval.handling.mode=numeric), worked out in doubles as Debezium does
  kZonedTime,         // timetz: io.debezium.time.ZonedTime, ISO-8601 in UTC ("11:45:07.5Z": as many fraction
                      // digits as needed)
  kEnum,              // an enum type: io.debezium.data.Enum, a STRING (the label) whose schema lists the labels
  kMoney,             // money: a Decimal of scale 2 (money.fraction.digits' default), from the text as Debezium's
                      // PostgresMoney reads it (a leading currency symbol, parentheses and ',' removed), rounded
                      // HALF_UP to 2 digits
  kBits,              // bit(n) and varbit(n), n > 1, and varbit: io.debezium.data.Bits, BYTES (base64 in headers):
                      // the bit string as a number (its last bit the lowest), little-endian, as few bytes as it
                      // takes (none for 0)
  kBitBoolean,        // bit(1) and varbit(1): BOOLEAN, whether the bit string is not 0
  kHstore,            // hstore (hstore.handling.mode=json): io.debezium.data.Json, the JSON object Jackson writes of
                      // pgjdbc's HashMap of it, in the HashMap's iteration order ({"b":"2","a":null})
  kPoint,             // point: io.debezium.data.geometry.Point, a struct of x and y (FLOAT64), wkb (the point's
                      // well-known binary, little-endian: 21 bytes) and srid (null), printed
                      // {"x":1.5,"y":2.0,"wkb":"<base64>","srid":null}
  kGeometry,          // PostGIS geometry and geography: io.debezium.data.geometry.Geometry / Geography (the column's
                      // logical_name), a struct of wkb (PostGIS's extended well-known binary, the column's hex text
                      // decoded, SRID included) and srid (read from the EWKB, null without one), printed
                      // {"wkb":"<base64>","srid":4326}
  kVector,            // pgvector's vector and halfvec: io.debezium.data.DoubleVector / FloatVector (the column's
                      // logical_name), an ARRAY of FLOAT64 / FLOAT32, each element as Java prints it ([1.0,2.5])
  kSparseVector,      // pgvector's sparsevec: io.debezium.data.SparseDoubleVector, a struct of dimensions (INT16) and
                      // vector (a MAP of INT16 to FLOAT64, in Java's HashMap order), printed
                      // {"dimensions":5,"vector":{1:1.5,3:2.0}} by SimpleHeaderConverter; JsonConverter writes the
                      // map as [[1,1.5],[3,2.0]] (its keys are not strings)
  kHstoreMap,         // hstore under hstore.handling.mode=map: a MAP of STRING to optional STRING, in Java's HashMap
                      // order: {"k":"v","n":null} (SimpleHeaderConverter), a JSON object (JsonConverter), {k=v, n=null}
                      // (Struct.toString)
  kBinaryString,      // bytea under binary.handling.mode base64, base64-url-safe or hex: a STRING of the bytes in
                      // that encoding (ConnectColumn::binary)
  kConnectDate,       // date, time and timestamp under time.precision.mode=connect: Kafka Connect's Date (INT32 days),
  kConnectTime,       // Time (INT32 milliseconds past midnight) and Timestamp (INT64 milliseconds since the epoch),
  kConnectTimestamp,  // a java.util.Date that SimpleHeaderConverter formats by its value (Values.dateFormatFor:
                      // below a day "HH:mm:ss.SSS'Z'", whole days "yyyy-MM-dd", else both joined by 'T')
  kIsoDate,           // date, time and timestamp under time.precision.mode=isostring: io.debezium.time.IsoDate
  kIsoTime,           // ("2026-12-03Z"), IsoTime ("13:45:07.5Z", 24:00:00 as "00:00:00Z") and IsoTimestamp
  kIsoTimestamp,      // ("2026-12-03T13:45:07.123456Z"): STRINGs, the fraction as long as needed
  kIntervalString,    // interval under interval.handling.mode=string: io.debezium.time.Interval, a STRING in
                      // Debezium's ISO 8601 form ("P1Y2M-3DT4H5M6.789S")
  kTimeNanos,         // time under time.precision.mode=nanoseconds: io.debezium.time.NanoTime, nanoseconds past midnight
  kTimestampNanos,    // timestamp under time.precision.mode=nanoseconds: io.debezium.time.NanoTimestamp, nanoseconds
                      // since the epoch (beyond 2262 refused: a Java long overflows)
  kDecimalString,     // numeric under decimal.handling.mode=string: BigDecimal.toPlainString, a STRING (PostgreSQL's
                      // text of a finite numeric is that; NaN and the infinities are refused)
  kMoneyString,       // money under decimal.handling.mode=string: the parsed amount's toPlainString, a STRING
  kMoneyDouble,       // money under decimal.handling.mode=double: its doubleValue, a FLOAT64 (Double.toString)
  kArray,             // a one-dimensional array of text types, integers, boolean, floats, numerics, uuid, json,
                      // jsonb, network addresses, ranges, bytea, date, time, timetz, timestamp, timestamptz, an
                      // enum, or the extension types citext, ltree, hstore, geometry and geography: a
                      // Connect ARRAY of optional elements, each the element type's value, written [e1,e2,...] by
                      // SimpleHeaderConverter (strings quoted, \ and " escaped; NULL as null) and as a JSON array
};

struct ConnectColumn {
  ConnectForm form = ConnectForm::kText;
  // kZonedTimestamp: the fraction digits written (the column's precision, 6 without one; 0 = none).
  int fraction_digits = 0;
  // kEnum: the schema's "allowed" parameter, the type's labels in their sort order joined with commas (Debezium's
  // TypeRegistry reads them from pg_enum when the connector starts; the relay when a session starts).
  std::string allowed = {};
  // kText of an extension's type (the catalog names it; its OID is the database's own): the schema's name, as
  // Debezium's TypeRegistry finds the type by its name (ltree: io.debezium.data.Ltree; citext and isbn: none).
  // kGeometry: io.debezium.data.geometry.Geometry or io.debezium.data.geometry.Geography. kVector:
  // io.debezium.data.DoubleVector or io.debezium.data.FloatVector. kArray of an extension's type: its elements'.
  std::string logical_name = {};
  // kBits: the column's length in bits (the schema's "length" parameter; Integer.MAX_VALUE for varbit).
  int bits = 0;
  // kArray: the elements' form and type OID (0 for an extension's type, whose OID is the database's own).
  ConnectForm element = ConnectForm::kText;
  uint32_t element_type = 0;
  // An array's element: Debezium reads array elements through pgjdbc's java.sql.Time, so a time element keeps
  // milliseconds (kTimeMicros: 13:45:07.123456 gives 49507123000) and a timetz element whole seconds.
  bool in_array = false;
  // kBinaryString: the encoding (Java's Base64 encoder, its URL-safe one with padding, or lower-case hex).
  enum class BinaryText : uint8_t { kBase64, kBase64UrlSafe, kHex };
  BinaryText binary = BinaryText::kBase64;
  // kMoney: the Decimal's scale (Debezium's money.fraction.digits), which the value is rounded to (HALF_UP).
  int money_digits = 2;
  // kArray of an isbn[]: Debezium's schema of its elements is a required string (as an enum array's), so a NULL
  // element fails Kafka Connect's check.
  bool required_elements = false;
  // kBytes / kBinaryString (and an array's elements): the value's bytes are its PostgreSQL text, not bytea's hex (a
  // type Debezium does not know, under include.unknown.datatypes=true: UnknownDatatypeColumn).
  bool text_bytes = false;
  // With text_bytes: the text is a geometric value's, whose bytes Debezium takes from pgjdbc's text of it (each
  // coordinate as Java's Double.toString prints it: (3,4),(1,2) gives (3.0,4.0),(1.0,2.0)).
  bool java_doubles = false;
  // kArray: the character between its elements in PostgreSQL's text (the element type's typdelim), when the form
  // names it (a box[]'s ';', a user-defined type's from the catalog); 0: ',' (':' for PostGIS's types).
  char delimiter = 0;
  // A type Debezium gives a schema but whose value its converter loses (seen side by side): a bit[]'s is always null
  // (under the schema of a bit(n): Bits, or a boolean for n = 1), as is a sparsevec[]'s; an int2vector's and an
  // oidvector's always an empty array (of int16 or int64) when not NULL. The mapper writes the value so (only as a
  // placed field).
  enum class Lost : uint8_t { kNone, kNull, kEmptyArray };
  Lost lost = Lost::kNone;
};

// Whether Debezium's converter fails on this value of `column`, so that its event.converting.failure.handling.mode
// decides (fail stops the connector; warn and skip leave the field unset, which reads as null): an array with a NULL
// element where Debezium's value cannot hold one (an enum's or an isbn[], whose elements are required; an ltree[]).
bool DebeziumConversionFails(const ConnectColumn& column, std::string_view text);

// Whether Debezium's converter gives null for this value of a nullable column, whatever its
// event.converting.failure.handling.mode (the converter catches its own error, logs a warning and returns null): a
// timestamp beyond a long of nanoseconds (2262) under time.precision.mode=nanoseconds. The same value as an array's
// element is a null element (AppendConnectValue writes it so); in a NOT NULL column it is an error
// (AppendConnectValue's), as Debezium's converter then throws.
bool DebeziumConvertsToNull(const ConnectColumn& column, std::string_view text);

// Whether Debezium gives a column of `type_oid` an integer schema (int2, int4, int8, oid: int16, int32, int64):
// JsonConverter writes a JSON number, and PostgreSQL's text is that number.
bool IsIntegerType(uint32_t type_oid);

// The form of a column of an extension's type Debezium reads, by the type's name (pg_type.typname, as Debezium's
// TypeRegistry finds citext, ltree, isbn, hstore, PostGIS's geometry and geography, arrays of these but isbn (_citext,
// _ltree, _hstore, _geometry, _geography), and pgvector's vector, halfvec and sparsevec), or nullopt for any other
// name.
std::optional<ConnectColumn> ExtensionColumn(std::string_view type_name);

// Whether Debezium leaves a column of the built-in type `type_oid` out of its change events (under
// include.unknown.datatypes=false, its default): its PostgresValueConverter has no schema for it (the geometric types
// but point, the arrays of money, name, interval, varbit, xml, point and refcursor, and the types pgjdbc knows no SQL
// type of: tid, xid, xid8, cid, pg_lsn, the snapshots, tsquery, jsonpath, aclitem, the reg* types and the
// multiranges, and their arrays), so that its Outbox Event Router finds no such field. Each is compared side by side
// (`TypesDebeziumLeavesOut...`). Under include.unknown.datatypes=true (`unknown_included`) Debezium writes the others
// as bytes, and leaves out only the arrays its converter names (money[], name[], interval[], varbit[], xml[],
// point[], refcursor[]).
bool DebeziumLeavesOut(uint32_t type_oid, bool unknown_included = false);

// Under include.unknown.datatypes=true, the form of a column of a built-in type DebeziumLeavesOut otherwise: bytes of
// its PostgreSQL text (Debezium's converter takes pgoutput's text as bytes), an array of them a list of required
// bytes (SchemaBuilder.array(binaryMode.getSchema())); the geometric types' bytes are pgjdbc's text of them (Java's
// doubles: (3.0,4.0),(1.0,2.0) for a box). nullopt for the types Debezium leaves out either way, and for any other.
std::optional<ConnectColumn> UnknownDatatypeColumn(uint32_t type_oid);

// The form of a value Debezium takes as the bytes of its PostgreSQL text (include.unknown.datatypes): bytes, or with
// an `element_type` a list of required bytes whose elements `delimiter` separates (0: ',').
ConnectColumn TextBytesColumn(uint32_t element_type = 0, char delimiter = 0);

// The form of a column of `type_oid` with `type_modifier` (pgoutput's Relation message gives both).
// FAILED_PRECONDITION naming the type for a type whose Debezium value the relay does not reproduce (arrays,
// interval, money, bit, timetz, user-defined types...).
absl::StatusOr<ConnectColumn> ConnectColumnOf(uint32_t type_oid, int32_t type_modifier);

// Appends the schema Debezium's connector gives a column of `type_oid` with `type_modifier` (under its default modes)
// as Kafka Connect's JsonConverter writes it with schemas.enable=true (asJsonSchema): {"type":"string","optional":true,
// "name":"io.debezium.data.Json","version":1} for a nullable jsonb; int2, int4, int8 and oid are int16, int32, int64
// and int64, bytea bytes, json, jsonb, uuid and xml named strings, numeric(p,s) a Decimal (bytes with its scale and
// precision as parameters), numeric a VariableScaleDecimal struct, the times their io.debezium.time types.
// FAILED_PRECONDITION for a type ConnectColumnOf does not have.
absl::Status AppendConnectJsonSchema(uint32_t type_oid, int32_t type_modifier, bool optional, std::string* out);
// The same for a column whose form is known (an enum's comes from the catalog, not from its type OID).
// `more_parameters`: "key":"value" pairs put after the schema's own parameters (SourceTypeParameters').
void AppendConnectJsonSchema(const ConnectColumn& column, uint32_t type_oid, int32_t type_modifier, bool optional,
                             std::string* out, std::string_view more_parameters = {});

// Appends the JSON Kafka Connect's JsonConverter writes for Debezium's value of a column (convertToJson), given its
// PostgreSQL text: strings with Jackson's escapes, integers, booleans and times as JSON numbers and literals, floats
// as Java prints them (NaN and the infinities as strings), numeric(p,s) as the base64 of its unscaled value
// (decimal.format=BASE64, the default), bytea as base64. INVALID_ARGUMENT as AppendConnectValue.
absl::Status AppendConnectJsonValue(const ConnectColumn& column, uint32_t type_oid, std::string_view text,
                                    std::string* out);

// Whether the relay writes Java's toString of the column's value (Struct.toString under StringConverter prints it;
// AppendJavaToString): FAILED_PRECONDITION for bit strings, numeric without a scale, point, the PostGIS types, an
// unknown datatype's bytes and arrays of bytes, whose values Java prints with an identity hash code. A bytea's value
// is a ByteBuffer, whose text is its class, position, limit and capacity.
absl::Status CheckJavaText(const ConnectColumn& column);

// Java's toString of the HeapByteBuffer Debezium holds a bytea's `n` bytes in (binary.handling.mode=bytes).
std::string JavaByteBufferText(size_t n);

// The text DebeziumColumnDefault gives for an infinite default of a date or of a timestamp longer than 3 digits:
// PostgreSQL reads it as the infinity it is (its input ignores case, and its output never writes it so), and the
// forms write Debezium's default for it, which is not its value's (pgjdbc's LocalDateTime.MAX and MIN through
// Debezium's converters: a timestamp's microseconds saturated, or wrapped, and a date's epoch day cut to an int). The
// mapper gives it only to fields written as Debezium's values; a NULL elsewhere is a per-event error.
inline constexpr std::string_view kInfinityDefault = "Infinity";
inline constexpr std::string_view kMinusInfinityDefault = "-Infinity";
inline bool IsInfinityDefault(std::string_view text) {
  return text == kInfinityDefault || text == kMinusInfinityDefault;
}

// Debezium's default value of a column (PostgresDefaultValueConverter over the catalog's default expression, as
// pg_get_expr prints it), which Kafka Connect's Struct.get returns for a NULL and JsonConverter writes in the
// column's schema. kValue: `text` is that value as PostgreSQL would print it, so the forms above write it as
// Debezium's; kNone: Debezium's schema has no default (no expression, a NULL:: cast, an expression its parser
// refuses, or a type it has no parser for, or numeric without a scale, whose VariableScaleDecimal struct Debezium
// drops as a default: the NULL stays NULL); kNotReproduced: Debezium has one the relay does not work out (literals
// the forms cannot carry, such as BC dates, and generated columns). Date and time literals without an offset, which pgjdbc reads
// in the JVM's time zone, are read as UTC.
struct ConnectDefault {
  enum class Kind : uint8_t { kNone, kValue, kNotReproduced };
  Kind kind = Kind::kNone;
  std::string text;
};
// `form`: the column's form under the connector's time.precision.mode (ConnectColumnOf's, adaptive's, when absent),
// whose converter reads an infinite date or timestamp default.
ConnectDefault DebeziumColumnDefault(uint32_t type_oid, int32_t type_modifier,
                                     const std::optional<std::string>& expression, bool generated,
                                     std::optional<ConnectForm> form = std::nullopt);
// The same for a column of the enum type `type_name` (pg_type.typname), as Debezium's extractEnumDefault reads it:
// the text between the quotes of '<label>'::<type> when the cast names the column's type (a schema before it is
// ignored), without undoubling quotes ('it''s' gives it''s); anything else gives no default.
ConnectDefault DebeziumEnumDefault(std::string_view type_name, const std::optional<std::string>& expression,
                                   bool generated);

// Debezium's money value (PostgresMoney.parse, then setScale(fraction_digits, HALF_UP)) as decimal text, given PostgreSQL's text
// of it in the server's lc_monetary ("$1,234.56", "-$0.50", "(1.00)"); nullopt where Debezium's parse fails (a
// symbol after the number, a locale's '.' grouping).
std::optional<std::string> DebeziumMoneyText(std::string_view text, int fraction_digits = 2);

// Java's toString of Debezium's value of a column (Struct.toString prints it): AppendConnectValue's text, but for an
// array, which List.toString prints [e1, e2, null] (elements unquoted, ", " between them).
absl::Status AppendJavaToString(const ConnectColumn& column, std::string_view text, std::string* out);

// The elements of a one-dimensional array as PostgreSQL prints it ({a,"b c",NULL}; {} for none), unquoted and
// unescaped (nullopt: NULL); explicit bounds ([0:1]={...}) are skipped, as pgjdbc's parser skips them. `delimiter`:
// the element type's (pg_type.typdelim: ':' for PostGIS's types). INVALID_ARGUMENT for a multi-dimensional array,
// whose Debezium value loses its data (each inner array null, or Java's identity-hash text of it), and for text that
// is not an array.
absl::StatusOr<std::vector<std::optional<std::string>>> ParsePgArray(std::string_view text, char delimiter = ',');
// The number of inner arrays of a multi-dimensional array as PostgreSQL prints it ({{1,2},{3,4}}: 2; bounds skipped),
// or nullopt for a one-dimensional array or text that is not an array.
std::optional<size_t> MultiDimensionalLength(std::string_view text, char delimiter = ',');

// Appends the header text of one value, given PostgreSQL's text output of it (DateStyle ISO, TimeZone UTC, as the
// relay's replication session has them). INVALID_ARGUMENT for a value the form cannot carry (infinite dates and
// timestamps, NaN numerics), naming it.
absl::Status AppendConnectValue(const ConnectColumn& column, std::string_view text, std::string* out);

// Java's Double.toString / Float.toString of a value given as PostgreSQL's float8 / float4 text (JDK 19 and later:
// the shortest decimal that rounds back, at least two digits; JDK 17 prints a few values with more digits, for
// example 2e23 as 1.9999999999999998E23).
absl::StatusOr<std::string> JavaDoubleText(std::string_view text, bool is_float);

// java.math.BigDecimal.toString of a decimal given as PostgreSQL's numeric text ("-12.500"): plain, or scientific
// when the scale is negative or the adjusted exponent is below -6 ("1.000E-7", "0E-10").
absl::StatusOr<std::string> JavaBigDecimalText(std::string_view text);

// The JSON string literal Kafka Connect's JsonConverter (Jackson, defaults) writes for `text` (UTF-8): quotes,
// backslash and control characters escaped (\b \t \n \f \r, else \u00XX), characters beyond U+FFFF as two
// \uXXXX surrogates, a lone surrogate in generalized UTF-8 (ED A0..BF xx) as its \uXXXX, every other character as
// its UTF-8 bytes.
void AppendJsonString(std::string_view text, std::string* out);

// Debezium's JSON text of an hstore (hstore.handling.mode=json), given PostgreSQL's text of it ("a"=>"1", "b"=>NULL):
// pgjdbc's HStoreConverter reads the pairs into a java.util.HashMap in order, and Jackson writes them in the map's
// iteration order (the buckets of Java's String.hashCode, spread and masked by the table's size, which grows by
// doubling past three quarters full; within a bucket, insertion order). INVALID_ARGUMENT for unreadable text, and
// for a map whose bucket would become a red-black tree (nine keys in one bucket of a table of 64 or more), whose order
// the relay does not reproduce.
absl::StatusOr<std::string> DebeziumHstoreJson(std::string_view text);
// The pairs of an hstore in the order Debezium's HashMap of it iterates (DebeziumHstoreJson's), and their text as
// Jackson writes the map (kJackson, hstore.handling.mode=json), JsonConverter a map of strings (kJsonConverter),
// SimpleHeaderConverter (kValues: backslash and quote escaped) or HashMap.toString (kJava: {k=v, n=null}).
struct HstorePair {
  std::string key;
  std::optional<std::string> value;
};
absl::StatusOr<std::vector<HstorePair>> HstoreInHashMapOrder(std::string_view text);
enum class HstoreText : uint8_t { kJackson, kJsonConverter, kValues, kJava };
void AppendHstore(const std::vector<HstorePair>& pairs, HstoreText as, std::string* out);

// Appends Debezium's value of a pgvector column (kVector, kSparseVector) given its text ("[1,2.5]", "{1:1.5,3:2}/5")
// as SimpleHeaderConverter (kHeader), JsonConverter (kJson) or Java's toString (kJava) writes it. INVALID_ARGUMENT
// naming the value where Debezium's converter fails (a sparsevec of more than 32,767 dimensions: Short.parseShort)
// or Java's HashMap order is not reproduced (a tree bin).
enum class VectorText : uint8_t { kHeader, kJson, kJava };
absl::Status AppendVector(const ConnectColumn& column, std::string_view text, VectorText as, std::string* out);

// Microseconds since 1970-01-01 00:00 of PostgreSQL's timestamp / timestamptz text ("2024-05-01 12:00:00.123456",
// with a trailing +HH[:MM[:SS]] offset when `with_zone`). BC dates and infinity are INVALID_ARGUMENT.
absl::StatusOr<int64_t> ParseTimestampMicros(std::string_view text, bool with_zone);

}  // namespace outbox::outbox
