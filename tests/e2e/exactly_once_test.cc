// delivery.guarantee exactly_once against the real broker (issue 15): what Kafka's own console consumer
// (tests/support/java_consumer.h: the broker's jars, not librdkafka, isolation level read_committed) sees after
// kill -9 at random moments, a broker outage, PostgreSQL stopped immediately, a vanished relay whose standby takes
// over, a transaction the coordinator aborts, a million-row transaction split over several Kafka transactions and
// killed in the middle, a foreign transaction open on the shared checkpoint topic, and poison events under halt and
// dead_letter. Each expects every committed event exactly once, in per-key order. Chaos cycles grow with
// OUTBOX_EO_CYCLES (CI: 20; OUTBOX_SOAK=1: 200).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "e2e/loader.h"
#include "support/java_consumer.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

void Sleep(std::chrono::milliseconds d) { PollUntil([] { return false; }, d); }

std::vector<std::string> ExactlyOnce(std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--set", "delivery.guarantee=exactly_once"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// What a read_committed consumer of `topic` sees, once it holds at least `expected` records: every committed event
// once (uncertain ones at most once), nothing else, per-key order. `what` names the case in the figures line.
std::vector<KafkaRecord> ExpectEachEventOnce(const std::string& bootstrap, const std::string& topic,
                                             const std::set<std::string>& committed,
                                             const std::set<std::string>& uncertain, const std::string& what,
                                             std::chrono::milliseconds deadline = 180s) {
  auto records = ReadCommittedJava(bootstrap, {topic}, committed.size(), deadline);
  EXPECT_TRUE(records.ok()) << records.status();
  if (!records.ok()) return {};
  const DeliveryCheck c = CheckDelivery(*records, committed, uncertain);
  EXPECT_EQ(c.lost, 0u) << what;
  EXPECT_EQ(c.duplicates, 0u) << what;
  EXPECT_EQ(c.unexpected, 0u) << what;
  EXPECT_EQ(c.order_violations, 0u) << what;
  std::cout << "[ figures  ] " << what << ": " << committed.size() << " events written, " << c.records
            << " records read at read_committed, " << c.lost << " lost, " << c.duplicates << " duplicates\n";
  return *records;
}

// A harness with init done and a loader of one event type; the relays it starts run exactly_once.
class EoHarness : public RelayHarness {
 public:
  // `init_args`: more arguments of `init` (its first checkpoint goes where the relays will look for it).
  EoHarness(PgServer* pg, const std::string& bootstrap, const std::string& type,
            const std::vector<std::string>& init_args = {})
      : RelayHarness(pg, bootstrap), loader_(pg, db(), type), type_(type) {
    std::vector<std::string> args = {"init", "--create-table"};
    args.insert(args.end(), init_args.begin(), init_args.end());
    std::string output;
    EXPECT_EQ(RunCommand(args, &output), 0) << output;
  }
  // With `wait_streaming`, returns once the relay has taken the transactional id over and streams (init_transactions
  // waits for a fresh broker's transaction coordinator, seconds after the slot is held).
  std::unique_ptr<ChildProcess> Start(std::vector<std::string> more = {}, bool wait_streaming = true) {
    auto relay = StartRelay(ExactlyOnce(std::move(more)), wait_streaming);
    if (relay && wait_streaming) {
      EXPECT_TRUE(WaitFor([&] { return relay->Output().find("streaming slot") != std::string::npos || !relay->Running(); },
                          60s, "the relay streams"))
          << relay->Output();
    }
    return relay;
  }
  void StopLoadAndExpectEachEventOnce(const std::string& what, std::chrono::milliseconds deadline = 180s) {
    loader_.Stop();
    ExpectLoadHealthy(loader_, 200, what);
    ExpectEachEventOnce(bootstrap(), Topic(type_), loader_.committed(), loader_.uncertain(), what, deadline);
  }
  Loader& loader() { return loader_; }
  std::string topic() const { return Topic(type_); }

 private:
  Loader loader_;
  std::string type_;
};

int Cycles() {
  const int soak = EnvInt("OUTBOX_SOAK", 0);
  return EnvInt("OUTBOX_EO_CYCLES", soak ? 200 : 20);
}

// Kills the relay at random moments under load; the relay that follows each kill fences the killed one's open
// transaction and skips what its checkpoint says is committed. Catches: the skip rule off (every kill after a
// commit and before its confirmation repeats a suffix), the commit before the checkpoint record (the checkpoint
// would lag what is visible), confirming before the commit (events lost).
TEST(ExactlyOnce, KillNineAtRandomMomentsUnderLoadGivesEachEventOnce) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  EoHarness h(pg, broker->bootstrap(), "EoChaos");
  ASSERT_TRUE(broker->CreateTopic(h.topic(), 1).ok());
  const int cycles = Cycles();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::cout << "[ figures  ] exactly_once chaos seed " << seed << ", " << cycles << " cycles\n";
  h.loader().Start();
  for (int i = 0; i < cycles; ++i) {
    auto relay = h.Start();
    ASSERT_NE(relay, nullptr);
    Sleep(std::chrono::milliseconds(200 + rng() % 1300));
    ASSERT_TRUE(relay->Kill(SIGKILL).ok());
    ASSERT_TRUE(relay->Wait(10s).has_value());
  }
  auto relay = h.Start();
  ASSERT_NE(relay, nullptr);
  h.StopLoadAndExpectEachEventOnce("exactly_once kill -9 chaos");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectStopsCleanly(*relay);
}

