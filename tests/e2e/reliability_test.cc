// Fault tests (SPEC.md §5): kill -9 under load, PostgreSQL stops and restarts, lost replication connections,
// broker outages, standby takeover, fatal producer errors, a million-row transaction within the memory bounds.
// Chaos cycle counts grow with OUTBOX_CHAOS_CYCLES (CI runs the short form).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <csignal>
#include <iostream>
#include <random>
#include <set>
#include <regex>

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

void Sleep(std::chrono::milliseconds d) { PollUntil([] { return false; }, d); }

std::unique_ptr<KafkaReader> Reader(const std::string& bootstrap) {
  auto r = KafkaReader::Create(bootstrap);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : nullptr;
}

void ExpectCleanDelivery(const DeliveryCheck& c, const std::string& what) {
  EXPECT_EQ(c.lost, 0u) << what;
  EXPECT_EQ(c.unexpected, 0u) << what;
  EXPECT_EQ(c.order_violations, 0u) << what;
  std::cout << "[ figures  ] " << what << ": " << c.records << " records, " << c.lost << " lost, " << c.duplicates
            << " duplicates\n";
}

TEST(Reliability, KillNineAtRandomMomentsUnderLoadLosesNothing) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  const int cycles = EnvInt("OUTBOX_CHAOS_CYCLES", 20);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  const std::string topic = h.Topic("Chaos");
  ASSERT_TRUE(broker->CreateTopic(topic, 1).ok());
  auto reader = Reader(broker->bootstrap());
  Loader loader(pg, h.db(), "Chaos");
  loader.Start();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::cout << "[ figures  ] chaos seed " << seed << ", " << cycles << " cycles\n";
  struct Cycle {
    size_t end_offset;  // records in the topic after the kill
    Lsn confirmed;      // confirmed_flush_lsn right after the kill
  };
  std::vector<Cycle> history;
  const auto as_role = h.AsLeastPrivilegeRole();  // the relay runs as the least-privilege role
  for (int i = 0; i < cycles; ++i) {
    auto relay = h.StartRelay(as_role);
    ASSERT_NE(relay, nullptr);
    Sleep(std::chrono::milliseconds(200 + rng() % 1300));  // the kill moment: random, under load
    ASSERT_TRUE(relay->Kill(SIGKILL).ok());
    ASSERT_TRUE(relay->Wait(10s).has_value());
    const Lsn confirmed = h.ConfirmedFlush();
    history.push_back(Cycle{StableCount(*reader, topic), confirmed});
  }
  loader.Stop();
  const auto committed = loader.committed();
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  auto records = ReadUntilAll(*reader, topic, committed, 120s);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();

  const DeliveryCheck c = CheckDelivery(records, committed, loader.uncertain());
  ExpectCleanDelivery(c, "kill -9 chaos (" + std::to_string(committed.size()) + " events written)");
  // Each duplicate was produced by a run that started from the slot at the previous kill's confirmed position:
  // its transaction commits at or after it.
  std::set<std::string> seen;
  for (size_t o = 0; o < records.size(); ++o) {
    const std::string id = HeaderValue(records[o], "id");
    if (seen.insert(id).second) continue;
    Lsn bound;
    for (const Cycle& cy : history) {
      if (cy.end_offset <= o) bound = cy.confirmed;
    }
    const Lsn source = *Lsn::Parse(HeaderValue(records[o], "source_lsn"));
    EXPECT_GE(source, bound) << "event " << id << " was resent although its transaction (" << source.ToString()
                             << ") is before the confirmed position " << bound.ToString();
  }
  // The confirmed position advances across cycles (a relay that never confirms fails here).
  for (size_t i = 1; i < history.size(); ++i) EXPECT_GE(history[i].confirmed, history[i - 1].confirmed);
  EXPECT_GT(history.back().confirmed, history.front().confirmed);
}

