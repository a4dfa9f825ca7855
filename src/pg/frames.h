// CopyBoth frames of the streaming replication protocol (PROTOCOL.md §2): XLogData 'w' and primary keepalive 'k'
// from the server, standby status update 'r' from the client. Pure: bytes in, typed values out, and the encoders
// the tests use to build byte streams.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/lsn.h"

namespace outbox::pg {

// 'w': one pgoutput message. In logical mode data_start/wal_end are the message's write location, never a WAL
// range and never monotonic: do not ack from them.
struct XLogData {
  Lsn data_start;
  Lsn wal_end;
  int64_t send_time = 0;     // PostgreSQL epoch microseconds
  std::string_view payload;  // the pgoutput message; a view into the frame's buffer
};

// 'k': walEnd is the walsender's sentPtr.
struct Keepalive {
  Lsn wal_end;
  int64_t send_time = 0;  // PostgreSQL epoch microseconds
  bool reply_requested = false;
};

// 'r': the client's position report. Only a non-zero flush moves the slot.
struct StandbyStatus {
  Lsn write;
  Lsn flush;
  Lsn apply;
  int64_t client_time = 0;  // PostgreSQL epoch microseconds
  bool reply_requested = false;
};

using ServerFrame = std::variant<XLogData, Keepalive>;

// What the replication stream's consumer says after each frame (ReplicationStream::Receive).
enum class ReadControl {
  kGoOn,      // read the next buffered frame
  kStop,      // stop reading in this round (backpressure, or the stream ends)
  kStopBusy,  // stop reading, with work that must not wait for the socket (no sleep before the next round)
};

// The consumer of the frames a replication stream receives (the delivery core).
class FrameHandler {
 public:
  virtual ~FrameHandler() = default;
  virtual absl::Status OnFrame(const ServerFrame& frame) = 0;
  virtual ReadControl AfterFrame() const = 0;
};

// Decodes one CopyData payload sent by the server. Errors (DATA_LOSS) name the type byte or the size.
absl::StatusOr<ServerFrame> DecodeServerFrame(std::string_view bytes);

std::string EncodeStandbyStatus(const StandbyStatus& status);  // 34 bytes
absl::StatusOr<StandbyStatus> DecodeStandbyStatus(std::string_view bytes);

// Test encoders.
std::string EncodeXLogData(Lsn data_start, Lsn wal_end, int64_t send_time, std::string_view payload);
std::string EncodeKeepalive(const Keepalive& keepalive);  // 18 bytes

}  // namespace outbox::pg
