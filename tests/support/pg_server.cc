#include "support/pg_server.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "support/process.h"
#include "support/internal.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

constexpr auto kScriptDeadline = std::chrono::seconds(120);

absl::Status ResultError(PGconn* conn, PGresult* res) {
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = res != nullptr ? PQresultErrorMessage(res) : "";
  if (message.empty()) message = PQerrorMessage(conn);
  message = std::string(absl::StripTrailingAsciiWhitespace(message));
  if (PQstatus(conn) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("[", state != nullptr ? state : "08006", "] ", message));
  }
  return absl::UnknownError(absl::StrCat("[", state != nullptr ? state : "?????", "] ", message));
}

}  // namespace

std::string SqlState(const absl::Status& status) {
  std::string_view m = internal::Sv(status.message());
  if (m.size() >= 7 && m[0] == '[' && m[6] == ']') return std::string(m.substr(1, 5));
  return "";
}

// ---- PgConnection -------------------------------------------------------------------------------------------

absl::StatusOr<PgConnection> PgConnection::Connect(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr) return absl::ResourceExhaustedError("PQconnectdb returned null");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message(absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn)));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("connect ", conninfo, ": ", message));
  }
  return PgConnection(conn);
}

PgConnection::PgConnection(PgConnection&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = other.conn_;
    other.conn_ = nullptr;
  }
  return *this;
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::Exec(std::string_view sql) {
  if (conn_ == nullptr) return absl::FailedPreconditionError("moved-from connection");
  // PQsendQuery + PQgetResult: every statement's result is checked, not only the last one.
  if (PQsendQuery(conn_, std::string(sql).c_str()) == 0) return ResultError(conn_, nullptr);
  absl::Status status;
  while (PGresult* res = PQgetResult(conn_)) {
    ExecStatusType st = PQresultStatus(res);
    if (status.ok() && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
      status = ResultError(conn_, res);
    }
    PQclear(res);
  }
  if (status.ok() && PQstatus(conn_) != CONNECTION_OK) return ResultError(conn_, nullptr);
  return status;
}

absl::StatusOr<PgRows> PgConnection::Query(std::string_view sql) {
  if (conn_ == nullptr) return absl::FailedPreconditionError("moved-from connection");
  PGresult* res = PQexec(conn_, std::string(sql).c_str());
  ExecStatusType st = PQresultStatus(res);
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    absl::Status error = ResultError(conn_, res);
    PQclear(res);
    return error;
  }
  PgRows rows;
  int n = PQntuples(res);
  int cols = PQnfields(res);
  rows.reserve(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    PgRow row;
    row.reserve(static_cast<size_t>(cols));
    for (int c = 0; c < cols; ++c) {
      if (PQgetisnull(res, r, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(res, r, c), static_cast<size_t>(PQgetlength(res, r, c))));
      }
    }
    rows.push_back(std::move(row));
  }
  PQclear(res);
  return rows;
}

absl::StatusOr<std::optional<std::string>> PgConnection::QueryValue(std::string_view sql) {
  auto rows = Query(sql);
  if (!rows.ok()) return rows.status();
  if (rows->empty() || rows->front().empty()) {
    return absl::NotFoundError(absl::StrCat("no row from: ", internal::Av(sql)));
  }
  return rows->front().front();
}

int PgConnection::BackendPid() const { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }

// ---- PgServer -----------------------------------------------------------------------------------------------

absl::Status PgServer::RunScript(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv = {SourceDir() + "/scripts/pg-temp.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> env = {{"PG_TEMP_OWNER_PID", std::to_string(getpid())}};
  if (!options_.extra_conf.empty()) env["PG_TEMP_CONF"] = options_.extra_conf;
  auto result = RunCommand(argv, kScriptDeadline, env);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat("pg-temp.sh ", absl::StrJoin(args, " "), " exited with ",
                                            result->exit_code, ": ", result->err, "\n", result->out));
  }
  if (out != nullptr) *out = result->out;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::Create(Options options) {
  auto dir = MakeTempDir("outbox-pg-");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<PgServer> server(new PgServer(*dir, std::move(options)));
  if (absl::Status s = server->Start(); !s.ok()) return s;
  return server;
}

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::CreateStandby(const PgServer& primary, const std::string& slot,
                                                                  Options options) {
  auto dir = MakeTempDir("outbox-pg-standby-");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<PgServer> server(new PgServer(*dir, std::move(options)));
  if (absl::Status s = server->StartWith({"standby", *dir, std::to_string(primary.port()), slot}); !s.ok()) return s;
  return server;
}

