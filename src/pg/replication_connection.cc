// ReplicationConnection: libpq replication protocol client.
#include "common/strings.h"
#include "pg/replication_connection.h"

#include "common/status_tag.h"
#include "pg/admin.h"
#include "pg/libpq_wait.h"

#include <cstdlib>
#include <libpq-fe.h>

#include <algorithm>
#include <poll.h>
#include <sys/socket.h>
#include <cerrno>
#include <cstring>

#include <chrono>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::pg {
namespace {

// Session settings that fix the text form of every value (DESIGN.md "Text values").
constexpr const char* kPinnedOptions =
    "-c datestyle=ISO -c timezone=UTC -c extra_float_digits=3 -c bytea_output=hex -c intervalstyle=iso_8601";

absl::Status ResultError(PGresult* res, pg_conn* conn, std::string_view what) {
  const char* sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const std::string message = OneLine(primary ? primary : PQerrorMessage(conn));
  absl::Status classified = ClassifyServerError(sqlstate ? sqlstate : "", message);
  return WithReason(absl::Status(classified.code(),
                                 Cat(what, ": ", message, sqlstate ? Cat(" (SQLSTATE ", sqlstate, ")") : "")),
                    ReasonOf(classified));
}

std::optional<Lsn> ParseOptionalLsn(PGresult* res, int row, int col) {
  if (PQgetisnull(res, row, col)) return std::nullopt;
  auto lsn = Lsn::Parse(PQgetvalue(res, row, col));
  if (!lsn.ok()) return std::nullopt;
  return *lsn;
}

}  // namespace

absl::Status ClassifyServerError(std::string_view sqlstate, std::string_view message) {
  std::string msg(message);
  if (sqlstate.empty() || sqlstate.starts_with("08") || sqlstate.starts_with("57P") || sqlstate.starts_with("53")) {
    return absl::UnavailableError(msg);
  }
  if (sqlstate == "55006") {  // slot active for another PID: standby
    return WithReason(absl::UnavailableError(msg), StatusReason::kStandby);
  }
  if (sqlstate == "42704") return absl::FailedPreconditionError(msg);  // slot or publication missing
  if (sqlstate == "55000") return absl::FailedPreconditionError(msg);  // slot invalidated (wal_status lost)
  if (sqlstate == "42501" || sqlstate == "28000" || sqlstate == "28P01") return absl::FailedPreconditionError(msg);
  if (sqlstate == "0A000" || sqlstate == "22023" || sqlstate == "42601") return absl::InvalidArgumentError(msg);
  if (sqlstate == "XX000" && message.find("unrecognized pgoutput option") != std::string_view::npos) {
    return absl::InvalidArgumentError(msg);
  }
  return absl::UnavailableError(msg);
}

absl::StatusCode ClassifyConnectFailure(std::string_view reason) {
  // Authentication, a missing role or database, pg_hba, the REPLICATION attribute and TLS verification are
  // permanent; the rest (refused, timeout, starting up, a read-only server) is retried.
  static constexpr std::string_view kPermanent[] = {
      "authentication failed", "does not exist", "no pg_hba.conf entry",
      "must be superuser or replication",        // PostgreSQL 15 and earlier, without REPLICATION
      "permission denied to start WAL sender",  // PostgreSQL 16 and later
      "certificate verify failed", "does not match host name", "root certificate file"};
  for (std::string_view text : kPermanent) {
    if (reason.find(text) != std::string_view::npos) return absl::StatusCode::kFailedPrecondition;
  }
  return absl::StatusCode::kUnavailable;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> BuildConnParams(
    const std::string& conninfo, bool replication, const std::string& application_name) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    std::string reason = err ? err : "out of memory";
    if (err) PQfreemem(err);
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    return absl::InvalidArgumentError(Cat("source.conninfo: ", reason));
  }
  std::vector<std::pair<std::string, std::string>> params;
  std::string user_options;
  bool has_app_name = false;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string key = o->keyword;
    if (key == "options") {
      user_options = o->val;
      continue;
    }
    if (key == "replication" || key == "client_encoding") continue;
    if (key == "application_name") has_app_name = true;
    params.emplace_back(key, o->val);
  }
  PQconninfoFree(opts);
  // A dead network path fails a socket in seconds, not after TCP's retransmissions (~15 minutes), unless the
  // conninfo says otherwise.
  static constexpr std::pair<const char*, const char*> kNetworkDefaults[] = {
      {"connect_timeout", "10"},  {"keepalives", "1"},       {"keepalives_idle", "10"},
      {"keepalives_interval", "5"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "30000"}};
  for (const auto& setting : kNetworkDefaults) {
    const std::string_view key = setting.first;
    const bool set = std::any_of(params.begin(), params.end(), [key](const auto& p) { return p.first == key; });
    if (!set) params.emplace_back(setting.first, setting.second);
  }
  if (replication) params.emplace_back("replication", "database");
  if (!has_app_name) params.emplace_back("application_name", application_name);
  params.emplace_back("client_encoding", "UTF8");
  params.emplace_back("options", user_options.empty() ? kPinnedOptions : Cat(user_options, " ", kPinnedOptions));
  return params;
}

