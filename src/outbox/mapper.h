// OutboxMapper: turns a decoded INSERT of the outbox table (and its Relation) into the Kafka record SPEC.md §4
// describes: topic from the route template, key, value, headers (id, additional fields, source_lsn) and
// timestamp. Pure: no I/O. Owned by the loop thread; the returned record views the mapper's reused buffers and
// the message's bytes, so it is valid until the next Map call or until the message buffer is freed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/lsn.h"
#include "common/record.h"
#include "config/config.h"
#include "config/java_regex.h"
#include "outbox/column_mapper.h"
#include "outbox/connect_header.h"
#include "outbox/json_expand.h"
#include "pg/pgoutput.h"

namespace outbox::v1 {
class Envelope;  // proto/outbox/v1/envelope.proto
}  // namespace outbox::v1

namespace outbox::outbox {

// The content-type header of a record whose value is an outbox.v1.Envelope (outbox.format: protobuf).
inline constexpr std::string_view kEnvelopeContentType = "application/x-protobuf; messageType=outbox.v1.Envelope";

// The neutral record (common/record.h), by its old names here.
using ::outbox::Header;
using ::outbox::OwnedRecord;
using ::outbox::Record;

// A per-event error that `delivery.on_error` decides on. Everything else that Map returns is fatal.
// Per-event errors use absl::StatusCode::kInvalidArgument; a configured column missing from the relation is
// kFailedPrecondition (fatal whatever on_error says).
bool IsPerEventError(const absl::Status& status);

// Whether the text is empty once Java's String.trim() is done with it (only characters up to U+0020): what
// Debezium's Outbox Event Router calls an empty payload (route.tombstone.on.empty.payload).
bool BlankAsJavaTrims(std::string_view text);

// Is `name` a legal Kafka topic name ([a-zA-Z0-9._-], 1 to 249 characters, not "." or "..")?
bool IsLegalTopicName(std::string_view name);

// The topic of an event from its route column's value, compiled once from the config. Either the template
// (`outbox.route.topic`: every "${routedByValue}" replaced by the value), or Debezium's RegexRouter form when
// `route_topic_regex` is set (a Java pattern and replacement, run on PCRE2 by config::RouteRegex): the pattern must
// match the whole value, then the first match is replaced, else the bare value is the topic. Never throws, and the
// caller checks the result like any topic. INVALID_ARGUMENT when the pattern does not compile (the config layer
// refuses those) or RouteRegex::Route gives no topic (a match PCRE2 gives up on, a route that depends on the
// JDK). Immutable after construction.
class TopicRouter {
 public:
  explicit TopicRouter(const config::OutboxConfig& config);
  absl::StatusOr<std::string> Route(std::string_view routed_by_value) const;

 private:
  std::string template_;
  std::optional<config::RouteRegex> regex_;  // nullopt: the template form
  bool regex_broken_ = false;                // a pattern or replacement that did not compile: no topic
};

// Formats the topic for one value, "" where TopicRouter::Route gives an error (compiles the regex on every call:
// for tests and one-off use; the mapper keeps a TopicRouter).
std::string RouteTopic(const config::OutboxConfig& config, std::string_view routed_by_value);
std::string RouteTopic(const TopicRouter& router, std::string_view routed_by_value);

// Parses PostgreSQL's text output of timestamp/timestamptz (ISO DateStyle, TimeZone=UTC: "2024-05-01 12:00:00.123456+00")
// into Unix epoch milliseconds (microseconds truncated). `with_zone` accepts a trailing +HH[:MM[:SS]] / -HH offset.
absl::StatusOr<int64_t> ParseTimestampMillis(std::string_view text, bool with_zone);

// Decodes bytea's hex output ("\x0a1b...") into raw bytes.
absl::StatusOr<std::string> DecodeByteaHex(std::string_view text);
// Decodes hex digits, either case, two per byte ("0A1b"): PostGIS's text of a geometry. INVALID_ARGUMENT says what is
// wrong ("an odd number of hex digits", "a non-hex digit") for the caller to name the value.
absl::StatusOr<std::string> DecodeHex(std::string_view hex);

// A UUID version 7 (RFC 9562) in the canonical lower-case text: the 48-bit Unix time in milliseconds, then the
// version, 12 bits of `random_a`, the variant and 62 bits of `random_b`.
std::string FormatUuidV7(int64_t unix_ms, uint64_t random_a, uint64_t random_b);

// No form: a key or payload written from its text (a logical message's, or a column's that is a string, an integer,
// an enum or a bytea).
inline const std::optional<ConnectColumn> kFromText;

class OutboxMapper {
 public:
  explicit OutboxMapper(const config::OutboxConfig& config);
  ~OutboxMapper();

