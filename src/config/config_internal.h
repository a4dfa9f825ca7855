// Internal to the config module: the untyped key tree that every config source (YAML today, a Debezium
// properties file later) is turned into before overrides, substitution, defaults and validation, which are shared.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "config/config.h"

namespace outbox::config::internal {

// Each enum key's values as a file writes them: the one table the loader reads them by and `check` prints them by.
template <typename E>
struct EnumName {
  absl::string_view name;
  E value;
};
inline constexpr EnumName<CheckpointStore> kCheckpointStores[] = {
    {"kafka", CheckpointStore::kKafka}, {"file", CheckpointStore::kFile}, {"none", CheckpointStore::kNone}};
inline constexpr EnumName<OnUpdate> kOnUpdates[] = {
    {"warn", OnUpdate::kWarn}, {"error", OnUpdate::kError}, {"ignore", OnUpdate::kIgnore}};
inline constexpr EnumName<Format> kFormats[] = {
    {"raw", Format::kRaw}, {"cloudevents", Format::kCloudEvents}, {"protobuf", Format::kProtobuf}};
inline constexpr EnumName<HeaderValues> kHeaderValues[] = {{"text", HeaderValues::kText},
                                                           {"debezium", HeaderValues::kDebezium},
                                                           {"json", HeaderValues::kJson},
                                                           {"json_schema", HeaderValues::kJsonSchema}};
inline constexpr EnumName<Converter> kConverters[] = {
    {"string", Converter::kString}, {"json", Converter::kJson}, {"json_schema", Converter::kJsonSchema},
    {"bytes", Converter::kBytes}};
inline constexpr EnumName<StringValues> kStringValues[] = {{"text", StringValues::kText},
                                                           {"debezium", StringValues::kDebezium}};
inline constexpr EnumName<JsonNullBehavior> kJsonNullBehaviors[] = {{"ignore", JsonNullBehavior::kIgnore},
                                                                    {"optional_bytes", JsonNullBehavior::kOptionalBytes}};
inline constexpr EnumName<DecimalHandling> kDecimalHandlings[] = {
    {"precise", DecimalHandling::kPrecise}, {"string", DecimalHandling::kString}, {"double", DecimalHandling::kDouble}};
inline constexpr EnumName<TimePrecision> kTimePrecisions[] = {
    {"adaptive", TimePrecision::kAdaptive},
    {"adaptive_time_microseconds", TimePrecision::kAdaptiveTimeMicroseconds},
    {"microseconds", TimePrecision::kMicroseconds},
    {"nanoseconds", TimePrecision::kNanoseconds},
    {"connect", TimePrecision::kConnect},
    {"isostring", TimePrecision::kIsoString}};
inline constexpr EnumName<IntervalHandling> kIntervalHandlings[] = {{"numeric", IntervalHandling::kNumeric},
                                                                    {"string", IntervalHandling::kString}};
inline constexpr EnumName<BinaryHandling> kBinaryHandlings[] = {{"bytes", BinaryHandling::kBytes},
                                                                {"base64", BinaryHandling::kBase64},
                                                                {"base64-url-safe", BinaryHandling::kBase64UrlSafe},
                                                                {"hex", BinaryHandling::kHex}};
inline constexpr EnumName<HstoreHandling> kHstoreHandlings[] = {{"json", HstoreHandling::kJson},
                                                                {"map", HstoreHandling::kMap}};
inline constexpr EnumName<ConvertingFailure> kConvertingFailures[] = {
    {"fail", ConvertingFailure::kFail}, {"warn", ConvertingFailure::kWarn}, {"skip", ConvertingFailure::kSkip}};
inline constexpr EnumName<JsonEmptyArrayBehavior> kJsonEmptyArrayBehaviors[] = {
    {"ignore", JsonEmptyArrayBehavior::kIgnore}, {"optional_string", JsonEmptyArrayBehavior::kOptionalString}};
inline constexpr EnumName<FieldNameAdjustment> kFieldNameAdjustments[] = {
    {"none", FieldNameAdjustment::kNone}, {"avro", FieldNameAdjustment::kAvro},
    {"avro_unicode", FieldNameAdjustment::kAvroUnicode}};
inline constexpr EnumName<OnError> kOnErrors[] = {{"halt", OnError::kHalt}, {"dead_letter", OnError::kDeadLetter}};
inline constexpr EnumName<Guarantee> kGuarantees[] = {{"at_least_once", Guarantee::kAtLeastOnce},
                                                      {"exactly_once", Guarantee::kExactlyOnce}};
inline constexpr EnumName<SinkType> kSinkTypes[] = {
    {"kafka", SinkType::kKafka}, {"nats", SinkType::kNats}, {"rabbitmq", SinkType::kRabbitMq}, {"http", SinkType::kHttp}};
inline constexpr EnumName<LogFormat> kLogFormats[] = {{"text", LogFormat::kText}, {"json", LogFormat::kJson}};

// The name of `value` in `table`.
template <typename E, size_t N>
std::string_view NameOf(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& entry : table) {
    if (entry.value == value) return std::string_view(entry.name.data(), entry.name.size());
  }
  return "?";
}

// One leaf of the config, before typing.
struct RawValue {
  enum class Kind { kNull, kScalar, kList };
  Kind kind = Kind::kNull;
  std::string scalar;             // kScalar: the text as written (numbers and booleans too)
  std::vector<std::string> list;  // kList: the entries, each a scalar
  bool plain = false;             // kScalar written without quotes or tag in YAML (so `yes` is a boolean)
};

// Leaves by dotted key path ("source.slot", "kafka.bootstrap.servers"); nested maps are flattened.
using RawTree = std::map<std::string, RawValue>;

// Parses YAML text into a RawTree. Never throws: syntax errors become INVALID_ARGUMENT with line and column.
absl::StatusOr<RawTree> ParseYamlTree(const std::string& yaml_text);

// Applies the overrides (in order) to `tree`, then reads, substitutes, defaults and validates every key.
absl::StatusOr<Config> BuildConfig(RawTree tree, const std::vector<std::pair<std::string, std::string>>& overrides,
                                   const Resolver& resolver);

// The password(s) a libpq conninfo carries, in key=value form (`password=...`, quoted or not) or URI form
// (`postgresql://user:pass@host/db`, `?password=...`): each as written and, when it differs, decoded.
std::vector<std::string> ConninfoPasswords(absl::string_view conninfo);

// The password of a scheme://user:password@host URL (amqp://, amqps://) and of its `?password=` parameter, as
// written and decoded.
std::vector<std::string> UrlPasswords(absl::string_view url);

// Appends the non-empty texts of `more` to `secrets`, then keeps every secret once, longest first (the order
// Config::secrets and PipelineConfig::secrets are kept in).
void AddSecrets(std::vector<std::string> more, std::vector<std::string>* secrets);

// Every pipeline key of `config` with its value as text, unmasked ("" when unset): the keys config::EffectiveValues lists, or
// with `every_sink` every sink's keys whatever sink.type says (for collecting secrets).
std::vector<std::pair<std::string, std::string>> KeyValues(const PipelineConfig& config, bool every_sink);

}  // namespace outbox::config::internal
