// KafkaSink against librdkafka's in-process mock cluster: the Sink contract the delivery core relies on. Each record
// gets exactly one report, served by Poll only (never from librdkafka's threads), with its origin and a typed
// outcome; Purge reports every record as retriable; the per-topic limits refuse a record before producing.
#include "kafka/sink.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "kafka/producer_config.h"

namespace outbox::kafka {
namespace {

using namespace std::chrono_literals;

class Reports final : public sinks::ReportHandler {
 public:
  void OnReport(const sinks::Report& r) override {
    seen.push_back({r.origin, r.outcome, std::string(r.error_name), r.rejected != nullptr});
    thread_ids.push_back(std::this_thread::get_id());
  }
  struct Seen {
    uint64_t origin;
    sinks::Outcome outcome;
    std::string error_name;
    bool has_record;
  };
  std::vector<Seen> seen;
  std::vector<std::thread::id> thread_ids;
};

class KafkaSinkTest : public ::testing::Test {
 protected:
  KafkaSinkTest() {
    char errstr[256];
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), errstr, sizeof errstr);
    mock_ = rd_kafka_mock_cluster_new(owner_, 1);
    rd_kafka_mock_topic_create(mock_, "events", 1, 1);
  }
  ~KafkaSinkTest() override {
    sink_.reset();
    rd_kafka_mock_cluster_destroy(mock_);
    rd_kafka_destroy(owner_);
  }
  void Create(std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> user = {{"bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mock_)}};
    user.insert(extra.begin(), extra.end());
    auto conf = BuildProducerConfig(user, {1000, 1 << 20}, false);
    ASSERT_TRUE(conf.ok()) << conf.status();
    auto sink = KafkaSink::Create(*conf, &reports_);
    ASSERT_TRUE(sink.ok()) << sink.status();
    sink_ = std::move(*sink);
  }
  // Polls until `done` holds (deadline 20 s).
  bool PollUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      sink_->Poll(50);
    }
    return true;
  }
  static Record Rec(std::string_view topic, std::string_view value) {
    Record r;
    r.topic = topic;
    r.key = "k";
    r.value = value;
    return r;
  }

  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* mock_ = nullptr;
  Reports reports_;
  std::unique_ptr<KafkaSink> sink_;
};

