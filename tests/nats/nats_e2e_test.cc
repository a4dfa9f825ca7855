// The relay against a real nats-server with JetStream (issue 18), read back with nats-py (tests/nats/nats_tool.py,
// a client not built on the NATS C client the relay uses). Each test owns its stream, subjects, database and slot.
// Skipped, with the reason, when OUTBOX_TEST_NATS_URL is not set (scripts/test.sh always starts a server and sets
// it); the outage test starts a server of its own with scripts/nats-temp.sh.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <algorithm>
#include <vector>

#include "absl/strings/str_replace.h"
#include "e2e/core_cases.h"
#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "e2e/loader.h"
#include "nlohmann/json.hpp"
#include "support/util.h"
#include "nats/nats_tool.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// One message of the stream as nats-py read it.
struct NatsMessage {
  uint64_t seq = 0;
  std::string subject;
  std::map<std::string, std::string> headers;
  std::string data;
};

// A throwaway nats-server of a test's own (scripts/nats-temp.sh), for the tests that stop it.
class OwnNatsServer {
 public:
  // `conf`: lines added to the server's configuration (NATS_TEMP_CONF); `tls`: "on", the port serves TLS only with
  // a throwaway CA, or "verify", clients must present a certificate of that CA too (NATS_TEMP_TLS).
  explicit OwnNatsServer(std::string conf = "", std::string tls = "") : conf_(std::move(conf)), tls_(std::move(tls)) {
    auto dir = MakeTempDir("nats-own-");
    EXPECT_TRUE(dir.ok());
    dir_ = dir.value_or("/tmp/nats-own");
    Start();
  }
  ~OwnNatsServer() {
    Run("bash " + ShellQuote(OUTBOX_NATS_TEMP) + " stop " + ShellQuote(dir_));
    RemoveTree(dir_);
  }
  void Start() {
    auto [rc, out] = Run("NATS_TEMP_CONF=" + ShellQuote(conf_) + " NATS_TEMP_TLS=" + tls_ + " bash " +
                         ShellQuote(OUTBOX_NATS_TEMP) + " start " + ShellQuote(dir_));
    ASSERT_EQ(rc, 0) << out;
    url_ = LineValue(out, "NATS_URL");
    ASSERT_FALSE(url_.empty()) << out;
    tls_dir_ = LineValue(out, "TLS_DIR");
    ASSERT_EQ(!tls_.empty(), !tls_dir_.empty()) << out;
  }
  void Stop() {
    auto [rc, out] = Run("bash " + ShellQuote(OUTBOX_NATS_TEMP) + " stop " + ShellQuote(dir_));
    ASSERT_EQ(rc, 0) << out;
  }
  const std::string& url() const { return url_; }
  // With `tls`: the directory of the server's CA (ca.crt).
  const std::string& tls_dir() const { return tls_dir_; }

 private:
  std::string conf_;
  std::string tls_;
  std::string dir_, url_, tls_dir_;
};

class NatsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = SharedNatsUrl();
    if (url_.empty()) GTEST_SKIP() << kNoNatsServer;
    pg_ = PgServer::Shared();
    ASSERT_NE(pg_, nullptr);
  }

  // The harness with sink.type nats, a file checkpoint and a stream of its own binding <prefix>.>; `url` defaults
  // to the shared server.
  void MakeHarness(const std::string& extra_yaml = "", std::optional<std::string> url = std::nullopt,
                   const std::vector<std::string>& stream_options = {}) {
    if (url) {
      url_ = *url;
      own_server_ = true;  // its stream goes with it
    }
    h_ = std::make_unique<RelayHarness>(pg_, "127.0.0.1:1", "");
    stream_ = absl::StrReplaceAll(h_->topic_prefix(), {{".", "_"}});
    for (char& c : stream_) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto text = ReadFile(h_->config_path());
    ASSERT_TRUE(text.ok());
    std::string yaml = absl::StrReplaceAll(
        *text, {{"  checkpoint_topic: " + h_->checkpoint_topic() + "\n",
                 "  checkpoint: file\n  checkpoint_file: " + h_->dir() + "/checkpoint.json\n"}});
    yaml += "sink:\n  type: nats\nnats:\n  url: \"" + url_ + "\"\n  stream: " + stream_ +
            "\n  ack_timeout_ms: 3000\ndelivery:\n  dead_letter_topic: " + dead_letter_subject() +
            "\n  release_slot_after_ms: 8000\n" + extra_yaml;
    std::ofstream(h_->config_path()) << yaml;
    std::vector<std::string> args = {"add-stream", stream_, h_->topic_prefix() + ".>"};
    args.insert(args.end(), stream_options.begin(), stream_options.end());
    auto [rc, out] = NatsTool(args);
    ASSERT_EQ(rc, 0) << out;
  }
  void TearDown() override {
    if (h_ && !stream_.empty() && !own_server_) NatsTool({"delete-stream", stream_});
  }

  // The URL nats_tool.py connects with (credentials in it when the server wants them).
  const std::string& tool_url() const { return tool_url_.empty() ? url_ : tool_url_; }
  // nats_tool.py against the test's server, trusting tool_ca_ (a TLS server's CA) when set.
  std::pair<int, std::string> NatsTool(const std::vector<std::string>& args) const {
    return Tool(tool_url(), args, tool_ca_);
  }
  std::string dead_letter_subject() const { return h_->topic_prefix() + ".dead_letter"; }

  std::vector<NatsMessage> ReadStream() {
    auto [rc, out] = NatsTool({"read", stream_});
    EXPECT_EQ(rc, 0) << out;
    std::vector<NatsMessage> messages;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) {
        ADD_FAILURE() << "not JSON: " << line;
        continue;
      }
      NatsMessage m;
      m.seq = j["seq"].get<uint64_t>();
      m.subject = j["subject"].get<std::string>();
      for (const auto& [k, v] : j["headers"].items()) m.headers[k] = v.get<std::string>();
      // nats_tool.py writes the bytes as latin-1 code points.
      for (uint32_t cp : [&] {
             std::vector<uint32_t> cps;
             const std::string s = j["data"].get<std::string>();
             for (size_t i = 0; i < s.size();) {
               const unsigned char c = s[i];
               if (c < 0x80) { cps.push_back(c); i += 1; }
               else { cps.push_back(((c & 0x1f) << 6) | (s[i + 1] & 0x3f)); i += 2; }
             }
             return cps;
           }()) {
        m.data.push_back(static_cast<char>(cp));
      }
      messages.push_back(std::move(m));
    }
    return messages;
  }

  size_t Count() {
    auto [rc, out] = NatsTool({"count", stream_});
    return rc == 0 ? std::strtoull(out.c_str(), nullptr, 10) : 0;
  }

  bool WaitForCount(size_t n, std::chrono::milliseconds deadline = 60s) {
    return WaitFor([&] { return Count() >= n; }, deadline, "the stream holds " + std::to_string(n) + " messages",
                   200ms);
  }

  // The relay delivers: an event inserted now is the first message to arrive.
  // `check` and `run` with `args` both stop (exit 1), and their output says each of `said`.
  void ExpectCheckAndRunFatal(const std::vector<std::string>& args, const std::vector<std::string>& said) {
    for (const std::string command : {"check", "run"}) {
      std::vector<std::string> argv = {command};
      argv.insert(argv.end(), args.begin(), args.end());
      std::string out;
      EXPECT_EQ(h_->RunCommand(argv, &out, 60s), 1) << command << ": " << out;
      for (const std::string& text : said) EXPECT_NE(out.find(text), std::string::npos) << command << ": " << out;
    }
  }

  void ExpectAnEventArrives(ChildProcess& relay) {
    const std::string id = h_->InsertEvent("created", "k1", R"({"n":1})");
    ASSERT_TRUE(WaitForCount(1)) << relay.Output();
    EXPECT_EQ(ReadStream().at(0).headers.at("id"), id);
  }

  // Waits until every event the loader committed is in the stream.
  bool WaitForEveryCommitted(const Loader& loader) {
    const std::set<std::string> committed = loader.committed();
    return WaitFor(
        [&] {
          std::set<std::string> ids;
          for (const NatsMessage& m : ReadStream()) ids.insert(m.headers.at("id"));
          for (const std::string& id : committed) {
            if (!ids.contains(id)) return false;
          }
          return true;
        },
        120s, "every committed event is in the stream", 500ms);
  }

  // Every committed id arrived, each once (duplicates inside the window dropped by the server), and per key the
  // first occurrences keep the loader's step order.
  void ExpectNoLossNoDuplicatesInOrder(const Loader& loader, const std::vector<NatsMessage>& messages) {
    std::vector<DeliveredEvent> events;
    for (const NatsMessage& m : messages) {
      const std::string& id = m.headers.at("id");
      EXPECT_EQ(m.headers.at("Nats-Msg-Id"), id);
      const auto j = nlohmann::json::parse(m.data, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << m.data;
      EXPECT_EQ(m.headers.at("key"), j["key"].get<std::string>());
      events.push_back({id, m.headers.at("key"), m.data});
    }
    const DeliveryCheck c = CheckDeliveredEvents(events, loader.committed(), loader.uncertain());
    EXPECT_EQ(c.lost, 0u) << "of " << loader.committed().size() << " committed events";
    EXPECT_EQ(c.order_violations, 0u) << "first occurrences out of commit order";
    EXPECT_EQ(c.unexpected, 0u) << "events that were never committed";
    EXPECT_EQ(c.duplicates, 0u) << "the stream's duplicate window drops a republished event";
  }

  std::string url_;
  PgServer* pg_ = nullptr;
  std::unique_ptr<RelayHarness> h_;
  std::string stream_;
  bool own_server_ = false;
  std::string tool_url_;
  std::string tool_ca_;
};

