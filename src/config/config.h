// Config: the relay's validated configuration (SPEC.md §3), loaded from YAML (or, later, a Debezium properties
// file), with `--set key=value` overrides and ${env:NAME} / ${file:/path} substitution. Pure: the environment and
// the file system are reached only through the injected Resolver. Errors are INVALID_ARGUMENT and name the key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace outbox::config {

enum class CheckpointStore { kKafka, kFile, kNone };
enum class OnUpdate { kWarn, kError, kIgnore };
enum class OnError { kHalt, kDeadLetter };
enum class Guarantee { kAtLeastOnce, kExactlyOnce };  // delivery.guarantee
enum class Format { kRaw, kCloudEvents, kProtobuf };
// outbox.header_values: the additional fields' header values as PostgreSQL's text (`t`, `2024-05-01 12:00:00`), or
// as Debezium writes them (Kafka Connect's SimpleHeaderConverter over its connector's values: `true`, epoch
// microseconds), or as Kafka Connect's JsonConverter writes Debezium's values as headers (header.converter, and
// Debezium Server's default header format): json without schemas, json_schema with {"schema":…,"payload":…}; the id
// header too. Debezium configuration files set debezium, json or json_schema.
enum class HeaderValues { kText, kDebezium, kJson, kJsonSchema };
// outbox.key_converter / outbox.value_converter: how the key and value bytes are written, as Kafka Connect's
// converter of that name writes Debezium's value of the column: StringConverter (the column's text; a bytea payload
// as its raw bytes), JsonConverter with schemas.enable=false (a JSON string of the text, a bytea as a base64 string,
// an integer as a number), JsonConverter with schemas.enable=true (the same JSON inside Kafka Connect's
// {"schema":…,"payload":…} envelope, with the schema Debezium gives the column: its type, whether it is optional,
// io.debezium.data.Json / Uuid / Xml names), ByteArrayConverter (a bytea's bytes; a column of another type is
// refused).
enum class Converter { kString, kJson, kJsonSchema, kBytes };
// outbox.string_converter_values: what the string converter writes of a key or payload column: its PostgreSQL text
// (SPEC's record format), or, as Kafka Connect's StringConverter over Debezium's value, Java's text of that value
// (`true`, a timestamp's epoch microseconds, a timestamptz's ISO-8601 in UTC, a bytea's ByteBuffer). Debezium
// configuration files set debezium.
enum class StringValues { kText, kDebezium };
// outbox.json_payload_null_behavior / outbox.json_payload_empty_array_behavior (with outbox.expand_json_payload):
// what a JSON null or an empty array in an expanded payload becomes: left out of the schema (ignore), or an optional
// bytes field / an optional array of optional strings, as Debezium's table.json.payload.null.behavior and
// table.json.payload.empty.array.behavior (Debezium 3.7 and later) make them.
// outbox.decimal_handling_mode: how numeric and money columns' values are written where Debezium's value is
// (headers under outbox.header_values other than text, envelope fields, json converters), as Debezium's
// decimal.handling.mode: precise (a Decimal, or a VariableScaleDecimal without a scale), string
// (BigDecimal.toPlainString, a STRING) or double (BigDecimal.doubleValue, a FLOAT64).
enum class DecimalHandling { kPrecise, kString, kDouble };
// outbox.time_precision_mode: how time and timestamp columns are written where Debezium's value is, as Debezium's
// time.precision.mode: adaptive (by the column's precision: io.debezium.time.Time / Timestamp in milliseconds up to 3
// digits, MicroTime / MicroTimestamp above), adaptive_time_microseconds (time always MicroTime), microseconds (both
// always Micro*), nanoseconds (NanoTime / NanoTimestamp) or connect (Kafka Connect's Date, Time and Timestamp: a
// java.util.Date in milliseconds, date included) or isostring (io.debezium.time.IsoDate, IsoTime, IsoTimestamp: ISO 8601
// text in UTC). timetz and timestamptz are the same in all six.
enum class TimePrecision { kAdaptive, kAdaptiveTimeMicroseconds, kMicroseconds, kNanoseconds, kConnect, kIsoString };
// outbox.interval_handling_mode: interval columns as Debezium's interval.handling.mode writes them: numeric
// (io.debezium.time.MicroDuration, microseconds) or string (io.debezium.time.Interval, "P1Y2M3DT4H5M6.78S").
enum class IntervalHandling { kNumeric, kString };
// outbox.binary_handling_mode: bytea columns in headers and envelope fields as Debezium's binary.handling.mode writes
// them: bytes (a BYTES value, base64 in a header), or a string of them in base64, base64-url-safe or hex.
enum class BinaryHandling { kBytes, kBase64, kBase64UrlSafe, kHex };
// outbox.hstore_handling_mode: hstore columns as Debezium's hstore.handling.mode writes them: json (io.debezium.data.Json,
// the JSON text of the map) or map (a map of strings).
enum class HstoreHandling { kJson, kMap };
// Debezium's event.converting.failure.handling.mode: what a column value Debezium's converter fails on gives (only the
// values the relay knows Debezium fails on: outbox/connect_header.h's DebeziumConversionFails).
enum class ConvertingFailure { kFail, kWarn, kSkip };
enum class JsonNullBehavior { kIgnore, kOptionalBytes };
enum class JsonEmptyArrayBehavior { kIgnore, kOptionalString };
// outbox.json_payload_field_name_adjustment (with outbox.expand_json_payload): the field names of an expanded
// payload as they are (none), or made legal Avro names as Debezium's router makes them under its
// field.name.adjustment.mode: an illegal character becomes _ (avro) or _uXXXX (avro_unicode).
enum class FieldNameAdjustment { kNone, kAvro, kAvroUnicode };
// The four headers Debezium 3's connector puts first on each change event (EventDispatcher, unless
// extended.headers.enabled=false), in their order: the relay writes them with outbox.debezium_context_logical_name,
// and judges a HasHeaderKey predicate of a Debezium file by them.
inline constexpr std::string_view kDebeziumContextHeaders[] = {
    "__debezium.context.connectorLogicalName", "__debezium.context.taskId", "__debezium.context.connectorName",
    "__debezium.context.runId"};