absl::StatusOr<pg_conn*> ConnectWithParams(const std::string& conninfo, bool replication,
                                           const std::string& application_name, const WaitLimits& limits) {
  auto params = BuildConnParams(conninfo, replication, application_name);
  if (!params.ok()) return params.status();
  std::vector<const char*> keys, values;
  int connect_timeout_s = 0;
  for (const auto& [k, v] : *params) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
    if (k == "connect_timeout" && !absl::SimpleAtoi(v, &connect_timeout_s)) connect_timeout_s = 0;
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  // PQconnectStartParams and PQconnectPoll with our own waits: connect_timeout bounds the whole handshake (startup,
  // TLS, authentication), not only the TCP connect, and SIGTERM ends it.
  pg_conn* conn = PQconnectStartParams(keys.data(), values.data(), 0);
  if (conn == nullptr) return absl::UnavailableError("could not connect: out of memory");
  const auto fail = [conn](std::string reason) -> absl::Status {
    PQfinish(conn);
    reason = OneLine(std::move(reason));
    return absl::Status(ClassifyConnectFailure(reason), Cat("could not connect to the server: ", reason));
  };
  const WaitClock::time_point deadline =
      connect_timeout_s > 0 ? WaitClock::now() + std::chrono::seconds(connect_timeout_s) : kNoDeadline;
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED || PQstatus(conn) == CONNECTION_BAD) return fail(PQerrorMessage(conn));
    const short events = state == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (absl::Status st = WaitSocket(PQsocket(conn), events, deadline, limits, "connecting"); !st.ok()) {
      PQfinish(conn);
      if (absl::IsCancelled(st)) return st;
      return absl::UnavailableError(Cat("could not connect to the server: no answer in ", connect_timeout_s,
                                        " s (connect_timeout)"));
    }
    state = PQconnectPoll(conn);
  }
  return conn;
}

absl::StatusOr<std::unique_ptr<ReplicationConnection>> ReplicationConnection::Connect(
    const std::string& conninfo, const std::string& application_name, const WaitLimits& limits) {
  auto conn = ConnectWithParams(conninfo, /*replication=*/true, application_name, limits);
  if (!conn.ok()) return conn.status();
  return std::unique_ptr<ReplicationConnection>(new ReplicationConnection(*conn, limits));
}

ReplicationConnection::~ReplicationConnection() {
  FreeBuffer();
  if (conn_ != nullptr) PQfinish(conn_);
}

void ReplicationConnection::FreeBuffer() {
  if (buffer_ != nullptr) {
    PQfreemem(buffer_);
    buffer_ = nullptr;
  }
}

int ReplicationConnection::server_version() const { return PQserverVersion(conn_); }
int64_t ReplicationConnection::backend_pid() const { return PQbackendPID(conn_); }
int ReplicationConnection::socket() const { return PQsocket(conn_); }

absl::StatusOr<int> ReplicationConnection::SetReceiveBuffer(int bytes) {
  const int fd = PQsocket(conn_);
  if (fd < 0) return LastError("the replication connection has no socket");  // lost: UNAVAILABLE, a reconnect
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) != 0) {
    return absl::InternalError(Cat("setsockopt(SO_RCVBUF, ", bytes, "): ", std::strerror(errno)));
  }
  int granted = 0;
  socklen_t len = sizeof granted;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len) != 0) {
    return absl::InternalError(Cat("getsockopt(SO_RCVBUF): ", std::strerror(errno)));
  }
  return granted;
}

absl::Status ReplicationConnection::LastError(std::string_view what) const {
  return absl::UnavailableError(Cat(what, ": ", OneLine(PQerrorMessage(conn_))));
}

absl::StatusOr<SystemInfo> ReplicationConnection::IdentifySystem() {
  auto sent = SendAndWait(conn_, "IDENTIFY_SYSTEM", limits_.answer, limits_, "IDENTIFY_SYSTEM");
  if (!sent.ok()) return sent.status();
  const Result& res = *sent;
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) return ResultError(res.get(), conn_, "IDENTIFY_SYSTEM");
  if (PQntuples(res.get()) != 1 || PQnfields(res.get()) < 4) {
    return absl::InternalError("IDENTIFY_SYSTEM: unexpected result shape");
  }
  SystemInfo info;
  info.system_id = PQgetvalue(res.get(), 0, 0);
  absl::SimpleAtoi(PQgetvalue(res.get(), 0, 1), &info.timeline);
  auto pos = Lsn::Parse(PQgetvalue(res.get(), 0, 2));
  if (pos.ok()) info.xlogpos = *pos;
  if (!PQgetisnull(res.get(), 0, 3)) info.dbname = PQgetvalue(res.get(), 0, 3);
  return info;
}

