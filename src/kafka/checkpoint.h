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
#include "common/lsn.h"

namespace outbox::kafka {

struct Checkpoint {
  std::string system_id;
  int64_t timeline = 0;
  std::string slot;
  std::string instance;
  Lsn lsn;
};

std::string CheckpointKey(const Checkpoint& c);        // "<system id>/<slot>/<instance>"
std::string CheckpointKeyPrefix(const std::string& system_id, const std::string& slot);  // "<system id>/<slot>/"
std::string EncodeCheckpoint(const Checkpoint& c);     // JSON
absl::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view json);

// What a checkpoint store holds for one slot of one cluster: this cluster's checkpoint with the highest LSN, and
// the other clusters (system identifiers) with checkpoints for a slot of the same name. Several clusters share one
// store when services with their own databases share a Kafka cluster (and so the default checkpoint topic): each
// reads only its own keys, and another cluster's checkpoints only tell a cluster switch (none of this cluster's,
// some of another's) from a slot never initialized.
struct SlotCheckpoints {
  std::optional<Checkpoint> own;
  std::set<std::string> other_systems;
};

// Folds one checkpoint read from a store into `into` (pure): kept when it is of `slot`, as this cluster's
// (`system_id`) when it is the highest LSN of it so far, else as another cluster's.
void AddCheckpoint(const Checkpoint& c, const std::string& system_id, const std::string& slot, SlotCheckpoints* into);

// Reads the compacted topic from the beginning to its end and returns the checkpoints of `slot` as seen from
// cluster `system_id`.
absl::StatusOr<SlotCheckpoints> ReadKafkaCheckpoint(const std::map<std::string, std::string>& kafka_conf,
                                                    const std::string& topic, const std::string& slot,
                                                    const std::string& system_id, int timeout_ms);

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
