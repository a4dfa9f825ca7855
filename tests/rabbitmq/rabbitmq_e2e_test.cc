// The relay against a real rabbitmq-server node (issue 17), read back with pika (tests/rabbitmq/rmq_tool.py, a
// client not built on librabbitmq, which the relay uses). Each test owns its exchange, queue, database and slot.
// Skipped, with the reason, when OUTBOX_TEST_RABBITMQ_URL is not set (scripts/test.sh always starts a node and
// sets it); the tests that stop the broker or raise its memory alarm start a node of their own.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "e2e/core_cases.h"
#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "e2e/loader.h"
#include "nlohmann/json.hpp"
#include "rabbitmq/rmq_tool.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// The load's keys: one unconfirmed message per key is in flight (a confirm waits for the broker's fsync), so the
// relay's rate grows with the keys; 100 keeps it above the loader's on a busy 2-core machine.
constexpr int kLoadKeys = 100;
// The loads are paced: alone here the relay drains about 1,300 events/s into the node, but under CI's parallel
// tests a confirm (the broker's fsync) takes much longer, and an unpaced loader left a backlog that outlasted the
// final wait. Paced, the backlog a test leaves is bounded by the pace, not by the machine's load.
constexpr int kLoadEventsPerSecond = 300;

// One message as pika read it.
struct Message {
  std::string exchange, routing_key, body, message_id, content_type;
  int delivery_mode = 0;
  int64_t timestamp = 0;
  std::map<std::string, std::optional<std::string>> headers;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it != headers.end() && it->second ? *it->second : "";
  }
};

// pika's latin-1 text back to bytes.
std::string Latin1(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      i += 1;
    } else {
      out.push_back(static_cast<char>(((c & 0x1f) << 6) | (s[i + 1] & 0x3f)));
      i += 2;
    }
  }
  return out;
}

