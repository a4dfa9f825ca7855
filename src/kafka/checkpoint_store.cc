// The kafka and file checkpoint stores.
#include "kafka/checkpoint_store.h"

#include "common/strings.h"
#include "kafka/checkpoint.h"

namespace outbox::kafka {

namespace {
constexpr int kEnsureTopicTimeoutMs = 10000;
constexpr int kReadTimeoutMs = 15000;
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
  const std::string key = CheckpointKey(c);
  const std::string value = EncodeCheckpoint(c);
  Record rec;
  rec.topic = topic_;
  rec.key = key;
  rec.value = value;
  rec.timestamp_ms = unix_millis_();
  const sinks::ProduceResult r = sink_->Produce(rec, origin);
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
