// Streaming of large in-progress transactions (source.streaming, protocol 2): buffered until Stream Commit,
// spilled to a file beyond the memory bound, discarded on Stream Abort (also a subtransaction's abort).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <csignal>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// A server that streams any transaction over 64 kB of changes.
PgServer* StreamingServer() {
  static std::unique_ptr<PgServer> server = [] {
    auto s = PgServer::Create(PgServer::Options{.extra_conf = "logical_decoding_work_mem=64kB"});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }();
  return server.get();
}

std::string InsertRows(const std::string& type, const std::string& key, int from, int to) {
  return "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 's', '" + key +
         "', '" + type + "', jsonb_build_object('key', '" + key + "', 'step', g, 'pad', repeat('p', 100)) "
         "FROM generate_series(" + std::to_string(from) + ", " + std::to_string(to) + ") g";
}

TEST(Streaming, InterleavedStreamedTransactionsWithAbortedSavepointsDeliverExactlyTheCommittedRows) {
  PgServer* pg = StreamingServer();
  ASSERT_NE(pg, nullptr);
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto spill = MakeTempDir("spill-");
  ASSERT_TRUE(spill.ok());
  auto relay = h.StartRelay({"--set", "source.streaming=true", "--set", "source.spill_dir=" + *spill, "--set",
                             "delivery.max_inflight_bytes=1048576"});
  ASSERT_NE(relay, nullptr);
  auto a = pg->Connect(h.db());
  auto b = pg->Connect(h.db());
  ASSERT_TRUE(a.ok() && b.ok());
  // Two large transactions, interleaved so that their streamed blocks alternate.
  ASSERT_TRUE(a->Exec("BEGIN").ok());
  ASSERT_TRUE(b->Exec("BEGIN").ok());
  ASSERT_TRUE(a->Exec(InsertRows("Streamed", "a", 1, 3000)).ok());
  ASSERT_TRUE(b->Exec(InsertRows("Streamed", "b", 1, 3000)).ok());
  ASSERT_TRUE(a->Exec("SAVEPOINT s1").ok());
  ASSERT_TRUE(a->Exec(InsertRows("Streamed", "a-rolledback", 1, 2000)).ok());
  ASSERT_TRUE(a->Exec("ROLLBACK TO SAVEPOINT s1").ok());
  ASSERT_TRUE(b->Exec(InsertRows("Streamed", "b", 3001, 6000)).ok());
  ASSERT_TRUE(a->Exec(InsertRows("Streamed", "a", 3001, 6000)).ok());
  ASSERT_TRUE(b->Exec("ROLLBACK").ok());  // the whole of b is aborted
  ASSERT_TRUE(a->Exec("COMMIT").ok());
  const std::string last = h.InsertEvent("Streamed", "last", "{\"step\": 1}");

  auto reader = KafkaReader::Create(broker->bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(
      h.Topic("Streamed"),
      [](const std::vector<KafkaRecord>& rs) { return !rs.empty() && rs.back().key == "last"; }, 120s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  std::map<std::string, int> per_key;
  for (const KafkaRecord& r : *records) per_key[r.key.value_or("")]++;
  EXPECT_EQ(per_key["a"], 6000);
  EXPECT_EQ(per_key["b"], 0) << "an aborted streamed transaction was published";
  EXPECT_EQ(per_key["a-rolledback"], 0) << "a rolled-back savepoint was published";
  EXPECT_EQ(per_key["last"], 1);
  EXPECT_EQ(CheckDelivery(*records, {}, {}).order_violations, 0u);
  // The committed transaction's events share its commit LSN.
  std::set<std::string> lsns;
  for (const KafkaRecord& r : *records) if (r.key == "a") lsns.insert(HeaderValue(r, "source_lsn"));
  EXPECT_EQ(lsns.size(), 1u);
  auto [code, metrics] = HttpGet(h.http_port(), "/metrics");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics, m, std::regex("outbox_relay_stream_spills_total (\\d+)"))) << metrics;
  EXPECT_GE(std::stoi(m[1]), 1) << "the 1 MiB bound should have made a transaction spill";
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  EXPECT_TRUE(std::filesystem::is_empty(*spill)) << "spill files left behind";
  RemoveTree(*spill);
}