  // The __debezium.context.runId header's value (outbox.debezium_context_logical_name), made once per run by the
  // caller (FormatUuidV7 over the clock and a random source).
  void SetRunId(std::string run_id) { run_id_ = std::move(run_id); }

  // Forgets the column positions of `oid`: call on every Relation message (its layout may have changed).
  void OnRelation(uint32_t oid) { bindings_.erase(oid); }

  // outbox.key_converter / value_converter json_schema: the schema Debezium gives the key and payload columns says
  // whether each is optional (nullable) and carries its default, which a Relation message leaves out; an enum
  // column's header or envelope value has the type's labels in its schema (io.debezium.data.Enum). The caller
  // reads the outbox table's columns from the catalog at each Relation message of the outbox, as Debezium does
  // (DeliveryCore::catalog_due), when NeedsCatalog, and gives them here; Map refuses a json_schema column until then.
  bool NeedsCatalog() const;
  void SetCatalog(std::vector<pg::ColumnCatalog> columns);

  // True when `relation` is the configured outbox table.
  bool IsOutbox(const pg::Relation& relation) const;

  // Binds the columns of `relation` as Map does at the table's first INSERT (each placement, each column's type and
  // the form its value takes) and returns the fatal error Map would return, else OK. `outbox-relay check` gives it
  // the layout the catalog has, so that what `run` would refuse at the first event shows before.
  absl::Status CheckBinding(const pg::Relation& relation);

  // Maps one INSERT. `commit_lsn` is the transaction's commit LSN (the source_lsn header), `commit_time_ms` the
  // fallback timestamp. `lsn_for_errors` names the position in errors.
  absl::StatusOr<Record> Map(const pg::Relation& relation, const pg::TupleData& tuple, Lsn commit_lsn,
                             int64_t commit_time_ms);

  // Maps a logical decoding message's content: a JSON object whose field names are the table's column names
  // ({"id":…,"aggregatetype":…,"aggregateid":…,"type":…,"payload":…}) to the same record a row gives. A string
  // value gives its decoded text, any other JSON value its exact source bytes (never re-serialized); null or
  // absent gives NULL. Content that is not a JSON object is a per-event error.
  absl::StatusOr<Record> MapMessage(std::string_view content, Lsn commit_lsn, int64_t commit_time_ms);

  // The row of the last Map call as it was, for a dead letter after a per-event error: key and payload text as
  // read, headers `id` (when not NULL), the additional fields and `source_lsn`; the topic is left empty. Valid
  // after Map returned a per-event error (or a record), until the next Map call.
  Record Original(Lsn commit_lsn, int64_t commit_time_ms);

  // A record of a streamed transaction is mapped before its commit is known; at replay this sets what depends on
  // the commit: for outbox.format protobuf, source_lsn and the (final) timestamp_ms in the envelope of its value
  // (then a view of the mapper's buffer until the next Map call; nothing for a tombstone); for cloudevents, the
  // ce_time header. Does nothing for raw.
  absl::Status CompleteEnvelope(Record& record, std::string_view source_lsn);

  // Debezium's default of the catalog's column `c` read as `type` (DebeziumColumnDefault, or DebeziumEnumDefault;
  // none for a domain column); `time_form`: its form under time.precision.mode (adaptive's when absent).
  static ConnectDefault DefaultOf(const pg::ColumnCatalog& c, uint32_t type, int32_t type_modifier,
                                  std::optional<ConnectForm> time_form = std::nullopt);
  // Whether Debezium reads the catalog's column `c` as having a default: not for a domain column.
  static bool DebeziumReadsDefault(const pg::ColumnCatalog& c);
  // DefaultOf, but a numeric or money default under outbox.decimal_handling_mode string or double is kNotReproduced.
  ConnectDefault DefaultUnderModes(const pg::ColumnCatalog& c, uint32_t type, int32_t type_modifier) const;

