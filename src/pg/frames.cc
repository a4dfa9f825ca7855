// The CopyBoth frame codec (PROTOCOL.md §2): a read and a write function per frame over ByteReader/ByteWriter.
#include "pg/frames.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pg/byte_reader.h"

namespace outbox::pg {
namespace {

constexpr char kXLogDataType = 'w';
constexpr char kKeepaliveType = 'k';
constexpr char kStandbyStatusType = 'r';
constexpr size_t kXLogDataHeaderSize = 25;  // 'w', dataStart, walEnd, sendTime

// replyRequested is a boolean byte; anything but 0 or 1 means the frame is not laid out as we think.
bool ReadReplyRequested(ByteReader& r) {
  const uint8_t byte = r.ReadUint8("reply_requested");
  if (r.ok() && byte > 1) r.Fail(absl::StrCat("reply_requested is ", HexByte(byte), ", not 0 or 1"));
  return byte == 1;
}

// 'w': the header, then everything left is the one pgoutput message.
XLogData ReadXLogData(ByteReader& r) {
  XLogData frame;
  frame.data_start = r.ReadLsn("data_start");
  frame.wal_end = r.ReadLsn("wal_end");
  frame.send_time = r.ReadInt64("send_time");
  frame.payload = r.ReadBytes(r.remaining(), "payload");
  return frame;
}

// 'k'.
Keepalive ReadKeepalive(ByteReader& r) {
  Keepalive frame;
  frame.wal_end = r.ReadLsn("wal_end");
  frame.send_time = r.ReadInt64("send_time");
  frame.reply_requested = ReadReplyRequested(r);
  return frame;
}

// 'r'.
StandbyStatus ReadStandbyStatus(ByteReader& r) {
  StandbyStatus status;
  status.write = r.ReadLsn("write");
  status.flush = r.ReadLsn("flush");
  status.apply = r.ReadLsn("apply");
  status.client_time = r.ReadInt64("client_time");
  status.reply_requested = ReadReplyRequested(r);
  return status;
}

}  // namespace

absl::StatusOr<ServerFrame> DecodeServerFrame(std::string_view bytes) {
  if (bytes.empty()) return absl::DataLossError("copydata: empty frame");
  const std::string_view body = bytes.substr(1);
  switch (bytes[0]) {
    case kXLogDataType: {
      if (bytes.size() < kXLogDataHeaderSize) {
        return absl::DataLossError(absl::StrCat("xlogdata: frame of ", bytes.size(),
                                                " bytes is shorter than its ", kXLogDataHeaderSize, "-byte header"));
      }
      ByteReader r(body, "xlogdata");
      XLogData frame = ReadXLogData(r);
      if (absl::Status status = r.Finish(); !status.ok()) return status;
      return frame;
    }
    case kKeepaliveType: {
      ByteReader r(body, "keepalive");
      Keepalive frame = ReadKeepalive(r);
      if (absl::Status status = r.Finish(); !status.ok()) return status;
      return frame;
    }
    default:
      return absl::DataLossError(
          absl::StrCat("copydata: unknown message type ", HexByte(static_cast<uint8_t>(bytes[0]))));
  }
}

absl::StatusOr<StandbyStatus> DecodeStandbyStatus(std::string_view bytes) {
  if (bytes.empty()) return absl::DataLossError("standby status: empty frame");
  if (bytes[0] != kStandbyStatusType) {
    return absl::DataLossError(absl::StrCat("standby status: expected type 'r' but got ",
                                            HexByte(static_cast<uint8_t>(bytes[0]))));
  }
  ByteReader r(bytes.substr(1), "standby status");
  StandbyStatus status = ReadStandbyStatus(r);
  if (absl::Status finished = r.Finish(); !finished.ok()) return finished;
  return status;
}

std::string EncodeStandbyStatus(const StandbyStatus& status) {
  ByteWriter w;
  w.PutUint8(kStandbyStatusType);
  w.PutLsn(status.write);
  w.PutLsn(status.flush);
  w.PutLsn(status.apply);
  w.PutInt64(status.client_time);
  w.PutUint8(status.reply_requested ? 1 : 0);
  return std::move(w).Take();
}

std::string EncodeXLogData(Lsn data_start, Lsn wal_end, int64_t send_time, std::string_view payload) {
  ByteWriter w;
  w.PutUint8(kXLogDataType);
  w.PutLsn(data_start);
  w.PutLsn(wal_end);
  w.PutInt64(send_time);
  w.PutBytes(payload);
  return std::move(w).Take();
}

std::string EncodeKeepalive(const Keepalive& keepalive) {
  ByteWriter w;
  w.PutUint8(kKeepaliveType);
  w.PutLsn(keepalive.wal_end);
  w.PutInt64(keepalive.send_time);
  w.PutUint8(keepalive.reply_requested ? 1 : 0);
  return std::move(w).Take();
}

}  // namespace outbox::pg