class RabbitMqE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = SharedRabbitMqUrl();
    if (url_.empty()) GTEST_SKIP() << kNoRabbitMq;
    pg_ = PgServer::Shared();
    ASSERT_NE(pg_, nullptr);
  }

  // The harness with sink.type rabbitmq, a file checkpoint, and an exchange and a queue of its own (bound with
  // `bindings`, default "#"); `url` defaults to the shared node.
  void MakeHarness(const std::string& extra_yaml = "", std::optional<std::string> url = std::nullopt,
                   std::vector<std::string> bindings = {}) {
    if (url) {
      url_ = *url;
      own_node_ = true;
    }
    h_ = std::make_unique<RelayHarness>(pg_, "127.0.0.1:1", "");
    exchange_ = h_->topic_prefix() + ".x";
    queue_ = h_->topic_prefix() + ".q";
    auto text = ReadFile(h_->config_path());
    ASSERT_TRUE(text.ok());
    std::string yaml = absl::StrReplaceAll(
        *text, {{"  checkpoint_topic: " + h_->checkpoint_topic() + "\n",
                 "  checkpoint: file\n  checkpoint_file: " + h_->dir() + "/checkpoint.json\n"}});
    yaml += "sink:\n  type: rabbitmq\nrabbitmq:\n  url: \"" + url_ + "\"\n  exchange: " + exchange_ +
            "\n  heartbeat_s: 5\ndelivery:\n  dead_letter_topic: " + dead_letter_topic() +
            "\n  release_slot_after_ms: 8000\n" + extra_yaml;
    std::ofstream(h_->config_path()) << yaml;
    std::vector<std::string> args = {"setup", exchange_, queue_};
    if (queue_max_length_ > 0) args.push_back("--max-length=" + std::to_string(queue_max_length_));
    args.insert(args.end(), bindings.begin(), bindings.end());
    auto [rc, out] = RmqTool(url_, args);
    ASSERT_EQ(rc, 0) << out;
  }
  void TearDown() override {
    if (h_ && !own_node_ && !exchange_.empty()) RmqTool(url_, {"delete", exchange_, queue_});
  }
  std::string dead_letter_topic() const { return h_->topic_prefix() + ".dead_letter"; }

  // Takes what waits in the queue and appends it to received_ (in queue order); returns received_.
  const std::vector<Message>& Drain() {
    auto [rc, out] = RmqTool(url_, {"drain", queue_});
    if (rc != 0) return received_;  // a node that is down: nothing new
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) {
        ADD_FAILURE() << "not JSON: " << line;
        continue;
      }
      Message m;
      m.exchange = j["exchange"].get<std::string>();
      m.routing_key = j["routing_key"].get<std::string>();
      m.body = Latin1(j["body"].get<std::string>());
      const auto& p = j["properties"];
      if (p["message_id"].is_string()) m.message_id = p["message_id"].get<std::string>();
      if (p["content_type"].is_string()) m.content_type = p["content_type"].get<std::string>();
      if (p["delivery_mode"].is_number()) m.delivery_mode = p["delivery_mode"].get<int>();
      if (p["timestamp"].is_number()) m.timestamp = p["timestamp"].get<int64_t>();
      for (const auto& [k, v] : j["headers"].items()) {
        m.headers[k] = v.is_string() ? std::optional<std::string>(Latin1(v.get<std::string>())) : std::nullopt;
      }
      received_.push_back(std::move(m));
    }
    return received_;
  }
  bool WaitForCount(size_t n, std::chrono::milliseconds deadline = 60s) {
    return WaitFor([&] { return Drain().size() >= n; }, deadline, "the queue got " + std::to_string(n) + " messages",
                   200ms);
  }
  // The relay delivers: an event inserted now is the first message to arrive.
  void ExpectAnEventArrives(ChildProcess& relay) {
    const std::string id = h_->InsertEvent("created", "k1", R"({"n":1})");
    ASSERT_TRUE(WaitForCount(1)) << relay.Output();
    EXPECT_EQ(received_.at(0).message_id, id);
  }

  bool WaitForEveryCommitted(const Loader& loader, std::chrono::milliseconds deadline = 120s) {
    const std::set<std::string> committed = loader.committed();
    return WaitFor(
        [&] {
          std::set<std::string> ids;
          for (const Message& m : Drain()) ids.insert(m.message_id);
          for (const std::string& id : committed) {
            if (!ids.contains(id)) return false;
          }
          return true;
        },
        deadline, "every committed event is in the queue", 500ms);
  }
  // For a failed wait: how many committed ids are missing, whether the slot confirmed past them (a loss) or not (a
  // stall), and what the relay says about itself.
  std::string Diagnose(const Loader& loader) {
    std::set<std::string> ids;
    for (const Message& m : Drain()) ids.insert(m.message_id);
    size_t missing = 0;
    for (const std::string& id : loader.committed()) missing += ids.contains(id) ? 0 : 1;
    auto [code, body] = HttpGet(h_->http_port(), "/readyz");
    return "missing " + std::to_string(missing) + " of " + std::to_string(loader.committed().size()) +
           "; slot confirmed " + h_->ConfirmedFlush().ToString() + ", server at " + h_->CurrentWal().ToString() +
           "; /readyz " + std::to_string(code) + " " + body + "; inflight_events " +
           std::to_string(MetricValue(h_->http_port(), "outbox_relay_inflight_events").value_or(-1));
  }
  // Every committed id arrived, and per key the first occurrences keep the loader's step order (a rewind may
  // repeat a suffix; consumers deduplicate on the id).
  void ExpectNoLossInOrder(const Loader& loader) {
    std::vector<DeliveredEvent> events;
    for (const Message& m : received_) {
      EXPECT_EQ(m.header("id"), m.message_id);
      const auto j = nlohmann::json::parse(m.body, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << m.body;
      EXPECT_EQ(m.header("key"), j["key"].get<std::string>());
      events.push_back({m.message_id, m.header("key"), m.body});
    }
    const DeliveryCheck c = CheckDeliveredEvents(events, loader.committed(), loader.uncertain());
    EXPECT_EQ(c.lost, 0u) << "of " << loader.committed().size() << " committed events";
    EXPECT_EQ(c.order_violations, 0u) << "first occurrences out of commit order";
    EXPECT_EQ(c.unexpected, 0u) << "events that were never committed";
    std::cout << "received " << received_.size() << " messages, " << c.duplicates << " duplicates\n";
  }

  std::string url_;
  PgServer* pg_ = nullptr;
  std::unique_ptr<RelayHarness> h_;
  std::string exchange_, queue_;
  bool own_node_ = false;
  int queue_max_length_ = 0;  // > 0: the queue refuses (the broker nacks) publishes beyond this many messages
  std::vector<Message> received_;
};

