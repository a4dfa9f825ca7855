// The relay with sink.type http (issue 19) against a receiver run in this process (cpp-httplib) that records every
// request and answers as each test commands it (200, 500, 429 with Retry-After, 400, or a stall), directly over
// HTTP and through a throwaway nginx for HTTPS (scripts/nginx-temp.sh). Each test owns its receiver (port from the
// kernel), database, slot and checkpoint file; PostgreSQL is the shared one of scripts/test.sh (or a throwaway one).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_replace.h"
#include "e2e/core_cases.h"
#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "e2e/loader.h"
#include "nlohmann/json.hpp"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// The load: a key has one request out at a time (and the chaos receiver answers in 1-8 ms, failing every tenth
// first attempt), so the relay's rate grows with the keys, and the receiver's own threads bound it (a few hundred
// events a second here). An unpaced loader on an idle machine left a backlog still draining after the final wait's
// 120 s; paced, the backlog stays within it.
constexpr int kLoadKeys = 100;
constexpr int kLoadEventsPerSecond = 300;
using SteadyClock = std::chrono::steady_clock;

// What the receiver answers one request with.
struct Answer {
  int status = 200;
  std::optional<int> retry_after_s;   // a Retry-After header
  std::chrono::milliseconds stall{0};  // wait this long before answering
};
Answer Reply(int status, std::optional<int> retry_after_s = std::nullopt,
             std::chrono::milliseconds stall = std::chrono::milliseconds(0)) {
  return Answer{status, retry_after_s, stall};
}

// One request as the receiver saw it.
struct Seen {
  std::string method, path, body;
  std::multimap<std::string, std::string> headers;  // names lowercased
  int status = 0;                                   // what it was answered
  SteadyClock::time_point at;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  // {"key":..,"step":..} of the loader and of InsertEvent payloads that carry them.
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// The tests' webhook receiver: every request recorded, answered by the rule the test sets (200 by default).
class Receiver {
 public:
  using Rule = std::function<Answer(const Seen&, int attempt)>;  // attempt: 1 for the first request of its id
  Receiver() { Start(0); }
  ~Receiver() { Stop(); }

