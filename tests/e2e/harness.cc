// RelayHarness: per-test database, slot and topics, and the relay binary as a child process.
#include "e2e/harness.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string_view>

#include "pg/admin.h"
#include "support/util.h"

namespace outbox::testing {

RelayHarness::RelayHarness(PgServer* pg, std::string bootstrap, std::string extra_yaml)
    : pg_(pg), bootstrap_(std::move(bootstrap)) {
  db_ = UniqueName("db");
  slot_ = UniqueName("slot");
  publication_ = UniqueName("pub");
  topic_prefix_ = UniqueName("ev");
  auto dir = MakeTempDir("relay-e2e-");
  EXPECT_TRUE(dir.ok()) << dir.status();
  dir_ = dir.value_or("/tmp");
  EXPECT_TRUE(pg_->CreateDatabase(db_).ok());
  config_path_ = dir_ + "/relay.yaml";
  std::ofstream out(config_path_);
  out << "source:\n"
      << "  conninfo: \"" << pg_->conninfo(db_) << "\"\n"
      << "  slot: " << slot_ << "\n"
      << "  publication: " << publication_ << "\n"
      << "  checkpoint_topic: " << topic_prefix_ << ".checkpoints\n"
      << "  status_interval_ms: 200\n"
      << "outbox:\n"
      << "  table: public.outbox\n"
      << "  route:\n"
      << "    topic: \"" << topic_prefix_ << ".${routedByValue}\"\n"
      << "kafka:\n"
      << "  bootstrap.servers: \"" << bootstrap_ << "\"\n"
      << "http:\n"
      << "  listen: \"127.0.0.1:0\"\n"
      << extra_yaml;
}

RelayHarness::~RelayHarness() {
  if (!::testing::Test::HasFailure()) RemoveTree(dir_);
  // Drop the slot so it does not hold WAL on the shared server.
  (void)pg_->Exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot_ +
                  "' AND NOT active");
}

void RelayHarness::UseDebeziumServerFile(const std::string& sink_properties) {
  config_path_ = dir_ + "/application.properties";
  std::ofstream out(config_path_);
  out << "debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
      << "debezium.source.offset.storage.file.filename=" << dir_ << "/offsets.dat\n"
      << "debezium.source.database.hostname=127.0.0.1\n"
      << "debezium.source.database.port=" << pg_->port() << "\n"
      << "debezium.source.database.user=postgres\n"
      << "debezium.source.database.dbname=" << db_ << "\n"
      << "debezium.source.topic.prefix=" << db_ << "\n"
      << "debezium.source.plugin.name=pgoutput\n"
      << "debezium.source.slot.name=" << slot_ << "\n"
      << "debezium.source.publication.name=" << publication_ << "\n"
      << "debezium.source.table.include.list=public.outbox\n"
      << "debezium.source.status.update.interval.ms=200\n"
      << "debezium.transforms=outbox\n"
      << "debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
      << "debezium.transforms.outbox.route.by.field=type\n"
      << "debezium.transforms.outbox.route.topic.replacement=" << topic_prefix_ << ".${routedByValue}\n"
      << "debezium.format.key=simplestring\n"
      << "debezium.format.value=simplestring\n"
      << "outbox-relay.http.listen=127.0.0.1:0\n"
      << sink_properties;
}

std::string RelayBin() { return OUTBOX_RELAY_BIN; }

int RelayHarness::RunCommand(const std::vector<std::string>& args, std::string* output,
                             std::chrono::milliseconds deadline) {
  ProcessOptions o;
  o.argv = {OUTBOX_RELAY_BIN};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.argv.push_back("-c");
  o.argv.push_back(config_path_);
  o.output_path = dir_ + "/command-" + std::to_string(++relay_runs_) + ".log";
  auto child = ChildProcess::Spawn(o);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return -1;
  auto rc = (*child)->Wait(deadline);
  if (output) *output = (*child)->Output();
  if (!rc) {
    (void)(*child)->Kill(SIGKILL);
    ADD_FAILURE() << "outbox-relay " << args.front() << " did not finish: " << (*child)->Output();
    return -1;
  }
  return *rc;
}

void RelayHarness::Init() {
  std::string output;
  ASSERT_EQ(RunCommand({"init", "--create-table"}, &output), 0) << output;
}

