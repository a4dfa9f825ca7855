// The test support itself: a real throwaway PostgreSQL and a real Kafka broker.
#include <arpa/inet.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- helpers without services -------------------------------------------------------------------------------

TEST(UtilTest, UniqueNamesAreDistinctAndValidIdentifiers) {
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) names.insert(UniqueName("Slot-Name"));
  EXPECT_EQ(names.size(), 1000u);
  for (const auto& n : names) {
    EXPECT_EQ(n.rfind("slot_name_", 0), 0u) << n;
    EXPECT_LE(n.size(), 63u);
    for (char c : n) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << n;
  }
  EXPECT_LE(UniqueName(std::string(200, 'x')).size(), 63u);
}

TEST(UtilTest, ClosedPortRefusesConnectionsAndCannotBeTaken) {
  std::set<int> ports;
  for (int i = 0; i < 20; ++i) ports.insert(ClosedPort());
  EXPECT_EQ(ports.size(), 20u);
  const int port = *ports.begin();
  ASSERT_GT(port, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  EXPECT_NE(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  close(client);
  // A server that asks for the port (as PostgreSQL, Kafka and the relay do, with SO_REUSEADDR) does not get it.
  int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  int yes = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  EXPECT_NE(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(errno, EADDRINUSE);
  close(server);
}

TEST(UtilTest, WaitForPollsUntilTrueAndFailsWithWhatOnTimeout) {
  int calls = 0;
  EXPECT_TRUE(WaitFor([&] { return ++calls == 3; }, seconds(5), "three calls"));
  EXPECT_EQ(calls, 3);
  EXPECT_NONFATAL_FAILURE(WaitFor([] { return false; }, milliseconds(30), "the impossible"),
                          "waiting for: the impossible");
  EXPECT_FALSE(PollUntil([] { return false; }, milliseconds(10)));
}

TEST(ProcessTest, ExitCodeOutputSignalAndRss) {
  auto dir = MakeTempDir("outbox-proc-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  ProcessOptions options;
  options.argv = {"sh", "-c", "echo out; echo err >&2; echo $OUTBOX_X; exit 3"};
  options.env = {{"OUTBOX_X", "from-env"}};
  options.output_path = *dir + "/log";
  auto child = ChildProcess::Spawn(options);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ((*child)->Wait(seconds(10)), 3);
  EXPECT_EQ((*child)->Output(), "out\nerr\nfrom-env\n");
  EXPECT_GT((*child)->PeakRssKb(), 0);

  options.argv = {"sleep", "60"};
  auto sleeper = ChildProcess::Spawn(options);
  ASSERT_TRUE(sleeper.ok()) << sleeper.status();
  EXPECT_TRUE((*sleeper)->Running());
  EXPECT_GT((*sleeper)->RssKb(), 0);
  EXPECT_GT((*sleeper)->PeakRssKb(), 0);
  EXPECT_EQ((*sleeper)->Wait(milliseconds(20)), std::nullopt);
  ASSERT_TRUE((*sleeper)->Kill(SIGTERM).ok());
  EXPECT_EQ((*sleeper)->Wait(seconds(10)), 128 + SIGTERM);
  EXPECT_EQ((*sleeper)->term_signal(), SIGTERM);
  EXPECT_FALSE((*sleeper)->Running());

  auto result = RunCommand({"sh", "-c", "echo a; echo b >&2; exit 4"}, seconds(10));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 4);
  EXPECT_EQ(result->out, "a\n");
  EXPECT_EQ(result->err, "b\n");
  EXPECT_EQ(RunCommand({"sleep", "60"}, milliseconds(50)).status().code(), absl::StatusCode::kDeadlineExceeded);
  RemoveTree(*dir);
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------------

TEST(PgServerTest, LogicalWalAndAPgoutputSlot) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->QueryValue("SHOW wal_level").value_or(std::nullopt), "logical");
  EXPECT_EQ(pg->QueryValue("SHOW max_replication_slots").value_or(std::nullopt), "20");
  EXPECT_EQ(pg->QueryValue("SHOW max_wal_senders").value_or(std::nullopt), "20");
  EXPECT_EQ(pg->QueryValue("SHOW wal_sender_timeout").value_or(std::nullopt), "1min");
  EXPECT_EQ(pg->QueryValue("SHOW listen_addresses").value_or(std::nullopt), "127.0.0.1");
  if (geteuid() == 0 && !pg->external()) {
    struct stat st {};
    ASSERT_EQ(stat(pg->data_dir().c_str(), &st), 0);
    EXPECT_NE(st.st_uid, 0u) << "PostgreSQL must run as an unprivileged user";
  }

  std::string db = UniqueName("db");
  ASSERT_TRUE(pg->CreateDatabase(db).ok());
  std::string slot = UniqueName("slot");
  ASSERT_TRUE(pg->Exec("CREATE TABLE outbox (id bigserial PRIMARY KEY, payload text)", db).ok());
  ASSERT_TRUE(pg->Exec("CREATE PUBLICATION pub FOR TABLE outbox", db).ok());
  auto created = pg->Query(absl::StrCat("SELECT slot_name, lsn FROM pg_create_logical_replication_slot('", slot,
                                        "', 'pgoutput')"),
                           db);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->size(), 1u);
  EXPECT_EQ((*created)[0][0], slot);

  ASSERT_TRUE(pg->Exec("INSERT INTO outbox (payload) VALUES ('a'), (NULL)", db).ok());
  auto rows = pg->Query("SELECT id, payload FROM outbox ORDER BY id", db);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(PgRow{"1", "a"}, PgRow{"2", std::nullopt}));
  auto changes = pg->QueryValue(absl::StrCat(
      "SELECT count(*) FROM pg_logical_slot_peek_binary_changes('", slot,
      "', NULL, NULL, 'proto_version', '1', 'publication_names', 'pub')"), db);
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(*changes, "5");  // BEGIN, RELATION, INSERT, INSERT, COMMIT
}