  void Start(int port) {
    server_ = std::make_unique<httplib::Server>();
    server_->new_task_queue = [] { return new httplib::ThreadPool(48); };
    const auto handle = [this](const httplib::Request& req, httplib::Response& res) {
      Seen s;
      s.method = req.method;
      s.path = req.path;
      s.body = req.body;
      s.at = SteadyClock::now();
      for (const auto& [name, value] : req.headers) {
        std::string lower = name;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        s.headers.emplace(lower, value);
      }
      Answer a;
      size_t index = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        const int attempt = ++attempts_[s.Header("idempotency-key")];
        if (rule_ && req.method == "POST") a = rule_(s, attempt);
        index = seen_.size();
        seen_.push_back(s);
      }
      if (a.stall.count() > 0) {
        PollUntil([&] { return stopping_.load(); }, a.stall, 20ms);
      }
      res.status = a.status;
      if (a.retry_after_s) res.set_header("Retry-After", std::to_string(*a.retry_after_s));
      res.set_content(a.status < 300 ? "ok" : "refused: status " + std::to_string(a.status), "text/plain");
      std::lock_guard<std::mutex> lock(mu_);
      seen_[index].status = a.status;
    };
    server_->Post(".*", handle);
    server_->Get(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });  // and HEAD
    if (port == 0) {
      port_ = server_->bind_to_any_port("127.0.0.1");
    } else {
      ASSERT_TRUE(server_->bind_to_port("127.0.0.1", port)) << "port " << port;
      port_ = port;
    }
    ASSERT_GT(port_, 0);
    stopping_ = false;
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  void Stop() {
    if (!server_) return;
    stopping_ = true;
    server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }
  void SetRule(Rule rule) {
    std::lock_guard<std::mutex> lock(mu_);
    rule_ = std::move(rule);
  }
  std::vector<Seen> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  // Requests answered 2xx, the first of each Idempotency-Key only, in the order they arrived.
  std::vector<Seen> Delivered() const {
    std::vector<Seen> out;
    std::set<std::string> ids;
    for (const Seen& s : seen()) {
      if (s.method == "POST" && s.status >= 200 && s.status < 300 && ids.insert(s.Header("idempotency-key")).second) {
        out.push_back(s);
      }
    }
    return out;
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  Rule rule_;
  std::vector<Seen> seen_;
  std::map<std::string, int> attempts_;
};

std::pair<int, std::string> RunShell(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

// nginx (scripts/nginx-temp.sh) terminating HTTPS in front of a receiver.
class Nginx {
 public:
  explicit Nginx(int upstream_port) {
    auto dir = MakeTempDir("nginx-");
    EXPECT_TRUE(dir.ok());
    dir_ = dir.value_or("/tmp/nginx-own");
    auto [rc, out] = RunShell("bash '" + std::string(OUTBOX_NGINX_TEMP) + "' start '" + dir_ + "' " +
                              std::to_string(upstream_port));
    EXPECT_EQ(rc, 0) << out;
    const size_t at = out.find("HTTPS_PORT=");
    if (at != std::string::npos) port_ = std::atoi(out.c_str() + at + 11);
    const size_t mtls = out.find("MTLS_PORT=");
    if (mtls != std::string::npos) mtls_port_ = std::atoi(out.c_str() + mtls + 10);
    ca_file_ = dir_ + "/ca.crt";
  }
  ~Nginx() {
    RunShell("bash '" + std::string(OUTBOX_NGINX_TEMP) + "' stop '" + dir_ + "'");
    RemoveTree(dir_);
  }
  int port() const { return port_; }
  // The port that requires a client certificate of the CA (client_cert(), client_key()).
  int mtls_port() const { return mtls_port_; }
  const std::string& ca_file() const { return ca_file_; }
  std::string client_cert() const { return dir_ + "/client.crt"; }
  std::string client_key() const { return dir_ + "/client.key"; }

 private:
  std::string dir_, ca_file_;
  int port_ = 0, mtls_port_ = 0;
};

class HttpE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    pg_ = PgServer::Shared();
    ASSERT_NE(pg_, nullptr);
  }

  // The harness with sink.type http posting to <base>/events/${routedByValue}, and a file checkpoint.
  void MakeHarness(const std::string& base, const std::string& http_sink_yaml = "") {
    h_ = std::make_unique<RelayHarness>(pg_, "127.0.0.1:1", "");
    auto text = ReadFile(h_->config_path());
    ASSERT_TRUE(text.ok());
    std::string yaml = absl::StrReplaceAll(
        *text, {{"  checkpoint_topic: " + h_->checkpoint_topic() + "\n",
                 "  checkpoint: file\n  checkpoint_file: " + h_->dir() + "/checkpoint.json\n"}});
    yaml += "sink:\n  type: http\nhttp_sink:\n  url: \"" + base + "/events/${routedByValue}\"\n" +
            "  retry_backoff_ms: 50\n  retry_backoff_max_ms: 400\n" + http_sink_yaml +
            "delivery:\n  dead_letter_topic: " + dead_letter_topic() + "\n  release_slot_after_ms: 8000\n";
    std::ofstream(h_->config_path()) << yaml;
  }
  std::string dead_letter_topic() const { return h_->topic_prefix() + ".dead_letter"; }

  bool WaitForDelivered(size_t n, std::chrono::milliseconds deadline = 60s) {
    return WaitFor([&] { return receiver_.Delivered().size() >= n; }, deadline,
                   std::to_string(n) + " events delivered", 50ms);
  }

  // Inserts one event and waits for the receiver to have it as its first delivery, returned in `*seen`.
  void ExpectOneEventPosted(ChildProcess& relay, Seen* seen) {
    const std::string id = h_->InsertEvent("created", "k1", R"({"n":1})");
    ASSERT_TRUE(WaitForDelivered(1)) << relay.Output();
    *seen = receiver_.Delivered().at(0);
    EXPECT_EQ(seen->Header("idempotency-key"), id);
  }
  bool WaitForEveryCommitted(const Loader& loader) {
    const std::set<std::string> committed = loader.committed();
    return WaitFor(
        [&] {
          std::set<std::string> ids;
          for (const Seen& s : receiver_.Delivered()) ids.insert(s.Header("idempotency-key"));
          for (const std::string& id : committed) {
            if (!ids.contains(id)) return false;
          }
          return true;
        },
        120s, "every committed event delivered", 250ms);
  }

