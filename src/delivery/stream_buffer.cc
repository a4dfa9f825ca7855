// StreamBuffers: streamed in-progress transactions held until they commit, spilled to files beyond a bound.
#include "delivery/stream_buffer.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/strings.h"

namespace outbox::delivery {

size_t BufferedEvent::Bytes() const {
  size_t n = 64 + topic.size() + event_id.size() + error_message.size() + (key ? key->size() : 0) +
             (value ? value->size() : 0);
  for (const auto& [name, v] : headers) n += name.size() + (v ? v->size() : 0) + 16;
  return n;
}

outbox::Record BufferedEvent::ToRecord(const std::string& source_lsn, int64_t commit_time_ms) const {
  outbox::Record r;
  r.topic = topic;
  r.event_id = event_id;
  if (key) r.key = *key;
  if (value) r.value = *value;
  r.timestamp_ms = timestamp_ms.value_or(commit_time_ms);
  r.partition = partition;
  for (const auto& [name, v] : headers) {
    r.headers.push_back(outbox::Header{name, v ? std::optional<std::string_view>(*v) : std::nullopt});
  }
  r.headers.push_back(outbox::Header{"source_lsn", source_lsn});
  return r;
}

BufferedEvent BufferedEvent::FromRecord(const outbox::Record& record, uint32_t subxid, int64_t no_timestamp) {
  BufferedEvent e;
  e.subxid = subxid;
  e.topic = std::string(record.topic);
  e.event_id = std::string(record.event_id);
  if (record.key) e.key = std::string(*record.key);
  if (record.value) e.value = std::string(*record.value);
  if (record.timestamp_ms != no_timestamp) e.timestamp_ms = record.timestamp_ms;
  e.partition = record.partition;
  for (const outbox::Header& h : record.headers) {
    if (h.name == "source_lsn") continue;
    e.headers.emplace_back(std::string(h.name), h.value ? std::optional<std::string>(std::string(*h.value)) : std::nullopt);
  }
  return e;
}

namespace {

void PutU32(std::string* out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutOptString(std::string* out, const std::optional<std::string>& s) {
  if (!s) {
    PutU32(out, 0xFFFFFFFFu);
    return;
  }
  PutU32(out, static_cast<uint32_t>(s->size()));
  out->append(*s);
}

bool GetU32(std::FILE* in, uint32_t* v) {
  unsigned char b[4];
  if (std::fread(b, 1, 4, in) != 4) return false;
  *v = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  return true;
}
bool GetU64(std::FILE* in, uint64_t* v) {
  uint32_t hi, lo;
  if (!GetU32(in, &hi) || !GetU32(in, &lo)) return false;
  *v = (uint64_t{hi} << 32) | lo;
  return true;
}
bool GetOptString(std::FILE* in, std::optional<std::string>* s) {
  uint32_t n;
  if (!GetU32(in, &n)) return false;
  if (n == 0xFFFFFFFFu) {
    s->reset();
    return true;
  }
  std::string v(n, '\0');
  if (n > 0 && std::fread(v.data(), 1, n, in) != n) return false;
  *s = std::move(v);
  return true;
}

}  // namespace

void EncodeBufferedEvent(const BufferedEvent& e, std::string* out) {
  PutU32(out, e.subxid);
  out->push_back(e.halt ? 2 : e.error ? 1 : 0);
  PutOptString(out, e.error_message);
  PutOptString(out, e.topic);
  PutOptString(out, e.event_id);
  PutOptString(out, e.key);
  PutOptString(out, e.value);
  out->push_back(e.timestamp_ms ? 1 : 0);
  PutU64(out, static_cast<uint64_t>(e.timestamp_ms.value_or(0)));
  out->push_back(e.partition ? 1 : 0);
  PutU32(out, static_cast<uint32_t>(e.partition.value_or(0)));
  PutU32(out, static_cast<uint32_t>(e.headers.size()));
  for (const auto& [name, v] : e.headers) {
    PutOptString(out, name);
    PutOptString(out, v);
  }
}

absl::StatusOr<BufferedEvent> DecodeBufferedEvent(std::FILE* in) {
  const auto bad = [] { return absl::DataLossError("spill file: truncated or corrupt event"); };
  BufferedEvent e;
  uint32_t u32;
  if (!GetU32(in, &e.subxid)) return bad();
  int flag = std::fgetc(in);
  if (flag == EOF) return bad();
  e.error = flag == 1 || flag == 2;
  e.halt = flag == 2;
  std::optional<std::string> s;
  if (!GetOptString(in, &s)) return bad();
  e.error_message = s.value_or("");
  if (!GetOptString(in, &s)) return bad();
  e.topic = s.value_or("");
  if (!GetOptString(in, &s)) return bad();
  e.event_id = s.value_or("");
  if (!GetOptString(in, &e.key) || !GetOptString(in, &e.value)) return bad();
  flag = std::fgetc(in);
  uint64_t ts;
  if (flag == EOF || !GetU64(in, &ts)) return bad();
  if (flag == 1) e.timestamp_ms = static_cast<int64_t>(ts);
  flag = std::fgetc(in);
  if (flag == EOF || !GetU32(in, &u32)) return bad();
  if (flag == 1) e.partition = static_cast<int32_t>(u32);
  if (!GetU32(in, &u32)) return bad();
  for (uint32_t i = 0; i < u32; ++i) {
    std::optional<std::string> name, value;
    if (!GetOptString(in, &name) || !GetOptString(in, &value) || !name) return bad();
    e.headers.emplace_back(*name, value);
  }
  return e;
}

StreamBuffers::StreamBuffers(size_t memory_limit, std::string spill_dir)
    : memory_limit_(memory_limit), spill_dir_(std::move(spill_dir)) {
  if (spill_dir_.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    spill_dir_ = tmp && *tmp ? tmp : "/tmp";
  }
  RemoveStaleSpillFiles();
}

// Spill files are named outbox-relay-<pid>-<xid>-<seq>.spill: those of a process that is gone (killed with -9,
// crashed) are removed; those of a live process (another pipeline of this one, another relay) are left alone.
void StreamBuffers::RemoveStaleSpillFiles() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(spill_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "outbox-relay-";
    if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, ".spill")) continue;
    const std::string rest = name.substr(prefix.size());
    int pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    if (std::filesystem::remove(entry.path(), ec)) ++stale_files_removed_;
  }
}

