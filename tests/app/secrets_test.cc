// Secrets (SPEC.md §2, §3): a PostgreSQL password from ${file:} and a SASL password from ${env:} reach the server
// and librdkafka, and never appear in any output of the binary: logs (text and JSON, debug level), errors, `check`
// (with its config dump), `status`, `init`, the HTTP endpoints.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "app/app_test_util.h"
#include "config/config.h"
#include "support/kafka_broker.h"
#include "support/pg_server.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Secrets : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_ = KafkaBroker::Shared();
    ASSERT_NE(broker_, nullptr);
    // An own server: its pg_hba.conf is made to ask this test's role for its password.
    auto pg = PgServer::Create();
    ASSERT_TRUE(pg.ok()) << pg.status();
    pg_ = std::move(*pg);
  }

  // Makes `role` authenticate with scram-sha-256 over TCP (the rest of the server stays on trust).
  void RequirePassword(const std::string& role) {
    const std::string hba = pg_->data_dir() + "/pg_hba.conf";
    const std::string rules = "host all " + role + " 127.0.0.1/32 scram-sha-256\nhost replication " + role +
                              " 127.0.0.1/32 scram-sha-256\n";
    WriteText(hba, rules + ReadText(hba));
    ASSERT_TRUE(pg_->Exec("SELECT pg_reload_conf()").ok());
    // The reload is asynchronous: wait until the rule is in force.
    ASSERT_TRUE(WaitFor(
        [&] {
          auto v = pg_->QueryValue("SELECT count(*) FROM pg_hba_file_rules WHERE '" + role + "' = ANY(user_name)");
          return v.ok() && *v == "2";
        },
        10s, "pg_hba.conf reloaded"));
    std::this_thread::sleep_for(200ms);
  }

  // Records an output of the binary under a label, for the final search.
  void Keep(const std::string& label, const std::string& text) { outputs_.emplace_back(label, text); }
  void Keep(const std::string& label, const CommandResult& r) {
    Keep(label + " (stdout)", r.out);
    Keep(label + " (stderr)", r.err);
  }

  void ExpectNoSecret(const std::vector<std::string>& secrets) {
    ASSERT_FALSE(outputs_.empty());
    for (const auto& [label, text] : outputs_) {
      for (const std::string& secret : secrets) {
        EXPECT_EQ(text.find(secret), std::string::npos) << "the secret appears in " << label << ":\n" << text;
      }
    }
  }

  std::unique_ptr<PgServer> pg_;
  KafkaBroker* broker_ = nullptr;
  std::vector<std::pair<std::string, std::string>> outputs_;
};