TEST_F(NatsE2E, EveryCommittedEventArrivesOnceWithSubjectHeadersAndPayload) {
  MakeHarness();
  h_->Init();
  auto relay = h_->StartRelay({"--set", "outbox.fields.additional=aggregatetype:header:kind"});
  ASSERT_NE(relay, nullptr);
  const CoreCases cases = WriteCoreCases(*h_);
  const std::map<std::string, ExpectedEvent>& expected = cases.expected;
  const std::string &a = cases.a, &rolled = cases.rolled, &sp_rolled = cases.sp_rolled;
  ASSERT_TRUE(WaitForCount(expected.size())) << relay->Output();

  const std::vector<NatsMessage> messages = ReadStream();
  ASSERT_EQ(messages.size(), expected.size()) << relay->Output();
  std::set<std::string> seen;
  for (const NatsMessage& m : messages) {
    const std::string event_id = m.headers.count("id") ? m.headers.at("id") : "";
    ASSERT_TRUE(expected.contains(event_id)) << "unexpected event " << event_id << " on " << m.subject;
    EXPECT_TRUE(seen.insert(event_id).second) << "twice: " << event_id;
    const ExpectedEvent& e = expected.at(event_id);
    EXPECT_EQ(m.subject, h_->Topic(e.type));
    EXPECT_EQ(m.data, e.payload);
    EXPECT_EQ(m.headers.at("key"), e.key);
    EXPECT_EQ(m.headers.at("Nats-Msg-Id"), event_id);
    EXPECT_EQ(m.headers.at("kind"), "order");
    EXPECT_TRUE(m.headers.contains("source_lsn"));
  }
  EXPECT_FALSE(seen.contains(rolled));
  EXPECT_FALSE(seen.contains(sp_rolled));
  // o1's events in commit order within its subject (a then, on another subject, b).
  EXPECT_EQ(messages.front().headers.at("id"), a);
  const Lsn last_lsn = Lsn::Parse(messages.back().headers.at("source_lsn")).value_or(Lsn(0));
  EXPECT_TRUE(WaitFor([&] { return h_->ConfirmedFlush() >= last_lsn; }, 30s, "the slot confirms the last event"));
  ExpectStatusShowsTheActiveSlot(*h_, last_lsn);
  auto [code, body] = HttpGet(h_->http_port(), "/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"nats\",result=\"published\"}").value_or(-1),
            static_cast<double>(expected.size()));
  (void)relay->Kill(SIGTERM);
  EXPECT_EQ(relay->Wait(30s).value_or(-1), 0) << relay->Output();
}