StreamBuffers::~StreamBuffers() { Clear(); }

size_t StreamBuffers::spilled_transactions() const {
  size_t n = 0;
  for (const auto& [xid, t] : txns_) n += t.spill != nullptr;
  return n;
}

absl::Status StreamBuffers::Add(uint32_t xid, BufferedEvent event) {
  Txn& txn = txns_[xid];
  if (txn.spill != nullptr) {
    std::string bytes;
    EncodeBufferedEvent(event, &bytes);
    if (std::fwrite(bytes.data(), 1, bytes.size(), txn.spill) != bytes.size()) {
      return IoFailure(Cat("could not write spill file ", txn.spill_path, ": ", std::strerror(errno)));
    }
    ++txn.spilled_events;
    return absl::OkStatus();
  }
  const size_t bytes = event.Bytes();
  txn.bytes += bytes;
  memory_bytes_ += bytes;
  txn.events.push_back(std::move(event));
  if (memory_bytes_ > memory_limit_) return Spill(xid, txn);
  return absl::OkStatus();
}

absl::Status StreamBuffers::Spill(uint32_t xid, Txn& txn) {
  ++spills_;
  txn.spill_path = Cat(spill_dir_, "/outbox-relay-", ::getpid(), "-", xid, "-", ++spill_seq_, ".spill");
  txn.spill = std::fopen(txn.spill_path.c_str(), "w+b");
  if (txn.spill == nullptr) {
    return IoFailure(Cat("could not create spill file ", txn.spill_path, ": ", std::strerror(errno)));
  }
  std::string bytes;
  for (const BufferedEvent& e : txn.events) {
    bytes.clear();
    EncodeBufferedEvent(e, &bytes);
    if (std::fwrite(bytes.data(), 1, bytes.size(), txn.spill) != bytes.size()) {
      return IoFailure(Cat("could not write spill file ", txn.spill_path, ": ", std::strerror(errno)));
    }
  }
  txn.spilled_events += txn.events.size();
  memory_bytes_ -= txn.bytes;
  txn.bytes = 0;
  txn.events.clear();
  txn.events.shrink_to_fit();
  return absl::OkStatus();
}

