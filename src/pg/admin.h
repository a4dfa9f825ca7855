// Slot, publication and table administration over a plain (non-replication) libpq connection, plus the SQL
// that `init` runs or prints. The SQL builders are pure; SqlConnection is the only I/O here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pg/pgoutput.h"

struct pg_conn;
struct pg_result;

namespace outbox::pg {

using Row = std::vector<std::optional<std::string>>;

class SqlConnection {
 public:
  static absl::StatusOr<std::unique_ptr<SqlConnection>> Connect(const std::string& conninfo,
                                                                const std::string& application_name);
  ~SqlConnection();
  // Runs one statement (simple protocol); returns its rows (empty for commands).
  absl::StatusOr<std::vector<Row>> Exec(const std::string& sql);
  // The same, giving up after `timeout_ms` without an answer (UNAVAILABLE; the connection is then unusable).
  absl::StatusOr<std::vector<Row>> Exec(const std::string& sql, int timeout_ms);
  int server_version() const;

 private:
  explicit SqlConnection(pg_conn* conn) : conn_(conn) {}
  absl::StatusOr<std::vector<Row>> Rows(pg_result* res);
  pg_conn* conn_ = nullptr;
};

// A result's rows, each field its text or NULL (the result is left to the caller to clear).
std::vector<Row> RowsOf(const pg_result* res);

// The publication watch (and `check`): whether `publication` exists, publishes inserts and covers schema.table.
std::string PublicationCoverageSql(std::string_view publication, std::string_view schema, std::string_view table);
// The verdict on PublicationCoverageSql's rows: OK, or FAILED_PRECONDITION saying which of the three fails, naming
// the publication (and the table). `while_running` words it for a publication changed under a running relay.
absl::Status PublicationCoverage(const std::vector<Row>& rows, std::string_view publication,
                                 std::string_view qualified_table, bool while_running);
// Whether PublicationCoverageSql's rows say the publication publishes updates too (pg_publication.pubupdate).
bool PublicationPublishesUpdates(const std::vector<Row>& rows);

// The live columns of schema.table in order, each as (attname, attnotnull, atthasdef, default expression, generated,
// type OID, type modifier, type name, enum labels, for a domain its root type's OID and the type modifier the
// domain gives it, else NULL and NULL, and for an array of an enum the enum's labels): what `check` looks for and what
// the relay reads on its plain connection before each session streams. No rows when there is no such table.
std::string ColumnCatalogSql(std::string_view schema, std::string_view table);
// ColumnCatalogSql's rows as columns (pure: both the relay's session and `check` read them through it).
std::vector<ColumnCatalog> ParseColumnCatalog(const std::vector<Row>& rows);

// Ends this relay's own previous walsender when it still holds `slot` (a dead connection the server has not
// noticed yet: it would keep the slot until wal_sender_timeout). Only a walsender of the connecting role with
// exactly that PID and holding exactly that slot is ended; the query returns one row if it was, none otherwise.
std::string TerminateOwnWalsenderSql(std::string_view slot, int64_t pid);

// Slot health: wal_status, safe_wal_size, retained WAL (current position - restart_lsn), active.
struct SlotHealth {
  std::string wal_status;
  std::optional<int64_t> safe_wal_size;
  std::optional<int64_t> retained_wal;
  bool active = false;
};
std::string SlotHealthSql(std::string_view slot);
// nullopt when the slot is gone (the stream reports that with its own error).
std::optional<SlotHealth> ParseSlotHealth(const std::vector<Row>& rows);

struct OutboxSqlNames {
  std::string schema = "public";
  std::string table = "outbox";
  std::string publication;
  std::string slot;
  std::string role = "outbox_relay";
  std::string database;  // for GRANT CONNECT; may be empty
  // The publication publishes updates too (outbox.on_update: error asks to see them; Debezium's
  // table.op.invalid.behavior=fatal): publish = 'insert, update' instead of 'insert'.
  bool publish_updates = false;
};

// CREATE TABLE IF NOT EXISTS for the default outbox layout (id uuid, aggregatetype, aggregateid, type, payload
// jsonb, created_at timestamptz).
std::string CreateOutboxTableSql(const OutboxSqlNames& n);
// CREATE PUBLICATION ... FOR TABLE ... WITH (publish = 'insert'), guarded so it is idempotent.
std::string CreatePublicationSql(const OutboxSqlNames& n);
// The SQL form of creating the slot, for `init --print`: pg_create_logical_replication_slot, with failover
// (PostgreSQL 17+) its fifth argument.
std::string CreateSlotSql(const OutboxSqlNames& n, bool failover);
// The least-privilege role: LOGIN REPLICATION, no superuser, SELECT on the outbox only (documentation form).
std::string CreateRoleSql(const OutboxSqlNames& n);

}  // namespace outbox::pg
