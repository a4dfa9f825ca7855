// Authentication to Kafka failing (SPEC.md §5: a transient fault is retried with capped backoff and makes /readyz
// fail; §2: `check` prints every problem): a relay with credentials the broker's SASL_PLAINTEXT (SCRAM-SHA-256)
// listener refuses, on a broker of its own, until the user is created with that password.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "app/app_test_util.h"
#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/shell.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// librdkafka's words for the refusal. What follows the colon depends on timing: the broker's "Authentication failed
// during authentication due to invalid credentials ...", or, when the probe's client is torn down first,
// "SaslAuthenticateRequest failed: Local: Broker handle destroyed" (seen once in CI).
constexpr char kSaslError[] = "SASL authentication error";

class KafkaAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    PgServer* pg = PgServer::Shared();
    ASSERT_NE(pg, nullptr);
    auto broker = KafkaBroker::Create(KafkaBroker::Options{.port = 0, .extra_properties = "", .sasl = true});
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
    ASSERT_FALSE(broker_->sasl_bootstrap().empty());
    // init over the PLAINTEXT listener (the checkpoint topic and the first checkpoint), then the relay's own
    // config: the SASL listener, user "relay", its password from the environment. The user does not exist yet.
    harness_ = std::make_unique<RelayHarness>(pg, broker_->bootstrap());
    harness_->Init();
    ASSERT_NO_FATAL_FAILURE(AddKafkaKeys(*harness_, {{"security.protocol", "SASL_PLAINTEXT"},
                                                    {"sasl.mechanisms", "SCRAM-SHA-256"},
                                                    {"sasl.username", "relay"},
                                                    {"sasl.password", "\"${env:RELAY_TEST_SASL_PASSWORD}\""}}));
  }

  std::vector<std::string> OnTheSaslListener() const {
    return {"--set", "kafka.bootstrap.servers=" + broker_->sasl_bootstrap()};
  }

  const std::string password_ = "scram-" + UniqueName("pw");
  const std::map<std::string, std::string> env_ = {{"RELAY_TEST_SASL_PASSWORD", password_}};
  std::unique_ptr<KafkaBroker> broker_;
  std::unique_ptr<RelayHarness> harness_;
};

// `check` fails, naming the broker's refusal of the credentials (and never the password).
TEST_F(KafkaAuth, CheckFailsNamingTheSaslAuthenticationError) {
  std::vector<std::string> args = {"check"};
  const std::vector<std::string> sasl = OnTheSaslListener();
  args.insert(args.end(), sasl.begin(), sasl.end());
  CommandResult r = RunRelay(harness_->config_path(), args, env_, 60s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto problems = Lines(r.out, "problem:");
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_NE(problems[0].find(kSaslError), std::string::npos) << problems[0];
  EXPECT_EQ((r.out + r.err).find(password_), std::string::npos) << "the password was printed";
}

// `run` names the refusal in its log, keeps retrying with capped backoff (the slot unconfirmed past what waits), and
// recovers on its own once the user exists with that password: an event written meanwhile arrives.
TEST_F(KafkaAuth, RunRetriesWithCappedBackoffAndRecoversOnceTheCredentialsAreRight) {
  RelayHarness& h = *harness_;
  auto relay = SpawnRelay(h, OnTheSaslListener(), env_, "relay-sasl.log");
  ASSERT_NE(relay, nullptr);
  const int port = RelayHttpPort(*relay);
  ASSERT_GT(port, 0) << relay->Output();
  const std::string waiting = h.InsertEvent("Authenticated", "k", "{}");
  const Lsn committed = h.CurrentWal();
  // The waits double from 100 ms to the 5 s cap (each try also spends 10 s on the checkpoint topic's metadata):
  // about 80 s to reach the cap.
  ASSERT_TRUE(WaitFor(
      [&] { return relay->Output().find("reconnecting in 5000 ms") != std::string::npos || !relay->Running(); }, 180s,
      "the retries' backoff reaches its 5 s cap", 200ms))
      << relay->Output();
  ASSERT_TRUE(relay->Running()) << relay->Output();
  const std::string out = relay->Output();
  EXPECT_NE(out.find(kSaslError), std::string::npos) << out;
  static const std::regex kRetry("reconnecting in ([0-9]+) ms");
  int retries = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), kRetry); it != std::sregex_iterator(); ++it, ++retries) {
    EXPECT_LE(std::stoi((*it)[1]), 5000) << "the backoff is not capped at 5 s: " << (*it)[0];
  }
  EXPECT_GE(retries, 7) << out;
  EXPECT_EQ(HttpGet(port, "/readyz").first, 503);
  EXPECT_LT(h.ConfirmedFlush(), committed) << "confirmed past an event that never reached Kafka";
  EXPECT_EQ(out.find(password_), std::string::npos) << "the password was logged";

  const absl::Status created = broker_->UpsertScramUser("relay", password_);
  ASSERT_TRUE(created.ok()) << created;
  ASSERT_TRUE(WaitFor([&] { return HttpGet(port, "/readyz").first == 200 || !relay->Running(); }, 90s,
                      "ready once the user exists", 100ms))
      << relay->Output();
  auto reader = KafkaReader::Create(broker_->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto records = (*reader)->ReadUntil(h.Topic("Authenticated"), 1, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(HeaderValue(records->front(), "id"), waiting);
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= committed; }, 30s, "confirmed after the recovery"));
  ExpectStopsCleanly(*relay);
}