// A Debezium Server application.properties with debezium.sink.type=nats-jetstream runs as is (init and run): every
// event lands on its topic's subject in the stream named by stream-name (which exists: the relay creates none), and
// the relay's checkpoint lives beside Debezium's offsets file.
TEST_F(NatsE2E, ADebeziumServerFileWithTheNatsJetStreamSinkPublishesEveryEvent) {
  MakeHarness();
  DebeziumServerRun run = RunDebeziumServerFile(*h_, "debezium.sink.type=nats-jetstream\n"
                                                    "debezium.sink.nats-jetstream.url=" + url_ + "\n"
                                                    "debezium.sink.nats-jetstream.stream-name=" + stream_ + "\n"
                                                    "debezium.sink.nats-jetstream.async.timeout.ms=3000\n");
  ASSERT_NE(run.relay, nullptr);
  ASSERT_TRUE(WaitForCount(2)) << run.relay->Output();
  const std::vector<NatsMessage> messages = ReadStream();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].headers.at("id"), DebeziumServerRun::IdHeader(run.created));
  EXPECT_EQ(messages[0].subject, h_->Topic("created"));
  EXPECT_EQ(messages[1].headers.at("id"), DebeziumServerRun::IdHeader(run.paid));
  EXPECT_EQ(messages[1].subject, h_->Topic("paid"));
  ExpectStopsCleanly(*run.relay);
}

TEST_F(NatsE2E, CheckAndRunRefuseAMissingStreamByName) {
  MakeHarness();
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check", "--set", "nats.stream=NO_SUCH_STREAM"}, &out), 1) << out;
  EXPECT_NE(out.find("stream \"NO_SUCH_STREAM\" does not exist"), std::string::npos) << out;
  EXPECT_EQ(h_->RunCommand({"run", "--set", "nats.stream=NO_SUCH_STREAM"}, &out, 30s), 1) << out;
  EXPECT_NE(out.find("stream \"NO_SUCH_STREAM\" does not exist"), std::string::npos) << out;
  EXPECT_EQ(h_->RunCommand({"check"}, &out), 0) << out;
  EXPECT_NE(out.find("stream " + stream_ + " binds"), std::string::npos) << out;
}

TEST_F(NatsE2E, PoisonEventHaltsAndIsNotConfirmed) {
  MakeHarness("", std::nullopt, {"--max-msg-size", "2048"});
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string first = h_->InsertEvent("created", "k1", R"({"n":1})");
  ASSERT_TRUE(WaitForCount(1)) << relay->Output();
  const std::string big = h_->InsertEvent("created", "k1", "{\"blob\":\"" + std::string(4000, 'x') + "\"}");
  const std::string after = h_->InsertEvent("created", "k1", R"({"n":3})");
  const std::optional<int> rc = relay->Wait(60s);
  ASSERT_TRUE(rc.has_value()) << relay->Output();
  EXPECT_EQ(*rc, 1) << relay->Output();
  EXPECT_NE(relay->Output().find(big), std::string::npos) << "the halt names the event: " << relay->Output();
  EXPECT_NE(relay->Output().find("max_msg_size"), std::string::npos) << relay->Output();
  const auto messages = ReadStream();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].headers.at("id"), first);
  // Not confirmed: a new run meets the same event and halts again.
  auto again = h_->StartRelay({}, /*wait_active=*/false);
  const std::optional<int> again_rc = again->Wait(60s);
  ASSERT_TRUE(again_rc.has_value()) << again->Output();
  EXPECT_EQ(*again_rc, 1) << again->Output();
  EXPECT_NE(again->Output().find(big), std::string::npos) << again->Output();
  EXPECT_EQ(Count(), 1u);
  (void)after;
}

