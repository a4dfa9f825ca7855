// FaultProxy: see fault_proxy.h.
#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <vector>

#include "absl/strings/str_cat.h"

namespace outbox::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxQueued = 256 * 1024;  // per direction: then the proxy stops reading that side (TCP pushes back)
constexpr size_t kChunk = 16 * 1024;

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void CloseWithReset(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

int ConnectUpstream(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    SetNonBlocking(fd);
  }
  return fd;
}

// One direction of a connection: bytes read from `from`, held until their release time, written to `to`.
struct Pipe {
  struct Chunk {
    std::string data;
    Clock::time_point release;
  };
  std::deque<Chunk> queue;
  size_t queued = 0;
  bool eof = false;        // `from` ended: shut `to` down for writing once the queue is empty
  bool shut = false;
  double tokens = 0;       // the bandwidth limit's bucket
  Clock::time_point refilled = Clock::now();
};

struct Connection {
  int client = -1, upstream = -1;
  uint64_t generation = 0;  // the control generation when it was accepted
  bool blackholed = false;
  Pipe up, down;            // client -> upstream, upstream -> client
  bool dead = false;
};

}  // namespace

struct FaultProxy::Loop {
  std::list<Connection> connections;
};

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(const std::string& upstream_host, int upstream_port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrCat("fault proxy listen: ", why));
  }
  SetNonBlocking(fd);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::unique_ptr<FaultProxy> proxy(
      new FaultProxy(fd, ntohs(addr.sin_port), upstream_host, upstream_port, wake[0], wake[1]));
  proxy->thread_ = std::thread([p = proxy.get()] { p->Run(); });
  return proxy;
}

FaultProxy::FaultProxy(int listen_fd, int port, std::string host, int upstream_port, int wake_read, int wake_write)
    : listen_fd_(listen_fd),
      port_(port),
      upstream_host_(std::move(host)),
      upstream_port_(upstream_port),
      wake_read_(wake_read),
      wake_write_(wake_write) {}