TEST_F(RabbitMqE2E, EveryCommittedEventArrivesOnceWithPropertiesHeadersAndBody) {
  MakeHarness("", std::nullopt, {"rk.#"});
  h_->Init();
  auto relay = h_->StartRelay({"--set", "outbox.fields.additional=aggregatetype:header:kind", "--set",
                               "rabbitmq.routing_key=rk.${routedByValue}"});
  ASSERT_NE(relay, nullptr);
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  const CoreCases cases = WriteCoreCases(*h_);
  const std::map<std::string, ExpectedEvent>& expected = cases.expected;
  const std::string &a = cases.a, &b = cases.b, &c = cases.c, &rolled = cases.rolled, &sp_rolled = cases.sp_rolled, &sentinel = cases.sentinel;
  ASSERT_TRUE(WaitForCount(expected.size())) << relay->Output();

  const std::vector<Message> messages = Drain();
  ASSERT_EQ(messages.size(), expected.size()) << relay->Output();
  std::set<std::string> seen;
  for (const Message& m : messages) {
    ASSERT_TRUE(expected.contains(m.message_id)) << "unexpected event " << m.message_id << " to " << m.routing_key;
    EXPECT_TRUE(seen.insert(m.message_id).second) << "twice: " << m.message_id;
    const ExpectedEvent& e = expected.at(m.message_id);
    EXPECT_EQ(m.exchange, exchange_);
    EXPECT_EQ(m.routing_key, "rk." + e.type);
    EXPECT_EQ(m.body, e.payload);
    EXPECT_EQ(m.content_type, "application/json");
    EXPECT_EQ(m.delivery_mode, 2) << "persistent";
    EXPECT_GE(m.timestamp, before - 5);
    EXPECT_LE(m.timestamp, static_cast<int64_t>(std::time(nullptr)) + 5);
    // Exactly the record's headers, and its key.
    std::set<std::string> names;
    for (const auto& [name, value] : m.headers) names.insert(name);
    EXPECT_EQ(names, (std::set<std::string>{"id", "kind", "source_lsn", "key"}));
    EXPECT_EQ(m.header("id"), m.message_id);
    EXPECT_EQ(m.header("key"), e.key);
    EXPECT_EQ(m.header("kind"), "order");
    EXPECT_TRUE(Lsn::Parse(m.header("source_lsn")).ok()) << m.header("source_lsn");
  }
  EXPECT_FALSE(seen.contains(rolled));
  EXPECT_FALSE(seen.contains(sp_rolled));
  // Commit order in the one queue: a, b, c of the first transaction first.
  EXPECT_EQ(messages[0].message_id, a);
  EXPECT_EQ(messages[1].message_id, b);
  EXPECT_EQ(messages[2].message_id, c);
  EXPECT_EQ(messages.back().message_id, sentinel);
  const Lsn last_lsn = Lsn::Parse(messages.back().header("source_lsn")).value_or(Lsn(0));
  EXPECT_TRUE(WaitFor([&] { return h_->ConfirmedFlush() >= last_lsn; }, 30s, "the slot confirms the last event"));
  ExpectStatusShowsTheActiveSlot(*h_, last_lsn);
  auto [code, body] = HttpGet(h_->http_port(), "/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"rabbitmq\",result=\"published\"}").value_or(-1),
            static_cast<double>(expected.size()));
  (void)relay->Kill(SIGTERM);
  EXPECT_EQ(relay->Wait(30s).value_or(-1), 0) << relay->Output();
}

