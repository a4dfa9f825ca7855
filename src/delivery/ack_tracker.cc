// AckTracker: the confirmed-LSN watermark over transactions in commit order.
#include "delivery/ack_tracker.h"

namespace outbox::delivery {

EntryHandle AckTracker::Begin(int64_t commit_time_us) {
  Entry e;
  e.seq = next_seq_++;
  e.commit_time_us = commit_time_us;
  entries_.push_back(e);
  return EntryHandle{generation_, e.seq};
}

AckTracker::Entry* AckTracker::Find(EntryHandle handle) {
  if (handle.generation != generation_ || entries_.empty()) return nullptr;
  const uint64_t first = entries_.front().seq;
  if (handle.seq < first || handle.seq - first >= entries_.size()) return nullptr;
  Entry* e = &entries_[handle.seq - first];
  return e->seq == handle.seq ? e : nullptr;
}

void AckTracker::AddRecord(EntryHandle entry, size_t bytes) {
  Entry* e = Find(entry);
  if (e == nullptr) return;
  ++e->pending;
  ++pending_records_;
  pending_bytes_ += bytes;
}

void AckTracker::Close(EntryHandle entry, Lsn end_lsn) {
  Entry* e = Find(entry);
  if (e == nullptr) return;
  e->closed = true;
  e->end_lsn = end_lsn;
  // Merge a finished entry into a finished predecessor: they complete together, in order.
  if (e->pending == 0 && !e->failed && e == &entries_.back() && entries_.size() >= 2) {
    Entry& prev = entries_[entries_.size() - 2];
    if (prev.closed && prev.pending == 0 && !prev.failed) {
      prev.end_lsn = end_lsn;
      entries_.pop_back();
      // The merged entry's seq is free again; no handle of it can be outstanding (nothing pending).
      --next_seq_;
    }
  }
  Advance();
}

bool AckTracker::Ack(EntryHandle entry, size_t bytes) {
  Entry* e = Find(entry);
  if (e == nullptr || e->pending == 0) return false;
  --e->pending;
  --pending_records_;
  pending_bytes_ -= bytes <= pending_bytes_ ? bytes : pending_bytes_;
  Advance();
  return true;
}

void AckTracker::AckAll() {
  for (Entry& e : entries_) e.pending = 0;
  pending_records_ = 0;
  pending_bytes_ = 0;
  Advance();
}

Lsn AckTracker::last_end_lsn() const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->closed) return it->end_lsn;
  }
  return watermark_;
}

std::optional<Lsn> AckTracker::EndLsnOf(EntryHandle entry) const {
  const Entry* e = Find(entry);
  if (e == nullptr || !e->closed) return std::nullopt;
  return e->end_lsn;
}

int64_t AckTracker::CommitTimeOf(EntryHandle entry) const {
  const Entry* e = Find(entry);
  return e ? e->commit_time_us : 0;
}

void AckTracker::MarkFailed(EntryHandle entry) {
  Entry* e = Find(entry);
  if (e != nullptr) e->failed = true;
}

void AckTracker::Advance() {
  while (!entries_.empty()) {
    const Entry& front = entries_.front();
    if (!front.closed || front.pending != 0 || front.failed) break;
    if (front.end_lsn > watermark_) watermark_ = front.end_lsn;
    entries_.pop_front();
  }
}

void AckTracker::Reset() {
  entries_.clear();
  pending_records_ = 0;
  pending_bytes_ = 0;
  ++generation_;
  if (generation_ == 0) generation_ = 1;
}

}  // namespace outbox::delivery
