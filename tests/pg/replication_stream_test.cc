// ReplicationStream's read-and-sleep steps over a fake connection: a pipe stands for the socket, a queue for libpq's
// buffer.
#include "pg/replication_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace outbox::pg {
namespace {

using namespace std::chrono_literals;

// What the server sent waits in `wire` (the socket, readable through the pipe) until ConsumeInput moves all of it
// into `buffer` (libpq's), where ReadMessage finds it.
class FakeConnection : public StreamConnection {
 public:
  FakeConnection() { EXPECT_EQ(pipe(fds_), 0); }
  ~FakeConnection() override {
    close(fds_[0]);
    close(fds_[1]);
  }

  void Send(std::string frame) {
    wire_.push_back(std::move(frame));
    ASSERT_EQ(write(fds_[1], "x", 1), 1);
  }

  absl::StatusOr<std::optional<std::string_view>> ReadMessage() override {
    if (buffer_.empty()) return std::nullopt;
    current_ = std::move(buffer_.front());
    buffer_.pop_front();
    return std::string_view(current_);
  }
  absl::Status ConsumeInput() override {
    ++consume_calls;
    char drain[64];
    while (!wire_.empty()) {
      buffer_.push_back(std::move(wire_.front()));
      wire_.pop_front();
      EXPECT_EQ(read(fds_[0], drain, 1), 1);
    }
    return absl::OkStatus();
  }
  absl::Status SendStatus(const StandbyStatus&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> Flush() override { return true; }
  absl::Status EndCopy(int) override { return absl::OkStatus(); }
  int socket() const override { return fds_[0]; }

  int consume_calls = 0;  // the reads of the socket (libpq's PQconsumeInput)

 private:
  int fds_[2] = {-1, -1};
  std::deque<std::string> wire_, buffer_;
  std::string current_;
};

// Counts the frames it gets and stops the read after `stop_after` of them (the delivery core's pause).
class CountingHandler : public FrameHandler {
 public:
  explicit CountingHandler(int stop_after) : stop_after_(stop_after) {}
  absl::Status OnFrame(const ServerFrame& frame) override {
    wal_ends.push_back(std::get<Keepalive>(frame).wal_end);
    return absl::OkStatus();
  }
  ReadControl AfterFrame() const override {
    return static_cast<int>(wal_ends.size()) == stop_after_ ? ReadControl::kStop : ReadControl::kGoOn;
  }
  std::vector<Lsn> wal_ends;

