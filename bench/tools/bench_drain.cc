// bench-drain: the benchmark's do-nothing client (the `discard` contender; bench/run.sh builds it against Debian's
// libpq). It streams a logical slot with pgoutput, as the relay does, and throws every message away: what a client
// costs the walsender when the client itself costs nothing. Unlike pg_recvlogical it writes nothing, reads the
// stream in libpq's buffered reads, and confirms only every --status-interval-ms (and when the server asks).
//
//   bench-drain --conninfo CONNINFO --slot SLOT --publication PUB --endpos X/Y [--status-interval-ms N]
//       Streams SLOT until a commit ends at or past X/Y (or a keepalive reports the server's WAL there with no
//       transaction open), confirms that position, and prints "DRAINED <messages> <bytes>". Exit 0 when drained, 1 on an
//       error (the server's message on stderr).
#include <libpq-fe.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void Put64(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

bool ParseLsn(const char* text, uint64_t* lsn) {
  unsigned hi = 0, lo = 0;
  if (sscanf(text, "%X/%X", &hi, &lo) != 2) return false;
  *lsn = (static_cast<uint64_t>(hi) << 32) | lo;
  return true;
}

// Microseconds since 2000-01-01, the protocol's clock.
int64_t PgNow() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return us - 946684800LL * 1000000;
}

// A standby status update confirming `flush`; no reply requested.
bool SendStatus(PGconn* conn, uint64_t flush) {
  char msg[34];
  msg[0] = 'r';
  Put64(msg + 1, flush);
  Put64(msg + 9, flush);
  Put64(msg + 17, flush);
  Put64(msg + 25, static_cast<uint64_t>(PgNow()));
  msg[33] = 0;
  return PQputCopyData(conn, msg, sizeof msg) == 1 && PQflush(conn) == 0;
}

int Fail(PGconn* conn, const char* what) {
  fprintf(stderr, "bench-drain: %s: %s", what, conn ? PQerrorMessage(conn) : "\n");
  if (conn) PQfinish(conn);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string conninfo, slot, publication;
  uint64_t endpos = 0;
  int status_interval_ms = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--conninfo") conninfo = argv[i + 1];
    else if (k == "--slot") slot = argv[i + 1];
    else if (k == "--publication") publication = argv[i + 1];
    else if (k == "--endpos" && !ParseLsn(argv[i + 1], &endpos)) return Fail(nullptr, "--endpos is not an LSN");
    else if (k == "--status-interval-ms") status_interval_ms = atoi(argv[i + 1]);
  }
  if (conninfo.empty() || slot.empty() || publication.empty() || endpos == 0) {
    fprintf(stderr, "usage: bench-drain --conninfo C --slot S --publication P --endpos X/Y [--status-interval-ms N]\n");
    return 2;
  }
  PGconn* conn = PQconnectdb((conninfo + " replication=database").c_str());
  if (PQstatus(conn) != CONNECTION_OK) return Fail(conn, "connect");
  const std::string start = "START_REPLICATION SLOT \"" + slot + "\" LOGICAL 0/0 (proto_version '1', " +
                            "publication_names '" + publication + "')";
  PGresult* res = PQexec(conn, start.c_str());
  if (PQresultStatus(res) != PGRES_COPY_BOTH) {
    PQclear(res);
    return Fail(conn, "START_REPLICATION");
  }
  PQclear(res);
  uint64_t messages = 0, bytes = 0, confirmed = 0, done_through = 0;
  bool in_tx = false;
  auto last_status = std::chrono::steady_clock::now();
  while (done_through < endpos) {
    char* buf = nullptr;
    const int n = PQgetCopyData(conn, &buf, 0);
    if (n == -1) return Fail(conn, "the stream ended before --endpos");
    if (n == -2) return Fail(conn, "PQgetCopyData");
    bool reply = false;
    if (buf[0] == 'w' && n > 25) {
      ++messages;
      bytes += static_cast<uint64_t>(n);
      const char* data = buf + 25;
      if (data[0] == 'B') in_tx = true;
      if (data[0] == 'C' && n >= 25 + 26) {  // Commit: flags, commit LSN, end LSN, timestamp
        in_tx = false;
        done_through = Get64(data + 10);
      }
    } else if (buf[0] == 'k' && n >= 18) {
      if (!in_tx && Get64(buf + 1) > done_through) done_through = Get64(buf + 1);
      reply = buf[17] != 0;
    }
    PQfreemem(buf);
    const auto now = std::chrono::steady_clock::now();
    if (reply || now - last_status >= std::chrono::milliseconds(status_interval_ms)) {
      if (!SendStatus(conn, done_through)) return Fail(conn, "status update");
      confirmed = done_through;
      last_status = now;
    }
  }
  if (confirmed < done_through && !SendStatus(conn, done_through)) return Fail(conn, "the last status update");
  PQputCopyEnd(conn, nullptr);
  PQflush(conn);
  PQfinish(conn);
  printf("DRAINED %" PRIu64 " %" PRIu64 "\n", messages, bytes);
  return 0;
}
