// Polling waits on libpq connections (see libpq_wait.h).
#include "pg/libpq_wait.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace outbox::pg {
namespace {

std::string Prefixed(std::string_view what, std::string_view text) {
  return what.empty() ? std::string(text) : Cat(what, ": ", text);
}

}  // namespace

std::string OneLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

absl::Status WaitSocket(int fd, short events, WaitClock::time_point deadline, const WaitLimits& limits,
                        std::string_view what) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  while (true) {
    if (limits.stop != nullptr && limits.stop->load()) {
      return absl::CancelledError(Prefixed(what, "stopped while waiting for the server"));
    }
    auto slice = kSlice;
    if (deadline != kNoDeadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - WaitClock::now());
      if (left.count() <= 0) return absl::UnavailableError(Prefixed(what, "no answer from the server in time"));
      slice = std::min(slice, left);
    }
    pollfd pfd{fd, events, 0};
    const int n = ::poll(&pfd, 1, static_cast<int>(slice.count()));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) return absl::UnavailableError(Prefixed(what, Cat("poll: ", std::strerror(errno))));
  }
}

absl::StatusOr<Result> SendAndWait(pg_conn* conn, const std::string& sql, std::chrono::milliseconds answer,
                                   const WaitLimits& limits, std::string_view what) {
  if (PQsendQuery(conn, sql.c_str()) == 0) {
    return absl::UnavailableError(Prefixed(what, Cat("could not send the command: ", OneLine(PQerrorMessage(conn)))));
  }
  const WaitClock::time_point deadline = answer.count() <= 0 ? kNoDeadline : WaitClock::now() + answer;
  Result first;
  while (true) {
    while (PQisBusy(conn) != 0) {
      if (absl::Status st = WaitSocket(PQsocket(conn), POLLIN, deadline, limits, what); !st.ok()) {
        if (absl::IsUnavailable(st) && WaitClock::now() >= deadline) {
          return absl::UnavailableError(Prefixed(what, Cat("no answer from the server in ", answer.count(), " ms")));
        }
        return st;
      }
      if (PQconsumeInput(conn) == 0) {
        return absl::UnavailableError(Prefixed(what, Cat("connection lost: ", OneLine(PQerrorMessage(conn)))));
      }
    }
    Result r(PQgetResult(conn));
    if (!r) break;
    const ExecStatusType st = PQresultStatus(r.get());
    if (st == PGRES_COPY_BOTH || st == PGRES_COPY_OUT || st == PGRES_COPY_IN) return r;
    if (!first) first = std::move(r);
  }
  return first;
}

}  // namespace outbox::pg
