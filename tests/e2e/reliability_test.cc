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
#include "support/fault_proxy.h"
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

// A RelayHarness with init done and what most fault tests add to it: a reader of its Kafka, and a loader writing
// events of one type into its database (the test starts it). Declare it after the servers it runs on, so that it
// is torn down before them; the relays a test starts come after it.
class FaultHarness : public RelayHarness {
 public:
  // The least a fault test's load commits (its loader writes thousands of events a second; a broken load, none).
  static constexpr size_t kMinCommitted = 200;

  FaultHarness(PgServer* pg, const std::string& bootstrap, const std::string& type)
      : RelayHarness(pg, bootstrap), loader_(pg, db(), type), type_(type) {
    Init();
    reader_ = Reader(bootstrap);
  }

  // Stops the loader, reads the type's topic until every committed event is there (or `deadline` passes) and
  // expects a clean delivery; `what` names the fault in the figures line.
  void StopLoadAndExpectCleanDelivery(std::chrono::milliseconds deadline, const std::string& what,
                                      size_t min_committed = kMinCommitted) {
    loader_.Stop();
    ExpectLoadHealthy(loader_, min_committed, what);
    const auto committed = loader_.committed();
    auto records = ReadUntilAll(*reader_, Topic(type_), committed, deadline);
    ExpectCleanDelivery(CheckDelivery(records, committed, loader_.uncertain()),
                        what + " (" + std::to_string(committed.size()) + " events written)");
  }

  KafkaReader& reader() { return *reader_; }
  Loader& loader() { return loader_; }

 private:
  std::unique_ptr<KafkaReader> reader_;
  Loader loader_;
  std::string type_;
};

// Two relays on the harness's slot: `active` (instance a, the harness's http port) holds it, `standby` (instance b,
// on `*standby_port`) reports itself as a standby.
void StartActiveAndStandby(FaultHarness& h, int* standby_port, std::unique_ptr<ChildProcess>* active,
                           std::unique_ptr<ChildProcess>* standby) {
  *active = h.StartRelay({"--set", "source.instance=a"});
  ASSERT_NE(*active, nullptr);
  *standby = h.StartSecondRelay({"--set", "source.instance=b"}, standby_port);
  ASSERT_NE(*standby, nullptr);
  ASSERT_TRUE(WaitFor(
      [&] { return Sample(HttpGet(*standby_port, "/metrics").second, "outbox_relay_standby") == 1; },
      30s, "the second relay reports itself as standby"));
}

TEST(Reliability, KillNineAtRandomMomentsUnderLoadLosesNothing) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  const int cycles = EnvInt("OUTBOX_CHAOS_CYCLES", 20);
  FaultHarness h(pg, broker->bootstrap(), "Chaos");
  const std::string topic = h.Topic("Chaos");
  ASSERT_TRUE(broker->CreateTopic(topic, 1).ok());
  h.loader().Start();
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
    history.push_back(Cycle{StableCount(h.reader(), topic), confirmed});
  }
  h.loader().Stop();
  ExpectLoadHealthy(h.loader(), FaultHarness::kMinCommitted, "kill -9 chaos");
  const auto committed = h.loader().committed();
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  auto records = ReadUntilAll(h.reader(), topic, committed, 120s);
  ASSERT_NO_FATAL_FAILURE(ExpectStopsCleanly(*relay));

  const DeliveryCheck c = CheckDelivery(records, committed, h.loader().uncertain());
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
  FaultHarness h(pg->get(), broker->bootstrap(), "Crash");
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  const int cycles = EnvInt("OUTBOX_PG_CRASH_CYCLES", 3);
  for (int i = 0; i < cycles; ++i) {
    Sleep(800ms);
    ASSERT_TRUE((*pg)->Stop(i % 2 == 0 ? "immediate" : "fast").ok());
    ASSERT_TRUE((*pg)->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 60s, "the relay reconnects after the restart"));
  }
  Sleep(500ms);
  h.StopLoadAndExpectCleanDelivery(90s, "PostgreSQL immediate/fast stops");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectStopsCleanly(*relay);
}

