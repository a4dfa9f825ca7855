// NatsSink against the shared nats-server (skipped without OUTBOX_TEST_NATS_URL): reports come only from Poll, on
// the calling thread; a second record of a key whose first is unacknowledged waits (kFull) until that report is
// served; the checks before publishing; Purge turns what is in flight into retriable reports.
#include "nats/sink.h"

#include <gtest/gtest.h>

#include <chrono>
#include <list>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nats/nats_tool.h"
#include "support/util.h"

namespace outbox::nats {
namespace {

using namespace std::chrono_literals;
using ::outbox::testing::Tool;
using ::outbox::testing::UniqueName;

// Records every report with the thread that served it.
class Reports : public sinks::ReportHandler {
 public:
  void OnReport(const sinks::Report& r) override {
    outcomes.push_back(r.outcome);
    origins.push_back(r.origin);
    threads.push_back(std::this_thread::get_id());
  }
  std::vector<sinks::Outcome> outcomes;
  std::vector<uint64_t> origins;
  std::vector<std::thread::id> threads;
};

class NatsSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.url = ::outbox::testing::SharedNatsUrl();
    if (options_.url.empty()) GTEST_SKIP() << ::outbox::testing::kNoNatsServer;
    prefix_ = UniqueName("sink");
    options_.stream = "S" + prefix_;
    auto [rc, out] = Tool(options_.url, {"add-stream", options_.stream, prefix_ + ".>", "--max-msg-size", "4096"});
    ASSERT_EQ(rc, 0) << out;
  }
  void TearDown() override {
    if (!options_.stream.empty()) Tool(options_.url, {"delete-stream", options_.stream});
  }
  Record Make(const std::string& key, const std::string& id) {
    Record r;
    r.event_id = Keep(id);
    r.topic = subject_ = prefix_ + ".created";
    r.key = key == "" ? std::optional<std::string_view>() : std::optional<std::string_view>(Keep(key));
    r.value = "{}";
    return r;
  }
  std::string_view Keep(const std::string& s) { return *keep_.insert(keep_.end(), s); }
  // Serves reports until `n` have come (or 10 s).
  void PollFor(NatsSink& sink, const Reports& reports, size_t n) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (reports.outcomes.size() < n && std::chrono::steady_clock::now() < until) sink.Poll(50);
  }

  Options options_;
  std::string prefix_, subject_;
  std::list<std::string> keep_;
};

TEST_F(NatsSinkTest, ASecondRecordOfAKeyWaitsForTheFirstsAckAndReportsComeFromPoll) {
  Reports reports;
  auto sink = NatsSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_TRUE((*sink)->reachable());
  ASSERT_TRUE((*sink)->Produce(Make("k1", "e1"), 1).ok());
  // Not acknowledged yet (no Poll has served its report): k1's next record waits, other keys go.
  EXPECT_EQ((*sink)->Produce(Make("k1", "e2"), 2).code, sinks::ProduceResult::Code::kFull);
  ASSERT_TRUE((*sink)->Produce(Make("k2", "e3"), 3).ok());
  ASSERT_TRUE((*sink)->Produce(Make("", "e4"), 4).ok()) << "a null key is not gated";
  EXPECT_EQ((*sink)->Outstanding(), 3u);
  PollFor(**sink, reports, 3);
  ASSERT_EQ(reports.outcomes.size(), 3u);
  for (size_t i = 0; i < reports.outcomes.size(); ++i) {
    EXPECT_EQ(reports.outcomes[i], sinks::Outcome::kAcked);
    EXPECT_EQ(reports.threads[i], std::this_thread::get_id()) << "a report served on another thread";
  }
  EXPECT_EQ((*sink)->Outstanding(), 0u);
  ASSERT_TRUE((*sink)->Produce(Make("k1", "e2"), 2).ok()) << "acked: k1's next record goes";
  PollFor(**sink, reports, 4);
  EXPECT_EQ(reports.origins.back(), 2u);
}

TEST_F(NatsSinkTest, RefusesBeforePublishingWhatTheStreamCannotTake) {
  Reports reports;
  auto sink = NatsSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  Record big = Make("k1", "big");
  const std::string value(5000, 'x');
  big.value = value;
  auto r = (*sink)->Produce(big, 1);
  EXPECT_EQ(r.code, sinks::ProduceResult::Code::kRejected);
  EXPECT_EQ(r.reason, sinks::Reason::kTooLarge);
  EXPECT_NE(r.error.find("max_msg_size"), std::string::npos) << r.error;
  Record elsewhere = Make("k1", "x");
  elsewhere.topic = "not_bound.created";
  r = (*sink)->Produce(elsewhere, 1);
  EXPECT_EQ(r.code, sinks::ProduceResult::Code::kRejected);
  EXPECT_EQ(r.reason, sinks::Reason::kTopic);
  EXPECT_EQ((*sink)->Outstanding(), 0u);
}

TEST_F(NatsSinkTest, PurgeTurnsWhatIsInFlightIntoRetriableReports) {
  Reports reports;
  auto sink = NatsSink::Create(options_, &reports);
  ASSERT_TRUE(sink.ok()) << sink.status();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*sink)->Produce(Make("k" + std::to_string(i), "p" + std::to_string(i)), 7).ok());
  (*sink)->Purge();
  PollFor(**sink, reports, 20);
  EXPECT_EQ(reports.outcomes.size(), 20u) << "one report per record, purged or acked";
  EXPECT_EQ((*sink)->Outstanding(), 0u);
  // The gate is clear again.
  EXPECT_TRUE((*sink)->Produce(Make("k0", "again"), 8).ok());
}

TEST_F(NatsSinkTest, AMissingStreamIsRefusedByName) {
  Options o = options_;
  o.stream = "NO_SUCH_STREAM_" + prefix_;
  Reports reports;
  auto sink = NatsSink::Create(o, &reports);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("\"" + o.stream + "\" does not exist"), absl::string_view::npos)
      << sink.status();
}

}  // namespace
}  // namespace outbox::nats
