// init, status and check (SPEC.md §2): one-shot commands that talk to the server and the broker, print to `out`
// and return the exit code. Every text that may carry a secret (server and broker errors, the config) goes
// through config::Redact before it is printed.
#include "common/strings.h"
#include "app/commands.h"


#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "app/relay.h"
#include "app/sinks.h"
#include "kafka/checkpoint.h"
#include "kafka/probe.h"
#include "kafka/producer_config.h"
#include "nlohmann/json.hpp"
#include "outbox/connect_header.h"
#include "pg/admin.h"
#include "pg/replication_connection.h"
#include "pg/slot_check.h"

namespace outbox::app {
namespace {

constexpr int kBrokerProbeTimeoutMs = 5000;

pg::OutboxSqlNames Names(const config::PipelineConfig& config) {
  pg::OutboxSqlNames n;
  std::tie(n.schema, n.table) = config::SplitTableName(config.outbox.table);
  n.publication = config.source.publication;
  n.slot = config.source.slot;
  n.publish_updates = config.outbox.on_update == config::OnUpdate::kError;
  return n;
}

// Prints "<command>: <message>" (redacted) to `err`.
void PrintError(const config::PipelineConfig& config, std::ostream& err, std::string_view command, std::string_view what,
                absl::string_view message) {
  err << command << ": " << config::Redact(config, Cat(what, what.empty() ? "" : ": ", message)) << "\n";
}

absl::Status WriteCheckpoint(const config::PipelineConfig& config, const kafka::Checkpoint& c) {
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

// This cluster's checkpoint of the slot (another cluster's, in a shared topic, is not this slot's).
absl::StatusOr<std::optional<kafka::Checkpoint>> ReadCheckpoint(const config::PipelineConfig& config,
                                                                const std::string& system_id) {
  auto found = MakeCheckpointStore(config)->Read(system_id, config.source.slot);
  if (!found.ok()) return found.status();
  return found->own;
}

std::optional<int64_t> ToInt(const std::optional<std::string>& text) {
  int64_t v = 0;
  if (!text || !absl::SimpleAtoi(*text, &v)) return std::nullopt;
  return v;
}

// The effective configuration, one "key: value" line each for the keys that have a value, secrets masked.
std::string DumpConfig(const config::Config& process, const config::PipelineConfig& c) {
  std::string out;
  for (const auto& [key, value] : config::EffectiveValues(process, c)) {
    if (!value.empty()) Append(&out, "  ", key, ": ", config::Redact(c, value), "\n");
  }
  return out;
}

// Collects check results: "ok: ..." and "problem: ..." lines, redacted.
class Report {
 public:
  Report(const config::PipelineConfig& config, std::ostream& out) : config_(config), out_(out) {}
  void Ok(std::string_view what) { out_ << "ok: " << config::Redact(config_, std::string(what)) << "\n"; }
  void Info(std::string_view what) { out_ << "note: " << config::Redact(config_, std::string(what)) << "\n"; }
  void Warn(std::string_view what) { out_ << "warning: " << config::Redact(config_, std::string(what)) << "\n"; }
  void Problem(std::string_view what) {
    ++problems_;
    out_ << "problem: " << config::Redact(config_, std::string(what)) << "\n";
  }
  void Problem(std::string_view what, const absl::Status& st) { Problem(Cat(what, ": ", st.message())); }
  int problems() const { return problems_; }

 private:
  const config::PipelineConfig& config_;
  std::ostream& out_;
  int problems_ = 0;
};

// With source.failover: the server's version, and whether the primary holds logical walsenders back for a
// standby (synchronized_standby_slots).
void CheckFailoverSetup(pg::SqlConnection& sql, Report& report) {
  if (absl::Status st = pg::CheckFailoverSupported(sql.server_version()); !st.ok()) {
    report.Problem(ToStd(st.message()));
    return;
  }
  report.Ok(Cat("failover slots are supported (PostgreSQL ", pg::ServerVersionText(sql.server_version()), ")"));
  auto standby_slots = sql.Exec("SELECT pg_is_in_recovery(), current_setting('synchronized_standby_slots')");
  if (!standby_slots.ok()) {
    report.Problem("reading synchronized_standby_slots", standby_slots.status());
  } else if (standby_slots->front()[0].value_or("f") != "t" && standby_slots->front()[1].value_or("").empty()) {
    report.Info("source.failover is on, but synchronized_standby_slots is empty on this primary: the relay may "
                "publish events of transactions a promoted standby never received (set it to the standby's "
                "physical slot)");
  }
}

// The PostgreSQL side of `check`: wal_level, the role, a replication connection, the table and its columns, the
// publication, and the slot (over `sql`, a plain connection, but for the replication connection).
// What `check` learned of the server for the slot check that follows the broker's.
struct ServerFacts {
  std::optional<pg::SystemInfo> system;  // IDENTIFY_SYSTEM, when the replication connection works
  bool slot_read = false;                // pg_replication_slots was read (`slot` is nullopt when it is missing)
  std::optional<pg::SlotInfo> slot;
};

void CheckServer(const config::PipelineConfig& config, pg::SqlConnection& sql, Report& report, ServerFacts* facts) {
  const auto value = [&](const std::string& query) -> absl::StatusOr<std::optional<std::string>> {
    auto rows = sql.Exec(query);
    if (!rows.ok()) return rows.status();
    if (rows->empty() || rows->front().empty()) return std::optional<std::string>();
    return rows->front().front();
  };

  if (auto wal = value("SHOW wal_level"); !wal.ok()) {
    report.Problem("reading wal_level", wal.status());
  } else if (wal->value_or("") != "logical") {
    report.Problem(Cat("wal_level is ", wal->value_or("?"),
                       ", not logical: set wal_level = logical in postgresql.conf and restart the server"));
  } else {
    report.Ok("wal_level is logical");
  }

  auto role = sql.Exec("SELECT current_user, rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user");
  if (!role.ok()) {
    report.Problem("reading the role", role.status());
  } else if (role->empty()) {
    report.Problem("the connected role is not in pg_roles");
  } else {
    const std::string user = role->front()[0].value_or("?");
    if (role->front()[1].value_or("f") != "t" && role->front()[2].value_or("f") != "t") {
      report.Problem(Cat("role \"", user, "\" may not replicate: ALTER ROLE \"", user,
                         "\" REPLICATION (or use the role of `outbox-relay init --print`)"));
    } else {
      report.Ok(Cat("role \"", user, "\" may replicate"));
    }
  }

  // The replication protocol itself (pg_hba.conf must allow a replication connection for this role).
  if (auto repl = pg::ReplicationConnection::Connect(config.source.conninfo, "outbox-relay check"); !repl.ok()) {
    report.Problem("replication connection", repl.status());
  } else if (auto system = (*repl)->IdentifySystem(); !system.ok()) {
    report.Problem("replication connection", system.status());
  } else {
    report.Ok(Cat("replication connection (system identifier ", system->system_id, ", timeline ", system->timeline,
                  ")"));
    facts->system = *system;
  }

  const auto [schema, table] = config::SplitTableName(config.outbox.table);
  const std::string qualified = Cat(schema, ".", table);
  std::vector<std::string> wanted = {config.outbox.fields.id, config.outbox.fields.key, config.outbox.fields.payload,
                                     config.outbox.route_by};
  if (config.outbox.fields.type != config.outbox.route_by) wanted.push_back(config.outbox.fields.type);
  if (config.outbox.fields.timestamp) wanted.push_back(*config.outbox.fields.timestamp);
  for (const config::AdditionalField& f : config.outbox.fields.additional) wanted.push_back(f.column);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const int problems_before_table = report.problems();
  auto columns = sql.Exec(pg::ColumnCatalogSql(schema, table));
  if (!columns.ok()) {
    report.Problem(Cat("reading the columns of ", qualified), columns.status());
  } else if (columns->empty()) {
    report.Problem(Cat("table ", qualified, " does not exist (outbox.table; `outbox-relay init --create-table` "
                       "creates the default layout)"));
  } else {
    std::vector<std::string> missing;
    for (const std::string& column : wanted) {
      const bool found = std::any_of(columns->begin(), columns->end(),
                                     [&](const pg::Row& r) { return r[0].value_or("") == column; });
      if (!found) missing.push_back(column);
    }
    if (missing.empty()) {
      report.Ok(Cat("table ", qualified, " has the columns ", absl::StrJoin(wanted, ", ")));
    } else {
      report.Problem(Cat("table ", qualified, " has no column ", absl::StrJoin(missing, ", "),
                         " (see outbox.fields and outbox.route.by)"));
    }
    // json_schema (JsonConverter with schemas): Debezium's schema of a column with a default carries it, which the
    // relay writes with outbox.null_as_column_default for the types it works the default out for.
    const std::vector<pg::ColumnCatalog> catalog = pg::ParseColumnCatalog(*columns);
    outbox::OutboxMapper mapper(config.outbox);  // the defaults as the connector's modes change them; the binding
    for (const auto& written : {std::tuple{"outbox.key_converter", config.outbox.fields.key, true},
                                std::tuple{"outbox.value_converter", config.outbox.fields.payload, false}}) {
      const auto& [key, column, is_key] = written;
      const auto c = std::find_if(catalog.begin(), catalog.end(),
                                  [&](const pg::ColumnCatalog& entry) { return entry.name == column; });
      if (c == catalog.end() || !outbox::OutboxMapper::DebeziumReadsDefault(*c)) continue;
      const config::Converter converter =
          is_key ? mapper.KeyConverter(c->type_oid) : mapper.ValueConverter(c->type_oid);
      if (converter != config::Converter::kJsonSchema) continue;
      const outbox::ConnectDefault dflt = mapper.DefaultUnderModes(*c, c->type_oid, c->type_modifier);
      if (!config.outbox.null_as_column_default) {
        report.Problem(Cat(key, ": json_schema: column \"", column, "\" of ", qualified,
                           " has a default, which Debezium's schema carries: set outbox.null_as_column_default: true "
                           "(as Debezium files do), drop the default, or use json"));
      } else if (dflt.kind == outbox::ConnectDefault::Kind::kNotReproduced) {
        report.Problem(Cat(key, ": json_schema: column \"", column, "\" of ", qualified,
                           " has a default the relay does not work out as Debezium does for its type (drop the "
                           "default, or use json)"));
      }
    }
    // The record's columns bound as `run` binds them at the table's first INSERT, on the layout pgoutput publishes
    // (every column but the generated ones), so that a placement or a column type the relay refuses is a problem
    // here rather than a fatal error at the first event. Only when nothing above found one: it would repeat it.
    if (missing.empty() && report.problems() == problems_before_table) {
      if (mapper.NeedsCatalog()) mapper.SetCatalog(catalog);
      pg::Relation relation;
      relation.nspname = schema;
      relation.relname = table;
      for (const pg::ColumnCatalog& c : catalog) {
        if (!c.generated) relation.columns.push_back({0, c.name, c.type_oid, c.type_modifier});
      }
      if (absl::Status bound = mapper.CheckBinding(relation); !bound.ok()) {
        report.Problem(Cat("the relay cannot write the records of ", qualified, " as configured: ", bound.message()));
      } else {
        report.Ok(Cat("the relay writes the records of ", qualified,
                      " as configured (each column's type and placement)"));
      }
    }
  }

  const std::string pub = config.source.publication;
  auto publication = sql.Exec(pg::PublicationCoverageSql(pub, schema, table));
  if (!publication.ok()) {
    report.Problem(Cat("reading publication \"", pub, "\""), publication.status());
  } else if (absl::Status covered = pg::PublicationCoverage(*publication, pub, qualified, false); !covered.ok()) {
    report.Problem(ToStd(covered.message()));
  } else {
    report.Ok(Cat("publication \"", pub, "\" covers ", qualified, " and publishes inserts"));
    if (config.outbox.on_update == config::OnUpdate::kError && !pg::PublicationPublishesUpdates(*publication)) {
      report.Warn(Cat("publication \"", pub, "\" does not publish updates, so outbox.on_update: error never sees an "
                      "UPDATE of ", qualified, " (ALTER PUBLICATION ", pg::QuoteIdent(pub),
                      " SET (publish = 'insert, update'), or recreate it with `outbox-relay init`)"));
    }
    if (sql.server_version() >= 150000) {
      // A column list (PostgreSQL 15+) that leaves out a configured column makes the relay halt.
      auto listed = value(Cat("SELECT array_to_string(attnames, ',') FROM pg_publication_tables WHERE pubname = ",
                              pg::QuoteLiteral(pub), " AND schemaname = ", pg::QuoteLiteral(schema),
                              " AND tablename = ", pg::QuoteLiteral(table)));
      if (listed.ok() && listed->has_value()) {
        const std::vector<std::string> published = absl::StrSplit(**listed, ',');
        std::vector<std::string> left_out;
        for (const std::string& column : wanted) {
          if (std::find(published.begin(), published.end(), column) == published.end()) left_out.push_back(column);
        }
        if (!left_out.empty()) {
          report.Problem(Cat("publication \"", pub, "\" leaves out the column(s) ", absl::StrJoin(left_out, ", "),
                             " of ", qualified, " (a column list)"));
        }
      }
    }
  }

  const bool has_failover = sql.server_version() >= pg::kFailoverMinServerVersion;
  if (config.source.failover) CheckFailoverSetup(sql, report);

  const std::string& slot = config.source.slot;
  auto slots = sql.Exec(Cat("SELECT plugin, database, current_database(), active, active_pid, "
                            "coalesce(wal_status, ''), confirmed_flush_lsn::text, restart_lsn::text",
                            has_failover ? ", failover, coalesce(invalidation_reason, '')" : "",
                            " FROM pg_replication_slots WHERE slot_name = ", pg::QuoteLiteral(slot)));
  if (!slots.ok()) {
    report.Problem(Cat("reading slot \"", slot, "\""), slots.status());
    return;
  }
  facts->slot_read = true;
  if (slots->empty()) return;
  const pg::Row& row = slots->front();
  pg::SlotInfo info;
  info.name = slot;
  info.plugin = row[0].value_or("");
  info.database = row[1].value_or("");
  info.active = row[3].value_or("f") == "t";
  info.active_pid = ToInt(row[4]);
  info.wal_status = row[5].value_or("");
  if (row[6]) info.confirmed_flush_lsn = Lsn::Parse(*row[6]).value_or(Lsn(0));
  if (row[7]) info.restart_lsn = Lsn::Parse(*row[7]).value_or(Lsn(0));
  if (has_failover) {  // 17+, as invalidation_reason
    info.failover = row[8].value_or("f") == "t";
    info.invalidation_reason = row[9].value_or("");
  }
  if (info.database != row[2].value_or("")) {
    report.Problem(Cat("slot \"", slot, "\" belongs to database \"", info.database, "\", but source.conninfo "
                       "connects to \"", row[2].value_or(""), "\""));
    return;
  }
  facts->slot = std::move(info);
}

// The NATS server answers and the stream exists (by name), binding the subjects the relay publishes to.
void CheckNats(const config::PipelineConfig& config, Report& report) {
  auto facts = nats::ProbeStream(NatsOptions(config));
  if (!facts.ok()) {
    report.Problem(ToStd(facts.status().message()));
    return;
  }
  report.Ok(Cat("the NATS server answers (", config.nats.url, "); stream ", config.nats.stream, " binds ",
                absl::StrJoin(facts->subjects, ", "), " (max_payload ", facts->max_payload, ", duplicate_window ",
                facts->duplicate_window_ms, " ms)"));
  bool dead_letter_bound = false;
  for (const std::string& pattern : facts->subjects) {
    dead_letter_bound = dead_letter_bound || nats::SubjectMatches(pattern, config.delivery.dead_letter_topic);
  }
  if (config.delivery.on_error == config::OnError::kDeadLetter && !dead_letter_bound) {
    report.Problem(Cat("delivery.dead_letter_topic: subject ", config.delivery.dead_letter_topic,
                       " is not bound by stream ", config.nats.stream));
  }
}

// The broker answers and the exchanges exist: rabbitmq.exchange (and the dead letters' when delivery.on_error is
// dead_letter) when it is no template; a template's exchanges are checked by `run` before their first publish.
void CheckRabbitMq(const config::PipelineConfig& config, Report& report) {
  const config::RabbitMqConfig& q = config.rabbitmq;
  std::vector<std::string> exchanges;
  const auto add = [&](const std::string& name) {
    if (name.find("${") == std::string::npos) {
      exchanges.push_back(name);
    } else {
      report.Info(Cat("exchange template ", name, " is checked per exchange when the relay first publishes to it"));
    }
  };
  add(q.exchange);
  if (config.delivery.on_error == config::OnError::kDeadLetter && !q.dead_letter_exchange.empty()) {
    add(q.dead_letter_exchange);
  }
  if (absl::Status st = rabbitmq::ProbeExchanges(RabbitMqOptions(config), exchanges); !st.ok()) {
    report.Problem(ToStd(st.message()));
    return;
  }
  report.Ok(Cat("the RabbitMQ broker answers (", q.url, ")",
                exchanges.empty() ? "" : Cat("; exchange ", absl::StrJoin(exchanges, ", "), " exists")));
}

// The HTTP endpoint answers a HEAD (http_sink.check_url, or the URL's origin), over TLS with the configured CA.
void CheckHttp(const config::PipelineConfig& config, Report& report) {
  const http::Options options = HttpOptions(config);
  const std::string url = options.check_url.empty() ? http::Origin(options.url) : options.check_url;
  long status = 0;
  if (absl::Status st = http::Probe(options, url, kBrokerProbeTimeoutMs, &status); !st.ok()) {
    report.Problem(Cat("the HTTP endpoint does not answer: ", st.message()));
    return;
  }
  report.Ok(Cat("the HTTP endpoint answers (HEAD ", url, ": HTTP ", status, ")"));
}

// The slot and the checkpoint, decided by the same check `run` takes before streaming (pg::CheckSlot). The gap check
// needs the server's identity (the replication connection) and the store (for Kafka, the broker answering).
void CheckSlotAndCheckpoint(const config::PipelineConfig& config, const ServerFacts& facts, bool broker_ok, Report& report) {
  if (!facts.slot_read) return;
  const std::string& name = config.source.slot;
  pg::SlotCheckInput in;
  in.slot_name = name;
  in.slot = facts.slot;
  in.create_slot = config.source.create_slot;
  in.failover = config.source.failover;
  std::unique_ptr<sinks::CheckpointStore> store = MakeCheckpointStore(config);
  in.store = store->Describe();
  in.store_enabled = store->enabled() && facts.system.has_value() &&
                     (broker_ok || config.source.checkpoint != config::CheckpointStore::kKafka);
  if (in.store_enabled) {
    in.system = *facts.system;
    auto checkpoints = store->Read(facts.system->system_id, name);
    if (!checkpoints.ok()) {
      report.Problem(Cat("reading the checkpoint (", in.store, ")"), checkpoints.status());
      return;
    }
    in.checkpoints = *std::move(checkpoints);
  } else if (store->enabled()) {
    report.Info(Cat("the checkpoint in ", in.store, " was not read (", facts.system ? "the broker" : "the replication "
                    "connection", " failed): the slot is not checked for gaps"));
  }
  if (facts.system) in.system.xlogpos = facts.system->xlogpos;
  auto d = pg::CheckSlot(in);
  if (!d.ok()) {
    report.Problem(ToStd(d.status().message()));
    return;
  }
  if (d->create_slot) {
    report.Info(Cat("slot \"", name, "\" does not exist yet; `run` creates it (source.create_slot)"));
    return;
  }
  const pg::SlotInfo& s = *facts.slot;
  report.Ok(Cat("slot \"", name, "\" exists (pgoutput, wal_status ", s.wal_status, ", confirmed ",
                d->slot_confirmed.ToString(), ")",
                d->checkpointed && in.store_enabled ? Cat("; its checkpoint ", d->checkpointed->ToString(), " in ",
                                                          in.store, " agrees")
                                                    : ""));
  for (const std::string& w : d->warnings) report.Info(w);
  if (absl::Status free = pg::CheckSlotFree(name, s); !free.ok()) {
    report.Info(Cat(free.message(), ": another relay would wait as a standby"));
  }
  if (d->make_failover && s.failover.has_value()) {
    report.Info(Cat("slot \"", name, "\" is not a failover slot yet: `outbox-relay init` (or `run`) makes it one "
                    "(source.failover)"));
  }
}

}  // namespace

int Init(const config::PipelineConfig& config, bool print, bool create_table, std::ostream& out, std::ostream& err) {
  const pg::OutboxSqlNames names = Names(config);
  if (print) {
    if (create_table) out << pg::CreateOutboxTableSql(names) << "\n\n";
    out << "-- The publication comes before the slot (PostgreSQL 15 cannot decode changes from before it).\n"
        << pg::CreatePublicationSql(names) << "\n\n"
        << pg::CreateRoleSql(names) << "\n\n"
        << "-- The slot (run as the relay's role, or any replication role):\n"
        << pg::CreateSlotSql(names, config.source.failover) << "\n"
        << "-- Then write the first checkpoint with `outbox-relay init` (it is idempotent), or start the relay\n"
        << "-- once with --accept-gap.\n";
    return kExitOk;
  }
  const auto fail = [&](std::string_view what, const absl::Status& st) {
    PrintError(config, err, "init", what, st.message());
    return kExitFatal;
  };
  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay init");
  if (!sql.ok()) return fail("", sql.status());
  if (create_table) {
    if (auto r = (*sql)->Exec(pg::CreateOutboxTableSql(names)); !r.ok()) return fail("creating the outbox table", r.status());
    out << "outbox table " << names.schema << "." << names.table << " ready\n";
  }
  if (auto r = (*sql)->Exec(pg::CreatePublicationSql(names)); !r.ok()) return fail("creating the publication", r.status());
  out << "publication " << names.publication << " ready\n";

  auto repl = pg::ReplicationConnection::Connect(config.source.conninfo, "outbox-relay init");
  if (!repl.ok()) return fail("", repl.status());
  if (config.source.failover) {
    if (absl::Status st = pg::CheckFailoverSupported((*repl)->server_version()); !st.ok()) return fail("", st);
  }
  auto system = (*repl)->IdentifySystem();
  if (!system.ok()) return fail("", system.status());
  auto slot = (*repl)->ReadSlot(config.source.slot);
  if (!slot.ok()) return fail("", slot.status());
  auto existing = ReadCheckpoint(config, system->system_id);
  if (!existing.ok()) return fail("reading the checkpoint", existing.status());
  Lsn position;
  if (slot->has_value()) {
    position = (*slot)->confirmed_flush_lsn.value_or(Lsn(0));
    out << "slot " << config.source.slot << " exists at " << position.ToString() << "\n";
    if (config.source.failover && !(*slot)->failover.value_or(false)) {
      if (absl::Status st = (*repl)->SetSlotFailover(config.source.slot); !st.ok()) return fail("", st);
      out << "slot " << config.source.slot << " is now a failover slot\n";
    }
    if (existing->has_value() && (*existing)->system_id == system->system_id && (*existing)->lsn >= position) {
      out << "checkpoint " << (*existing)->lsn.ToString() << " present\n";
      return kExitOk;
    }
  } else {
    auto consistent = (*repl)->CreateSlot(config.source.slot, config.source.failover);
    if (!consistent.ok()) return fail("", consistent.status());
    position = *consistent;
    out << (config.source.failover ? "failover slot " : "slot ") << config.source.slot << " created at "
        << position.ToString() << "\n";
  }
  kafka::Checkpoint c{system->system_id, system->timeline, config.source.slot, config.source.instance, position};
  if (absl::Status st = WriteCheckpoint(config, c); !st.ok()) return fail("writing the first checkpoint", st);
  if (config.source.checkpoint != config::CheckpointStore::kNone) {
    out << "checkpoint " << position.ToString() << " written\n";
  }
  return kExitOk;
}

int Status(const config::PipelineConfig& config, bool json, std::ostream& out, std::ostream& err) {
  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay status");
  if (!sql.ok()) {
    PrintError(config, err, "status", "", sql.status().message());
    return kExitFatal;
  }
  const std::string& slot = config.source.slot;
  const int version = (*sql)->server_version();
  const bool has_failover = version >= pg::kFailoverMinServerVersion;
  // The server's position is read once, so that both differences are to the same point (on a standby, where
  // PostgreSQL 16+ can decode, the replayed position).
  auto rows = (*sql)->Exec(Cat(
      "WITH server AS (SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
      "ELSE pg_current_wal_lsn() END AS lsn) "
      "SELECT active, active_pid, confirmed_flush_lsn, restart_lsn, coalesce(wal_status, ''), "
      "pg_wal_lsn_diff(server.lsn, restart_lsn)::bigint, pg_wal_lsn_diff(server.lsn, confirmed_flush_lsn)::bigint, "
      "server.lsn, plugin, database, safe_wal_size",
      has_failover ? ", failover, synced, coalesce(invalidation_reason, '')" : "",  // 17+ all three
      " FROM pg_replication_slots, server WHERE slot_name = ", pg::QuoteLiteral(slot)));
  if (!rows.ok()) {
    PrintError(config, err, "status", "reading the slot", rows.status().message());
    return kExitFatal;
  }
  if (rows->empty()) {
    if (json) {
      out << nlohmann::json{{"slot", slot}, {"exists", false}}.dump() << "\n";
    } else {
      out << "slot " << slot << ": missing\n";
    }
    err << "status: replication slot \"" << slot << "\" does not exist (create it with `outbox-relay init`)\n";
    return kExitFatal;
  }
  const pg::Row& r = rows->front();
  const auto text = [&](size_t i) { return r[i].value_or(""); };
  pg::SlotInfo invalidation;
  invalidation.wal_status = text(4);
  if (has_failover) invalidation.invalidation_reason = text(13);
  const bool lost = pg::SlotInvalidated(invalidation);
  if (json) {
    const auto number = [&](size_t i) -> nlohmann::json {
      if (auto v = ToInt(r[i])) return *v;
      return nullptr;
    };
    const auto string_or_null = [&](size_t i) -> nlohmann::json {
      if (r[i]) return *r[i];
      return nullptr;
    };
    const nlohmann::json j = {{"slot", slot},
                              {"exists", true},
                              {"plugin", text(8)},
                              {"database", text(9)},
                              {"active", text(0) == "t"},
                              {"active_pid", number(1)},
                              {"confirmed_flush_lsn", string_or_null(2)},
                              {"restart_lsn", string_or_null(3)},
                              {"wal_status", text(4)},
                              {"retained_wal_bytes", number(5)},
                              {"lag_bytes", number(6)},
                              {"server_wal_lsn", text(7)},
                              {"safe_wal_size", number(10)},
                              // PostgreSQL 17+; null before
                              {"failover", has_failover ? nlohmann::json(text(11) == "t") : nullptr},
                              {"synced", has_failover ? nlohmann::json(text(12) == "t") : nullptr},
                              {"invalidation_reason", has_failover && !text(13).empty() ? nlohmann::json(text(13))
                                                                                         : nullptr}};
    out << j.dump() << "\n";
  } else {
    const auto or_none = [&](size_t i) { return r[i] ? *r[i] : std::string("-"); };
    out << "slot " << slot << " (" << text(8) << ", database " << text(9) << ")\n"
        << "  active:              " << (text(0) == "t" ? "yes" : "no") << (r[1] ? " (pid " + *r[1] + ")" : "") << "\n"
        << "  confirmed_flush_lsn: " << or_none(2) << "\n"
        << "  restart_lsn:         " << or_none(3) << "\n"
        << "  wal_status:          " << or_none(4) << "\n"
        << "  retained WAL bytes:  " << or_none(5) << "\n"
        << "  lag bytes:           " << or_none(6) << " (server WAL at " << text(7) << ")\n";
    if (r[10]) out << "  safe_wal_size:       " << *r[10] << "\n";
    if (has_failover) {
      out << "  failover:            " << (text(11) == "t" ? "yes" : "no") << "\n"
          << "  synced:              " << (text(12) == "t" ? "yes (synchronized from a primary)" : "no") << "\n";
      if (!text(13).empty()) out << "  invalidation_reason: " << text(13) << "\n";
    } else {
      out << "  failover:            not available (PostgreSQL " << pg::ServerVersionText(version)
          << "; failover slots need 17)\n";
    }
  }
  if (lost) {
    err << "status: replication slot \"" << slot << "\" was invalidated (" << pg::InvalidationCause(invalidation)
        << "): drop and recreate it, then backfill\n";
    return kExitFatal;
  }
  return kExitOk;
}

int Check(const config::Config& process, const config::PipelineConfig& config, std::ostream& out, std::ostream&) {
  out << "config: valid\n" << DumpConfig(process, config);
  Report report(config, out);
  ServerFacts facts;

  auto sql = pg::SqlConnection::Connect(config.source.conninfo, "outbox-relay check");
  if (!sql.ok()) {
    report.Problem("PostgreSQL", sql.status());
  } else {
    report.Ok(Cat("connected to PostgreSQL ", (*sql)->server_version() / 10000, ".", (*sql)->server_version() % 10000));
    CheckServer(config, **sql, report, &facts);
  }

  bool broker_ok = false;
  if (config.sink == config::SinkType::kNats) {
    CheckNats(config, report);
  } else if (config.sink == config::SinkType::kRabbitMq) {
    CheckRabbitMq(config, report);
  } else if (config.sink == config::SinkType::kHttp) {
    CheckHttp(config, report);
  } else if (auto producer = ProducerConfigOf(config);
             !producer.ok()) {
    report.Problem(ToStd(producer.status().message()));
  } else if (auto brokers = kafka::ProbeBroker(*producer, kBrokerProbeTimeoutMs); !brokers.ok()) {
    const auto servers = config.kafka.find("bootstrap.servers");
    report.Problem(Cat("the broker does not answer (bootstrap.servers ",
                       servers != config.kafka.end() ? servers->second : "unset", "): ", brokers.status().message()));
  } else {
    report.Ok(Cat("the broker answers (", *brokers, " broker(s) in the cluster)"));
    broker_ok = true;
  }
  CheckSlotAndCheckpoint(config, facts, broker_ok, report);

  if (report.problems() == 0) {
    out << "ok: no problem found\n";
    return kExitOk;
  }
  out << report.problems() << " problem(s) found\n";
  return kExitFatal;
}

int CheckOffline(const config::Config& process, const config::PipelineConfig& config,
                 const std::vector<std::string>& unresolved, std::ostream& out) {
  out << "config: valid\n" << DumpConfig(process, config);
  Report report(config, out);
  // The producer settings are validated by librdkafka itself, which needs no broker for it.
  if (config.sink == config::SinkType::kKafka) {
    if (auto producer = ProducerConfigOf(config);
        !producer.ok()) {
      report.Problem(ToStd(producer.status().message()));
    } else {
      report.Ok("the producer settings are accepted");
    }
  }
  report.Info("offline: PostgreSQL and the broker were not contacted");
  if (!unresolved.empty()) {
    report.Info(Cat("offline: not resolvable here, checked with a stand-in value: ", absl::StrJoin(unresolved, ", ")));
  }
  if (report.problems() == 0) {
    out << "ok: no problem found\n";
    return kExitOk;
  }
  out << report.problems() << " problem(s) found\n";
  return kExitUsage;
}

}  // namespace outbox::app
