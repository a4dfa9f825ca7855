// HttpServer on port 0: /healthz follows the loop, /readyz says why it is not ready, /metrics is the exposition.
#include "ops/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace outbox::ops {
namespace {

struct Response {
  int status = 0;
  std::string body;
  std::string content_type;
};

Response Get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  auto res = client.Get(path.c_str());
  if (!res) return {};
  return {res->status, res->body, res->get_header_value("Content-Type")};
}

// More silent clients than the server has threads (connected, sending nothing, as a scanner or a stuck proxy
// would): each is dropped after kClientTimeoutSeconds, so the probe behind them is answered within its deadline.
TEST(HttpServer, SilentClientsDoNotStarveTheProbes) {
  Metrics metrics;
  metrics.loop_running = true;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  std::vector<int> silent;
  for (int i = 0; i < 40; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    silent.push_back(fd);
  }
  // 40 silent clients on 8 threads: five rounds of kClientTimeoutSeconds (2 s) before the probe's turn. The probe's
  // 20 s deadline leaves room for a loaded machine, and fails with cpp-httplib's own 5 s (five rounds: 25 s).
  httplib::Client client("127.0.0.1", server.port());
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(20, 0);
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << "no answer to /healthz behind silent clients";
  EXPECT_EQ(res->status, 200);
  for (int fd : silent) ::close(fd);
}

TEST(HttpServer, HealthzFollowsTheLoop) {
  Metrics metrics;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(Get(server.port(), "/healthz").status, 503);
  metrics.loop_running = true;
  EXPECT_EQ(Get(server.port(), "/healthz").status, 200);
  metrics.loop_running = false;
  EXPECT_EQ(Get(server.port(), "/healthz").status, 503);
}

TEST(HttpServer, ReadyzIs200OnlyWhileStreamingWithTheBrokerReachableAndSaysWhyNot) {
  Metrics metrics;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Response r = Get(server.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready: the replication loop is not running\n");
  metrics.loop_running = true;
  metrics.SetNotReadyReason("standby: replication slot \"s\" is active for PID 42");
  r = Get(server.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready: standby: replication slot \"s\" is active for PID 42\n");
  metrics.SetNotReadyReason("");
  metrics.streaming = true;
  r = Get(server.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready: broker unreachable\n");
  metrics.broker_reachable = true;
  r = Get(server.port(), "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");
}

// ?standby=ok (the chart's readiness probe): a waiting standby counts as ready; plain /readyz still does not, and
// nothing else that is not ready (starting, reconnecting, stopped) counts.
TEST(HttpServer, ReadyzWithStandbyOkCountsOnlyAHealthyStandbyAsReady) {
  Metrics metrics;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  EXPECT_EQ(Get(server.port(), "/readyz?standby=ok").status, 503) << "the loop is not running";
  metrics.loop_running = true;
  metrics.SetNotReadyReason("could not connect to the server");
  Response r = Get(server.port(), "/readyz?standby=ok");
  EXPECT_EQ(r.status, 503) << "reconnecting is not a standby";
  EXPECT_EQ(r.body, "not ready: could not connect to the server\n");
  metrics.standby = 1;
  metrics.SetNotReadyReason("standby: replication slot \"s\" is active for PID 42");
  r = Get(server.port(), "/readyz?standby=ok");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "standby: replication slot \"s\" is active for PID 42\n");
  EXPECT_EQ(Get(server.port(), "/readyz").status, 503) << "plain /readyz is what alerting reads: streaming only";
  EXPECT_EQ(Get(server.port(), "/readyz?standby=no").status, 503);
  metrics.SetStopped("fatal: the slot was dropped");
  metrics.loop_running = false;
  EXPECT_EQ(Get(server.port(), "/readyz?standby=ok").status, 503) << "a stopped loop is never ready";
}

TEST(HttpServer, ReadyzWithStandbyOkOverSeveralPipelines) {
  Metrics alpha, beta;
  for (Metrics* m : {&alpha, &beta}) m->loop_running = true;
  alpha.streaming = true;
  alpha.broker_reachable = true;
  beta.standby = 1;
  beta.SetNotReadyReason("standby: replication slot \"b\" is active for PID 7");
  HttpServer server({{"alpha", &alpha, ""}, {"beta", &beta, ""}});
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Response r = Get(server.port(), "/readyz?standby=ok");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\npipeline alpha: ready\npipeline beta: standby: replication slot \"b\" is active for PID 7\n");
  EXPECT_EQ(Get(server.port(), "/readyz").status, 503);
  EXPECT_EQ(Get(server.port(), "/readyz?pipeline=beta&standby=ok").status, 200);
  beta.standby = 0;
  beta.SetNotReadyReason("could not connect to the server");
  EXPECT_EQ(Get(server.port(), "/readyz?standby=ok").status, 503);
}

