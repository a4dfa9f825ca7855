// Integration: a throwaway PostgreSQL and librdkafka's in-process mock cluster (created here, in the test
// process; the relay binary connects to it over TCP), for broker faults the real broker cannot inject on cue.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <string>
#include <csignal>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
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
  // The broker answers the next Produce request with `err`, `rtt_ms` late.
  void FailNextProduce(rd_kafka_resp_err_t err, int rtt_ms) {
    ASSERT_EQ(rd_kafka_mock_broker_push_request_error_rtts(mc_, 1, kApiProduce, 1, err, rtt_ms),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  // The next `count` InitProducerId requests (one per idempotent producer created) fail with `err`.
  void FailInitProducerId(size_t count, rd_kafka_resp_err_t err) {
    std::vector<rd_kafka_resp_err_t> errors(count, err);
    rd_kafka_mock_push_request_errors_array(mc_, kApiInitProducerId, errors.size(), errors.data());
  }

  static constexpr int16_t kApiProduce = 0;          // Kafka protocol API keys
  static constexpr int16_t kApiInitProducerId = 22;

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
};

// A mock cluster and a harness on it, with the checkpoint topic created (the mock has no CreateTopics) and init done.
struct MockRelay {
  explicit MockRelay(PgServer* pg) : h(pg, mock.bootstrap()) {
    mock.CreateTopic(h.checkpoint_topic());
    h.Init();
  }
  MockCluster mock;
  RelayHarness h;
};

// SIGTERM: the relay exits 0 within 30 s.
void ExpectCleanStop(ChildProcess& relay) {
  ASSERT_TRUE(relay.Kill(SIGTERM).ok());
  EXPECT_EQ(relay.Wait(30s), 0) << relay.Output();
}

TEST(RelayMock, EventsArriveThroughTheMockCluster) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockRelay m(pg);
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  for (int i = 0; i < 5; ++i) h.InsertEvent("Mocked", "k" + std::to_string(i), "{}");
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(h.Topic("Mocked"), 5, 30s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(records->size(), 5u);
  ExpectCleanStop(*relay);
}

// source.receive_buffer_bytes sets SO_RCVBUF on the replication socket: the relay logs what getsockopt reports (Linux
// doubles the request), and a stream much larger than the buffer still arrives whole. Without the setsockopt the
// socket keeps TCP's autotuned default (net.ipv4.tcp_rmem's middle value, 131072 here), which the relay's log line
// would show instead.
TEST(RelayMock, TheReceiveBufferIsSetOnTheReplicationSocket) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockRelay m(pg);
  m.mock.CreateTopic(m.h.Topic("Buffered"));
  auto relay = m.h.StartRelay({"--set", "source.receive_buffer_bytes=100000"});
  ASSERT_NE(relay, nullptr);
  // About 1 MB of changes in one transaction: five times the buffer.
  m.h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'order', "
          "'k' || i, 'Buffered', json_build_object('n', i, 'pad', repeat('x', 300))::jsonb "
          "FROM generate_series(1, 3000) i");
  auto reader = KafkaReader::Create(m.mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(m.h.Topic("Buffered"), 3000, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(records->size(), 3000u);
  // Linux grants twice the request, capped at net.core.rmem_max first (then the relay warns, with the same phrase).
  int rmem_max = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile("/proc/sys/net/core/rmem_max").value_or("")), &rmem_max));
  const std::string granted = std::to_string(2 * std::min(100000, rmem_max));
  const std::string line = "the replication socket's receive buffer is " + granted + " bytes";
  EXPECT_NE(relay->Output().find(line), std::string::npos) << relay->Output();
  // A reconnect sets it again, and does not log it again: the same line at every reconnect was noise.
  m.h.Sql("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + m.h.slot() + "'");
  ASSERT_TRUE(WaitFor([&] { return MetricValue(m.h.http_port(), "outbox_relay_reconnects_total") >= 1.0; }, 30s,
                      "the relay reconnects"))
      << relay->Output();
  m.h.InsertEvent("Buffered", "after", "{}");
  ASSERT_TRUE((*reader)->ReadUntil(m.h.Topic("Buffered"), 3001, 60s).ok()) << relay->Output();
  const std::string out = relay->Output();
  EXPECT_EQ(out.find(line), out.rfind(line)) << "logged again at the reconnect:\n" << out;
  ExpectCleanStop(*relay);
}