 private:
  int stop_after_;
};

std::string Frame(uint64_t lsn) { return EncodeKeepalive(Keepalive{Lsn(lsn), 0, false}); }

// A second descriptor that becomes readable after `after` (the loop's other wake-up, e.g. a delivery report).
class LateWakeup {
 public:
  explicit LateWakeup(std::chrono::milliseconds after) {
    EXPECT_EQ(pipe(fds_), 0);
    thread_ = std::thread([this, after] {
      std::unique_lock lock(mu_);
      if (!done_cv_.wait_for(lock, after, [this] { return done_; })) {
        EXPECT_EQ(write(fds_[1], "x", 1), 1);
      }
    });
  }
  ~LateWakeup() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
    close(fds_[0]);
    close(fds_[1]);
  }
  int fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// A stream whose socket brings two frames in one read.
class ReplicationStreamTest : public ::testing::Test {
 protected:
  // One read brings both frames into the buffer; the handler pauses after the first.
  void ReadTwoFramesAndPauseAfterTheFirst() {
    conn.Send(Frame(1));
    conn.Send(Frame(2));
    ASSERT_TRUE(stream.Wait(10'000, /*read=*/true, -1).ok());  // the socket is readable: both frames are read in
    auto more = stream.Receive(handler, 64);
    ASSERT_TRUE(more.ok());
    EXPECT_FALSE(*more);
    ASSERT_EQ(handler.wal_ends.size(), 1u);
  }

  FakeConnection conn;
  ReplicationStream stream{&conn};
  CountingHandler handler{/*stop_after=*/1};
};

// The frames one read brought, behind a pause that ends before the loop sleeps: they are in the connection's buffer,
// which never makes the socket readable. Wait must not sleep on them (it slept until the next delivery report or
// status interval, and a transaction's Commit waited with them: a clean stop then confirmed short of it).
TEST_F(ReplicationStreamTest, FramesLeftInTheBufferByAPauseAreReadWithoutSleeping) {
  ASSERT_NO_FATAL_FAILURE(ReadTwoFramesAndPauseAfterTheFirst());

  // The pause ended: the loop waits with read=true. The other descriptor wakes only after 5 s; Wait returns before,
  // so it reports that the other descriptor was not what woke it.
  LateWakeup late(5s);
  auto woke = stream.Wait(10'000, /*read=*/true, late.fd());
  ASSERT_TRUE(woke.ok());
  EXPECT_FALSE(*woke) << "Wait slept although a frame was left in the connection's buffer";
  auto more = stream.Receive(handler, 64);
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(handler.wal_ends, (std::vector<Lsn>{Lsn(1), Lsn(2)}));
}

// While paused (read=false) a buffered frame does not cut the sleep short (the loop would spin), and once Receive
// found the buffer dry, Wait sleeps again until something wakes it.
TEST_F(ReplicationStreamTest, APausedOrDrainedStreamSleepsUntilWoken) {
  ASSERT_NO_FATAL_FAILURE(ReadTwoFramesAndPauseAfterTheFirst());
  {
    LateWakeup late(200ms);
    auto woke = stream.Wait(10'000, /*read=*/false, late.fd());
    ASSERT_TRUE(woke.ok());
    EXPECT_TRUE(*woke) << "a paused stream returned before its wake-up";
  }
  CountingHandler rest(/*stop_after=*/-1);
  auto more = stream.Receive(rest, 64);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_EQ(rest.wal_ends, std::vector<Lsn>{Lsn(2)});
  LateWakeup late(200ms);
  auto woke = stream.Wait(10'000, /*read=*/true, late.fd());
  ASSERT_TRUE(woke.ok());
  EXPECT_TRUE(*woke) << "a drained stream returned before its wake-up";
}

// A wait on top of frames a stopped round left in libpq's buffer does not read the socket: libpq reads on, one recv()
// after another, while more than 32 kB wait unread in its buffer, and spun in recv() for each message the server
// wrote (27 recv() a wait in a drain at 1 event per transaction). The next Receive reads the socket once the buffer
// runs dry, and loses nothing.
TEST_F(ReplicationStreamTest, AWaitOnFramesLeftInTheBufferDoesNotReadTheSocket) {
  ASSERT_NO_FATAL_FAILURE(ReadTwoFramesAndPauseAfterTheFirst());
  const int reads = conn.consume_calls;
  conn.Send(Frame(3));  // the socket is readable too
  auto woke = stream.Wait(10'000, /*read=*/true, -1);
  ASSERT_TRUE(woke.ok());
  EXPECT_EQ(conn.consume_calls, reads) << "Wait read the socket although frames were left in the connection's buffer";
  CountingHandler rest(/*stop_after=*/-1);
  auto more = stream.Receive(rest, 64);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_EQ(rest.wal_ends, (std::vector<Lsn>{Lsn(2), Lsn(3)}));
}

// The relay judges a backlog by the changes a round read: keepalives are frames, but no changes.
TEST(ReplicationStream, CountsFramesAndOfThemTheChanges) {
  class AnyFrame : public FrameHandler {
   public:
    absl::Status OnFrame(const ServerFrame&) override { return absl::OkStatus(); }
    ReadControl AfterFrame() const override { return ReadControl::kGoOn; }
  } handler;
  FakeConnection conn;
  ReplicationStream stream(&conn);
  conn.Send(Frame(1));
  conn.Send(EncodeXLogData(Lsn(2), Lsn(2), 0, "B"));
  conn.Send(Frame(3));
  ASSERT_TRUE(stream.Receive(handler, 64).ok());
  EXPECT_EQ(stream.frames_received(), 3);
  EXPECT_EQ(stream.changes_received(), 1);
  conn.Send(Frame(4));
  ASSERT_TRUE(stream.Receive(handler, 64).ok());
  EXPECT_EQ(stream.frames_received(), 1);
  EXPECT_EQ(stream.changes_received(), 0) << "a round counts its own changes only";
}

}  // namespace
}  // namespace outbox::pg
