// Checkpoints: the LSN the relay is about to confirm, made durable before the status update that confirms it
// (SPEC.md §3 source.checkpoint). In Kafka: a compacted topic, one key per relay instance
// (`<system identifier>/<slot>/<instance>`); readers take the highest LSN over the slot's keys, so a late write
// from a dead relay cannot lower it. The value codec is pure; the reader and topic creation touch the broker.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint.h"
#include "common/lsn.h"

namespace outbox::kafka {

// The checkpoint record and its codec live in common/checkpoint.h (every store and the slot check share them).
using ::outbox::AddCheckpoint;
using ::outbox::Checkpoint;
using ::outbox::CheckpointKey;
using ::outbox::CheckpointKeyPrefix;
using ::outbox::DecodeCheckpoint;
using ::outbox::EncodeCheckpoint;
using ::outbox::SlotCheckpoints;

// Where a checkpoint read ends. kHighWatermark: read_uncommitted, to the high watermark seen when the read began
// (at-least-once writes no transactions). kCommittedToHighWatermark: read_committed, and on until the last stable
// offset reaches that high watermark (every transaction open then is committed or aborted), so that the last
// committed checkpoint is read whatever other pipelines sharing the topic have open.
enum class ReadUntil { kHighWatermark, kCommittedToHighWatermark };

// Reads the compacted topic from the beginning to its end and returns the checkpoints of `slot` as seen from
// cluster `system_id`.
absl::StatusOr<SlotCheckpoints> ReadKafkaCheckpoint(const std::map<std::string, std::string>& kafka_conf,
                                                    const std::string& topic, const std::string& slot,
                                                    const std::string& system_id, int timeout_ms,
                                                    ReadUntil until = ReadUntil::kHighWatermark);

// Creates the compacted checkpoint topic if it does not exist.
absl::Status EnsureCheckpointTopic(const std::map<std::string, std::string>& kafka_conf, const std::string& topic,
                                   int timeout_ms);

// Produces one checkpoint record and waits for its acknowledgement (used by `init`).
absl::Status WriteKafkaCheckpoint(const std::map<std::string, std::string>& kafka_conf, const std::string& topic,
                                  const Checkpoint& c, int timeout_ms);

// The file store: written to a temporary file, fsynced and renamed.
absl::Status WriteFileCheckpoint(const std::string& path, const Checkpoint& c);
absl::StatusOr<std::optional<Checkpoint>> ReadFileCheckpoint(const std::string& path);

}  // namespace outbox::kafka