  // The converter of the key of a record whose key column is of `type`, and of the value of one whose payload column
  // is: outbox.key_converter / value_converter, but bytes (ByteArrayConverter's) for a bytea column under
  // outbox.key_converter_binary / value_converter_binary (Debezium's BinaryDataConverter writes a BYTES value as its
  // bytes and any other through its delegate; the envelope of placement envelope is a struct).
  config::Converter KeyConverter(uint32_t type) const;
  config::Converter ValueConverter(uint32_t payload_type) const;
  // Whether Debezium's value of a column of `type` is a bytea's bytes (a ByteBuffer): under outbox.binary_handling_mode
  // bytes; under the others it is their text.
  bool ByteaAsBytes(uint32_t type) const;

  // outbox.string_converter_values debezium: Kafka Connect's StringConverter over Debezium's value of a key or payload
  // column of `type` whose text (`hex`: a bytea's PostgreSQL text) or bytes are `value`: into `out`, Java's text of a
  // `typed` column's value, or a bytea's "java.nio.HeapByteBuffer[pos=0 lim=<n> cap=<n>]"; false where Java's text is
  // PostgreSQL's (strings, integers, enums), `out` then cleared.
  static absl::StatusOr<bool> JavaString(uint32_t type, const std::optional<ConnectColumn>& typed,
                                         std::string_view value, bool hex, std::string* out);