absl::Status StreamBuffers::IoFailure(std::string message) {
  ++io_failures_;
  return absl::UnavailableError(std::move(message));
}

void StreamBuffers::Drop(Txn& txn) {
  memory_bytes_ -= txn.bytes;
  if (txn.spill != nullptr) {
    std::fclose(txn.spill);
    std::remove(txn.spill_path.c_str());
  }
}

void StreamBuffers::Abort(uint32_t xid, uint32_t subxid) {
  auto it = txns_.find(xid);
  if (it == txns_.end()) return;
  Txn& txn = it->second;
  if (subxid == xid) {
    Drop(txn);
    txns_.erase(it);
    return;
  }
  txn.aborted.insert(subxid);
  size_t freed = 0;
  std::erase_if(txn.events, [&](const BufferedEvent& e) {
    if (e.subxid != subxid) return false;
    freed += e.Bytes();
    return true;
  });
  txn.bytes -= freed;
  memory_bytes_ -= freed;
}

absl::StatusOr<std::unique_ptr<StreamBuffers::Replay>> StreamBuffers::TakeForReplay(uint32_t xid) {
  auto replay = std::unique_ptr<Replay>(new Replay());
  auto it = txns_.find(xid);
  if (it == txns_.end()) return replay;  // a streamed transaction with no outbox events
  Txn& txn = it->second;
  if (txn.spill != nullptr) {
    if (std::fflush(txn.spill) != 0) {
      return IoFailure(Cat("could not write spill file ", txn.spill_path, ": ", std::strerror(errno)));
    }
    // Only a spill file written to its end counts as success: fwrite buffers, so a file system that fills up
    // fails a later write of the same file, and a success counted at the first write would reset the count on
    // every attempt (rewinding forever instead of stopping after kMaxSpillFailures).
    io_failures_ = 0;
    std::rewind(txn.spill);
    replay->file = txn.spill;
    replay->path = txn.spill_path;
    replay->file_events = txn.spilled_events;
    txn.spill = nullptr;
  }
  memory_bytes_ -= txn.bytes;
  replay->memory = std::move(txn.events);
  replay->aborted = std::move(txn.aborted);
  txns_.erase(it);
  return replay;
}

void StreamBuffers::Clear() {
  for (auto& [xid, txn] : txns_) Drop(txn);
  txns_.clear();
  memory_bytes_ = 0;
}

StreamBuffers::Replay::~Replay() {
  if (file != nullptr) {
    std::fclose(file);
    std::remove(path.c_str());
  }
}

absl::StatusOr<std::optional<BufferedEvent>> StreamBuffers::Replay::Next() {
  while (file_events > 0) {
    auto e = DecodeBufferedEvent(file);
    if (!e.ok()) return e.status();
    --file_events;
    if (!aborted.count(e->subxid)) return std::optional<BufferedEvent>(std::move(*e));
  }
  while (memory_next < memory.size()) {
    BufferedEvent& e = memory[memory_next++];
    if (!aborted.count(e.subxid)) return std::optional<BufferedEvent>(std::move(e));
  }
  return std::optional<BufferedEvent>();
}

}  // namespace outbox::delivery