// With one record held unacknowledged (the broker down) and heavy writes to another table for several status
// intervals, confirmed_flush_lsn stays below that transaction's end, also across a rewind (a lost replication
// connection); once the broker is back the record arrives and the slot moves past it.
TEST(RelayMock, UnacknowledgedRecordHoldsConfirmedFlushBelowItsTransaction) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  // No checkpoint store: only the ack tracker may hold the slot back in this test.
  MockRelay m(pg);
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
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
  ExpectCleanStop(*relay);
}

// Review defect 1 (loss): a record the broker rejects for good under on_error: dead_letter, while the producer
// fails before its dead letter is written. The dead letter was taken as written (its placeholder acknowledged), the
// watermark passed the transaction and the slot was confirmed past it: the event was in neither topic. Now the
// transaction stays unacknowledged, the rewind sends it again, and it arrives.
TEST(RelayMock, DeadLetterNotWrittenBecauseTheProducerFailedIsSentAgain) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockRelay m(pg);
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  const std::string dead_letters = h.topic_prefix() + ".dead";
  mock.CreateTopic(h.Topic("Rejected"));
  mock.CreateTopic(dead_letters);
  // No checkpoint records: the only Produce requests are the events'. A long status interval leaves the status
  // update at the end of a burst (the round in which the last report arrived) as the only one that can confirm:
  // the one the loss went out in.
  auto relay = h.StartRelay({"--set", "source.checkpoint=none", "--set", "delivery.on_error=dead_letter", "--set",
                             "delivery.dead_letter_topic=" + dead_letters, "--set", "source.status_interval_ms=60000",
                             "--set", "source.receive_timeout_ms=600000"},
                            true, {{"OUTBOX_RELAY_TEST_HOOKS", "1"}});
  ASSERT_NE(relay, nullptr);
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  h.InsertEvent("Rejected", "first", "{}");
  ASSERT_TRUE((*reader)->ReadUntil(h.Topic("Rejected"), 1, 30s).ok()) << relay->Output();

  mock.FailNextProduce(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, 4000);
  const std::string id = h.InsertEvent("Rejected", "rejected", "{}");
  // Its record is in flight (one record and its transaction's entry): the producer fails meanwhile.
  ASSERT_TRUE(WaitFor([&] { return MetricValue(h.http_port(), "outbox_relay_inflight_events").value_or(0) >= 2; },
                      30s, "the record is in flight"));
  ASSERT_TRUE(relay->Kill(SIGUSR2).ok());  // rd_kafka_test_fatal_error inside the relay

  const auto has_id = [&](const std::vector<KafkaRecord>& rs) {
    return std::any_of(rs.begin(), rs.end(), [&](const KafkaRecord& r) {
      const auto* header = r.FindHeader("id");
      return header && header->value == id;
    });
  };
  bool arrived = false;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const std::string& topic : {h.Topic("Rejected"), dead_letters}) {
          auto rs = (*reader)->ReadUntil(topic, has_id, 500ms);
          arrived = arrived || (rs.ok() && has_id(*rs));
        }
        return arrived;
      },
      45s, "the rejected event arrives in its topic or as a dead letter"))
      << relay->Output();
  EXPECT_NE(relay->Output().find("fatal error"), std::string::npos) << "the fatal error was not raised";
  ExpectCleanStop(*relay);
}

