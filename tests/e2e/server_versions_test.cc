// Server versions end to end (PROTOCOL.md §1, §7): failover slots (source.failover) with init, status, check and
// run on PostgreSQL 17, their refusal on older servers, and a real failover: a relay on a primary with a physical
// standby that synchronizes the slot keeps every event when the primary dies and the standby is promoted.
// The PostgreSQL 17 tests skip on older servers; scripts/test-matrix.sh 17 (the version-matrix step of
// scripts/test.sh) runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>

#include "app/app_test_util.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "pg/replication_connection.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kMatrixJob[] = "scripts/test-matrix.sh 17 (the version-matrix step of scripts/test.sh) runs it";

// Why a PostgreSQL 17 test cannot run on `pg` ("" when it can).
std::string WhyNotPg17(const PgServer& pg) {
  const int version = pg.VersionNum();
  if (version >= pg::kFailoverMinServerVersion) return "";
  return outbox::Cat("needs PostgreSQL 17 (failover slots); the server is ", pg::ServerVersionText(version), ": ",
             kMatrixJob);
}

const std::vector<std::string> kFailover = {"--set", "source.failover=true"};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

class FailoverSlots : public SharedServicesTest {
 protected:
  // The slot's failover and synced columns ("t"/"f"), "" when there is no such slot.
  static std::string SlotColumn(const PgServer& pg, const std::string& slot, const std::string& column) {
    auto v = pg.QueryValue("SELECT " + column + " FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
    return v.ok() && v->has_value() ? **v : "";
  }

  static nlohmann::json Json(const std::string& text) {
    nlohmann::json j;
    EXPECT_NO_THROW(j = nlohmann::json::parse(text)) << text;
    return j;
  }
};

TEST_F(FailoverSlots, InitCreatesAFailoverSlotThatStatusAndCheckShow) {
  if (std::string why = WhyNotPg17(*pg_); !why.empty()) GTEST_SKIP() << why;
  RelayHarness h(pg_, broker_->bootstrap());

  CommandResult printed = RunRelay(h.config_path(), With({"init", "--print"}, kFailover));
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("SELECT pg_create_logical_replication_slot('" + h.slot() +
                             "', 'pgoutput', false, false, true);"),
            std::string::npos)
      << printed.out;

  CommandResult init = RunRelay(h.config_path(), With({"init", "--create-table"}, kFailover));
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  EXPECT_NE(init.out.find("failover slot " + h.slot() + " created at "), std::string::npos) << init.out;
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "failover"), "t");
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "synced"), "f");

  CommandResult status = RunRelay(h.config_path(), {"status"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_TRUE(std::regex_search(status.out, std::regex(R"(\n  failover: +yes\n)"))) << status.out;
  EXPECT_TRUE(std::regex_search(status.out, std::regex(R"(\n  synced: +no\n)"))) << status.out;
  status = RunRelay(h.config_path(), {"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  const nlohmann::json j = Json(status.out);
  EXPECT_EQ(j["failover"], true) << status.out;
  EXPECT_EQ(j["synced"], false) << status.out;

  // The shared server has no standby: check says the relay is not held back for one.
  CommandResult check = RunRelay(h.config_path(), With({"check"}, kFailover));
  EXPECT_NE(check.out.find("ok: failover slots are supported (PostgreSQL " +
                           pg::ServerVersionText(pg_->VersionNum()) + ")"),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("note: source.failover is on, but synchronized_standby_slots is empty"),
            std::string::npos)
      << check.out;
  EXPECT_EQ(check.out.find("problem:"), std::string::npos) << check.out;
}

TEST_F(FailoverSlots, InitAndRunMakeAnExistingSlotAFailoverSlot) {
  if (std::string why = WhyNotPg17(*pg_); !why.empty()) GTEST_SKIP() << why;
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "failover"), "f");

  CommandResult init = RunRelay(h.config_path(), With({"init"}, kFailover));
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  EXPECT_NE(init.out.find("slot " + h.slot() + " is now a failover slot"), std::string::npos) << init.out;
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "failover"), "t");

  // Back to a plain slot (the replication command), then `run` with source.failover turns it over again.
  auto repl = PgConnection::Connect(pg_->replication_conninfo(h.db()));
  ASSERT_TRUE(repl.ok()) << repl.status();
  ASSERT_TRUE(repl->Exec("ALTER_REPLICATION_SLOT " + h.slot() + " (FAILOVER false)").ok());
  ASSERT_EQ(SlotColumn(*pg_, h.slot(), "failover"), "f");
  auto relay = h.StartRelay(kFailover);
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "failover"), "t");
  const std::string id = h.InsertEvent("Created", "k1", "{}");
  auto records = reader_->ReadUntil(h.Topic("Created"), 1, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << "\n" << relay->Output();
  const KafkaHeader* header = records->front().FindHeader("id");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->value, id);
}

