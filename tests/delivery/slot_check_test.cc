// pg::CheckSlot, the slot check `run` takes before each START_REPLICATION and `check` reports: every gap of SPEC.md
// §5 stops the relay unless accepted, a missing slot is created only on a first start with nothing that says it
// existed, and --start-lsn is checked against the slot and the server.
#include "pg/slot_check.h"

#include <gtest/gtest.h>

#include "common/status_tag.h"

namespace outbox::pg {
namespace {

const std::string kSystem = "7300000000000000001";
const std::string kOther = "7300000000000000099";

SlotInfo Slot(uint64_t confirmed) {
  SlotInfo s;
  s.name = "outbox_slot";
  s.plugin = "pgoutput";
  s.confirmed_flush_lsn = Lsn(confirmed);
  s.wal_status = "reserved";
  return s;
}

Checkpoint Cp(uint64_t lsn, const std::string& system = kSystem) {
  return Checkpoint{system, 1, "outbox_slot", "", Lsn(lsn)};
}

SlotCheckInput Input(std::optional<SlotInfo> slot, std::optional<Checkpoint> own) {
  SlotCheckInput in;
  in.slot_name = "outbox_slot";
  in.slot = std::move(slot);
  in.checkpoints.own = std::move(own);
  in.store = "topic outbox_relay.checkpoints";
  in.system = SystemInfo{kSystem, 1, Lsn(0x90000), "db"};
  return in;
}

std::string Error(const absl::StatusOr<SlotDecision>& d) { return d.ok() ? "" : std::string(d.status().message()); }

TEST(SlotCheck, ASlotAtItsCheckpointStreamsFromTheSlot) {
  auto d = CheckSlot(Input(Slot(0x5000), Cp(0x5000)));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->confirmed, Lsn(0x5000));
  EXPECT_EQ(d->checkpointed, Lsn(0x5000));
  EXPECT_FALSE(d->write_checkpoint.has_value());
}

TEST(SlotCheck, ASlotBehindItsCheckpointIsNoGap) {
  // The relay writes its checkpoint before it confirms: a crash between leaves the slot behind it.
  auto d = CheckSlot(Input(Slot(0x4000), Cp(0x5000)));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->confirmed, Lsn(0x4000));
}

TEST(SlotCheck, ASlotAheadOfItsCheckpointIsAGap) {
  auto d = CheckSlot(Input(Slot(0x6000), Cp(0x5000)));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(Error(d).find("ahead of the checkpoint 0/5000"), std::string::npos) << Error(d);
}

TEST(SlotCheck, ASlotWithoutACheckpointIsAGap) {
  auto d = CheckSlot(Input(Slot(0x6000), std::nullopt));
  EXPECT_NE(Error(d).find("has no checkpoint in topic outbox_relay.checkpoints"), std::string::npos) << Error(d);
}

TEST(SlotCheck, OnlyAnotherClustersCheckpointIsACLusterSwitch) {
  SlotCheckInput in = Input(Slot(0x6000), std::nullopt);
  in.checkpoints.other_systems = {kOther};
  auto d = CheckSlot(in);
  EXPECT_NE(Error(d).find("belongs to system " + kOther), std::string::npos) << Error(d);
}

TEST(SlotCheck, AnAcceptedGapWritesTheSlotsPositionAsTheCheckpoint) {
  SlotCheckInput in = Input(Slot(0x6000), Cp(0x5000));
  in.accept_gap = true;
  auto d = CheckSlot(in);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->write_checkpoint, Lsn(0x6000));
  EXPECT_FALSE(d->checkpointed.has_value());  // what the store holds is not this slot's until written
  EXPECT_FALSE(d->warnings.empty());
}

TEST(SlotCheck, WithoutAStoreThereIsNoGapCheck) {
  SlotCheckInput in = Input(Slot(0x6000), std::nullopt);
  in.store_enabled = false;
  auto d = CheckSlot(in);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->checkpointed, Lsn(0x6000));
}

TEST(SlotCheck, AMissingSlotIsCreatedOnlyOnAFirstStartWithNoCheckpoint) {
  SlotCheckInput in = Input(std::nullopt, std::nullopt);
  in.create_slot = true;
  auto d = CheckSlot(in);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->create_slot);

  in.first_start = false;  // it existed during this run: dropped
  EXPECT_EQ(CheckSlot(in).status().code(), absl::StatusCode::kFailedPrecondition);

  in = Input(std::nullopt, Cp(0x5000));  // a checkpoint says it existed: dropped
  in.create_slot = true;
  d = CheckSlot(in);
  EXPECT_NE(Error(d).find("it was dropped"), std::string::npos) << Error(d);
}