// Partition 0's last stable offset (read_committed) and high watermark (read_uncommitted): they differ while a
// transaction is open on it.
class PartitionEnds {
 public:
  explicit PartitionEnds(const std::string& bootstrap)
      : committed_(KafkaReader::Create(bootstrap)),
        uncommitted_(KafkaReader::Create(bootstrap, {{"isolation.level", "read_uncommitted"}})) {}
  absl::StatusOr<std::pair<int64_t, int64_t>> StableAndHigh(const std::string& topic) {
    if (!committed_.ok()) return committed_.status();
    if (!uncommitted_.ok()) return uncommitted_.status();
    auto stable = (*committed_)->EndOffset(topic, 0);
    if (!stable.ok()) return stable.status();
    auto high = (*uncommitted_)->EndOffset(topic, 0);
    if (!high.ok()) return high.status();
    return std::make_pair(*stable, *high);
  }
  // True when no transaction is open on partition 0 of any of `topics`.
  bool NoTransactionOpen(const std::vector<std::string>& topics) {
    for (const std::string& topic : topics) {
      auto ends = StableAndHigh(topic);
      if (!ends.ok() || ends->first != ends->second) return false;
    }
    return true;
  }

 private:
  absl::StatusOr<std::unique_ptr<KafkaReader>> committed_;
  absl::StatusOr<std::unique_ptr<KafkaReader>> uncommitted_;
};

// The broker stopped under load for longer than the message timeout: the open transaction is aborted (not waited
// for forever), the relay rewinds, and after the broker is back every event is there once.
//
// The broker is stopped while the relay is paused (SIGSTOP) and no transaction is open on the topics (the paused
// relay's open one is aborted by the coordinator after transaction.timeout.ms): a single Kafka 4.4 broker stopped
// (or killed) while it writes a commit's markers can restart with the coordinator's CompleteCommit but without the
// markers in the partitions, a transaction nobody will ever end, which holds the checkpoint topic's last stable
// offset back for good (seen here: kafka-transactions.sh describe-producers shows it, the transaction log shows
// PrepareCommit then CompleteCommit, the partitions no marker). The relay then waits on its checkpoint read, naming
// it; an operator ends it with kafka-transactions.sh abort. The relay runs on through the whole outage.
TEST(ExactlyOnce, BrokerStoppedAndStartedUnderLoadGivesEachEventOnce) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create();
  ASSERT_TRUE(broker.ok()) << broker.status();
  EoHarness h(pg, (*broker)->bootstrap(), "EoOutage");
  auto relay = h.Start({"--set", "kafka.transaction.timeout.ms=5000", "--set", "delivery.release_slot_after_ms=3000"});
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 300; }, 30s, "load under way"));
  ASSERT_TRUE(relay->Kill(SIGSTOP).ok());
  PartitionEnds ends((*broker)->bootstrap());
  ASSERT_TRUE(WaitFor([&] { return ends.NoTransactionOpen({h.topic(), h.checkpoint_topic()}); }, 30s,
                      "no transaction open on the broker"));
  ASSERT_TRUE((*broker)->Stop().ok());
  ASSERT_TRUE(relay->Kill(SIGCONT).ok());
  Sleep(EnvInt("OUTBOX_OUTAGE_SECONDS", 8) * 1000ms);
  ASSERT_TRUE((*broker)->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 600; }, 30s, "more load after the outage"));
  h.StopLoadAndExpectEachEventOnce("exactly_once broker outage");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  if (::testing::Test::HasFailure()) std::cout << relay->Output();
  ExpectStopsCleanly(*relay);
}