TEST_F(FailoverSlots, AreRefusedBeforePostgres17NamingTheKeyAndTheServerVersion) {
  const int version = pg_->VersionNum();
  if (version >= pg::kFailoverMinServerVersion) {
    GTEST_SKIP() << "the server is PostgreSQL " << pg::ServerVersionText(version)
                 << ", which has failover slots: the default suite (PostgreSQL 15) runs this";
  }
  RelayHarness h(pg_, broker_->bootstrap());
  const std::string refusal = "source.failover: failover slots need PostgreSQL 17 or later, but the server is "
                              "PostgreSQL " + pg::ServerVersionText(version);

  CommandResult init = RunRelay(h.config_path(), With({"init", "--create-table"}, kFailover));
  EXPECT_EQ(init.exit_code, 1) << init.out << init.err;
  EXPECT_NE(init.err.find(refusal), std::string::npos) << init.err;
  EXPECT_EQ(SlotColumn(*pg_, h.slot(), "slot_name"), "") << "no slot is created";

  h.Init();  // a plain slot
  CommandResult check = RunRelay(h.config_path(), With({"check"}, kFailover));
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.out.find("problem: " + refusal), std::string::npos) << check.out;

  auto relay = h.StartRelay(kFailover, /*wait_active=*/false);
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find(refusal), std::string::npos) << relay->Output();

  // status works on any server, and says what it cannot show.
  CommandResult status = RunRelay(h.config_path(), {"status"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_NE(status.out.find("  failover:            not available (PostgreSQL " + pg::ServerVersionText(version) +
                            "; failover slots need 17)\n"),
            std::string::npos)
      << status.out;
  status = RunRelay(h.config_path(), {"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  const nlohmann::json j = Json(status.out);
  EXPECT_TRUE(j.contains("failover") && j["failover"].is_null()) << status.out;
  EXPECT_TRUE(j.contains("synced") && j["synced"].is_null()) << status.out;
}

// The wording of a refused replication connection changed in 16 ("permission denied to start WAL sender"): on
// every server the relay stops at once instead of retrying.
class ServerVersions : public SharedServicesTest {};

TEST_F(ServerVersions, RunAsARoleWithoutReplicationStopsAtOnce) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string role = UniqueName("norepl");
  h.Sql("CREATE ROLE " + role + " LOGIN NOREPLICATION NOSUPERUSER");
  auto relay = h.StartRelay({"--set", "source.conninfo=" + pg_->conninfo(h.db()) + " user=" + role},
                            /*wait_active=*/false);
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(relay->Wait(30s), 1) << relay->Output();
  EXPECT_TRUE(std::regex_search(relay->Output(), std::regex("superuser or replication|permission denied to start WAL")))
      << relay->Output();
  (void)pg_->Exec("DROP ROLE IF EXISTS " + role);
}

// ---- A real failover ------------------------------------------------------------------------------------------

// The ids of the outbox rows on `pg`.
std::set<std::string> OutboxIds(const PgServer& pg, const std::string& db) {
  std::set<std::string> ids;
  auto rows = pg.Query("SELECT id::text FROM outbox", db);
  EXPECT_TRUE(rows.ok()) << rows.status();
  for (const PgRow& row : rows.value_or(PgRows{})) ids.insert(row[0].value_or(""));
  return ids;
}

std::set<std::string> RecordIds(const std::vector<KafkaRecord>& records) {
  std::set<std::string> ids;
  for (const KafkaRecord& r : records) {
    const KafkaHeader* h = r.FindHeader("id");
    if (h != nullptr && h->value) ids.insert(*h->value);
  }
  return ids;
}

// Inserts `count` events, a few per transaction.
void InsertEvents(const PgServer& pg, const std::string& db, int count) {
  for (int i = 0; i < count; i += 5) {
    absl::Status st = pg.Exec(
        "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'order', "
        "'k' || n, 'Created', '{}' FROM generate_series(1, 5) n", db);
    ASSERT_TRUE(st.ok()) << st;
  }
}

TEST(Failover, EveryEventArrivesAfterTheStandbyIsPromoted) {
  PgServer* shared = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(shared && broker);
  if (std::string why = WhyNotPg17(*shared); !why.empty()) GTEST_SKIP() << why;
  auto reader = KafkaReader::Create(broker->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();

  // The primary holds logical walsenders back until the standby's physical slot has the WAL, so the relay never
  // publishes a transaction the promoted standby lacks (PROTOCOL.md §7).
  const std::string standby_slot = "standby1";
  auto primary = PgServer::Create({.extra_conf = "synchronized_standby_slots = '" + standby_slot + "'"});
  ASSERT_TRUE(primary.ok()) << primary.status();
  ASSERT_GE((*primary)->VersionNum(), pg::kFailoverMinServerVersion) << "PG_BIN must be PostgreSQL 17's";
  ASSERT_TRUE((*primary)->Exec("SELECT pg_create_physical_replication_slot('" + standby_slot + "')").ok());
  auto standby = PgServer::CreateStandby(**primary, standby_slot,
                                         {.extra_conf = "hot_standby_feedback = on\nsync_replication_slots = on"});
  ASSERT_TRUE(standby.ok()) << standby.status();
  PgServer& old_primary = **primary;
  PgServer& new_primary = **standby;
  ASSERT_TRUE(WaitFor([&] {
    auto v = old_primary.QueryValue("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'");
    return v.ok() && v->value_or("0") == "1";
  }, 60s, "the standby streams"));

  RelayHarness h(&old_primary, broker->bootstrap());
  SetConninfo(h, "\"host=127.0.0.1,127.0.0.1 port=" + std::to_string(old_primary.port()) + "," +
                     std::to_string(new_primary.port()) + " user=postgres dbname=" + h.db() +
                     " target_session_attrs=read-write connect_timeout=5\"");
  CommandResult init = RunRelay(h.config_path(), With({"init", "--create-table"}, kFailover));
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  auto relay = h.StartRelay(kFailover);
  ASSERT_NE(relay, nullptr);

  // Events on the primary, all published; then the standby's copy of the slot catches up with the primary's.
  InsertEvents(old_primary, h.db(), 50);
  const std::set<std::string> before = OutboxIds(old_primary, h.db());
  auto records = (*reader)->ReadUntil(h.Topic("Created"), [&](const std::vector<KafkaRecord>& r) {
    return RecordIds(r).size() >= before.size();
  }, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << "\n" << relay->Output();
  const Lsn confirmed = h.ConfirmedFlush();
  ASSERT_TRUE(WaitFor([&] {
    auto row = new_primary.Query("SELECT synced, confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" +
                                 h.slot() + "'");
    if (!row.ok() || row->empty() || row->front()[0].value_or("f") != "t") return false;
    return Lsn::Parse(row->front()[1].value_or("0/0")).value_or(Lsn(0)) >= confirmed;
  }, 90s, "the standby's synced slot reaches the primary's confirmed position"));

  // More events while the primary dies: some may be published, some may never reach the standby.
  InsertEvents(old_primary, h.db(), 20);
  ASSERT_TRUE(old_primary.Stop("immediate").ok());
  const auto failed_at = std::chrono::steady_clock::now();
  auto promoted = new_primary.QueryValue("SELECT pg_promote(true, 60)");
  ASSERT_TRUE(promoted.ok() && promoted->value_or("") == "t") << promoted.status();

  // The relay finds the new primary (target_session_attrs=read-write) and its synced slot; events go on.
  InsertEvents(new_primary, h.db(), 30);
  const std::set<std::string> expected = OutboxIds(new_primary, h.db());
  ASSERT_GE(expected.size(), before.size() + 30);
  records = (*reader)->ReadUntil(h.Topic("Created"), [&](const std::vector<KafkaRecord>& r) {
    const std::set<std::string> seen = RecordIds(r);
    return std::includes(seen.begin(), seen.end(), expected.begin(), expected.end());
  }, 120s);
  ASSERT_TRUE(records.ok()) << records.status() << "\n" << relay->Output();
  // Nothing the failover lost was published either: the relay saw only WAL the standby had.
  const std::set<std::string> seen = RecordIds(*records);
  std::vector<std::string> phantom;
  std::set_difference(seen.begin(), seen.end(), expected.begin(), expected.end(), std::back_inserter(phantom));
  EXPECT_TRUE(phantom.empty()) << phantom.size() << " published events are not on the promoted standby";
  std::cout << "[ figures  ] " << records->size() << " records, " << seen.size() << " distinct, "
            << expected.size() << " events on the promoted standby (" << before.size() + 50 - expected.size()
            << " lost with the primary); every one arrived "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - failed_at).count()
            << " ms after the primary stopped\n";
  EXPECT_TRUE(relay->Running()) << relay->Output();

  // status on the new primary shows the slot, still a failover slot.
  SetConninfo(h, "\"" + new_primary.conninfo(h.db()) + "\"");
  // A snapshot may fall between two of the relay's sessions (it reconnects after the promotion): the slot must be
  // active again within the deadline.
  CommandResult status;
  nlohmann::json j;
  const bool active = WaitFor([&] {
    status = RunRelay(h.config_path(), {"status", "--json"});
    if (status.exit_code != 0) return false;
    j = nlohmann::json::parse(status.out, nullptr, /*allow_exceptions=*/false);
    return j.is_object() && j["active"] == true;
  }, 30s, "the relay holds the slot on the new primary");
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  ASSERT_TRUE(j.is_object()) << status.out;
  EXPECT_TRUE(active) << status.out << "\n" << relay->Output();
  EXPECT_EQ(j["exists"], true);
  EXPECT_EQ(j["failover"], true) << status.out;
  EXPECT_TRUE(j["synced"].is_boolean()) << status.out;
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
}

}  // namespace
}  // namespace outbox::testing