enum class LogFormat { kText, kJson };
enum class SinkType { kKafka, kNats, kRabbitMq, kHttp };  // sink.type (SPEC.md §7)
// The sink.type value that names it (kafka, nats, rabbitmq, http): for messages and the metrics' sink label.
std::string_view SinkTypeName(SinkType sink);

// One entry of outbox.fields.additional: "column:header[:name]", "column:envelope[:name]" or "column:partition".
struct AdditionalField {
  std::string column;
  // "header"; "envelope": a field of the record's value, which becomes Debezium's envelope struct
  // {payload, <fields>} (outbox.value_converter writes it); or "partition": the column (integer) is the record's
  // Kafka partition.
  std::string placement;
  std::string name;  // header or envelope field name; defaults to the column name (unused for partition)
};

struct SourceConfig {
  std::string conninfo;  // libpq conninfo or URI (may hold a password: never log it, use Redact())
  std::string slot;
  std::string publication;
  bool create_slot = false;
  // PostgreSQL 17+: the slot is a failover slot (created with FAILOVER, or altered to it by init and run), so a
  // standby with sync_replication_slots keeps a copy the relay resumes from after a promotion.
  bool failover = false;
  CheckpointStore checkpoint = CheckpointStore::kKafka;
  std::string checkpoint_topic = "outbox_relay.checkpoints";
  std::string checkpoint_file;
  std::string instance;  // this relay's instance name in checkpoint keys; default: the host name (filled by app)
  int64_t status_interval_ms = 1000;
  // After a round that read the stream dry, the relay waits this long before it reads again, so that one wakeup
  // takes several changes instead of one write of the server's each (0: read as soon as anything arrives).
  int64_t read_batch_us = 200;
  static constexpr int64_t kMaxReadBatchUs = 100000;
  // SO_RCVBUF of the replication socket (the kernel doubles it for its bookkeeping, and no longer autotunes it); 0
  // leaves the kernel's default, which TCP autotunes up to net.ipv4.tcp_rmem's maximum. At least 64 KiB: below a
  // segment's size on loopback (64 KiB) the window stalls the stream (seen with 8 KiB).
  int64_t receive_buffer_bytes = 0;
  static constexpr int64_t kMinReceiveBufferBytes = 65536;
  static constexpr int64_t kMaxReceiveBufferBytes = 256LL << 20;
  // A replication stream that brings nothing (data or keepalive) for this long is dead: rewind and reconnect. The
  // relay asks the server for a reply after half of it, so a healthy idle stream never trips it.
  int64_t receive_timeout_ms = 60000;
  // How often the slot's health (wal_status, retained WAL) is read on a plain connection, for the slot metrics.
  int64_t slot_check_ms = 10000;
  bool messages = false;
  std::vector<std::string> message_prefixes = {"outbox"};
  bool streaming = false;
  // With streaming: where a large in-progress transaction's buffered events spill beyond the memory bound
  // (default: $TMPDIR or /tmp). Spill files are removed at commit, abort and every rewind.
  std::string spill_dir;
};

