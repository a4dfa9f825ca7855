// StreamBuffers: order, subtransaction aborts, spilling past the memory bound, cleanup of spill files.
#include "delivery/stream_buffer.h"

#include <sys/resource.h>

#include <csignal>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace outbox::delivery {
namespace {

class StreamBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stream-buffer-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static BufferedEvent Event(uint32_t subxid, const std::string& id, size_t pad = 10) {
    BufferedEvent e;
    e.subxid = subxid;
    e.topic = "t";
    e.event_id = id;
    e.key = "k";
    e.value = std::string(pad, 'x');
    e.headers = {{"id", id}, {"extra", std::nullopt}};
    return e;
  }

  static std::vector<std::string> Drain(StreamBuffers& b, uint32_t xid) {
    std::vector<std::string> ids;
    auto replay = b.TakeForReplay(xid);
    EXPECT_TRUE(replay.ok());
    while (true) {
      auto next = (*replay)->Next();
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok() || !next->has_value()) break;
      ids.push_back((*next)->event_id);
    }
    return ids;
  }

  size_t FilesInDir() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }

  std::string dir_;
};

TEST_F(StreamBuffersTest, ReplaysInOrderAndLeavesAbortedSubtransactionsOut) {
  StreamBuffers b(1 << 20, dir_);
  ASSERT_TRUE(b.Add(100, Event(100, "a")).ok());
  ASSERT_TRUE(b.Add(100, Event(101, "b")).ok());
  ASSERT_TRUE(b.Add(200, Event(200, "other")).ok());
  ASSERT_TRUE(b.Add(100, Event(100, "c")).ok());
  b.Abort(100, 101);
  EXPECT_EQ(Drain(b, 100), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Drain(b, 200), (std::vector<std::string>{"other"}));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.memory_bytes(), 0u);
}

TEST_F(StreamBuffersTest, TopLevelAbortDropsEverything) {
  StreamBuffers b(1 << 20, dir_);
  ASSERT_TRUE(b.Add(7, Event(7, "a")).ok());
  b.Abort(7, 7);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(Drain(b, 7).empty());
}

TEST_F(StreamBuffersTest, SpillsPastTheBoundAndReplaysFileThenMemory) {
  StreamBuffers b(4096, dir_);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(b.Add(9, Event(i % 2 ? 10 : 9, std::to_string(i), 200)).ok());
  EXPECT_EQ(b.spills(), 1u);
  EXPECT_EQ(FilesInDir(), 1u);
  EXPECT_LE(b.memory_bytes(), 4096u);
  b.Abort(9, 10);  // spilled events of subxact 10 are skipped at replay
  auto ids = Drain(b, 9);
  ASSERT_EQ(ids.size(), 50u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], std::to_string(2 * i));
  EXPECT_EQ(FilesInDir(), 0u) << "the spill file is removed after the replay";
}

TEST_F(StreamBuffersTest, ClearRemovesSpillFiles) {
  StreamBuffers b(100, dir_);
  ASSERT_TRUE(b.Add(1, Event(1, "a", 500)).ok());
  ASSERT_TRUE(b.Add(2, Event(2, "b", 500)).ok());
  EXPECT_EQ(FilesInDir(), 2u);
  b.Clear();
  EXPECT_EQ(FilesInDir(), 0u);
  EXPECT_TRUE(b.empty());
}

TEST_F(StreamBuffersTest, SpilledEventsRoundTripEveryField) {
  StreamBuffers b(1, dir_);
  BufferedEvent e = Event(5, "id-1");
  e.key.reset();
  e.value.reset();
  e.timestamp_ms = -42;
  e.partition = 7;
  e.error = true;
  e.error_message = "bad";
  ASSERT_TRUE(b.Add(5, e).ok());
  auto replay = b.TakeForReplay(5);
  ASSERT_TRUE(replay.ok());
  auto got = (*replay)->Next();
  ASSERT_TRUE(got.ok() && got->has_value());
  const BufferedEvent& g = **got;
  EXPECT_FALSE(g.key.has_value());
  EXPECT_FALSE(g.value.has_value());
  EXPECT_EQ(g.timestamp_ms, -42);
  EXPECT_EQ(g.partition, 7);
  EXPECT_TRUE(g.error);
  EXPECT_EQ(g.error_message, "bad");
  EXPECT_EQ(g.headers, e.headers);
  EXPECT_EQ(g.subxid, 5u);
}

