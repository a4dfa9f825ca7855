// Migration from Debezium end to end: `outbox-relay run -c application.properties` against a real PostgreSQL and
// Kafka writes the records Debezium's Outbox Event Router writes for the same rows (topic outbox.event.<aggregate
// type>, key = aggregateid, value = the payload's text, header id = the event id, plus the configured additional
// header). When Debezium itself is installed (bench/install-bench-deps.sh puts its Postgres connector next to
// Kafka's jars), the same connector file also runs in Kafka Connect and both outputs are compared record by record.
#include <gtest/gtest.h>

#include <cstdlib>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// One record as Debezium's documentation describes it.
struct Expected {
  std::string topic;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::optional<std::string> event_type;  // the `eventType` header (table.fields.additional.placement)
  bool operator==(const Expected&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Expected& e) {
  return os << "{topic " << e.topic << ", key " << e.key.value_or("(null)") << ", value "
            << e.value.value_or("(null)") << ", eventType " << e.event_type.value_or("(none)") << "}";
}

std::optional<std::string> HeaderOf(const KafkaRecord& r, const std::string& name) {
  const KafkaHeader* h = r.FindHeader(name);
  return h ? h->value : std::nullopt;
}

class DebeziumE2E : public SharedServicesTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SharedServicesTest::SetUp());
    db_ = UniqueName("dbz");
    ASSERT_TRUE(pg_->CreateDatabase(db_).ok());
    auto dir = MakeTempDir("debezium-e2e-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *dir;
    relay_slot_ = UniqueName("relay_slot");
    publication_ = UniqueName("pub");
    // Aggregate types unique to this test, so that its topics (outbox.event.<type>) are its own.
    order_type_ = UniqueName("order");
    customer_type_ = UniqueName("customer");
  }

  void TearDown() override {
    for (const std::string& slot : slots_) {
      (void)pg_->Exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" +
                      slot + "' AND NOT active");
    }
    if (!HasFailure()) RemoveTree(dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // `outbox-relay <args>` to completion.
  int Relay(const std::vector<std::string>& args, std::string* output) {
    std::vector<std::string> argv = {OUTBOX_RELAY_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = RunCommand(argv, 60s);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return -1;
    *output = result->out + result->err;
    return result->exit_code;
  }

  std::unique_ptr<ChildProcess> Spawn(std::vector<std::string> argv, const std::string& log) {
    ProcessOptions o;
    o.argv = std::move(argv);
    o.output_path = dir_ + "/" + log;
    auto child = ChildProcess::Spawn(o);
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? std::move(*child) : nullptr;
  }

  bool SlotActive(const std::string& slot) {
    auto v = pg_->QueryValue("SELECT active FROM pg_replication_slots WHERE slot_name = '" + slot + "'", db_);
    return v.ok() && *v == "t";
  }

  // Commits events in three transactions (one of three events over both aggregate types), rolls one back, and
  // returns the records Debezium documents for the committed rows, by event id.
  std::map<std::string, Expected> InsertEvents() {
    const auto row = [](const std::string& type, const std::string& id, const std::string& event,
                        const std::string& payload) {
      return "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), '" +
             type + "', '" + id + "', '" + event + "', " + payload + ");";
    };
    const std::string order = order_type_, customer = customer_type_;
    const std::string first_payload = R"('{"id": 1, "lines": [{"sku": "A-1", "qty": 2}], "note": "Zoë ☕"}')";
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-1", "OrderCreated", first_payload) + "COMMIT;", db_).ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-1", "OrderPaid", "'{\"amount\": 12.50}'") +
                              row(customer, "c-7", "CustomerRegistered", "'{\"name\": \"Ann\"}'") +
                              row(order, "o-2", "OrderCreated", "'{\"id\": 2}'") + "COMMIT;",
                          db_)
                    .ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-3", "OrderCreated", "'{\"id\": 3}'") + "ROLLBACK;", db_).ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-2", "OrderCancelled", "NULL") + "COMMIT;", db_).ok());

    std::map<std::string, Expected> expected;
    auto rows = pg_->Query("SELECT id, aggregatetype, aggregateid, type, payload::text FROM outbox", db_);
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const PgRow& r : rows.value_or(PgRows{})) {
      expected[*r[0]] = Expected{.topic = "outbox.event." + *r[1], .key = r[2], .value = r[4], .event_type = r[3]};
    }
    EXPECT_EQ(expected.size(), 5u);
    return expected;
  }

  std::string OrderTopic() const { return "outbox.event." + order_type_; }
  std::string CustomerTopic() const { return "outbox.event." + customer_type_; }

  // The records of both topics whose `source_lsn` header is present (`relay`) or absent (Debezium's), by id,
  // once the order topic has `order_count` and the customer topic `customer_count` such records.
  std::map<std::string, Expected> ReadRecords(bool relay, size_t order_count, size_t customer_count) {
    std::map<std::string, Expected> got;
    for (const auto& [topic, count] : {std::pair{OrderTopic(), order_count}, {CustomerTopic(), customer_count}}) {
      const auto mine = [relay](const KafkaRecord& r) { return (r.FindHeader("source_lsn") != nullptr) == relay; };
      auto records = reader_->ReadUntil(
          topic,
          [&, want = count](const std::vector<KafkaRecord>& rs) {
            return static_cast<size_t>(std::count_if(rs.begin(), rs.end(), mine)) >= want;
          },
          90s);
      EXPECT_TRUE(records.ok()) << topic << ": " << records.status();
      for (const KafkaRecord& r : records.value_or(std::vector<KafkaRecord>{})) {
        if (!mine(r)) continue;
        const std::optional<std::string> id = HeaderOf(r, "id");
        EXPECT_TRUE(id.has_value()) << "a record without an id header in " << topic;
        EXPECT_FALSE(got.contains(id.value_or(""))) << "event " << id.value_or("") << " twice";
        got[id.value_or("")] =
            Expected{.topic = r.topic, .key = r.key, .value = r.value, .event_type = HeaderOf(r, "eventType")};
      }
    }
    return got;
  }

  std::string db_, dir_, relay_slot_, publication_, order_type_, customer_type_;
  std::vector<std::string> slots_;
};

