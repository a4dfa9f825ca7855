// The CheckpointStore interface: where the LSN about to be confirmed is made durable before the status update that
// confirms it (SPEC.md §3 source.checkpoint), and where the slot check reads it back. Implementations: the Kafka
// topic and the file (kafka/checkpoint_store.h), none (below), and a transactional sink that writes the checkpoint
// inside its own transaction. No I/O here.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint.h"

namespace outbox::sinks {

// What a Write did.
struct CheckpointWrite {
  enum class Code {
    kDurable,  // written and durable now
    kPending,  // started: its report (with the origin given) comes through the sink's Poll
    kBusy,     // not now (one is in flight, or the queue is full): ask again later
    kFailed,   // could not be started for a reason a rewind may cure
    kError,    // could not be written for good (the status says why): fatal
  };
  Code code = Code::kDurable;
  absl::Status error;  // kFailed and kError
};

// Owned by the loop thread.
class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;
  // False for `none`: nothing is read or written, there is no gap check, confirmations wait for nothing.
  virtual bool enabled() const { return true; }
  // "topic outbox_relay.checkpoints", "/var/lib/relay/checkpoint": for messages.
  virtual std::string Describe() const = 0;
  // Makes what a first write needs (the Kafka store creates its compacted topic); before streaming only.
  virtual absl::Status Prepare() { return absl::OkStatus(); }
  // What the store holds for `slot` as seen from cluster `system_id` (blocks; before streaming only).
  virtual absl::StatusOr<SlotCheckpoints> Read(const std::string& system_id, const std::string& slot) = 0;
  // Starts writing `c`; `origin` tags its report when the write is kPending.
  virtual CheckpointWrite Write(const Checkpoint& c, uint64_t origin) = 0;
  // True for a transactional sink: a write commits every record produced before it together with the checkpoint
  // (and nothing of a record is acknowledged before that).
  virtual bool commits_records() const { return false; }
  // A transactional sink, once the relay holds the slot and before it reads the checkpoint: takes the slot's
  // transactional identity over, fencing the relay that had it and aborting its open transaction (blocks).
  virtual absl::Status TakeOver(int /*timeout_ms*/) { return absl::OkStatus(); }
};

// source.checkpoint: none.
class NoCheckpointStore final : public CheckpointStore {
 public:
  bool enabled() const override { return false; }
  std::string Describe() const override { return "no checkpoint store"; }
  absl::StatusOr<SlotCheckpoints> Read(const std::string&, const std::string&) override { return SlotCheckpoints{}; }
  CheckpointWrite Write(const Checkpoint&, uint64_t) override { return {}; }
};

}  // namespace outbox::sinks
