// The sink and the checkpoint store of a pipeline, made from its configuration: the one place that knows which
// implementations exist (the Kafka, NATS JetStream, RabbitMQ and HTTP webhook sinks, and the kafka, file and none
// stores).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "http/sink.h"
#include "nats/sink.h"
#include "rabbitmq/sink.h"
#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

namespace outbox::app {

// The pipeline's sink; its reports go to `handler`. Errors name the configuration key.
absl::StatusOr<std::unique_ptr<sinks::Sink>> MakeSink(const config::PipelineConfig& config, sinks::ReportHandler* handler);

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
