// TLS to PostgreSQL through the conninfo (sslmode=verify-full): a throwaway CA and server certificate made with
// openssl, a server with ssl=on, and `check`, `status`, `init` and a short `run` over TLS; a wrong CA or host name
// fails with the certificate error.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include "app/app_test_util.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_ = KafkaBroker::Shared();
    ASSERT_NE(broker_, nullptr);
    auto dir = MakeTempDir("relay-tls-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *dir;
    // The server's user reads its certificate and key from here.
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(MakeCa("ca"));
    ASSERT_NO_FATAL_FAILURE(MakeCa("other-ca"));
    ASSERT_NO_FATAL_FAILURE(MakeServerCertificate("ca", "server"));
    auto pg = PgServer::Create({.extra_conf = "ssl = on\nssl_cert_file = '" + dir_ + "/server.crt'\nssl_key_file = '" +
                                              dir_ + "/server.key'"});
    ASSERT_TRUE(pg.ok()) << pg.status();
    pg_ = std::move(*pg);
  }

  void TearDown() override {
    pg_.reset();
    if (!HasFailure()) RemoveTree(dir_);
  }

  void OpenSsl(std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    auto r = RunCommand(args, 60s);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }

  // <name>.pem and <name>.key: a self-signed CA.
  void MakeCa(const std::string& name) {
    OpenSsl({"req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             dir_ + "/" + name + ".key", "-out", dir_ + "/" + name + ".pem", "-days", "2", "-subj",
             "/CN=outbox-relay test " + name});
  }

  // <name>.crt and <name>.key for localhost and 127.0.0.1, signed by `ca`, owned by the server's user, the key 0600.
  void MakeServerCertificate(const std::string& ca, const std::string& name) {
    const std::string base = dir_ + "/" + name;
    WriteText(base + ".ext", "subjectAltName = DNS:localhost, IP:127.0.0.1\nextendedKeyUsage = serverAuth\n");
    OpenSsl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             base + ".key", "-out", base + ".csr", "-subj", "/CN=localhost"});
    OpenSsl({"x509", "-req", "-in", base + ".csr", "-CA", dir_ + "/" + ca + ".pem", "-CAkey", dir_ + "/" + ca + ".key",
             "-CAcreateserial", "-out", base + ".crt", "-days", "2", "-extfile", base + ".ext"});
    const std::string user = PgServerUser();
    if (!user.empty()) {
      const passwd* pw = getpwnam(user.c_str());
      ASSERT_NE(pw, nullptr) << user;
      for (const char* ext : {".crt", ".key"}) ASSERT_EQ(chown((base + ext).c_str(), pw->pw_uid, pw->pw_gid), 0);
    }
    ASSERT_EQ(chmod((base + ".key").c_str(), 0600), 0);
  }

  // relay.yaml's conninfo: verify-full against `root` (a CA file name in dir_).
  std::string TlsConninfo(const RelayHarness& h, const std::string& root, const std::string& host = "localhost") {
    return "\"host=" + host + " hostaddr=127.0.0.1 port=" + std::to_string(pg_->port()) + " user=postgres dbname=" +
           h.db() + " sslmode=verify-full sslrootcert=" + dir_ + "/" + root + "\"";
  }

  // Whether the backend `pid` speaks TLS, and its version ("true TLSv1.3").
  std::string SslOf(const std::string& pid) {
    auto v = pg_->QueryValue("SELECT ssl::text || ' ' || coalesce(version, '') FROM pg_stat_ssl WHERE pid = " + pid);
    return v.ok() ? v->value_or("") : v.status().ToString();
  }

  KafkaBroker* broker_ = nullptr;
  std::unique_ptr<PgServer> pg_;
  std::string dir_;
};

TEST_F(Tls, VerifyFullCheckStatusInitAndRunOverTls) {
  RelayHarness h(pg_.get(), broker_->bootstrap());
  SetConninfo(h, TlsConninfo(h, "ca.pem"));
  CommandResult r = RunRelay(h.config_path(), {"init", "--create-table"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: replication connection"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sslmode=verify-full"), std::string::npos) << r.out;
  r = RunRelay(h.config_path(), {"status"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  auto relay = h.StartRelay();
  ASSERT_NE(relay, nullptr);
  const std::string pid =
      h.Value("SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'").value_or("0");
  EXPECT_TRUE(SslOf(pid).starts_with("true TLSv1.")) << "the walsender's connection: " << SslOf(pid);
  const std::string id = h.InsertEvent("Created", "tls-key", "{\"over\":\"tls\"}");
  auto reader = KafkaReader::Create(broker_->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto records = (*reader)->ReadUntil(h.Topic("Created"), 1, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << "\n" << relay->Output();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front().key, "tls-key");
  ASSERT_NE(records->front().FindHeader("id"), nullptr);
  EXPECT_EQ(records->front().FindHeader("id")->value, id);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
}

TEST_F(Tls, AWrongCaOrHostNameFailsWithTheCertificateError) {
  RelayHarness h(pg_.get(), broker_->bootstrap());
  h.Init();  // over the default conninfo (sslmode=prefer)
  SetConninfo(h, TlsConninfo(h, "other-ca.pem"));
  CommandResult r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("problem: PostgreSQL: could not connect to the server: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("certificate verify failed"), std::string::npos) << r.out;
  r = RunRelay(h.config_path(), {"status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("certificate verify failed"), std::string::npos) << r.err;
  r = RunRelay(h.config_path(), {"init"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("certificate verify failed"), std::string::npos) << r.err;
  // `run` never streams with it: a certificate error is a configuration problem no retry cures, so the relay
  // exits 1 and says why (src/pg/replication_connection.cc classifies it as fatal).
  auto relay = h.StartRelay({}, false);
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(relay->Wait(60s), std::optional<int>(1)) << relay->Output();
  EXPECT_NE(relay->Output().find("certificate verify failed"), std::string::npos) << relay->Output();
  EXPECT_FALSE(h.SlotActive());

  // The right CA, but a host name the certificate does not name.
  SetConninfo(h, TlsConninfo(h, "ca.pem", "wrong.invalid"));
  r = RunRelay(h.config_path(), {"check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("does not match host name \"wrong.invalid\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace outbox::testing
