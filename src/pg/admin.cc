// Administration SQL and a minimal plain libpq connection.
#include "common/strings.h"
#include "pg/admin.h"

#include <libpq-fe.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pg/libpq_wait.h"
#include "pg/replication_connection.h"

namespace outbox::pg {

std::string PublicationCoverageSql(std::string_view publication, std::string_view schema, std::string_view table) {
  return Cat("SELECT p.pubinsert, EXISTS (SELECT 1 FROM pg_publication_tables t WHERE t.pubname = p.pubname AND "
             "t.schemaname = ", QuoteLiteral(schema), " AND t.tablename = ", QuoteLiteral(table),
             "), p.pubupdate FROM pg_publication p WHERE p.pubname = ", QuoteLiteral(publication));
}

std::string ColumnCatalogSql(std::string_view schema, std::string_view table) {
  // A column of a NOT NULL domain is not null either (pgjdbc's getColumns, which Debezium reads, says so too). A
  // domain's chain of base types ends at the first type that is not a domain (its root); only a domain over that
  // type can give it a type modifier (PostgreSQL refuses one on a domain), so the deepest domain's is the column's.
  return Cat(
      "SELECT a.attname, a.attnotnull OR (ty.typtype = 'd' AND ty.typnotnull), a.atthasdef, "
      "pg_catalog.pg_get_expr(d.adbin, d.adrelid), a.attgenerated <> '', a.atttypid, a.atttypmod, ty.typname, "
      "(SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_catalog.pg_enum e "
      "WHERE e.enumtypid = a.atttypid), dom.base, dom.mod, "
      "(SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_catalog.pg_enum e "
      "WHERE ty.typcategory = 'A' AND e.enumtypid = ty.typelem), "
      "ty.typtype, et.oid, et.typname, et.typtype, et.typdelim "
      "FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid "
      "LEFT JOIN pg_catalog.pg_type et ON ty.typcategory = 'A' AND et.oid = ty.typelem "
      "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
      "LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
      "LEFT JOIN LATERAL (WITH RECURSIVE chain(base, mod, depth) AS ("
      "SELECT t.typbasetype, t.typtypmod, 0 FROM pg_catalog.pg_type t WHERE t.oid = a.atttypid AND t.typtype = 'd' "
      "UNION ALL SELECT t.typbasetype, t.typtypmod, chain.depth + 1 FROM chain "
      "JOIN pg_catalog.pg_type t ON t.oid = chain.base AND t.typtype = 'd') "
      "SELECT chain.base, chain.mod FROM chain ORDER BY chain.depth DESC LIMIT 1) dom ON true "
      "WHERE n.nspname = ", QuoteLiteral(schema), " AND c.relname = ", QuoteLiteral(table),
      " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum");
}

std::vector<ColumnCatalog> ParseColumnCatalog(const std::vector<Row>& rows) {
  const auto at = [](const Row& row, size_t i) -> const std::optional<std::string>& {
    static const std::optional<std::string> kNull;
    return i < row.size() ? row[i] : kNull;
  };
  const auto is_true = [&](const Row& row, size_t i) { return at(row, i).value_or("f") == "t"; };
  std::vector<ColumnCatalog> columns;
  columns.reserve(rows.size());
  for (const Row& row : rows) {
    ColumnCatalog& c = columns.emplace_back();
    c.name = at(row, 0).value_or("");
    c.not_null = is_true(row, 1);
    c.has_default = is_true(row, 2);
    c.default_expression = at(row, 3);
    c.generated = is_true(row, 4);
    c.type_oid = static_cast<uint32_t>(std::strtoul(at(row, 5).value_or("0").c_str(), nullptr, 10));
    c.type_modifier = static_cast<int32_t>(std::strtol(at(row, 6).value_or("-1").c_str(), nullptr, 10));
    c.type_name = at(row, 7).value_or("");
    c.enum_labels = at(row, 8);
    if (at(row, 9).has_value()) {
      c.domain_root_oid = static_cast<uint32_t>(std::strtoul(at(row, 9)->c_str(), nullptr, 10));
      c.domain_root_modifier = static_cast<int32_t>(std::strtol(at(row, 10).value_or("-1").c_str(), nullptr, 10));
    }
    c.element_enum_labels = at(row, 11);
    const auto first_char = [&](size_t i) -> char { return at(row, i).value_or("").empty() ? 0 : (*at(row, i))[0]; };
    c.type_type = first_char(12);
    c.element_oid = static_cast<uint32_t>(std::strtoul(at(row, 13).value_or("0").c_str(), nullptr, 10));
    c.element_name = at(row, 14).value_or("");
    c.element_type_type = first_char(15);
    c.element_delimiter = first_char(16);
  }
  return columns;
}

absl::Status PublicationCoverage(const std::vector<Row>& rows, std::string_view publication,
                                 std::string_view qualified_table, bool while_running) {
  const std::string_view when = while_running ? " (changed while the relay ran: events written since were not "
                                                "streamed and are not confirmed; restore it, then restart)"
                                              : "";
  if (rows.empty() || rows.front().size() < 2) {
    return absl::FailedPreconditionError(Cat("publication \"", publication, "\" does not exist",
                                             while_running ? when : " (source.publication; `outbox-relay init` creates it)"));
  }
  if (rows.front()[1].value_or("f") != "t") {
    return absl::FailedPreconditionError(Cat("publication \"", publication, "\" does not cover ", qualified_table, when));
  }
  if (rows.front()[0].value_or("f") != "t") {
    return absl::FailedPreconditionError(
        Cat("publication \"", publication, "\" does not publish inserts (publish = 'insert')", when));
  }
  return absl::OkStatus();
}

bool PublicationPublishesUpdates(const std::vector<Row>& rows) {
  return !rows.empty() && rows.front().size() > 2 && rows.front()[2].value_or("f") == "t";
}

std::string TerminateOwnWalsenderSql(std::string_view slot, int64_t pid) {
  return Cat("SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a JOIN pg_replication_slots s ON s.active_pid = "
             "a.pid WHERE a.pid = ", pid, " AND a.backend_type = 'walsender' AND a.usename = current_user AND "
             "s.slot_name = ", QuoteLiteral(slot));
}

std::string SlotHealthSql(std::string_view slot) {
  return Cat("SELECT coalesce(wal_status, ''), safe_wal_size, (pg_current_wal_lsn() - restart_lsn)::bigint, active "
             "FROM pg_replication_slots WHERE slot_name = ", QuoteLiteral(slot));
}

std::optional<SlotHealth> ParseSlotHealth(const std::vector<Row>& rows) {
  if (rows.empty() || rows.front().size() < 4) return std::nullopt;
  const Row& r = rows.front();
  const auto number = [](const std::optional<std::string>& v) -> std::optional<int64_t> {
    int64_t n = 0;
    if (!v || !absl::SimpleAtoi(*v, &n)) return std::nullopt;
    return n;
  };
  return SlotHealth{r[0].value_or(""), number(r[1]), number(r[2]), r[3].value_or("f") == "t"};
}

absl::StatusOr<std::unique_ptr<SqlConnection>> SqlConnection::Connect(const std::string& conninfo,
                                                                      const std::string& application_name) {
  auto conn = ConnectWithParams(conninfo, /*replication=*/false, application_name);
  if (!conn.ok()) return conn.status();
  return std::unique_ptr<SqlConnection>(new SqlConnection(*conn));
}

SqlConnection::~SqlConnection() {
  if (conn_) PQfinish(conn_);
}

int SqlConnection::server_version() const { return PQserverVersion(conn_); }

absl::StatusOr<std::vector<Row>> SqlConnection::Exec(const std::string& sql) { return Rows(PQexec(conn_, sql.c_str())); }

absl::StatusOr<std::vector<Row>> SqlConnection::Exec(const std::string& sql, int timeout_ms) {
  auto res = SendAndWait(conn_, sql, std::chrono::milliseconds(timeout_ms), WaitLimits{}, "");
  if (!res.ok()) return res.status();
  return Rows(res->release());
}

absl::StatusOr<std::vector<Row>> SqlConnection::Rows(PGresult* res) {
  const ExecStatusType st = PQresultStatus(res);
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    const char* sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    const char* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    std::string message = primary ? primary : PQerrorMessage(conn_);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    absl::Status classified = ClassifyServerError(sqlstate ? sqlstate : "", message);
    PQclear(res);
    return absl::Status(classified.code(), Cat(message, sqlstate ? Cat(" (SQLSTATE ", sqlstate, ")") : ""));
  }
  std::vector<Row> rows = RowsOf(res);
  PQclear(res);
  return rows;
}