// A Debezium Server application.properties with debezium.sink.type=rabbitmq runs as is (init and run), once it routes
// by the topic and publishes an empty body for a record without a value: every event reaches the exchange with its
// topic as the routing key, persistent, and the relay's checkpoint lives beside Debezium's offsets file.
TEST_F(RabbitMqE2E, ADebeziumServerFileWithTheRabbitMqSinkPublishesEveryEvent) {
  MakeHarness();
  DebeziumServerRun run = RunDebeziumServerFile(*h_, "debezium.sink.type=rabbitmq\n"
                                                    "debezium.sink.rabbitmq.connection.uri=" + url_ + "\n"
                                                    "debezium.sink.rabbitmq.connection.connection.heartbeat=5\n"
                                                    "debezium.sink.rabbitmq.exchange=" + exchange_ + "\n"
                                                    "debezium.sink.rabbitmq.routingKey.source=topic\n"
                                                    "debezium.sink.rabbitmq.null.value=\n");
  ASSERT_NE(run.relay, nullptr);
  ASSERT_TRUE(WaitForCount(2)) << run.relay->Output();
  const std::vector<Message>& messages = Drain();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].message_id, run.created);
  EXPECT_EQ(messages[0].routing_key, h_->Topic("created"));
  EXPECT_EQ(messages[1].message_id, run.paid);
  EXPECT_EQ(messages[1].routing_key, h_->Topic("paid"));
  for (const Message& m : messages) {
    EXPECT_EQ(m.exchange, exchange_);
    EXPECT_EQ(m.delivery_mode, 2);
  }
  ExpectStopsCleanly(*run.relay);
}

TEST_F(RabbitMqE2E, CheckAndRunRefuseAMissingExchangeByName) {
  MakeHarness();
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check", "--set", "rabbitmq.exchange=no.such.exchange"}, &out), 1) << out;
  EXPECT_NE(out.find("exchange \"no.such.exchange\" does not exist"), std::string::npos) << out;
  EXPECT_EQ(h_->RunCommand({"check"}, &out), 0) << out;
  EXPECT_NE(out.find("exchange " + exchange_ + " exists"), std::string::npos) << out;
  // run: the first event to the missing exchange halts naming the exchange and the event, unconfirmed.
  auto relay = h_->StartRelay({"--set", "rabbitmq.exchange=no.such.exchange"});
  ASSERT_NE(relay, nullptr);
  const std::string event = h_->InsertEvent("created", "k1", R"({"n":1})");
  const std::optional<int> rc = relay->Wait(60s);
  ASSERT_TRUE(rc.has_value()) << relay->Output();
  EXPECT_EQ(*rc, 1) << relay->Output();
  EXPECT_NE(relay->Output().find("exchange \"no.such.exchange\" does not exist"), std::string::npos)
      << relay->Output();
  EXPECT_NE(relay->Output().find(event), std::string::npos) << relay->Output();
}

TEST_F(RabbitMqE2E, UnroutableEventHaltsAndIsNotConfirmed) {
  MakeHarness("", std::nullopt, {"created"});
  h_->Init();
  auto relay = h_->StartRelay({"--set", "rabbitmq.routing_key=${routedByValue}"});
  ASSERT_NE(relay, nullptr);
  const std::string first = h_->InsertEvent("created", "k1", R"({"n":1})");
  ASSERT_TRUE(WaitForCount(1)) << relay->Output();
  const std::string unroutable = h_->InsertEvent("unbound", "k1", R"({"n":2})");
  const std::optional<int> rc = relay->Wait(60s);
  ASSERT_TRUE(rc.has_value()) << relay->Output();
  EXPECT_EQ(*rc, 1) << relay->Output();
  EXPECT_NE(relay->Output().find(unroutable), std::string::npos) << "the halt names the event: " << relay->Output();
  EXPECT_NE(relay->Output().find("NO_ROUTE"), std::string::npos) << relay->Output();
  // Not confirmed: a new run meets the same event and halts again.
  auto again = h_->StartRelay({"--set", "rabbitmq.routing_key=${routedByValue}"}, /*wait_active=*/false);
  const std::optional<int> again_rc = again->Wait(60s);
  ASSERT_TRUE(again_rc.has_value()) << again->Output();
  EXPECT_EQ(*again_rc, 1) << again->Output();
  EXPECT_NE(again->Output().find(unroutable), std::string::npos) << again->Output();
  EXPECT_EQ(Drain().size(), 1u);
  EXPECT_EQ(received_[0].message_id, first);
}

