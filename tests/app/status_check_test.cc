// `status` and `check` (SPEC.md §2) against real servers: the slot's state in text and JSON, a missing or lost slot,
// and every problem `check` must find (wal_level, a missing publication, a role without REPLICATION, an unreachable
// broker), printed together with exit code 1.
#include <gtest/gtest.h>

#include <csignal>
#include <regex>

#include "app/app_test_util.h"
#include "common/lsn.h"
#include "nlohmann/json.hpp"
#include "support/kafka_broker.h"
#include "support/pg_server.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class StatusCheck : public SharedServicesTest {
 protected:

  // A LOGIN role without REPLICATION, dropped with the test.
  std::string CreateRoleWithoutReplication(const RelayHarness& h) {
    const std::string role = UniqueName("norepl");
    h.Sql("CREATE ROLE " + role + " LOGIN NOREPLICATION NOSUPERUSER");
    roles_.push_back(role);
    return role;
  }

  void TearDown() override {
    for (const std::string& role : roles_) (void)pg_->Exec("DROP ROLE IF EXISTS " + role);
  }

  std::vector<std::string> roles_;
};

TEST_F(StatusCheck, StatusPrintsTheSlotInTextAndJson) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  CommandResult r = RunRelay(h.config_path(), {"status"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string confirmed = h.Value("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" +
                                        h.slot() + "'").value_or("?");
  EXPECT_NE(r.out.find("slot " + h.slot() + " (pgoutput, database " + h.db() + ")"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(active: +no\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("confirmed_flush_lsn: +" + confirmed + "\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(restart_lsn: +[0-9A-F]+/[0-9A-F]+\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(wal_status: +(reserved|extended)\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(retained WAL bytes: +\d+\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(lag bytes: +\d+ \(server WAL at [0-9A-F]+/[0-9A-F]+\)\n)")))
      << r.out;

  // While a relay streams: active with its walsender's pid, and the JSON form says the same.
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string pid = h.Value("SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'")
                              .value_or("?");
  r = RunRelay(h.config_path(), {"status"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("active: +yes \\(pid " + pid + "\\)\n"))) << r.out;

  h.InsertEvent("Created", "k1", "{}");
  const Lsn after_insert = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= after_insert; }, 30s, "the relay confirms the insert"));
  r = RunRelay(h.config_path(), {"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(j["slot"], h.slot());
  EXPECT_EQ(j["exists"], true);
  EXPECT_EQ(j["plugin"], "pgoutput");
  EXPECT_EQ(j["database"], h.db());
  EXPECT_EQ(j["active"], true);
  EXPECT_EQ(std::to_string(j["active_pid"].get<int64_t>()), pid);
  ASSERT_TRUE(j["confirmed_flush_lsn"].is_string()) << j;
  ASSERT_TRUE(j["restart_lsn"].is_string()) << j;
  EXPECT_TRUE(Lsn::Parse(j["confirmed_flush_lsn"].get<std::string>()).ok()) << j;
  EXPECT_TRUE(Lsn::Parse(j["restart_lsn"].get<std::string>()).ok()) << j;
  EXPECT_TRUE(Lsn::Parse(j["server_wal_lsn"].get<std::string>()).ok()) << j;
  EXPECT_TRUE(j["wal_status"] == "reserved" || j["wal_status"] == "extended") << j;
  ASSERT_TRUE(j["retained_wal_bytes"].is_number_integer()) << j;
  ASSERT_TRUE(j["lag_bytes"].is_number_integer()) << j;
  EXPECT_GE(j["retained_wal_bytes"].get<int64_t>(), j["lag_bytes"].get<int64_t>()) << j;
  // The lag is the server's position minus the confirmed one, as the server computes it.
  const auto server = Lsn::Parse(j["server_wal_lsn"].get<std::string>());
  const auto confirmed_json = Lsn::Parse(j["confirmed_flush_lsn"].get<std::string>());
  ASSERT_TRUE(server.ok() && confirmed_json.ok());
  EXPECT_EQ(static_cast<uint64_t>(j["lag_bytes"].get<int64_t>()), server->value() - confirmed_json->value()) << j;

  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
}

TEST_F(StatusCheck, StatusOfAMissingSlotExitsNonZero) {
  RelayHarness h(pg_, broker_->bootstrap());
  CommandResult r = RunRelay(h.config_path(), {"status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "slot " + h.slot() + ": missing\n");
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = RunRelay(h.config_path(), {"status", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(j["exists"], false);
  EXPECT_EQ(j["slot"], h.slot());
}

TEST_F(StatusCheck, StatusOfALostSlotExitsNonZero) {
  // A server that invalidates a slot once it holds back more than 1 MB of WAL.
  auto own = PgServer::Create({.extra_conf = "max_slot_wal_keep_size = 1MB\nwal_keep_size = 0"});
  ASSERT_TRUE(own.ok()) << own.status();
  RelayHarness h(own->get(), broker_->bootstrap(), "");
  CommandResult r = RunRelay(h.config_path(), {"init", "--create-table", "--set", "source.checkpoint=none"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(RunRelay(h.config_path(), {"status"}).exit_code, 0);
  // Three WAL segments past the slot, then a checkpoint: the slot is invalidated.
  for (int i = 0; i < 3; ++i) {
    h.Sql("CREATE TABLE IF NOT EXISTS filler (t text); INSERT INTO filler SELECT repeat('x', 1000) FROM "
          "generate_series(1, 2000)");
    h.Sql("SELECT pg_switch_wal()");
  }
  h.Sql("CHECKPOINT");
  ASSERT_TRUE(WaitFor(
      [&] {
        return h.Value("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'") == "lost";
      },
      30s, "the slot is lost"));
  r = RunRelay(h.config_path(), {"status"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(wal_status: +lost\n)"))) << r.out;
  EXPECT_NE(r.err.find("invalidated"), std::string::npos) << r.err;
  r = RunRelay(h.config_path(), {"status", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(j["wal_status"], "lost");
  EXPECT_EQ(j["exists"], true);
  // `check` says the same, in the words `run` stops with (one slot check for both).
  r = RunRelay(h.config_path(), {"check", "--set", "source.checkpoint=none"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("problem: replication slot \"" + h.slot() + "\" was invalidated (wal_status lost"),
            std::string::npos)
      << r.out;
  r = RunRelay(h.config_path(), {"run", "--set", "source.checkpoint=none"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("replication slot \"" + h.slot() + "\" was invalidated (wal_status lost"), std::string::npos)
      << r.err;
}

TEST_F(StatusCheck, StatusCannotConnectExitsNonZero) {
  RelayHarness h(pg_, broker_->bootstrap());
  CommandResult r = RunRelay(h.config_path(), {"status", "--set",
                                               "source.conninfo=host=127.0.0.1 port=" + std::to_string(ClosedPort()) +
                                                   " user=postgres dbname=postgres connect_timeout=5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("could not connect"), std::string::npos) << r.err;
}

TEST_F(StatusCheck, CheckPassesOnAnInitializedSetup) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  CommandResult r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Lines(r.out, "problem:").empty()) << r.out;
  for (const std::string& expected :
       {std::string("ok: wal_level is logical"), std::string("ok: role \"postgres\" may replicate"),
        std::string("ok: replication connection"), std::string("ok: table public.outbox has the columns"),
        "ok: publication \"" + h.Value("SELECT pubname FROM pg_publication").value_or("?") + "\" covers public.outbox",
        "ok: slot \"" + h.slot() + "\" exists", std::string("ok: the broker answers"),
        std::string("ok: the relay writes the records of public.outbox as configured"),
        std::string("ok: no problem found")}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  }
  // The effective configuration heads the output.
  EXPECT_TRUE(r.out.starts_with("config: valid\n")) << r.out;
  EXPECT_NE(r.out.find("  source.slot: " + h.slot() + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  kafka.bootstrap.servers: " + h.bootstrap() + "\n"), std::string::npos) << r.out;
}

// outbox.on_update: error asks to see UPDATEs: `init` creates the publication with them, and `check` warns (without
// failing) when an existing publication hides them.
TEST_F(StatusCheck, InitPublishesUpdatesForOnUpdateErrorAndCheckWarnsWhenThePublicationHidesThem) {
  RelayHarness h(pg_, broker_->bootstrap());
  std::string out;
  ASSERT_EQ(h.RunCommand({"init", "--create-table", "--set", "outbox.on_update=error"}, &out), 0) << out;
  const std::string pub = h.Value("SELECT pubname FROM pg_publication").value_or("?");
  EXPECT_EQ(h.Value("SELECT pubinsert::text || ',' || pubupdate::text || ',' || pubdelete::text FROM pg_publication"),
            "true,true,false");
  CommandResult r = RunRelay(h.config_path(), {"check", "--set", "outbox.on_update=error"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Lines(r.out, "warning:").empty()) << r.out;
  h.Sql("ALTER PUBLICATION " + pub + " SET (publish = 'insert')");
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.on_update=error"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "warning:"),
            std::vector<std::string>{"warning: publication \"" + pub +
                                     "\" does not publish updates, so outbox.on_update: error never sees an UPDATE of "
                                     "public.outbox (ALTER PUBLICATION \"" + pub + "\" SET (publish = 'insert, "
                                     "update'), or recreate it with `outbox-relay init`)"})
      << r.out;
  // The default (warn) asks for nothing more than inserts.
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_TRUE(Lines(r.out, "warning:").empty()) << r.out;
}

// json_schema (JsonConverter with schemas): a default on the payload column is in Debezium's schema; the relay writes
// it with outbox.null_as_column_default (as Debezium files set), and `check` names the column without it, or when the
// relay does not work the default out for its type (also under the connector's modes), before `run` would stop at the
// first event.
TEST_F(StatusCheck, CheckFindsADefaultOnAColumnJsonSchemaWrites) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  CommandResult r = RunRelay(h.config_path(), {"check", "--set", "outbox.value_converter=json_schema"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload SET DEFAULT '{}'");
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.value_converter=json_schema"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "problem:"),
            std::vector<std::string>{"problem: outbox.value_converter: json_schema: column \"payload\" of public.outbox "
                                     "has a default, which Debezium's schema carries: set "
                                     "outbox.null_as_column_default: true (as Debezium files do), drop the default, or "
                                     "use json"})
      << r.out;
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.value_converter=json_schema", "--set",
                                 "outbox.null_as_column_default=true"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload TYPE text, ALTER COLUMN payload SET DEFAULT now()::text || 'x'");
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.value_converter=json_schema", "--set",
                                 "outbox.null_as_column_default=true"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // text: Debezium's placeholder, which the relay writes too
  r = RunRelay(h.config_path(), {"check"});  // the string converter writes no schema
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // A numeric(10,2) payload with a default: json_schema writes its Decimal, with the default Debezium's schema carries.
  // Under outbox.decimal_handling_mode string its default is refused: Debezium converts it through the mode, which
  // the relay does not reproduce.
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload DROP DEFAULT, ALTER COLUMN payload TYPE numeric(10,2) USING NULL, "
        "ALTER COLUMN payload SET DEFAULT 1.5");
  const std::vector<std::string> numeric = {"check", "--set", "outbox.value_converter=json_schema", "--set",
                                            "outbox.null_as_column_default=true"};
  r = RunRelay(h.config_path(), numeric);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> under_string = numeric;
  under_string.insert(under_string.end(), {"--set", "outbox.decimal_handling_mode=string"});
  r = RunRelay(h.config_path(), under_string);
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "problem:"),
            std::vector<std::string>{"problem: outbox.value_converter: json_schema: column \"payload\" of public.outbox "
                                     "has a default the relay does not work out as Debezium does for its type (drop "
                                     "the default, or use json)"})
      << r.out;
  // A payload of a type Debezium has no schema for (tsquery, left out unless include.unknown.datatypes): `run` refuses
  // it when the table's layout arrives, and `check` finds it by binding the columns as `run` does.
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload DROP DEFAULT, ALTER COLUMN payload TYPE tsquery USING NULL");
  r = RunRelay(h.config_path(), numeric);
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "problem:"),
            std::vector<std::string>{"problem: the relay cannot write the records of public.outbox as configured: "
                                     "outbox.value_converter: column \"payload\" of public.outbox (type OID 3615): json "
                                     "and json_schema write the types Debezium has a schema for"})
      << r.out;
}

// What `run` would refuse when the table's layout arrives (a placement, a column's type), `check` binds beforehand on
// the catalog's layout: a problem naming the key and the column, where `run` would stop at the first event.
TEST_F(StatusCheck, CheckBindsTheRecordsColumnsAsRunWould) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  CommandResult r = RunRelay(h.config_path(), {"check", "--set", "outbox.fields.timestamp=aggregatetype"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  const std::vector<std::string> problems = Lines(r.out, "problem:");
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_TRUE(problems[0].starts_with("problem: the relay cannot write the records of public.outbox as configured: "))
      << problems[0];
  EXPECT_NE(problems[0].find("aggregatetype"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("outbox.fields.timestamp"), std::string::npos) << problems[0];
  // A header value of a type whose Debezium form the relay does not reproduce.
  h.Sql("ALTER TABLE outbox ADD COLUMN took tsquery");
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.header_values=debezium", "--set",
                                 "outbox.fields.additional=took:header"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "problem:").size(), 1u) << r.out;
  EXPECT_NE(r.out.find("\"took\""), std::string::npos) << r.out;
  // The same layout as text headers: nothing to refuse.
  r = RunRelay(h.config_path(), {"check", "--set", "outbox.fields.additional=took:header"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(StatusCheck, CheckFindsWalLevelNotLogical) {
  auto replica = PgServer::Create({.extra_conf = "wal_level = replica"});
  ASSERT_TRUE(replica.ok()) << replica.status();
  RelayHarness h(replica->get(), broker_->bootstrap());
  // What init would make, by hand (a slot cannot be made at this wal_level).
  CommandResult print = RunRelay(h.config_path(), {"init", "--print", "--create-table"});
  ASSERT_EQ(print.exit_code, 0);
  h.Sql(print.out.substr(0, print.out.find("SELECT pg_create_logical_replication_slot")));
  CommandResult r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("problem: wal_level is replica, not logical"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok: publication"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok: the broker answers"), std::string::npos) << r.out;
  // And `init` refuses with the server's reason.
  r = RunRelay(h.config_path(), {"init"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("wal_level"), std::string::npos) << r.err;
}

TEST_F(StatusCheck, CheckFindsTheGapRunWouldStopAt) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  CommandResult r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("agrees"), std::string::npos) << r.out;  // the checkpoint was read and matches the slot
  // Someone moves the slot past the checkpoint: `run` would stop, and `check` says why, in the same words.
  h.Sql("CREATE TABLE IF NOT EXISTS moved (t text); INSERT INTO moved VALUES ('x')");
  h.Sql("SELECT pg_replication_slot_advance('" + h.slot() + "', pg_current_wal_lsn())");
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto problems = Lines(r.out, "problem:");
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_NE(problems[0].find("ahead of the checkpoint"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("--accept-gap"), std::string::npos) << problems[0];
}

TEST_F(StatusCheck, CheckFindsAMissingPublication) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string pub = h.Value("SELECT pubname FROM pg_publication").value_or("?");
  h.Sql("DROP PUBLICATION " + pub);
  CommandResult r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(Lines(r.out, "problem:"),
            std::vector<std::string>{"problem: publication \"" + pub +
                                     "\" does not exist (source.publication; `outbox-relay init` creates it)"})
      << r.out;
  EXPECT_NE(r.out.find("1 problem(s) found"), std::string::npos) << r.out;
  // A publication of another table, or without inserts, is a problem too.
  h.Sql("CREATE TABLE other (id int); CREATE PUBLICATION " + pub + " FOR TABLE other");
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("problem: publication \"" + pub + "\" does not cover public.outbox"), std::string::npos)
      << r.out;
  h.Sql("DROP PUBLICATION " + pub + "; CREATE PUBLICATION " + pub + " FOR TABLE outbox WITH (publish = 'update')");
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("problem: publication \"" + pub + "\" does not publish inserts"), std::string::npos) << r.out;
  // A column list that leaves out a configured column (PostgreSQL 15+).
  h.Sql("DROP PUBLICATION " + pub + "; CREATE PUBLICATION " + pub +
        " FOR TABLE outbox (id, aggregateid, type) WITH (publish = 'insert')");
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("leaves out the column(s) payload"), std::string::npos) << r.out;
}

TEST_F(StatusCheck, CheckFindsARoleWithoutReplication) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string role = CreateRoleWithoutReplication(h);
  CommandResult r = RunRelay(h.config_path(), {"check", "--set",
                                               "source.conninfo=host=127.0.0.1 port=" + std::to_string(pg_->port()) +
                                                   " user=" + role + " dbname=" + h.db()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("problem: role \"" + role + "\" may not replicate: ALTER ROLE \"" + role + "\" REPLICATION"),
            std::string::npos)
      << r.out;
  // PostgreSQL 15: "must be superuser or replication role"; 16+: "permission denied to start WAL sender".
  const std::regex refused("problem: replication connection: .*(replication|superuser|WAL sender)");
  EXPECT_TRUE(std::regex_search(r.out, refused)) << r.out;
  EXPECT_NE(r.out.find("ok: wal_level is logical"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok: the broker answers"), std::string::npos) << r.out;
}

TEST_F(StatusCheck, CheckFindsAnUnreachableBrokerWithoutLibrdkafkaNoise) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string dead = "127.0.0.1:" + std::to_string(ClosedPort());
  CommandResult r = RunRelay(h.config_path(), {"check", "--set", "kafka.bootstrap.servers=" + dead});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto problems = Lines(r.out, "problem:");
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_TRUE(problems[0].starts_with("problem: the broker does not answer (bootstrap.servers " + dead + "): "))
      << problems[0];
  EXPECT_NE(problems[0].find("Connection refused"), std::string::npos) << problems[0];
  // librdkafka's own log lines ("%3|...|FAIL|...") are not printed.
  EXPECT_EQ(r.out.find("%3|"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("%3|"), std::string::npos) << r.err;
}

TEST_F(StatusCheck, CheckPrintsEveryProblemAtOnce) {
  RelayHarness h(pg_, broker_->bootstrap());
  // No init: no table, publication or slot; a role that may not replicate; no broker; an unsafe producer setting.
  const std::string role = CreateRoleWithoutReplication(h);
  CommandResult r = RunRelay(h.config_path(),
                             {"check", "--set",
                              "source.conninfo=host=127.0.0.1 port=" + std::to_string(pg_->port()) + " user=" + role +
                                  " dbname=" + h.db(),
                              "--set", "kafka.bootstrap.servers=127.0.0.1:" + std::to_string(ClosedPort())});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto problems = Lines(r.out, "problem:");
  EXPECT_EQ(problems.size(), 6u) << r.out;  // role, replication connection, table, publication, slot, broker
  EXPECT_NE(r.out.find(std::to_string(problems.size()) + " problem(s) found"), std::string::npos) << r.out;
  for (const std::string& part : {std::string("may not replicate"), std::string("replication connection"),
                                  std::string("table public.outbox does not exist"),
                                  std::string("does not exist (source.publication"),
                                  "slot \"" + h.slot() + "\" does not exist", std::string("the broker does not answer")}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  // A setting that breaks the delivery guarantee is a problem, named.
  r = RunRelay(h.config_path(), {"check", "--set", "kafka.acks=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("problem: kafka\\.acks"))) << r.out;
}

TEST_F(StatusCheck, CheckCannotConnectToPostgresStillChecksTheBroker) {
  RelayHarness h(pg_, broker_->bootstrap());
  CommandResult r = RunRelay(h.config_path(), {"check", "--set",
                                               "source.conninfo=host=127.0.0.1 port=" + std::to_string(ClosedPort()) +
                                                   " user=postgres dbname=postgres connect_timeout=5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("problem: PostgreSQL: could not connect"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok: the broker answers"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace outbox::testing
