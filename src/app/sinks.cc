// Which sink and which checkpoint store a configuration asks for.
#include "app/sinks.h"

#include "app/test_hooks.h"
#include "delivery/clock.h"
#include "kafka/checkpoint_store.h"
#include "kafka/producer_config.h"
#include "http/sink.h"
#include "kafka/sink.h"
#include "nats/sink.h"

namespace outbox::app {
namespace {

int64_t UnixMillis() { return delivery::SystemClock().UnixMillis(); }

}  // namespace

nats::Options NatsOptions(const config::PipelineConfig& config) {
  const config::NatsConfig& n = config.nats;
  nats::Options o;
  o.url = n.url;
  o.stream = n.stream;
  o.user = n.user;
  o.password = n.password;
  o.token = n.token;
  o.creds = n.creds;
  o.tls_ca = n.tls_ca;
  o.tls_cert = n.tls_cert;
  o.tls_key = n.tls_key;
  o.tls_hostname = n.tls_hostname;
  o.ack_timeout_ms = n.ack_timeout_ms;
  o.connect_timeout_ms = n.connect_timeout_ms;
  // Above the delivery bounds, with room for checkpoint-free dead letters: the core's bounds bind first.
  o.max_pending = config.delivery.max_inflight_events + 1000;
  o.name = config.pipeline.empty() ? "outbox-relay" : "outbox-relay." + config.pipeline;
  return o;
}

rabbitmq::Options RabbitMqOptions(const config::PipelineConfig& config) {
  const config::RabbitMqConfig& q = config.rabbitmq;
  rabbitmq::Options o;
  o.url = q.url;
  o.user = q.user;
  o.password = q.password;
  o.exchange = q.exchange;
  o.routing_key = q.routing_key;
  o.dead_letter_exchange = q.dead_letter_exchange;
  o.dead_letter_topic = config.delivery.dead_letter_topic;
  o.content_type = q.content_type;
  o.tls_ca = q.tls_ca;
  o.tls_cert = q.tls_cert;
  o.tls_key = q.tls_key;
  o.tls_verify = q.tls_verify;
  o.heartbeat_s = static_cast<int>(q.heartbeat_s);
  o.connect_timeout_ms = q.connect_timeout_ms;
  o.name = config.pipeline.empty() ? "outbox-relay" : "outbox-relay." + config.pipeline;
  return o;
}

http::Options HttpOptions(const config::PipelineConfig& config) {
  const config::HttpSinkConfig& h = config.http_sink;
  http::Options o;
  o.url = h.url;
  o.route_topic = config.outbox.route_topic;
  o.content_type = h.content_type;
  o.key_header = h.key_header;
  o.timeout_ms = h.timeout_ms;
  o.connect_timeout_ms = h.connect_timeout_ms;
  o.max_in_flight = static_cast<size_t>(h.max_in_flight);
  o.batch_max_events = static_cast<size_t>(h.batch_max_events);
  o.backoff = {std::chrono::milliseconds(h.retry_backoff_ms), std::chrono::milliseconds(h.retry_backoff_max_ms),
               std::chrono::milliseconds(h.retry_after_max_ms)};
  o.bearer_token = h.bearer_token;
  o.user = h.user;
  o.password = h.password;
  o.tls_ca = h.tls_ca;
  o.tls_cert = h.tls_cert;
  o.tls_key = h.tls_key;
  o.check_url = h.check_url;
  // Above the delivery bounds, with room for dead letters: the core's bounds bind first.
  o.max_queued = static_cast<size_t>(config.delivery.max_inflight_events) + 1000;
  o.user_agent = config.pipeline.empty() ? "outbox-relay" : "outbox-relay." + config.pipeline;
  return o;
}

absl::StatusOr<std::map<std::string, std::string>> ProducerConfigOf(const config::PipelineConfig& config) {
  return kafka::BuildProducerConfig(config.kafka,
                                    {config.delivery.max_inflight_events, config.delivery.max_inflight_bytes},
                                    config.delivery.unsafe,
                                    config.delivery.guarantee == config::Guarantee::kExactlyOnce);
}

absl::StatusOr<std::unique_ptr<sinks::Sink>> MakeSink(const config::PipelineConfig& config, sinks::ReportHandler* handler,
                                                      const std::string& system_id) {
  if (config.sink == config::SinkType::kHttp) {
    auto sink = http::HttpSink::Create(HttpOptions(config), handler);
    if (!sink.ok()) return sink.status();
    return std::unique_ptr<sinks::Sink>(std::move(*sink));
  }
  if (config.sink == config::SinkType::kNats) {
    auto sink = nats::NatsSink::Create(NatsOptions(config), handler);
    if (!sink.ok()) return sink.status();
    return std::unique_ptr<sinks::Sink>(std::move(*sink));
  }
  if (config.sink == config::SinkType::kRabbitMq) {
    auto sink = rabbitmq::RabbitMqSink::Create(RabbitMqOptions(config), handler);
    if (!sink.ok()) return sink.status();
    return std::unique_ptr<sinks::Sink>(std::move(*sink));
  }
  auto conf = ProducerConfigOf(config);
  if (!conf.ok()) return conf.status();
  if (auto linger = test_hooks::DefaultLingerMs(); linger && !config.kafka.contains("linger.ms")) {
    (*conf)["linger.ms"] = *linger;
  }
  if (config.delivery.guarantee == config::Guarantee::kExactlyOnce) {
    (*conf)["transactional.id"] = kafka::TransactionalId(system_id, config.source.slot);
  }
  auto sink = kafka::KafkaSink::Create(
      *conf, handler,
      kafka::SendsHeldWhenIdle(config.kafka, config.delivery.guarantee == config::Guarantee::kExactlyOnce));
  if (!sink.ok()) return sink.status();
  return std::unique_ptr<sinks::Sink>(std::move(*sink));
}

std::unique_ptr<sinks::CheckpointStore> MakeCheckpointStore(const config::PipelineConfig& config) {
  switch (config.source.checkpoint) {
    case config::CheckpointStore::kKafka:
      if (config.delivery.guarantee == config::Guarantee::kExactlyOnce) {
        return std::make_unique<kafka::TransactionalCheckpointStore>(
            config.kafka, config.source.checkpoint_topic, &UnixMillis,
            static_cast<int>(kafka::TransactionTimeoutMs(config.kafka)));
      }
      return std::make_unique<kafka::KafkaCheckpointStore>(config.kafka, config.source.checkpoint_topic, &UnixMillis);
    case config::CheckpointStore::kFile:
      return std::make_unique<kafka::FileCheckpointStore>(config.source.checkpoint_file);
    case config::CheckpointStore::kNone:
      break;
  }
  return std::make_unique<sinks::NoCheckpointStore>();
}

void AttachSink(sinks::CheckpointStore* store, sinks::Sink* sink) {
  if (auto* kafka_store = dynamic_cast<kafka::KafkaCheckpointStore*>(store)) kafka_store->Attach(sink);
  if (auto* txn_store = dynamic_cast<kafka::TransactionalCheckpointStore*>(store)) {
    txn_store->Attach(dynamic_cast<kafka::KafkaSink*>(sink));
  }
}

}  // namespace outbox::app
