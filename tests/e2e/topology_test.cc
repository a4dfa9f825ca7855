// Topologies: a time-partitioned outbox published through its root, and a three-broker cluster whose partition
// leaders move under load.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <csignal>
#include <iostream>
#include <regex>
#include <set>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "e2e/loader.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

TEST(Topology, PartitionedOutboxIsRoutedAsItsRootAndSurvivesDroppingAPartition) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  RelayHarness h(pg, broker->bootstrap());
  h.Sql("CREATE TABLE outbox (id uuid NOT NULL, aggregatetype text NOT NULL, aggregateid text NOT NULL, "
        "type text NOT NULL, payload jsonb, created_at timestamptz NOT NULL DEFAULT now(), "
        "PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)");
  h.Sql("CREATE TABLE outbox_2024 PARTITION OF outbox FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')");
  h.Sql("CREATE TABLE outbox_now PARTITION OF outbox FOR VALUES FROM ('2025-01-01') TO ('2100-01-01')");
  // Read the publication name from the config init would use.
  std::string out;
  ASSERT_EQ(h.RunCommand({"init", "--print"}, &out), 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("CREATE PUBLICATION \"([a-z0-9_]+)\"")));
  h.Sql("CREATE PUBLICATION " + m[1].str() +
        " FOR TABLE outbox WITH (publish = 'insert', publish_via_partition_root = true)");
  h.Init();
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  std::set<std::string> ids;
  for (const char* at : {"2024-06-01", "now()"}) {
    const std::string ts = std::string(at) == "now()" ? "now()" : "'" + std::string(at) + "'";
    auto id = h.Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, created_at) VALUES "
                      "(gen_random_uuid(), 'a', 'k', 'Part', '{}', " + ts + ") RETURNING id");
    ids.insert(*id);
  }
  auto reader = KafkaReader::Create(broker->bootstrap());
  ASSERT_TRUE(reader.ok());
  auto first = ReadUntilAll(**reader, h.Topic("Part"), ids, 30s);
  ASSERT_EQ(CheckDelivery(first, ids, {}).lost, 0u) << relay->Output() << HttpGet(h.http_port(), "/metrics").second;
  // Cleanup by dropping an old partition while the relay runs.
  h.Sql("DROP TABLE outbox_2024");
  ids.insert(h.InsertEvent("Part", "k", "{\"after\":\"drop\"}"));
  auto all = ReadUntilAll(**reader, h.Topic("Part"), ids, 30s);
  EXPECT_EQ(CheckDelivery(all, ids, {}).lost, 0u) << relay->Output();
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST(Topology, PartitionLeadersMovingUnderLoadLoseNothingAndKeepKeyOrder) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  char errstr[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), errstr, sizeof errstr);
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, 3);
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
  {
    RelayHarness h(pg, bootstrap);
    const std::string topic = h.Topic("Moved");
    ASSERT_EQ(rd_kafka_mock_topic_create(mc, h.checkpoint_topic().c_str(), 1, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_mock_topic_create(mc, topic.c_str(), 3, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
    h.Init();
    auto relay = h.StartRelay();
    ASSERT_NE(relay, nullptr);
    Loader loader(pg, h.db(), "Moved");
    loader.Start();
    for (int round = 0; round < 6; ++round) {
      PollUntil([] { return false; }, 400ms);
      for (int p = 0; p < 3; ++p) {
        ASSERT_EQ(rd_kafka_mock_partition_set_leader(mc, topic.c_str(), p, 1 + (p + round) % 3),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
      }
    }
    loader.Stop();
    ExpectLoadHealthy(loader, 200, "leader moves");
    const auto committed = loader.committed();
    auto reader = KafkaReader::Create(bootstrap);
    ASSERT_TRUE(reader.ok());
    auto records = ReadUntilAll(**reader, topic, committed, 60s);
    const DeliveryCheck c = CheckDelivery(records, committed, loader.uncertain());
    EXPECT_EQ(c.lost, 0u) << relay->Output() << HttpGet(h.http_port(), "/metrics").second;
    EXPECT_EQ(c.order_violations, 0u);
    std::cout << "[ figures  ] leader moves: " << committed.size() << " events, " << c.duplicates << " duplicates\n";
    ASSERT_TRUE(relay->Kill(SIGTERM).ok());
    EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  }
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
}

}  // namespace
}  // namespace outbox::testing