TEST(PgServerTest, ReplicationConnectionAndSqlErrors) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto repl = PgConnection::Connect(pg->replication_conninfo());
  ASSERT_TRUE(repl.ok()) << repl.status();
  auto ident = repl->Query("IDENTIFY_SYSTEM");
  ASSERT_TRUE(ident.ok()) << ident.status();
  ASSERT_EQ(ident->size(), 1u);
  EXPECT_EQ((*ident)[0][3], "postgres");

  absl::Status missing = pg->Exec("SELECT * FROM no_such_table");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(SqlState(missing), "42P01");
  // Every statement of a multi-statement Exec is checked.
  EXPECT_EQ(SqlState(pg->Exec("SELECT 1; SELECT 1/0; SELECT 2")), "22012");
}

TEST(PgServerTest, RestartsOnTheSamePortWithItsData) {
  auto pg = PgServer::Create();
  ASSERT_TRUE(pg.ok()) << pg.status();
  const int port = (*pg)->port();
  ASSERT_TRUE((*pg)->Exec("CREATE TABLE t (v int); INSERT INTO t VALUES (42)").ok());
  auto conn = (*pg)->Connect();
  ASSERT_TRUE(conn.ok());

  ASSERT_TRUE((*pg)->Restart("immediate").ok());
  EXPECT_EQ((*pg)->port(), port);
  EXPECT_EQ((*pg)->QueryValue("SELECT v FROM t").value_or(std::nullopt), "42");
  EXPECT_FALSE(conn->Exec("SELECT 1").ok()) << "the old session should be gone";

  ASSERT_TRUE((*pg)->Stop("fast").ok());
  EXPECT_FALSE((*pg)->running());
  EXPECT_FALSE((*pg)->Exec("SELECT 1").ok());
  ASSERT_TRUE((*pg)->Start().ok());
  EXPECT_EQ((*pg)->port(), port);
  EXPECT_EQ((*pg)->QueryValue("SELECT v FROM t").value_or(std::nullopt), "42");
}