struct OutboxFields {
  std::string id = "id";
  std::string key = "aggregateid";
  std::string type = "type";
  std::string payload = "payload";
  std::optional<std::string> timestamp;  // none by default
  std::vector<AdditionalField> additional;
  // An additional column missing from the table: stop the relay (false), or leave its header out (true: Debezium's
  // table.field.additional.missing=ignore).
  bool additional_if_present = false;
  // A column holding a serialized trace context (java.util.Properties text with traceparent=... and
  // tracestate=..., as Debezium's tracing.span.context.field reads it): its traceparent and tracestate become the
  // record's W3C headers. None by default. A configured column missing from the table stops the relay, unless
  // tracing_span_context_if_present (Debezium files: their default column is read when it exists).
  std::optional<std::string> tracing_span_context;
  bool tracing_span_context_if_present = false;
  // With envelope placement under outbox.value_converter json_schema: an integer (int4) column whose value is the
  // envelope schema's version (Debezium's table.field.event.schema.version). None by default.
  std::optional<std::string> schema_version;
};

// One of Debezium's column mappers (column.truncate.to.N.chars, column.mask.with.N.chars,
// column.mask.hash[.v2].ALGORITHM.with.salt.SALT), as outbox.column_mappers.<the same name after "column."> sets it:
// the columns whose <schema>.<table>.<column> one of `columns` (Debezium's list syntax) matches whole, ignoring ASCII
// case, have their value changed as Debezium changes it before the Outbox Event Router reads the row
// (outbox/column_mapper.h). Debezium uses the first rule of a column in this order: truncations, masks with
// characters, column.propagate.source.type, datatype.propagate.source.type, hashes, hashes v2.
struct ColumnMapperRule {
  enum class Kind : uint8_t { kTruncate, kMask, kHash, kHashV2 };
  Kind kind = Kind::kTruncate;
  int64_t chars = 0;      // kTruncate: the length kept; kMask: the number of '*'
  std::string algorithm = {};  // kHash, kHashV2: Java's MessageDigest name, as written
  std::string salt = {};       // kHash, kHashV2
  std::string columns = {};    // the pattern list
  std::string key = {};        // the config key, for errors
};

// Java's MessageDigest names (any case: MD5, SHA, SHA1, SHA-1, SHA-224 ... SHA-512/256, SHA3-224 ... SHA3-512) ->
// OpenSSL's; "" for a name Java has no digest of, and for MD2 (Java has it, OpenSSL 3 does not).
std::string_view OpenSslDigestName(std::string_view java_name);
// The error for a name OpenSslDigestName does not know (without the key: the caller names it).
std::string UnknownDigest(std::string_view java_name);
// Reads a column mapper's name (Debezium's key after "column.", outbox.column_mappers' after its prefix):
// truncate.to.<N>.chars, mask.with.<N>.chars, mask.hash.<algorithm>.with.salt.<salt> or
// mask.hash.v2.<algorithm>.with.salt.<salt> (ColumnMappers.create's patterns) into `rule`'s kind, chars, algorithm and
// salt. False for any other name.
bool ParseColumnMapperName(std::string_view name, ColumnMapperRule* rule);