// Review defect 2 (hang): with a quiet outbox and the broker down, the checkpoint record that idle advance writes
// waits for the broker; release_slot_after_ms counted only outbox records, so the slot stayed held and a fast
// shutdown of PostgreSQL could not finish. Now the checkpoint counts: the slot is released.
TEST(RelayMock, QuietOutboxWithTheBrokerDownReleasesTheSlot) {
  auto pg = PgServer::Create();
  ASSERT_TRUE(pg.ok()) << pg.status();
  MockRelay m(pg->get());
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  mock.CreateTopic(h.Topic("Quiet"));
  h.Sql("CREATE TABLE busy (id bigserial PRIMARY KEY, filler text)");
  auto relay = h.StartRelay({"--set", "delivery.release_slot_after_ms=1500", "--set", "source.status_interval_ms=200"});
  ASSERT_NE(relay, nullptr);
  // Positive control: the quiet outbox's slot follows the WAL (through checkpoints the broker acknowledges).
  h.Sql("INSERT INTO busy (filler) SELECT repeat('x', 100) FROM generate_series(1, 1000)");
  const Lsn before = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= before; }, 30s, "idle advance while the broker is up"));

  mock.SetDown();
  // The WAL moves on: idle advance wants a checkpoint the broker cannot take.
  h.Sql("INSERT INTO busy (filler) SELECT repeat('y', 100) FROM generate_series(1, 1000)");
  ASSERT_TRUE(WaitFor([&] { return !h.SlotActive(); }, 30s, "the relay releases the slot")) << relay->Output();
  EXPECT_EQ(HttpGet(h.http_port(), "/readyz").first, 503);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*pg)->Stop("fast").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  ASSERT_TRUE((*pg)->Start().ok());
  mock.SetUp();
  ASSERT_TRUE(WaitFor([&] { return h.SlotActive(); }, 60s, "the relay takes the slot again")) << relay->Output();
  h.InsertEvent("Quiet", "after", "{}");
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->ReadUntil(h.Topic("Quiet"), 1, 30s).ok()) << relay->Output();
  ExpectCleanStop(*relay);
}

