// ReplicationStream: one streaming session over a StreamConnection (a ReplicationConnection) after
// START_REPLICATION, as small steps in the shape of PostgreSQL's receivelog.c: receive what is buffered (frames to a
// FrameHandler), send feedback (a standby status update), sleep until the socket, a second descriptor or a timeout
// wakes it, end the copy. It decides nothing about positions: the handler does, and says what to send.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pg/frames.h"
#include "pg/stream_connection.h"

namespace outbox::pg {

class ReplicationStream {
 public:
  // `conn` is streaming (StartReplication succeeded) and outlives this.
  explicit ReplicationStream(StreamConnection* conn) : conn_(conn) {}

  // Hands up to `max_frames` complete frames to `handler`, asking AfterFrame after each. When libpq's buffer runs
  // dry it reads the socket once more without blocking (under load the server has usually sent more). Returns true
  // when work is left that should not wait for the socket (frames still buffered, or the handler said kStopBusy).
  absl::StatusOr<bool> Receive(FrameHandler& handler, int max_frames);
  // How many frames the last Receive handed over, and how many of them were XLogData (the rest are keepalives).
  int frames_received() const { return frames_received_; }
  int changes_received() const { return changes_received_; }
  absl::Status SendFeedback(const StandbyStatus& status) { return conn_->SendStatus(status); }
  // Flushes pending output, then waits up to `timeout_ms` for the socket (readable when `read`, writable while
  // output is pending) or `extra_fd` (readable). What the socket has is read into libpq's buffer. Returns whether
  // `extra_fd` was readable. When `read` and the last Receive stopped with frames possibly left in libpq's buffer,
  // it does not sleep: the socket would not wake it for them.
  absl::StatusOr<bool> Wait(int timeout_ms, bool read, int extra_fd);
  absl::Status End(int timeout_ms) { return conn_->EndCopy(timeout_ms); }

 private:
  StreamConnection* conn_;
  bool buffered_ = false;  // the last Receive stopped before libpq's buffer ran dry
  int frames_received_ = 0;
  int changes_received_ = 0;
};

}  // namespace outbox::pg