TEST_F(RabbitMqE2E, UnroutableAndMissingExchangeEventsAreDeadLettered) {
  MakeHarness("", std::nullopt, {"created", "#.dead_letter"});
  h_->Init();
  auto relay = h_->StartRelay({"--set", "delivery.on_error=dead_letter", "--set",
                               "rabbitmq.routing_key=${routedByValue}", "--set",
                               "rabbitmq.exchange=" + exchange_ + "${routedByValue}", "--set",
                               "rabbitmq.dead_letter_exchange=" + exchange_});
  ASSERT_NE(relay, nullptr);
  // created goes to exchange <x>created, which does not exist: refused before publishing, dead-lettered.
  // Then the same with the shared exchange: an unroutable type is returned (mandatory) and dead-lettered.
  const std::string missing = h_->InsertEvent("created", "k1", R"({"n":1})");
  ASSERT_TRUE(WaitForCount(1)) << relay->Output();
  EXPECT_EQ(received_[0].routing_key, dead_letter_topic());
  EXPECT_EQ(received_[0].message_id, missing);
  EXPECT_NE(received_[0].header("error").find("does not exist"), std::string::npos) << received_[0].header("error");
  EXPECT_TRUE(received_[0].headers.contains("source_lsn"));
  EXPECT_EQ(Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"rabbitmq\",result=\"dead_lettered\"}").value_or(-1), 1);
  (void)relay->Kill(SIGTERM);
  ASSERT_EQ(relay->Wait(30s).value_or(-1), 0) << relay->Output();

  auto second = h_->StartRelay({"--set", "delivery.on_error=dead_letter", "--set",
                                "rabbitmq.routing_key=${routedByValue}"});
  ASSERT_NE(second, nullptr);
  const std::string ok = h_->InsertEvent("created", "k1", R"({"n":2})");
  const std::string unroutable = h_->InsertEvent("unbound", "k1", R"({"n":3})");
  const std::string after = h_->InsertEvent("created", "k1", R"({"n":4})");
  ASSERT_TRUE(WaitForCount(4)) << second->Output();
  // The dead letter is written once the broker returned its original, so a record of another topic may overtake
  // it (order holds per key within a topic); find each by its id.
  std::map<std::string, Message> by_id;
  for (const Message& m : received_) by_id[m.message_id] = m;
  ASSERT_EQ(by_id.size(), 4u);
  EXPECT_EQ(by_id[ok].routing_key, "created");
  const Message& dead = by_id[unroutable];
  EXPECT_EQ(dead.routing_key, dead_letter_topic());
  EXPECT_NE(dead.header("error").find("NO_ROUTE"), std::string::npos) << dead.header("error");
  EXPECT_EQ(dead.body, R"({"n": 3})") << "the original value";
  EXPECT_EQ(by_id[after].routing_key, "created");
  EXPECT_LT(std::find_if(received_.begin(), received_.end(), [&](const Message& m) { return m.message_id == ok; }),
            std::find_if(received_.begin(), received_.end(), [&](const Message& m) { return m.message_id == after; }))
      << "k1's created events in commit order";
  EXPECT_TRUE(second->Running()) << second->Output();
}

TEST_F(RabbitMqE2E, KillNineUnderLoadLosesNothingAndKeepsKeyOrder) {
  MakeHarness();
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  const int cycles = std::getenv("OUTBOX_CHAOS_CYCLES") ? std::atoi(std::getenv("OUTBOX_CHAOS_CYCLES")) : 20;
  std::mt19937 rng(std::random_device{}());
  Lsn first_confirmed, last_confirmed;
  for (int i = 0; i < cycles; ++i) {
    auto relay = h_->StartRelay();
    ASSERT_NE(relay, nullptr);
    const size_t target = Drain().size() + 5 + rng() % 60;
    PollUntil([&] { return Drain().size() >= target || !relay->Running(); }, 20s, 50ms);
    ASSERT_TRUE(relay->Running()) << relay->Output();
    (void)relay->Kill(SIGKILL);
    (void)relay->Wait(10s);
    last_confirmed = h_->ConfirmedFlush();
    if (i == 0) first_confirmed = last_confirmed;
  }
  EXPECT_GT(last_confirmed, first_confirmed) << "the relay confirms across kill -9 cycles";
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "kill -9 chaos");
  auto relay = h_->StartRelay();
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << Diagnose(loader) << "\n" << relay->Output();
  ExpectNoLossInOrder(loader);
}

