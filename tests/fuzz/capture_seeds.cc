// Captures fuzz seeds from a real PostgreSQL server: fuzz_capture_seeds <conninfo> <corpus dir>
//
// In a fresh database (outbox_fuzz_capture, dropped and recreated) it creates two tables, a publication and a
// pgoutput slot, runs transactions that exercise every message proto 1 can send (text/jsonb/bytea/enum/NULL and
// an unchanged TOASTed value, updates with and without an old key or row, deletes, truncates with and without
// flags, a replicated origin, transactional and non-transactional logical decoding messages), then streams the slot
// over the replication protocol (proto_version '1', messages 'true') and writes
//   <corpus dir>/frames/<sha1>    each CopyData payload the server sent (XLogData and keepalive frames, whole)
//   <corpus dir>/pgoutput/<sha1>  each XLogData's pgoutput message, prefixed with the pgoutput fuzzer's state byte
// Then it streams a second slot with binary 'true' and keeps its Insert/Update messages (binary column values).
// Every frame and message must decode and re-encode to identical bytes, or the program fails. Files are named by
// the SHA-1 of their content (as libFuzzer names its corpus files); earlier captures (the files named by a SHA-1
// alone) are removed first, so a recapture replaces them. Everything it created on the server is dropped again.
// tests/fuzz/capture-seeds.sh starts a throwaway server, builds and runs this.
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <sys/select.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/lsn.h"
#include "pg/frames.h"
#include "pg/pgoutput.h"
#include "pgoutput_fuzz_state.h"

namespace outbox::pg {
namespace {

constexpr char kDatabase[] = "outbox_fuzz_capture";
constexpr char kSlot[] = "outbox_fuzz_capture";
constexpr char kBinarySlot[] = "outbox_fuzz_capture_bin";
constexpr char kOrigin[] = "outbox_fuzz_capture";
constexpr char kEndPrefix[] = "capture-end";
constexpr int kMaxKeepalives = 2;      // they differ only in their positions and times
constexpr int kMaxBeginsCommits = 3;  // likewise, for each of the two
constexpr auto kStreamTimeout = std::chrono::seconds(60);

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_capture_seeds: %s\n", what.c_str());
  std::exit(1);
}

std::string Sha1Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha1(), nullptr) != 1) Die("EVP_Digest failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

bool IsSha1Name(const std::string& name) {
  return name.size() == 40 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The files of one corpus folder written by this run (deduplicated by name).
class SeedDir {
 public:
  explicit SeedDir(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.is_regular_file() && IsSha1Name(entry.path().filename().string())) {
        std::filesystem::remove(entry.path());
      }
    }
  }

  void Write(std::string_view bytes) {
    const std::string name = Sha1Hex(bytes);
    if (!written_.insert(name).second) return;
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) Die("could not write " + (dir_ / name).string());
  }

  size_t count() const { return written_.size(); }

 private:
  std::filesystem::path dir_;
  std::set<std::string> written_;
};

struct Connection {
  PGconn* conn = nullptr;
  ~Connection() {
    if (conn != nullptr) PQfinish(conn);
  }
};

