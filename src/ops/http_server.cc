// HttpServer: the operations endpoints.
#include "common/strings.h"
#include "ops/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::ops {

HttpServer::HttpServer(const Metrics* metrics, Redactor redact)
    : HttpServer(std::vector<PipelineMetrics>{{"", metrics, ""}}, std::move(redact)) {}

HttpServer::HttpServer(std::vector<PipelineMetrics> pipelines, Redactor redact)
    : pipelines_(std::move(pipelines)), redact_(std::move(redact)) {}

namespace {

// /readyz: one pipeline's state, or all of them (ready only when every one is). With ?standby=ok a healthy standby
// counts as ready too (an orchestrator's readiness probe: the standby pod of a pair must not hold a rollout back);
// plain /readyz stays what alerting reads: 200 only while streaming.
void Readyz(const std::vector<PipelineMetrics>& pipelines, const Redactor& redact, const httplib::Request& req,
            httplib::Response& res) {
  const auto why = [&](const Metrics::Readiness& r) { return redact ? redact(r.reason) : r.reason; };
  const bool standby_ok = req.get_param_value("standby") == "ok";
  const auto answer = [&](const Metrics::Readiness& r) {
    if (r.ready) return std::string("ready");
    return standby_ok && r.standby ? why(r) : Cat("not ready: ", why(r));  // the reason says "standby: ..."
  };
  const auto counts = [&](const Metrics::Readiness& r) { return r.ready || (standby_ok && r.standby); };
  if (pipelines.size() == 1 && pipelines[0].pipeline.empty()) {
    const Metrics::Readiness r = pipelines[0].metrics->readiness();
    res.status = counts(r) ? 200 : 503;
    res.set_content(Cat(answer(r), "\n"), "text/plain");
    return;
  }
  const std::string only = req.get_param_value("pipeline");
  bool all_ready = true, found = false;
  std::string body;
  for (const PipelineMetrics& p : pipelines) {
    if (!only.empty() && p.pipeline != only) continue;
    found = true;
    const Metrics::Readiness r = p.metrics->readiness();
    all_ready = all_ready && counts(r);
    Append(&body, "pipeline ", p.pipeline, ": ", answer(r), "\n");
  }
  if (!found) {
    res.status = 404;
    res.set_content(Cat("no pipeline named \"", only, "\"\n"), "text/plain");
    return;
  }
  res.status = all_ready ? 200 : 503;
  res.set_content(Cat(all_ready ? "ready\n" : "not ready\n", body), "text/plain");
}

}  // namespace

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(Cat("http.listen: \"", listen, "\" is not host:port"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  server_ = std::make_unique<httplib::Server>();
  // cpp-httplib's default sets SO_REUSEPORT: a second relay on the same http.listen would then bind too, and the
  // kernel would split the scrapes between the two. SO_REUSEADDR only: a port in use is an error.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Slow or silent clients hold one of the server's few threads (8 here) only this long per read or write, so
  // they cannot starve the liveness and readiness probes behind them for more than a few seconds.
  server_->set_read_timeout(kClientTimeoutSeconds, 0);
  server_->set_write_timeout(kClientTimeoutSeconds, 0);
  server_->set_keep_alive_timeout(kClientTimeoutSeconds);
  const std::vector<PipelineMetrics>* pipelines = &pipelines_;
  server_->Get("/metrics", [pipelines](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderMetrics(*pipelines), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [pipelines](const httplib::Request&, httplib::Response& res) {
    const bool ok = std::any_of(pipelines->begin(), pipelines->end(),
                                [](const PipelineMetrics& p) { return p.metrics->loop_running.load(); });
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "loop not running\n", "text/plain");
  });
  server_->Get("/readyz", [pipelines, redact = redact_](const httplib::Request& req, httplib::Response& res) {
    Readyz(*pipelines, redact, req, res);
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ < 0) return absl::UnavailableError(Cat("http.listen: cannot bind ", listen));
  } else {
    if (!server_->bind_to_port(host, port)) {
      return absl::UnavailableError(Cat("http.listen: cannot bind ", listen));
    }
    port_ = port;
  }
  done_ = false;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    done_ = true;
  });
  // Answer requests from the moment Start returns.
  while (!server_->is_running() && !done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  // Server::stop() does nothing before the accept loop has started: repeat it until the loop has ended.
  while (!done_) {
    server_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  thread_.join();
}

}  // namespace outbox::ops