// ---- Kafka --------------------------------------------------------------------------------------------------

struct Delivery {
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* d = static_cast<Delivery*>(opaque);
  (msg->err ? d->failed : d->ok).fetch_add(1);
}

// Produces {key, value, headers} records with explicit create timestamps 1000, 2000, ...; waits for the acks.
void ProduceThree(const std::string& bootstrap, const std::string& topic, int first) {
  Delivery delivery;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof(errstr)),
            RD_KAFKA_CONF_OK);
  ASSERT_EQ(rd_kafka_conf_set(conf, "enable.idempotence", "true", errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, &delivery);
  RdKafkaPtr rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr)));
  ASSERT_NE(rk, nullptr) << errstr;
  for (int i = first; i < first + 3; ++i) {
    std::string key = absl::StrCat("key-", i);
    std::string value = absl::StrCat("{\"n\":", i, "}");
    std::string id = absl::StrCat("id-", i);
    rd_kafka_headers_t* headers = rd_kafka_headers_new(3);
    rd_kafka_header_add(headers, "id", -1, id.data(), static_cast<ssize_t>(id.size()));
    rd_kafka_header_add(headers, "empty", -1, "", 0);
    rd_kafka_header_add(headers, "null", -1, nullptr, 0);
    // The third record has a null key.
    const void* key_ptr = i == first + 2 ? nullptr : key.data();
    size_t key_len = i == first + 2 ? size_t{0} : key.size();
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_KEY(key_ptr, key_len),
        RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_HEADERS(headers),
        RD_KAFKA_V_TIMESTAMP(int64_t{1000} * (i + 1)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err) rd_kafka_headers_destroy(headers);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        rd_kafka_poll(rk.get(), 10);
        return delivery.ok + delivery.failed == 3;
      },
      seconds(30), "3 delivery reports"));
  EXPECT_EQ(delivery.failed, 0);
}

void ExpectThree(const std::vector<KafkaRecord>& records, size_t from, int first, const std::string& topic) {
  ASSERT_GE(records.size(), from + 3);
  for (int i = 0; i < 3; ++i) {
    const KafkaRecord& r = records[from + static_cast<size_t>(i)];
    const int n = first + i;
    EXPECT_EQ(r.topic, topic);
    EXPECT_EQ(r.partition, 0);
    EXPECT_EQ(r.offset, static_cast<int64_t>(from) + i);
    if (i == 2) {
      EXPECT_EQ(r.key, std::nullopt);
    } else {
      EXPECT_EQ(r.key, absl::StrCat("key-", n));
    }
    EXPECT_EQ(r.value, absl::StrCat("{\"n\":", n, "}"));
    EXPECT_THAT(r.headers, ElementsAre(KafkaHeader{"id", absl::StrCat("id-", n)}, KafkaHeader{"empty", ""},
                                       KafkaHeader{"null", std::nullopt}));
    ASSERT_NE(r.FindHeader("id"), nullptr);
    EXPECT_EQ(r.FindHeader("missing"), nullptr);
    EXPECT_EQ(r.timestamp_type, TimestampType::kCreateTime);
    EXPECT_EQ(r.timestamp_ms, 1000 * (n + 1));
  }
}