absl::StatusOr<std::optional<SlotInfo>> ReplicationConnection::ReadSlot(const std::string& slot) {
  const bool has_failover = server_version() >= kFailoverMinServerVersion;  // and invalidation_reason: both 17+
  const std::string sql = Cat(
      "SELECT slot_name, plugin, database, active, active_pid, restart_lsn, confirmed_flush_lsn, "
      "coalesce(wal_status, '')", has_failover ? ", failover, synced, coalesce(invalidation_reason, '')" : "",
      " FROM pg_replication_slots WHERE slot_name = ", QuoteLiteral(slot));
  auto sent = SendAndWait(conn_, sql, limits_.answer, limits_, "reading the slot");
  if (!sent.ok()) return sent.status();
  const Result& res = *sent;
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) return ResultError(res.get(), conn_, "reading the slot");
  if (PQntuples(res.get()) == 0) return std::optional<SlotInfo>();
  SlotInfo s;
  s.name = PQgetvalue(res.get(), 0, 0);
  s.plugin = PQgetvalue(res.get(), 0, 1);
  s.database = PQgetvalue(res.get(), 0, 2);
  s.active = std::string_view(PQgetvalue(res.get(), 0, 3)) == "t";
  if (!PQgetisnull(res.get(), 0, 4)) {
    int64_t pid = 0;
    if (absl::SimpleAtoi(PQgetvalue(res.get(), 0, 4), &pid)) s.active_pid = pid;
  }
  s.restart_lsn = ParseOptionalLsn(res.get(), 0, 5);
  s.confirmed_flush_lsn = ParseOptionalLsn(res.get(), 0, 6);
  s.wal_status = PQgetvalue(res.get(), 0, 7);
  if (has_failover) {
    s.failover = std::string_view(PQgetvalue(res.get(), 0, 8)) == "t";
    s.synced = std::string_view(PQgetvalue(res.get(), 0, 9)) == "t";
    s.invalidation_reason = PQgetvalue(res.get(), 0, 10);
  }
  return std::optional<SlotInfo>(std::move(s));
}

absl::StatusOr<Lsn> ReplicationConnection::CreateSlot(const std::string& slot, bool failover) {
  if (failover) {
    if (absl::Status st = CheckFailoverSupported(server_version()); !st.ok()) return st;
  }
  const std::string sql = CreateSlotCommand(slot, failover);
  // No answer limit: the server waits for the transactions running when it started to end.
  auto sent = SendAndWait(conn_, sql, std::chrono::milliseconds(0), limits_, "creating the slot");
  if (!sent.ok()) return sent.status();
  const Result& res = *sent;
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) {
    return ResultError(res.get(), conn_, Cat("creating replication slot \"", slot, "\""));
  }
  auto lsn = Lsn::Parse(PQgetvalue(res.get(), 0, 1));
  if (!lsn.ok()) return absl::InternalError("CREATE_REPLICATION_SLOT returned no consistent point");
  return *lsn;
}

absl::Status ReplicationConnection::SetSlotFailover(const std::string& slot) {
  if (absl::Status st = CheckFailoverSupported(server_version()); !st.ok()) return st;
  auto sent = SendAndWait(conn_, AlterSlotFailoverCommand(slot), limits_.answer, limits_, "altering the slot");
  if (!sent.ok()) return sent.status();
  const Result& res = *sent;
  if (PQresultStatus(res.get()) != PGRES_COMMAND_OK && PQresultStatus(res.get()) != PGRES_TUPLES_OK) {
    return ResultError(res.get(), conn_, Cat("making replication slot \"", slot, "\" a failover slot"));
  }
  return absl::OkStatus();
}

std::string StartReplicationCommand(const StartOptions& o) {
  // Only options every server from 14 on knows: no `origin` (16+), `streaming` as a boolean (16+ also takes
  // off/on/parallel), and the caller's proto_version (PROTOCOL.md §1).
  std::string options = Cat("proto_version '", o.proto_version, "', publication_names ",
                            QuoteLiteral(QuoteIdent(o.publication)));
  if (o.messages) Append(&options, ", messages 'true'");
  if (o.streaming) Append(&options, ", streaming 'true'");
  return Cat("START_REPLICATION SLOT ", o.slot, " LOGICAL ", o.start_lsn.ToString(), " (", options, ")");
}