 private:
  // Column positions of one relation (by OID), resolved from its Relation message.
  struct Binding {
    uint32_t relation_oid = 0;
    size_t columns = 0;
    int id = -1, key = -1, route = -1, payload = -1, timestamp = -1, type = -1, tracing = -1;
    uint32_t payload_type = 0, timestamp_type = 0, key_type = 0;
    // json_schema: the key's and the payload's schema as JsonConverter writes it ({"type":"string","optional":…}).
    std::string key_schema, value_schema;
    // json and json_schema: the key's and the payload's form when it is not a string, an integer, an enum or a bytea's
    // bytes (JsonConverter then writes Debezium's value of the column: a number, a boolean, a struct, a bytea's
    // string under outbox.binary_handling_mode other than bytes...); string under outbox.string_converter_values
    // debezium: when it is not a string, an enum or a bytea's bytes (Java's text of the value).
    std::optional<ConnectColumn> key_form, value_form;
    // Parallel to config_.fields.additional.
    struct Additional {
      int column = -1;     // -1: the table has no such column (outbox.fields.additional_if_present): no header
      bool not_null = false;  // the catalog's NOT NULL (when it was read)
      ConnectColumn form;  // outbox.header_values: debezium, and placement envelope: how its value is written
      uint32_t type = 0;
      std::string schema;  // placement envelope under json_schema: the field's schema, with "field":<name>; a
                           // header under outbox.header_values json_schema: the column's schema
    };
    std::vector<Additional> additional;
    int schema_version = -1;  // outbox.fields.schema_version's column (envelope placement under json_schema)
    // outbox.header_values json / json_schema: the id column's form and (json_schema) schema.
    ConnectColumn id_form;
    uint32_t id_type = 0;
    std::string id_schema;
    // outbox.null_as_column_default: each relation column's Debezium default (by position), from the catalog.
    std::vector<ConnectDefault> defaults;
    // outbox.column_mappers: what Debezium's column mapper does to each column the record reads (by position).
    std::vector<ColumnValueMap> maps;
  };
  absl::StatusOr<const Binding*> Bind(const pg::Relation& published, Lsn lsn);
  // `relation` with each column of a domain type (as the catalog says, for the type OID published) read as
  // Debezium reads it: as the domain's root type, under the modifier the domain gives it.
  pg::Relation WithDomainsResolved(const pg::Relation& relation) const;
  // The catalog's entry of the column `name`; nullptr when the catalog was not read or lacks it.
  const pg::ColumnCatalog* CatalogColumn(const std::string& name) const;
  // The form Debezium gives the column `name` of `type`: ConnectColumnOf's, or an enum's (from the catalog, which
  // names its labels).
  absl::StatusOr<ConnectColumn> FormOf(const std::string& name, uint32_t type, int32_t type_modifier) const;
  // Whether Debezium leaves the column `name` of `type` out of its change events under the configured
  // include.unknown.datatypes (`unknown_included`): a built-in type DebeziumLeavesOut names, or a user-defined type it
  // has no schema for (UserTypeLeftOut).
  bool LeftOutByDebezium(const std::string& name, uint32_t type, bool unknown_included) const;
  // The catalog's entry of the column `name` of `type` when it is of a user-defined type Debezium has no schema for
  // (UserTypeLeftOut), else nullptr.
  const pg::ColumnCatalog* LeftOutUserType(const std::string& name, uint32_t type) const;
  // outbox.decimal_handling_mode string or double: a numeric or money column's form under it, or a numeric array's
  // with its elements' (precise: as it is).
  ConnectColumn UnderDecimalMode(ConnectColumn form) const;
  // outbox.time_precision_mode other than adaptive: a date, time or timestamp column's form under it, or an array's
  // with its elements'.
  ConnectColumn UnderTimeMode(ConnectColumn form) const;
  // Both of the above, and the interval, money, binary and hstore modes' forms (of an array's elements too).
  ConnectColumn UnderModes(ConnectColumn form) const;
  // json_schema: the schema of the column `name` of `type` (for outbox.key_converter or value_converter: `key`).
  absl::StatusOr<std::string> ColumnSchema(const std::string& name, uint32_t type, int32_t type_modifier,
                                           std::string_view key) const;
  // outbox.propagate_source_type: the parameters SourceTypeParameters gives the catalog's column when a pattern
  // selects it, else "".
  absl::StatusOr<std::string> SourceTypeOf(const pg::ColumnCatalog& column) const;
  // Whether outbox.propagate_source_type selects the catalog's column.
  absl::StatusOr<bool> Propagates(const pg::ColumnCatalog& column) const;
  // outbox.column_mappers: what Debezium's mapper of the column `name` (of `type` as Debezium reads it) does.
  absl::StatusOr<ColumnValueMap> ColumnMapOf(const std::string& name, uint32_t type, int32_t type_modifier) const;
  // outbox.header_values other than text: a header column's form, type and (json_schema) schema; `key` names the
  // setting that placed it in errors, and `hint` ends the error of a column without a Debezium form.
  absl::Status BindHeaderColumn(const pg::RelationColumn& column, std::string_view key, std::string_view hint,
                                ConnectColumn* form, uint32_t* type, std::string* schema) const;
  // Placement envelope: the column's form for the value converter, and its field schema under json_schema.
  absl::Status BindEnvelopeField(const pg::Relation& relation, const config::AdditionalField& field,
                                 Binding::Additional& a) const;
  // outbox.header_values json / json_schema: a header's value as JsonConverter writes it (nullopt: NULL), without
  // or with its schema, into `out`.
  absl::Status AppendJsonHeader(const ConnectColumn& form, uint32_t type, std::string_view schema,
                                std::optional<std::string_view> value, std::string* out) const;
  // outbox.header_values json / json_schema: a header Debezium adds as a string with Schema.STRING_SCHEMA (its
  // __debezium.context.* headers, the tracing SMT's traceparent and tracestate), as JsonConverter writes it.
  void SetJsonStringHeader(std::string_view value, std::string* out) const;
  bool JsonHeaders() const {
    return config_.header_values == config::HeaderValues::kJson ||
           config_.header_values == config::HeaderValues::kJsonSchema;
  }
  absl::StatusOr<Record> Build(Lsn commit_lsn, int64_t commit_time_ms);
  // outbox.key_converter / value_converter other than string: rewrites the record's key and value into key_out and
  // value_out.
  absl::Status Convert(Record& r);
  // Placement envelope: the record's value becomes Debezium's envelope struct {payload, <envelope fields>} as the
  // value converter writes it: Struct.toString (string), JSON (json), JSON with the struct's schema (json_schema).
  // A tombstone stays one.
  absl::Status WriteEnvelope(Record& r);
  // json_schema: the envelope schema's name, which Debezium caches by the payload's schema (or by the version), so
  // that the first route value seen names it for every later record.
  // `payload_schema`: the payload field's (the column's, or the expanded payload's).
  const std::string& EnvelopeSchemaName(std::string_view payload_schema);
  // outbox.expand_json_payload: replaces the converted value by the expanded payload (outbox/json_expand.h).
  absl::Status ExpandPayload(Record& r);
  // outbox.expand_json_payload: whether Debezium expands this record's payload (a String: not NULL, not bytea), and
  // if so the expansion, into s_.expanded. The one place both ExpandPayload and WriteEnvelope expand.
  bool ExpandsPayload(const Record& r);
  // outbox.fields.tracing_span_context: the traceparent and tracestate headers of the row's trace context, as
  // Debezium's tracing writes them (trace_context.h), ahead of the id as it adds them.
  void AddTraceHeaders(Record& r);
  void AddCloudEventsHeaders(Record& r);
  // outbox.format: protobuf: replaces the record's value (the payload as the raw format carries it) by the
  // serialized envelope, and adds the content-type header.
  absl::Status WrapInEnvelope(Record& r);

