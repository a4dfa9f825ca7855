// Debezium's column mappers (io.debezium.relational.mapping): column.truncate.to.N.chars, column.mask.with.N.chars
// and column.mask.hash[.v2].ALGORITHM.with.salt.SALT change a column's value after Debezium's converter made it and
// before the Outbox Event Router reads the row, so the topic, key, payload and headers carry the changed value. The
// relay keeps a column's PostgreSQL text until it writes the record, so it applies a mapper to that text where the
// text is what Debezium's value holds: a mask to the character columns (JDBC CHAR and VARCHAR: text, varchar, bpchar,
// name, "char", an enum), a truncation to a STRING that is the column's text and to a bytea's bytes. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "config/java_regex.h"
#include "outbox/connect_header.h"

namespace outbox::outbox {

// What the mapper Debezium picks for one column does to its value.
struct ColumnValueMap {
  enum class Kind : uint8_t {
    kNone,           // no mapper, or one that leaves this column's value as it is
    kMask,           // every value, NULL too, becomes `mask` (MaskingValueConverter)
    kHash,           // a value becomes the lower-case hex of digest(salt, value) cut to `keep` characters when the
                     // column has a length (HashValueConverter, then TruncatingValueConverter); NULL stays NULL
    kTruncateText,   // a value longer than `keep` UTF-16 code units is cut to them (String.substring)
    kTruncateBytes,  // a bytea (PostgreSQL's hex text) longer than `keep` bytes is cut to them
  };
  Kind kind = Kind::kNone;
  // Whether Debezium picks a column mapper for the column (which then adds `schema_parameters`, if any, and no
  // propagated source type), even one that leaves its values alone.
  bool chosen = false;
  std::string mask;
  std::string digest;  // kHash: OpenSSL's name of the algorithm
  std::string salt;
  bool v2 = false;     // kHash: hash the value's UTF-8 (v2) or Java's serialization of the String (v1)
  int64_t keep = 0;
  // kTruncateText: the value is written only as JSON (a JsonConverter), where Jackson writes the high surrogate of an
  // emoji cut in half as \uXXXX: it is kept, as its three bytes of generalized UTF-8 (AppendJsonString escapes them);
  // else it becomes '?', as Java's UTF-8 encoder writes it.
  bool json = false;
  // The parameter the mapper adds to the column's schema ("masked":"true", "truncateLength":"20"; AppendConnectJson
  // Schema's more_parameters), also when it leaves the value alone; "" for none.
  std::string schema_parameters;
};

// One column as the mappers see it.
struct MappedColumn {
  std::string_view column;     // its name, for errors
  std::string_view qualified;  // <schema>.<table>.<column>, which the patterns match
  ConnectForm form = ConnectForm::kText;  // Debezium's value of it (its form under the connector's modes)
  bool form_known = true;      // false: the relay has no form of its type
  uint32_t type = 0;           // its type OID, read as Debezium reads it (a domain as its root type)
  bool character = false;      // JDBC CHAR or VARCHAR for Debezium (text, varchar, bpchar, name, "char", an enum; not
                               // a domain)
  int64_t length = 0;          // Debezium's Column.length() (SourceColumnLength)
  bool length_known = true;    // false: the relay does not work it out (SourceColumnLength refused)
  bool propagated = false;     // column.propagate.source.type or datatype.propagate.source.type selects it
};

// The rules of outbox.column_mappers, compiled once.
class ColumnMappers {
 public:
  explicit ColumnMappers(const std::vector<config::ColumnMapperRule>& rules);
  bool empty() const { return rules_.empty(); }

  // The mapper Debezium uses for `column` (the first matching rule, in ColumnMappers.create's order of kinds; a
  // propagation before the hashes) and what it does to its values. FAILED_PRECONDITION, naming the column and the
  // key, where the relay does not reproduce the value: a truncation of a STRING that is not the column's text (a
  // timestamptz's ISO text, a numeric under decimal.handling.mode=string...), two rules of one kind with different
  // parameters (Debezium's choice follows a hash order), a name beyond ASCII.
  absl::StatusOr<ColumnValueMap> For(const MappedColumn& column) const;

 private:
  struct Rule {
    config::ColumnMapperRule rule;
    std::vector<config::RouteRegex> patterns;
  };
  std::vector<Rule> rules_;
};

// Applies `map` to a column's value (`null`, or PostgreSQL's text in `text`); `scratch` is reused. INVALID_ARGUMENT
// when the digest cannot be made.
absl::Status ApplyColumnMap(const ColumnValueMap& map, bool* null, std::string* text, std::string* scratch);

// Java's String.substring(0, units) of UTF-8 text, written back as UTF-8: a supplementary character counts two UTF-16
// code units, and one cut in half leaves its high surrogate, which Java's UTF-8 encoder writes as '?' (or, with
// `keep_surrogate`, its three bytes of generalized UTF-8, ED A0..AF xx, for a JSON writer to escape).
void TruncateJavaString(std::string_view utf8, int64_t units, bool keep_surrogate, std::string* out);

// What Java's ObjectOutputStream writes for a String (HashingByteArrayStrategy.V1): the stream header, then
// TC_STRING and a two-byte length (TC_LONGSTRING and eight bytes above 65,535) of its modified UTF-8, where a
// supplementary character is two three-byte surrogates.
std::string JavaSerializedString(std::string_view utf8);

// The lower-case hex of the `digest` (OpenSSL's name) of salt then data.
absl::StatusOr<std::string> HexDigest(std::string_view digest, std::string_view salt, std::string_view data);

}  // namespace outbox::outbox