  // Every committed id was delivered, and per key the first deliveries keep the loader's step order. (A rewind
  // may send a suffix again; the receiver deduplicates on Idempotency-Key.)
  void ExpectNoLossInOrder(const Loader& loader) {
    std::vector<DeliveredEvent> events;
    for (const Seen& s : receiver_.Delivered()) {
      const std::string id = s.Header("idempotency-key");
      EXPECT_EQ(s.Header("id"), id);
      const auto j = s.Json();
      ASSERT_FALSE(j.is_discarded()) << s.body;
      EXPECT_EQ(s.Header("outbox-key"), j["key"].get<std::string>());
      events.push_back({id, s.Header("outbox-key"), s.body});
    }
    const DeliveryCheck c = CheckDeliveredEvents(events, loader.committed(), loader.uncertain());
    EXPECT_EQ(c.lost, 0u) << "of " << loader.committed().size() << " committed events";
    EXPECT_EQ(c.order_violations, 0u) << "first deliveries out of commit order";
    EXPECT_EQ(c.unexpected, 0u) << "events that were never committed";
  }

  PgServer* pg_ = nullptr;
  Receiver receiver_;
  std::unique_ptr<RelayHarness> h_;
};

TEST_F(HttpE2E, EveryCommittedEventIsPostedOnceWithHeadersAndBody) {
  MakeHarness(receiver_.url());
  h_->Init();
  auto relay = h_->StartRelay({"--set", "outbox.fields.additional=aggregatetype:header:kind"});
  ASSERT_NE(relay, nullptr);
  const CoreCases cases = WriteCoreCases(*h_);
  const std::map<std::string, ExpectedEvent>& expected = cases.expected;
  const std::string &a = cases.a, &b = cases.b, &rolled = cases.rolled, &sp_rolled = cases.sp_rolled, &sentinel = cases.sentinel;
  ASSERT_TRUE(WaitForDelivered(expected.size())) << relay->Output();

  const std::vector<Seen> seen = receiver_.seen();
  ASSERT_EQ(seen.size(), expected.size()) << "one request per event, none for rolled-back ones: " << relay->Output();
  std::string last_lsn;
  for (const Seen& s : seen) {
    const std::string event_id = s.Header("idempotency-key");
    ASSERT_TRUE(expected.contains(event_id)) << "unexpected event " << event_id << " at " << s.path;
    const ExpectedEvent& e = expected.at(event_id);
    EXPECT_EQ(s.method, "POST");
    EXPECT_EQ(s.path, "/events/" + e.type);
    EXPECT_EQ(s.body, e.payload);
    EXPECT_EQ(s.Header("content-type"), "application/json");
    EXPECT_EQ(s.Header("outbox-key"), e.key);
    EXPECT_EQ(s.Header("id"), event_id);
    EXPECT_EQ(s.Header("kind"), "order");
    EXPECT_FALSE(s.Header("source_lsn").empty());
    EXPECT_EQ(s.headers.count("idempotency-key"), 1u);
    last_lsn = std::max(last_lsn, s.Header("source_lsn"));
  }
  for (const Seen& s : seen) {
    EXPECT_NE(s.Header("idempotency-key"), rolled);
    EXPECT_NE(s.Header("idempotency-key"), sp_rolled);
  }
  // o1's events in commit order (a, then b on another path).
  const auto first_of = [&](const std::string& event_id) {
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i].Header("idempotency-key") == event_id) return i;
    }
    return seen.size();
  };
  EXPECT_LT(first_of(a), first_of(b));
  const Lsn sentinel_lsn = Lsn::Parse(seen[first_of(sentinel)].Header("source_lsn")).value_or(Lsn(0));
  EXPECT_TRUE(WaitFor([&] { return h_->ConfirmedFlush() >= sentinel_lsn; }, 30s, "the slot confirms the last event"));
  ExpectStatusShowsTheActiveSlot(*h_, sentinel_lsn);
  auto [code, body] = HttpGet(h_->http_port(), "/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"http\",result=\"published\"}").value_or(-1),
            static_cast<double>(expected.size()));
  ExpectStopsCleanly(*relay);
}

