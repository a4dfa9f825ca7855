// bench-http-receiver: the webhook receiver of the benchmark's relay-http contender (bench/run.sh builds it against
// Debian's cpp-httplib). It answers every POST 200 with an empty body and counts requests and events (a request
// carries Outbox-Batch-Size events when the relay batches, else one); HEAD answers 200 (the relay's check_url).
//
//   bench-http-receiver [--threads N]
//       Listens on a free port of 127.0.0.1, prints PORT=<port> and serves until killed (SIGTERM's default).
//       GET /count answers "<requests> <events>"; any other GET or HEAD answers 200. N (default 64) bounds the
//       connections served at once: cpp-httplib keeps a pool thread per keep-alive connection, so N must exceed
//       the relay's http_sink.max_in_flight or the extra connections wait for a thread and the receiver, not the
//       relay, sets the rate.
#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  size_t threads = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::strtoul(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: bench-http-receiver [--threads N]\n");
      return 2;
    }
  }
  std::atomic<unsigned long long> requests{0};
  std::atomic<unsigned long long> events{0};

  httplib::Server server;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // The relay keeps its connections open: never close one after a number of requests, nor while the relay waits.
  server.set_keep_alive_max_count(1u << 30);
  server.set_keep_alive_timeout(60);
  server.Post(".*", [&](const httplib::Request& req, httplib::Response& res) {
    unsigned long long n = 1;
    if (req.has_header("Outbox-Batch-Size")) {
      n = std::strtoull(req.get_header_value("Outbox-Batch-Size").c_str(), nullptr, 10);
    }
    events.fetch_add(n, std::memory_order_relaxed);
    requests.fetch_add(1, std::memory_order_relaxed);
    res.status = 200;
  });
  server.Get("/count", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::to_string(requests.load()) + " " + std::to_string(events.load()) + "\n", "text/plain");
  });
  server.Get(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });  // and HEAD

  int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::fprintf(stderr, "bench-http-receiver: could not listen on 127.0.0.1\n");
    return 1;
  }
  std::printf("PORT=%d\n", port);
  std::fflush(stdout);
  return server.listen_after_bind() ? 0 : 1;
}