struct OutboxConfig {
  std::string table = "public.outbox";  // schema-qualified; "outbox" means public.outbox
  OutboxFields fields;
  std::string route_by = "type";
  std::string route_topic = "outbox.event.${routedByValue}";
  // Debezium's route.topic.regex / route.topic.replacement (set by a Debezium properties file); empty = unused.
  std::string route_topic_regex;
  std::string route_topic_replacement;
  OnUpdate on_update = OnUpdate::kWarn;
  bool tombstone_on_empty_payload = false;
  Format format = Format::kRaw;
  HeaderValues header_values = HeaderValues::kText;
  Converter key_converter = Converter::kString;
  Converter value_converter = Converter::kString;
  StringValues string_converter_values = StringValues::kText;
  // outbox.key_converter_binary / outbox.value_converter_binary: Debezium's BinaryDataConverter in front of the
  // converter above (its delegate.converter.type): a key or payload of a bytea column (a BYTES value) goes out as its
  // bytes, as ByteArrayConverter writes it; any other value (a column of another type, the envelope of placement
  // envelope) through key_converter / value_converter.
  bool key_converter_binary = false;
  bool value_converter_binary = false;
  // Debezium's table.expand.json.payload: a payload of a text type that is JSON becomes the struct Debezium infers
  // from it, written as value_converter writes a struct (outbox/json_expand.h).
  bool expand_json_payload = false;
  JsonNullBehavior json_payload_null_behavior = JsonNullBehavior::kIgnore;
  JsonEmptyArrayBehavior json_payload_empty_array_behavior = JsonEmptyArrayBehavior::kIgnore;
  FieldNameAdjustment json_payload_field_name_adjustment = FieldNameAdjustment::kNone;
  // When set, every record carries the four headers Debezium's connector adds to its records:
  // __debezium.context.connectorLogicalName (this value: Debezium's topic.prefix), .taskId (0), .connectorName
  // (postgresql) and .runId (a UUIDv7 made when the relay starts). Empty (the default): none, also for Debezium
  // files (whose topic.prefix warning names this key).
  std::string debezium_context_logical_name;
  // A NULL in a column with a default gives the default, as Debezium's records have it (Kafka Connect's Struct.get
  // returns the schema's default for a null, and Debezium's schema has the column's default when its parser reads
  // it: literals, and placeholders for function defaults). Debezium files set it; false: NULL stays NULL.
  bool null_as_column_default = false;
  // Debezium's include.unknown.datatypes: Debezium then writes a column of a type it otherwise leaves out of its change
  // events (DebeziumLeavesOut) as the bytes of its text (UnknownDatatypeColumn), and so does the relay, but for the
  // seven arrays Debezium leaves out either way. Debezium files set it.
  bool include_unknown_datatypes = false;
  // With envelope placement under outbox.value_converter json_schema: the envelope schema's name, where
  // ${routedByValue} is the route column's value. Default "<outbox.table>.${routedByValue}.Value"; Debezium files
  // set "<topic.prefix>.<outbox.table>.${routedByValue}.Value", Debezium's name.
  std::string envelope_schema_name;
  // Debezium's column.propagate.source.type and datatype.propagate.source.type, in Debezium's list syntax
  // (comma-separated Java regular expressions, `\,` a comma inside one): a column whose <schema>.<table>.<column>
  // (or <schema>.<table>.<type name>) one of them matches whole, ignoring ASCII case, gets its source type as
  // parameters of the schema a json_schema converter writes (outbox/source_type.h). Empty (the default): none.
  DecimalHandling decimal_handling_mode = DecimalHandling::kPrecise;
  TimePrecision time_precision_mode = TimePrecision::kAdaptive;
  IntervalHandling interval_handling_mode = IntervalHandling::kNumeric;
  BinaryHandling binary_handling_mode = BinaryHandling::kBytes;
  HstoreHandling hstore_handling_mode = HstoreHandling::kJson;
  // fail: a per-event error (delivery.on_error); warn and skip: the column is NULL, as Debezium leaves it unset (a NOT
  // NULL column's stays a per-event error). Debezium files set Debezium's default, warn.
  ConvertingFailure event_converting_failure_handling_mode = ConvertingFailure::kFail;
  // Debezium's money.fraction.digits: the scale of a money column's Decimal (outbox.decimal_handling_mode precise),
  // its value rounded HALF_UP to it.
  int64_t money_fraction_digits = 2;
  std::string propagate_source_type_columns;
  std::string propagate_source_type_datatypes;
  // outbox.column_mappers.*, in the key order (which does not decide: two rules of one kind that select one column
  // the relay reads are refused, as Debezium's choice between them follows a hash order).
  std::vector<ColumnMapperRule> column_mappers;
  // Whether any additional field has placement envelope.
  bool HasEnvelope() const;
};

