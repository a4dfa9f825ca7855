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
  EXPECT_GE(Sample(metrics, "outbox_relay_stream_spills_total").value_or(-1), 1)
      << "the 1 MiB bound should have made a transaction spill: " << metrics;
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

// The spill file system full (here: a file size limit, RLIMIT_FSIZE, which the relay meets as EFBIG since it
// ignores SIGXFSZ) while a large streamed transaction spills: the relay rewinds (the partial spill file is never
// replayed), five times, then stops naming the file; nothing of the transaction is confirmed, and a relay without
// the limit then delivers every event of it exactly once, in order.
TEST(Streaming, SpillFileSystemFullRewindsThenStopsNamingTheFileAndLosesNothing) {
  auto harness = StreamingHarness();
  ASSERT_NE(harness, nullptr);
  RelayHarness& h = *harness;
  PgServer* pg = h.pg();
  auto spill = MakeTempDir("spill-full-");
  ASSERT_TRUE(spill.ok());
  const std::vector<std::string> args = {"--set", "source.streaming=true", "--set", "source.spill_dir=" + *spill,
                                         "--set", "delivery.max_inflight_bytes=262144"};
  h.set_command_prefix({"prlimit", "--fsize=196608"});  // 192 KiB per file: the relay's log stays below it
  auto limited = h.StartRelay(args);
  ASSERT_NE(limited, nullptr);
  auto conn = pg->Connect(h.db());
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(conn->Exec("BEGIN").ok());
  ASSERT_TRUE(conn->Exec(InsertRows("Full", "f", 1, 4000)).ok());
  ASSERT_TRUE(conn->Exec("COMMIT").ok());
  EXPECT_EQ(limited->Wait(120s), 1) << limited->Output();
  const std::string out = limited->Output();
  EXPECT_NE(out.find("could not write spill file " + *spill + "/outbox-relay-"), std::string::npos) << out;
  EXPECT_NE(out.find("File too large (5 times in a row"), std::string::npos) << out;

  // Had the stopped relay confirmed the transaction (or replayed a partial spill file), this relay would not get
  // all of it from the slot.
  h.set_command_prefix({});
  auto relay = h.StartRelay(args);
  ASSERT_NE(relay, nullptr);
  auto reader = KafkaReader::Create(h.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(h.Topic("Full"), 4000, 120s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(records->size(), 4000u) << "every event once";
  EXPECT_EQ(CheckDelivery(*records, {}, {}).order_violations, 0u);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  EXPECT_TRUE(std::filesystem::is_empty(*spill)) << "spill files left behind";
  RemoveTree(*spill);
}

// source.messages with source.streaming is refused (config): PostgreSQL streams a transactional message written in a
// savepoint with its top-level transaction's xid (seen on the wire: a message with xid 0x10d4, then a Stream Abort
// with xid 0x10d4, subxid 0x10d5), so a rolled-back savepoint's message could not be told apart and would be
// published. `Config.MessagesWithStreamingAreRefusedNamingBothKeys` pins the refusal.

}  // namespace
}  // namespace outbox::testing
