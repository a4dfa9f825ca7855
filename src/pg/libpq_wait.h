// Waiting on libpq without its blocking calls (internal to src/pg, the only code that calls libpq): the socket is
// polled in short slices, so a deadline and a stop flag end a wait that libpq's own PQexec would sit through
// (it retries through signals, and a silent connection holds it until TCP gives up).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pg/replication_connection.h"

namespace outbox::pg {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

using WaitClock = std::chrono::steady_clock;
constexpr WaitClock::time_point kNoDeadline = WaitClock::time_point::max();

// libpq's message without its trailing newline and spaces.
std::string OneLine(std::string text);

// Waits until `fd` is ready for `events`: OK when ready, UNAVAILABLE at `deadline`, CANCELLED once `limits.stop`
// turns true. `what` starts the messages.
absl::Status WaitSocket(int fd, short events, WaitClock::time_point deadline, const WaitLimits& limits,
                        std::string_view what);

// Sends `sql` and waits for its result, at most `answer` (0: no limit) and until `limits.stop`: a COPY result
// (START_REPLICATION) at once, any other once the command is complete (the first result when there are several;
// null when there is none). UNAVAILABLE when the answer does not come in time or the connection is lost, CANCELLED
// when stopped; the connection is unusable after either. `what` (may be empty) starts the messages.
absl::StatusOr<Result> SendAndWait(pg_conn* conn, const std::string& sql, std::chrono::milliseconds answer,
                                   const WaitLimits& limits, std::string_view what);

}  // namespace outbox::pg