// Issue 17 item 3: a queue that holds at most 80 messages (x-overflow: reject-publish) makes the broker nack the
// publishes beyond them while the load goes on, and the test takes messages out in bursts. Each nack rewinds; the
// records confirmed beside it are resent after the rewind; per key, first occurrences stay in commit order and
// nothing is lost (one unconfirmed record per key: a nacked record's successors of its key were never published).
TEST_F(RabbitMqE2E, NackedPublishesAreResentAndFirstOccurrencesKeepCommitOrder) {
  queue_max_length_ = 80;
  MakeHarness();
  h_->Init();
  // A small load: each nack costs a rewind with the reconnect backoff (up to 5 s), and each cycle lands at most
  // what the queue has room for.
  Loader loader(pg_, h_->db(), "load", 10, 100);
  loader.Start();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string nacks = "outbox_relay_delivery_errors_total{sink=\"rabbitmq\",kind=\"transient\"}";
  // The queue is drained after each new nack (it was full), so that nacks keep coming with the load.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  double counted = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         (loader.committed().size() < 150 || Scrape(h_->http_port(), nacks).value_or(0) < 2)) {
    PollUntil([&] { return Scrape(h_->http_port(), nacks).value_or(0) > counted || !relay->Running(); }, 2s, 50ms);
    ASSERT_TRUE(relay->Running()) << relay->Output();
    counted = Scrape(h_->http_port(), nacks).value_or(0);
    Drain();
  }
  loader.Stop();
  ExpectLoadHealthy(loader, 150, "nacks under load");
  EXPECT_GE(Scrape(h_->http_port(), nacks).value_or(0), 2) << "the broker nacked publishes: " << relay->Output();
  // Each rewind waits the reconnect backoff (5 s once nacks repeat), and lands what the queue has room for.
  ASSERT_TRUE(WaitForEveryCommitted(loader, 240s)) << Diagnose(loader) << "\n" << relay->Output();
  ExpectNoLossInOrder(loader);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(RabbitMqE2E, BrokerStoppedAndStartedUnderLoadLosesNothingAndResumes) {
  OwnRabbitMq node;
  MakeHarness("", node.url());
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitForCount(50)) << relay->Output();
  node.Stop();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 503; }, 30s, "/readyz answers 503"));
  const size_t before = loader.committed().size();
  ASSERT_TRUE(WaitFor([&] { return loader.committed().size() >= before + 50; }, 30s, "the loader goes on"));
  node.Start();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 60s, "/readyz answers 200"))
      << relay->Output();
  const size_t target = Drain().size() + 50;
  ASSERT_TRUE(WaitForCount(target)) << "resumes on its own: " << relay->Output();
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "broker outage");
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << Diagnose(loader) << "\n" << relay->Output();
  ExpectNoLossInOrder(loader);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(RabbitMqE2E, MemoryAlarmBlocksPublishingNotTheLoopAndClears) {
  OwnRabbitMq node;
  MakeHarness("", node.url());
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  auto relay = h_->StartRelay({"--set", "source.status_interval_ms=200", "--set",
                               "delivery.release_slot_after_ms=600000"});
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitForCount(50)) << relay->Output();
  auto [rc, out] = node.Ctl("set_vm_memory_high_watermark 0.0000001");
  ASSERT_EQ(rc, 0) << out;
  // /readyz says why; the loop goes on: /healthz answers and the status updates reach PostgreSQL.
  EXPECT_TRUE(WaitFor(
      [&] {
        auto [code, body] = HttpGet(h_->http_port(), "/readyz");
        return code == 503 && body.find("blocked") != std::string::npos;
      },
      30s, "/readyz answers 503 naming the blocked connection"))
      << HttpGet(h_->http_port(), "/readyz").second << relay->Output();
  const auto reply_time = [&] {
    return h_->Value("SELECT extract(epoch from reply_time)::text FROM pg_stat_replication WHERE application_name "
                     "LIKE 'outbox-relay%' ORDER BY reply_time DESC LIMIT 1")
        .value_or("");
  };
  const std::string t0 = reply_time();
  EXPECT_TRUE(WaitFor([&] { return !reply_time().empty() && reply_time() != t0; }, 10s,
                      "status updates go on while the broker blocks"));
  EXPECT_EQ(HttpGet(h_->http_port(), "/healthz").first, 200);
  EXPECT_TRUE(h_->SlotActive());
  const size_t during = loader.committed().size();
  ASSERT_TRUE(WaitFor([&] { return loader.committed().size() >= during + 50; }, 30s, "the loader goes on"));
  std::tie(rc, out) = node.Ctl("set_vm_memory_high_watermark 0.4");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 60s, "/readyz answers 200"))
      << relay->Output();
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "memory alarm");
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << Diagnose(loader) << "\n" << relay->Output();
  ExpectNoLossInOrder(loader);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

