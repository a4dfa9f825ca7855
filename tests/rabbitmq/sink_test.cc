// RabbitMqSink alone against the shared node (skipped without OUTBOX_TEST_RABBITMQ_URL): reports come only from
// Poll, on the calling thread; a second record of a key whose first is unconfirmed waits (kFull) until that report
// is served; a record the broker returns (mandatory, unroutable) is rejected for good while its neighbours in the
// same confirm are acked; a missing exchange is refused before publishing; Purge turns what is in flight into
// retriable reports.
#include "rabbitmq/sink.h"

#include <gtest/gtest.h>

#include <chrono>
#include <list>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rabbitmq/rmq_tool.h"
#include "support/util.h"

namespace outbox::rabbitmq {
namespace {

using namespace std::chrono_literals;
using ::outbox::testing::RmqTool;
using ::outbox::testing::UniqueName;
using Code = sinks::ProduceResult::Code;

class Reports : public sinks::ReportHandler {
 public:
  void OnReport(const sinks::Report& r) override {
    outcomes.push_back(r.outcome);
    origins.push_back(r.origin);
    reasons.push_back(r.reason);
    errors.emplace_back(r.error);
    had_record.push_back(r.rejected != nullptr);
    threads.push_back(std::this_thread::get_id());
  }
  std::vector<sinks::Outcome> outcomes;
  std::vector<uint64_t> origins;
  std::vector<sinks::Reason> reasons;
  std::vector<std::string> errors;
  std::vector<bool> had_record;
  std::vector<std::thread::id> threads;
};

class RabbitMqSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.url = ::outbox::testing::SharedRabbitMqUrl();
    if (options_.url.empty()) GTEST_SKIP() << ::outbox::testing::kNoRabbitMq;
    prefix_ = UniqueName("sink");
    options_.exchange = prefix_ + ".x";
    queue_ = prefix_ + ".q";
    auto [rc, out] = RmqTool(options_.url, {"setup", options_.exchange, queue_, "created"});
    ASSERT_EQ(rc, 0) << out;
  }
  void TearDown() override {
    if (!queue_.empty()) RmqTool(options_.url, {"delete", options_.exchange, queue_});
  }
  Record Make(const std::string& key, const std::string& id, const std::string& topic = "created") {
    Record r;
    r.event_id = Keep(id);
    r.topic = Keep(topic);
    r.key = key == "" ? std::optional<std::string_view>() : std::optional<std::string_view>(Keep(key));
    r.value = "{}";
    return r;
  }
  std::string_view Keep(const std::string& s) { return *keep_.insert(keep_.end(), s); }
  void PollFor(RabbitMqSink& sink, const Reports& reports, size_t n) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (reports.outcomes.size() < n && std::chrono::steady_clock::now() < until) sink.Poll(50);
  }
  // Produces until the sink takes it (the first record of an exchange waits for its check).
  sinks::ProduceResult ProduceWhenReady(RabbitMqSink& sink, const Record& r, uint64_t origin) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    sinks::ProduceResult res = sink.Produce(r, origin);
    while (res.code == Code::kFull && std::chrono::steady_clock::now() < until) {
      sink.Poll(20);
      res = sink.Produce(r, origin);
    }
    return res;
  }

  Options options_;
  std::string prefix_, queue_;
  std::list<std::string> keep_;
};

TEST_F(RabbitMqSinkTest, ASecondRecordOfAKeyWaitsForTheFirstsConfirmAndReportsComeFromPoll) {
  Reports reports;
  auto sink = RabbitMqSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_TRUE((*sink)->reachable());
  ASSERT_TRUE(ProduceWhenReady(**sink, Make("w", "warm"), 9).ok());
  PollFor(**sink, reports, 1);
  ASSERT_EQ(reports.outcomes.size(), 1u);
  ASSERT_TRUE((*sink)->Produce(Make("k1", "e1"), 1).ok());
  // Not confirmed yet (no Poll has served its report): k1's next record waits, other keys go.
  std::this_thread::sleep_for(100ms);  // its confirm may well have come: still unserved, so it still waits
  EXPECT_EQ((*sink)->Produce(Make("k1", "e2"), 2).code, Code::kFull);
  ASSERT_TRUE((*sink)->Produce(Make("k2", "e3"), 3).ok());
  ASSERT_TRUE((*sink)->Produce(Make("", "e4"), 4).ok()) << "a null key is not gated";
  EXPECT_EQ((*sink)->Outstanding(), 3u);
  PollFor(**sink, reports, 4);
  ASSERT_EQ(reports.outcomes.size(), 4u);
  for (size_t i = 0; i < reports.outcomes.size(); ++i) {
    EXPECT_EQ(reports.outcomes[i], sinks::Outcome::kAcked) << reports.errors[i];
    EXPECT_EQ(reports.threads[i], std::this_thread::get_id()) << "a report served on another thread";
  }
  EXPECT_EQ((*sink)->Outstanding(), 0u);
  ASSERT_TRUE((*sink)->Produce(Make("k1", "e2"), 2).ok()) << "confirmed: k1's next record goes";
  PollFor(**sink, reports, 5);
  EXPECT_EQ(reports.origins.back(), 2u);
}