TEST_F(NatsE2E, PoisonEventIsDeadLettered) {
  MakeHarness("", std::nullopt, {"--max-msg-size", "2048"});
  h_->Init();
  auto relay = h_->StartRelay({"--set", "delivery.on_error=dead_letter"});
  ASSERT_NE(relay, nullptr);
  const std::string first = h_->InsertEvent("created", "k1", R"({"n":1})");
  const std::string big = h_->InsertEvent("created", "k1", "{\"blob\":\"" + std::string(4000, 'x') + "\"}");
  const std::string after = h_->InsertEvent("created", "k1", R"({"n":3})");
  // Larger than the server's max_payload (1 MiB by default): checked before publishing too.
  const std::string huge = h_->InsertEvent("created", "k2", "{\"blob\":\"" + std::string(1100000, 'y') + "\"}");
  ASSERT_TRUE(WaitForCount(4)) << relay->Output();
  const auto messages = ReadStream();
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[3].subject, dead_letter_subject());
  EXPECT_EQ(messages[3].headers.at("id"), huge);
  EXPECT_NE(messages[3].headers.at("error").find("max_payload"), std::string::npos) << messages[3].headers.at("error");
  EXPECT_EQ(messages[0].headers.at("id"), first);
  EXPECT_EQ(messages[1].subject, dead_letter_subject());
  EXPECT_EQ(messages[1].headers.at("id"), big);
  EXPECT_NE(messages[1].headers.at("error").find("max_msg_size"), std::string::npos);
  EXPECT_TRUE(messages[1].headers.contains("source_lsn"));
  EXPECT_TRUE(messages[1].data.empty()) << "a record too large is dead-lettered without its value";
  EXPECT_EQ(messages[2].headers.at("id"), after);
  EXPECT_EQ(Scrape(h_->http_port(), "outbox_relay_events_total{sink=\"nats\",result=\"dead_lettered\"}").value_or(-1), 2);
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(NatsE2E, KillNineUnderLoadLosesNothingAndTheServerDropsDuplicates) {
  MakeHarness();
  h_->Init();
  Loader loader(pg_, h_->db(), "load");
  loader.Start();
  const int cycles = std::getenv("OUTBOX_CHAOS_CYCLES") ? std::atoi(std::getenv("OUTBOX_CHAOS_CYCLES")) : 20;
  std::mt19937 rng(std::random_device{}());
  Lsn first_confirmed, last_confirmed;
  for (int i = 0; i < cycles; ++i) {
    auto relay = h_->StartRelay();
    ASSERT_NE(relay, nullptr);
    // Kill it at a random point after it has stored some more.
    const size_t target = Count() + 5 + rng() % 60;
    PollUntil([&] { return Count() >= target || !relay->Running(); }, 20s, 50ms);
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
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << relay->Output();
  ExpectNoLossNoDuplicatesInOrder(loader, ReadStream());
}

TEST_F(NatsE2E, ServerStoppedAndStartedUnderLoadLosesNothingAndResumes) {
  OwnNatsServer server;
  MakeHarness("", server.url());
  h_->Init();
  Loader loader(pg_, h_->db(), "load");
  loader.Start();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitForCount(50)) << relay->Output();
  server.Stop();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 503; }, 30s, "/readyz answers 503"));
  // Events keep committing while the server is down.
  const size_t before = loader.committed().size();
  ASSERT_TRUE(WaitFor([&] { return loader.committed().size() >= before + 50; }, 30s, "the loader goes on"));
  server.Start();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 60s, "/readyz answers 200"))
      << relay->Output();
  const size_t target = Count() + 50;
  ASSERT_TRUE(WaitForCount(target)) << "resumes on its own: " << relay->Output();
  loader.Stop();
  ExpectLoadHealthy(loader, 100, "server outage");
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << relay->Output();
  ExpectNoLossNoDuplicatesInOrder(loader, ReadStream());
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