TEST(Reliability, LostReplicationConnectionsResumeWithoutLoss) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Cut");
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  for (int i = 0; i < 3; ++i) {
    Sleep(500ms);
    ASSERT_TRUE(pg->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" +
                         h.slot() + "' AND active").ok());
    ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 30s, "the relay reconnects"));
  }
  h.StopLoadAndExpectCleanDelivery(60s, "walsender terminated 3 times");
  auto [code, metrics] = HttpGet(h.http_port(), "/metrics");
  EXPECT_EQ(code, 200);
  EXPECT_GE(Sample(metrics, "outbox_relay_reconnects_total").value_or(-1), 3) << metrics;
  ExpectStopsCleanly(*relay);
}

TEST(Reliability, BrokerStoppedAndStartedUnderLoadLosesNothing) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create();
  ASSERT_TRUE(broker.ok()) << broker.status();
  FaultHarness h(pg, (*broker)->bootstrap(), "Outage");
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 200; }, 30s, "ready"));
  h.loader().Start();
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
  h.StopLoadAndExpectCleanDelivery(120s, "real broker stopped " + std::to_string(outage_s) + " s");
  std::cout << "[ figures  ] relay peak RSS during a " << outage_s << " s outage: " << rss_kb << " kB\n";
  // The default delivery bounds (32 MiB, 100k events) plus the producer's own buffers. PeakRssKb is -1 when it
  // cannot tell: that must fail, not pass.
  EXPECT_GT(rss_kb, 0) << "the relay's peak RSS is unknown";
  EXPECT_LT(rss_kb, 256 * 1024);
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectStopsCleanly(*relay);
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
  ExpectStopsCleanly(*relay);
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
  const std::string walsender = h.ActivePid();
  ASSERT_EQ(rd_kafka_mock_broker_set_down(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::set<std::string> ids;
  for (int i = 0; i < 300; ++i) ids.insert(h.InsertEvent("Bounded", "k" + std::to_string(i % 7), "{}"));
  // Three wal_sender_timeouts at the bound: the same walsender still serves the relay.
  Sleep(6s);
  EXPECT_EQ(h.ActivePid(), walsender) << "the walsender timed the relay out";
  auto [code, metrics] = HttpGet(h.http_port(), "/metrics");
  const std::optional<double> inflight = Sample(metrics, "outbox_relay_inflight_events");
  ASSERT_TRUE(inflight.has_value()) << metrics;
  EXPECT_LE(*inflight, 50 + 3) << "in flight beyond the bound";
  EXPECT_EQ(Sample(metrics, "outbox_relay_reconnects_total"), 0) << metrics;
  ASSERT_EQ(rd_kafka_mock_broker_set_up(mock.mc, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto reader = Reader(mock.bootstrap());
  auto records = ReadUntilAll(*reader, h.Topic("Bounded"), ids, 60s);
  EXPECT_EQ(CheckDelivery(records, ids, {}).lost, 0u) << relay->Output();
  ExpectStopsCleanly(*relay);
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
  ExpectStopsCleanly(*relay);
}

TEST(Reliability, StandbyTakesOverWhenTheActiveRelayDies) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Standby");
  std::unique_ptr<ChildProcess> active, standby;
  int standby_port = 0;
  ASSERT_NO_FATAL_FAILURE(StartActiveAndStandby(h, &standby_port, &active, &standby));
  EXPECT_EQ(HttpGet(standby_port, "/readyz").first, 503);
  h.loader().Start();
  Sleep(1s);
  ASSERT_TRUE(active->Kill(SIGKILL).ok());
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(standby_port, "/readyz").first == 200; }, 30s, "the standby takes over"));
  std::cout << "[ figures  ] standby took over in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed).count()
            << " ms\n";
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 10s);
  Sleep(1s);
  h.StopLoadAndExpectCleanDelivery(60s, "standby takeover");
  EXPECT_TRUE(standby->Running()) << "no false gap alarm at takeover: " << standby->Output();
  ExpectStopsCleanly(*standby);
}