// PostgreSQL stopped immediately (no shutdown checkpoint, the walsender killed) mid-stream, then started: the relay
// reconnects, takes over its own transactional id again and skips what it committed before the stop.
TEST(ExactlyOnce, PostgresStoppedImmediatelyMidStreamGivesEachEventOnce) {
  auto pg = PgServer::Create();
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  EoHarness h(pg->get(), broker->bootstrap(), "EoPgStop");
  auto relay = h.Start();
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  for (int i = 0; i < 3; ++i) {
    const size_t before = h.loader().transactions();
    ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= before + 300; }, 60s, "load under way"));
    ASSERT_TRUE((*pg)->Stop("immediate").ok());
    ASSERT_TRUE((*pg)->Start().ok());
  }
  const size_t before = h.loader().transactions();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= before + 300; }, 60s, "load after the restarts"));
  h.StopLoadAndExpectEachEventOnce("exactly_once PostgreSQL stopped immediately 3 times");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectStopsCleanly(*relay);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The active relay stops (SIGSTOP) with a Kafka transaction open; the server times its walsender out, the standby
// takes the slot, fences it and goes on; the stopped relay resumes: its commit fails as fenced, it never produces
// again before a fresh init_transactions, and waits as a standby. Its records never become visible twice, and the
// two fence each other once (the standby is never fenced). Catches init_transactions before START_REPLICATION (the
// standby would fence the active relay while it waits) and a fenced relay that keeps producing.
TEST(ExactlyOnce, AVanishedRelaysStandbyTakesOverAndTheResumedOneIsFencedOnce) {
  auto pg = PgServer::Create(PgServer::Options{.extra_conf = "wal_sender_timeout=3s"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  EoHarness h(pg->get(), broker->bootstrap(), "EoVanished");
  auto active = h.Start({"--set", "source.instance=a"});
  ASSERT_NE(active, nullptr);
  int standby_port = 0;
  auto standby = h.StartSecondRelay(ExactlyOnce({"--set", "source.instance=b"}), &standby_port);
  ASSERT_NE(standby, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Sample(HttpGet(standby_port, "/metrics").second, "outbox_relay_standby") == 1; },
                      30s, "the second relay waits as a standby"));
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 300; }, 30s, "load under way"));
  // The standby waited without touching the transactional id: the active relay still commits.
  EXPECT_EQ(Count(active->Output(), "FENCED"), 0u) << active->Output();
  ASSERT_TRUE(active->Kill(SIGSTOP).ok());
  ASSERT_TRUE(WaitFor([&] { return HttpGet(standby_port, "/readyz").first == 200; }, 60s,
                      "the standby takes over once the walsender times the stopped relay out"));
  const size_t at_takeover = h.loader().transactions();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= at_takeover + 300; }, 30s, "more load"));
  ASSERT_TRUE(active->Kill(SIGCONT).ok());
  EXPECT_TRUE(WaitFor([&] { return Sample(HttpGet(h.http_port(), "/metrics").second, "outbox_relay_standby") == 1; },
                      60s, "the resumed relay waits as a standby"));
  h.StopLoadAndExpectEachEventOnce("exactly_once vanished relay and standby takeover");
  EXPECT_TRUE(standby->Running()) << standby->Output();
  EXPECT_EQ(Count(standby->Output(), "FENCED"), 0u) << "the new active relay was fenced: " << standby->Output();
  EXPECT_LE(Count(active->Output(), "recreating the producer"), 1u) << active->Output();
  ExpectStopsCleanly(*standby);
  ExpectStopsCleanly(*active);
}