TEST_F(RabbitMqSinkTest, AnUnroutableRecordIsRejectedAndItsNeighboursAcked) {
  Reports reports;
  auto sink = RabbitMqSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  options_.routing_key = "${topic}";
  ASSERT_TRUE(ProduceWhenReady(**sink, Make("a", "r1"), 1).ok());
  ASSERT_TRUE((*sink)->Produce(Make("b", "r2", "nowhere"), 2).ok());
  ASSERT_TRUE((*sink)->Produce(Make("c", "r3"), 3).ok());
  PollFor(**sink, reports, 3);
  ASSERT_EQ(reports.outcomes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    if (reports.origins[i] == 2) {
      EXPECT_EQ(reports.outcomes[i], sinks::Outcome::kRejectedEvent);
      EXPECT_EQ(reports.reasons[i], sinks::Reason::kTopic);
      EXPECT_NE(reports.errors[i].find("NO_ROUTE"), std::string::npos) << reports.errors[i];
      EXPECT_TRUE(reports.had_record[i]) << "the record comes with its rejection (for a dead letter)";
    } else {
      EXPECT_EQ(reports.outcomes[i], sinks::Outcome::kAcked) << reports.errors[i];
    }
  }
}

TEST_F(RabbitMqSinkTest, AMissingExchangeIsRefusedBeforePublishing) {
  Options o = options_;
  o.exchange = prefix_ + ".${routedByValue}";
  Reports reports;
  auto sink = RabbitMqSink::Create(o, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  Record r = Make("k", "m1");
  r.route_value = "missing";
  auto res = ProduceWhenReady(**sink, r, 1);
  EXPECT_EQ(res.code, Code::kRejected);
  EXPECT_EQ(res.reason, sinks::Reason::kTopic);
  EXPECT_NE(res.error.find("exchange \"" + prefix_ + ".missing\" does not exist"), std::string::npos) << res.error;
  EXPECT_EQ((*sink)->Outstanding(), 0u);
  r.route_value = "x";  // the test's exchange: taken
  EXPECT_TRUE(ProduceWhenReady(**sink, r, 2).ok());
  PollFor(**sink, reports, 1);
  ASSERT_EQ(reports.outcomes.size(), 1u);
  EXPECT_EQ(reports.outcomes[0], sinks::Outcome::kAcked);
}

TEST_F(RabbitMqSinkTest, PurgeTurnsWhatIsInFlightIntoRetriableReports) {
  Reports reports;
  auto sink = RabbitMqSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE(ProduceWhenReady(**sink, Make("k0", "p0"), 7).ok());
  for (int i = 1; i < 200; ++i) ASSERT_TRUE((*sink)->Produce(Make("k" + std::to_string(i), "p" + std::to_string(i)), 7).ok());
  (*sink)->Purge();
  PollFor(**sink, reports, 200);
  EXPECT_EQ(reports.outcomes.size(), 200u) << "one report per record, purged or acked";
  EXPECT_EQ((*sink)->Outstanding(), 0u);
  EXPECT_TRUE((*sink)->Produce(Make("k0", "again"), 8).ok()) << "the gate is clear again";
  PollFor(**sink, reports, 201);
  EXPECT_EQ(reports.outcomes.back(), sinks::Outcome::kAcked);
}

TEST_F(RabbitMqSinkTest, RefusedCredentialsFailTheStartByName) {
  Options o = options_;
  o.user = "guest";
  o.password = "not-the-password";
  Reports reports;
  auto sink = RabbitMqSink::Create(o, &reports);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("403"), absl::string_view::npos) << sink.status();
}

}  // namespace
}  // namespace outbox::rabbitmq
