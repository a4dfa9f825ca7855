// HttpServer: /metrics, /healthz and /readyz on http.listen, served by cpp-httplib on its own threads. It only
// reads Metrics, one per pipeline. Start and Stop are called by one thread (main).
//
// With several pipelines: /metrics labels every sample pipeline="<name>"; /readyz is 200 when every pipeline is
// ready and lists each one's state, /readyz?pipeline=<name> answers for one (404 for an unknown name); /healthz is
// 200 while any pipeline's loop runs (a pipeline stopped by a fatal error shows in /readyz and the `running`
// metric, and does not restart the others).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "ops/logging.h"
#include "ops/metrics.h"

namespace httplib {
class Server;
}

namespace outbox::ops {

class HttpServer {
 public:
  // `redact` masks secrets in the /readyz reason (an error message); may be empty.
  explicit HttpServer(const Metrics* metrics, Redactor redact = nullptr);
  explicit HttpServer(std::vector<PipelineMetrics> pipelines, Redactor redact = nullptr);
  ~HttpServer();
  // `listen` is "host:port" (port 0 picks a free one). Returns once the socket is bound.
  absl::Status Start(const std::string& listen);
  int port() const { return port_; }
  void Stop();

  // How long a client may take for each read or write, and keep an idle connection, in seconds.
  static constexpr int kClientTimeoutSeconds = 2;

 private:
  std::vector<PipelineMetrics> pipelines_;
  Redactor redact_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> done_{false};  // the accept loop has returned
  int port_ = 0;
};

}  // namespace outbox::ops