// 500s for one key, 429 with Retry-After for another, a stall past the request timeout for a third: each key's
// events arrive in commit order, a key's later event is never sent before its earlier one was acknowledged, and the
// other keys go on meanwhile.
TEST_F(HttpE2E, PerKeyOrderHoldsWhileSomeKeysAreRetried) {
  MakeHarness(receiver_.url(), "  timeout_ms: 1000\n  max_in_flight: 8\n");
  receiver_.SetRule([](const Seen& s, int attempt) {
    const auto j = s.Json();
    const std::string key = j.is_discarded() ? "" : j.value("key", "");
    const int step = j.is_discarded() ? -1 : j.value("step", -1);
    if (key == "k1" && attempt <= 3) return Reply(500);
    if (key == "k2" && step == 1 && attempt == 1) return Reply(429, 1);
    if (key == "k3" && step == 0 && attempt == 1) return Reply(200, std::nullopt, 2500ms);  // past the timeout
    return Answer{};
  });
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  // 6 transactions of 5 events each over k0..k4, each key's step in its payload; a key's steps alternate between
  // two types, so between two paths: the order holds per key across paths.
  std::map<std::string, int> steps;
  size_t events = 0;
  for (int tx = 0; tx < 6; ++tx) {
    std::string sql = "BEGIN;";
    for (int e = 0; e < 5; ++e) {
      const std::string key = "k" + std::to_string((tx + e) % 5);
      sql += "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'load', '" +
             key + "', '" + (steps[key] % 2 == 0 ? "ordered" : "amended") + "', '{\"key\":\"" + key +
             "\",\"step\":" + std::to_string(steps[key]) + "}');";
      ++steps[key];
      ++events;
    }
    h_->Sql(sql + "COMMIT;");
  }
  ASSERT_TRUE(WaitForDelivered(events)) << relay->Output();

  const std::vector<Seen> seen = receiver_.seen();
  // Per key, in the order requests arrived: the steps never go down, and a step is sent again only while it was not
  // acknowledged (its first 2xx ends its sends; the next step comes only after it).
  std::map<std::string, int> acked_step, last_sent;
  std::map<std::string, SteadyClock::time_point> first_429;
  SteadyClock::time_point k2_retry{}, k1_first_ack{};
  size_t others_before_k1_ack = 0;
  for (const Seen& s : seen) {
    const auto j = s.Json();
    ASSERT_FALSE(j.is_discarded()) << s.body;
    const std::string key = j["key"].get<std::string>();
    const int step = j["step"].get<int>();
    if (last_sent.contains(key)) {
      EXPECT_GE(step, last_sent[key]) << "key " << key << " went back";
      if (step > last_sent[key]) {
        EXPECT_EQ(acked_step[key], last_sent[key]) << "key " << key << " step " << step << " sent before step "
                                                   << last_sent[key] << " was acknowledged";
      }
    } else {
      EXPECT_EQ(step, 0) << "key " << key << " began with a later event";
    }
    last_sent[key] = step;
    if (s.status >= 200 && s.status < 300) acked_step[key] = std::max(acked_step.contains(key) ? acked_step[key] : -1, step);
    if (key == "k2" && s.status == 429) first_429[key] = s.at;
    if (key == "k2" && step == 1 && s.status == 200 && k2_retry == SteadyClock::time_point{}) k2_retry = s.at;
    if (key == "k1" && s.status == 200 && k1_first_ack == SteadyClock::time_point{}) k1_first_ack = s.at;
    if (key != "k1" && k1_first_ack == SteadyClock::time_point{} && s.status == 200) ++others_before_k1_ack;
  }
  EXPECT_EQ(last_sent.size(), 5u);
  for (const auto& [key, step] : last_sent) EXPECT_EQ(step, 5) << key;
  ASSERT_TRUE(first_429.contains("k2"));
  EXPECT_GE(k2_retry - first_429["k2"], 900ms) << "Retry-After: 1 honoured";
  EXPECT_GT(others_before_k1_ack, 0u) << "other keys go on while k1 is retried";
  // Everything confirmed in the end, and the relay is ready again.
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 30s, "/readyz answers 200"));
  EXPECT_GE(MetricValue(h_->http_port(), "outbox_relay_events_total").value_or(-1), static_cast<double>(events));
  ExpectStopsCleanly(*relay);
}