// Issue 17 items 2 and 4, end to end: the exchange deleted while the relay runs (it had been found at start). The
// broker closes the channel (404 NOT_FOUND): a refusal of the event for good, never an endless rewind, so the relay
// halts naming the exchange and the event, and the event stays in the slot.
TEST_F(RabbitMqE2E, AnExchangeDeletedWhileRunningHaltsNamingItAndTheEvent) {
  MakeHarness();
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  (void)h_->InsertEvent("created", "k1", R"({"n":1})");
  const Lsn after_first = h_->CurrentWal();
  ASSERT_TRUE(WaitForCount(1)) << relay->Output();
  // Confirmed first: otherwise the rewind after the channel closes resends it, and it is the one named.
  ASSERT_TRUE(WaitFor([&] { return h_->ConfirmedFlush() >= after_first; }, 30s, "the first event is confirmed"));
  auto [rc, out] = RmqTool(url_, {"delete-exchange", exchange_});
  ASSERT_EQ(rc, 0) << out;
  const std::string orphan = h_->InsertEvent("created", "k1", R"({"n":2})");
  const std::optional<int> exit = relay->Wait(60s);
  ASSERT_TRUE(exit.has_value()) << "no halt within 60 s: " << relay->Output();
  EXPECT_EQ(*exit, 1) << relay->Output();
  EXPECT_NE(relay->Output().find(exchange_), std::string::npos) << relay->Output();
  EXPECT_NE(relay->Output().find(orphan), std::string::npos) << relay->Output();
  EXPECT_EQ(h_->PendingChangesNaming(orphan), 1) << "the event's transaction is not confirmed";
}

// Issue 17 item 2: a memory alarm longer than delivery.release_slot_after_ms. While the broker blocks the
// connection, the delivery bound holds what is in flight (delivery.max_inflight_events), the slot is released after
// the interval (a standby could take it), and once the alarm clears the relay takes the slot back and delivers
// every committed event, in order per key.
TEST_F(RabbitMqE2E, AMemoryAlarmLongerThanTheReleaseIntervalReleasesTheSlotWithinTheBounds) {
  OwnRabbitMq node;
  MakeHarness("", node.url());
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  auto relay = h_->StartRelay({"--set", "delivery.release_slot_after_ms=3000", "--set",
                               "delivery.max_inflight_events=200"});
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitForCount(50)) << relay->Output();
  auto [rc, out] = node.Ctl("set_vm_memory_high_watermark 0.0000001");
  ASSERT_EQ(rc, 0) << out;
  double most_inflight = 0;
  const auto inflight = [&] {
    most_inflight = std::max(most_inflight, Scrape(h_->http_port(), "outbox_relay_inflight_events").value_or(0));
    return most_inflight;
  };
  EXPECT_TRUE(WaitFor([&] { return (void)inflight(), !h_->SlotActive(); }, 60s,
                      "the slot is released while the broker blocks"))
      << HttpGet(h_->http_port(), "/readyz").second << relay->Output();
  EXPECT_EQ(HttpGet(h_->http_port(), "/readyz").first, 503);
  EXPECT_LE(inflight(), 200) << "in flight beyond delivery.max_inflight_events";
  EXPECT_TRUE(relay->Running()) << relay->Output();
  std::tie(rc, out) = node.Ctl("set_vm_memory_high_watermark 0.4");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(WaitFor([&] { return h_->SlotActive() && HttpGet(h_->http_port(), "/readyz").first == 200; }, 90s,
                      "the relay takes the slot back and is ready"))
      << relay->Output();
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "memory alarm past the release interval");
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << Diagnose(loader) << "\n" << relay->Output();
  ExpectNoLossInOrder(loader);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(RabbitMqE2E, RefusedCredentialsAreFatalAndNamedAndTheRightOnesFromEnvWork) {
  MakeHarness();
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"run", "--set", "rabbitmq.user=guest", "--set", "rabbitmq.password=wrong-rmq-pass"}, &out,
                           30s),
            1)
      << out;
  EXPECT_NE(out.find("403"), std::string::npos) << out;
  EXPECT_EQ(out.find("wrong-rmq-pass"), std::string::npos) << "the password is masked: " << out;
  auto relay = h_->StartRelay({"--set", "rabbitmq.user=guest", "--set", "rabbitmq.password=${env:RMQ_TEST_PASSWORD}"},
                              true, {{"RMQ_TEST_PASSWORD", "guest"}});
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
}