// The relay stops (SIGSTOP) longer than its transaction timeout with a transaction open: the coordinator aborts it.
// Resumed, the relay finds its transaction gone, rewinds, and produces those events again once.
TEST(ExactlyOnce, ATransactionTheCoordinatorAbortsForItsTimeoutIsProducedAgainOnce) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create(
      KafkaBroker::Options{.extra_properties = "transaction.abort.timed.out.transaction.cleanup.interval.ms=500"});
  ASSERT_TRUE(broker.ok()) << broker.status();
  EoHarness h(pg, (*broker)->bootstrap(), "EoTimedOut");
  // Commits only when the Kafka transaction is half its timeout old: one is open almost all the time.
  auto relay = h.Start({"--set", "kafka.transaction.timeout.ms=2000", "--set", "delivery.transaction_interval_ms=60000"});
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 300; }, 30s, "load under way"));
  // A stop that lands inside a commit (a few ms of each second) leaves no transaction open to abort: try again.
  for (int attempt = 0; attempt < 3 && relay->Output().find("rewinding") == std::string::npos; ++attempt) {
    ASSERT_TRUE(relay->Kill(SIGSTOP).ok());
    Sleep(5s);  // the fault: longer than the transaction timeout (2 s) plus the coordinator's check (0.5 s)
    ASSERT_TRUE(relay->Kill(SIGCONT).ok());
    PollUntil([&] { return relay->Output().find("rewinding") != std::string::npos; }, 5s);
  }
  const size_t resumed = h.loader().transactions();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= resumed + 300; }, 30s, "load after the resume"));
  h.StopLoadAndExpectEachEventOnce("exactly_once transaction aborted by the coordinator");
  EXPECT_TRUE(relay->Running()) << relay->Output();
  EXPECT_NE(relay->Output().find("rewinding"), std::string::npos)
      << "the aborted transaction went unnoticed: " << relay->Output();
  ExpectStopsCleanly(*relay);
}

// One PostgreSQL transaction of a million rows with a short transaction timeout and bounds of 100,000 events: it is
// committed in parts, each checkpoint naming how many of its events are committed. Killed after a part committed,
// the next relay skips the committed part: 0 duplicates. Catches a skip rule that only knows whole transactions
// (every committed part would come again).
TEST(ExactlyOnce, AMillionRowTransactionSplitOverKafkaTransactionsAndKilledMidwayGivesEachEventOnce) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  const int rows = EnvInt("OUTBOX_BIG_TX_ROWS", 1000000);
  EoHarness h(pg, broker->bootstrap(), "EoBig");
  ASSERT_TRUE(broker->CreateTopic(h.Topic("Big"), 1).ok());
  const std::vector<std::string> args = {"--set", "kafka.transaction.timeout.ms=10000"};
  auto relay = h.Start(args);
  ASSERT_NE(relay, nullptr);
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'big', "
        "'k' || (g % 100), 'Big', jsonb_build_object('key', 'k' || (g % 100), 'step', g) FROM generate_series(1, " +
        std::to_string(rows) + ") g");
  // Killed once a part is committed and the next is being produced.
  ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}") >= rows / 4; },
                      300s, "a quarter of the transaction committed"));
  ASSERT_TRUE(relay->Kill(SIGKILL).ok());
  ASSERT_TRUE(relay->Wait(10s).has_value());
  const std::string out = relay->Output();
  auto next = h.Start(args);
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(WaitFor([&] { return next->Output().find("events of the transaction committing at") != std::string::npos; },
                      60s, "the next relay reads a partly committed transaction from the checkpoint"))
      << next->Output();
  std::set<std::string> committed;
  auto ids = h.Value("SELECT string_agg(id::text, ',') FROM outbox WHERE type = 'Big'");
  ASSERT_TRUE(ids.has_value());
  for (absl::string_view id : absl::StrSplit(*ids, ',')) committed.emplace(id);
  ASSERT_EQ(committed.size(), static_cast<size_t>(rows));
  ExpectEachEventOnce(broker->bootstrap(), h.Topic("Big"), committed, {},
                      std::to_string(rows) + "-row transaction killed midway", 600s);
  ExpectStopsCleanly(*next);
}