// Connects to `conninfo` (key=value or URI), with `dbname` and `replication` overriding it when given.
void Connect(Connection& c, const std::string& conninfo, const char* dbname, const char* replication) {
  std::vector<const char*> keys = {"dbname"};
  std::vector<const char*> values = {conninfo.c_str()};
  if (dbname != nullptr) {
    keys.push_back("dbname");
    values.push_back(dbname);
  }
  if (replication != nullptr) {
    keys.push_back("replication");
    values.push_back(replication);
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  c.conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (PQstatus(c.conn) != CONNECTION_OK) Die(std::string("connect: ") + PQerrorMessage(c.conn));
  PQsetNoticeProcessor(c.conn, [](void*, const char*) {}, nullptr);  // "database ... does not exist, skipping"
}

void Exec(PGconn* conn, const std::string& sql) {
  PGresult* result = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  PQclear(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Die("\"" + sql + "\": " + PQerrorMessage(conn));
  }
}

void DropLeftovers(PGconn* admin) {
  Exec(admin, std::string("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots ") +
                  "WHERE slot_name IN ('" + kSlot + "', '" + kBinarySlot + "')");
  Exec(admin, std::string("SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname = '") +
                  kOrigin + "'");
  Exec(admin, std::string("DROP DATABASE IF EXISTS ") + kDatabase + " WITH (FORCE)");
}

// Schema, publication and slots, then the transactions the slots will decode; the last is the end marker.
void MakeChanges(PGconn* db) {
  Exec(db, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
  Exec(db,
       "CREATE TABLE capture_events (id bigserial PRIMARY KEY, name text, doc jsonb, blob bytea, note text, "
       "feeling mood, big text)");
  Exec(db, "ALTER TABLE capture_events ALTER COLUMN big SET STORAGE EXTERNAL");  // TOASTed out of line, as is
  Exec(db, "CREATE TABLE capture_full (id int, v text)");
  Exec(db, "ALTER TABLE capture_full REPLICA IDENTITY FULL");
  Exec(db, "CREATE PUBLICATION capture_pub FOR TABLE capture_events, capture_full");
  Exec(db, std::string("SELECT pg_create_logical_replication_slot('") + kSlot + "', 'pgoutput')");
  Exec(db, std::string("SELECT pg_create_logical_replication_slot('") + kBinarySlot + "', 'pgoutput')");

  // Every column kind: text, jsonb, bytea, NULL, an enum (a Type message), multibyte text.
  Exec(db,
       "INSERT INTO capture_events (name, doc, blob, note, feeling) VALUES "
       "('hello', '{\"a\": 1, \"b\": [true, null]}', '\\x0001ff', NULL, 'happy')");
  Exec(db,
       "BEGIN; INSERT INTO capture_events (name, doc, blob, note, feeling, big) VALUES "
       "('gr\u00fc\u00dfe \u2713', '[]', '\\x', 'it''s \"quoted\"', 'ok', repeat('x', 2100)), "
       "('', 'null', NULL, '', NULL, NULL); COMMIT");
  // The TOASTed column unchanged ('u'), then a key change (old key 'K'), then a delete (old key 'K').
  Exec(db, "UPDATE capture_events SET note = 'touched' WHERE name <> 'hello' AND big IS NOT NULL");
  Exec(db, "UPDATE capture_events SET id = 1000 WHERE name = 'hello'");
  Exec(db, "DELETE FROM capture_events WHERE name = ''");
  // REPLICA IDENTITY FULL: old rows ('O').
  Exec(db, "INSERT INTO capture_full VALUES (1, 'one'), (2, NULL)");
  Exec(db, "UPDATE capture_full SET v = 'uno' WHERE id = 1");
  Exec(db, "DELETE FROM capture_full WHERE id = 2");
  // Logical decoding messages: transactional (inside a transaction with a change), with bytea content, and not.
  Exec(db,
       "BEGIN; SELECT pg_logical_emit_message(true, 'outbox', '{\"id\": 7, \"type\": \"OrderPlaced\"}'); "
       "INSERT INTO capture_full VALUES (3, 'with a message'); "
       "SELECT pg_logical_emit_message(true, 'audit', '\\x00ff10'::bytea); COMMIT");
  Exec(db, "SELECT pg_logical_emit_message(false, 'outbox', 'not transactional')");
  Exec(db, "SELECT pg_logical_emit_message(false, '', '')");
  // A transaction replayed from another node: an Origin message after Begin.
  Exec(db, std::string("SELECT pg_replication_origin_create('") + kOrigin + "')");
  Exec(db, std::string("SELECT pg_replication_origin_session_setup('") + kOrigin + "')");
  Exec(db,
       "BEGIN; SELECT pg_replication_origin_xact_setup('0/ABCDEF', now()); "
       "INSERT INTO capture_full VALUES (4, 'from elsewhere'); COMMIT");
  Exec(db, "SELECT pg_replication_origin_session_reset()");
  // Truncates: one table without options, two with RESTART IDENTITY CASCADE.
  Exec(db, "TRUNCATE capture_full");
  Exec(db, "TRUNCATE capture_events, capture_full RESTART IDENTITY CASCADE");
  Exec(db, std::string("SELECT pg_logical_emit_message(false, '") + kEndPrefix + "', 'done')");
}

int64_t PgNowMicros() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return UnixMicrosToPgTime(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

void SendStatus(PGconn* conn, Lsn flushed, bool reply_requested) {
  const std::string frame =
      EncodeStandbyStatus(StandbyStatus{flushed, flushed, flushed, PgNowMicros(), reply_requested});
  if (PQputCopyData(conn, frame.data(), static_cast<int>(frame.size())) != 1 || PQflush(conn) != 0) {
    Die(std::string("sending a status update: ") + PQerrorMessage(conn));
  }
}

// The next CopyData payload, waiting at most until `deadline`.
std::string NextCopyData(PGconn* conn, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    char* buffer = nullptr;
    const int n = PQgetCopyData(conn, &buffer, /*async=*/1);
    if (n > 0) {
      std::string bytes(buffer, static_cast<size_t>(n));
      PQfreemem(buffer);
      return bytes;
    }
    if (n == -1) Die("the server ended the replication stream early");
    if (n == -2) Die(std::string("PQgetCopyData: ") + PQerrorMessage(conn));
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) Die("timed out waiting for the end marker");
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(PQsocket(conn), &readable);
    timeval timeout{1, 0};
    if (select(PQsocket(conn) + 1, &readable, nullptr, nullptr, &timeout) < 0) Die("select failed");
    if (PQconsumeInput(conn) != 1) Die(std::string("PQconsumeInput: ") + PQerrorMessage(conn));
  }
}

struct StreamCounts {
  int frames = 0;
  int messages = 0;
  int keepalives = 0;
};

// Where the seeds go, and how many of the repetitive kinds were kept.
struct Seeds {
  SeedDir frames;
  SeedDir pgoutput;
  int keepalives = 0;
  int begins = 0;
  int commits = 0;
};

// Streams `slot` from the start until the end marker; `keep` decides which messages are written as seeds.
template <typename Keep>
StreamCounts Stream(const std::string& conninfo, const std::string& slot, const std::string& options, Seeds& seeds,
                    Keep keep) {
  Connection replication;
  Connect(replication, conninfo, kDatabase, "database");
  PGconn* conn = replication.conn;
  const std::string start = "START_REPLICATION SLOT " + slot + " LOGICAL 0/0 (" + options + ")";
  PGresult* result = PQexec(conn, start.c_str());
  if (PQresultStatus(result) != PGRES_COPY_BOTH) Die(start + ": " + PQerrorMessage(conn));
  PQclear(result);

  StreamCounts counts;
  DecoderState state;
  state.proto_version = 1;
  Lsn flushed;
  bool asked_for_keepalive = false;
  const auto deadline = std::chrono::steady_clock::now() + kStreamTimeout;
  while (true) {
    const std::string bytes = NextCopyData(conn, deadline);
    absl::StatusOr<ServerFrame> frame = DecodeServerFrame(bytes);
    if (!frame.ok()) Die("a frame the decoder refuses: " + std::string(frame.status().message()));
    ++counts.frames;

    if (const auto* keepalive = std::get_if<Keepalive>(&*frame)) {
      if (EncodeKeepalive(*keepalive) != bytes) Die("a keepalive that does not re-encode to its bytes");
      ++counts.keepalives;
      if (seeds.keepalives++ < kMaxKeepalives) seeds.frames.Write(bytes);
      if (keepalive->reply_requested) SendStatus(conn, flushed, false);
      continue;
    }

    const XLogData& data = std::get<XLogData>(*frame);
    if (EncodeXLogData(data.data_start, data.wal_end, data.send_time, data.payload) != bytes) {
      Die("an XLogData frame that does not re-encode to its bytes");
    }
    const DecoderState before = state;
    absl::StatusOr<Message> message = Decode(data.payload, state);
    if (!message.ok()) Die("a pgoutput message the decoder refuses: " + std::string(message.status().message()));
    if (Encode(*message, before) != data.payload) Die("a pgoutput message that does not re-encode to its bytes");
    ++counts.messages;
    bool repetitive = false;
    if (std::holds_alternative<Begin>(*message)) repetitive = seeds.begins++ >= kMaxBeginsCommits;
    if (std::holds_alternative<Commit>(*message)) repetitive = seeds.commits++ >= kMaxBeginsCommits;
    if (keep(*message) && !repetitive) {
      seeds.frames.Write(bytes);
      seeds.pgoutput.Write(std::string(1, static_cast<char>(FuzzByteFromState(before))) + std::string(data.payload));
    }

    if (const auto* commit = std::get_if<Commit>(&*message)) flushed = commit->end_lsn;
    if (!asked_for_keepalive) {  // the server answers a status update that asks for a reply with a keepalive
      SendStatus(conn, flushed, true);
      asked_for_keepalive = true;
    }
    const auto* logical = std::get_if<LogicalMessage>(&*message);
    if (logical != nullptr && logical->prefix == kEndPrefix) break;
  }
  SendStatus(conn, flushed, false);
  PQputCopyEnd(conn, nullptr);
  PQflush(conn);
  return counts;
}

}  // namespace
}  // namespace outbox::pg