// SPEC.md §5: a standby takes over "within wal_sender_timeout when its host vanishes". A stopped process (SIGSTOP)
// is a vanished host as the server sees it: its socket stays open and it never answers again, so only the
// walsender's timeout frees the slot.
TEST(Reliability, StandbyTakesOverWithinWalSenderTimeoutWhenTheActiveRelaysHostVanishes) {
  auto pg = PgServer::Create(PgServer::Options{.extra_conf = "wal_sender_timeout=3s"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  FaultHarness h(pg->get(), broker->bootstrap(), "Vanished");
  std::unique_ptr<ChildProcess> active, standby;
  int standby_port = 0;
  ASSERT_NO_FATAL_FAILURE(StartActiveAndStandby(h, &standby_port, &active, &standby));
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 200; }, 30s, "load under way"));
  const std::string old_pid = h.ActivePid();
  ASSERT_FALSE(old_pid.empty());
  ASSERT_TRUE(active->Kill(SIGSTOP).ok());
  const auto vanished = std::chrono::steady_clock::now();
  // The moment the server lets the vanished relay's walsender go (the slot no longer held by it), polled often: the
  // standby needs a connect and the slot check before it can hold the slot itself.
  ASSERT_TRUE(WaitFor(
      [&] { return h.ActivePid() != old_pid; }, 60s, "the walsender times the vanished relay out", 5ms));
  const auto released = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(standby_port, "/readyz").first == 200; }, 60s,
                      "the standby takes over once the walsender times the vanished relay out", 20ms));
  const auto now = std::chrono::steady_clock::now();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(now - vanished);
  const auto after_release = std::chrono::duration_cast<std::chrono::milliseconds>(now - released);
  std::cout << "[ figures  ] standby took over " << took.count() << " ms after the active relay vanished, "
            << after_release.count() << " ms after the server released the slot (wal_sender_timeout 3 s)\n";
  // Within wal_sender_timeout (3 s), plus the walsender's own check interval and the standby's 500 ms retry.
  EXPECT_LT(took, 3s + 3s) << "the takeover took longer than wal_sender_timeout allows";
  // Once the slot is free, within the standby's retry interval (500 ms) plus a connect and the slot check.
  EXPECT_LT(after_release, 3s) << "the standby's retry is slower than it should be";
  const size_t at_takeover = h.loader().transactions();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= at_takeover + 200; }, 30s, "more load"));
  // The vanished relay comes back: its connection is gone and the slot is taken, so it waits as a standby.
  ASSERT_TRUE(active->Kill(SIGCONT).ok());
  EXPECT_TRUE(WaitFor(
      [&] { return Sample(HttpGet(h.http_port(), "/metrics").second, "outbox_relay_standby") == 1; },
      60s, "the returning relay waits as a standby"));
  h.StopLoadAndExpectCleanDelivery(60s, "active relay vanished");
  EXPECT_TRUE(standby->Running()) << standby->Output();
  ExpectStopsCleanly(*standby);
  ExpectStopsCleanly(*active);
}

// The relay's PostgreSQL connections through a FaultProxy of the test's own (the loader writes directly).
struct ProxiedPg {
  std::unique_ptr<FaultProxy> proxy;
  // --set arguments that point the relay's conninfo at the proxy (`extra`: more conninfo settings).
  std::vector<std::string> Args(const RelayHarness& h, const std::string& extra = "") const {
    return {"--set", "source.conninfo=host=127.0.0.1 port=" + std::to_string(proxy->port()) + " user=postgres dbname=" +
                         h.db() + extra};
  }
};