FaultProxy::~FaultProxy() {
  stop_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

void FaultProxy::Wake() {
  const char c = 1;
  [[maybe_unused]] ssize_t n = write(wake_write_, &c, 1);
}

namespace {
// Waits (bounded) until the loop has applied the control generation `wanted`.
void AwaitApplied(const std::atomic<uint64_t>& applied, uint64_t wanted) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (applied.load() < wanted && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
}  // namespace

void FaultProxy::Update(const std::function<void(Control&, uint64_t generation)>& change) {
  uint64_t g;
  {
    std::lock_guard<std::mutex> lock(mu_);
    g = ++generation_;
    change(control_, g);
  }
  Wake();
  AwaitApplied(applied_, g);
}

void FaultProxy::Blackhole(bool new_ones) {
  Update([new_ones](Control& c, uint64_t g) {
    c.blackhole_generation = g;
    c.blackhole_new = new_ones;
  });
}

void FaultProxy::ResetAll() {
  Update([](Control& c, uint64_t g) { c.reset_generation = g; });
}

void FaultProxy::SetDelay(std::chrono::milliseconds delay) {
  Update([delay](Control& c, uint64_t) { c.delay = delay; });
}

void FaultProxy::SetBandwidth(int64_t bytes_per_second) {
  Update([bytes_per_second](Control& c, uint64_t) { c.bytes_per_second = bytes_per_second; });
}

void FaultProxy::Heal() {
  Update([](Control& c, uint64_t) {
    c.blackhole_generation = 0;
    c.blackhole_new = false;
    c.delay = std::chrono::milliseconds(0);
    c.bytes_per_second = 0;
  });
}

void FaultProxy::Run() {
  Loop loop;
  while (!stop_) {
    Control control;
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mu_);
      control = control_;
      generation = generation_;
    }
    const auto now = Clock::now();
    // Apply the control: resets first, then who is blackholed.
    for (Connection& c : loop.connections) {
      if (c.generation < control.reset_generation) {
        CloseWithReset(c.client);
        CloseWithReset(c.upstream);
        c.dead = true;
        continue;
      }
      c.blackholed = c.generation < control.blackhole_generation ||
                     (control.blackhole_new && c.generation >= control.blackhole_generation);
    }
    loop.connections.remove_if([](const Connection& c) { return c.dead; });
    open_ = static_cast<int>(loop.connections.size());
    applied_ = generation;

    // Move what can move: write released chunks (within the bandwidth), then poll for more.
    auto pump_out = [&](Pipe& p, int to) {
      if (control.bytes_per_second > 0) {
        const double seconds = std::chrono::duration<double>(now - p.refilled).count();
        p.tokens = std::min<double>(p.tokens + seconds * control.bytes_per_second,
                                    std::max<int64_t>(control.bytes_per_second / 10, 1));
      }
      p.refilled = now;
      while (!p.queue.empty() && p.queue.front().release <= now) {
        Pipe::Chunk& chunk = p.queue.front();
        size_t n = chunk.data.size();
        if (control.bytes_per_second > 0) n = std::min(n, static_cast<size_t>(std::max(p.tokens, 0.0)));
        if (n == 0) break;
        const ssize_t w = send(to, chunk.data.data(), n, MSG_NOSIGNAL);
        if (w < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          return false;
        }
        if (control.bytes_per_second > 0) p.tokens -= static_cast<double>(w);
        forwarded_ += w;
        p.queued -= static_cast<size_t>(w);
        chunk.data.erase(0, static_cast<size_t>(w));
        if (chunk.data.empty()) p.queue.pop_front();
      }
      if (p.eof && p.queue.empty() && !p.shut) {
        shutdown(to, SHUT_WR);
        p.shut = true;
      }
      return true;
    };
    for (Connection& c : loop.connections) {
      if (c.blackholed) continue;
      if (!pump_out(c.up, c.upstream) || !pump_out(c.down, c.client)) {
        CloseWithReset(c.client);
        CloseWithReset(c.upstream);
        c.dead = true;
      }
      if (c.up.shut && c.down.shut) {
        close(c.client);
        close(c.upstream);
        c.dead = true;
      }
    }
    loop.connections.remove_if([](const Connection& c) { return c.dead; });

    std::vector<pollfd> fds;
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    int timeout_ms = 200;
    std::vector<Connection*> polled;
    for (Connection& c : loop.connections) {
      if (c.blackholed) continue;
      auto events = [&](const Pipe& in, const Pipe& out) {
        short e = 0;
        if (!in.eof && in.queued < kMaxQueued) e |= POLLIN;
        if (!out.queue.empty() && out.queue.front().release <= now) e |= POLLOUT;
        return e;
      };
      fds.push_back({c.client, events(c.up, c.down), 0});
      fds.push_back({c.upstream, events(c.down, c.up), 0});
      polled.push_back(&c);
      for (const Pipe* p : {&c.up, &c.down}) {
        if (p->queue.empty()) continue;
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(p->queue.front().release - now);
        timeout_ms = std::clamp<int>(static_cast<int>(wait.count()) + 1, 1, timeout_ms);
        if (control.bytes_per_second > 0) timeout_ms = std::min(timeout_ms, 10);
      }
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      char buf[64];
      while (read(wake_read_, buf, sizeof buf) > 0) {
      }
    }
    if (fds[1].revents & POLLIN) {
      while (true) {
        const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (client < 0) break;
        const int upstream = upstream_port_ > 0 ? ConnectUpstream(upstream_host_, upstream_port_) : -1;
        if (upstream < 0) {
          CloseWithReset(client);
          continue;
        }
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        Connection c;
        c.client = client;
        c.upstream = upstream;
        c.generation = generation;
        c.blackholed = control.blackhole_new && generation >= control.blackhole_generation;
        loop.connections.push_back(std::move(c));
        ++accepted_;
      }
    }
    const auto read_now = Clock::now();
    for (size_t i = 0; i < polled.size(); ++i) {
      Connection& c = *polled[i];
      const pollfd& cf = fds[2 + 2 * i];
      const pollfd& uf = fds[3 + 2 * i];
      auto pump_in = [&](const pollfd& pf, Pipe& p) {
        if (!(pf.revents & (POLLIN | POLLHUP | POLLERR))) return true;
        if (p.eof || p.queued >= kMaxQueued) return !(pf.revents & POLLERR);
        char buf[kChunk];
        const ssize_t n = recv(pf.fd, buf, sizeof buf, 0);
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
        if (n == 0) {
          p.eof = true;
          return true;
        }
        p.queue.push_back({std::string(buf, static_cast<size_t>(n)), read_now + control.delay});
        p.queued += static_cast<size_t>(n);
        return true;
      };
      if (!pump_in(cf, c.up) || !pump_in(uf, c.down)) {
        // A reset or error on one side: pass it on as a reset to the other.
        CloseWithReset(c.client);
        CloseWithReset(c.upstream);
        c.dead = true;
      }
    }
    loop.connections.remove_if([](const Connection& c) { return c.dead; });
  }
  for (Connection& c : loop.connections) {
    close(c.client);
    close(c.upstream);
  }
  open_ = 0;
}

}  // namespace outbox::testing
