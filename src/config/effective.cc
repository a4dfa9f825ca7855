// The effective configuration as key/value text (what `check` prints, and what tests/docs holds the documented
// defaults against). Pure.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "common/strings.h"
#include "config/config.h"
#include "config/config_internal.h"

namespace outbox::config {
namespace {

std::string Text(bool b) { return b ? "true" : "false"; }
std::string Text(int64_t v) { return Cat(v); }

}  // namespace

namespace internal {

std::vector<std::pair<std::string, std::string>> KeyValues(const PipelineConfig& c, bool every_sink) {
  std::vector<std::string> additional;
  for (const AdditionalField& f : c.outbox.fields.additional) additional.push_back(Cat(f.column, ":", f.placement, ":", f.name));
  std::vector<std::pair<std::string, std::string>> kv = {
      {"source.conninfo", c.source.conninfo},
      {"source.slot", c.source.slot},
      {"source.publication", c.source.publication},
      {"source.create_slot", Text(c.source.create_slot)},
      {"source.failover", Text(c.source.failover)},
      {"source.checkpoint", std::string(NameOf(kCheckpointStores, c.source.checkpoint))},
      {"source.checkpoint_topic", c.source.checkpoint_topic},
      {"source.checkpoint_file", c.source.checkpoint_file},
      {"source.instance", c.source.instance},
      {"source.status_interval_ms", Text(c.source.status_interval_ms)},
      {"source.read_batch_us", Text(c.source.read_batch_us)},
      {"source.receive_buffer_bytes", Text(c.source.receive_buffer_bytes)},
      {"source.receive_timeout_ms", Text(c.source.receive_timeout_ms)},
      {"source.slot_check_ms", Text(c.source.slot_check_ms)},
      {"source.messages", Text(c.source.messages)},
      {"source.message_prefixes", absl::StrJoin(c.source.message_prefixes, ",")},
      {"source.streaming", Text(c.source.streaming)},
      {"source.spill_dir", c.source.spill_dir},
      {"outbox.table", c.outbox.table},
      {"outbox.fields.id", c.outbox.fields.id},
      {"outbox.fields.key", c.outbox.fields.key},
      {"outbox.fields.type", c.outbox.fields.type},
      {"outbox.fields.payload", c.outbox.fields.payload},
      {"outbox.fields.timestamp", c.outbox.fields.timestamp.value_or("")},
      {"outbox.fields.tracing_span_context", c.outbox.fields.tracing_span_context.value_or("")},
      {"outbox.fields.tracing_span_context_if_present", Text(c.outbox.fields.tracing_span_context_if_present)},
      {"outbox.fields.schema_version", c.outbox.fields.schema_version.value_or("")},
      {"outbox.fields.additional", absl::StrJoin(additional, ",")},
      {"outbox.fields.additional_if_present", Text(c.outbox.fields.additional_if_present)},
      {"outbox.route.by", c.outbox.route_by},
      // The template is not used when a regex routes (a Debezium file's routing, or the YAML keys).
      {"outbox.route.topic", c.outbox.route_topic_regex.empty() ? c.outbox.route_topic : ""},
      {"outbox.route.topic_regex", c.outbox.route_topic_regex},
      {"outbox.route.topic_replacement", c.outbox.route_topic_replacement},
      {"outbox.on_update", std::string(NameOf(kOnUpdates, c.outbox.on_update))},
      {"outbox.tombstone_on_empty_payload", Text(c.outbox.tombstone_on_empty_payload)},
      {"outbox.format", std::string(NameOf(kFormats, c.outbox.format))},
      {"outbox.header_values", std::string(NameOf(kHeaderValues, c.outbox.header_values))},
      {"outbox.key_converter", std::string(NameOf(kConverters, c.outbox.key_converter))},
      {"outbox.value_converter", std::string(NameOf(kConverters, c.outbox.value_converter))},
      {"outbox.string_converter_values", std::string(NameOf(kStringValues, c.outbox.string_converter_values))},
      {"outbox.key_converter_binary", Text(c.outbox.key_converter_binary)},
      {"outbox.value_converter_binary", Text(c.outbox.value_converter_binary)},
      {"outbox.expand_json_payload", Text(c.outbox.expand_json_payload)},
      {"outbox.json_payload_null_behavior", std::string(NameOf(kJsonNullBehaviors, c.outbox.json_payload_null_behavior))},
      {"outbox.json_payload_empty_array_behavior",
       std::string(NameOf(kJsonEmptyArrayBehaviors, c.outbox.json_payload_empty_array_behavior))},
      {"outbox.json_payload_field_name_adjustment",
       std::string(NameOf(kFieldNameAdjustments, c.outbox.json_payload_field_name_adjustment))},
      {"outbox.debezium_context_logical_name", c.outbox.debezium_context_logical_name},
      {"outbox.envelope_schema_name", c.outbox.envelope_schema_name},
      {"outbox.null_as_column_default", Text(c.outbox.null_as_column_default)},
      {"outbox.include_unknown_datatypes", Text(c.outbox.include_unknown_datatypes)},
      {"outbox.decimal_handling_mode", std::string(NameOf(kDecimalHandlings, c.outbox.decimal_handling_mode))},
      {"outbox.time_precision_mode", std::string(NameOf(kTimePrecisions, c.outbox.time_precision_mode))},
      {"outbox.interval_handling_mode", std::string(NameOf(kIntervalHandlings, c.outbox.interval_handling_mode))},
      {"outbox.binary_handling_mode", std::string(NameOf(kBinaryHandlings, c.outbox.binary_handling_mode))},
      {"outbox.hstore_handling_mode", std::string(NameOf(kHstoreHandlings, c.outbox.hstore_handling_mode))},
      {"outbox.event_converting_failure_handling_mode",
       std::string(NameOf(kConvertingFailures, c.outbox.event_converting_failure_handling_mode))},
      {"outbox.money_fraction_digits", Text(c.outbox.money_fraction_digits)},
      {"outbox.propagate_source_type.columns", c.outbox.propagate_source_type_columns},
      {"outbox.propagate_source_type.datatypes", c.outbox.propagate_source_type_datatypes},
      {"sink.type", std::string(SinkTypeName(c.sink))},
      {"delivery.max_inflight_bytes", Text(c.delivery.max_inflight_bytes)},
      {"delivery.max_inflight_events", Text(c.delivery.max_inflight_events)},
      {"delivery.release_slot_after_ms", Text(c.delivery.release_slot_after_ms)},
      {"delivery.shutdown_timeout_ms", Text(c.delivery.shutdown_timeout_ms)},
      {"delivery.on_error", std::string(NameOf(kOnErrors, c.delivery.on_error))},
      {"delivery.dead_letter_topic", c.delivery.dead_letter_topic},
      {"delivery.unsafe", Text(c.delivery.unsafe)},
      {"delivery.guarantee", std::string(NameOf(kGuarantees, c.delivery.guarantee))},
      {"delivery.transaction_interval_ms", Text(c.delivery.transaction_interval_ms)},
  };
  for (const ColumnMapperRule& rule : c.outbox.column_mappers) kv.emplace_back(rule.key, rule.columns);
  if (every_sink || c.sink == SinkType::kNats) {
    const NatsConfig& n = c.nats;
    kv.insert(kv.end(), {{"nats.url", n.url},
                         {"nats.stream", n.stream},
                         {"nats.user", n.user},
                         {"nats.password", n.password},
                         {"nats.token", n.token},
                         {"nats.creds", n.creds},
                         {"nats.tls.ca", n.tls_ca},
                         {"nats.tls.cert", n.tls_cert},
                         {"nats.tls.key", n.tls_key},
                         {"nats.tls.hostname", n.tls_hostname},
                         {"nats.ack_timeout_ms", Text(n.ack_timeout_ms)},
                         {"nats.connect_timeout_ms", Text(n.connect_timeout_ms)}});
  }
  if (every_sink || c.sink == SinkType::kRabbitMq) {
    const RabbitMqConfig& q = c.rabbitmq;
    kv.insert(kv.end(), {{"rabbitmq.url", q.url},  // a password in it is masked by Redact
                         {"rabbitmq.user", q.user},
                         {"rabbitmq.password", q.password},
                         {"rabbitmq.exchange", q.exchange},
                         {"rabbitmq.routing_key", q.routing_key},
                         {"rabbitmq.dead_letter_exchange", q.dead_letter_exchange},
                         {"rabbitmq.content_type", q.content_type},
                         {"rabbitmq.tls.ca", q.tls_ca},
                         {"rabbitmq.tls.cert", q.tls_cert},
                         {"rabbitmq.tls.key", q.tls_key},
                         {"rabbitmq.tls.verify", Text(q.tls_verify)},
                         {"rabbitmq.heartbeat_s", Text(q.heartbeat_s)},
                         {"rabbitmq.connect_timeout_ms", Text(q.connect_timeout_ms)}});
  }
  if (every_sink || c.sink == SinkType::kHttp) {
    const HttpSinkConfig& h = c.http_sink;
    kv.insert(kv.end(), {{"http_sink.url", h.url},
                         {"http_sink.content_type", h.content_type},
                         {"http_sink.key_header", h.key_header},
                         {"http_sink.timeout_ms", Text(h.timeout_ms)},
                         {"http_sink.connect_timeout_ms", Text(h.connect_timeout_ms)},
                         {"http_sink.max_in_flight", Text(h.max_in_flight)},
                         {"http_sink.batch_max_events", Text(h.batch_max_events)},
                         {"http_sink.retry_backoff_ms", Text(h.retry_backoff_ms)},
                         {"http_sink.retry_backoff_max_ms", Text(h.retry_backoff_max_ms)},
                         {"http_sink.retry_after_max_ms", Text(h.retry_after_max_ms)},
                         {"http_sink.bearer_token", h.bearer_token},
                         {"http_sink.user", h.user},
                         {"http_sink.password", h.password},
                         {"http_sink.tls.ca", h.tls_ca},
                         {"http_sink.tls.cert", h.tls_cert},
                         {"http_sink.tls.key", h.tls_key},
                         {"http_sink.check_url", h.check_url}});
  }
  for (const auto& [property, value] : c.kafka) kv.emplace_back(Cat("kafka.", property), value);
  return kv;
}

}  // namespace internal

std::vector<std::pair<std::string, std::string>> EffectiveValues(const Config& process, const PipelineConfig& pipeline) {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"http.listen", process.http_listen},
      {"log.level", process.log_level},
      {"log.format", std::string(internal::NameOf(internal::kLogFormats, process.log_format))},
  };
  for (auto& entry : internal::KeyValues(pipeline, /*every_sink=*/false)) kv.push_back(std::move(entry));
  for (auto& [key, value] : kv) {
    if (IsSecretKey(key) && !value.empty()) value = "****";
  }
  return kv;
}

}  // namespace outbox::config
