// StreamConnection: what a streaming session needs of its connection once START_REPLICATION succeeded (libpq's
// CopyBoth half). ReplicationConnection is the real one; tests give ReplicationStream a fake.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pg/frames.h"

namespace outbox::pg {

class StreamConnection {
 public:
  virtual ~StreamConnection() = default;
  // Non-blocking read of one CopyData message. Returns nullopt when nothing complete is buffered (wait on
  // socket() then call ConsumeInput()). The returned view is valid until the next ReadMessage call.
  virtual absl::StatusOr<std::optional<std::string_view>> ReadMessage() = 0;
  // Reads what the socket has into the connection's buffer.
  virtual absl::Status ConsumeInput() = 0;
  virtual absl::Status SendStatus(const StandbyStatus& status) = 0;
  // Flushes the output buffer; returns true when everything was sent.
  virtual absl::StatusOr<bool> Flush() = 0;
  // Ends COPY cleanly (drain, final result).
  virtual absl::Status EndCopy(int timeout_ms) = 0;
  virtual int socket() const = 0;
};

}  // namespace outbox::pg