// Another pipeline's producer with a transaction open on `checkpoint_topic`: one record of another slot, sent.
absl::StatusOr<RdKafkaPtr> OpenForeignTransaction(const std::string& bootstrap, const std::string& checkpoint_topic,
                                                  const std::string& name, int transaction_timeout_ms = 60000) {
  auto other = NewKafkaClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                                   {"transactional.id", UniqueName(name)},
                                                   {"transaction.timeout.ms", std::to_string(transaction_timeout_ms)}});
  if (!other.ok()) return other.status();
  rd_kafka_t* rk = other->get();
  if (rd_kafka_error_t* e = rd_kafka_init_transactions(rk, 30000)) {
    const std::string what = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    return absl::UnavailableError("init_transactions: " + what);
  }
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(rk)) {
    const std::string what = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    return absl::UnavailableError("begin_transaction: " + what);
  }
  const std::string key = "7000000000000000000/other_slot/x";
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk, RD_KAFKA_V_TOPIC(checkpoint_topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>("{}"), 2), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = rd_kafka_flush(rk, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return absl::UnavailableError(rd_kafka_err2str(err));
  return other;
}

// Another transactional producer holds a transaction open on the shared checkpoint topic while the relay commits
// checkpoints after it, and the relay is killed: the next relay must not take the last stable offset for the end
// (it would read an older checkpoint and repeat what was committed after it). It waits until that transaction is
// decided, then reads its last checkpoint.
TEST(ExactlyOnce, AForeignTransactionOpenOnTheSharedCheckpointTopicIsWaitedFor) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  EoHarness h(pg, broker->bootstrap(), "EoShared");
  auto relay = h.Start();
  ASSERT_NE(relay, nullptr);
  h.loader().Start();
  ASSERT_TRUE(WaitFor([&] { return h.loader().transactions() >= 200; }, 30s, "load under way"));
  // The other pipeline: a transaction open on the checkpoint topic, with a record of another slot.
  auto other = OpenForeignTransaction(broker->bootstrap(), h.checkpoint_topic(), "other_pipeline");
  ASSERT_TRUE(other.ok()) << other.status();
  rd_kafka_t* rk = other->get();
  // The relay commits more checkpoints behind the open transaction, then dies.
  const double published = Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0);
  ASSERT_TRUE(WaitFor([&] {
    return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}").value_or(0) >= published + 500;
  }, 30s, "commits after the foreign transaction began")) << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGKILL).ok());
  ASSERT_TRUE(relay->Wait(10s).has_value());
  auto next = h.Start({}, /*wait_active=*/false);
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(WaitFor([&] { return next->Output().find("streaming slot") == std::string::npos && h.SlotActive(); },
                      30s, "the next relay holds the slot"))
      << next->Output();
  Sleep(2s);  // the fault's length: the other transaction stays open
  EXPECT_EQ(next->Output().find("streaming slot"), std::string::npos)
      << "the relay read the checkpoint before the open transaction was decided: " << next->Output();
  ASSERT_EQ(rd_kafka_commit_transaction(rk, 30000), nullptr);
  ASSERT_TRUE(WaitFor([&] { return next->Output().find("streaming slot") != std::string::npos; }, 30s,
                      "the relay streams once the other transaction committed"))
      << next->Output();
  h.StopLoadAndExpectEachEventOnce("exactly_once with a foreign transaction open on the checkpoint topic");
  ExpectStopsCleanly(*next);
}