// A Debezium Server application.properties with debezium.sink.type=http runs as is (init and run), once it turns off
// the two header settings under which Debezium Server's requests differ from the relay's: the events reach
// Debezium's fixed URL, and the relay's checkpoint lives beside Debezium's offsets file.
TEST_F(HttpE2E, ADebeziumServerFileWithTheHttpSinkPostsEveryEvent) {
  h_ = std::make_unique<RelayHarness>(pg_, "127.0.0.1:1", "");
  DebeziumServerRun run = RunDebeziumServerFile(*h_, "debezium.sink.type=http\n"
                                                    "debezium.sink.http.url=" + receiver_.url() + "/webhook\n"
                                                    "debezium.sink.http.headers.prefix=\n"
                                                    "debezium.sink.http.headers.encode.base64=false\n"
                                                    "debezium.sink.http.retry.interval.ms=100\n");
  ASSERT_NE(run.relay, nullptr);
  ASSERT_TRUE(WaitForDelivered(2)) << run.relay->Output();
  const std::vector<Seen> delivered = receiver_.Delivered();
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(delivered[0].Header("id"), DebeziumServerRun::IdHeader(run.created));
  EXPECT_EQ(delivered[1].Header("id"), DebeziumServerRun::IdHeader(run.paid));
  for (const Seen& s : delivered) {
    EXPECT_EQ(s.path, "/webhook");
    EXPECT_EQ(s.Header("content-type"), "application/json");
    EXPECT_EQ(s.Json()["n"], s.Header("id") == DebeziumServerRun::IdHeader(run.created) ? 1 : 2) << s.body;
  }
  ExpectStopsCleanly(*run.relay);
}

TEST_F(HttpE2E, PoisonEventHaltsAndIsNotConfirmed) {
  MakeHarness(receiver_.url());
  receiver_.SetRule([](const Seen& s, int) { return Reply(s.body.find("poison") != std::string::npos ? 400 : 200); });
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string first = h_->InsertEvent("created", "k1", R"({"n":1})");
  ASSERT_TRUE(WaitForDelivered(1)) << relay->Output();
  const std::string poison = h_->InsertEvent("created", "k1", R"({"poison":true})");
  const std::optional<int> rc = relay->Wait(60s);
  ASSERT_TRUE(rc.has_value()) << relay->Output();
  EXPECT_EQ(*rc, 1) << relay->Output();
  EXPECT_NE(relay->Output().find(poison), std::string::npos) << "the halt names the event: " << relay->Output();
  EXPECT_NE(relay->Output().find("HTTP 400"), std::string::npos) << relay->Output();
  // Not confirmed: a new run meets the same event and halts again.
  auto again = h_->StartRelay({}, /*wait_active=*/false);
  const std::optional<int> again_rc = again->Wait(60s);
  ASSERT_TRUE(again_rc.has_value()) << again->Output();
  EXPECT_EQ(*again_rc, 1) << again->Output();
  EXPECT_NE(again->Output().find(poison), std::string::npos) << again->Output();
  EXPECT_EQ(receiver_.Delivered().size(), 1u);
  EXPECT_EQ(receiver_.Delivered()[0].Header("idempotency-key"), first);
}