// exactly_once: a commit whose EndTxn the coordinator answers late (1.5 s) is reported acknowledged only after that
// answer, and the producer can begin the next transaction. Each Poll resumed an unfinished commit with a zero
// timeout; librdkafka keeps one pending result for its transactional API, and under a tight Poll loop a resumed call
// took another step's late answer as its own: the commit reported success while the EndTxn was unanswered, and the
// next begin_transaction failed in state CommittingTransaction (seen in CI, where the relay then confirmed the slot
// past a transaction the coordinator aborted).
TEST_F(KafkaSinkTest, ACommitIsReportedOnlyAfterTheCoordinatorAnsweredItsEndTxn) {
  std::map<std::string, std::string> user = {{"bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mock_)},
                                             {"transaction.timeout.ms", "10000"}};
  auto conf = BuildProducerConfig(user, {1000, 1 << 20}, false, /*exactly_once=*/true);
  ASSERT_TRUE(conf.ok()) << conf.status();
  (*conf)["transactional.id"] = "sink-test";
  auto sink = KafkaSink::Create(*conf, &reports_);
  ASSERT_TRUE(sink.ok()) << sink.status();
  sink_ = std::move(*sink);
  ASSERT_TRUE(sink_->InitTransactions(10000).ok());
  constexpr int16_t kEndTxn = 26;  // the EndTxn API key
  rd_kafka_mock_broker_push_request_error_rtts(mock_, 1, kEndTxn, 1, RD_KAFKA_RESP_ERR_NO_ERROR, 1500);
  sinks::ProduceResult r = sinks::ProduceResult::Full();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((r = sink_->Produce(Rec("events", "v"), 1)).code == sinks::ProduceResult::Code::kFull &&
         std::chrono::steady_clock::now() < deadline) {
    sink_->Poll(10);  // the first record to a topic waits for its configuration
  }
  ASSERT_TRUE(r.ok()) << r.error;
  const auto committed_at = std::chrono::steady_clock::now();
  const sinks::CheckpointWrite w = sink_->CommitTransaction(Rec("events", "checkpoint"), 2);
  ASSERT_EQ(w.code, sinks::CheckpointWrite::Code::kPending) << w.error;
  // A tight loop, as the relay's is while it waits for the commit.
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (reports_.seen.empty() && std::chrono::steady_clock::now() < until) sink_->Poll(0);
  ASSERT_EQ(reports_.seen.size(), 1u);
  EXPECT_EQ(reports_.seen[0].origin, 2u);
  EXPECT_EQ(reports_.seen[0].outcome, sinks::Outcome::kAcked);
  EXPECT_GE(std::chrono::steady_clock::now() - committed_at, 1500ms) << "reported before the EndTxn answer";
  EXPECT_TRUE(sink_->Produce(Rec("events", "next"), 3).ok()) << "the next transaction cannot begin";
}

TEST_F(KafkaSinkTest, EveryRecordGetsOneAckedReportWithItsOriginFromPollOnly) {
  Create();
  for (uint64_t origin = 1; origin <= 5; ++origin) {
    sinks::ProduceResult r = sinks::ProduceResult::Full();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while ((r = sink_->Produce(Rec("events", "v"), origin)).code == sinks::ProduceResult::Code::kFull &&
           std::chrono::steady_clock::now() < deadline) {
      sink_->Poll(10);  // the first record to a topic waits for its configuration
    }
    ASSERT_TRUE(r.ok()) << r.error;
  }
  ASSERT_TRUE(PollUntil([&] { return reports_.seen.size() >= 5; }));
  ASSERT_TRUE(PollUntil([&] { return sink_->Outstanding() == 0; }));
  ASSERT_EQ(reports_.seen.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(reports_.seen[i].origin, i + 1);
    EXPECT_EQ(reports_.seen[i].outcome, sinks::Outcome::kAcked);
    EXPECT_EQ(reports_.thread_ids[i], std::this_thread::get_id());  // the loop thread, inside Poll
  }
}

TEST_F(KafkaSinkTest, PurgedRecordsReportRetriableAndNothingElse) {
  Create();
  rd_kafka_mock_broker_set_down(mock_, 1);
  ASSERT_TRUE(sink_->Produce(Rec("events", "v"), 7).code != sinks::ProduceResult::Code::kRejected);
  sink_->Purge();
  ASSERT_TRUE(PollUntil([&] { return sink_->Outstanding() == 0; }));
  for (const auto& s : reports_.seen) {
    EXPECT_EQ(s.outcome, sinks::Outcome::kRetriable) << s.error_name;
    EXPECT_TRUE(s.has_record);
  }
}

TEST_F(KafkaSinkTest, ARecordOverMessageMaxBytesIsRejectedBeforeProducingNamingTheLimit) {
  Create({{"message.max.bytes", "2000"}});
  const std::string big(3000, 'x');
  const sinks::ProduceResult r = sink_->Produce(Rec("events", big), 1);
  EXPECT_EQ(r.code, sinks::ProduceResult::Code::kRejected);
  EXPECT_EQ(r.reason, sinks::Reason::kTooLarge);
  EXPECT_NE(r.error.find("message.max.bytes"), std::string::npos) << r.error;
  sink_->Poll(0);
  EXPECT_TRUE(reports_.seen.empty());  // refused before producing: no report follows
}

TEST_F(KafkaSinkTest, ATopicTheBrokerRefusesForGoodIsARejectedEvent) {
  Create();
  rd_kafka_mock_topic_create(mock_, "denied", 1, 1);
  rd_kafka_mock_push_request_errors(mock_, 0 /* Produce */, 1, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  sinks::ProduceResult r = sinks::ProduceResult::Full();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((r = sink_->Produce(Rec("denied", "v"), 3)).code == sinks::ProduceResult::Code::kFull &&
         std::chrono::steady_clock::now() < deadline) {
    sink_->Poll(10);
  }
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_TRUE(PollUntil([&] { return !reports_.seen.empty(); }));
  EXPECT_EQ(reports_.seen[0].outcome, sinks::Outcome::kRejectedEvent) << reports_.seen[0].error_name;
  EXPECT_EQ(reports_.seen[0].error_name, "TOPIC_AUTHORIZATION_FAILED");
  EXPECT_TRUE(reports_.seen[0].has_record);  // for its dead letter
}

}  // namespace
}  // namespace outbox::kafka