TEST_F(DebeziumE2E, RelayRunWithApplicationPropertiesWritesTheRecordsDebeziumDocuments) {
  slots_.push_back(relay_slot_);
  const std::string config = Write("application.properties", R"(# A Debezium Server configuration of the outbox.
debezium.sink.type=kafka
debezium.sink.kafka.producer.bootstrap.servers=)" + broker_->bootstrap() + R"(
debezium.sink.kafka.producer.key.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.sink.kafka.producer.value.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector
debezium.source.offset.storage.file.filename=data/offsets.dat
debezium.source.offset.flush.interval.ms=0
debezium.source.database.hostname=127.0.0.1
debezium.source.database.port=)" + std::to_string(pg_->port()) + R"(
debezium.source.database.user=postgres
debezium.source.database.password=${PGPASSWORD:not-needed-with-trust}
debezium.source.database.dbname=)" + db_ + R"(
debezium.source.topic.prefix=)" + db_ + R"(
debezium.source.plugin.name=pgoutput
debezium.source.slot.name=)" + relay_slot_ + R"(
debezium.source.publication.name=)" + publication_ + R"(
debezium.source.table.include.list=public.outbox
debezium.source.snapshot.mode=no_data
debezium.transforms=outbox
debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
debezium.transforms.outbox.table.fields.additional.placement=type:header:eventType
debezium.format.key=simplestring
debezium.format.value=simplestring
# The relay's own settings.
outbox-relay.source.checkpoint_topic=)" + db_ + R"(.checkpoints
outbox-relay.source.status_interval_ms=200
outbox-relay.http.listen=127.0.0.1:0
)");

  std::string output;
  ASSERT_EQ(Relay({"init", "--create-table", "-c", config}, &output), 0) << output;
  auto relay = Spawn({OUTBOX_RELAY_BIN, "run", "-c", config}, "relay.log");
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return SlotActive(relay_slot_) || !relay->Running(); }, 60s, "the relay holds the slot"));
  ASSERT_TRUE(relay->Running()) << relay->Output();

  const std::map<std::string, Expected> expected = InsertEvents();
  const std::map<std::string, Expected> got = ReadRecords(/*relay=*/true, 4, 1);
  EXPECT_EQ(got, expected);
  // The Debezium keys with no effect were accepted, each with a warning naming it.
  for (const std::string key : {"debezium.source.offset.storage.file.filename", "debezium.source.topic.prefix",
                                "debezium.source.snapshot.mode"}) {
    EXPECT_NE(relay->Output().find(key + ": no effect"), std::string::npos) << key << "\n" << relay->Output();
  }
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
  // Nothing else reached the topics (the rolled-back event in particular).
  for (const std::string& topic : {OrderTopic(), CustomerTopic()}) {
    auto all = reader_->ReadAll(topic, 30s);
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(all->size(), topic == OrderTopic() ? 4u : 1u) << topic;
  }
}

