// Fakes for the delivery core's tests: a clock moved by hand, a sink whose reports the test scripts (served only by
// Poll, as a real sink's are), a checkpoint store that writes through the sink like the Kafka one, or is durable at
// once like the file one, and a transactional sink that writes the checkpoint in its own transaction.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "common/record.h"
#include "delivery/clock.h"
#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

namespace outbox::delivery::testing {

class FakeClock final : public Clock {
 public:
  time_point Now() const override { return now_; }
  int64_t UnixMicros() const override {
    return 1'800'000'000'000'000 + std::chrono::duration_cast<std::chrono::microseconds>(now_.time_since_epoch()).count();
  }
  void Advance(std::chrono::milliseconds d) { now_ += d; }

 private:
  time_point now_ = time_point(std::chrono::hours(1));
};

struct Produced {
  OwnedRecord record;
  uint64_t origin = 0;
  bool reported = false;
};

// Produce keeps a copy of each record; the test decides each one's report (Ack, Fail) and Poll serves them.
class FakeSink : public sinks::Sink {
 public:
  sinks::ReportHandler* handler = nullptr;
  // What Produce answers: kOk (kept), kFull, kRejected (with `reason`), kFailed.
  sinks::ProduceResult::Code answer = sinks::ProduceResult::Code::kOk;
  sinks::Reason reason = sinks::Reason::kNone;
  // Answers for the next Produce calls, before `answer` (one each).
  std::deque<sinks::ProduceResult::Code> next_answers;
  std::vector<Produced> produced;
  bool is_reachable = true;

  sinks::ProduceResult Produce(const Record& record, uint64_t origin) override {
    sinks::ProduceResult::Code code = answer;
    if (!next_answers.empty()) {
      code = next_answers.front();
      next_answers.pop_front();
    }
    switch (code) {
      case sinks::ProduceResult::Code::kOk:
        produced.push_back(Produced{OwnedRecord::Of(record), origin, false});
        return sinks::ProduceResult::Ok();
      case sinks::ProduceResult::Code::kFull:
        return sinks::ProduceResult::Full();
      case sinks::ProduceResult::Code::kRejected:
        return sinks::ProduceResult::Rejected(reason, "refused by the fake");
      case sinks::ProduceResult::Code::kFailed:
        return sinks::ProduceResult::Failed("the fake failed");
    }
    return sinks::ProduceResult::Ok();
  }
  // Queues the report of produced[i].
  void Report(size_t i, sinks::Outcome outcome, sinks::Reason why = sinks::Reason::kNone) {
    Produced& p = produced.at(i);
    p.reported = true;
    queued_.push_back({i, outcome, why});
  }
  void Ack(size_t i) { Report(i, sinks::Outcome::kAcked); }
  // Acks every record not reported yet.
  void AckAll() {
    for (size_t i = 0; i < produced.size(); ++i) {
      if (!produced[i].reported) Ack(i);
    }
  }
  int Poll(int) override {
    int n = 0;
    while (!queued_.empty()) {
      const Queued q = queued_.front();
      queued_.pop_front();
      const Produced& p = produced.at(q.index);
      std::string_view source_lsn;
      for (const auto& [name, value] : p.record.headers) {
        if (name == "source_lsn" && value) source_lsn = *value;
      }
      sinks::Report r;
      r.origin = p.origin;
      r.outcome = q.outcome;
      r.reason = q.reason;
      r.topic = p.record.topic;
      r.bytes = p.record.PayloadBytes();
      if (q.outcome != sinks::Outcome::kAcked) {
        r.error = "the fake says no";
        r.error_name = "FAKE_ERROR";
        r.event_id = p.record.event_id;
        r.source_lsn = source_lsn;
        r.rejected = &p.record;
      }
      handler->OnReport(r);
      ++n;
    }
    return n;
  }
  int wakeup_fd() const override { return -1; }
  void DrainWakeup() override {}
  void Purge() override {
    for (size_t i = 0; i < produced.size(); ++i) {
      if (!produced[i].reported) Report(i, sinks::Outcome::kRetriable);
    }
  }
  size_t Outstanding() const override { return queued_.size(); }
  absl::Status FatalError() const override { return absl::OkStatus(); }
  bool reachable() const override { return is_reachable; }
  absl::Status CheckReachable(int) override { return absl::OkStatus(); }
  // The records produced to `topic`, in order.
  std::vector<const OwnedRecord*> To(std::string_view topic) const {
    std::vector<const OwnedRecord*> out;
    for (const Produced& p : produced) {
      if (p.record.topic == topic) out.push_back(&p.record);
    }
    return out;
  }

