// init, status and check.
#include "common/strings.h"
#include "app/commands.h"

#include "absl/strings/str_cat.h"
#include "app/relay.h"
#include "kafka/checkpoint.h"
#include "kafka/sink.h"
#include "nlohmann/json.hpp"
#include "pg/admin.h"
#include "pg/replication_connection.h"

namespace outbox::app {
namespace {

pg::OutboxSqlNames Names(const config::Config& config) {
  pg::OutboxSqlNames n;
  std::tie(n.schema, n.table) = config::SplitTableName(config.outbox.table);
  n.publication = config.source.publication;
  n.slot = config.source.slot;
  return n;
}

absl::Status WriteCheckpoint(const config::Config& config, const kafka::Checkpoint& c) {
  switch (config.source.checkpoint) {
    case config::CheckpointStore::kKafka:
      if (absl::Status st = kafka::EnsureCheckpointTopic(config.kafka, config.source.checkpoint_topic, 15000); !st.ok()) {
        return st;
      }
      return kafka::WriteKafkaCheckpoint(config.kafka, config.source.checkpoint_topic, c, 30000);
    case config::CheckpointStore::kFile:
      return kafka::WriteFileCheckpoint(config.source.checkpoint_file, c);
    case config::CheckpointStore::kNone:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<kafka::Checkpoint>> ReadCheckpoint(const config::Config& config) {
  switch (config.source.checkpoint) {
    case config::CheckpointStore::kKafka:
      return kafka::ReadKafkaCheckpoint(config.kafka, config.source.checkpoint_topic, config.source.slot, 15000);
    case config::CheckpointStore::kFile:
      return kafka::ReadFileCheckpoint(config.source.checkpoint_file);
    case config::CheckpointStore::kNone:
      return std::optional<kafka::Checkpoint>();
  }
  return std::optional<kafka::Checkpoint>();
}

}  // namespace

int Init(const config::Config& config, bool print, bool create_table, std::ostream& out, std::ostream& err) {
  const pg::OutboxSqlNames names = Names(config);
  if (print) {
    if (create_table) out << pg::CreateOutboxTableSql(names) << "\n\n";
    out << "-- The publication comes before the slot (PostgreSQL 15 cannot decode changes from before it).\n"
        << pg::CreatePublicationSql(names) << "\n\n"
        << pg::CreateRoleSql(names) << "\n\n"
        << "-- The slot (run as the relay's role, or any replication role):\n"
        << "SELECT pg_create_logical_replication_slot(" << pg::QuoteLiteral(names.slot) << ", 'pgoutput');\n"
        << "-- Then write the first checkpoint with `outbox-relay init` (it is idempotent), or start the relay\n"
        << "-- once with --accept-gap.\n";
    return kExitOk;
  }
  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay init");
  if (!sql.ok()) {
    err << "init: " << config::Redact(config, std::string(sql.status().message())) << "\n";
    return kExitFatal;
  }
  if (create_table) {
    if (auto r = (*sql)->Exec(pg::CreateOutboxTableSql(names)); !r.ok()) {
      err << "init: creating the outbox table: " << r.status().message() << "\n";
      return kExitFatal;
    }
    out << "outbox table " << names.schema << "." << names.table << " ready\n";
  }
  if (auto r = (*sql)->Exec(pg::CreatePublicationSql(names)); !r.ok()) {
    err << "init: creating the publication: " << r.status().message() << "\n";
    return kExitFatal;
  }
  out << "publication " << names.publication << " ready\n";

  auto repl = pg::ReplicationConnection::Connect(config.source.conninfo, "outbox-relay init");
  if (!repl.ok()) {
    err << "init: " << config::Redact(config, std::string(repl.status().message())) << "\n";
    return kExitFatal;
  }
  auto system = (*repl)->IdentifySystem();
  if (!system.ok()) {
    err << "init: " << system.status().message() << "\n";
    return kExitFatal;
  }
  auto slot = (*repl)->ReadSlot(config.source.slot);
  if (!slot.ok()) {
    err << "init: " << slot.status().message() << "\n";
    return kExitFatal;
  }
  auto existing = ReadCheckpoint(config);
  if (!existing.ok()) {
    err << "init: reading the checkpoint: " << existing.status().message() << "\n";
    return kExitFatal;
  }
  Lsn position;
  if (slot->has_value()) {
    position = (*slot)->confirmed_flush_lsn.value_or(Lsn(0));
    out << "slot " << config.source.slot << " exists at " << position.ToString() << "\n";
    if (existing->has_value() && (*existing)->system_id == system->system_id && (*existing)->lsn >= position) {
      out << "checkpoint " << (*existing)->lsn.ToString() << " present\n";
      return kExitOk;
    }
  } else {
    auto consistent = (*repl)->CreateSlot(config.source.slot);
    if (!consistent.ok()) {
      err << "init: " << consistent.status().message() << "\n";
      return kExitFatal;
    }
    position = *consistent;
    out << "slot " << config.source.slot << " created at " << position.ToString() << "\n";
  }
  kafka::Checkpoint c{system->system_id, system->timeline, config.source.slot, config.source.instance, position};
  if (absl::Status st = WriteCheckpoint(config, c); !st.ok()) {
    err << "init: writing the first checkpoint: " << st.message() << "\n";
    return kExitFatal;
  }
  if (config.source.checkpoint != config::CheckpointStore::kNone) {
    out << "checkpoint " << position.ToString() << " written\n";
  }
  return kExitOk;
}

int Status(const config::Config& config, bool json, std::ostream& out, std::ostream& err) {
  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay status");
  if (!sql.ok()) {
    err << "status: " << config::Redact(config, std::string(sql.status().message())) << "\n";
    return kExitFatal;
  }
  auto rows = (*sql)->Exec(Cat(
      "SELECT active, active_pid, confirmed_flush_lsn, restart_lsn, coalesce(wal_status, ''), "
      "pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, "
      "pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, pg_current_wal_lsn() "
      "FROM pg_replication_slots WHERE slot_name = ",
      pg::QuoteLiteral(config.source.slot)));
  if (!rows.ok()) {
    err << "status: " << rows.status().message() << "\n";
    return kExitFatal;
  }
  if (rows->empty()) {
    if (json) {
      out << nlohmann::json{{"slot", config.source.slot}, {"exists", false}}.dump() << "\n";
    } else {
      out << "slot " << config.source.slot << ": missing\n";
    }
    return kExitFatal;
  }
  const pg::Row& r = rows->front();
  const auto v = [&](size_t i) { return r[i].value_or(""); };
  const bool lost = v(4) == "lost";
  if (json) {
    const auto num = [&](size_t i) -> nlohmann::json {
      if (!r[i]) return nullptr;
      return std::stoll(*r[i]);
    };
    nlohmann::json j = {{"slot", config.source.slot},
                        {"exists", true},
                        {"active", v(0) == "t"},
                        {"active_pid", num(1)},
                        {"confirmed_flush_lsn", r[2] ? nlohmann::json(*r[2]) : nlohmann::json(nullptr)},
                        {"restart_lsn", r[3] ? nlohmann::json(*r[3]) : nlohmann::json(nullptr)},
                        {"wal_status", v(4)},
                        {"retained_wal_bytes", num(5)},
                        {"lag_bytes", num(6)},
                        {"server_wal_lsn", v(7)}};
    out << j.dump() << "\n";
  } else {
    out << "slot " << config.source.slot << "\n"
        << "  active:              " << (v(0) == "t" ? "yes" : "no") << (r[1] ? " (pid " + *r[1] + ")" : "") << "\n"
        << "  confirmed_flush_lsn: " << v(2) << "\n"
        << "  restart_lsn:         " << v(3) << "\n"
        << "  wal_status:          " << v(4) << "\n"
        << "  retained WAL bytes:  " << v(5) << "\n"
        << "  lag bytes:           " << v(6) << " (server at " << v(7) << ")\n";
  }
  return lost ? kExitFatal : kExitOk;
}

int Check(const config::Config& config, std::ostream& out, std::ostream& err) {
  int problems = 0;
  const auto problem = [&](const std::string& what) {
    ++problems;
    out << "problem: " << config::Redact(config, what) << "\n";
  };
  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay check");
  if (!sql.ok()) {
    problem(std::string(sql.status().message()));
  } else {
    auto wal = (*sql)->Exec("SHOW wal_level");
    if (!wal.ok()) problem(std::string(wal.status().message()));
    else if (wal->front()[0].value_or("") != "logical") {
      problem(Cat("wal_level is ", wal->front()[0].value_or(""), ", not logical (set wal_level=logical and restart)"));
    }
    auto role = (*sql)->Exec("SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user");
    if (!role.ok()) problem(std::string(role.status().message()));
    else if (role->empty() || role->front()[0].value_or("f") != "t") {
      problem("the role may not replicate (ALTER ROLE ... REPLICATION)");
    }
    const auto [schema, table] = config::SplitTableName(config.outbox.table);
    auto pub = (*sql)->Exec(Cat(
        "SELECT p.pubinsert, EXISTS (SELECT 1 FROM pg_publication_tables t WHERE t.pubname = p.pubname AND "
        "t.schemaname = ", pg::QuoteLiteral(schema), " AND t.tablename = ", pg::QuoteLiteral(table),
        ") FROM pg_publication p WHERE p.pubname = ", pg::QuoteLiteral(config.source.publication)));
    if (!pub.ok()) problem(std::string(pub.status().message()));
    else if (pub->empty()) problem(Cat("publication \"", config.source.publication, "\" does not exist"));
    else if (pub->front()[1].value_or("f") != "t") {
      problem(Cat("publication \"", config.source.publication, "\" does not cover ", schema, ".", table));
    } else if (pub->front()[0].value_or("f") != "t") {
      problem(Cat("publication \"", config.source.publication, "\" does not publish inserts"));
    }
  }
  auto conf = kafka::KafkaSink::Create(config.kafka, nullptr);
  if (!conf.ok()) {
    problem(std::string(conf.status().message()));
  } else if (absl::Status st = (*conf)->CheckReachable(5000); !st.ok()) {
    problem(Cat("the broker does not answer: ", st.message()));
  }
  if (problems == 0) {
    out << "ok: configuration valid, server and broker reachable\n";
    return kExitOk;
  }
  err << problems << " problem(s) found\n";
  return kExitFatal;
}

}  // namespace outbox::app