int main(int argc, char** argv) {
  using namespace outbox::pg;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <conninfo of a superuser, any database> <corpus dir>\n", argv[0]);
    return 2;
  }
  const std::string conninfo = argv[1];
  const std::filesystem::path corpus = argv[2];

  {
    Connection admin;
    Connect(admin, conninfo, nullptr, nullptr);
    DropLeftovers(admin.conn);
    Exec(admin.conn, std::string("CREATE DATABASE ") + kDatabase);
  }
  {
    Connection db;
    Connect(db, conninfo, kDatabase, nullptr);
    MakeChanges(db.conn);
  }

  Seeds seeds{.frames = SeedDir(corpus / "frames"), .pgoutput = SeedDir(corpus / "pgoutput")};
  const StreamCounts text =
      Stream(conninfo, kSlot, "proto_version '1', publication_names 'capture_pub', messages 'true'", seeds,
             [](const Message&) { return true; });
  const StreamCounts binary =
      Stream(conninfo, kBinarySlot,
             "proto_version '1', publication_names 'capture_pub', messages 'true', binary 'true'", seeds,
             [](const Message& m) { return std::holds_alternative<Insert>(m) || std::holds_alternative<Update>(m); });

  {
    Connection admin;
    Connect(admin, conninfo, nullptr, nullptr);
    DropLeftovers(admin.conn);
  }
  std::printf("text stream: %d frames (%d pgoutput messages, %d keepalives); binary stream: %d frames\n", text.frames,
              text.messages, text.keepalives, binary.frames);
  std::printf("wrote %zu frame seeds to %s and %zu pgoutput seeds to %s\n", seeds.frames.count(),
              (corpus / "frames").c_str(), seeds.pgoutput.count(), (corpus / "pgoutput").c_str());
  return 0;
}