TEST(Streaming, MillionRowStreamedTransactionStaysWithinTheMemoryBound) {
  PgServer* pg = StreamingServer();
  ASSERT_NE(pg, nullptr);
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  const int rows = EnvInt("OUTBOX_BIG_TX_ROWS", 1000000);
  RelayHarness h(pg, broker->bootstrap());
  h.Init();
  auto spill = MakeTempDir("spill-");
  ASSERT_TRUE(spill.ok());
  auto relay = h.StartRelay({"--set", "source.streaming=true", "--set", "source.spill_dir=" + *spill, "--set",
                             "delivery.max_inflight_bytes=8388608", "--set", "delivery.max_inflight_events=20000"});
  ASSERT_NE(relay, nullptr);
  h.Sql(InsertRows("Huge", "k", 1, rows));
  const Lsn end = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= end || !relay->Running(); }, 600s,
                      "the streamed transaction is confirmed"))
      << relay->Output();
  auto reader = KafkaReader::Create(broker->bootstrap());
  ASSERT_TRUE(reader.ok());
  int64_t low = 0, high = 0;
  ASSERT_EQ(rd_kafka_query_watermark_offsets((*reader)->handle(), h.Topic("Huge").c_str(), 0, &low, &high, 10000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(high, rows);
  const long rss = relay->PeakRssKb();
  std::cout << "[ figures  ] streamed " << rows << "-row transaction: relay peak RSS " << rss << " kB\n";
  EXPECT_GT(rss, 0) << "the relay's peak RSS is unknown";
  EXPECT_LT(rss, 160 * 1024);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  EXPECT_TRUE(std::filesystem::is_empty(*spill)) << "spill files left behind";
  RemoveTree(*spill);
}

// A harness with init done on the streaming server and the shared broker (nullptr, with a failure, without them).
std::unique_ptr<RelayHarness> StreamingHarness() {
  PgServer* pg = StreamingServer();
  KafkaBroker* broker = KafkaBroker::Shared();
  EXPECT_TRUE(pg && broker);
  if (!pg || !broker) return nullptr;
  auto h = std::make_unique<RelayHarness>(pg, broker->bootstrap());
  h->Init();
  return h;
}

// Review defect 8: under outbox.on_update: error, an UPDATE of the outbox inside a streamed transaction was
// dead-lettered where a non-streamed one halts. It halts at the Stream Commit, whatever delivery.on_error says,
// with nothing of the transaction confirmed.
TEST(Streaming, StreamedUpdateUnderOnUpdateErrorHaltsEvenUnderDeadLetter) {
  auto harness = StreamingHarness();
  ASSERT_NE(harness, nullptr);
  RelayHarness& h = *harness;
  PgServer* pg = h.pg();
  h.Sql("ALTER PUBLICATION " + h.publication() + " SET (publish = 'insert, update')");
  const std::string dlq = UniqueName("dlq");
  auto relay = h.StartRelay({"--set", "source.streaming=true", "--set", "outbox.on_update=error", "--set",
                             "delivery.on_error=dead_letter", "--set", "delivery.dead_letter_topic=" + dlq});
  ASSERT_NE(relay, nullptr);
  auto conn = pg->Connect(h.db());
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(conn->Exec("BEGIN").ok());
  ASSERT_TRUE(conn->Exec(InsertRows("Streamed", "u", 1, 3000)).ok());
  ASSERT_TRUE(conn->Exec("UPDATE outbox SET payload = '{}' WHERE id = (SELECT id FROM outbox LIMIT 1)").ok());
  ASSERT_TRUE(conn->Exec("COMMIT").ok());
  const Lsn committed = h.CurrentWal();
  EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("an UPDATE of public.outbox (outbox.on_update: error)"), std::string::npos)
      << relay->Output();
  EXPECT_LT(h.ConfirmedFlush(), committed) << "the halted transaction was confirmed";
  auto reader = KafkaReader::Create(h.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto topics = (*reader)->ListTopics();
  ASSERT_TRUE(topics.ok());
  EXPECT_EQ(std::count(topics->begin(), topics->end(), dlq), 0) << "the UPDATE was dead-lettered";
}

// Review defect 8: spill-file errors were retried forever. A spill directory that keeps failing is fatal after a
// few rewinds, naming the file and the error.
TEST(Streaming, SpillDirectoryThatKeepsFailingIsFatalNamingTheFile) {
  auto harness = StreamingHarness();
  ASSERT_NE(harness, nullptr);
  RelayHarness& h = *harness;
  PgServer* pg = h.pg();
  auto relay = h.StartRelay({"--set", "source.streaming=true", "--set", "source.spill_dir=" + h.dir() + "/missing",
                             "--set", "delivery.max_inflight_bytes=262144"});
  ASSERT_NE(relay, nullptr);
  auto conn = pg->Connect(h.db());
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(conn->Exec("BEGIN").ok());
  ASSERT_TRUE(conn->Exec(InsertRows("Spilled", "s", 1, 3000)).ok());
  ASSERT_TRUE(conn->Exec("COMMIT").ok());
  EXPECT_EQ(relay->Wait(90s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("could not create spill file " + h.dir() + "/missing/outbox-relay-"),
            std::string::npos)
      << relay->Output();
  EXPECT_NE(relay->Output().find("No such file or directory (5 times in a row"), std::string::npos)
      << relay->Output();
}

// A transactional logical decoding message for the outbox prefix: an event of type `type` with id `id`.
std::string EmitMessage(const std::string& type, const std::string& id) {
  return "SELECT pg_logical_emit_message(true, 'outbox', '{\"id\":\"" + id + "\",\"aggregateid\":\"m\",\"type\":\"" +
         type + "\",\"payload\":{\"id\": \"" + id + "\"}}')";
}

// Streamed messages: a relay with source.streaming and source.messages on the streaming server.
class StreamedMessages : public ::testing::Test {
 protected:
  void SetUp() override {
    harness_ = StreamingHarness();
    ASSERT_NE(harness_, nullptr);
    relay_ = harness_->StartRelay({"--set", "source.streaming=true", "--set", "source.messages=true"});
    ASSERT_NE(relay_, nullptr);
    auto reader = KafkaReader::Create(harness_->bootstrap());
    ASSERT_TRUE(reader.ok()) << reader.status();
    reader_ = std::move(*reader);
  }

  // A connection to the test's database, open until the test ends.
  PgConnection& Connection() {
    auto conn = harness_->pg()->Connect(harness_->db());
    EXPECT_TRUE(conn.ok()) << conn.status();
    return connections_.emplace_back(std::move(conn).value());
  }

  static void Run(PgConnection& conn, const std::vector<std::string>& statements) {
    for (const std::string& sql : statements) ASSERT_TRUE(conn.Exec(sql).ok()) << sql;
  }

  // Emits a last message and returns the ids of topic Msg's records up to it, once the server has streamed at least
  // `streamed` transactions of the slot (so the messages did go through the streaming path).
  std::vector<std::string> MessageIdsUpToALastOne(int streamed) {
    RelayHarness& h = *harness_;
    h.Sql(EmitMessage("Msg", "last"));
    auto records = reader_->ReadUntil(
        h.Topic("Msg"),
        [](const std::vector<KafkaRecord>& rs) { return !rs.empty() && HeaderValue(rs.back(), "id") == "last"; },
        120s);
    EXPECT_TRUE(records.ok()) << records.status() << relay_->Output();
    EXPECT_TRUE(WaitFor(
        [&] {
          return std::stoi(h.Value("SELECT coalesce(max(stream_txns), 0)::text FROM pg_stat_replication_slots "
                                   "WHERE slot_name = '" + h.slot() + "'")
                               .value_or("0")) >= streamed;
        },
        30s, "the server streamed the transactions", 100ms));
    std::vector<std::string> ids;
    for (const KafkaRecord& r : reader_->Records(h.Topic("Msg"))) ids.push_back(HeaderValue(r, "id"));
    return ids;
  }

  void TearDown() override {
    if (relay_ == nullptr) return;
    ExpectStopsCleanly(*relay_);
  }

  std::unique_ptr<RelayHarness> harness_;
  std::unique_ptr<ChildProcess> relay_;
  std::unique_ptr<KafkaReader> reader_;
  std::deque<PgConnection> connections_;
};

// SPEC.md §4 (logical messages) and §5 (a rolled-back transaction produces nothing), with source.streaming:
// transactional messages inside transactions large enough to be streamed (past the server's 64 kB
// logical_decoding_work_mem) arrive once their transaction commits, with its rows; nothing of a streamed
// transaction that rolls back arrives.
TEST_F(StreamedMessages, ArriveAtTheCommitOfTheirTransactionAndNoneOfARolledBackOne) {
  RelayHarness& h = *harness_;
  PgConnection& committed = Connection();
  PgConnection& aborted = Connection();
  Run(committed, {"BEGIN", InsertRows("Rows", "c", 1, 3000), EmitMessage("Msg", "c-1"),
                  InsertRows("Rows", "c", 3001, 6000), EmitMessage("Msg", "c-2")});
  Run(aborted, {"BEGIN", InsertRows("Rows", "a", 1, 3000), EmitMessage("Msg", "a-1"),
                InsertRows("Rows", "a", 3001, 6000), "ROLLBACK"});
  Run(committed, {"COMMIT"});
  EXPECT_EQ(MessageIdsUpToALastOne(2), (std::vector<std::string>{"c-1", "c-2", "last"}));
  EXPECT_EQ(reader_->Records(h.Topic("Msg")).front().value, "{\"id\": \"c-1\"}");
  auto rows = reader_->ReadAll(h.Topic("Rows"), 60s);
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::map<std::string, int> per_key;
  for (const KafkaRecord& r : *rows) per_key[r.key.value_or("")]++;
  EXPECT_EQ(per_key, (std::map<std::string, int>{{"c", 6000}}));
}

// DISABLED: a relay bug (issue #11). SPEC.md §5: a rolled-back subtransaction produces nothing. A message emitted in
// a savepoint that rolls back after part of its transaction was streamed is published. pgoutput (checked on
// PostgreSQL 15) sends a streamed transactional message with the top-level xid even when a subtransaction emitted
// it (Message xid = top, then Stream Abort xid = top, subxid = the savepoint's), and the relay files streamed
// messages under the xid the message carries (Relay::HandleLogicalMessage -> BufferStreamed(*message.xid)), so
// StreamBuffers::Abort(xid, subxid) does not discard it. Enable once the relay handles it.
TEST_F(StreamedMessages, DISABLED_NoneOfARolledBackSavepointArrives) {
  Run(Connection(), {"BEGIN", InsertRows("Rows", "c", 1, 3000), EmitMessage("Msg", "c-1"), "SAVEPOINT s",
       EmitMessage("Msg", "c-savepoint-rolled-back"), InsertRows("Rows", "c-rb", 1, 3000), "ROLLBACK TO SAVEPOINT s",
       EmitMessage("Msg", "c-2"), InsertRows("Rows", "c", 3001, 6000), "COMMIT"});
  EXPECT_EQ(MessageIdsUpToALastOne(1), (std::vector<std::string>{"c-1", "c-2", "last"}));
}

}  // namespace
}  // namespace outbox::testing