TEST_F(HttpE2E, PoisonEventIsDeadLetteredAndItsKeyGoesOn) {
  MakeHarness(receiver_.url());
  receiver_.SetRule([](const Seen& s, int) {
    const bool poison = s.body.find("poison") != std::string::npos && s.path.find("dead_letter") == std::string::npos;
    return Reply(poison ? 422 : 200);
  });
  h_->Init();
  auto relay = h_->StartRelay({"--set", "delivery.on_error=dead_letter"});
  ASSERT_NE(relay, nullptr);
  const std::string first = h_->InsertEvent("created", "k1", R"({"n":1})");
  const std::string poison = h_->InsertEvent("created", "k1", R"({"poison":true})");
  const std::string after = h_->InsertEvent("created", "k1", R"({"n":3})");
  ASSERT_TRUE(WaitForDelivered(3)) << relay->Output();
  const std::vector<Seen> delivered = receiver_.Delivered();
  ASSERT_EQ(delivered.size(), 3u);
  // The key's events in commit order on their path; the dead letter (another topic, so another path: the
  // dead-letter topic fits outbox.route.topic, so ${routedByValue} is "dead_letter") queued behind the key's events
  // that were waiting when the refusal came.
  std::vector<std::string> on_created;
  const Seen* dead = nullptr;
  for (const Seen& s : delivered) {
    if (s.path == "/events/created") on_created.push_back(s.Header("idempotency-key"));
    if (s.path == "/events/dead_letter") dead = &s;
  }
  EXPECT_EQ(on_created, (std::vector<std::string>{first, after}));
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->Header("idempotency-key"), poison);
  EXPECT_EQ(dead->body, R"({"poison": true})");
  EXPECT_NE(dead->Header("error").find("HTTP 422"), std::string::npos) << dead->Header("error");
  EXPECT_FALSE(dead->Header("source_lsn").empty());
  // Counted once the relay has read the answer, which the receiver sends after recording the request.
  EXPECT_TRUE(WaitFor(
      [&] {
        return Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"http\",result=\"dead_lettered\"}")
                   .value_or(-1) == 1;
      },
      10s, "the dead letter counted"));
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(HttpE2E, KillNineUnderLoadLosesNothing) {
  MakeHarness(receiver_.url());
  // A receiver that takes its time (and now and then answers 503), so that every kill lands with requests in
  // flight and retries pending: a relay that confirmed what was sent but not yet answered would lose them.
  receiver_.SetRule([](const Seen& s, int attempt) {
    const size_t h = std::hash<std::string>()(s.Header("idempotency-key"));
    return Reply(attempt == 1 && h % 10 == 0 ? 503 : 200, std::nullopt, std::chrono::milliseconds(1 + h % 8));
  });
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  const int cycles = std::getenv("OUTBOX_CHAOS_CYCLES") ? std::atoi(std::getenv("OUTBOX_CHAOS_CYCLES")) : 20;
  std::mt19937 rng(std::random_device{}());
  Lsn first_confirmed, last_confirmed;
  for (int i = 0; i < cycles; ++i) {
    auto relay = h_->StartRelay();
    ASSERT_NE(relay, nullptr);
    const size_t target = receiver_.Delivered().size() + 5 + rng() % 30;
    PollUntil([&] { return receiver_.Delivered().size() >= target || !relay->Running(); }, 20s, 20ms);
    ASSERT_TRUE(relay->Running()) << relay->Output();
    (void)relay->Kill(SIGKILL);
    (void)relay->Wait(10s);
    last_confirmed = h_->ConfirmedFlush();
    if (i == 0) first_confirmed = last_confirmed;
  }
  EXPECT_GT(last_confirmed, first_confirmed) << "the relay confirms across kill -9 cycles";
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "kill -9 chaos");
  const auto drain_start = std::chrono::steady_clock::now();
  auto relay = h_->StartRelay();
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << relay->Output();
  std::cout << "[ figures  ] " << cycles << " kill -9 cycles, " << loader.committed().size()
            << " events committed; the last relay delivered the rest in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - drain_start)
                   .count()
            << " ms\n";
  ExpectNoLossInOrder(loader);
}