// Review defect 8: a streamed UPDATE under on_update: error halts at its Stream Commit (it was dead-lettered):
// the halt survives a spill.
TEST_F(StreamBuffersTest, HaltingErrorSurvivesASpill) {
  StreamBuffers b(1, dir_);
  BufferedEvent e = Event(5, "");
  e.error = true;
  e.halt = true;
  e.error_message = "an UPDATE";
  ASSERT_TRUE(b.Add(5, e).ok());
  ASSERT_TRUE(b.Add(5, Event(5, "plain-error")).ok());
  EXPECT_EQ(b.spilled_transactions(), 1u);
  auto replay = b.TakeForReplay(5);
  ASSERT_TRUE(replay.ok());
  auto first = (*replay)->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_TRUE((*first)->error);
  EXPECT_TRUE((*first)->halt);
  auto second = (*replay)->Next();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_FALSE((*second)->halt);
}

// Review defect 8: spill files of a relay killed with -9 were left behind. At construction the files of processes
// that are gone are removed; a live process's files (another pipeline, another relay) and other files stay.
TEST_F(StreamBuffersTest, RemovesOnlyTheSpillFilesOfProcessesThatAreGone) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // its pid is now free (and not reused this soon)
  const auto touch = [&](const std::string& name) {
    std::FILE* f = std::fopen((dir_ + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  };
  const std::string dead = "outbox-relay-" + std::to_string(child) + "-7-1.spill";
  const std::string live = "outbox-relay-" + std::to_string(::getpid()) + "-7-1.spill";
  touch(dead);
  touch(live);
  touch("outbox-relay-notapid-7-1.spill");
  touch("someone-elses.spill");
  StreamBuffers b(1, dir_);
  EXPECT_EQ(b.stale_files_removed(), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/" + dead));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/" + live));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/outbox-relay-notapid-7-1.spill"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/someone-elses.spill"));
}

// Review defect 8: spill I/O errors were retried forever. Each failure is counted (the relay gives up after a
// few in a row) and names the file and the error; a success resets the count.
TEST_F(StreamBuffersTest, SpillFailuresAreCountedAndNameTheFile) {
  StreamBuffers b(1, dir_ + "/gone");
  absl::Status st = b.Add(5, Event(5, "a"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(st.message().find(dir_ + "/gone/outbox-relay-"), std::string::npos) << st;
  EXPECT_NE(st.message().find("No such file or directory"), std::string::npos) << st;
  EXPECT_EQ(b.consecutive_io_failures(), 1);
  b.Clear();
  EXPECT_FALSE(b.Add(6, Event(6, "b")).ok());
  EXPECT_EQ(b.consecutive_io_failures(), 2) << "Clear (a rewind) does not reset the count";
  b.Clear();
  std::filesystem::create_directory(dir_ + "/gone");
  EXPECT_TRUE(b.Add(7, Event(7, "c")).ok());
  EXPECT_EQ(b.consecutive_io_failures(), 2) << "a spill file only begun is no success yet";
  ASSERT_TRUE(b.TakeForReplay(7).ok());
  EXPECT_EQ(b.consecutive_io_failures(), 0) << "a spill file written to its end is";
}

// A file system that fills up while a spill file grows (here: RLIMIT_FSIZE, with SIGXFSZ ignored as the relay does):
// the first writes land in stdio's buffer and succeed, a later one fails. Each such attempt counts, so the relay
// stops after a few instead of rewinding forever (found by Streaming.SpillFileSystemFull...: the count was reset by
// the buffered first write of every attempt).
TEST_F(StreamBuffersTest, AFileSystemThatFillsUpMidFileCountsEveryAttempt) {
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  StreamBuffers b(1, dir_);
  int attempts = 0;
  for (uint32_t xid = 10; xid < 13; ++xid) {
    struct rlimit small = saved;
    small.rlim_cur = 64 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    absl::Status st;
    for (int i = 0; i < 10000 && st.ok(); ++i) st = b.Add(xid, Event(xid, "e" + std::to_string(i), 200));
    setrlimit(RLIMIT_FSIZE, &saved);
    ASSERT_FALSE(st.ok()) << "a 64 KiB file size limit must fail a 2 MB spill";
    EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
    EXPECT_NE(st.message().find("File too large"), std::string::npos) << st;
    ++attempts;
    EXPECT_EQ(b.consecutive_io_failures(), attempts);
    b.Clear();  // the rewind: the partial file is removed, never replayed
    EXPECT_EQ(FilesInDir(), 0u);
  }
  signal(SIGXFSZ, old_handler);
}

}  // namespace
}  // namespace outbox::delivery