// A transaction open on the checkpoint topic for longer than the relay's read waits (transaction.timeout.ms + 15 s):
// the read gives up naming the partition's last stable offset (where that transaction began) and high watermark,
// and the kafka-transactions.sh command that shows it; the relay retries, and streams once it ends. The message
// named only the high watermark ("read to offset 8 of 8"), which said nothing about the open transaction: that
// mutation fails here.
TEST(ExactlyOnce, ACheckpointReadHeldBackTooLongNamesTheOpenTransactionsOffset) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  EoHarness h(pg, broker->bootstrap(), "EoHeldBack");
  auto other = OpenForeignTransaction(broker->bootstrap(), h.checkpoint_topic(), "held_back", 120000);
  ASSERT_TRUE(other.ok()) << other.status();
  rd_kafka_t* rk = other->get();
  auto ends = PartitionEnds(broker->bootstrap()).StableAndHigh(h.checkpoint_topic());
  ASSERT_TRUE(ends.ok()) << ends.status();
  const auto [stable, high] = *ends;
  ASSERT_EQ(stable + 1, high) << "the premise: the open transaction's record is the partition's last";

  auto relay = h.Start({"--set", "kafka.transaction.timeout.ms=1000"}, /*wait_streaming=*/false);
  ASSERT_NE(relay, nullptr);
  const std::string named = "partition 0: last stable offset " + std::to_string(stable) + ", high watermark " +
                            std::to_string(high);
  ASSERT_TRUE(WaitFor([&] { return relay->Output().find(named) != std::string::npos || !relay->Running(); }, 60s,
                      "the read gives up naming the offsets"))
      << relay->Output();
  EXPECT_NE(relay->Output().find("describe-producers --topic " + h.checkpoint_topic() + " --partition 0, starting at "
                                 "offset " + std::to_string(stable)),
            std::string::npos)
      << relay->Output();
  EXPECT_EQ(relay->Output().find("streaming slot"), std::string::npos) << relay->Output();
  ASSERT_EQ(rd_kafka_commit_transaction(rk, 30000), nullptr);
  EXPECT_TRUE(WaitFor([&] { return relay->Output().find("streaming slot") != std::string::npos; }, 60s,
                      "the relay streams once the transaction ended"))
      << relay->Output();
  ExpectStopsCleanly(*relay);
}

// Two pipelines (two databases and slots, two relays) share one checkpoint topic; one is killed at random moments
// under load while the other commits all along (its transactions open and close on the same partition). Each
// relay's restart reads its own last committed checkpoint, whatever the other has open: both give each event once.
TEST(ExactlyOnce, TwoPipelinesSharingTheCheckpointTopicOneKilledRepeatedlyGiveEachEventOnce) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  const std::vector<std::string> shared = {"--set", "source.checkpoint_topic=" + UniqueName("shared") + ".checkpoints"};
  EoHarness a(pg, broker->bootstrap(), "EoSharedA", shared);
  EoHarness b(pg, broker->bootstrap(), "EoSharedB", shared);
  auto steady = b.Start(shared);
  ASSERT_NE(steady, nullptr);
  a.loader().Start();
  b.loader().Start();
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 5; ++i) {
    auto killed = a.Start(shared);
    ASSERT_NE(killed, nullptr);
    Sleep(std::chrono::milliseconds(300 + rng() % 1200));
    ASSERT_TRUE(killed->Kill(SIGKILL).ok());
    ASSERT_TRUE(killed->Wait(10s).has_value());
  }
  auto last = a.Start(shared);
  ASSERT_NE(last, nullptr);
  a.StopLoadAndExpectEachEventOnce("exactly_once, the pipeline killed 5 times beside another on its checkpoint topic");
  b.StopLoadAndExpectEachEventOnce("exactly_once, the pipeline running beside it");
  EXPECT_TRUE(steady->Running()) << steady->Output();
  ExpectStopsCleanly(*last);
  ExpectStopsCleanly(*steady);
}

