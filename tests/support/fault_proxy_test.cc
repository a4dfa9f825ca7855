// FaultProxy against an in-process echo server: each fault does what it says, and healing undoes it.
#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Echoes every connection's bytes back, one thread per connection.
class EchoServer {
 public:
  EchoServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        workers_.emplace_back([c] {
          char buf[65536];
          ssize_t n;
          while ((n = recv(c, buf, sizeof buf, 0)) > 0) {
            for (ssize_t off = 0; off < n;) {
              const ssize_t w = send(c, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
              if (w <= 0) break;
              off += w;
            }
          }
          close(c);
        });
      }
    });
  }
  ~EchoServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (std::thread& t : workers_) t.join();
  }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
  std::thread thread_;
  std::vector<std::thread> workers_;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends `text` and reads `want` bytes (default: as many as sent) within `deadline`: what came back ("" on timeout),
// and errno of a failed recv.
std::string RoundTrip(int fd, const std::string& text, std::chrono::milliseconds deadline, int* error = nullptr,
                      size_t want = std::string::npos) {
  if (want == std::string::npos) want = text.size();
  if (send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) {
    if (error) *error = errno;
    return "";
  }
  std::string got;
  const auto until = Clock::now() + deadline;
  while (got.size() < want && Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 1))) <= 0) continue;
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      if (error) *error = n == 0 ? 0 : errno;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

TEST(FaultProxy, ForwardsBothWays) {
  EchoServer echo;
  auto proxy = FaultProxy::Start("127.0.0.1", echo.port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const int fd = Connect((*proxy)->port());
  EXPECT_EQ(RoundTrip(fd, "hello", 5s), "hello");
  const std::string big(1 << 20, 'x');
  EXPECT_EQ(RoundTrip(fd, big, 20s).size(), big.size());
  EXPECT_EQ((*proxy)->accepted(), 1);
  close(fd);
}

TEST(FaultProxy, BlackholeStopsOpenConnectionsWithoutClosingThemAndHealResumesThem) {
  EchoServer echo;
  auto proxy = FaultProxy::Start("127.0.0.1", echo.port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const int old_fd = Connect((*proxy)->port());
  ASSERT_EQ(RoundTrip(old_fd, "a", 5s), "a");
  (*proxy)->Blackhole();
  int error = -1;
  EXPECT_EQ(RoundTrip(old_fd, "b", 500ms, &error), "") << "no byte moves";
  EXPECT_EQ(error, -1) << "and the connection is not closed or reset";
  EXPECT_EQ((*proxy)->open_connections(), 1);
  // A new connection forwards (a vanished host's replacement, a healed route).
  const int new_fd = Connect((*proxy)->port());
  EXPECT_EQ(RoundTrip(new_fd, "c", 5s), "c");
  // With new_ones, new connections are blackholed too.
  (*proxy)->Blackhole(/*new_ones=*/true);
  const int third = Connect((*proxy)->port());
  EXPECT_EQ(RoundTrip(third, "d", 500ms), "");
  (*proxy)->Heal();
  EXPECT_EQ(RoundTrip(old_fd, "e", 5s, nullptr, 2), "be") << "held bytes move again, in order";
  EXPECT_EQ(RoundTrip(third, "f", 5s, nullptr, 2), "df");
  for (int fd : {old_fd, new_fd, third}) close(fd);
}

TEST(FaultProxy, ResetAllResetsBothEndsAndNewConnectionsForward) {
  EchoServer echo;
  auto proxy = FaultProxy::Start("127.0.0.1", echo.port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const int fd = Connect((*proxy)->port());
  ASSERT_EQ(RoundTrip(fd, "a", 5s), "a");
  (*proxy)->ResetAll();
  int error = -1;
  RoundTrip(fd, "b", 5s, &error);
  EXPECT_TRUE(error == ECONNRESET || error == EPIPE) << "errno " << error;
  EXPECT_TRUE(WaitFor([&] { return (*proxy)->open_connections() == 0; }, 5s, "the reset connection is gone"));
  const int again = Connect((*proxy)->port());
  EXPECT_EQ(RoundTrip(again, "c", 5s), "c");
  close(fd);
  close(again);
}

TEST(FaultProxy, DelayAndBandwidthSlowTheLinkDown) {
  EchoServer echo;
  auto proxy = FaultProxy::Start("127.0.0.1", echo.port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const int fd = Connect((*proxy)->port());
  (*proxy)->SetDelay(150ms);
  auto start = Clock::now();
  EXPECT_EQ(RoundTrip(fd, "a", 5s), "a");
  EXPECT_GE(Clock::now() - start, 300ms) << "150 ms each way";
  (*proxy)->SetDelay(0ms);
  (*proxy)->SetBandwidth(100 * 1024);
  const std::string payload(200 * 1024, 'y');
  start = Clock::now();
  EXPECT_EQ(RoundTrip(fd, payload, 30s).size(), payload.size());
  EXPECT_GE(Clock::now() - start, 1500ms) << "200 KiB at 100 KiB/s";
  (*proxy)->Heal();
  close(fd);
}

}  // namespace
}  // namespace outbox::testing