// Issue 18 items 3 and 5: publishes refused while others are acknowledged. A stream that holds at most 80 messages
// (discard new) refuses every publish beyond them ("maximum messages exceeded": the stream cannot take it now)
// while publishes of other keys before them were acked; each refusal rewinds, and the test makes room in steps
// while the load goes on. Per key at most one unacknowledged record is in flight, so a refused record's successors
// of its key were never published: every committed event arrives, first occurrences per key in commit order, and
// the records resent after each rewind are dropped by the stream's duplicate window.
TEST_F(NatsE2E, RefusedPublishesAreResentAndFirstOccurrencesKeepCommitOrder) {
  int room = 80;
  MakeHarness("", std::nullopt, {"--max-msgs", std::to_string(room)});
  h_->Init();
  Loader loader(pg_, h_->db(), "load", 10, 100);
  loader.Start();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string refused = "outbox_relay_delivery_errors_total{sink=\"nats\",kind=\"transient\"}";
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  double counted = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         (loader.committed().size() < 150 || Scrape(h_->http_port(), refused).value_or(0) < 2)) {
    PollUntil([&] { return Scrape(h_->http_port(), refused).value_or(0) > counted || !relay->Running(); }, 2s, 50ms);
    ASSERT_TRUE(relay->Running()) << relay->Output();
    counted = Scrape(h_->http_port(), refused).value_or(0);
    room += 40;  // room for some more, not for the whole backlog: refusals keep coming with the load
    ASSERT_EQ(NatsTool({"set-max-msgs", stream_, std::to_string(room)}).first, 0);
  }
  loader.Stop();
  ExpectLoadHealthy(loader, 150, "refused publishes under load");
  EXPECT_GE(Scrape(h_->http_port(), refused).value_or(0), 2) << "the stream refused publishes: " << relay->Output();
  EXPECT_NE(relay->Output().find("maximum messages exceeded"), std::string::npos) << relay->Output();
  ASSERT_EQ(NatsTool({"set-max-msgs", stream_, "-1"}).first, 0);
  ASSERT_TRUE(WaitForEveryCommitted(loader)) << relay->Output();
  ExpectNoLossNoDuplicatesInOrder(loader, ReadStream());
  std::cout << "[ figures  ] " << loader.committed().size() << " events, "
            << Scrape(h_->http_port(), refused).value_or(0) << " refused publishes, "
            << Scrape(h_->http_port(), "outbox_relay_reconnects_total").value_or(0) << " rewinds\n";
  EXPECT_TRUE(relay->Running()) << relay->Output();
}