std::vector<Row> RowsOf(const pg_result* res) {
  std::vector<Row> rows;
  for (int r = 0; r < PQntuples(res); ++r) {
    Row row;
    for (int c = 0; c < PQnfields(res); ++c) {
      if (PQgetisnull(res, r, c)) row.emplace_back(std::nullopt);
      else row.emplace_back(std::string(PQgetvalue(res, r, c), PQgetlength(res, r, c)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string CreateOutboxTableSql(const OutboxSqlNames& n) {
  return Cat("CREATE TABLE IF NOT EXISTS ", QuoteIdent(n.schema), ".", QuoteIdent(n.table), " (\n",
                      "  id            uuid        PRIMARY KEY,\n",
                      "  aggregatetype text        NOT NULL,\n",
                      "  aggregateid   text        NOT NULL,\n",
                      "  type          text        NOT NULL,\n",
                      "  payload       jsonb,\n",
                      "  created_at    timestamptz NOT NULL DEFAULT now()\n",
                      ");");
}

std::string CreatePublicationSql(const OutboxSqlNames& n) {
  return Cat("DO $outbox_relay$ BEGIN\n",
                      "  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = ", QuoteLiteral(n.publication),
                      ") THEN\n",
                      "    CREATE PUBLICATION ", QuoteIdent(n.publication), " FOR TABLE ", QuoteIdent(n.schema), ".",
                      QuoteIdent(n.table), n.publish_updates ? " WITH (publish = 'insert, update');\n"
                                                             : " WITH (publish = 'insert');\n",
                      "  END IF;\n",
                      "END $outbox_relay$;");
}

std::string CreateSlotSql(const OutboxSqlNames& n, bool failover) {
  if (!failover) return Cat("SELECT pg_create_logical_replication_slot(", QuoteLiteral(n.slot), ", 'pgoutput');");
  // (slot_name, plugin, temporary, twophase, failover)
  return Cat("-- PostgreSQL 17+: a failover slot (source.failover), synchronized to standbys that set\n",
             "-- sync_replication_slots = on. An existing slot becomes one with the replication command\n",
             "--   ", AlterSlotFailoverCommand(n.slot), "\n",
             "-- (psql \"dbname=... replication=database\" -c '...'), which `outbox-relay init` runs.\n",
             "SELECT pg_create_logical_replication_slot(", QuoteLiteral(n.slot), ", 'pgoutput', false, false, true);");
}

std::string CreateRoleSql(const OutboxSqlNames& n) {
  std::string sql = Cat(
      "-- The relay's least-privilege role: LOGIN and REPLICATION, not a superuser. Set its password yourself:\n",
      "--   ALTER ROLE ", QuoteIdent(n.role), " PASSWORD '...';\n",
      "DO $outbox_relay$ BEGIN\n",
      "  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ", QuoteLiteral(n.role), ") THEN\n",
      "    CREATE ROLE ", QuoteIdent(n.role), " LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE;\n",
      "  END IF;\n",
      "END $outbox_relay$;\n");
  if (!n.database.empty()) {
    Append(&sql, "GRANT CONNECT ON DATABASE ", QuoteIdent(n.database), " TO ", QuoteIdent(n.role), ";\n");
  }
  Append(&sql, "GRANT USAGE ON SCHEMA ", QuoteIdent(n.schema), " TO ", QuoteIdent(n.role), ";\n",
                  "GRANT SELECT ON ", QuoteIdent(n.schema), ".", QuoteIdent(n.table), " TO ", QuoteIdent(n.role), ";");
  return sql;
}

}  // namespace outbox::pg