std::unique_ptr<ChildProcess> RelayHarness::StartRelay(const std::vector<std::string>& extra_args, bool wait_active,
                                                       const std::map<std::string, std::string>& env) {
  ProcessOptions o;
  o.env = env;
  o.argv = command_prefix_;
  for (const char* word : {OUTBOX_RELAY_BIN, "run", "-c"}) o.argv.push_back(word);
  o.argv.push_back(config_path_);
  o.argv.insert(o.argv.end(), extra_args.begin(), extra_args.end());
  o.output_path = dir_ + "/relay-" + std::to_string(++relay_runs_) + ".log";
  auto child = ChildProcess::Spawn(o);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return nullptr;
  ChildProcess* c = child->get();
  if (wait_active) {
    EXPECT_TRUE(WaitFor([&] { return SlotActive() || !c->Running(); }, std::chrono::seconds(60), "the relay holds the slot"));
    EXPECT_TRUE(c->Running()) << c->Output();
  }
  const bool own_listen = std::any_of(extra_args.begin(), extra_args.end(),
                                      [](const std::string& a) { return a.starts_with("http.listen="); });
  if (!own_listen) http_port_ = RelayHttpPort(*c);
  return std::move(*child);
}

std::unique_ptr<ChildProcess> RelayHarness::StartSecondRelay(const std::vector<std::string>& extra_args,
                                                             int* http_port) {
  std::vector<std::string> args = extra_args;
  args.insert(args.end(), {"--set", "http.listen=127.0.0.1:0"});
  auto child = StartRelay(args, /*wait_active=*/false);
  *http_port = child ? RelayHttpPort(*child) : 0;
  return child;
}

std::vector<std::string> RelayHarness::AsLeastPrivilegeRole() const {
  pg::OutboxSqlNames names;
  names.database = db_;
  // Concurrent tests may race on CREATE ROLE: the statement is idempotent, so a second try settles it.
  if (!pg_->Exec(pg::CreateRoleSql(names), db_).ok()) {
    absl::Status st = pg_->Exec(pg::CreateRoleSql(names), db_);
    EXPECT_TRUE(st.ok()) << st;
  }
  auto super = pg_->QueryValue("SELECT rolsuper::text FROM pg_roles WHERE rolname = '" + names.role + "'", db_);
  EXPECT_TRUE(super.ok() && *super == "false") << "the relay's role must not be a superuser";
  return {"--set", "source.conninfo=" + pg_->conninfo(db_) + " user=" + names.role};
}

void RelayHarness::Sql(const std::string& sql) const {
  absl::Status st = pg_->Exec(sql, db_);
  ASSERT_TRUE(st.ok()) << st << "\n" << sql;
}

std::optional<std::string> RelayHarness::Value(const std::string& sql) const {
  auto v = pg_->QueryValue(sql, db_);
  EXPECT_TRUE(v.ok()) << v.status() << "\n" << sql;
  return v.ok() ? *v : std::nullopt;
}

Lsn RelayHarness::ConfirmedFlush() const {
  auto v = Value("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot_ + "'");
  if (!v) return Lsn(0);
  return Lsn::Parse(*v).value_or(Lsn(0));
}

Lsn RelayHarness::CurrentWal() const {
  auto v = Value("SELECT pg_current_wal_lsn()");
  return v ? Lsn::Parse(*v).value_or(Lsn(0)) : Lsn(0);
}

std::optional<int> RelayHarness::PendingChangesNaming(const std::string& event_id) const {
  auto v = Value(absl::StrCat("SELECT count(*) FROM pg_logical_slot_peek_binary_changes('", slot_,
                              "', NULL, NULL, 'proto_version', '1', 'publication_names', '", publication_,
                              "') WHERE position(convert_to('", event_id, "', 'UTF8') in data) > 0"));
  if (!v) return std::nullopt;
  return std::atoi(v->c_str());
}

std::string RelayHarness::ActivePid() const {
  return Value("SELECT coalesce(active_pid::text, '') FROM pg_replication_slots WHERE slot_name = '" + slot_ + "'")
      .value_or("");
}

bool RelayHarness::SlotActive() const {
  // A slot that does not exist (yet: source.create_slot) is not active; only a failing query is a failure.
  auto v = pg_->QueryValue("SELECT coalesce(bool_or(active), false) FROM pg_replication_slots WHERE slot_name = '" +
                               slot_ + "'",
                           db_);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() && *v == "t";
}

std::string RelayHarness::InsertEvent(const std::string& type, const std::string& key,
                                      const std::string& payload_json) const {
  auto id = Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), "
                  "'order', '" + key + "', '" + type + "', '" + payload_json + "') RETURNING id");
  return id.value_or("");
}

