// Integration: a throwaway PostgreSQL and librdkafka's in-process mock cluster (created here, in the test
// process; the relay binary connects to it over TCP), for broker faults the real broker cannot inject on cue.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <csignal>

#include "e2e/harness.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// A one-broker mock cluster owned by a dummy producer handle.
class MockCluster {
 public:
  MockCluster() {
    char errstr[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    mc_ = rd_kafka_mock_cluster_new(rk_, 1);
  }
  ~MockCluster() {
    if (mc_) rd_kafka_mock_cluster_destroy(mc_);
    if (rk_) rd_kafka_destroy(rk_);
  }
  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(mc_); }
  void SetDown() { ASSERT_EQ(rd_kafka_mock_broker_set_down(mc_, 1), RD_KAFKA_RESP_ERR_NO_ERROR); }
  void SetUp() { ASSERT_EQ(rd_kafka_mock_broker_set_up(mc_, 1), RD_KAFKA_RESP_ERR_NO_ERROR); }
  // The mock cluster has no controller for CreateTopics: create topics directly.
  void CreateTopic(const std::string& name, int partitions = 1) {
    ASSERT_EQ(rd_kafka_mock_topic_create(mc_, name.c_str(), partitions, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
};

TEST(RelayMock, EventsArriveThroughTheMockCluster) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockCluster mock;
  RelayHarness h(pg, mock.bootstrap());
  mock.CreateTopic(h.checkpoint_topic());
  h.Init();
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  for (int i = 0; i < 5; ++i) h.InsertEvent("Mocked", "k" + std::to_string(i), "{}");
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(h.Topic("Mocked"), 5, 30s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(records->size(), 5u);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// With one record held unacknowledged (the broker down) and heavy writes to another table for several status
// intervals, confirmed_flush_lsn stays below that transaction's end, also across a rewind (a lost replication
// connection); once the broker is back the record arrives and the slot moves past it.
TEST(RelayMock, UnacknowledgedRecordHoldsConfirmedFlushBelowItsTransaction) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockCluster mock;
  // No checkpoint store: only the ack tracker may hold the slot back in this test.
  RelayHarness h(pg, mock.bootstrap());
  mock.CreateTopic(h.checkpoint_topic());
  h.Init();
  h.Sql("CREATE TABLE busy (id bigserial PRIMARY KEY, filler text)");
  auto relay = h.StartRelay({"--set", "source.checkpoint=none", "--set", "delivery.release_slot_after_ms=600000"});
  ASSERT_NE(relay, nullptr);
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());

  // Positive control in this very configuration: a quiet outbox lets the slot follow the WAL.
  h.InsertEvent("Held", "first", "{}");
  ASSERT_TRUE((*reader)->ReadUntil(h.Topic("Held"), 1, 30s).ok());
  h.Sql("INSERT INTO busy (filler) SELECT repeat('x', 100) FROM generate_series(1, 5000)");
  const Lsn before = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= before; }, 30s, "idle advance before the outage"));

  mock.SetDown();
  const std::string held = h.InsertEvent("Held", "held", "{}");
  Lsn max_confirmed = h.ConfirmedFlush();
  const auto write_and_sample = [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      h.Sql("INSERT INTO busy (filler) SELECT repeat('y', 100) FROM generate_series(1, 5000)");
      max_confirmed = std::max(max_confirmed, h.ConfirmedFlush());
      PollUntil([] { return false; }, 100ms);  // let several 200 ms status intervals pass
    }
  };
  write_and_sample(20);
  // A rewind: the replication connection is lost; the relay reconnects and receives the held transaction again.
  ASSERT_TRUE(pg->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" +
                       h.slot() + "'").ok());
  ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 30s, "the relay reconnects"));
  write_and_sample(20);
  const Lsn wal_during_outage = h.CurrentWal();

  mock.SetUp();
  auto records = (*reader)->ReadUntil(
      h.Topic("Held"), [&](const std::vector<KafkaRecord>& rs) {
        return std::any_of(rs.begin(), rs.end(), [&](const KafkaRecord& r) { return r.key == "held"; });
      },
      60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  Lsn held_commit;
  for (const KafkaRecord& r : *records) {
    if (r.key == "held") held_commit = *Lsn::Parse(r.FindHeader("source_lsn")->value.value());
  }
  ASSERT_FALSE(held_commit.IsZero());
  // The commit record starts at held_commit and ends after it: the slot never passed its start.
  EXPECT_LE(max_confirmed, held_commit) << "confirmed " << max_confirmed.ToString() << " passed the held "
                                        << "transaction committing at " << held_commit.ToString();
  EXPECT_GT(wal_during_outage, held_commit) << "the load wrote WAL after the held transaction";
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() > held_commit; }, 30s, "the slot moves past the record"));
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

}  // namespace
}  // namespace outbox::testing