TEST(Reliability, PostgresStoppedImmediatelyMidStreamLosesNothing) {
  auto pg = PgServer::Create();
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  RelayHarness h(pg->get(), broker->bootstrap());
  h.Init();
  auto reader = Reader(broker->bootstrap());
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  Loader loader(pg->get(), h.db(), "Crash");
  loader.Start();
  const int cycles = EnvInt("OUTBOX_PG_CRASH_CYCLES", 3);
  for (int i = 0; i < cycles; ++i) {
    Sleep(800ms);
    ASSERT_TRUE((*pg)->Stop(i % 2 == 0 ? "immediate" : "fast").ok());
    ASSERT_TRUE((*pg)->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 60s, "the relay reconnects after the restart"));
  }
  Sleep(500ms);
  loader.Stop();
  const auto committed = loader.committed();
  auto records = ReadUntilAll(*reader, h.Topic("Crash"), committed, 90s);
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectCleanDelivery(CheckDelivery(records, committed, loader.uncertain()),
                      "PostgreSQL immediate/fast stops (" + std::to_string(committed.size()) + " events)");
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST(Reliability, LostReplicationConnectionsResumeWithoutLoss) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto reader = Reader(broker->bootstrap());
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  Loader loader(pg, h.db(), "Cut");
  loader.Start();
  for (int i = 0; i < 3; ++i) {
    Sleep(500ms);
    ASSERT_TRUE(pg->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" +
                         h.slot() + "' AND active").ok());
    ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 30s, "the relay reconnects"));
  }
  loader.Stop();
  const auto committed = loader.committed();
  auto records = ReadUntilAll(*reader, h.Topic("Cut"), committed, 60s);
  ExpectCleanDelivery(CheckDelivery(records, committed, loader.uncertain()), "walsender terminated 3 times");
  auto [code, metrics] = HttpGet(h.http_port(), "/metrics");
  EXPECT_EQ(code, 200);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics, m, std::regex("outbox_relay_reconnects_total (\\d+)")));
  EXPECT_GE(std::stoi(m[1]), 3);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST(Reliability, BrokerStoppedAndStartedUnderLoadLosesNothing) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create();
  ASSERT_TRUE(broker.ok()) << broker.status();
  RelayHarness h(pg, (*broker)->bootstrap());
  h.Init();
  auto reader = Reader((*broker)->bootstrap());
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 200; }, 30s, "ready"));
  Loader loader(pg, h.db(), "Outage");
  loader.Start();
  Sleep(500ms);
  ASSERT_TRUE((*broker)->Stop().ok());
  const int outage_s = EnvInt("OUTBOX_OUTAGE_SECONDS", 8);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 503; }, 30s,
                      "/readyz says 503 while the broker is down"));
  Sleep(std::chrono::seconds(outage_s));
  const long rss_kb = relay->PeakRssKb();
  ASSERT_TRUE((*broker)->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 200; }, 90s,
                      "/readyz says 200 once the broker is back"));
  loader.Stop();
  const auto committed = loader.committed();
  auto records = ReadUntilAll(*reader, h.Topic("Outage"), committed, 120s);
  ExpectCleanDelivery(CheckDelivery(records, committed, loader.uncertain()),
                      "real broker stopped " + std::to_string(outage_s) + " s");
  std::cout << "[ figures  ] relay peak RSS during a " << outage_s << " s outage: " << rss_kb << " kB\n";
  // The default delivery bounds (32 MiB, 100k events) plus the producer's own buffers.
  EXPECT_LT(rss_kb, 256 * 1024);
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// A one-broker mock cluster in this process (the relay binary connects over TCP).
struct Mock {
  Mock() {
    char errstr[256];
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), errstr, sizeof errstr);
    mc = rd_kafka_mock_cluster_new(rk, 1);
  }
  ~Mock() {
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
  }
  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(mc); }
  rd_kafka_t* rk;
  rd_kafka_mock_cluster_t* mc;
};

