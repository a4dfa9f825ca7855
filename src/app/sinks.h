// The sink and the checkpoint store of a pipeline, made from its configuration: the one place that knows which
// implementations exist (the Kafka, NATS JetStream, RabbitMQ and HTTP webhook sinks, and the kafka, file and none
// stores).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "http/sink.h"
#include "nats/sink.h"
#include "rabbitmq/sink.h"
#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

namespace outbox::app {

// The pipeline's sink; its reports go to `handler`. Errors name the configuration key.
// `system_id` names the cluster streamed from: with delivery.guarantee exactly_once the producer's transactional.id
// is derived from it and the slot (kafka::TransactionalId).
absl::StatusOr<std::unique_ptr<sinks::Sink>> MakeSink(const config::PipelineConfig& config, sinks::ReportHandler* handler,
                                                      const std::string& system_id = "");

// The librdkafka configuration of a Kafka pipeline (kafka::BuildProducerConfig with its bounds and guarantee), without
// the transactional.id.
absl::StatusOr<std::map<std::string, std::string>> ProducerConfigOf(const config::PipelineConfig& config);

// The NATS sink's options from nats.* (sink.type: nats).
nats::Options NatsOptions(const config::PipelineConfig& config);
// The RabbitMQ sink's options from rabbitmq.* (sink.type: rabbitmq).
rabbitmq::Options RabbitMqOptions(const config::PipelineConfig& config);

// The HTTP sink's options from http_sink.* (sink.type: http).
http::Options HttpOptions(const config::PipelineConfig& config);

// The store of source.checkpoint. A store that writes through the sink (the kafka topic) is given it by Attach.
std::unique_ptr<sinks::CheckpointStore> MakeCheckpointStore(const config::PipelineConfig& config);
// Tells `store` which sink its writes go through (after the sink is made or recreated; nullptr before).
void AttachSink(sinks::CheckpointStore* store, sinks::Sink* sink);

}  // namespace outbox::app
