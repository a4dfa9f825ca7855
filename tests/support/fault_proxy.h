// FaultProxy: a TCP proxy of the tests' own between the relay and a real server (PostgreSQL, a Kafka broker), that
// injects network faults on command: forward, delay, a bandwidth limit, reset (RST to both ends), and blackhole
// (stop moving bytes on the open connections and keep them open: a vanished host, a partition without a reset).
// Every fault applies to the connections open now, or to those and every new one. One thread moves the bytes
// with poll(); the control calls are thread-safe and take effect before they return.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace outbox::testing {

class FaultProxy {
 public:
  // Listens on 127.0.0.1 (a port the kernel picks) and forwards each connection to upstream_host:upstream_port.
  // An upstream port of 0 is set later with SetUpstreamPort (a server that must advertise the proxy's port, such
  // as a Kafka broker's advertised.listeners, starts after the proxy); until then connections are reset.
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(const std::string& upstream_host, int upstream_port);
  void SetUpstreamPort(int port) { upstream_port_ = port; }
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }

  // Stops moving bytes on the connections open now (and, with `new_ones`, on every connection accepted from now
  // on); the sockets stay open, so neither end sees an error until its own timeouts fire.
  void Blackhole(bool new_ones = false);
  // Resets every open connection (SO_LINGER 0: both ends get a RST). New connections forward.
  void ResetAll();
  // Holds each chunk for `delay` before passing it on (both directions, every connection).
  void SetDelay(std::chrono::milliseconds delay);
  // At most `bytes_per_second` in each direction of each connection (0: unlimited).
  void SetBandwidth(int64_t bytes_per_second);
  // Forward again: no delay, no limit, the blackholed connections move bytes again, new ones are accepted.
  void Heal();

  int open_connections() const { return open_.load(); }
  int64_t accepted() const { return accepted_.load(); }
  int64_t bytes_forwarded() const { return forwarded_.load(); }

 private:
  struct Control {
    uint64_t blackhole_generation = 0;  // connections accepted before this generation are blackholed
    bool blackhole_new = false;
    uint64_t reset_generation = 0;
    std::chrono::milliseconds delay{0};
    int64_t bytes_per_second = 0;
  };
  struct Loop;

  FaultProxy(int listen_fd, int port, std::string host, int upstream_port, int wake_read, int wake_write);
  void Run();
  void Wake();
  // Changes the control under the lock (with the new generation), wakes the loop and waits until it applied it.
  void Update(const std::function<void(Control&, uint64_t generation)>& change);

  const int listen_fd_;
  const int port_;
  const std::string upstream_host_;
  std::atomic<int> upstream_port_;
  const int wake_read_, wake_write_;
  mutable std::mutex mu_;
  Control control_;
  uint64_t generation_ = 0;  // bumped by every Blackhole/ResetAll call (under mu_)
  std::atomic<bool> stop_{false};
  std::atomic<int> open_{0};
  std::atomic<int64_t> accepted_{0};
  std::atomic<int64_t> forwarded_{0};
  std::atomic<uint64_t> applied_{0};  // the control generation the loop has applied
  std::thread thread_;
};

}  // namespace outbox::testing
