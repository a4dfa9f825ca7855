// StreamBuffers: the events of large in-progress transactions streamed by the server (protocol 2, streaming
// on), held until their Stream Commit. Each top-level transaction's events are kept in memory up to a share of
// the delivery bound, then spilled to a file; a subtransaction's abort drops its events; a top-level abort or a
// rewind drops everything (and removes the files). Owned by the loop thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "outbox/mapper.h"

namespace outbox::delivery {

// One buffered event: a mapped record (without its source_lsn header, which needs the commit LSN), or a
// per-event error with the original row for a dead letter.
struct BufferedEvent {
  uint32_t subxid = 0;
  bool error = false;
  bool halt = false;          // an error that halts whatever delivery.on_error says (on_update: error)
  std::string error_message;  // when error
  std::string topic, event_id;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;  // without source_lsn
  std::optional<int64_t> timestamp_ms;  // from a timestamp column; else the commit time is used
  std::optional<int32_t> partition;     // from a column placed as the partition (outbox.fields.additional)

  size_t Bytes() const;
  // A record viewing this event, with `source_lsn` appended (the string must outlive the record).
  outbox::Record ToRecord(const std::string& source_lsn, int64_t commit_time_ms) const;
  static BufferedEvent FromRecord(const outbox::Record& record, uint32_t subxid, int64_t no_timestamp);
};

class StreamBuffers {
 public:
  // `memory_limit`: bytes kept in memory over all transactions before a transaction spills to `spill_dir`.
  StreamBuffers(size_t memory_limit, std::string spill_dir);
  ~StreamBuffers();
  StreamBuffers(const StreamBuffers&) = delete;
  StreamBuffers& operator=(const StreamBuffers&) = delete;

  absl::Status Add(uint32_t xid, BufferedEvent event);
  // Drops the events of subtransaction `subxid` of `xid` (all of `xid` when subxid == xid).
  void Abort(uint32_t xid, uint32_t subxid);
  // Hands the transaction's events over for replay (in order, aborted subtransactions left out) and forgets it.
  class Replay;
  absl::StatusOr<std::unique_ptr<Replay>> TakeForReplay(uint32_t xid);
  void Clear();
  bool empty() const { return txns_.empty(); }
  size_t memory_bytes() const { return memory_bytes_; }
  size_t spilled_transactions() const;
  uint64_t spills() const { return spills_; }  // transactions spilled to a file so far
  // Spill-file failures in a row (reset by a spill file written to its end and flushed; not by Clear): the relay
  // rewinds on such a failure, and gives up after a few in a row.
  int consecutive_io_failures() const { return io_failures_; }
  // Spill files of processes that are gone, removed when this was constructed.
  int stale_files_removed() const { return stale_files_removed_; }
  const std::string& spill_dir() const { return spill_dir_; }

 private:
  struct Txn {
    std::vector<BufferedEvent> events;  // in memory (after anything spilled)
    size_t bytes = 0;
    std::string spill_path;  // non-empty once spilled
    std::FILE* spill = nullptr;
    size_t spilled_events = 0;
    std::set<uint32_t> aborted;  // subtransactions whose spilled events are skipped at replay
  };
  absl::Status Spill(uint32_t xid, Txn& txn);
  absl::Status IoFailure(std::string message);  // counts it; UNAVAILABLE (a rewind may cure it)
  void RemoveStaleSpillFiles();
  void Drop(Txn& txn);

  size_t memory_limit_;
  std::string spill_dir_;
  size_t memory_bytes_ = 0;
  std::map<uint32_t, Txn> txns_;
  uint64_t spill_seq_ = 0;
  uint64_t spills_ = 0;
  int io_failures_ = 0;
  int stale_files_removed_ = 0;

 public:
  // Yields a transaction's events one at a time: first those spilled to its file, then those in memory.
  class Replay {
   public:
    ~Replay();
    // nullopt at the end.
    absl::StatusOr<std::optional<BufferedEvent>> Next();

   private:
    friend class StreamBuffers;
    std::FILE* file = nullptr;
    std::string path;
    size_t file_events = 0;
    std::vector<BufferedEvent> memory;
    size_t memory_next = 0;
    std::set<uint32_t> aborted;
  };
};

// The spill file codec (length-prefixed fields), pure.
void EncodeBufferedEvent(const BufferedEvent& e, std::string* out);
absl::StatusOr<BufferedEvent> DecodeBufferedEvent(std::FILE* in);

}  // namespace outbox::delivery