TEST(SlotCheck, AMissingSlotWithoutCreateSlotNamesInit) {
  auto d = CheckSlot(Input(std::nullopt, std::nullopt));
  EXPECT_NE(Error(d).find("outbox-relay init"), std::string::npos) << Error(d);
}

TEST(SlotCheck, AnInvalidatedSlotIsFatal) {
  SlotInfo s = Slot(0x5000);
  s.wal_status = "lost";
  auto d = CheckSlot(Input(s, Cp(0x5000)));
  EXPECT_NE(Error(d).find("invalidated"), std::string::npos) << Error(d);
}

TEST(SlotCheck, AnInvalidatedSlotNamesTheServerSettingThatDidIt) {
  SlotInfo s = Slot(0x5000);
  s.wal_status = "lost";
  s.invalidation_reason = "wal_removed";  // PostgreSQL 17+; before it, wal_status lost alone means this
  EXPECT_NE(Error(CheckSlot(Input(s, Cp(0x5000)))).find("max_slot_wal_keep_size exceeded); events after 0/5000 are "
                                                        "gone from the WAL"),
            std::string::npos);
  s.invalidation_reason = "idle_timeout";  // PostgreSQL 18
  auto d = CheckSlot(Input(s, Cp(0x5000)));
  EXPECT_NE(Error(d).find("invalidation_reason idle_timeout"), std::string::npos) << Error(d);
  EXPECT_NE(Error(d).find("idle_replication_slot_timeout"), std::string::npos) << Error(d);
  EXPECT_EQ(Error(d).find("max_slot_wal_keep_size"), std::string::npos) << Error(d);
  EXPECT_NE(Error(d).find("events after 0/5000 can no longer be decoded"), std::string::npos) << Error(d);
  s.invalidation_reason = "rows_removed";
  EXPECT_NE(Error(CheckSlot(Input(s, Cp(0x5000)))).find("hot_standby_feedback"), std::string::npos);
  // A reason is enough, whatever wal_status says.
  s.wal_status = "reserved";
  s.invalidation_reason = "wal_level_insufficient";
  EXPECT_NE(Error(CheckSlot(Input(s, Cp(0x5000)))).find("wal_level"), std::string::npos);
}

TEST(SlotCheck, ASlotOfAnotherPluginIsFatal) {
  SlotInfo s = Slot(0x5000);
  s.plugin = "test_decoding";
  EXPECT_EQ(CheckSlot(Input(s, Cp(0x5000))).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SlotCheck, StartLsnBeforeTheSlotOrBeyondTheWalIsAUsageError) {
  SlotCheckInput in = Input(Slot(0x5000), Cp(0x5000));
  in.start_lsn = Lsn(0x4000);
  auto d = CheckSlot(in);
  EXPECT_EQ(ReasonOf(d.status()), StatusReason::kUsage);
  in.start_lsn = Lsn(0x1F0000000);  // beyond xlogpos 0/90000
  d = CheckSlot(in);
  EXPECT_EQ(ReasonOf(d.status()), StatusReason::kUsage);
  EXPECT_NE(Error(d).find("beyond the server's current WAL position"), std::string::npos) << Error(d);
}

TEST(SlotCheck, StartLsnStreamsFromItAndCheckpointsIt) {
  SlotCheckInput in = Input(Slot(0x5000), Cp(0x5000));
  in.start_lsn = Lsn(0x7000);
  auto d = CheckSlot(in);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->confirmed, Lsn(0x7000));
  EXPECT_EQ(d->write_checkpoint, Lsn(0x7000));
}

TEST(SlotCheck, AnActiveSlotMeansWaitingAsAStandby) {
  SlotInfo s = Slot(0x5000);
  s.active = true;
  s.active_pid = 4242;
  const absl::Status st = CheckSlotFree("outbox_slot", s);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ReasonOf(st), StatusReason::kStandby);
  EXPECT_TRUE(CheckSlotFree("outbox_slot", Slot(0x5000)).ok());
}

TEST(SlotCheck, AFailoverSlotIsAskedForWhenTheSlotIsNotOne) {
  SlotCheckInput in = Input(Slot(0x5000), Cp(0x5000));
  in.failover = true;
  auto d = CheckSlot(in);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->make_failover);
}

}  // namespace
}  // namespace outbox::pg