// Review defect 5: a full librdkafka queue (QUEUE_FULL) made the relay poll the producer in a loop of its own,
// without status updates, ignoring SIGTERM and release_slot_after_ms. Now the record is held and the loop goes on:
// with the broker down and a queue of 5 (below the delivery bounds: delivery.unsafe only), the slot is released
// after release_slot_after_ms; with the release far off, the walsender (wal_sender_timeout 2 s) keeps the
// connection for several timeouts and SIGTERM stops the relay; nothing is lost.
TEST(RelayMock, FullProducerQueueKeepsStatusUpdatesStopAndRelease) {
  auto pg = PgServer::Create(PgServer::Options{.extra_conf = "wal_sender_timeout=2s"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  MockRelay m(pg->get());
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  mock.CreateTopic(h.Topic("Full"));
  auto reader = KafkaReader::Create(mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  const std::vector<std::string> tiny_queue = {"--set", "delivery.unsafe=true", "--set",
                                               "kafka.queue.buffering.max.messages=5", "--set",
                                               "source.status_interval_ms=200"};
  const auto insert_batch = [&](const std::string& key) {
    h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'a', '" +
          key + "', 'Full', '{}' FROM generate_series(1, 30)");
  };

  // Release: the broker down, 30 events against a queue of 5.
  std::vector<std::string> args = tiny_queue;
  args.insert(args.end(), {"--set", "delivery.release_slot_after_ms=1500"});
  auto relay = h.StartRelay(args);
  ASSERT_NE(relay, nullptr);
  h.InsertEvent("Full", "first", "{}");
  ASSERT_TRUE((*reader)->ReadUntil(h.Topic("Full"), 1, 30s).ok()) << relay->Output();
  mock.SetDown();
  insert_batch("released");
  ASSERT_TRUE(WaitFor([&] { return !h.SlotActive(); }, 30s, "the relay releases the slot")) << relay->Output();
  mock.SetUp();
  ASSERT_TRUE((*reader)->ReadUntil(h.Topic("Full"), 31, 60s).ok()) << relay->Output();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  ASSERT_EQ(relay->Wait(30s), 0) << relay->Output();

  // Status updates and stop: the release far off, the queue full for several wal_sender_timeouts.
  args = tiny_queue;
  args.insert(args.end(), {"--set", "delivery.release_slot_after_ms=600000", "--set", "delivery.shutdown_timeout_ms=1000"});
  relay = h.StartRelay(args);
  ASSERT_NE(relay, nullptr);
  mock.SetDown();
  insert_batch("held");
  ASSERT_TRUE(WaitFor([&] { return MetricValue(h.http_port(), "outbox_relay_inflight_events").value_or(0) >= 5; },
                      30s, "the producer's queue fills"));
  PollUntil([] { return false; }, 5s);  // more than two wal_sender_timeouts with the queue full
  EXPECT_TRUE(h.SlotActive()) << "the walsender timed the relay out: no status updates while the queue was full";
  EXPECT_EQ(MetricValue(h.http_port(), "outbox_relay_reconnects_total"), 0.0) << relay->Output();
  ExpectCleanStop(*relay);

  // Nothing lost: what the stopped relay did not deliver is sent again from the slot.
  mock.SetUp();
  relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  auto records = (*reader)->ReadUntil(h.Topic("Full"), 61, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  ExpectCleanStop(*relay);
}

// Review defect 6: a fatal producer error that recreating the producer does not clear (here every InitProducerId
// is denied with CLUSTER_AUTHORIZATION_FAILED) looped forever. Now it is fatal after a bounded number of
// recreations: exit 1 naming the cause, the event's transaction not confirmed.
TEST(RelayMock, FatalProducerErrorThatRecreatingDoesNotClearIsFatal) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockRelay m(pg);
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  mock.CreateTopic(h.Topic("Denied"));
  mock.FailInitProducerId(100, RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED);
  auto relay = h.StartRelay({}, /*wait_active=*/false);
  ASSERT_NE(relay, nullptr);
  const Lsn before = h.CurrentWal();
  h.InsertEvent("Denied", "k", "{}");
  EXPECT_EQ(relay->Wait(90s), 1) << relay->Output();
  const std::string output = relay->Output();
  EXPECT_NE(output.find("CLUSTER_AUTHORIZATION_FAILED"), std::string::npos) << output;
  EXPECT_NE(output.find("recreated 5 times"), std::string::npos) << output;
  EXPECT_LE(h.ConfirmedFlush(), before) << "the slot was confirmed past the undelivered event";
}

// Review defect 4: a batch the broker refuses for good (here INVALID_TIMESTAMP for a whole Produce request) made
// the relay rewind and send it again, forever. Such errors halt, naming every event of the batch, and never
// dead-letter its records (they may be innocent), even under on_error: dead_letter.
TEST(RelayMock, BatchRefusedForGoodHaltsNamingItsEventsWithoutDeadLetters) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  MockRelay m(pg);
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  const std::string dead_letters = h.topic_prefix() + ".dead";
  mock.CreateTopic(h.Topic("Batch"));
  mock.CreateTopic(dead_letters);
  auto relay = h.StartRelay({"--set", "source.checkpoint=none", "--set", "delivery.on_error=dead_letter", "--set",
                             "delivery.dead_letter_topic=" + dead_letters, "--set", "kafka.linger.ms=200"});
  ASSERT_NE(relay, nullptr);
  mock.FailNextProduce(RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP, 0);
  auto ids = h.Value("WITH rows AS (INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT "
                     "gen_random_uuid(), 'a', 'k' || g, 'Batch', '{}' FROM generate_series(1, 3) g RETURNING id) "
                     "SELECT string_agg(id::text, ',') FROM rows");
  ASSERT_TRUE(ids.has_value());
  const Lsn committed = h.CurrentWal();
  EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
  const std::string output = relay->Output();
  EXPECT_NE(output.find("INVALID_TIMESTAMP"), std::string::npos) << output;
  for (const absl::string_view id : absl::StrSplit(*ids, ',')) {
    EXPECT_NE(output.find(std::string(id)), std::string::npos) << id;
  }
  EXPECT_EQ(output.find("dead-lettering"), std::string::npos) << output;
  EXPECT_LT(h.ConfirmedFlush(), committed);
}

// A dead letter that the broker refuses too halts (SPEC.md §3: "a failed dead-letter write halts"): exit 1 naming
// the event, nothing of its transaction confirmed.
TEST(RelayMock, DeadLetterTheBrokerRefusesHalts) {
  MockRelay m(PgServer::Shared());
  MockCluster& mock = m.mock;
  RelayHarness& h = m.h;
  const std::string dead_letters = h.topic_prefix() + ".dead";
  mock.CreateTopic(h.Topic("Refused"));
  mock.CreateTopic(dead_letters);
  auto relay = h.StartRelay({"--set", "source.checkpoint=none", "--set", "delivery.on_error=dead_letter", "--set",
                             "delivery.dead_letter_topic=" + dead_letters});
  ASSERT_NE(relay, nullptr);
  // The event's Produce, then the dead letter's.
  mock.FailNextProduce(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, 0);
  mock.FailNextProduce(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, 0);
  const std::string id = h.InsertEvent("Refused", "k", "{}");
  const Lsn committed = h.CurrentWal();
  EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("could not write a dead letter of event id=" + id), std::string::npos)
      << relay->Output();
  EXPECT_LT(h.ConfirmedFlush(), committed);
}