// SPEC.md §5 and §6: /readyz answers 503 "and the reason". With the credentials refused it names librdkafka's
// authentication error (the sink's last error event), not only "broker unreachable" or the checkpoint topic's
// transport failure.
TEST_F(KafkaAuth, ReadyzNamesTheAuthenticationError) {
  auto relay = SpawnRelay(*harness_, OnTheSaslListener(), env_, "relay-sasl.log");
  ASSERT_NE(relay, nullptr);
  const int port = RelayHttpPort(*relay);
  ASSERT_GT(port, 0) << relay->Output();
  std::string body;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto [code, text] = HttpGet(port, "/readyz");
        body = text;
        return code == 503 && text.find("SASL authentication error") != std::string::npos;
      },
      60s, "/readyz names the SASL authentication error", 200ms))
      << "/readyz said: " << body;
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing

namespace outbox::testing {
namespace {

// TLS to the broker failing against a real SSL listener (scripts/kafka-temp.sh KAFKA_TEMP_TLS=1: a throwaway CA):
// a relay that trusts another CA. `check` fails naming the certificate verification; `run` names it in its log and
// on /readyz, retries with capped backoff and confirms nothing past what waits; trusting the listener's CA, `check`
// passes and the relay delivers over TLS.
TEST(KafkaTls, AnUntrustedBrokerCertificateIsNamedAndRetriedAndTheRightCaDelivers) {
  PgServer* pg = PgServer::Shared();
  ASSERT_NE(pg, nullptr);
  auto broker = KafkaBroker::Create(KafkaBroker::Options{.port = 0, .extra_properties = "", .sasl = false, .tls = true});
  ASSERT_TRUE(broker.ok()) << broker.status();
  ASSERT_FALSE((*broker)->tls_bootstrap().empty());
  RelayHarness h(pg, (*broker)->bootstrap());
  h.Init();  // over PLAINTEXT: the checkpoint topic and the first checkpoint
  const std::string other = h.dir() + "/other-ca";
  auto [certs_rc, certs_out] = MakeTestCerts(other);
  ASSERT_EQ(certs_rc, 0) << certs_out;
  ASSERT_NO_FATAL_FAILURE(AddKafkaKeys(h, {{"security.protocol", "SSL"}}));
  const std::vector<std::string> on_tls = {"--set", "kafka.bootstrap.servers=" + (*broker)->tls_bootstrap()};
  const auto with_ca = [&](const std::string& ca) {
    std::vector<std::string> args = on_tls;
    args.insert(args.end(), {"--set", "kafka.ssl.ca.location=" + ca});
    return args;
  };
  constexpr char kVerify[] = "certificate verify failed";
  std::vector<std::string> check = {"check"};
  const auto wrong = with_ca(other + "/ca.crt");
  check.insert(check.end(), wrong.begin(), wrong.end());
  CommandResult r = RunRelay(h.config_path(), check, {}, 60s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(kVerify), std::string::npos) << r.out;

  auto relay = SpawnRelay(h, wrong, {}, "relay-tls.log");
  ASSERT_NE(relay, nullptr);
  const int port = RelayHttpPort(*relay);
  ASSERT_GT(port, 0) << relay->Output();
  h.InsertEvent("Untrusted", "k", "{}");
  const Lsn committed = h.CurrentWal();
  std::string body;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto [code, text] = HttpGet(port, "/readyz");
        body = text;
        return code == 503 && text.find(kVerify) != std::string::npos;
      },
      60s, "/readyz names the certificate verification", 200ms))
      << "/readyz said: " << body;
  ASSERT_TRUE(WaitFor([&] { return relay->Output().find("reconnecting in 200 ms") != std::string::npos; }, 120s,
                      "retried with a growing backoff", 200ms))
      << relay->Output();
  EXPECT_TRUE(relay->Running()) << relay->Output();
  EXPECT_LT(h.ConfirmedFlush(), committed) << "confirmed past an event that never reached Kafka";
  ExpectStopsCleanly(*relay);

  check = {"check"};
  const auto right = with_ca((*broker)->tls_dir() + "/ca.crt");
  check.insert(check.end(), right.begin(), right.end());
  r = RunRelay(h.config_path(), check, {}, 60s);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  relay = SpawnRelay(h, right, {}, "relay-tls-right.log");
  ASSERT_NE(relay, nullptr);
  auto reader = KafkaReader::Create((*broker)->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->ReadUntil(h.Topic("Untrusted"), 1, 60s).ok()) << relay->Output();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= committed; }, 30s, "confirmed once delivered over TLS"));
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