TEST_F(Secrets, NeverAppearInLogsErrorsCheckStatusOrTheConfigDump) {
  RelayHarness h(pg_.get(), broker_->bootstrap(), "log:\n  level: debug\n");
  h.Init();
  const std::string role = UniqueName("relay_secret");
  const std::string pg_password = "pgS3cret" + UniqueName("p").substr(1);
  const std::string sasl_password = "saslS3cret" + UniqueName("s").substr(1);
  const std::string wrong_password = "wrongS3cret" + UniqueName("w").substr(1);
  h.Sql("CREATE ROLE " + role + " LOGIN REPLICATION PASSWORD '" + pg_password + "'; GRANT SELECT ON outbox TO " +
        role);
  RequirePassword(role);
  const std::string password_file = h.dir() + "/pg-password";
  WriteText(password_file, pg_password + "\n");
  const std::string port = std::to_string(pg_->port());
  SetConninfo(h, "\"host=127.0.0.1 port=" + port + " dbname=" + h.db() + " user=" + role + " password=${file:" +
                     password_file + "}\"");

  // 1. The file's password authenticates: check, status and init pass as this role.
  CommandResult r = RunRelay(h.config_path(), {"check"});
  Keep("check", r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  source.conninfo: host=127.0.0.1 port=" + port + " dbname=" + h.db() + " user=" + role +
                       " password=****\n"),
            std::string::npos)
      << r.out;
  r = RunRelay(h.config_path(), {"status"});
  Keep("status", r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunRelay(h.config_path(), {"status", "--json"});
  Keep("status --json", r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunRelay(h.config_path(), {"init"});
  Keep("init", r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunRelay(h.config_path(), {"init", "--print"});
  Keep("init --print", r);
  // The same password in URI form.
  r = RunRelay(h.config_path(), {"check", "--set",
                                 "source.conninfo=postgresql://" + role + ":${file:" + password_file +
                                     "}@127.0.0.1:" + port + "/" + h.db()});
  Keep("check (URI conninfo)", r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(role + ":****@127.0.0.1"), std::string::npos) << r.out;

  // 2. A run with debug logs, text then JSON, with /readyz and /metrics read while it streams.
  for (const char* format : {"text", "json"}) {
    auto relay = h.StartRelay({"--set", std::string("log.format=") + format});
    ASSERT_NE(relay, nullptr);
    h.InsertEvent("Created", "k", "{}");
    ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}") >= 1; },
                        60s, "the event is published"));
    Keep(std::string("/readyz while streaming, ") + format, HttpGet(h.http_port(), "/readyz").second);
    Keep(std::string("/metrics while streaming, ") + format, HttpGet(h.http_port(), "/metrics").second);
    ASSERT_TRUE(relay->Kill(SIGTERM).ok());
    EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
    Keep(std::string("run log, ") + format, relay->Output());
  }

  // 3. A wrong password: the error says so, without the password tried.
  WriteText(password_file, wrong_password);
  r = RunRelay(h.config_path(), {"check"});
  Keep("check (wrong password)", r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("password authentication failed for user \"" + role + "\""), std::string::npos) << r.out;
  r = RunRelay(h.config_path(), {"status"});
  Keep("status (wrong password)", r);
  EXPECT_EQ(r.exit_code, 1);
  r = RunRelay(h.config_path(), {"init"});
  Keep("init (wrong password)", r);
  EXPECT_EQ(r.exit_code, 1);
  {
    auto relay = h.StartRelay({}, false);
    ASSERT_NE(relay, nullptr);
    EXPECT_TRUE(WaitFor([&] { return !relay->Running() || relay->Output().find("authentication failed") != std::string::npos; },
                        30s, "the relay reports the failed authentication"));
    Keep("/readyz (wrong password)", HttpGet(h.http_port(), "/readyz").second);
    (void)relay->Kill(SIGTERM);
    relay->Wait(60s);
    Keep("run log (wrong password)", relay->Output());
  }
  WriteText(password_file, pg_password);

  // 4. SASL: the password from ${env:} goes to librdkafka; the broker is unreachable, so `check` reports it.
  AddKafkaKeys(h, {{"security.protocol", "SASL_PLAINTEXT"},
                   {"sasl.mechanisms", "PLAIN"},
                   {"sasl.username", "outbox-sasl-user"},
                   {"sasl.password", "\"${env:RELAY_TEST_SASL_PASSWORD}\""}});
  const std::map<std::string, std::string> env = {{"RELAY_TEST_SASL_PASSWORD", sasl_password}};
  const std::string nobody = "kafka.bootstrap.servers=127.0.0.1:" + std::to_string(ClosedPort());
  r = RunRelay(h.config_path(), {"check", "--set", nobody}, env);
  Keep("check (SASL)", r);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("problem: the broker does not answer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  kafka.sasl.password: ****\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  kafka.security.protocol: SASL_PLAINTEXT\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok: wal_level is logical"), std::string::npos) << r.out;
  // Without the variable, the error names it, not a value.
  r = RunRelay(h.config_path(), {"check"});
  Keep("check (SASL variable unset)", r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("RELAY_TEST_SASL_PASSWORD"), std::string::npos) << r.err;
  // The same password given inline with --set is masked too.
  r = RunRelay(h.config_path(), {"check", "--set", nobody, "--set", "kafka.sasl.password=" + sasl_password});
  Keep("check (inline sasl.password)", r);
  EXPECT_EQ(r.exit_code, 1);
  // A secret that lands in a value the loader refuses: the error names the key, not the value.
  r = RunRelay(h.config_path(), {"status", "--set", "source.status_interval_ms=${env:RELAY_TEST_SASL_PASSWORD}"}, env);
  Keep("status (secret in a bad value)", r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("source.status_interval_ms"), std::string::npos) << r.err;
  r = RunRelay(h.config_path(), {"status", "--set", "source.conninfo=host=127.0.0.1 port=" + port + " user=" + role +
                                                        " dbname=" + h.db() + " password=" + pg_password + " bogus=1"},
               env);
  Keep("status (conninfo refused by libpq)", r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
  // A run that cannot reach the broker, with debug logs, stopped after a few retries.
  {
    auto relay = SpawnRelay(h, {"--set", nobody, "--set", "log.format=json"}, env, "relay-sasl.log");
    ASSERT_NE(relay, nullptr);
    std::this_thread::sleep_for(3s);
    Keep("/readyz (SASL, no broker)", HttpGet(RelayHttpPort(*relay), "/readyz").second);
    ASSERT_TRUE(relay->Kill(SIGTERM).ok());
    relay->Wait(90s);
    Keep("run log (SASL, no broker)", relay->Output());
  }
  r = RunRelay(h.config_path(), {"init", "--set", nobody, "--set", "source.slot=" + UniqueName("s")}, env);
  Keep("init (SASL, no broker)", r);
  EXPECT_EQ(r.exit_code, 1);

  ExpectNoSecret({pg_password, sasl_password, wrong_password});
}

