// Small helpers shared by the tests: unique names, a port nothing answers on, waiting for a condition with a deadline, files.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace outbox::testing {

// The source tree (the compile definition OUTBOX_SOURCE_DIR), e.g. for scripts/.
std::string SourceDir();

// A name unique in this process and, with very high probability, across concurrent processes: the prefix
// lower-cased with characters outside [a-z0-9_] replaced by '_', then `_<pid>_<counter>_<4 random hex>`.
// At most 63 characters, so valid as a PostgreSQL slot, database or publication name and as a Kafka topic.
std::string UniqueName(std::string_view prefix = "t");

// A TCP port on 127.0.0.1 where nothing listens, for tests of an unreachable server: a connection to it is refused
// for the rest of this process. A socket of this process holds it, bound (by the kernel's choice) and never
// listening, so no other server can take it meanwhile. There is no helper that hands out a port for a server to
// bind later: between the pick and the bind another process's server could take it. Servers pick their own
// (http.listen with port 0, scripts/pg-temp.sh and kafka-temp.sh choose and retry on a port taken) and the test
// reads back the port they got.
int ClosedPort();

// Calls `condition` every `interval` until it returns true (then returns true) or `deadline` has passed. On
// timeout it records a gtest failure naming `what` and returns false, so tests write
// `ASSERT_TRUE(WaitFor([&] { ... }, 30s, "the topic has 3 records"));`.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds deadline, std::string_view what,
             std::chrono::milliseconds interval = std::chrono::milliseconds(5));

// WaitFor without the failure: for conditions that are expected to stay false, or to branch on.
bool PollUntil(const std::function<bool()>& condition, std::chrono::milliseconds deadline,
               std::chrono::milliseconds interval = std::chrono::milliseconds(5));

// The directory for throwaway files: $OUTBOX_TEST_TMPDIR, else $TMPDIR, else /tmp.
std::string TempRoot();

// A fresh directory (mode 0700) named <TempRoot()>/<prefix>XXXXXX.
absl::StatusOr<std::string> MakeTempDir(std::string_view prefix);

// Removes a file or directory tree; errors are ignored.
void RemoveTree(const std::string& path);

absl::StatusOr<std::string> ReadFile(const std::string& path);

// The last `max_bytes` of a file ("" when it cannot be read): for diagnostics in failure messages.
std::string TailOfFile(const std::string& path, size_t max_bytes = 4000);

}  // namespace outbox::testing