// A poison event (larger than the topic allows, checked before producing) inside a PostgreSQL transaction, after
// a good transaction in the same open Kafka transaction. Under halt: that Kafka transaction is aborted (it holds the
// poison transaction's first event), the replay commits the good transaction alone, and the relay exits 1 naming
// the --start-lsn that skips the poison transaction; nothing of the poison transaction is ever visible, and with
// that --start-lsn the rest comes once. Catches a halt that commits the open transaction (the poison transaction's
// first event would show) and one that commits nothing before halting (--start-lsn would lose the good one).
TEST(ExactlyOnce, APoisonEventUnderHaltCommitsWhatCameBeforeItsTransactionThenHalts) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  EoHarness h(pg, broker->bootstrap(), "EoPoison");
  ASSERT_TRUE(broker->CreateTopic(h.Topic("Poison"), 1, {{"max.message.bytes", "10000"}}).ok());
  auto relay = h.Start({"--set", "delivery.transaction_interval_ms=60000"});  // one Kafka transaction for all below
  ASSERT_NE(relay, nullptr);
  const std::string before = h.InsertEvent("Poison", "k", R"({"n":1})");
  h.Sql("BEGIN; INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
        "('00000000-0000-0000-0000-00000000e001', 'p', 'k', 'Poison', '{\"n\":2}'), "
        "('00000000-0000-0000-0000-00000000e002', 'p', 'k', 'Poison', jsonb_build_object('pad', repeat('x', 20000)));"
        " COMMIT;");
  ASSERT_TRUE(relay->Wait(60s).has_value()) << "the relay did not halt: " << relay->Output();
  EXPECT_EQ(relay->exit_code(), 1) << relay->Output();
  const std::string out = relay->Output();
  const size_t at = out.find("--start-lsn ");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string skip = out.substr(at + 12, out.find_first_of(" \n)", at + 12) - at - 12);
  // The good transaction before it was committed before the halt, and nothing of the poison transaction.
  ExpectEachEventOnce(broker->bootstrap(), h.Topic("Poison"), {before}, {}, "exactly_once halt: before the halt");
  auto next = h.Start({"--start-lsn", skip});
  ASSERT_NE(next, nullptr);
  const std::string after = h.InsertEvent("Poison", "k", R"({"n":3})");
  ExpectEachEventOnce(broker->bootstrap(), h.Topic("Poison"), {before, after}, {}, "exactly_once halt then --start-lsn");
  ExpectStopsCleanly(*next);
}

// An error in the stream (a configured column dropped) with a good transaction before it in the same open Kafka
// transaction, and an event of the failed transaction already produced into it: that Kafka transaction is aborted,
// the replay commits the good transaction alone, and the relay exits 1 naming the column. Returns the committed
// records of `type`'s topic, for the callers to check what else they expect of them.
std::vector<KafkaRecord> ExpectAStreamErrorCommitsWhatCameBeforeIt(const std::string& type,
                                                                   std::vector<std::string> relay_args) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  EXPECT_TRUE(pg && broker);
  if (!pg || !broker) return {};
  EoHarness h(pg, broker->bootstrap(), "Eo" + type);
  relay_args.insert(relay_args.end(), {"--set", "delivery.transaction_interval_ms=60000"});  // one Kafka transaction
  auto relay = h.Start(std::move(relay_args));
  EXPECT_NE(relay, nullptr);
  if (relay == nullptr) return {};
  const std::string before = h.InsertEvent(type, "k", R"({"n":1})");
  h.Sql(absl::StrCat("BEGIN; INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
                     "('00000000-0000-0000-0000-00000000d001', 'p', 'k', '", type, "', '{\"n\":2}'); "
                     "ALTER TABLE outbox DROP COLUMN aggregateid; "
                     "INSERT INTO outbox (id, aggregatetype, type, payload) VALUES "
                     "('00000000-0000-0000-0000-00000000d002', 'p', '", type, "', '{\"n\":3}'); COMMIT;"));
  EXPECT_TRUE(relay->Wait(60s).has_value()) << "the relay did not stop: " << relay->Output();
  EXPECT_EQ(relay->exit_code(), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("column \"aggregateid\""), std::string::npos) << relay->Output();
  return ExpectEachEventOnce(broker->bootstrap(), h.Topic(type), {before}, {}, "exactly_once stream error " + type,
                             30s);
}

// Catches a stop that commits the open transaction (the failed transaction's first event would show) and one that
// commits nothing (the good event would wait for the fix).
TEST(ExactlyOnce, AStreamErrorCommitsWhatCameBeforeItsTransactionThenStops) {
  ExpectAStreamErrorCommitsWhatCameBeforeIt("Dropped", {});
}

// The same under a json_schema key converter, whose schema reads the catalog: the replay reads it again, without
// the dropped column, and the good transaction's key (written before the drop) gets the optional schema Debezium's
// Relation handler gives a column the catalog does not have. Catches the replay refusing that key (the relay then
// stopped at the good transaction, and it waited for the fix), and the key written with the schema of before.
TEST(ExactlyOnce, AStreamErrorUnderJsonSchemaConvertersCommitsWhatCameBeforeItsTransaction) {
  const std::vector<KafkaRecord> records = ExpectAStreamErrorCommitsWhatCameBeforeIt(
      "DroppedSchema", {"--set", "outbox.format=raw", "--set", "outbox.key_converter=json_schema"});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, R"({"schema":{"type":"string","optional":true},"payload":"k"})");
}