TEST(Reliability, BrokerOutageReleasesTheSlotSoPostgresCanShutDown) {
  auto pg = PgServer::Create();
  ASSERT_TRUE(pg.ok()) << pg.status();
  Mock mock;
  RelayHarness h(pg->get(), mock.bootstrap());
  ASSERT_EQ(rd_kafka_mock_topic_create(mock.mc, h.checkpoint_topic().c_str(), 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  h.Init();
  auto relay = h.StartRelay({"--set", "delivery.release_slot_after_ms=1500"});
  ASSERT_NE(relay, nullptr);
  auto reader = Reader(mock.bootstrap());
  const std::string before = h.InsertEvent("Released", "k", "{}");
  ASSERT_TRUE(reader->ReadUntil(h.Topic("Released"), 1, 30s).ok());
  ASSERT_EQ(rd_kafka_mock_broker_set_down(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  const std::string held = h.InsertEvent("Released", "k", "{}");
  ASSERT_TRUE(WaitFor([&] { return !h.SlotActive(); }, 30s, "the relay releases the slot"));
  EXPECT_EQ(HttpGet(h.http_port(), "/readyz").first, 503);
  // With the slot released, a fast shutdown completes (the walsender does not wait for a confirmation).
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*pg)->Stop("fast").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  ASSERT_TRUE((*pg)->Start().ok());
  ASSERT_EQ(rd_kafka_mock_broker_set_up(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto records = ReadUntilAll(*reader, h.Topic("Released"), {before, held}, 60s);
  EXPECT_EQ(CheckDelivery(records, {before, held}, {}).lost, 0u) << relay->Output();
  ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 30s, "the relay takes the slot again"));
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// At the delivery bound the relay stops reading the stream but keeps sending status updates, so a walsender with
// a short wal_sender_timeout does not time it out; memory stays at the bound; everything arrives afterwards.
TEST(Reliability, AtTheDeliveryBoundTheRelayPausesButKeepsItsConnection) {
  auto pg = PgServer::Create(PgServer::Options{.extra_conf = "wal_sender_timeout=2s"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  Mock mock;
  RelayHarness h(pg->get(), mock.bootstrap());
  ASSERT_EQ(rd_kafka_mock_topic_create(mock.mc, h.checkpoint_topic().c_str(), 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  h.Init();
  auto relay = h.StartRelay({"--set", "delivery.max_inflight_events=50", "--set",
                             "delivery.release_slot_after_ms=600000", "--set", "source.checkpoint=none"});
  ASSERT_NE(relay, nullptr);
  const std::string pid_sql = "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'";
  const auto walsender = h.Value(pid_sql);
  ASSERT_EQ(rd_kafka_mock_broker_set_down(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::set<std::string> ids;
  for (int i = 0; i < 300; ++i) ids.insert(h.InsertEvent("Bounded", "k" + std::to_string(i % 7), "{}"));
  // Three wal_sender_timeouts at the bound: the same walsender still serves the relay.
  Sleep(6s);
  EXPECT_EQ(h.Value(pid_sql), walsender) << "the walsender timed the relay out";
  auto [code, metrics] = HttpGet(h.http_port(), "/metrics");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics, m, std::regex("outbox_relay_inflight_events (\\d+)")));
  EXPECT_LE(std::stoi(m[1]), 50 + 3) << "in flight beyond the bound";
  EXPECT_NE(metrics.find("outbox_relay_reconnects_total 0"), std::string::npos) << metrics;
  ASSERT_EQ(rd_kafka_mock_broker_set_up(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto reader = Reader(mock.bootstrap());
  auto records = ReadUntilAll(*reader, h.Topic("Bounded"), ids, 60s);
  EXPECT_EQ(CheckDelivery(records, ids, {}).lost, 0u) << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// During a backlog the relay logs a progress line every few seconds (bytes behind, rate, ETA), then one line when
// it has caught up. The backlog is held in place by the broker being down (the relay stops at its bound).
TEST(Reliability, BacklogLogsProgressLinesThenCaughtUp) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  Mock mock;
  RelayHarness h(pg, mock.bootstrap());
  ASSERT_EQ(rd_kafka_mock_topic_create(mock.mc, h.checkpoint_topic().c_str(), 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  h.Init();
  // A backlog of about 40 MB of WAL with outbox events in it, written before the relay starts.
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'a', "
        "'k' || (g % 10), 'Backlog', jsonb_build_object('pad', repeat('x', 300)) FROM generate_series(1, 60000) g");
  ASSERT_EQ(rd_kafka_mock_broker_set_down(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto relay = h.StartRelay({"--set", "delivery.max_inflight_events=1000", "--set",
                             "delivery.release_slot_after_ms=600000", "--set", "source.checkpoint=none"});
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return relay->Output().find("catching up: ") != std::string::npos; }, 30s,
                      "a progress line during the backlog"))
      << relay->Output();
  EXPECT_TRUE(std::regex_search(relay->Output(), std::regex("catching up: [0-9.]+ MB behind [0-9A-F]+/[0-9A-F]+, "
                                                            "[0-9.]+ MB/s, ETA ")))
      << relay->Output();
  ASSERT_EQ(rd_kafka_mock_broker_set_up(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_TRUE(WaitFor([&] { return relay->Output().find("caught up at ") != std::string::npos; }, 120s,
                      "the caught-up line"))
      << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST(Reliability, StandbyTakesOverWhenTheActiveRelayDies) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto reader = Reader(broker->bootstrap());
  auto active = h.StartRelay({"--set", "source.instance=a"});
  ASSERT_NE(active, nullptr);
  const int standby_port = FreePort();
  auto standby = h.StartRelay(
      {"--set", "source.instance=b", "--set", "http.listen=127.0.0.1:" + std::to_string(standby_port)}, false);
  ASSERT_NE(standby, nullptr);
  ASSERT_TRUE(WaitFor(
      [&] { return HttpGet(standby_port, "/metrics").second.find("outbox_relay_standby 1") != std::string::npos; },
      30s, "the second relay reports itself as standby"));
  EXPECT_EQ(HttpGet(standby_port, "/readyz").first, 503);
  Loader loader(pg, h.db(), "Standby");
  loader.Start();
  Sleep(1s);
  ASSERT_TRUE(active->Kill(SIGKILL).ok());
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(standby_port, "/readyz").first == 200; }, 30s, "the standby takes over"));
  std::cout << "[ figures  ] standby took over in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed).count()
            << " ms\n";
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 10s);
  Sleep(1s);
  loader.Stop();
  const auto committed = loader.committed();
  auto records = ReadUntilAll(*reader, h.Topic("Standby"), committed, 60s);
  ExpectCleanDelivery(CheckDelivery(records, committed, loader.uncertain()), "standby takeover");
  EXPECT_TRUE(standby->Running()) << "no false gap alarm at takeover: " << standby->Output();
  ASSERT_TRUE(standby->Kill(SIGTERM).ok());
  EXPECT_EQ(standby->Wait(30s), 0) << standby->Output();
}

TEST(Reliability, FatalProducerErrorRecreatesTheProducerWithoutLoss) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto reader = Reader(broker->bootstrap());
  auto relay = h.StartRelay({}, true, {{"OUTBOX_RELAY_TEST_HOOKS", "1"}});
  ASSERT_NE(relay, nullptr);
  Loader loader(pg, h.db(), "Fatal");
  loader.Start();
  for (int i = 0; i < 2; ++i) {
    Sleep(700ms);
    ASSERT_TRUE(relay->Kill(SIGUSR2).ok());  // rd_kafka_test_fatal_error inside the relay
  }
  Sleep(700ms);
  loader.Stop();
  const auto committed = loader.committed();
  auto records = ReadUntilAll(*reader, h.Topic("Fatal"), committed, 60s);
  ExpectCleanDelivery(CheckDelivery(records, committed, loader.uncertain()), "producer fatal errors");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  EXPECT_NE(relay->Output().find("fatal error"), std::string::npos) << "the fatal error was not raised";
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST(Reliability, MillionRowTransactionDrainsWithinTheMemoryBounds) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  const int rows = EnvInt("OUTBOX_BIG_TX_ROWS", 1000000);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "delivery.max_inflight_bytes=8388608", "--set",
                             "delivery.max_inflight_events=20000"});
  ASSERT_NE(relay, nullptr);
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'big', "
        "'k' || (g % 100), 'Big', jsonb_build_object('n', g, 'pad', repeat('x', 200)) FROM generate_series(1, " +
        std::to_string(rows) + ") g");
  const Lsn end = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= end || !relay->Running(); }, 600s,
                      "the relay confirms the big transaction"))
      << relay->Output();
  auto reader = Reader(broker->bootstrap());
  int64_t low = 0, high = 0;
  ASSERT_EQ(rd_kafka_query_watermark_offsets(reader->handle(), h.Topic("Big").c_str(), 0, &low, &high, 10000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(high, rows);
  const long rss = relay->PeakRssKb();
  std::cout << "[ figures  ] " << rows << "-row transaction: relay peak RSS " << rss << " kB\n";
  // 8 MiB of in-flight bytes, librdkafka's queue above it, and the process itself.
  EXPECT_LT(rss, 160 * 1024);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

}  // namespace
}  // namespace outbox::testing
