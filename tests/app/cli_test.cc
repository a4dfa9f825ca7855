// The command line (SPEC.md §2): version, exit code 2 naming the key for config errors, --set, init --print and
// an idempotent init, run against the binary with a throwaway PostgreSQL and the real broker.
#include <gtest/gtest.h>

#include <regex>

#include "app/app_test_util.h"
#include "support/kafka_broker.h"
#include "support/pg_server.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Cli : public SharedServicesTest {
 protected:

  // A config file in its own directory, removed with the test.
  std::string WriteConfig(const std::string& yaml) {
    auto dir = MakeTempDir("relay-cli-");
    EXPECT_TRUE(dir.ok()) << dir.status();
    dirs_.push_back(dir.value_or("/tmp"));
    const std::string path = dirs_.back() + "/relay.yaml";
    WriteText(path, yaml);
    return path;
  }

  void TearDown() override {
    for (const std::string& d : dirs_) RemoveTree(d);
  }

  static std::string MinimalYaml() {
    return "source:\n"
           "  conninfo: \"host=127.0.0.1 port=1 dbname=app user=relay\"\n"
           "  slot: outbox_relay\n"
           "  publication: outbox_pub\n"
           "outbox:\n"
           "  table: public.outbox\n"
           "kafka:\n"
           "  bootstrap.servers: \"127.0.0.1:1\"\n";
  }

  std::vector<std::string> dirs_;
};