ProxiedPg ProxyTo(PgServer* pg) {
  auto proxy = FaultProxy::Start("127.0.0.1", pg->port());
  EXPECT_TRUE(proxy.ok()) << proxy.status();
  return {proxy.ok() ? std::move(*proxy) : nullptr};
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A partition that drops packets without a reset, mid-stream: the connection stays open and silent. The relay
// must see it within source.receive_timeout_ms (503 meanwhile), reconnect, end its own old walsender (which the
// server would keep, holding the slot, until wal_sender_timeout: 60 s here) and go on with nothing lost.
TEST(Reliability, BlackholedPostgresConnectionIsDetectedAndTheSlotRetakenWithinTheReceiveTimeout) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Blackhole");
  ProxiedPg link = ProxyTo(pg);
  ASSERT_NE(link.proxy, nullptr);
  constexpr auto kReceiveTimeout = 3s;
  auto relay = h.StartRelay(Concat(link.Args(h), {"--set", "source.receive_timeout_ms=3000"}));
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}") >= 200; },
                      30s, "events flow through the proxy"));
  const std::string old_pid = h.ActivePid();
  ASSERT_FALSE(old_pid.empty());
  link.proxy->Blackhole();
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 503; }, kReceiveTimeout + 5s,
                      "/readyz 503 once the silent connection is found dead"));
  const std::string why = HttpGet(h.http_port(), "/readyz").second;
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string pid = h.ActivePid();
        return HttpGet(h.http_port(), "/readyz").first == 200 && !pid.empty() && pid != old_pid;
      },
      kReceiveTimeout + 20s, "streaming again on a new walsender"));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - cut);
  std::cout << "[ figures  ] blackholed replication connection: streaming again after " << took.count()
            << " ms (receive_timeout_ms 3000, wal_sender_timeout 60 s); /readyz said: " << why;
  // Without ending its own old walsender the relay would wait as a "standby" of itself for wal_sender_timeout.
  EXPECT_LT(took, kReceiveTimeout + 10s);
  // Found by the replication stream's silence (source.receive_timeout_ms) or by the publication watch's query on
  // the plain connection (bounded by half of it), whichever comes first.
  EXPECT_TRUE(why.find("receive_timeout_ms") != std::string::npos ||
              why.find("publication watch's connection: no answer") != std::string::npos)
      << why;
  EXPECT_GE(Scrape(h.http_port(), "outbox_relay_reconnects_total").value_or(0), 1);
  EXPECT_NE(relay->Output().find("ended this relay's previous walsender (PID " + old_pid + ")"), std::string::npos)
      << relay->Output();
  h.StopLoadAndExpectCleanDelivery(60s, "replication connection blackholed");
  ExpectStopsCleanly(*relay);
}

// Resets of every relay connection to PostgreSQL (replication and plain) at random moments under load.
TEST(Reliability, PostgresConnectionsResetAtRandomMomentsLoseNothing) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Resets");
  ProxiedPg link = ProxyTo(pg);
  ASSERT_NE(link.proxy, nullptr);
  auto relay = h.StartRelay(link.Args(h));
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  std::mt19937 random(std::random_device{}());
  const int resets = EnvInt("OUTBOX_CHAOS_CYCLES", 5);
  for (int i = 0; i < resets; ++i) {
    const double published = Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0);
    ASSERT_TRUE(WaitFor(
        [&] {
          return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0) > published;
        },
        60s, "events flow before reset " + std::to_string(i)));
    Sleep(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 700)(random)));
    link.proxy->ResetAll();
  }
  h.StopLoadAndExpectCleanDelivery(90s, std::to_string(resets) + " resets of the PostgreSQL connections");
  EXPECT_GE(Scrape(h.http_port(), "outbox_relay_reconnects_total").value_or(0), 1);
  EXPECT_GE(link.proxy->accepted(), resets) << "the relay reconnected through the proxy after the resets";
  ExpectStopsCleanly(*relay);
}

// A slow link (latency and a bandwidth limit) is slow, not dead: no reconnect, and everything arrives.
TEST(Reliability, SlowPostgresLinkDeliversEverythingWithoutReconnecting) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Slow");
  ProxiedPg link = ProxyTo(pg);
  ASSERT_NE(link.proxy, nullptr);
  auto relay = h.StartRelay(Concat(link.Args(h), {"--set", "source.receive_timeout_ms=3000"}));
  ASSERT_NE(relay, nullptr);
  link.proxy->SetDelay(100ms);
  link.proxy->SetBandwidth(64 * 1024);
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 1000; }, 60s, "load under way"));
  const size_t written = h.loader().transactions();
  // Events still arrive over the slow link, and the status updates keep the slot confirmed forward.
  ASSERT_TRUE(WaitFor(
      [&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0) >= 500; }, 60s,
      "events arrive over the slow link"));
  link.proxy->Heal();
  h.StopLoadAndExpectCleanDelivery(90s, "slow link (100 ms, 64 KiB/s) for " + std::to_string(written) + " events");
  EXPECT_EQ(Scrape(h.http_port(), "outbox_relay_reconnects_total").value_or(-1), 0) << relay->Output();
  ExpectStopsCleanly(*relay);
}