// SIGINT stops the relay as SIGTERM does (SPEC.md §2): exit 0, what was acknowledged confirmed.
TEST(RelayMock, SigintStopsCleanlyAfterConfirmingWhatWasAcknowledged) {
  MockRelay m(PgServer::Shared());
  RelayHarness& h = m.h;
  m.mock.CreateTopic(h.Topic("Interrupted"));
  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  h.InsertEvent("Interrupted", "k", "{}");
  auto reader = KafkaReader::Create(m.mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  auto records = (*reader)->ReadUntil(h.Topic("Interrupted"), 1, 30s);
  ASSERT_TRUE(records.ok()) << relay->Output();
  // Its commit record starts at source_lsn (not the server's WAL position: other tests write to the server).
  const KafkaHeader* lsn = records->front().FindHeader("source_lsn");
  ASSERT_TRUE(lsn && lsn->value);
  const Lsn commit = *Lsn::Parse(*lsn->value);
  ASSERT_TRUE(relay->Kill(SIGINT).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  EXPECT_GT(h.ConfirmedFlush(), commit) << "the acknowledged event was not confirmed at the stop";
}

// SIGTERM with the broker down and records in flight: the stop waits delivery.shutdown_timeout_ms at most, exits 0,
// and confirms nothing of what was not acknowledged; the next start delivers it.
TEST(RelayMock, StopWithTheBrokerDownWaitsShutdownTimeoutAndConfirmsNothingUnacknowledged) {
  MockRelay m(PgServer::Shared());
  RelayHarness& h = m.h;
  m.mock.CreateTopic(h.Topic("Pending"));
  auto relay = h.StartRelay({"--set", "delivery.shutdown_timeout_ms=2000"});
  ASSERT_NE(relay, nullptr);
  m.mock.SetDown();
  h.InsertEvent("Pending", "k", "{}");
  const Lsn committed = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return MetricValue(h.http_port(), "outbox_relay_inflight_events").value_or(0) >= 1; },
                      30s, "the record is in flight"));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 1500ms) << "the stop did not wait for the in-flight record";
  EXPECT_LT(took, 20s) << "the stop waited far beyond delivery.shutdown_timeout_ms";
  EXPECT_LT(h.ConfirmedFlush(), committed) << "an unacknowledged transaction was confirmed at the stop";
  m.mock.SetUp();
  relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  auto reader = KafkaReader::Create(m.mock.bootstrap());
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->ReadUntil(h.Topic("Pending"), 1, 30s).ok()) << relay->Output();
  ExpectCleanStop(*relay);
}

}  // namespace
}  // namespace outbox::testing