TEST_F(Cli, VersionPrintsTheVersionAndTheAllocatorServingMallocAndExitsZero) {
  CommandResult r = RunRelay("", {"version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The allocator line is asked of the running process (a block from malloc), so a build that links mimalloc where
  // the dynamic linker finds the C library's malloc first fails here.
  const std::string allocator =
      std::string(OUTBOX_RELAY_ALLOCATOR) == "mimalloc" ? R"(mimalloc \d+\.\d+\.\d+)" : "system";
  EXPECT_TRUE(std::regex_match(r.out, std::regex(R"(outbox-relay \d+\.\d+\.\d+\nallocator: )" + allocator + "\n")))
      << r.out;
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunRelay("", {}).exit_code, 2);
  EXPECT_EQ(RunRelay("", {"frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunRelay("", {"status"}).exit_code, 2) << "-c is required";
  const std::string path = WriteConfig(MinimalYaml());
  EXPECT_EQ(RunRelay(path, {"status", "--no-such-flag"}).exit_code, 2);
  CommandResult r = RunRelay(path, {"init", "--print", "--set", "novalue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("novalue"), std::string::npos) << r.err;
  r = RunRelay(path, {"run", "--start-lsn", "nonsense"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--start-lsn"), std::string::npos) << r.err;
}

TEST_F(Cli, ConfigErrorsExitTwoAndNameTheKey) {
  struct Case {
    std::string yaml;
    std::string key;
  };
  const std::vector<Case> cases = {
      {MinimalYaml() + "delivery:\n  max_inflight_events: lots\n", "delivery.max_inflight_events"},
      {MinimalYaml() + "source_typo:\n  x: 1\n", "source_typo"},
      {MinimalYaml() + "outbox_extra: 1\n", "outbox_extra"},
      {"source:\n  slot: s\n  publication: p\noutbox:\n  table: t\nkafka:\n  bootstrap.servers: x:1\n",
       "source.conninfo"},
      {MinimalYaml() + "log:\n  format: xml\n", "log.format"},
      {MinimalYaml() + "kafka_typo: 1\n", "kafka_typo"},
  };
  for (const Case& c : cases) {
    const std::string path = WriteConfig(c.yaml);
    for (const char* command : {"check", "status", "init", "run"}) {
      CommandResult r = RunRelay(path, {command});
      EXPECT_EQ(r.exit_code, 2) << command << " with " << c.key << ": " << r.err;
      EXPECT_NE(r.err.find(c.key), std::string::npos) << command << ": " << r.err;
    }
  }
  CommandResult r = RunRelay("/nonexistent/relay.yaml", {"check"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/relay.yaml"), std::string::npos) << r.err;
  // An unsafe producer setting is a config error of `run`, named.
  r = RunRelay(WriteConfig(MinimalYaml() + "  acks: \"1\"\n"), {"run"}, {}, 30s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("kafka.acks"), std::string::npos) << r.err;
  // So are finite retries, librdkafka queue limits below the delivery bounds, and more than 5 requests in flight
  // with idempotence (librdkafka's own refusal was exit 1 in its words).
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"retries", "1"},
           {"queue.buffering.max.messages", "1000"},
           {"queue.buffering.max.kbytes", "4096"},
           {"max.in.flight.requests.per.connection", "6"}}) {
    r = RunRelay(WriteConfig(MinimalYaml() + "  " + key + ": \"" + value + "\"\n"), {"run"}, {}, 30s);
    EXPECT_EQ(r.exit_code, 2) << key << ": " << r.err;
    EXPECT_NE(r.err.find("kafka." + key), std::string::npos) << r.err;
  }
}

TEST_F(Cli, SetOverridesAnyKey) {
  const std::string path = WriteConfig(MinimalYaml());
  CommandResult r = RunRelay(path, {"init", "--print", "--set", "source.publication=overridden_pub", "--set",
                                    "outbox.table=app.events", "--set", "source.slot=first", "--set",
                                    "source.slot=second_wins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CREATE PUBLICATION \"overridden_pub\" FOR TABLE \"app\".\"events\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("'second_wins'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("outbox_pub"), std::string::npos) << r.out;
  // A bad value given with --set is named like one from the file.
  r = RunRelay(path, {"status", "--set", "source.status_interval_ms=abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("source.status_interval_ms"), std::string::npos) << r.err;
  r = RunRelay(path, {"status", "--set", "source.nonsense=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("source.nonsense"), std::string::npos) << r.err;
  // --set reaches the server: status of another slot on the real server.
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string missing = UniqueName("missing");
  r = RunRelay(h.config_path(), {"status", "--set", "source.slot=" + missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("slot " + missing + ": missing"), std::string::npos) << r.out;
  r = RunRelay(h.config_path(), {"status"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(Cli, InitPrintShowsThePublicationAndALeastPrivilegeRoleAndTouchesNothing) {
  RelayHarness h(pg_, broker_->bootstrap());
  CommandResult r = RunRelay(h.config_path(), {"init", "--print", "--create-table"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(CREATE PUBLICATION \S+ FOR TABLE "public"\."outbox" WITH \(publish = 'insert'\))")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(CREATE ROLE \S+ LOGIN REPLICATION NOSUPERUSER)"))) << r.out;
  EXPECT_NE(r.out.find("GRANT SELECT ON \"public\".\"outbox\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CREATE TABLE IF NOT EXISTS \"public\".\"outbox\""), std::string::npos) << r.out;
  // The publication comes before the slot.
  EXPECT_LT(r.out.find("CREATE PUBLICATION"), r.out.find("pg_create_logical_replication_slot")) << r.out;
  // Nothing was created.
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_publication"), "0");
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'"), "0");
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_class WHERE relname = 'outbox'"), "0");

  // The printed SQL runs as printed (as psql would: the slot in its own transaction), and gives what init would.
  const size_t slot_at = r.out.find("SELECT pg_create_logical_replication_slot");
  ASSERT_NE(slot_at, std::string::npos) << r.out;
  h.Sql(r.out.substr(0, slot_at));
  h.Sql(r.out.substr(slot_at));
  EXPECT_EQ(h.Value("SELECT pubinsert::text || pubupdate::text || pubdelete::text || pubtruncate::text FROM "
                    "pg_publication"),
            "truefalsefalsefalse");
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_publication_tables WHERE tablename = 'outbox'"), "1");
  EXPECT_EQ(h.Value("SELECT rolcanlogin::text || rolreplication::text || rolsuper::text FROM pg_roles WHERE "
                    "rolname = 'outbox_relay'"),
            "truetruefalse");
  EXPECT_EQ(h.Value("SELECT plugin FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'"), "pgoutput");
  // Printed twice, applied twice: the guards make it idempotent (the slot aside, which exists now).
  r = RunRelay(h.config_path(), {"init", "--print"});
  ASSERT_EQ(r.exit_code, 0);
  const std::string without_slot = r.out.substr(0, r.out.find("SELECT pg_create_logical_replication_slot"));
  h.Sql(without_slot);
}

TEST_F(Cli, InitTwiceIsIdempotentAndLeavesTheSlotAlone) {
  RelayHarness h(pg_, broker_->bootstrap());
  CommandResult first = RunRelay(h.config_path(), {"init", "--create-table"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("slot " + h.slot() + " created at "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("checkpoint "), std::string::npos) << first.out;
  const std::string slot_sql = "SELECT confirmed_flush_lsn::text || ' ' || restart_lsn::text || ' ' || "
                               "catalog_xmin::text FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'";
  const auto before = h.Value(slot_sql);
  ASSERT_TRUE(before.has_value());
  // Some WAL between the two runs: a new slot would start elsewhere.
  h.Sql("CREATE TABLE filler AS SELECT g FROM generate_series(1, 1000) g");

  CommandResult second = RunRelay(h.config_path(), {"init", "--create-table"});
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("slot " + h.slot() + " exists at "), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(" present"), std::string::npos) << second.out;
  EXPECT_EQ(h.Value(slot_sql), before);
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'"), "1");
  EXPECT_EQ(h.Value("SELECT count(*) FROM pg_publication"), "1");
  // And the relay starts from it without a gap.
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
}

}  // namespace
}  // namespace outbox::testing
