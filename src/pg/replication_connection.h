// ReplicationConnection: the libpq replication=database connection that streams the slot (PROTOCOL.md §1-2).
// The only code that calls libpq on the stream. Owned by the loop thread. The walsender's session settings are
// pinned in `options` so text values do not change with a server's defaults (DESIGN.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/lsn.h"
#include "pg/frames.h"
#include "pg/pgoutput.h"
#include "pg/stream_connection.h"
#include "pg/slot_check.h"

struct pg_conn;

namespace outbox::pg {

// "15.18" for PQserverVersion's 150018.
std::string ServerVersionText(int server_version);

// FAILED_PRECONDITION naming source.failover and the server's version when `server_version` has no failover
// slots; OK otherwise.
absl::Status CheckFailoverSupported(int server_version);

// The replication commands that create a slot and make an existing one a failover slot (PROTOCOL.md §1, §7).
// Without failover the older syntax, accepted by PostgreSQL 10 to 18; with it the option list of 17+.
std::string CreateSlotCommand(std::string_view slot, bool failover);
std::string AlterSlotFailoverCommand(std::string_view slot);

struct StartOptions {
  std::string slot;
  std::string publication;
  Lsn start_lsn;  // 0/0: resume at the slot's confirmed position
  int proto_version = 1;
  bool messages = false;
  bool streaming = false;
};

// START_REPLICATION ... LOGICAL with pgoutput's options for `options`.
std::string StartReplicationCommand(const StartOptions& options);

// Classifies a server error by SQLSTATE and message into the code the loop acts on:
// UNAVAILABLE (retry: connection lost, 55006 slot active elsewhere, walsender timeout),
// FAILED_PRECONDITION (fatal: slot missing or invalidated, publication missing, wal_level, permissions),
// INVALID_ARGUMENT (option errors).
absl::Status ClassifyServerError(std::string_view sqlstate, std::string_view message);

// Classifies why a connection attempt failed (libpq's message): FAILED_PRECONDITION for what a retry cannot cure,
// UNAVAILABLE otherwise.
absl::StatusCode ClassifyConnectFailure(std::string_view reason);

// Builds the libpq keyword/value list for a replication or a plain connection from a user conninfo (key=value
// or URI), adding replication=database, application_name and the pinned session settings. Pure.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> BuildConnParams(const std::string& conninfo,
                                                                                 bool replication,
                                                                                 const std::string& application_name);

// What a call may wait for the server. libpq's own blocking calls (PQconnectdb, PQexec) retry through signals and,
// on a connection that went silent without an RST (a vanished host, a partition, a proxy that stops moving bytes
// while its kernel still acknowledges them), wait until TCP gives up, which keepalives and tcp_user_timeout cannot
// shorten there. These calls poll the socket themselves instead.
struct WaitLimits {
  // For the answer to a command (IDENTIFY_SYSTEM, the slot query, START_REPLICATION): UNAVAILABLE after it. 0: no
  // limit. CREATE_REPLICATION_SLOT has none (it waits for the server's running transactions to end).
  std::chrono::milliseconds answer{60000};
  // Ends any wait (connecting too) early with CANCELLED when it turns true: SIGTERM.
  const std::atomic<bool>* stop = nullptr;
};

// Connects with BuildConnParams's list, within connect_timeout (10 s unless the conninfo sets it) for the whole
// handshake. UNAVAILABLE for what a retry may cure; FAILED_PRECONDITION for authentication, a missing database or
// role, pg_hba or TLS verification failures; CANCELLED when `limits.stop` turns true. The reason is one line.
absl::StatusOr<pg_conn*> ConnectWithParams(const std::string& conninfo, bool replication,
                                           const std::string& application_name, const WaitLimits& limits = {});

class ReplicationConnection : public StreamConnection {
 public:
  // Every call on the connection waits within `limits` (see WaitLimits).
  static absl::StatusOr<std::unique_ptr<ReplicationConnection>> Connect(const std::string& conninfo,
                                                                        const std::string& application_name,
                                                                        const WaitLimits& limits = {});
  ~ReplicationConnection() override;

  absl::StatusOr<SystemInfo> IdentifySystem();
  // nullopt when the slot does not exist.
  absl::StatusOr<std::optional<SlotInfo>> ReadSlot(const std::string& slot);
  // CREATE_REPLICATION_SLOT (CreateSlotCommand); returns the consistent point.
  absl::StatusOr<Lsn> CreateSlot(const std::string& slot, bool failover = false);
  // ALTER_REPLICATION_SLOT slot (FAILOVER true): PostgreSQL 17+.
  absl::Status SetSlotFailover(const std::string& slot);
  int server_version() const;
  int64_t backend_pid() const;  // the server process (the walsender) of this connection
  // SO_RCVBUF of the connection's socket (source.receive_buffer_bytes); returns what the kernel grants, which
  // getsockopt reports (Linux doubles the request for its bookkeeping, within net.core.rmem_max).
  absl::StatusOr<int> SetReceiveBuffer(int bytes);

  absl::Status StartReplication(const StartOptions& options);

  // StreamConnection, on libpq: ConsumeInput reads into libpq's buffer; EndCopy is PQputCopyEnd, drain, result.
  absl::StatusOr<std::optional<std::string_view>> ReadMessage() override;
  absl::Status ConsumeInput() override;
  absl::Status SendStatus(const StandbyStatus& status) override;
  absl::StatusOr<bool> Flush() override;
  absl::Status EndCopy(int timeout_ms) override;
  int socket() const override;

 private:
  ReplicationConnection(pg_conn* conn, const WaitLimits& limits) : conn_(conn), limits_(limits) {}
  absl::Status LastError(std::string_view what) const;
  void FreeBuffer();

  pg_conn* conn_ = nullptr;
  WaitLimits limits_;
  char* buffer_ = nullptr;  // the last PQgetCopyData buffer
  bool copy_done_ = false;
};

// Quotes an identifier for SQL ("MyPub" -> "\"MyPub\"").
std::string QuoteIdent(std::string_view ident);
std::string QuoteLiteral(std::string_view text);

}  // namespace outbox::pg