// The receiver down longer than delivery.release_slot_after_ms with the loader running: /readyz 503, the slot
// released, and once the receiver is back every committed event arrives, in order per key.
TEST_F(HttpE2E, ReceiverDownLongerThanTheReleaseIntervalLosesNothing) {
  MakeHarness(receiver_.url());
  h_->Init();
  Loader loader(pg_, h_->db(), "load", kLoadKeys, kLoadEventsPerSecond);
  loader.Start();
  auto relay = h_->StartRelay({"--set", "delivery.release_slot_after_ms=2000"});
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitForDelivered(50)) << relay->Output();
  const int port = receiver_.port();
  receiver_.Stop();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 503; }, 30s, "/readyz answers 503"));
  EXPECT_TRUE(WaitFor([&] { return !h_->SlotActive(); }, 30s, "the relay releases the slot")) << relay->Output();
  const size_t before = loader.committed().size();
  ASSERT_TRUE(WaitFor([&] { return loader.committed().size() >= before + 50; }, 30s, "the loader goes on"));
  receiver_.Start(port);
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 60s, "/readyz answers 200"))
      << relay->Output();
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "receiver outage");
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << relay->Output();
  ExpectNoLossInOrder(loader);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

// http_sink.batch_max_events: the events ready together for one URL go in one request, a JSON array whose elements
// carry their event ids; the request's Idempotency-Key is derived from them; a key still has one event out at once.
TEST_F(HttpE2E, BatchesCarryEveryEventWithItsIdAndKeepPerKeyOrder) {
  MakeHarness(receiver_.url(), "  batch_max_events: 10\n  max_in_flight: 1\n");
  // The first request is answered late, so that the events behind it are ready together.
  receiver_.SetRule([](const Seen&, int) {
    static std::atomic<int> requests{0};
    return Reply(200, std::nullopt, requests++ == 0 ? 300ms : 0ms);
  });
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  std::string sql = "BEGIN;";
  std::map<std::string, int> steps;
  for (int e = 0; e < 40; ++e) {
    const std::string key = "k" + std::to_string(e % 8);
    sql += "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'load', '" +
           key + "', 'batched', '{\"key\":\"" + key + "\",\"step\":" + std::to_string(steps[key]++) + "}');";
  }
  h_->Sql(sql + "COMMIT;");
  std::map<std::string, int> last_step;
  std::set<std::string> ids;
  size_t requests = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        last_step.clear();
        ids.clear();
        requests = 0;
        for (const Seen& s : receiver_.Delivered()) {
          ++requests;
          const auto array = s.Json();
          if (!array.is_array()) return false;
          std::vector<std::string> batch_ids;
          for (const auto& element : array) {
            const std::string key = element["key"].get<std::string>();
            const int step = element["value"]["step"].get<int>();
            EXPECT_EQ(element["headers"]["id"], element["id"]);
            EXPECT_TRUE(!last_step.contains(key) || step > last_step[key]) << "key " << key << " out of order";
            last_step[key] = step;
            batch_ids.push_back(element["id"].get<std::string>());
            ids.insert(batch_ids.back());
          }
          EXPECT_EQ(s.Header("outbox-batch-size"), std::to_string(array.size()));
          const std::string expected_key = batch_ids.size() == 1 ? batch_ids[0] : "batch-";
          EXPECT_EQ(s.Header("idempotency-key").rfind(expected_key, 0), 0u) << s.Header("idempotency-key");
        }
        return ids.size() >= 40;
      },
      60s, "40 events delivered in batches", 100ms))
      << relay->Output();
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_LT(requests, 40u) << "events were batched";
  for (const auto& [key, step] : last_step) EXPECT_EQ(step, 4) << key;
  ExpectStopsCleanly(*relay);
}