struct DeliveryConfig {
  int64_t max_inflight_bytes = 32LL * 1024 * 1024;
  int64_t max_inflight_events = 100000;
  int64_t release_slot_after_ms = 30000;
  int64_t shutdown_timeout_ms = 30000;
  OnError on_error = OnError::kHalt;
  std::string dead_letter_topic = "outbox.dead_letter";
  bool unsafe = false;
  // exactly_once: the Kafka sink is transactional; records and the checkpoint commit together every
  // transaction_interval_ms (or sooner at the bounds).
  Guarantee guarantee = Guarantee::kAtLeastOnce;
  int64_t transaction_interval_ms = 100;
};

// nats.* (sink.type: nats): a NATS JetStream stream that binds the records' subjects (the topic template's result).
struct NatsConfig {
  std::string url;     // nats://host:port, comma-separated for several servers; tls:// asks for TLS
  std::string stream;  // the JetStream stream; it must exist (the relay never creates it)
  // Credentials: user/password, or token, or a .creds file (JWT and NKey seed); at most one of the three.
  std::string user;
  std::string password;
  std::string token;
  std::string creds;  // path of a .creds file
  // TLS: the CA file to verify the server with, and a client certificate and key for mutual TLS.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_hostname;  // the name expected in the server's certificate (default: the URL's host)
  int64_t ack_timeout_ms = 10000;     // a publish not acknowledged this long is given up (the relay rewinds)
  int64_t connect_timeout_ms = 2000;  // one connection attempt
};

// rabbitmq.* (sink.type: rabbitmq): publisher-confirmed, persistent, mandatory publishes to an exchange.
struct RabbitMqConfig {
  std::string url;  // amqp://[user:password@]host[:port][/vhost], or amqps:// for TLS
  std::string user;      // overrides the URL's (default guest)
  std::string password;  // overrides the URL's
  // Templates over ${routedByValue} (the route column's value) and ${topic} (outbox.route.topic's result, or
  // delivery.dead_letter_topic for a dead letter). The exchange must exist (the relay never declares it).
  std::string exchange;
  std::string routing_key = "${topic}";
  std::string dead_letter_exchange;  // where dead letters go ("" = rabbitmq.exchange), with routing key
                                     // delivery.dead_letter_topic
  std::string content_type = "application/json";
  std::string tls_ca;    // the CA file to verify the broker with (amqps://)
  std::string tls_cert;  // a client certificate and key for mutual TLS
  std::string tls_key;
  bool tls_verify = true;  // verify the broker's certificate and host name
  int64_t heartbeat_s = 10;            // the AMQP heartbeat asked for (0 = none)
  int64_t connect_timeout_ms = 5000;   // one connection attempt, and each handshake step
};

// http_sink.* (sink.type: http): one POST per event to a URL made from a template.
struct HttpSinkConfig {
  // The URL template: ${routedByValue} is the route column's value (recovered from the record's topic, which
  // outbox.route.topic made from it), ${topic} the record's topic. http:// or https://.
  std::string url;
  std::string content_type = "application/json";  // unless the record carries a content-type header
  std::string key_header = "Outbox-Key";          // the header that carries the record's key ("": none)
  int64_t timeout_ms = 10000;         // one request, connect to the last byte of the answer
  int64_t connect_timeout_ms = 2000;  // one connection attempt
  int64_t max_in_flight = 16;         // requests at once (different keys; a key has at most one event out)
  int64_t batch_max_events = 1;       // events in one request; above 1 a JSON array (one URL per batch)
  int64_t retry_backoff_ms = 100;       // the first retry's wait, doubled per attempt...
  int64_t retry_backoff_max_ms = 5000;  // ...up to this
  int64_t retry_after_max_ms = 60000;   // a Retry-After answer is honoured up to this
  // Credentials (at most one kind): a bearer token, or basic auth.
  std::string bearer_token;
  std::string user;
  std::string password;
  // TLS: the CA file to verify the server with, and a client certificate and key for mutual TLS.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  // What `check` and the reconnect after a release ask (HEAD): default the url's scheme://host:port/.
  std::string check_url;
};