// A link that accepts connections but moves no bytes (a partition that drops packets, a dead middlebox): libpq's
// own blocking connect would wait for the whole handshake without seeing SIGTERM. The relay's connect gives up
// within connect_timeout (2 s here), reports 503, retries, and streams once the link heals.
TEST(Reliability, SilentLinkWhileConnectingGivesUpWithinConnectTimeoutAndRecovers) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "SilentConnect");
  ProxiedPg link = ProxyTo(pg);
  ASSERT_NE(link.proxy, nullptr);
  link.proxy->Blackhole(/*new_ones=*/true);
  auto relay = h.StartRelay(link.Args(h, " connect_timeout=2"), /*wait_active=*/false);
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return relay->Output().find("no answer in 2 s (connect_timeout)") != std::string::npos; },
                      30s, "the stalled handshake given up"))
      << relay->Output();
  const auto readyz = HttpGet(h.http_port(), "/readyz");
  EXPECT_EQ(readyz.first, 503) << readyz.second;
  EXPECT_NE(readyz.second.find("connect_timeout"), std::string::npos) << readyz.second;
  link.proxy->Heal();
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 30s, "streaming once the link heals")) << relay->Output();
  ASSERT_TRUE(WaitFor(
      [&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0) >= 200; },
      60s, "events flow"));
  h.StopLoadAndExpectCleanDelivery(60s, "connects stalled on a silent link, then healed");
  ExpectStopsCleanly(*relay);
}

// SIGTERM while the connect waits on a silent link ends the relay at once (exit 0), not after connect_timeout.
TEST(Reliability, SigtermWhileConnectingOverASilentLinkStopsAtOnce) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  ProxiedPg link = ProxyTo(pg);
  ASSERT_NE(link.proxy, nullptr);
  link.proxy->Blackhole(/*new_ones=*/true);
  auto relay = h.StartRelay(link.Args(h, " connect_timeout=120"), /*wait_active=*/false);
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return link.proxy->accepted() >= 1; }, 30s, "the relay connecting through the proxy"));
  const auto term = std::chrono::steady_clock::now();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(15s), 0) << relay->Output();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - term);
  std::cout << "[ figures  ] SIGTERM while connecting over a silent link (connect_timeout 120 s): exited after "
            << took.count() << " ms\n";
}

// The relay's connections to a broker of the test's own that advertises a FaultProxy in front of it go silent
// mid-stream (new connections still get through). librdkafka finds a silent connection by socket.timeout.ms
// (5 s here; 60 s is librdkafka's default) and reconnects; the idempotent producer resends what was not acked:
// nothing lost, per-key order kept, delivery again within socket.timeout.ms plus a margin.
// A broker of the test's own that advertises a FaultProxy in front of it: every client connection, the bootstrap
// and the partition leader's, goes through the proxy.
struct ProxiedBroker {
  std::unique_ptr<FaultProxy> proxy;
  std::unique_ptr<KafkaBroker> broker;
  std::string bootstrap;  // the proxy's address
};

ProxiedBroker BrokerBehindAProxy() {
  ProxiedBroker b;
  auto proxy = FaultProxy::Start("127.0.0.1", 0);
  EXPECT_TRUE(proxy.ok()) << proxy.status();
  if (!proxy.ok()) return b;
  b.bootstrap = "127.0.0.1:" + std::to_string((*proxy)->port());
  auto broker = KafkaBroker::Create(
      KafkaBroker::Options{.extra_properties = "advertised.listeners=PLAINTEXT://" + b.bootstrap});
  EXPECT_TRUE(broker.ok()) << broker.status();
  if (!broker.ok()) return b;
  (*proxy)->SetUpstreamPort((*broker)->port());
  b.proxy = std::move(*proxy);
  b.broker = std::move(*broker);
  return b;
}

