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

// delivery.guarantee exactly_once: one PostgreSQL transaction split over several Kafka transactions (too large
// for the delivery bounds, or too slow for the transaction timeout). Its first `records` events are committed.
struct PartialTransaction {
  Lsn commit_lsn;  // the transaction's commit LSN (its Begin's final LSN)
  int64_t records = 0;
  bool operator==(const PartialTransaction&) const = default;
};

struct Checkpoint {
  std::string system_id;
  int64_t timeline = 0;
  std::string slot;
  std::string instance;
  Lsn lsn;  // every transaction ending at or before it is delivered (exactly_once: committed)
  std::optional<PartialTransaction> partial = std::nullopt;  // exactly_once: the transaction after `lsn` committed in part
};

// Whether `a` is further than `b`: a higher LSN, or the same LSN with more of the next transaction committed.
bool CheckpointAhead(const Checkpoint& a, const Checkpoint& b);

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
