// outbox-example-consumer: an idempotent consumer of the relay's records, the consumer half of the Transactional
// Outbox. The relay delivers at least once (SPEC.md §5): after a crash it may send a transaction's records again,
// and this consumer may itself crash between its database commit and its offset commit. Exactly-once *effects*
// come from an inbox table in the consumer's own database, updated in the same transaction as the business change:
//
//   for each record (consumer group, enable.auto.commit=false):
//     BEGIN
//       INSERT INTO processed_events (event_id) VALUES (<id header>) ON CONFLICT DO NOTHING
//       if that inserted a row: apply the business change (here: add the payload's amount to account_balance,
//                               and keep a row in applied_events)
//     COMMIT
//     commit the record's offset to Kafka, synchronously
//
// A crash before COMMIT applies nothing; a crash between COMMIT and the offset commit redelivers a record whose
// id is already in processed_events, so it is skipped. Records of one key arrive in order (one partition), and a
// redelivered suffix only repeats what was already applied.
//
//   outbox-example-consumer --bootstrap HOST:PORT --group G --topic T [--topic T2...] --conninfo "dbname=app"
//                           [--create-tables] [--instance-id ID] [--session-timeout-ms MS]
//
// Payloads are JSON objects {"account": "...", "amount": <integer>}; PostgreSQL reads them (->>), so the example
// needs no JSON library. SIGTERM/SIGINT stop it after the record in hand. One transaction and one synchronous
// offset commit per record keep it obvious (a few hundred records a second); a faster consumer applies a polled
// batch in one transaction, one processed_events row per record, and then commits the batch's offsets.
#include <librdkafka/rdkafka.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

// The inbox and this example's business tables.
constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS processed_events (
  event_id     text        PRIMARY KEY,          -- the record's `id` header (the outbox row's id)
  processed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS account_balance (
  account text   PRIMARY KEY,
  total   bigint NOT NULL
);
-- One row per applied event, deliberately without a unique constraint: an event applied twice would show here.
CREATE TABLE IF NOT EXISTS applied_events (
  seq             bigserial   PRIMARY KEY,
  event_id        text        NOT NULL,
  account         text,
  amount          bigint,
  kafka_topic     text        NOT NULL,
  kafka_partition int         NOT NULL,
  kafka_offset    bigint      NOT NULL,
  applied_at      timestamptz NOT NULL DEFAULT now()
);
)sql";

void Log(const std::string& line) {
  std::fprintf(stderr, "outbox-example-consumer: %s\n", line.c_str());
  std::fflush(stderr);
}

// One database session; reconnects after a failure.
class Database {
 public:
  explicit Database(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  ~Database() {
    if (conn_ != nullptr) PQfinish(conn_);
  }

  // Connects if needed. False (and logs) when it cannot.
  bool Ready() {
    if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) return true;
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = PQconnectdb(conninfo_.c_str());
    if (PQstatus(conn_) == CONNECTION_OK) return true;
    Log("could not connect to the database: " + std::string(PQerrorMessage(conn_)));
    return false;
  }

  // Runs one statement; returns its command tag's row count ("INSERT 0 1" -> 1), or nullopt after logging an error.
  std::optional<long> Exec(const char* sql, const std::vector<std::optional<std::string>>& params = {}) {
    std::vector<const char*> values;
    std::vector<int> lengths;
    for (const std::optional<std::string>& p : params) {
      values.push_back(p ? p->data() : nullptr);
      lengths.push_back(p ? static_cast<int>(p->size()) : 0);
    }
    PGresult* res = PQexecParams(conn_, sql, static_cast<int>(params.size()), nullptr, values.data(), lengths.data(),
                                 nullptr, 0);
    const ExecStatusType status = PQresultStatus(res);
    std::optional<long> rows;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      const char* tuples = PQcmdTuples(res);
      rows = tuples[0] != '\0' ? std::strtol(tuples, nullptr, 10) : 0;
    } else {
      Log("statement failed: " + std::string(PQresultErrorMessage(res)));
    }
    PQclear(res);
    return rows;
  }

  bool Script(const char* sql) {
    PGresult* res = PQexec(conn_, sql);
    const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok) Log("could not create the tables: " + std::string(PQresultErrorMessage(res)));
    PQclear(res);
    return ok;
  }

 private:
  std::string conninfo_;
  PGconn* conn_ = nullptr;
};

std::optional<std::string> Header(const rd_kafka_message_t* msg, const char* name) {
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_last(headers, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR || value == nullptr) {
    return std::nullopt;
  }
  return std::string(static_cast<const char*>(value), size);
}

enum class Outcome { kApplied, kDuplicate, kFailed };

