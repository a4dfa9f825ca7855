// The checkpoint: the LSN a relay is about to confirm, with the identity of the cluster and slot it belongs to, and
// its JSON codec (the value of a Kafka checkpoint record and the file store's content). Pure.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/lsn.h"

namespace outbox {

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

}  // namespace outbox