// HTTPS through nginx with the CA file, a bearer token from the environment (masked in the output), and `check`
// telling a CA that does not verify the server.
TEST_F(HttpE2E, HttpsThroughNginxWithTheCaFileAndABearerToken) {
  Nginx nginx(receiver_.port());
  ASSERT_GT(nginx.port(), 0);
  setenv("HTTP_TEST_TOKEN", "s3cret-webhook-token", 1);  // inherited by init, check and run
  MakeHarness("https://localhost:" + std::to_string(nginx.port()),
              "  tls:\n    ca: " + nginx.ca_file() + "\n  bearer_token: \"${env:HTTP_TEST_TOKEN}\"\n");
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check", "--set", "http_sink.tls.ca=/etc/ssl/certs/ca-certificates.crt"}, &out), 1)
      << out;
  EXPECT_NE(out.find("the HTTP endpoint does not answer"), std::string::npos) << out;
  EXPECT_EQ(out.find("s3cret-webhook-token"), std::string::npos) << out;
  EXPECT_EQ(h_->RunCommand({"check"}, &out), 0) << out;
  EXPECT_NE(out.find("the HTTP endpoint answers"), std::string::npos) << out;
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  Seen s;
  ASSERT_NO_FATAL_FAILURE(ExpectOneEventPosted(*relay, &s));
  EXPECT_EQ(s.Header("source_lsn").empty(), false) << "nginx passes underscores";
  EXPECT_EQ(s.Header("authorization"), "Bearer s3cret-webhook-token");
  EXPECT_EQ(s.body, R"({"n": 1})");
  EXPECT_EQ(relay->Output().find("s3cret-webhook-token"), std::string::npos) << relay->Output();
  ExpectStopsCleanly(*relay);
}

// Mutual TLS and basic auth (issue 19 item 5): nginx's second port takes only clients with a certificate of its CA.
// With http_sink.tls.cert/key and http_sink.user/password (from ${env:}), the event arrives with the Basic
// credentials and the client certificate's subject; the password is in no output. Without the certificate nginx
// answers 400 before the receiver sees anything: a refusal for good, so the relay halts naming the event and
// confirms nothing of it.
TEST_F(HttpE2E, MutualTlsWithAClientCertificateAndBasicAuth) {
  Nginx nginx(receiver_.port());
  ASSERT_GT(nginx.mtls_port(), 0);
  setenv("HTTP_TEST_PASSWORD", "b4sic-webhook-pass", 1);  // inherited by init, check and run
  const std::string base = "https://localhost:" + std::to_string(nginx.mtls_port());
  MakeHarness(base, "  tls:\n    ca: " + nginx.ca_file() + "\n    cert: " + nginx.client_cert() + "\n    key: " +
                        nginx.client_key() + "\n  user: relay\n  password: \"${env:HTTP_TEST_PASSWORD}\"\n");
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check"}, &out), 0) << out;
  EXPECT_EQ(out.find("b4sic-webhook-pass"), std::string::npos) << out;
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  Seen s;
  ASSERT_NO_FATAL_FAILURE(ExpectOneEventPosted(*relay, &s));
  EXPECT_EQ(s.Header("authorization"), "Basic cmVsYXk6YjRzaWMtd2ViaG9vay1wYXNz");  // base64("relay:b4sic-webhook-pass")
  EXPECT_NE(s.Header("x-client-subject").find("CN=outbox-relay"), std::string::npos) << s.Header("x-client-subject");
  EXPECT_EQ(relay->Output().find("b4sic-webhook-pass"), std::string::npos) << relay->Output();
  ExpectStopsCleanly(*relay);

  // The same endpoint without the client certificate: nginx refuses the request itself.
  MakeHarness(base, "  tls:\n    ca: " + nginx.ca_file() + "\n");
  h_->Init();
  auto bare = h_->StartRelay();
  ASSERT_NE(bare, nullptr);
  const std::string refused = h_->InsertEvent("created", "k1", R"({"n":2})");
  EXPECT_EQ(bare->Wait(60s), std::optional<int>(1)) << bare->Output();
  EXPECT_NE(bare->Output().find(refused), std::string::npos) << bare->Output();
  EXPECT_NE(bare->Output().find("HTTP 400"), std::string::npos) << bare->Output();
  EXPECT_EQ(receiver_.Delivered().size(), 1u) << "nothing without the certificate reached the receiver";
  EXPECT_EQ(h_->PendingChangesNaming(refused), 1) << "the refused event's transaction is not confirmed";
}

}  // namespace
}  // namespace outbox::testing
