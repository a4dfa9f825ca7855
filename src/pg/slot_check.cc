// The slot check: slot + checkpoint + server identity + options -> start decision or the error.
#include "pg/slot_check.h"

#include "absl/strings/str_join.h"
#include "common/status_tag.h"
#include "common/strings.h"

namespace outbox::pg {

namespace {

absl::Status MissingSlot(const SlotCheckInput& in) {
  const std::optional<Checkpoint>& cp = in.checkpoints.own;
  return absl::FailedPreconditionError(Cat(
      "replication slot \"", in.slot_name, "\" does not exist",
      cp ? Cat(" (its last checkpoint is ", cp->lsn.ToString(),
               "): it was dropped; events after that position may be lost. Recreate it with `outbox-relay init` and "
               "backfill; the relay never recreates a slot")
         : ": create it with `outbox-relay init` (or set source.create_slot: true for a first start)"));
}

absl::Status UnusableSlot(const SlotCheckInput& in, const SlotInfo& s) {
  if (SlotInvalidated(s)) {
    const bool wal_removed = s.invalidation_reason.empty() || s.invalidation_reason == "wal_removed";
    return absl::FailedPreconditionError(Cat(
        "replication slot \"", in.slot_name, "\" was invalidated (", InvalidationCause(s), "); events after ",
        s.confirmed_flush_lsn ? s.confirmed_flush_lsn->ToString() : "?",
        wal_removed ? " are gone from the WAL" : " can no longer be decoded from it",
        ": drop and recreate the slot, then backfill"));
  }
  if (s.plugin != "pgoutput") {
    return absl::FailedPreconditionError(
        Cat("replication slot \"", in.slot_name, "\" uses plugin \"", s.plugin, "\", not pgoutput"));
  }
  return absl::OkStatus();
}

// The gap between the slot and the checkpoint, described; "" when there is none.
std::string Gap(const SlotCheckInput& in, Lsn slot_confirmed, const std::string& other_systems) {
  const std::optional<Checkpoint>& cp = in.checkpoints.own;
  if (!cp && !other_systems.empty()) {
    return Cat("slot \"", in.slot_name, "\" has no checkpoint of this server (system ", in.system.system_id, ") in ",
               in.store, ", but the checkpoint of a slot of that name belongs to system ", other_systems,
               ": another cluster (a replaced or restored database behind the same conninfo?)");
  }
  if (!cp) return Cat("slot \"", in.slot_name, "\" has no checkpoint in ", in.store, ": it was not made by `outbox-relay init`");
  if (slot_confirmed > cp->lsn) {
    return Cat("slot \"", in.slot_name, "\" is at ", slot_confirmed.ToString(), ", ahead of the checkpoint ",
               cp->lsn.ToString(), ": it was recreated or advanced by someone else, and the events between may never "
               "have been published");
  }
  return "";
}

absl::Status CheckStartLsn(const SlotCheckInput& in, Lsn x, Lsn slot_confirmed) {
  if (x < slot_confirmed) {
    return WithReason(absl::InvalidArgumentError(Cat("--start-lsn ", x.ToString(), " is older than slot \"",
                                                     in.slot_name, "\"'s confirmed position ", slot_confirmed.ToString(),
                                                     ": the server would silently start at the slot")),
                      StatusReason::kUsage);
  }
  // Beyond what the server has written: a typo (1F/0 for 1/F0) that would skip every event until the WAL got there.
  if (x > in.system.xlogpos) {
    return WithReason(absl::InvalidArgumentError(Cat("--start-lsn ", x.ToString(), " is beyond the server's current "
                                                     "WAL position ", in.system.xlogpos.ToString(),
                                                     ": it would skip every event written until then (a typo?)")),
                      StatusReason::kUsage);
  }
  return absl::OkStatus();
}

}  // namespace

bool SlotInvalidated(const SlotInfo& s) { return s.wal_status == "lost" || !s.invalidation_reason.empty(); }

std::string InvalidationCause(const SlotInfo& s) {
  const std::string& r = s.invalidation_reason;
  if (r.empty() || r == "wal_removed") return "wal_status lost, max_slot_wal_keep_size exceeded";
  if (r == "idle_timeout") {
    return "invalidation_reason idle_timeout: no relay streamed it for longer than the server's "
           "idle_replication_slot_timeout, which must exceed the longest planned relay downtime";
  }
  if (r == "rows_removed") {
    return "invalidation_reason rows_removed: catalog rows it needed were removed (on a standby: "
           "hot_standby_feedback with a physical slot keeps them)";
  }
  if (r == "wal_level_insufficient") {
    return "invalidation_reason wal_level_insufficient: the primary's wal_level is below logical";
  }
  return Cat("invalidation_reason ", r);
}

absl::Status CheckSlotFree(const std::string& slot_name, const std::optional<SlotInfo>& slot) {
  if (!slot || !slot->active) return absl::OkStatus();
  return WithReason(absl::UnavailableError(Cat("replication slot \"", slot_name, "\" is active for PID ",
                                               slot->active_pid.value_or(0))),
                    StatusReason::kStandby);
}

absl::StatusOr<SlotDecision> CheckSlot(const SlotCheckInput& in) {
  SlotDecision d;
  const std::string other_systems = absl::StrJoin(in.checkpoints.other_systems, ", ");
  if (in.checkpoints.own && !other_systems.empty() && in.first_start) {
    d.warnings.push_back(Cat(in.store, " also holds checkpoints of slot ", in.slot_name,
                             " of other clusters (system ", other_systems, "): ignored"));
  }
  if (!in.slot) {
    // Only a first start may create it, and only when nothing says it existed before (a checkpoint would).
    if (in.create_slot && !in.checkpoints.own && in.first_start) {
      d.create_slot = true;
      return d;
    }
    return MissingSlot(in);
  }
  const SlotInfo& s = *in.slot;
  if (absl::Status st = UnusableSlot(in, s); !st.ok()) return st;
  d.make_failover = in.failover && !s.failover.value_or(false);
  d.slot_confirmed = s.confirmed_flush_lsn.value_or(Lsn(0));
  d.confirmed = d.slot_confirmed;
  if (in.store_enabled) {
    const std::string gap = Gap(in, d.slot_confirmed, other_systems);
    if (!gap.empty()) {
      if (!in.accept_gap) return absl::FailedPreconditionError(Cat(gap, " (use --accept-gap to go on from the slot)"));
      d.warnings.push_back(Cat("accepting a gap: ", gap));
      d.write_checkpoint = d.slot_confirmed;
    } else {
      d.checkpointed = in.checkpoints.own->lsn;
    }
  } else {
    d.checkpointed = d.slot_confirmed;  // nothing to wait for
  }
  if (in.start_lsn) {
    const Lsn x = *in.start_lsn;
    if (absl::Status st = CheckStartLsn(in, x, d.slot_confirmed); !st.ok()) return st;
    d.warnings.push_back(Cat("--start-lsn ", x.ToString(), ": skipping every transaction whose commit LSN is in [",
                             d.slot_confirmed.ToString(), ", ", x.ToString(), ")"));
    if (in.store_enabled) d.write_checkpoint = x;
    d.confirmed = x;
    if (!in.store_enabled) d.checkpointed = x;
  }
  return d;
}

}  // namespace outbox::pg
