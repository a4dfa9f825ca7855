// The checkpoint stores of source.checkpoint: kafka (a compacted topic, written through the relay's own producer)
// and file. Both implement sinks::CheckpointStore; `none` is sinks::NoCheckpointStore.
#pragma once

#include <map>
#include <string>

#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

namespace outbox::kafka {

class KafkaSink;

// The topic store. Reads with a consumer of its own (at start); writes a record through the sink it is attached to,
// whose report (with the write's origin) tells when it is durable.
class KafkaCheckpointStore final : public sinks::CheckpointStore {
 public:
  KafkaCheckpointStore(std::map<std::string, std::string> kafka_conf, std::string topic, int64_t (*unix_millis)());
  // The sink the checkpoint records go through (the relay's producer; it changes when the producer is recreated).
  void Attach(sinks::Sink* sink) { sink_ = sink; }
  std::string Describe() const override { return "topic " + topic_; }
  // Creates the compacted topic when missing.
  absl::Status Prepare() override;
  // Reads the topic to its end (a missing topic holds nothing).
  absl::StatusOr<SlotCheckpoints> Read(const std::string& system_id, const std::string& slot) override;
  sinks::CheckpointWrite Write(const Checkpoint& c, uint64_t origin) override;

 private:
  std::map<std::string, std::string> kafka_conf_;
  std::string topic_;
  int64_t (*unix_millis_)();
  sinks::Sink* sink_ = nullptr;
};

// delivery.guarantee exactly_once: the topic store inside the records' Kafka transactions. A write commits the open
// transaction with the checkpoint record in it (through the transactional KafkaSink); TakeOver runs
// init_transactions. The first Read after a takeover waits, with isolation.level read_committed, until every
// transaction open when it began is decided (so it reads the last committed checkpoint); a Read before it (the slot
// check before START_REPLICATION) reads to the high watermark at read_uncommitted and waits for nothing. Before the
// takeover (a slot just created, --accept-gap, --start-lsn) a write is a plain record, durable at once.
class TransactionalCheckpointStore final : public sinks::CheckpointStore {
 public:
  TransactionalCheckpointStore(std::map<std::string, std::string> kafka_conf, std::string topic,
                               int64_t (*unix_millis)(), int transaction_timeout_ms);
  void Attach(KafkaSink* sink) { sink_ = sink; }
  std::string Describe() const override { return "topic " + topic_; }
  absl::Status Prepare() override;
  absl::Status TakeOver(int timeout_ms) override;
  absl::StatusOr<SlotCheckpoints> Read(const std::string& system_id, const std::string& slot) override;
  sinks::CheckpointWrite Write(const Checkpoint& c, uint64_t origin) override;
  bool commits_records() const override { return true; }

 private:
  std::map<std::string, std::string> kafka_conf_;
  std::string topic_;
  int64_t (*unix_millis_)();
  int transaction_timeout_ms_;
  KafkaSink* sink_ = nullptr;
  bool taken_over_ = false;  // TakeOver succeeded and no Read since
};

// The file store: written to a temporary file, fsynced, renamed, and the directory fsynced.
class FileCheckpointStore final : public sinks::CheckpointStore {
 public:
  explicit FileCheckpointStore(std::string path) : path_(std::move(path)) {}
  std::string Describe() const override { return path_; }
  absl::StatusOr<SlotCheckpoints> Read(const std::string& system_id, const std::string& slot) override;
  sinks::CheckpointWrite Write(const Checkpoint& c, uint64_t origin) override;

 private:
  std::string path_;
};

}  // namespace outbox::kafka