  config::OutboxConfig config_;
  TopicRouter router_;
  std::string run_id_;
  enum class Placement : uint8_t { kHeader, kEnvelope, kPartition };
  std::vector<Placement> placement_;  // per additional field
  bool envelope_placement_ = false;   // any field has placement envelope
  absl::flat_hash_map<std::string, std::string> envelope_names_;  // EnvelopeSchemaName's cache
  std::string schema_, table_;
  std::optional<std::vector<pg::ColumnCatalog>> catalog_;  // SetCatalog's columns
  // outbox.propagate_source_type.columns and .datatypes, compiled.
  std::vector<config::RouteRegex> propagate_columns_, propagate_datatypes_;
  ColumnMappers column_mappers_;
  absl::flat_hash_map<uint32_t, Binding> bindings_;

  // A column value copied out of the tuple (or the JSON message) into a reused buffer.
  struct Field {
    bool null = true;
    bool absent = false;  // an additional column the table does not have (outbox.fields.additional_if_present)
    std::string text;
    void Set(std::string_view v) { null = false; text.assign(v.data(), v.size()); }
    void SetNull() { null = true; text.clear(); }
  };
  // Reused per-record buffers: each Map fills these and the Record views them.
  struct Scratch {
    Field id, key, route, payload, timestamp, type, tracing;
    std::string traceparent, tracestate;  // from `tracing` (outbox.fields.tracing_span_context)
    std::vector<Field> additional;
    std::string converted;  // outbox.header_values: debezium: one additional field's header text being built
    std::string key_out, value_out;  // the key and value as outbox.key_converter / value_converter write them
    std::string key_bytes;           // a bytea key's decoded bytes (converters other than string)
    ExpandedPayload expanded;        // outbox.expand_json_payload: the payload expanded
    std::string_view key_schema, value_schema;  // json_schema: the binding's
    const std::optional<ConnectColumn>* key_form = &kFromText;    // the binding's
    const std::optional<ConnectColumn>* value_form = &kFromText;
    const std::vector<Binding::Additional>* bound_additional = nullptr;  // the binding's (Map, for Build)
    Field schema_version;   // outbox.fields.schema_version's value
    std::string envelope;   // the envelope value being written
    std::string id_header;  // outbox.header_values json / json_schema: the id header's JSON
    std::string context_headers[std::size(config::kDebeziumContextHeaders)];  // and the __debezium.context.* headers' 
    uint32_t payload_type = 0, timestamp_type = 0, key_type = 0;
    std::string topic;
    std::string payload_bytes;  // decoded bytea
    std::string source_lsn;
    Lsn source_lsn_of;          // the commit LSN source_lsn was printed from
    std::string routed_value;   // the route value `topic` was made from
    std::string ce_time, ce_source;  // CloudEvents headers (outbox.format: cloudevents)
    std::string envelope_bytes;      // the serialized envelope (outbox.format: protobuf)
    Record record;
  } s_;
  // outbox.format: protobuf: one envelope, refilled field by field for every record (never cleared, so its
  // strings, timestamp and additional fields keep their allocations). Null for the other formats.
  std::unique_ptr<v1::Envelope> envelope_;
};

}  // namespace outbox::outbox