 private:
  struct Queued {
    size_t index;
    sinks::Outcome outcome;
    sinks::Reason reason;
  };
  std::deque<Queued> queued_;
};

// A store that writes checkpoints as records through `sink` (kPending, acknowledged by their report), as the Kafka
// topic store does; or, with `durable`, durable at once as the file store is.
class FakeCheckpointStore final : public sinks::CheckpointStore {
 public:
  explicit FakeCheckpointStore(FakeSink* sink) : sink_(sink) {}
  bool durable = false;
  std::vector<Checkpoint> written;

  std::string Describe() const override { return "the fake store"; }
  absl::StatusOr<SlotCheckpoints> Read(const std::string&, const std::string&) override { return SlotCheckpoints{}; }
  sinks::CheckpointWrite Write(const Checkpoint& c, uint64_t origin) override {
    written.push_back(c);
    if (durable) return {};
    Record rec;
    const std::string value = c.lsn.ToString();
    rec.topic = "checkpoints";
    rec.value = value;
    const sinks::ProduceResult r = sink_->Produce(rec, origin);
    if (r.code == sinks::ProduceResult::Code::kFull) return {sinks::CheckpointWrite::Code::kBusy, {}};
    if (!r.ok()) return {sinks::CheckpointWrite::Code::kFailed, absl::UnavailableError(r.error)};
    return {sinks::CheckpointWrite::Code::kPending, {}};
  }

 private:
  FakeSink* sink_;
};

// A transactional sink: records go into the open transaction and get no report of their own; a checkpoint write
// commits them with the checkpoint. The test completes (or fails) the commit; its report comes through Poll.
class FakeTransactionalSink final : public FakeSink, public sinks::CheckpointStore {
 public:
  std::vector<OwnedRecord> committed;  // what consumers would see
  std::vector<Checkpoint> commits;     // the checkpoint of each commit asked for
  size_t in_transaction = 0;           // produced[] index where the open transaction starts

  std::string Describe() const override { return "the fake transaction"; }
  absl::StatusOr<SlotCheckpoints> Read(const std::string&, const std::string&) override { return SlotCheckpoints{}; }
  bool commits_records() const override { return true; }
  sinks::CheckpointWrite Write(const Checkpoint& c, uint64_t origin) override {
    commits.push_back(c);
    pending_commit_ = origin;
    commit_end_ = produced.size();
    return {sinks::CheckpointWrite::Code::kPending, {}};
  }
  bool commit_pending() const { return pending_commit_ != 0; }
  // A rewind aborts the open transaction: nothing of it is ever visible.
  void Purge() override {
    FakeSink::Purge();
    in_transaction = produced.size();
  }
  // The broker commits: the records of the transaction become visible, the checkpoint's report says so.
  void CompleteCommit(bool ok = true) {
    if (ok) {
      for (size_t i = in_transaction; i < commit_end_; ++i) committed.push_back(produced[i].record);
    }
    for (size_t i = in_transaction; i < commit_end_; ++i) produced[i].reported = true;
    in_transaction = commit_end_;
    produced.push_back(Produced{OwnedRecord{}, pending_commit_, false});
    Report(produced.size() - 1, ok ? sinks::Outcome::kAcked : sinks::Outcome::kRetriable);
    in_transaction = produced.size();
    pending_commit_ = 0;
  }

 private:
  uint64_t pending_commit_ = 0;
  size_t commit_end_ = 0;
};

}  // namespace outbox::delivery::testing