absl::Status ReplicationConnection::StartReplication(const StartOptions& o) {
  const std::string sql = StartReplicationCommand(o);
  auto sent = SendAndWait(conn_, sql, limits_.answer, limits_, "START_REPLICATION");
  if (!sent.ok()) return sent.status();
  const Result& res = *sent;
  if (PQresultStatus(res.get()) != PGRES_COPY_BOTH) {
    return ResultError(res.get(), conn_, Cat("could not start replication on slot \"", o.slot, "\""));
  }
  if (PQsetnonblocking(conn_, 1) != 0) return LastError("could not set non-blocking mode");
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string_view>> ReplicationConnection::ReadMessage() {
  FreeBuffer();
  const int n = PQgetCopyData(conn_, &buffer_, 1);
  if (n > 0) return std::optional<std::string_view>(std::string_view(buffer_, static_cast<size_t>(n)));
  if (n == 0) return std::optional<std::string_view>();
  if (n == -1) {
    // COPY ended: the server sent CopyDone or an ErrorResponse.
    copy_done_ = true;
    Result res(PQgetResult(conn_));
    if (res && PQresultStatus(res.get()) == PGRES_FATAL_ERROR) {
      return ResultError(res.get(), conn_, "replication stream ended");
    }
    return absl::UnavailableError("replication stream ended by the server");
  }
  return LastError("could not read COPY data");
}

absl::Status ReplicationConnection::ConsumeInput() {
  if (PQconsumeInput(conn_) == 0) return LastError("could not receive data from the server");
  return absl::OkStatus();
}

absl::Status ReplicationConnection::SendStatus(const StandbyStatus& status) {
  const std::string bytes = EncodeStandbyStatus(status);
  if (PQputCopyData(conn_, bytes.data(), static_cast<int>(bytes.size())) <= 0) {
    return LastError("could not send feedback packet");
  }
  auto flushed = Flush();
  if (!flushed.ok()) return flushed.status();
  return absl::OkStatus();
}

absl::StatusOr<bool> ReplicationConnection::Flush() {
  const int r = PQflush(conn_);
  if (r < 0) return LastError("could not send data to the server");
  return r == 0;
}

absl::Status ReplicationConnection::EndCopy(int timeout_ms) {
  if (copy_done_) return absl::OkStatus();
  FreeBuffer();
  if (PQputCopyEnd(conn_, nullptr) <= 0) return LastError("could not send end-of-streaming message");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    auto flushed = Flush();
    if (!flushed.ok()) return flushed.status();
    char* buf = nullptr;
    const int n = PQgetCopyData(conn_, &buf, 1);
    if (buf) PQfreemem(buf);
    if (n == -1) break;
    if (n == -2) return LastError("could not read COPY data");
    if (n == 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("the server did not end the stream in time");
      pollfd pfd{PQsocket(conn_), POLLIN, 0};
      ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
      if (auto st = ConsumeInput(); !st.ok()) return st;
    }
  }
  copy_done_ = true;
  while (true) {
    Result res(PQgetResult(conn_));
    if (!res) break;
    const ExecStatusType st = PQresultStatus(res.get());
    if (st == PGRES_FATAL_ERROR) return ResultError(res.get(), conn_, "ending replication");
  }
  return absl::OkStatus();
}

std::string ServerVersionText(int server_version) {
  return Cat(server_version / 10000, ".", server_version % 10000);
}

absl::Status CheckFailoverSupported(int server_version) {
  if (server_version >= kFailoverMinServerVersion) return absl::OkStatus();
  return absl::FailedPreconditionError(
      Cat("source.failover: failover slots need PostgreSQL 17 or later, but the server is PostgreSQL ",
          ServerVersionText(server_version), " (set source.failover: false)"));
}

std::string CreateSlotCommand(std::string_view slot, bool failover) {
  if (failover) return Cat("CREATE_REPLICATION_SLOT ", slot, " LOGICAL pgoutput (SNAPSHOT 'nothing', FAILOVER true)");
  // The older syntax is accepted by PostgreSQL 10 to 18 (PROTOCOL.md §1).
  return Cat("CREATE_REPLICATION_SLOT ", slot, " LOGICAL pgoutput NOEXPORT_SNAPSHOT");
}

std::string AlterSlotFailoverCommand(std::string_view slot) {
  return Cat("ALTER_REPLICATION_SLOT ", slot, " (FAILOVER true)");
}

std::string QuoteIdent(std::string_view ident) {
  std::string out = "\"";
  for (char c : ident) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string QuoteLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

}  // namespace outbox::pg
