// examples/idempotent_consumer.cc for real: a loader inserts outbox events while the relay and the consumer are
// each killed with SIGKILL and restarted a few times, and copies of already-delivered records are produced again
// (what a relay rewind delivers). Every event must end up applied exactly once in the consumer's database.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kAccounts = 10;
constexpr int kInjectedDuplicates = 25;
constexpr int kPartitions = 3;

// Inserts deposit events (1 to 3 per transaction) until stopped. Runs on its own thread with its own connection.
class Loader {
 public:
  Loader(PgServer* pg, std::string db) : pg_(pg), db_(std::move(db)) {}
  ~Loader() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  int committed() const { return committed_.load(); }
  const std::string& error() const { return error_; }

 private:
  void Run() {
    auto conn = pg_->Connect(db_);
    if (!conn.ok()) {
      error_ = std::string(conn.status().message());
      return;
    }
    std::mt19937 rng(42);
    while (!stop_.load()) {
      const int events = 1 + static_cast<int>(rng() % 3);
      std::string sql = "BEGIN;";
      for (int i = 0; i < events; ++i) {
        const std::string account = "acct-" + std::to_string(rng() % kAccounts);
        const std::string amount = std::to_string(1 + rng() % 100);
        sql += "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), "
               "'account', '" + account + "', 'Deposited', '{\"account\": \"" + account + "\", \"amount\": " +
               amount + "}');";
      }
      sql += "COMMIT;";
      absl::Status st = conn->Exec(sql);
      if (!st.ok()) {
        error_ = std::string(st.message());
        return;
      }
      committed_ += events;
      std::this_thread::sleep_for(12ms);  // about 150 events/s: as fast as the example consumer applies them
    }
  }

  PgServer* pg_;
  std::string db_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> committed_{0};
  std::string error_;
};

class IdempotentConsumerE2E : public SharedServicesTest {
 protected:
  std::unique_ptr<ChildProcess> StartConsumer(const RelayHarness& h, const std::string& group,
                                              const std::string& topic) {
    ProcessOptions o;
    o.argv = {OUTBOX_EXAMPLE_CONSUMER_BIN, "--bootstrap", broker_->bootstrap(), "--group", group, "--topic", topic,
              "--conninfo", pg_->conninfo(h.db()), "--create-tables", "--instance-id", "consumer-1",
              "--session-timeout-ms", "6000"};
    o.output_path = h.dir() + "/consumer.log";  // appended by every run
    auto child = ChildProcess::Spawn(o);
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? std::move(*child) : nullptr;
  }

  int64_t Count(const RelayHarness& h, const std::string& sql) {
    std::optional<std::string> v = h.Value(sql);
    return v ? std::stoll(*v) : -1;
  }
};

// Produces copies (key, value, headers) of `records` again, as a relay that rewinds would.
void ProduceAgain(const std::string& bootstrap, const std::vector<KafkaRecord>& records) {
  auto producer = NewKafkaClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                                     {"partitioner", "murmur2_random"}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (const KafkaRecord& r : records) {
    rd_kafka_headers_t* headers = rd_kafka_headers_new(r.headers.size());
    for (const KafkaHeader& header : r.headers) {
      rd_kafka_header_add(headers, header.name.c_str(), -1, header.value ? header.value->data() : nullptr,
                          header.value ? static_cast<ssize_t>(header.value->size()) : 0);
    }
    const void* key = r.key ? r.key->data() : nullptr;
    const size_t key_size = r.key ? r.key->size() : 0;
    void* value = r.value ? const_cast<char*>(r.value->data()) : nullptr;
    const size_t value_size = r.value ? r.value->size() : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer->get(), RD_KAFKA_V_TOPIC(r.topic.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_VALUE(value, value_size), RD_KAFKA_V_HEADERS(headers),
        RD_KAFKA_V_END);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }
  ASSERT_EQ(rd_kafka_flush(producer->get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

// True when `group` has committed, for every partition of `topic`, the offset after the partition's last record.
bool GroupCaughtUp(const std::string& bootstrap, const std::string& group, const std::string& topic, int partitions) {
  // A consumer handle of the group that never subscribes: it reads the group's offsets without joining.
  auto client = NewKafkaClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap}, {"group.id", group}});
  if (!client.ok()) return false;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  bool caught_up = rd_kafka_committed(client->get(), list, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int p = 0; caught_up && p < partitions; ++p) {
    int64_t low = 0, high = 0;
    caught_up = rd_kafka_query_watermark_offsets(client->get(), topic.c_str(), p, &low, &high, 5000) ==
                    RD_KAFKA_RESP_ERR_NO_ERROR &&
                list->elems[p].offset == high;
  }
  rd_kafka_topic_partition_list_destroy(list);
  return caught_up;
}

size_t CountLines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

