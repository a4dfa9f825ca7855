// ReplicationStream: receive, feedback and sleep of one streaming session.
#include "pg/replication_stream.h"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <variant>

#include "common/strings.h"

namespace outbox::pg {

absl::StatusOr<bool> ReplicationStream::Receive(FrameHandler& handler, int max_frames) {
  bool read_again = true;
  frames_received_ = 0;
  changes_received_ = 0;
  for (int i = 0; i < max_frames; ++i) {
    auto bytes = conn_->ReadMessage();
    if (!bytes.ok()) return bytes.status();
    if (!bytes->has_value()) {
      if (!read_again) {
        buffered_ = false;
        return false;
      }
      read_again = false;
      if (absl::Status st = conn_->ConsumeInput(); !st.ok()) return st;
      continue;
    }
    auto frame = DecodeServerFrame(**bytes);
    if (!frame.ok()) return frame.status();
    ++frames_received_;
    if (std::holds_alternative<XLogData>(*frame)) ++changes_received_;
    if (absl::Status st = handler.OnFrame(*frame); !st.ok()) return st;
    switch (handler.AfterFrame()) {
      case ReadControl::kGoOn:
        break;
      case ReadControl::kStop:
        buffered_ = true;  // what the last read brought after this frame stays in libpq's buffer
        return false;
      case ReadControl::kStopBusy:
        buffered_ = true;
        return true;
    }
  }
  buffered_ = true;
  return true;  // the batch is full: more may be buffered
}

absl::StatusOr<bool> ReplicationStream::Wait(int timeout_ms, bool read, int extra_fd) {
  auto flushed = conn_->Flush();
  if (!flushed.ok()) return flushed.status();
  // Frames already in libpq's buffer never make the socket readable: a stream that may read again and may have them
  // does not sleep (a pause that ended inside the round, e.g. a held record produced once its topic's limits came,
  // left a transaction's Commit unread until the next acknowledgement or status interval).
  // Such a stream does not read the socket either: libpq reads on, one recv() after another, while more than 32 kB
  // wait unread in its buffer, so a read on top of a stopped round's frames spun in recv() for each message the
  // server wrote (27 recv() a wait in a drain at 1 event per transaction). The next Receive reads the socket once
  // the buffer runs dry.
  const bool read_socket = read && !buffered_;
  if (read && buffered_) timeout_ms = 0;
  pollfd fds[2] = {{conn_->socket(), static_cast<short>((read_socket ? POLLIN : 0) | (*flushed ? 0 : POLLOUT)), 0},
                   {extra_fd, POLLIN, 0}};
  const int n = ::poll(fds, extra_fd >= 0 ? 2 : 1, timeout_ms);
  if (n < 0 && errno != EINTR) return absl::InternalError(Cat("could not wait for the server: ", std::strerror(errno)));
  if (n > 0 && read_socket && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) {
    if (absl::Status st = conn_->ConsumeInput(); !st.ok()) return st;
  }
  return n > 0 && extra_fd >= 0 && (fds[1].revents & POLLIN) != 0;
}

}  // namespace outbox::pg