absl::Status PgServer::Start() {
  if (external()) return absl::FailedPreconditionError("an external PostgreSQL (OUTBOX_TEST_PG_PORT)");
  std::vector<std::string> args = {"start", dir_};
  if (port_ != 0) {
    args.push_back(std::to_string(port_));
  } else if (options_.port != 0) {
    args.push_back(std::to_string(options_.port));
  }
  return StartWith(args);
}

absl::Status PgServer::StartWith(const std::vector<std::string>& args) {
  std::string out;
  if (absl::Status s = RunScript(args, &out); !s.ok()) return s;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, "PGPORT=")) {
      int port = 0;
      if (absl::SimpleAtoi(line, &port)) port_ = port;
    }
  }
  if (port_ == 0) return absl::InternalError(absl::StrCat("pg-temp.sh start printed no PGPORT: ", out));
  running_ = true;
  return absl::OkStatus();
}

absl::Status PgServer::Stop(std::string_view mode) {
  if (external()) return absl::FailedPreconditionError("an external PostgreSQL (OUTBOX_TEST_PG_PORT)");
  if (absl::Status s = RunScript({"stop", dir_, std::string(mode)}, nullptr); !s.ok()) return s;
  running_ = false;
  return absl::OkStatus();
}

absl::Status PgServer::Restart(std::string_view mode) {
  if (absl::Status s = Stop(mode); !s.ok()) return s;
  return Start();
}

PgServer::~PgServer() {
  if (external()) return;
  absl::Status s = RunScript({"stop", dir_, "immediate"}, nullptr);
  if (!s.ok()) fprintf(stderr, "PgServer: %s\n", std::string(s.message()).c_str());
  RemoveTree(dir_);
}

PgServer* PgServer::Shared() {
  static std::mutex mu;
  static std::unique_ptr<PgServer> shared;
  static absl::Status failure;
  std::lock_guard<std::mutex> lock(mu);
  if (shared == nullptr && failure.ok()) {
    const char* external = std::getenv("OUTBOX_TEST_PG_PORT");
    int port = 0;
    if (external != nullptr && *external != '\0') {
      if (absl::SimpleAtoi(external, &port) && port > 0) {
        shared.reset(new PgServer("", Options{}));
        shared->port_ = port;
        shared->running_ = true;
      } else {
        failure = absl::InvalidArgumentError(absl::StrCat("OUTBOX_TEST_PG_PORT=", external));
      }
    } else {
      auto server = Create();
      if (server.ok()) {
        shared = std::move(*server);
      } else {
        failure = server.status();
      }
    }
  }
  if (shared == nullptr) {
    ADD_FAILURE() << "the shared PostgreSQL did not start: " << failure;
    return nullptr;
  }
  return shared.get();
}

std::string PgServer::conninfo(std::string_view dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_, " user=postgres dbname=", internal::Av(dbname));
}

std::string PgServer::replication_conninfo(std::string_view dbname) const {
  return absl::StrCat(conninfo(dbname), " replication=database");
}

absl::StatusOr<PgConnection> PgServer::Connect(std::string_view dbname) const {
  return PgConnection::Connect(conninfo(dbname));
}

absl::Status PgServer::Exec(std::string_view sql, std::string_view dbname) const {
  auto conn = Connect(dbname);
  if (!conn.ok()) return conn.status();
  return conn->Exec(sql);
}

absl::StatusOr<PgRows> PgServer::Query(std::string_view sql, std::string_view dbname) const {
  auto conn = Connect(dbname);
  if (!conn.ok()) return conn.status();
  return conn->Query(sql);
}

absl::StatusOr<std::optional<std::string>> PgServer::QueryValue(std::string_view sql,
                                                                std::string_view dbname) const {
  auto conn = Connect(dbname);
  if (!conn.ok()) return conn.status();
  return conn->QueryValue(sql);
}

int PgServer::VersionNum() const {
  auto v = QueryValue("SHOW server_version_num");
  int num = 0;
  if (v.ok() && v->has_value() && absl::SimpleAtoi(**v, &num)) return num;
  return 0;
}

absl::Status PgServer::CreateDatabase(std::string_view name) const {
  return Exec(absl::StrCat("CREATE DATABASE \"", internal::Av(name), "\""));
}

}  // namespace outbox::testing
