// The slot check (SPEC.md §5 gap detection), pure: what the server says of the slot, what the checkpoint store holds,
// the server's identity and the options in; the decision to stream (and from where), to create the slot, or the
// error that stops the relay out. `run` takes it before each START_REPLICATION, `check` reports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint.h"
#include "common/lsn.h"

namespace outbox::pg {

struct SystemInfo {
  std::string system_id;
  int64_t timeline = 0;
  Lsn xlogpos;
  std::string dbname;
};

// A row of pg_replication_slots.
struct SlotInfo {
  std::string name;
  std::string plugin;
  std::string database;
  bool active = false;
  std::optional<int64_t> active_pid;
  std::optional<Lsn> restart_lsn;
  std::optional<Lsn> confirmed_flush_lsn;
  std::string wal_status;  // reserved / extended / unreserved / lost ("" when NULL)
  // PostgreSQL 17+: why the server invalidated the slot (wal_removed, rows_removed, wal_level_insufficient, and on
  // 18 idle_timeout); "" while it is valid and before 17, where wal_status lost is the only sign (wal_removed).
  std::string invalidation_reason;
  // PostgreSQL 17+ (nullopt before): a failover slot, and a slot a standby synchronized from its primary.
  std::optional<bool> failover;
  std::optional<bool> synced;
};

// The first server version with failover slots (CREATE_REPLICATION_SLOT ... (FAILOVER), `synced`), and with
// pg_replication_slots.invalidation_reason.
constexpr int kFailoverMinServerVersion = 170000;

// Whether the server invalidated the slot: wal_status lost, or (17+) an invalidation_reason.
bool SlotInvalidated(const SlotInfo& s);
// Why, for messages: "wal_status lost, max_slot_wal_keep_size exceeded" for WAL removed (or no reason before 17),
// "invalidation_reason idle_timeout: ..." naming the server setting that did it for the others.
std::string InvalidationCause(const SlotInfo& s);

// Another relay streams the slot: UNAVAILABLE with StatusReason::kStandby (wait as a standby), checked before the
// checkpoint is read (a standby's retries do not read the store); OK otherwise.
absl::Status CheckSlotFree(const std::string& slot_name, const std::optional<SlotInfo>& slot);

struct SlotCheckInput {
  std::string slot_name;
  std::optional<SlotInfo> slot;         // nullopt: the slot does not exist
  SlotCheckpoints checkpoints;          // what the store holds (empty when it is disabled)
  bool store_enabled = true;            // false: source.checkpoint none (no gap check)
  std::string store;                    // the store, for messages ("topic X", a file's path)
  SystemInfo system;                    // IDENTIFY_SYSTEM
  bool create_slot = false;             // source.create_slot
  bool first_start = true;              // no earlier session of this process passed the check
  bool accept_gap = false;              // --accept-gap
  std::optional<Lsn> start_lsn;         // --start-lsn
  bool failover = false;                // source.failover
};

struct SlotDecision {
  bool create_slot = false;             // create the slot, write its consistent point as the checkpoint, check again
  bool make_failover = false;           // ALTER_REPLICATION_SLOT ... (FAILOVER true)
  Lsn slot_confirmed;                   // the slot's confirmed_flush_lsn
  Lsn confirmed;                        // where the stream starts: the slot, or --start-lsn
  std::optional<Lsn> checkpointed;      // what the store durably holds for this slot (when it agrees with the slot)
  std::optional<Lsn> write_checkpoint;  // write this checkpoint before streaming (an accepted gap, --start-lsn)
  std::vector<std::string> warnings;    // to log: an accepted gap, a skip, other clusters' checkpoints
};

// FAILED_PRECONDITION for a missing, invalidated or foreign slot and for gaps (unless accepted); INVALID_ARGUMENT
// with StatusReason::kUsage for a --start-lsn before the slot or beyond the server's WAL.
absl::StatusOr<SlotDecision> CheckSlot(const SlotCheckInput& in);

}  // namespace outbox::pg
