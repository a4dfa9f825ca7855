// Helpers of the RabbitMQ tests: the shared node's URL, tests/rabbitmq/rmq_tool.py (pika, the second client), and a
// node of a test's own (scripts/rabbitmq-temp.sh) for the tests that stop the broker or raise its alarms.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shell.h"
#include "support/util.h"

namespace outbox::testing {

// The shared node's URL (OUTBOX_TEST_RABBITMQ_URL), "" when unset: then the tests skip with kNoRabbitMq.
inline std::string SharedRabbitMqUrl() {
  const char* url = std::getenv("OUTBOX_TEST_RABBITMQ_URL");
  return url != nullptr ? url : "";
}
inline constexpr char kNoRabbitMq[] =
    "OUTBOX_TEST_RABBITMQ_URL is not set: scripts/test.sh starts a rabbitmq-server node and sets it";

inline std::string PikaPython() {
  if (const char* py = std::getenv("OUTBOX_TEST_PIKA_PY"); py != nullptr && *py != '\0') return py;
  const char* cache = std::getenv("OUTBOX_RELAY_CACHE");
  const std::string root = cache != nullptr && *cache != '\0' ? cache : std::string(std::getenv("HOME")) +
                                                                           "/.cache/outbox-relay";
  return root + "/pika-1.3.2/bin/python";
}

inline std::pair<int, std::string> RmqTool(const std::string& url, const std::vector<std::string>& args) {
  std::string cmd = ShellQuote(PikaPython()) + " " + ShellQuote(OUTBOX_RMQ_TOOL) + " " + ShellQuote(url);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  return Run(cmd);
}

// A throwaway rabbitmq-server node of a test's own.
class OwnRabbitMq {
 public:
  // `tls`: "" (AMQP only), "on" (also an amqps listener with a throwaway CA) or "peer" (the amqps listener wants a
  // client certificate of that CA): scripts/rabbitmq-temp.sh's RABBITMQ_TEMP_TLS.
  explicit OwnRabbitMq(std::string tls = "") : tls_(std::move(tls)) {
    auto dir = MakeTempDir("rmq-own-");
    EXPECT_TRUE(dir.ok());
    dir_ = dir.value_or("/tmp/rmq-own");
    Start();
  }
  ~OwnRabbitMq() {
    Script("stop");
    RemoveTree(dir_);
  }
  void Start() {
    auto [rc, out] = Script("start");
    ASSERT_EQ(rc, 0) << out;
    url_ = LineValue(out, "RABBITMQ_URL");
    ASSERT_FALSE(url_.empty()) << out;
    if (!tls_.empty()) {
      tls_url_ = LineValue(out, "RABBITMQ_TLS_URL");
      tls_dir_ = LineValue(out, "TLS_DIR");
      ASSERT_FALSE(tls_url_.empty() || tls_dir_.empty()) << out;
    }
  }
  void Stop() {
    auto [rc, out] = Script("stop");
    ASSERT_EQ(rc, 0) << out;
  }
  // rabbitmqctl against the node.
  std::pair<int, std::string> Ctl(const std::string& args) { return Script("ctl", args); }
  const std::string& url() const { return url_; }
  // With `tls`: the amqps:// URL, and the directory of the node's CA (ca.crt) and client certificate (client.crt,
  // client.key).
  const std::string& tls_url() const { return tls_url_; }
  const std::string& tls_dir() const { return tls_dir_; }

 private:
  std::pair<int, std::string> Script(const std::string& cmd, const std::string& args = "") {
    return Run("RABBITMQ_TEMP_TLS=" + ShellQuote(tls_) + " bash " + ShellQuote(OUTBOX_RMQ_TEMP) + " " + cmd + " " +
               ShellQuote(dir_) + " " + args);
  }
  std::string tls_, dir_, url_, tls_url_, tls_dir_;
};

}  // namespace outbox::testing