// Every librdkafka property documented as sensitive (config::kLibrdkafkaSensitiveProperties: _RK_SENSITIVE in the
// pinned librdkafka, sasl.oauthbearer.config among them), set inline with --set: no value appears in check (its
// config dump and its problems), check --offline, status, a debug run's log (text, with librdkafka's own lines) or
// /readyz; neither with PLAINTEXT (the relay streams) nor with SASL_SSL (librdkafka reads the key file and fails).
TEST_F(Secrets, NoValueOfASensitiveLibrdkafkaPropertyAppearsAnywhere) {
  RelayHarness h(pg_.get(), broker_->bootstrap(), "log:\n  level: debug\n");
  h.Init();
  std::vector<std::string> sets, markers;
  for (std::string_view property : config::kLibrdkafkaSensitiveProperties) {
    std::string marker = "sensitive-" + std::string(property) + "-" + UniqueName("m").substr(1);
    std::replace(marker.begin(), marker.end(), '.', '-');
    markers.push_back(marker);
    sets.insert(sets.end(), {"--set", "kafka." + std::string(property) + "=" + marker});
  }
  ASSERT_EQ(markers.size(), std::size(config::kLibrdkafkaSensitiveProperties));
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), sets.begin(), sets.end());
    return args;
  };
  CommandResult r = RunRelay(h.config_path(), with({"check"}));
  Keep("check (PLAINTEXT)", r);
  EXPECT_NE(r.out.find("  kafka.sasl.username: ****\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  kafka.sasl.oauthbearer.config: ****\n"), std::string::npos) << r.out;
  r = RunRelay(h.config_path(), with({"check", "--offline"}));
  Keep("check --offline", r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = RunRelay(h.config_path(), with({"status"}));
  Keep("status", r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // sasl.oauthbearer.client.secret and the sasl.oauthbearer.assertion.* properties need librdkafka's OIDC support,
  // which this build leaves out (`run` stops naming the key): the runs go without them, check and status not.
  std::vector<std::string> supported = {"--set", "kafka.debug=conf,security"};
  for (size_t i = 0; i < sets.size(); i += 2) {
    const bool oidc = sets[i + 1].starts_with("kafka.sasl.oauthbearer.assertion.") ||
                      sets[i + 1].starts_with("kafka.sasl.oauthbearer.client.secret=");
    // ssl_key is librdkafka's internal form of ssl.key.pem: it takes no text (`run` stops naming the key).
    const bool internal = sets[i + 1].starts_with("kafka.ssl_key=");
    if (!oidc && !internal) supported.insert(supported.end(), {sets[i], sets[i + 1]});
  }
  {
    auto relay = h.StartRelay(supported);
    ASSERT_NE(relay, nullptr);
    h.InsertEvent("Created", "k", "{}");
    ASSERT_TRUE(WaitFor([&] { return Scrape(h.http_port(), "outbox_relay_events_total{result=\"published\"}") >= 1; },
                        60s, "the event is published"));
    Keep("/readyz (PLAINTEXT)", HttpGet(h.http_port(), "/readyz").second);
    ASSERT_TRUE(relay->Kill(SIGTERM).ok());
    EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
    Keep("run log (PLAINTEXT)", relay->Output());
  }
  // SASL_SSL: librdkafka loads ssl.key.location (a marker path) and fails, naming what it could not read.
  // librdkafka's own log line quotes the key file it could not open: the relay's redaction must mask it. (The
  // PEM properties go: librdkafka would stop at their content first.)
  std::vector<std::string> key_file = {"--set", "kafka.security.protocol=SASL_SSL", "--set", "kafka.sasl.mechanisms=PLAIN"};
  for (size_t i = 0; i < supported.size(); i += 2) {
    if (!supported[i + 1].starts_with("kafka.ssl.ca.pem=") && !supported[i + 1].starts_with("kafka.ssl.key.pem=")) {
      key_file.insert(key_file.end(), {supported[i], supported[i + 1]});
    }
  }
  r = RunRelay(h.config_path(), with({"check", "--set", "kafka.security.protocol=SASL_SSL"}));
  Keep("check (SASL_SSL)", r);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  {
    auto relay = h.StartRelay(key_file, false);
    ASSERT_NE(relay, nullptr);
    EXPECT_TRUE(WaitFor([&] { return !relay->Running(); }, 60s, "the relay stops: it cannot load the key"));
    EXPECT_NE(relay->Output().find("fopen("), std::string::npos) << relay->Output();
    (void)relay->Kill(SIGTERM);
    EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
    Keep("run log (SASL_SSL)", relay->Output());
  }
  ExpectNoSecret(markers);
}

}  // namespace
}  // namespace outbox::testing
