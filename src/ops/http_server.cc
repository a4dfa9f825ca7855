// HttpServer: the operations endpoints.
#include "common/strings.h"
#include "ops/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::ops {

HttpServer::HttpServer(const Metrics* metrics, Redactor redact) : metrics_(metrics), redact_(std::move(redact)) {}

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
  const Metrics* m = metrics_;
  server_->Get("/metrics", [m](const httplib::Request&, httplib::Response& res) {
    res.set_content(m->Render(), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [m](const httplib::Request&, httplib::Response& res) {
    const bool ok = m->loop_running.load();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "loop not running\n", "text/plain");
  });
  server_->Get("/readyz", [m, redact = redact_](const httplib::Request&, httplib::Response& res) {
    const Metrics::Readiness r = m->readiness();
    res.status = r.ready ? 200 : 503;
    res.set_content(r.ready ? "ready\n" : Cat("not ready: ", redact ? redact(r.reason) : r.reason, "\n"),
                    "text/plain");
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