TEST_F(NatsE2E, AStreamDeletedWhileRunningIsRetriedUntilItIsBack) {
  MakeHarness();
  h_->Init();
  auto relay = h_->StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string before = h_->InsertEvent("created", "k1", R"({"n":1})");
  ASSERT_TRUE(WaitForCount(1)) << relay->Output();
  ASSERT_EQ(NatsTool({"delete-stream", stream_}).first, 0);
  // No stream answers (no responders): retried with backoff, never dropped, /readyz 503 meanwhile.
  const std::string during = h_->InsertEvent("created", "k1", R"({"n":2})");
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 503; }, 30s, "/readyz answers 503"))
      << relay->Output();
  ASSERT_EQ(NatsTool({"add-stream", stream_, h_->topic_prefix() + ".>"}).first, 0);
  const std::string after = h_->InsertEvent("created", "k1", R"({"n":3})");
  ASSERT_TRUE(WaitForCount(2, 90s)) << relay->Output();
  // At least once: after the rewind the relay may publish again what the deleted stream had stored (`before`, if
  // its confirmation had not reached the server) and a publish retried across the stream's return may be stored
  // twice (CI saw both). What must hold: `during` and `after` stored, first occurrences in commit order, nothing
  // that was not committed.
  const auto messages = ReadStream();
  std::vector<std::string> first_seen;
  for (const auto& m : messages) {
    const std::string id = m.headers.at("id");
    EXPECT_TRUE(id == before || id == during || id == after) << "unexpected message " << id;
    if (std::find(first_seen.begin(), first_seen.end(), id) == first_seen.end()) first_seen.push_back(id);
  }
  if (!first_seen.empty() && first_seen.front() == before) first_seen.erase(first_seen.begin());
  EXPECT_EQ(first_seen, (std::vector<std::string>{during, after}));
  EXPECT_TRUE(relay->Running()) << relay->Output();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(h_->http_port(), "/readyz").first == 200; }, 30s, "/readyz answers 200"));
}

TEST_F(NatsE2E, RefusedCredentialsAreFatalAndNamedAndTheRightOnesFromEnvWork) {
  OwnNatsServer server("authorization { user: relay, password: right-nats-pass }");
  tool_url_ = absl::StrReplaceAll(server.url(), {{"nats://", "nats://relay:right-nats-pass@"}});
  MakeHarness("", server.url());
  h_->Init();
  std::string out;
  EXPECT_EQ(h_->RunCommand({"run", "--set", "nats.user=relay", "--set", "nats.password=wrong-nats-pass"}, &out, 30s),
            1)
      << out;
  EXPECT_NE(out.find("Authorization Violation"), std::string::npos) << out;
  EXPECT_EQ(out.find("wrong-nats-pass"), std::string::npos) << "the password is masked: " << out;
  // The right password, from the environment.
  auto relay = h_->StartRelay({"--set", "nats.user=relay", "--set", "nats.password=${env:NATS_TEST_PASSWORD}"}, true,
                              {{"NATS_TEST_PASSWORD", "right-nats-pass"}});
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
}

// Issue 18 item 4: a token (authorization { token }) from ${env:} works; a wrong one stops check and run naming the
// server's refusal, and neither token appears in any output.
TEST_F(NatsE2E, ATokenFromEnvWorksAndAWrongOneIsFatalNamedAndMasked) {
  OwnNatsServer server("authorization { token: \"right-nats-token\" }");
  tool_url_ = absl::StrReplaceAll(server.url(), {{"nats://", "nats://right-nats-token@"}});
  MakeHarness("", server.url());
  h_->Init();
  for (const std::string command : {"check", "run"}) {
    std::string out;
    EXPECT_EQ(h_->RunCommand({command, "--set", "nats.token=wrong-nats-token"}, &out, 30s), 1)
        << command << ": " << out;
    EXPECT_NE(out.find("Authorization Violation"), std::string::npos) << command << ": " << out;
    EXPECT_EQ(out.find("wrong-nats-token"), std::string::npos) << command << " masks the token: " << out;
  }
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check", "--set", "nats.token=right-nats-token"}, &out), 0) << out;
  EXPECT_EQ(out.find("right-nats-token"), std::string::npos) << "check masks the token: " << out;
  // From a file (a mounted Kubernetes secret: its trailing newline is not part of the token).
  const std::string token_file = h_->dir() + "/nats-token";
  std::ofstream(token_file) << "right-nats-token\n";
  EXPECT_EQ(h_->RunCommand({"check", "--set", "nats.token=${file:" + token_file + "}"}, &out), 0) << out;
  EXPECT_EQ(out.find("right-nats-token"), std::string::npos) << "check masks the token: " << out;
  auto relay = h_->StartRelay({"--set", "nats.token=${env:NATS_TEST_TOKEN}", "--set", "log.level=debug"}, true,
                              {{"NATS_TEST_TOKEN", "right-nats-token"}});
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
  ExpectStopsCleanly(*relay);
  EXPECT_EQ(relay->Output().find("right-nats-token"), std::string::npos) << relay->Output();
}