TEST_F(IdempotentConsumerE2E, EveryEventIsAppliedExactlyOnceThroughRelayAndConsumerKills) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string topic = h.Topic("Deposited");
  ASSERT_TRUE(broker_->CreateTopic(topic, kPartitions).ok());  // several partitions: per-key order, and a real group
  const std::string group = UniqueName("consumer");

  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  auto consumer = StartConsumer(h, group, topic);
  ASSERT_NE(consumer, nullptr);
  // The consumer's tables exist before the first kill.
  ASSERT_TRUE(WaitFor([&] { return h.Value("SELECT to_regclass('applied_events') IS NOT NULL") == "t"; }, 30s,
                      "the consumer created its tables"));

  Loader loader(pg_, h.db());
  loader.Start();
  // Kill -9 the relay and the consumer, each three times, while events keep coming.
  int relay_kills = 0, consumer_kills = 0;
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(2s);
    ASSERT_TRUE(relay->Kill(SIGKILL).ok());
    relay->Wait(10s);
    ++relay_kills;
    std::this_thread::sleep_for(300ms);
    relay = h.StartRelay();
    ASSERT_NE(relay, nullptr);

    std::this_thread::sleep_for(2s);
    ASSERT_TRUE(consumer->Kill(SIGKILL).ok());
    consumer->Wait(10s);
    ++consumer_kills;
    std::this_thread::sleep_for(300ms);
    consumer = StartConsumer(h, group, topic);
    ASSERT_NE(consumer, nullptr);
  }
  std::this_thread::sleep_for(2s);
  loader.Stop();
  ASSERT_EQ(loader.error(), "");
  const int64_t inserted = Count(h, "SELECT count(*) FROM outbox");
  ASSERT_EQ(inserted, loader.committed());
  ASSERT_GT(inserted, 1000);

  // Copies of records already delivered, as a relay that rewinds after a crash sends them.
  auto reader = KafkaReader::Create(broker_->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto first = (*reader)->ReadUntil(topic, kInjectedDuplicates, 60s);
  ASSERT_TRUE(first.ok()) << first.status();
  ProduceAgain(broker_->bootstrap(),
               std::vector<KafkaRecord>(first->begin(), first->begin() + kInjectedDuplicates));

  // Drain: every inserted event applied, and every injected copy seen and skipped.
  ASSERT_TRUE(WaitFor([&] { return Count(h, "SELECT count(*) FROM processed_events") == inserted; }, 60s,
                      "the consumer processed every event"))
      << Count(h, "SELECT count(*) FROM processed_events") << " of " << inserted << "\n"
      << TailOfFile(h.dir() + "/consumer.log");
  ASSERT_TRUE(WaitFor([&] { return GroupCaughtUp(broker_->bootstrap(), group, topic, kPartitions); }, 30s,
                      "the consumer committed every record's offset, the injected copies' too"));
  ASSERT_TRUE(consumer->Kill(SIGTERM).ok());
  EXPECT_EQ(consumer->Wait(30s), 0) << TailOfFile(h.dir() + "/consumer.log");
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();

  // Exactly once: one applied row per inserted event, none twice, none missing, and the balances add up.
  EXPECT_EQ(Count(h, "SELECT count(*) FROM applied_events"), inserted);
  EXPECT_EQ(Count(h, "SELECT count(*) FROM (SELECT event_id FROM applied_events GROUP BY event_id "
                     "HAVING count(*) > 1) twice"),
            0);
  EXPECT_EQ(Count(h, "SELECT count(*) FROM outbox o WHERE NOT EXISTS "
                     "(SELECT 1 FROM applied_events a WHERE a.event_id = o.id::text)"),
            0);
  EXPECT_EQ(Count(h, "SELECT count(*) FROM (SELECT payload->>'account' AS account, "
                     "sum((payload->>'amount')::bigint) AS total FROM outbox GROUP BY 1) e "
                     "FULL JOIN account_balance b USING (account) WHERE b.total IS DISTINCT FROM e.total"),
            0);

  // What was delivered: at least every event once plus the copies (a relay rewind may have added more).
  auto all = (*reader)->ReadAll(topic, 60s);
  ASSERT_TRUE(all.ok()) << all.status();
  std::set<std::string> ids;
  for (const KafkaRecord& r : *all) {
    const KafkaHeader* id = r.FindHeader("id");
    ASSERT_NE(id, nullptr);
    ids.insert(id->value.value_or(""));
  }
  EXPECT_EQ(static_cast<int64_t>(ids.size()), inserted);
  EXPECT_GE(all->size(), ids.size() + kInjectedDuplicates);
  auto log = ReadFile(h.dir() + "/consumer.log");
  ASSERT_TRUE(log.ok());
  const size_t skipped = CountLines(*log, "already applied, skipped");
  // Every copy that reached the consumer was recognized (more when a kill fell between its commits).
  EXPECT_GE(skipped, all->size() - ids.size());
  std::cout << "events " << inserted << ", records delivered " << all->size() << " (" << all->size() - ids.size()
            << " duplicates, " << kInjectedDuplicates << " injected), duplicates skipped by the consumer " << skipped
            << ", relay kills " << relay_kills << ", consumer kills " << consumer_kills << "\n";
  RecordProperty("events", static_cast<int>(inserted));
  RecordProperty("records_delivered", static_cast<int>(all->size()));
  RecordProperty("duplicates_skipped", static_cast<int>(skipped));
}

}  // namespace
}  // namespace outbox::testing