TEST(KafkaTest, ProduceWithHeadersAndReadBack) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  std::string topic = UniqueName("topic");
  ASSERT_TRUE(kafka->CreateTopic(topic, 3).ok());
  EXPECT_EQ(kafka->CreateTopic(topic, 3).code(), absl::StatusCode::kAlreadyExists);
  ProduceThree(kafka->bootstrap(), topic, 0);

  auto reader = KafkaReader::Create(kafka->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->PartitionCount(topic).value_or(0), 3);
  auto records = (*reader)->ReadUntil(topic, 3, seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  ExpectThree(*records, 0, 0, topic);

  // ReadAll stops at the high watermark: nothing more.
  auto all = (*reader)->ReadAll(topic, seconds(30));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 3u);
  // A predicate that does not hold: DeadlineExceeded, with what was read kept.
  auto more = (*reader)->ReadUntil(topic, 4, milliseconds(300));
  EXPECT_EQ(more.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ((*reader)->Records(topic).size(), 3u);

  auto topics = (*reader)->ListTopics();
  ASSERT_TRUE(topics.ok()) << topics.status();
  EXPECT_THAT(*topics, ::testing::Contains(topic));
  EXPECT_EQ((*reader)->ReadUntil(UniqueName("absent"), 1, milliseconds(300)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(KafkaTest, TopicConfigsAndAutoCreatedTopics) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  std::string topic = UniqueName("append_time");
  ASSERT_TRUE(kafka->CreateTopic(topic, 1, {{"message.timestamp.type", "LogAppendTime"}}).ok());
  auto before = std::chrono::system_clock::now();
  ProduceThree(kafka->bootstrap(), topic, 0);
  auto reader = KafkaReader::Create(kafka->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto records = (*reader)->ReadAll(topic, seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  for (const auto& r : *records) {
    EXPECT_EQ(r.timestamp_type, TimestampType::kLogAppendTime);
    EXPECT_GE(r.timestamp_ms,
              std::chrono::duration_cast<milliseconds>(before.time_since_epoch()).count() - 5000);
  }

  // auto.create.topics.enable=true: producing to an unknown topic creates it with one partition.
  std::string autotopic = UniqueName("auto");
  ProduceThree(kafka->bootstrap(), autotopic, 10);
  auto autorecords = (*reader)->ReadUntil(autotopic, 3, seconds(30));
  ASSERT_TRUE(autorecords.ok()) << autorecords.status();
  ExpectThree(*autorecords, 0, 10, autotopic);
  EXPECT_EQ((*reader)->PartitionCount(autotopic).value_or(0), 1);

  ASSERT_TRUE(kafka->DeleteTopic(autotopic).ok());
  EXPECT_EQ((*reader)->PartitionCount(autotopic).status().code(), absl::StatusCode::kNotFound);
}

TEST(KafkaTest, BrokerRestartsOnTheSamePortAndRecordsSurvive) {
  auto kafka = KafkaBroker::Create();
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  const std::string bootstrap = (*kafka)->bootstrap();
  std::string topic = UniqueName("durable");
  ASSERT_TRUE((*kafka)->CreateTopic(topic).ok());
  ProduceThree(bootstrap, topic, 0);
  auto reader = KafkaReader::Create(bootstrap);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->ReadUntil(topic, 3, seconds(30)).ok());

  // Controlled stop and start.
  ASSERT_TRUE((*kafka)->Stop().ok());
  EXPECT_FALSE((*kafka)->running());
  ASSERT_TRUE((*kafka)->Start().ok());
  EXPECT_EQ((*kafka)->bootstrap(), bootstrap);
  ProduceThree(bootstrap, topic, 3);
  auto records = (*reader)->ReadUntil(topic, 6, seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  ExpectThree(*records, 3, 3, topic);

  // A crash, and a fresh reader sees everything from offset 0.
  ASSERT_TRUE((*kafka)->Kill().ok());
  ASSERT_TRUE((*kafka)->Start().ok());
  EXPECT_EQ((*kafka)->bootstrap(), bootstrap);
  auto fresh = KafkaReader::Create(bootstrap);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  auto again = (*fresh)->ReadAll(topic, seconds(30));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->size(), 6u);
  ExpectThree(*again, 0, 0, topic);
  ExpectThree(*again, 3, 3, topic);
}

}  // namespace
}  // namespace outbox::testing