TEST(Reliability, BlackholedBrokerConnectionIsReplacedWithinTheSocketTimeout) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  ProxiedBroker link = BrokerBehindAProxy();
  ASSERT_TRUE(link.proxy && link.broker);
  FaultProxy* proxy = link.proxy.get();
  const std::string& proxied = link.bootstrap;
  FaultHarness h(pg, proxied, "KafkaBlackhole");
  auto relay = h.StartRelay({"--set", "kafka.socket.timeout.ms=5000"});
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  const std::string published = "outbox_relay_events_total{result=\"published\"}";
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), published).value_or(0) >= 200; }, 60s,
                      "events flow through the proxy"));
  proxy->Blackhole();
  const auto cut = std::chrono::steady_clock::now();
  const double at_cut = Scrape(h.http_port(), published).value_or(0);
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), published).value_or(0) > at_cut + 100; }, 5s + 25s,
                      "acknowledgements again on a new broker connection"));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - cut);
  std::cout << "[ figures  ] blackholed broker connections: acknowledged again after " << took.count()
            << " ms (kafka.socket.timeout.ms 5000)\n";
  proxy->Heal();  // the test's own reader was cut off too
  h.StopLoadAndExpectCleanDelivery(90s, "broker connections blackholed");
  EXPECT_EQ(Scrape(h.http_port(), "outbox_relay_reconnects_total").value_or(-1), 0)
      << "a broker fault is not a replication reconnect";
  ExpectStopsCleanly(*relay);
}

// The broker link slow (latency and a bandwidth limit), then every broker connection reset at random moments under
// load: the producer reconnects and the idempotent producer resends what was not acknowledged. 0 lost, per-key
// order kept, and the load's backlog delivered within the bound once the link heals.
TEST(Reliability, SlowThenResetBrokerLinkLosesNothingAndKeepsKeyOrder) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  ProxiedBroker link = BrokerBehindAProxy();
  ASSERT_TRUE(link.proxy && link.broker);
  FaultHarness h(pg, link.bootstrap, "KafkaSlowReset");
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  const std::string published = "outbox_relay_events_total{result=\"published\"}";
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), published).value_or(0) >= 200; }, 60s,
                      "events flow through the proxy"));
  link.proxy->SetDelay(100ms);
  link.proxy->SetBandwidth(64 * 1024);
  const double at_slow = Scrape(h.http_port(), published).value_or(0);
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), published).value_or(0) >= at_slow + 300; }, 60s,
                      "acknowledgements over the slow link"));
  link.proxy->Heal();
  std::mt19937 random(std::random_device{}());
  const int resets = EnvInt("OUTBOX_CHAOS_CYCLES", 5);
  for (int i = 0; i < resets; ++i) {
    const double before = Scrape(h.http_port(), published).value_or(0);
    ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), published).value_or(0) > before; }, 60s,
                        "acknowledgements before reset " + std::to_string(i)));
    Sleep(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 700)(random)));
    link.proxy->ResetAll();
  }
  h.StopLoadAndExpectCleanDelivery(90s, "broker link slow (100 ms, 64 KiB/s), then " + std::to_string(resets) +
                                            " resets of every broker connection");
  EXPECT_GE(link.proxy->accepted(), resets) << "the producer reconnected through the proxy after the resets";
  EXPECT_EQ(Scrape(h.http_port(), "outbox_relay_reconnects_total").value_or(-1), 0)
      << "a broker fault is not a replication reconnect";
  ExpectStopsCleanly(*relay);
}

TEST(Reliability, FatalProducerErrorRecreatesTheProducerWithoutLoss) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  FaultHarness h(pg, broker->bootstrap(), "Fatal");
  auto relay = h.StartRelay({}, true, {{"OUTBOX_RELAY_TEST_HOOKS", "1"}});
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  for (int i = 0; i < 2; ++i) {
    Sleep(700ms);
    ASSERT_TRUE(relay->Kill(SIGUSR2).ok());  // rd_kafka_test_fatal_error inside the relay
  }
  Sleep(700ms);
  h.StopLoadAndExpectCleanDelivery(60s, "producer fatal errors");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  EXPECT_NE(relay->Output().find("fatal error"), std::string::npos) << "the fatal error was not raised";
  ExpectStopsCleanly(*relay);
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
  EXPECT_GT(rss, 0) << "the relay's peak RSS is unknown";
  EXPECT_LT(rss, 160 * 1024);
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