// One pipeline: a slot and where its events go (a file's top-level source, outbox, sink, kafka, nats, rabbitmq,
// http_sink and delivery keys, or one entry of `pipelines:` over them).
struct PipelineConfig {
  std::string pipeline;  // its name under `pipelines:`; "" for a file without `pipelines:`
  SourceConfig source;
  SinkType sink = SinkType::kKafka;  // sink.type
  OutboxConfig outbox;
  // kafka.* passed to librdkafka as is (after the relay's defaults are applied by the kafka module).
  std::map<std::string, std::string> kafka;
  NatsConfig nats;  // sink.type: nats
  RabbitMqConfig rabbitmq;  // sink.type: rabbitmq
  HttpSinkConfig http_sink;  // sink.type: http
  DeliveryConfig delivery;
  std::vector<std::string> warnings;  // accepted-with-a-warning notes (e.g. Debezium keys with no effect)
  // Every resolved secret value of this pipeline (passwords from conninfo, sasl.password, values that came from
  // ${env:} or ${file:}), so that Redact() can mask them in any text.
  std::vector<std::string> secrets;
};

// The process: its HTTP endpoints, its logs and its pipelines (SPEC.md §3).
struct Config {
  std::string http_listen = "127.0.0.1:9188";
  std::string log_level = "info";
  LogFormat log_format = LogFormat::kText;
  // At least one. A file without `pipelines:` has one, named "".
  std::vector<PipelineConfig> pipelines;
  std::vector<std::string> secrets;  // every pipeline's, so that the process's logs mask them all
};

// Looks up ${env:NAME} and ${file:/path}. Returns nullopt when the variable or file is absent.
struct Resolver {
  std::function<std::optional<std::string>(const std::string& name)> env;
  std::function<std::optional<std::string>(const std::string& path)> file;
};
Resolver SystemResolver();  // getenv and reading the file (trailing newline stripped)
// For `check --offline` (a config rendered for a pod, checked where its Secrets are not mounted): SystemResolver
// where the variable or file exists; any other reference resolves to kOfflineStandIn and is appended to
// `*unresolved` as written ("${file:/path}"). `unresolved` must outlive the resolver.
inline constexpr const char* kOfflineStandIn = "offline-stand-in";
Resolver OfflineResolver(std::vector<std::string>* unresolved);

// Parses YAML text, applies overrides ("a.b" -> "c", in order; the last wins), substitutes ${env:}/${file:},
// applies defaults and validates. Unknown keys outside `kafka.*` are errors naming the key.
absl::StatusOr<Config> LoadYaml(const std::string& yaml_text,
                                const std::vector<std::pair<std::string, std::string>>& overrides,
                                const Resolver& resolver);


// Every key a YAML file may set, sorted: each sink's keys included, `kafka.*` aside (passed to librdkafka as is) and
// `pipelines.<name>.` prefixes aside. docs/configuration.md lists exactly these (tests/docs).
std::vector<std::string> AcceptedKeys();

// The effective value of every key in AcceptedKeys(): the process's (http, log), then those of `pipeline` its sink
// reads (other sinks' keys are left out), then `kafka.<property>` for each kafka entry, as text: "" when unset,
// "****" for a secret key's value. What `check` prints (through Redact, for secrets inside values such as a
// conninfo password).
std::vector<std::pair<std::string, std::string>> EffectiveValues(const Config& process, const PipelineConfig& pipeline);

// Every librdkafka property documented as sensitive (_RK_SENSITIVE in rdkafka_conf.c of the pinned librdkafka,
// 2.14.2; tests/kafka checks each against the linked library).
inline constexpr std::string_view kLibrdkafkaSensitiveProperties[] = {
    "ssl.key.location", "ssl.key.password", "ssl.key.pem", "ssl_key", "ssl.ca.pem", "ssl.keystore.password",
    "sasl.username", "sasl.password", "sasl.oauthbearer.config", "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.assertion.private.key.file", "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.private.key.pem"};

// Whether a key's value is a secret: a librdkafka property above (bare, as kafka.<property>, or under a Debezium
// producer prefix), and every other credential key (…password, …secret, …token, …passphrase, NATS's …jwt and
// …seed, the Java client's sasl.jaas.config). The one predicate for every place that masks (check, the config dump) or collects values for redaction
// (logs, errors, /readyz).
bool IsSecretKey(std::string_view key);

// Replaces every secret of `config` (and any password=... in a conninfo) in `text` with "****".
std::string Redact(const Config& config, std::string text);
std::string Redact(const PipelineConfig& pipeline, std::string text);

// Splits "schema.table" (default schema public).
std::pair<std::string, std::string> SplitTableName(const std::string& table);

}  // namespace outbox::config
