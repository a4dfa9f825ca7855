// The kafka and file checkpoint stores.
#include "kafka/checkpoint_store.h"

#include <utility>

#include "common/strings.h"
#include "kafka/checkpoint.h"
#include "kafka/sink.h"

namespace outbox::kafka {

namespace {
constexpr int kEnsureTopicTimeoutMs = 10000;
constexpr int kReadTimeoutMs = 15000;

// A checkpoint as the record of `topic` that holds it: its key and value are kept in `key` and `value`.
Record CheckpointRecord(const Checkpoint& c, const std::string& topic, int64_t timestamp_ms, std::string* key,
                        std::string* value) {
  *key = CheckpointKey(c);
  *value = EncodeCheckpoint(c);
  Record rec;
  rec.topic = topic;
  rec.key = *key;
  rec.value = *value;
  rec.timestamp_ms = timestamp_ms;
  return rec;
}
}  // namespace

KafkaCheckpointStore::KafkaCheckpointStore(std::map<std::string, std::string> kafka_conf, std::string topic,
                                           int64_t (*unix_millis)())
    : kafka_conf_(std::move(kafka_conf)), topic_(std::move(topic)), unix_millis_(unix_millis) {}

absl::Status KafkaCheckpointStore::Prepare() {
  return EnsureCheckpointTopic(kafka_conf_, topic_, kEnsureTopicTimeoutMs);
}

absl::StatusOr<SlotCheckpoints> KafkaCheckpointStore::Read(const std::string& system_id, const std::string& slot) {
  return ReadKafkaCheckpoint(kafka_conf_, topic_, slot, system_id, kReadTimeoutMs);
}

sinks::CheckpointWrite KafkaCheckpointStore::Write(const Checkpoint& c, uint64_t origin) {
  using Code = sinks::CheckpointWrite::Code;
  if (sink_ == nullptr) return {Code::kFailed, absl::UnavailableError("writing a checkpoint: no producer")};
  std::string key, value;
  const sinks::ProduceResult r = sink_->Produce(CheckpointRecord(c, topic_, unix_millis_(), &key, &value), origin);
  switch (r.code) {
    case sinks::ProduceResult::Code::kOk:
      return {Code::kPending, absl::OkStatus()};
    case sinks::ProduceResult::Code::kFull:
      return {Code::kBusy, absl::OkStatus()};
    case sinks::ProduceResult::Code::kFailed:
      return {Code::kFailed, absl::UnavailableError(Cat("writing a checkpoint failed: ", r.error))};
    case sinks::ProduceResult::Code::kRejected:
      return {Code::kError, absl::FailedPreconditionError(Cat("the checkpoint topic ", topic_, " refused a checkpoint: ",
                                                              r.error))};
  }
  return {Code::kError, absl::InternalError("unknown produce result")};
}

TransactionalCheckpointStore::TransactionalCheckpointStore(std::map<std::string, std::string> kafka_conf,
                                                           std::string topic, int64_t (*unix_millis)(),
                                                           int transaction_timeout_ms)
    : kafka_conf_(std::move(kafka_conf)),
      topic_(std::move(topic)),
      unix_millis_(unix_millis),
      transaction_timeout_ms_(transaction_timeout_ms) {}

absl::Status TransactionalCheckpointStore::Prepare() {
  return EnsureCheckpointTopic(kafka_conf_, topic_, kEnsureTopicTimeoutMs);
}

absl::Status TransactionalCheckpointStore::TakeOver(int timeout_ms) {
  if (sink_ == nullptr) return absl::UnavailableError("taking the transactional id over: no producer");
  absl::Status st = sink_->InitTransactions(timeout_ms);
  taken_over_ = st.ok();
  return st;
}

absl::StatusOr<SlotCheckpoints> TransactionalCheckpointStore::Read(const std::string& system_id,
                                                                   const std::string& slot) {
  if (!std::exchange(taken_over_, false)) return ReadKafkaCheckpoint(kafka_conf_, topic_, slot, system_id, kReadTimeoutMs);
  // Another pipeline's transaction open on the shared topic holds its last stable offset back for up to its
  // transaction timeout (a relay killed with one open and never restarted).
  return ReadKafkaCheckpoint(kafka_conf_, topic_, slot, system_id, transaction_timeout_ms_ + kReadTimeoutMs,
                             ReadUntil::kCommittedToHighWatermark);
}

sinks::CheckpointWrite TransactionalCheckpointStore::Write(const Checkpoint& c, uint64_t origin) {
  using Code = sinks::CheckpointWrite::Code;
  if (sink_ == nullptr || !sink_->transactions_ready()) {
    // Before the takeover: the slot's start position, set by this relay alone (nothing of it is produced yet).
    if (absl::Status st = WriteKafkaCheckpoint(kafka_conf_, topic_, c, kReadTimeoutMs); !st.ok()) {
      return {Code::kFailed, st};
    }
    return {Code::kDurable, absl::OkStatus()};
  }
  std::string key, value;
  return sink_->CommitTransaction(CheckpointRecord(c, topic_, unix_millis_(), &key, &value), origin);
}

absl::StatusOr<SlotCheckpoints> FileCheckpointStore::Read(const std::string& system_id, const std::string& slot) {
  auto cp = ReadFileCheckpoint(path_);
  if (!cp.ok()) return absl::FailedPreconditionError(Cat("source.checkpoint_file: ", cp.status().message()));
  SlotCheckpoints checkpoints;
  if (cp->has_value()) AddCheckpoint(**cp, system_id, slot, &checkpoints);
  return checkpoints;
}

sinks::CheckpointWrite FileCheckpointStore::Write(const Checkpoint& c, uint64_t) {
  if (absl::Status st = WriteFileCheckpoint(path_, c); !st.ok()) return {sinks::CheckpointWrite::Code::kError, st};
  return {};
}

}  // namespace outbox::kafka