// Issue 17 item 4, TLS: a node with an amqps listener and a throwaway CA (scripts/rabbitmq-temp.sh,
// RABBITMQ_TEMP_TLS=on). The harness's exchange and queue are made over the plain listener; the relay goes over TLS.
std::vector<std::string> OverTls(const OwnRabbitMq& node, const std::string& ca_file) {
  return {"--set", "rabbitmq.url=" + node.tls_url(), "--set", "rabbitmq.tls.ca=" + ca_file};
}

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_F(RabbitMqE2E, OverTlsWithTheNodesCaCheckPassesAndEventsArrive) {
  OwnRabbitMq node("on");
  MakeHarness("", node.url());
  h_->Init();
  const std::vector<std::string> tls = OverTls(node, node.tls_dir() + "/ca.crt");
  std::string out;
  EXPECT_EQ(h_->RunCommand(With({"check"}, tls), &out), 0) << out;
  EXPECT_NE(out.find("exchange " + exchange_ + " exists"), std::string::npos) << out;
  auto relay = h_->StartRelay(tls);
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
  // The relay's connection is the TLS one.
  auto [rc, connections] = node.Ctl("list_connections ssl ssl_protocol");
  EXPECT_EQ(rc, 0) << connections;
  EXPECT_NE(connections.find("true\ttlsv1."), std::string::npos) << connections;
  ExpectStopsCleanly(*relay);
}

// A certificate not signed by the configured CA is refused by check and by run, by name, and run stops (exit 1)
// instead of retrying a connection that cannot succeed.
TEST_F(RabbitMqE2E, OverTlsAnotherCaIsFatalAndNamedInCheckAndRun) {
  OwnRabbitMq node("on");
  MakeHarness("", node.url());
  h_->Init();
  const std::string other = h_->dir() + "/other-ca";
  auto [certs_rc, certs_out] = MakeTestCerts(other);
  ASSERT_EQ(certs_rc, 0) << certs_out;
  const std::vector<std::string> tls = OverTls(node, other + "/ca.crt");
  for (const std::string command : {"check", "run"}) {
    std::string out;
    EXPECT_EQ(h_->RunCommand(With({command}, tls), &out, 60s), 1) << command << ": " << out;
    EXPECT_NE(out.find("SSL peer cert verification failed"), std::string::npos) << command << ": " << out;
    EXPECT_NE(out.find("rabbitmq.tls.ca"), std::string::npos) << command << " names the key: " << out;
  }
  EXPECT_EQ(Drain().size(), 0u);
}

// A node that wants a client certificate (verify_peer, fail_if_no_peer_cert): without one, check and run stop naming
// rabbitmq.tls.cert (with TLS 1.3 the refusal arrives at the login as a bare SSL error, which the sink types by
// OpenSSL's error code); with the certificate the node's CA signed, events arrive.
TEST_F(RabbitMqE2E, OverTlsANodeWantingAClientCertificateRefusesNoneByNameAndTakesItsOwn) {
  OwnRabbitMq node("peer");
  MakeHarness("", node.url());
  h_->Init();
  const std::vector<std::string> tls = OverTls(node, node.tls_dir() + "/ca.crt");
  for (const std::string command : {"check", "run"}) {
    std::string out;
    EXPECT_EQ(h_->RunCommand(With({command}, tls), &out, 60s), 1) << command << ": " << out;
    EXPECT_NE(out.find("certificate required"), std::string::npos) << command << ": " << out;
    EXPECT_NE(out.find("rabbitmq.tls.cert"), std::string::npos) << command << " names the key: " << out;
  }
  const std::vector<std::string> with_cert = With(tls, {"--set", "rabbitmq.tls.cert=" + node.tls_dir() + "/client.crt",
                                                        "--set", "rabbitmq.tls.key=" + node.tls_dir() + "/client.key"});
  std::string out;
  EXPECT_EQ(h_->RunCommand(With({"check"}, with_cert), &out), 0) << out;
  auto relay = h_->StartRelay(with_cert);
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