TEST(ExactlyOnce, APoisonEventUnderDeadLetterIsDeadLetteredInsideTheTransaction) {
  PgServer* pg = PgServer::Shared();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_TRUE(pg && broker);
  EoHarness h(pg, broker->bootstrap(), "EoDead");
  ASSERT_TRUE(broker->CreateTopic(h.Topic("Dead"), 1, {{"max.message.bytes", "10000"}}).ok());
  const std::string dead_topic = h.topic_prefix() + ".dead";
  auto relay = h.StartRelay(ExactlyOnce(DeadLetterArgs(dead_topic)));
  ASSERT_NE(relay, nullptr);
  h.Sql("BEGIN; INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
        "('00000000-0000-0000-0000-00000000d001', 'p', 'k', 'Dead', '{\"n\":1}'), "
        "('00000000-0000-0000-0000-00000000d002', 'p', 'k', 'Dead', jsonb_build_object('pad', repeat('x', 20000))), "
        "('00000000-0000-0000-0000-00000000d003', 'p', 'k', 'Dead', '{\"n\":3}'); COMMIT;");
  ExpectEachEventOnce(broker->bootstrap(), h.Topic("Dead"),
                      {"00000000-0000-0000-0000-00000000d001", "00000000-0000-0000-0000-00000000d003"}, {},
                      "exactly_once dead_letter: the good events");
  auto dead = ReadCommittedJava(broker->bootstrap(), {dead_topic}, 1, 60s);
  ASSERT_TRUE(dead.ok()) << dead.status();
  ASSERT_EQ(dead->size(), 1u);
  ExpectDeadLetteredWithoutValue((*dead)[0], "00000000-0000-0000-0000-00000000d002", "max.message.bytes");
  ExpectStopsCleanly(*relay);
}

// An event the broker refuses only after it was produced (a topic that does not exist, with auto-creation off):
// the Kafka transaction cannot commit, so it is aborted; the relay rewinds and dead-letters that event in its place
// when it comes again, and its neighbours are committed once.
TEST(ExactlyOnce, AnEventTheBrokerRefusesAfterProducingIsDeadLetteredOnTheRetry) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create(KafkaBroker::Options{.extra_properties = "auto.create.topics.enable=false"});
  ASSERT_TRUE(broker.ok()) << broker.status();
  EoHarness h(pg, (*broker)->bootstrap(), "EoRefused");
  ASSERT_TRUE((*broker)->CreateTopic(h.Topic("Good"), 1).ok());
  const std::string dead_topic = h.topic_prefix() + ".dead";
  ASSERT_TRUE((*broker)->CreateTopic(dead_topic, 1).ok());
  std::vector<std::string> args = DeadLetterArgs(dead_topic);
  args.insert(args.end(), {"--set", "kafka.topic.metadata.propagation.max.ms=2000"});
  auto relay = h.StartRelay(ExactlyOnce(args));
  ASSERT_NE(relay, nullptr);
  h.Sql("BEGIN; INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
        "('00000000-0000-0000-0000-00000000c001', 'p', 'k', 'Good', '{\"n\":1}'), "
        "('00000000-0000-0000-0000-00000000c002', 'p', 'k', 'Missing', '{\"n\":2}'), "
        "('00000000-0000-0000-0000-00000000c003', 'p', 'k', 'Good', '{\"n\":3}'); COMMIT;");
  ExpectEachEventOnce((*broker)->bootstrap(), h.Topic("Good"),
                      {"00000000-0000-0000-0000-00000000c001", "00000000-0000-0000-0000-00000000c003"}, {},
                      "exactly_once broker-refused event: its neighbours", 120s);
  auto dead = ReadCommittedJava((*broker)->bootstrap(), {dead_topic}, 1, 60s);
  ASSERT_TRUE(dead.ok()) << dead.status();
  ASSERT_EQ(dead->size(), 1u) << relay->Output();
  EXPECT_EQ(HeaderValue((*dead)[0], "id"), "00000000-0000-0000-0000-00000000c002");
  EXPECT_NE(relay->Output().find("aborting the Kafka transaction"), std::string::npos) << relay->Output();
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