DebeziumServerRun RunDebeziumServerFile(RelayHarness& h, const std::string& sink_properties) {
  h.UseDebeziumServerFile(sink_properties);
  std::string output;
  EXPECT_EQ(h.RunCommand({"init", "--create-table"}, &output), 0) << output;
  EXPECT_TRUE(ReadFile(h.dir() + "/offsets.dat.outbox-relay").ok()) << "no checkpoint beside the offsets: " << output;
  DebeziumServerRun run;
  run.relay = h.StartRelay();
  if (run.relay == nullptr || !run.relay->Running()) return run;
  run.created = h.InsertEvent("created", "k1", R"({"n":1})");
  run.paid = h.InsertEvent("paid", "k1", R"({"n":2})");
  return run;
}

void SharedServicesTest::SetUp() {
  pg_ = PgServer::Shared();
  broker_ = KafkaBroker::Shared();
  ASSERT_TRUE(pg_ && broker_);
  auto reader = KafkaReader::Create(broker_->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  reader_ = std::move(*reader);
}

int RelayHttpPort(ChildProcess& relay, std::chrono::milliseconds deadline) {
  static const std::regex kStartLine("starting[^\n]*, http [^\n]*:([0-9]+)");
  int port = 0;
  PollUntil(
      [&] {
        // Read the output before asking whether it still runs: a relay that printed the line and exited counts.
        const std::string output = relay.Output();
        std::smatch m;
        if (std::regex_search(output, m, kStartLine)) port = std::stoi(m[1]);
        return port != 0 || !relay.Running();
      },
      deadline, std::chrono::milliseconds(10));
  return port;
}

std::vector<std::string> DeadLetterArgs(const std::string& topic) {
  return {"--set", "delivery.on_error=dead_letter", "--set", "delivery.dead_letter_topic=" + topic};
}

void ExpectStopsCleanly(ChildProcess& relay, std::chrono::milliseconds deadline) {
  ASSERT_TRUE(relay.Kill(SIGTERM).ok());
  EXPECT_EQ(relay.Wait(deadline), 0) << relay.Output();
}

std::pair<int, std::string> HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(2, 0);
  auto res = client.Get(path.c_str());
  if (!res) return {0, ""};
  return {res->status, res->body};
}

std::optional<Series> ParseSeries(std::string_view text) {
  Series s;
  const size_t brace = text.find('{');
  s.name = std::string(text.substr(0, brace));
  if (brace == std::string_view::npos) return s;
  size_t i = brace + 1;
  while (i < text.size() && text[i] != '}') {
    const size_t eq = text.find("=\"", i);
    if (eq == std::string_view::npos) return std::nullopt;
    std::string key(text.substr(i, eq - i)), value;
    for (i = eq + 2; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      value += text[i];
    }
    if (i >= text.size()) return std::nullopt;
    s.labels[key] = value;
    ++i;                                       // the closing quote
    if (i < text.size() && text[i] == ',') ++i;
  }
  return s;
}

std::optional<double> Sample(const std::string& exposition, const std::string& series) {
  const std::optional<Series> wanted = ParseSeries(series);
  if (!wanted) return std::nullopt;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::optional<Series> have = ParseSeries(std::string_view(line).substr(0, space));
    if (!have || have->name != wanted->name) continue;
    const bool all = std::ranges::all_of(wanted->labels, [&](const auto& label) {
      auto it = have->labels.find(label.first);
      return it != have->labels.end() && it->second == label.second;
    });
    if (all) return std::stod(line.substr(space + 1));
  }
  return std::nullopt;
}

std::optional<double> Scrape(int port, const std::string& series) {
  auto [code, body] = HttpGet(port, "/metrics");
  if (code != 200) return std::nullopt;
  return Sample(body, series);
}

std::optional<double> MetricValue(int port, const std::string& name) {
  auto [code, body] = HttpGet(port, "/metrics");
  if (code != 200) return std::nullopt;
  std::smatch m;
  const std::regex sample("(^|\n)" + name + "(\\{[^}]*\\})? ([0-9.e+-]+)");
  if (!std::regex_search(body, m, sample)) return std::nullopt;
  return std::stod(m[3]);
}

}  // namespace outbox::testing