// Where bench/install-bench-deps.sh put Kafka Connect's jars and Debezium's Postgres connector ("" when absent).
std::pair<std::string, std::string> KafkaLibAndDebeziumPlugins() {
  auto result = RunCommand({"bash", "-c",
                            "source \"$0/scripts/versions.sh\" && source \"$0/bench/bench-versions.sh\" && "
                            "echo \"$DEBEZIUM_CONNECT_LIB\" && echo \"$DEBEZIUM_HOME/plugins\"",
                            SourceDir()},
                           30s);
  if (!result.ok() || result->exit_code != 0) return {"", ""};
  std::vector<std::string> lines = absl::StrSplit(result->out, '\n', absl::SkipEmpty());
  if (lines.size() < 2 || !std::filesystem::is_directory(lines[1] + "/debezium-connector-postgres") ||
      !std::filesystem::is_directory(lines[0])) {
    return {"", ""};
  }
  return {lines[0], lines[1]};
}

TEST_F(DebeziumE2E, TheSameConnectorFileGivesTheSameRecordsInDebeziumAndInTheRelay) {
  const auto [kafka_lib, plugins] = KafkaLibAndDebeziumPlugins();
  if (plugins.empty()) {
    // scripts/test.sh installs Debezium and sets OUTBOX_REQUIRE_DEBEZIUM=1: there, a missing install fails.
    const char* required = std::getenv("OUTBOX_REQUIRE_DEBEZIUM");
    if (required != nullptr && std::string(required) == "1") FAIL() << "Debezium is not installed (bench/install-bench-deps.sh)";
    GTEST_SKIP() << "Debezium is not installed (bench/install-bench-deps.sh)";
  }
  const std::string debezium_slot = UniqueName("dbz_slot");
  slots_.push_back(relay_slot_);
  slots_.push_back(debezium_slot);

  // A Kafka Connect connector config, read as is by Kafka Connect and by the relay.
  const std::string connector = Write("outbox-connector.properties", R"(name=)" + db_ + R"(
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=127.0.0.1
database.port=)" + std::to_string(pg_->port()) + R"(
database.user=postgres
database.password=not-needed-with-trust
database.dbname=)" + db_ + R"(
topic.prefix=)" + db_ + R"(
slot.name=)" + debezium_slot + R"(
publication.name=)" + publication_ + R"(
publication.autocreate.mode=disabled
snapshot.mode=no_data
table.include.list=public.outbox
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.table.fields.additional.placement=type:header:eventType
)");
  const std::vector<std::string> relay_sets = {
      "--set", "source.slot=" + relay_slot_,
      "--set", "kafka.bootstrap.servers=" + broker_->bootstrap(),
      "--set", "source.checkpoint_topic=" + db_ + ".checkpoints",
      "--set", "source.status_interval_ms=200",
      "--set", "http.listen=127.0.0.1:0"};
  const auto relay_args = [&](std::vector<std::string> args) {
    args.insert(args.end(), relay_sets.begin(), relay_sets.end());
    return args;
  };
  // The table, the publication (Debezium uses it too) and the relay's slot, before any event.
  std::string output;
  ASSERT_EQ(Relay(relay_args({"init", "--create-table", "-c", connector}), &output), 0) << output;

  const std::string worker = Write("connect-worker.properties", "bootstrap.servers=" + broker_->bootstrap() + R"(
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=)" + dir_ + R"(/connect.offsets
offset.flush.interval.ms=500
plugin.path=)" + plugins + R"(
listeners=http://127.0.0.1:0
)");
  auto connect = Spawn({"java", "-Xms128m", "-Xmx512m", "-cp", kafka_lib + "/*",
                        "org.apache.kafka.connect.cli.ConnectStandalone", worker, connector},
                       "connect.log");
  ASSERT_NE(connect, nullptr);
  ASSERT_TRUE(WaitFor([&] { return SlotActive(debezium_slot) || !connect->Running(); }, 120s,
                      "Debezium streams from its slot"))
      << TailOfFile(dir_ + "/connect.log");
  ASSERT_TRUE(connect->Running()) << TailOfFile(dir_ + "/connect.log");

  const std::map<std::string, Expected> expected = InsertEvents();
  const std::map<std::string, Expected> debezium = ReadRecords(/*relay=*/false, 4, 1);
  ASSERT_TRUE(connect->Kill(SIGTERM).ok());
  if (!connect->Wait(30s)) {
    ASSERT_TRUE(connect->Kill(SIGKILL).ok());
  }

  auto relay = Spawn(relay_args({OUTBOX_RELAY_BIN, "run", "-c", connector}), "relay.log");
  ASSERT_NE(relay, nullptr);
  const std::map<std::string, Expected> relayed = ReadRecords(/*relay=*/true, 4, 1);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();

  EXPECT_EQ(debezium, expected) << "Debezium did not write what its documentation says";
  EXPECT_EQ(relayed, debezium);
}

}  // namespace
}  // namespace outbox::testing