// The record's effects, at most once, in one transaction.
Outcome Apply(Database& db, const rd_kafka_message_t* msg, const std::string& event_id) {
  if (!db.Ready()) return Outcome::kFailed;
  const std::optional<std::string> payload =
      msg->payload ? std::optional<std::string>(std::string(static_cast<const char*>(msg->payload), msg->len))
                   : std::nullopt;
  if (!db.Exec("BEGIN")) return Outcome::kFailed;
  std::optional<long> inserted =
      db.Exec("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING", {event_id});
  bool ok = inserted.has_value();
  if (ok && *inserted == 1 && payload.has_value()) {
    // The business change. The payload is read by PostgreSQL: {"account": "...", "amount": N}.
    ok = db.Exec("INSERT INTO account_balance (account, total) "
                 "SELECT p->>'account', (p->>'amount')::bigint FROM (SELECT $1::jsonb AS p) s "
                 "WHERE p ? 'account' "
                 "ON CONFLICT (account) DO UPDATE SET total = account_balance.total + EXCLUDED.total",
                 {payload})
             .has_value();
    ok = ok && db.Exec("INSERT INTO applied_events (event_id, account, amount, kafka_topic, kafka_partition, "
                       "kafka_offset) "
                       "SELECT $1, p->>'account', (p->>'amount')::bigint, $3, $4::int, $5::bigint "
                       "FROM (SELECT $2::jsonb AS p) s",
                       {event_id, payload, std::string(rd_kafka_topic_name(msg->rkt)), std::to_string(msg->partition),
                        std::to_string(msg->offset)})
                   .has_value();
  }
  if (!ok || !db.Exec("COMMIT")) {
    db.Exec("ROLLBACK");
    return Outcome::kFailed;
  }
  return *inserted == 1 ? Outcome::kApplied : Outcome::kDuplicate;
}

bool Set(rd_kafka_conf_t* conf, const char* name, const std::string& value) {
  char errstr[512];
  if (rd_kafka_conf_set(conf, name, value.c_str(), errstr, sizeof errstr) == RD_KAFKA_CONF_OK) return true;
  Log(errstr);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"outbox-example-consumer: apply the relay's events exactly once (an inbox table)"};
  std::string bootstrap, group, conninfo, instance_id;
  std::vector<std::string> topics;
  bool create_tables = false;
  int session_timeout_ms = 10000;
  app.add_option("--bootstrap", bootstrap, "Kafka bootstrap servers")->required();
  app.add_option("--group", group, "consumer group id")->required();
  app.add_option("--topic", topics, "topic to consume (repeat for more; ^regex allowed)")->required();
  app.add_option("--conninfo", conninfo, "libpq conninfo of the consumer's database")->required();
  app.add_flag("--create-tables", create_tables, "create processed_events and the example's tables if missing");
  app.add_option("--instance-id", instance_id,
                 "group.instance.id: static membership, so a restarted consumer gets its partitions back at once");
  app.add_option("--session-timeout-ms", session_timeout_ms, "session.timeout.ms");
  CLI11_PARSE(app, argc, argv);

  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);

  Database db(conninfo);
  if (create_tables && (!db.Ready() || !db.Script(kSchema))) return 1;

  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  bool conf_ok = Set(conf, "bootstrap.servers", bootstrap) && Set(conf, "group.id", group) &&
                 Set(conf, "enable.auto.commit", "false") &&      // offsets are committed after the database
                 Set(conf, "auto.offset.reset", "earliest") &&    // a new group starts at the first event
                 Set(conf, "isolation.level", "read_committed") &&
                 Set(conf, "session.timeout.ms", std::to_string(session_timeout_ms)) &&
                 Set(conf, "topic.metadata.refresh.interval.ms", "1000");
  if (conf_ok && !instance_id.empty()) conf_ok = Set(conf, "group.instance.id", instance_id);
  if (!conf_ok) {
    rd_kafka_conf_destroy(conf);
    return 2;
  }
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    Log(errstr);
    return 2;
  }
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* subscription = rd_kafka_topic_partition_list_new(static_cast<int>(topics.size()));
  for (const std::string& topic : topics) {
    rd_kafka_topic_partition_list_add(subscription, topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, subscription);
  rd_kafka_topic_partition_list_destroy(subscription);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Log("could not subscribe: " + std::string(rd_kafka_err2str(err)));
    rd_kafka_destroy(rk);
    return 2;
  }
  Log("consuming as group " + group);

  long applied = 0, duplicates = 0;
  int rc = 0;
  while (!g_stop.load()) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 200);
    if (msg == nullptr) continue;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Partition EOF and transient errors are informational; librdkafka retries by itself.
      if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) Log(rd_kafka_message_errstr(msg));
      rd_kafka_message_destroy(msg);
      continue;
    }
    const std::optional<std::string> event_id = Header(msg, "id");
    if (!event_id.has_value()) {
      // Without an id there is nothing to deduplicate on: stop rather than apply it an unknown number of times.
      Log("a record without an id header at " + std::string(rd_kafka_topic_name(msg->rkt)) + "/" +
          std::to_string(msg->partition) + "@" + std::to_string(msg->offset) + ": stopping");
      rd_kafka_message_destroy(msg);
      rc = 1;
      break;
    }
    Outcome outcome = Outcome::kFailed;
    while (!g_stop.load() && (outcome = Apply(db, msg, *event_id)) == Outcome::kFailed) {
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the database is away: retry the same record
    }
    if (outcome == Outcome::kFailed) {  // stopping: the record stays uncommitted and comes back next time
      rd_kafka_message_destroy(msg);
      break;
    }
    if (outcome == Outcome::kApplied) {
      ++applied;
    } else {
      ++duplicates;
      Log("duplicate event " + *event_id + " at " + rd_kafka_topic_name(msg->rkt) + "/" +
          std::to_string(msg->partition) + "@" + std::to_string(msg->offset) + ": already applied, skipped");
    }
    // Only now, after COMMIT, the offset. A failure here (a rebalance) redelivers the record, which is skipped.
    err = rd_kafka_commit_message(rk, msg, /*async=*/0);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Log("offset commit failed: " + std::string(rd_kafka_err2str(err)));
    rd_kafka_message_destroy(msg);
  }
  Log("stopping: " + std::to_string(applied) + " applied, " + std::to_string(duplicates) + " duplicates skipped");
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return rc;
}