// Issue 18 item 4, TLS: a server whose port serves TLS only, with a throwaway CA (scripts/nats-temp.sh,
// NATS_TEMP_TLS=on); the relay trusts it through nats.tls.ca.
TEST_F(NatsE2E, OverTlsWithTheServersCaCheckPassesAndEventsArrive) {
  OwnNatsServer server("", "on");
  tool_ca_ = server.tls_dir() + "/ca.crt";
  MakeHarness("", server.url());
  h_->Init();
  const std::vector<std::string> tls = {"--set", "nats.tls.ca=" + server.tls_dir() + "/ca.crt"};
  std::string out;
  EXPECT_EQ(h_->RunCommand({"check", tls[0], tls[1]}, &out), 0) << out;
  EXPECT_NE(out.find("stream " + stream_ + " binds"), std::string::npos) << out;
  auto relay = h_->StartRelay(tls);
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
  ExpectStopsCleanly(*relay);
}

// Issue 18 item 4, mutual TLS (the server's tls block has verify: true): the relay presents nats.tls.cert and
// nats.tls.key and trusts nats.tls.ca; without a client certificate the server refuses the handshake, and check and
// run stop (exit 1) naming it instead of retrying.
TEST_F(NatsE2E, MutualTlsWithAClientCertificateWorksAndWithoutOneIsFatal) {
  OwnNatsServer server("", "verify");
  tool_ca_ = server.tls_dir() + "/ca.crt";
  MakeHarness("", server.url());
  h_->Init();
  const std::string ca = "nats.tls.ca=" + server.tls_dir() + "/ca.crt";
  ExpectCheckAndRunFatal({"--set", ca}, {"may require a client certificate: set nats.tls.cert and nats.tls.key"});
  EXPECT_EQ(Count(), 0u);
  const std::vector<std::string> mtls = {"--set", ca, "--set", "nats.tls.cert=" + server.tls_dir() + "/client.crt",
                                         "--set", "nats.tls.key=" + server.tls_dir() + "/client.key"};
  std::vector<std::string> check = {"check"};
  check.insert(check.end(), mtls.begin(), mtls.end());
  std::string out;
  EXPECT_EQ(h_->RunCommand(check, &out), 0) << out;
  auto relay = h_->StartRelay(mtls);
  ASSERT_NE(relay, nullptr);
  ExpectAnEventArrives(*relay);
  ExpectStopsCleanly(*relay);
}

// A certificate not signed by the configured CA stops check and run (exit 1) naming the verification failure and
// the key, instead of retrying a connection that cannot succeed.
TEST_F(NatsE2E, OverTlsAnotherCaIsFatalAndNamedInCheckAndRun) {
  OwnNatsServer server("", "on");
  tool_ca_ = server.tls_dir() + "/ca.crt";
  MakeHarness("", server.url());
  h_->Init();
  const std::string other = h_->dir() + "/other-ca";
  auto [certs_rc, certs_out] = MakeTestCerts(other);
  ASSERT_EQ(certs_rc, 0) << certs_out;
  ExpectCheckAndRunFatal({"--set", "nats.tls.ca=" + other + "/ca.crt"},
                         {"unable to get local issuer certificate", "nats.tls.ca"});
  EXPECT_EQ(Count(), 0u);
}

}  // namespace
}  // namespace outbox::testing
