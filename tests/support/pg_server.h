// A throwaway PostgreSQL (scripts/pg-temp.sh: 15 by default, the version in PG_BIN's directory when that is set)
// and plain libpq connections to it.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

typedef struct pg_conn PGconn;

namespace outbox::testing {

// A row of a query result, NULL as nullopt.
using PgRow = std::vector<std::optional<std::string>>;
using PgRows = std::vector<PgRow>;

// One libpq connection (not a replication connection unless the conninfo asks for it). Not thread-safe: give
// each thread its own. SQL errors come back as a status whose message starts with the SQLSTATE: "[42P01] ...".
class PgConnection {
 public:
  static absl::StatusOr<PgConnection> Connect(const std::string& conninfo);
  PgConnection(PgConnection&& other) noexcept;
  PgConnection& operator=(PgConnection&& other) noexcept;
  ~PgConnection();

  // Runs one or more statements (simple query protocol), discarding results.
  absl::Status Exec(std::string_view sql);
  // The rows of the (last) statement's result.
  absl::StatusOr<PgRows> Query(std::string_view sql);
  // The first column of the first row; NotFound when there is no row.
  absl::StatusOr<std::optional<std::string>> QueryValue(std::string_view sql);
  // The server process id of this session (for pg_terminate_backend tests).
  int BackendPid() const;
  PGconn* get() const { return conn_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  PGconn* conn_ = nullptr;
};

// The SQLSTATE at the start of a status message made by PgConnection ("" when none).
std::string SqlState(const absl::Status& status);

class PgServer {
 public:
  struct Options {
    int port = 0;            // 0: a free port
    std::string extra_conf;  // postgresql.conf lines appended on every start (PG_TEMP_CONF)
  };

  // initdb in a fresh temp dir and start. The server runs as an unprivileged user when this process is root.
  static absl::StatusOr<std::unique_ptr<PgServer>> Create(Options options);
  static absl::StatusOr<std::unique_ptr<PgServer>> Create() { return Create(Options{}); }
  // A physical standby of `primary` (pg_basebackup -R, streaming from the physical slot `slot`, which must
  // exist), started in a fresh temp dir with `options.extra_conf`. Promote it with SELECT pg_promote().
  static absl::StatusOr<std::unique_ptr<PgServer>> CreateStandby(const PgServer& primary, const std::string& slot,
                                                                 Options options);

  // One server per process, started on first use and stopped at exit. With OUTBOX_TEST_PG_PORT set (scripts/test.sh
  // does), an already running server on 127.0.0.1 at that port (user postgres, trust) instead: Start/Stop/Restart
  // then fail with FailedPrecondition. Tests sharing it use their own databases (CreateDatabase(UniqueName(...))),
  // slots and publications. Tests that stop or restart PostgreSQL must Create() their own. Returns nullptr (and
  // records a gtest failure, once per call) when it cannot start.
  static PgServer* Shared();

  // Stops with -m immediate and removes the directory.
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  // The temp dir ("" for an external server): the unix socket lives here, the data in dir()/data, the server log in log_path().
  const std::string& dir() const { return dir_; }
  std::string data_dir() const { return dir_ + "/data"; }
  std::string log_path() const { return dir_ + "/postgres.log"; }
  // "host=127.0.0.1 port=N user=postgres dbname=<dbname>" (trust authentication).
  std::string conninfo(std::string_view dbname = "postgres") const;
  // conninfo(dbname) + " replication=database".
  std::string replication_conninfo(std::string_view dbname = "postgres") const;

  // Start again on the same port and data (after Stop), waiting until it accepts connections.
  absl::Status Start();
  // mode: "smart", "fast" or "immediate". Waits (with a deadline) until it stopped.
  absl::Status Stop(std::string_view mode = "fast");
  absl::Status Restart(std::string_view mode = "fast");
  bool running() const { return running_; }
  // A server this object did not start (OUTBOX_TEST_PG_PORT); dir() is empty.
  bool external() const { return dir_.empty(); }

  // A fresh connection each call.
  absl::StatusOr<PgConnection> Connect(std::string_view dbname = "postgres") const;
  absl::Status Exec(std::string_view sql, std::string_view dbname = "postgres") const;
  absl::StatusOr<PgRows> Query(std::string_view sql, std::string_view dbname = "postgres") const;
  absl::StatusOr<std::optional<std::string>> QueryValue(std::string_view sql,
                                                        std::string_view dbname = "postgres") const;

  // server_version_num (150018, 170011, ...); 0 when it cannot be read.
  int VersionNum() const;

  // CREATE DATABASE <name> (name as given: use UniqueName()).
  absl::Status CreateDatabase(std::string_view name) const;

 private:
  PgServer(std::string dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {}
  absl::Status RunScript(const std::vector<std::string>& args, std::string* out);
  // Runs pg-temp.sh `args` (start or standby) and takes the port it prints.
  absl::Status StartWith(const std::vector<std::string>& args);

  std::string dir_;
  Options options_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace outbox::testing