TEST(HttpServer, ReadyzReasonGoesThroughTheRedactor) {
  Metrics metrics;
  metrics.loop_running = true;
  metrics.SetNotReadyReason("could not connect: password=hunter2 rejected");
  HttpServer server(&metrics, [](std::string text) {
    for (size_t pos; (pos = text.find("hunter2")) != std::string::npos;) text.replace(pos, 7, "****");
    return text;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  const Response r = Get(server.port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready: could not connect: password=**** rejected\n");
}

TEST(HttpServer, MetricsServesTheTextExposition) {
  Metrics metrics;
  metrics.events_published = 3;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Response r = Get(server.port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4");
  EXPECT_EQ(r.body, metrics.Render());
  EXPECT_NE(r.body.find("outbox_relay_events_total{result=\"published\"} 3\n"), std::string::npos) << r.body;
  EXPECT_EQ(Get(server.port(), "/nothing").status, 404);
}

TEST(HttpServer, RefusesABadListenAddressAndAPortInUse) {
  Metrics metrics;
  for (const char* listen : {"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000", ":-1"}) {
    HttpServer server(&metrics);
    EXPECT_EQ(server.Start(listen).code(), absl::StatusCode::kInvalidArgument) << listen;
  }
  HttpServer first(&metrics);
  ASSERT_TRUE(first.Start("127.0.0.1:0").ok());
  HttpServer second(&metrics);
  absl::Status st = second.Start("127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_NE(std::string(st.message()).find("http.listen"), std::string::npos) << st;
}

TEST(HttpServer, StopsAndCanBeStoppedTwice) {
  Metrics metrics;
  HttpServer server(&metrics);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  const int port = server.port();
  EXPECT_EQ(Get(port, "/healthz").status, 503);
  server.Stop();
  server.Stop();
  EXPECT_EQ(Get(port, "/healthz").status, 0) << "nothing answers after Stop";
}

TEST(HttpServer, SeveralPipelinesAreReadyOnlyTogetherAndOneCanBeAskedFor) {
  Metrics alpha, beta;
  for (Metrics* m : {&alpha, &beta}) {
    m->loop_running = true;
    m->streaming = true;
    m->broker_reachable = true;
  }
  HttpServer server({{"alpha", &alpha, ""}, {"beta", &beta, ""}});
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  const int port = server.port();
  EXPECT_EQ(Get(port, "/readyz").status, 200);
  beta.loop_running = false;
  beta.SetStopped("fatal: boom");
  const Response all = Get(port, "/readyz");
  EXPECT_EQ(all.status, 503);
  EXPECT_NE(all.body.find("pipeline alpha: ready"), std::string::npos) << all.body;
  EXPECT_NE(all.body.find("pipeline beta: not ready: stopped: fatal: boom"), std::string::npos) << all.body;
  EXPECT_EQ(Get(port, "/readyz?pipeline=alpha").status, 200);
  EXPECT_EQ(Get(port, "/readyz?pipeline=beta").status, 503);
  EXPECT_EQ(Get(port, "/readyz?pipeline=gamma").status, 404);
  // Healthy while any loop runs: a stopped pipeline does not get the process restarted under the others.
  EXPECT_EQ(Get(port, "/healthz").status, 200);
  alpha.loop_running = false;
  EXPECT_EQ(Get(port, "/healthz").status, 503);
  const Response metrics = Get(port, "/metrics");
  EXPECT_NE(metrics.body.find("outbox_relay_running{pipeline=\"beta\"} 0"), std::string::npos) << metrics.body;
}

}  // namespace
}  // namespace outbox::ops
