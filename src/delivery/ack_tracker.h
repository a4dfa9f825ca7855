// AckTracker: which transactions are fully acknowledged by the broker, and so how far the slot may be confirmed.
// Owned by the loop thread; not thread-safe. Pure: no I/O, no clock.
//
//   Begin        AddRecord x n        Close(end_lsn)          Ack x n (any order, any entry)
//     |               |                    |                         |
//     v               v                    v                         v
//   [ e1 closed 0 ][ e2 closed 2 ][ e3 closed 0 ][ e4 open 1 ]   <- entries in commit order
//    ^ popped: watermark = e1.end_lsn; e3 waits behind e2 (acks never jump a gap)
//
// Each transaction gets an entry at Begin (also transactions with no outbox row, so their end LSN is confirmed
// in order). Records produced from it raise its pending count; delivery reports lower it. The watermark is the
// end LSN of the longest prefix of closed entries whose counts are zero. Consecutive closed entries with nothing
// pending merge, so a stream of empty transactions behind one slow record costs one entry. A generation number
// tags every entry handle: after Reset() (a rewind) handles of the old generation are ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "common/lsn.h"

namespace outbox::delivery {

// What a produced record carries as its opaque: the generation and the entry's sequence number, packed into
// 64 bits (16 + 48) so no allocation or pointer is involved.
struct EntryHandle {
  uint16_t generation = 0;
  uint64_t seq = 0;  // 48 bits

  uint64_t Pack() const { return (static_cast<uint64_t>(generation) << 48) | (seq & kSeqMask); }
  static EntryHandle Unpack(uint64_t packed) {
    return EntryHandle{static_cast<uint16_t>(packed >> 48), packed & kSeqMask};
  }
  static constexpr uint64_t kSeqMask = (1ULL << 48) - 1;
};

class AckTracker {
 public:
  // Bytes charged for each entry on top of its records, so that many empty open transactions still count.
  static constexpr size_t kEntryOverheadBytes = 64;
  // Bytes charged for each record waiting for its report on top of its key and value: what a sink holds beside
  // them (the topic, the headers, its request and bookkeeping). The HTTP sink, which keeps each record whole until
  // its answer, held 600 bytes more than the key and value (983 per record of 382) in the bench's workload; charged
  // only the key and value, the default bounds let it reach a peak RSS of 147 MiB.
  static constexpr size_t kRecordOverheadBytes = 600;

  // Opens the entry of a new transaction (at Begin). At most one entry may be open at a time.
  EntryHandle Begin(int64_t commit_time_us = 0);
  // Counts one produced record of `bytes` against the entry.
  void AddRecord(EntryHandle entry, size_t bytes);
  // Closes the entry (at Commit) with the end LSN of its commit record.
  void Close(EntryHandle entry, Lsn end_lsn);
  // A successful delivery report. Returns false (and changes nothing) for a stale or unknown handle.
  bool Ack(EntryHandle entry, size_t bytes);
  // Every record produced so far is acknowledged at once (a transactional sink's commit covers them all).
  // Failed entries stay failed.
  void AckAll();
  // A record that will never be acknowledged (a permanent error under halt): the watermark stays before it.
  void MarkFailed(EntryHandle entry);

  // The end LSN of a closed entry (nullopt while open, or for an unknown or stale handle).
  std::optional<Lsn> EndLsnOf(EntryHandle entry) const;
  // The commit time (Unix epoch microseconds) of the oldest tracked entry (0 when none is tracked).
  int64_t oldest_commit_time_us() const { return entries_.empty() ? 0 : entries_.front().commit_time_us; }
  // The commit time given at Begin, Unix epoch microseconds (0 for an unknown or stale handle).
  int64_t CommitTimeOf(EntryHandle entry) const;

  // The end LSN of the last closed entry (the watermark when none is tracked): how far everything produced so far
  // reaches when no entry is open.
  Lsn last_end_lsn() const;
  // End LSN of the longest fully acknowledged prefix; monotonic; 0/0 until the first transaction completes.
  Lsn watermark() const { return watermark_; }
  // True when no entry is open and no record is waiting for its report.
  bool idle() const { return entries_.empty(); }
  bool has_open_entry() const { return !entries_.empty() && !entries_.back().closed; }

  // Records waiting for a delivery report, plus one per tracked entry (open or pending transactions count).
  size_t inflight_events() const { return pending_records_ + entries_.size(); }
  size_t inflight_bytes() const {
    return pending_bytes_ + pending_records_ * kRecordOverheadBytes + entries_.size() * kEntryOverheadBytes;
  }
  size_t pending_records() const { return pending_records_; }
  size_t entries() const { return entries_.size(); }

  uint16_t generation() const { return generation_; }
  // Forgets every entry (a rewind) and starts a new generation. The watermark is kept: it is what was
  // confirmed-able, and never moves back.
  void Reset();

 private:
  struct Entry {
    uint64_t seq = 0;
    size_t pending = 0;  // records without a delivery report
    bool closed = false;
    bool failed = false;
    Lsn end_lsn;
    int64_t commit_time_us = 0;  // Unix epoch microseconds
  };

  Entry* Find(EntryHandle handle);
  const Entry* Find(EntryHandle handle) const { return const_cast<AckTracker*>(this)->Find(handle); }
  void Advance();

  std::deque<Entry> entries_;  // commit order; entries_[i].seq == entries_.front().seq + i
  uint64_t next_seq_ = 1;
  uint16_t generation_ = 1;
  Lsn watermark_;
  size_t pending_records_ = 0;
  size_t pending_bytes_ = 0;
};

}  // namespace outbox::delivery
