// CopyBoth frame codec tests: round trips, literal layouts, and malformed or random frames giving DATA_LOSS.
#include "pg/frames.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace outbox::pg {
namespace {

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string Hex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

// The exact error DecodeServerFrame gives for `bytes`, or "ok".
std::string ServerFrameError(std::string_view bytes) {
  absl::StatusOr<ServerFrame> decoded = DecodeServerFrame(bytes);
  if (decoded.ok()) return "ok";
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  return std::string(decoded.status().message());
}

std::string StandbyStatusError(std::string_view bytes) {
  absl::StatusOr<StandbyStatus> decoded = DecodeStandbyStatus(bytes);
  if (decoded.ok()) return "ok";
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  return std::string(decoded.status().message());
}

// Re-encodes a decoded server frame.
std::string EncodeServerFrame(const ServerFrame& frame) {
  if (const auto* x = std::get_if<XLogData>(&frame)) {
    return EncodeXLogData(x->data_start, x->wal_end, x->send_time, x->payload);
  }
  return EncodeKeepalive(std::get<Keepalive>(frame));
}

TEST(Frames, XLogDataRoundTripsWithItsPayload) {
  for (std::string_view payload : {std::string_view("B0123456789abcdefghij"), std::string_view(""),
                                   std::string_view("\0\xff", 2)}) {
    const std::string bytes = EncodeXLogData(Lsn(0x16B374D848), Lsn(0x16B374D900), -5, payload);
    ASSERT_EQ(bytes.size(), 25 + payload.size());
    absl::StatusOr<ServerFrame> decoded = DecodeServerFrame(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    const XLogData& x = std::get<XLogData>(*decoded);
    EXPECT_EQ(x.data_start, Lsn(0x16B374D848));
    EXPECT_EQ(x.wal_end, Lsn(0x16B374D900));
    EXPECT_EQ(x.send_time, -5);
    EXPECT_EQ(x.payload, payload);
    EXPECT_EQ(x.payload.data(), bytes.data() + 25);  // a view, not a copy
  }
}

TEST(Frames, XLogDataLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'w',                                             //
                                   0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10,  // data_start 1/10
                                   0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x20,  // wal_end 1/20
                                   0x00, 0x02, 0x93, 0x64, 0xD7, 0x2C, 0xE2, 0x40,  // send_time
                                   'E'});                                           // payload
  absl::StatusOr<ServerFrame> decoded = DecodeServerFrame(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const XLogData& x = std::get<XLogData>(*decoded);
  EXPECT_EQ(x.data_start.ToString(), "1/10");
  EXPECT_EQ(x.wal_end.ToString(), "1/20");
  EXPECT_EQ(x.send_time, 0x29364D72CE240);
  EXPECT_EQ(x.payload, "E");
  EXPECT_EQ(Hex(EncodeServerFrame(*decoded)), Hex(bytes));
}

TEST(Frames, XLogDataShorterThanItsHeaderIsDataLoss) {
  EXPECT_EQ(ServerFrameError(Bytes({'w', 0, 0, 0, 0, 0, 0, 0, 0, 0})),
            "xlogdata: frame of 10 bytes is shorter than its 25-byte header");
  EXPECT_EQ(ServerFrameError("w"), "xlogdata: frame of 1 bytes is shorter than its 25-byte header");
}

TEST(Frames, KeepaliveRoundTripsInEighteenBytes) {
  for (bool reply : {false, true}) {
    const Keepalive keepalive{Lsn(0x18919E98), 725'000'000'000'000, reply};
    const std::string bytes = EncodeKeepalive(keepalive);
    ASSERT_EQ(bytes.size(), 18u);
    absl::StatusOr<ServerFrame> decoded = DecodeServerFrame(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    const Keepalive& k = std::get<Keepalive>(*decoded);
    EXPECT_EQ(k.wal_end, keepalive.wal_end);
    EXPECT_EQ(k.send_time, keepalive.send_time);
    EXPECT_EQ(k.reply_requested, reply);
  }
}

TEST(Frames, KeepaliveLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'k',                                             //
                                   0x00, 0x00, 0x00, 0x00, 0x18, 0x91, 0x9E, 0x98,  // wal_end 0/18919E98
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // send_time -1
                                   0x01});                                          // reply requested
  absl::StatusOr<ServerFrame> decoded = DecodeServerFrame(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Keepalive& k = std::get<Keepalive>(*decoded);
  EXPECT_EQ(k.wal_end.ToString(), "0/18919E98");
  EXPECT_EQ(k.send_time, -1);
  EXPECT_TRUE(k.reply_requested);
  EXPECT_EQ(Hex(EncodeKeepalive(k)), Hex(bytes));
}

TEST(Frames, KeepaliveWithTrailingBytesIsDataLoss) {
  EXPECT_EQ(ServerFrameError(EncodeKeepalive(Keepalive{}) + "x"), "keepalive: 1 trailing byte");
  EXPECT_EQ(ServerFrameError(EncodeKeepalive(Keepalive{}) + "xyz"), "keepalive: 3 trailing bytes");
}

TEST(Frames, ReplyRequestedOtherThanZeroOrOneIsDataLoss) {
  std::string keepalive = EncodeKeepalive(Keepalive{});
  keepalive.back() = 2;
  EXPECT_EQ(ServerFrameError(keepalive), "keepalive: reply_requested is 0x02, not 0 or 1");
  std::string status = EncodeStandbyStatus(StandbyStatus{});
  status.back() = static_cast<char>(0xFF);
  EXPECT_EQ(StandbyStatusError(status), "standby status: reply_requested is 0xff, not 0 or 1");
}

TEST(Frames, StandbyStatusRoundTripsInThirtyFourBytes) {
  for (bool reply : {false, true}) {
    const StandbyStatus status{Lsn(0x100), Lsn(0x80), Lsn(0x40), 725'000'000'000'000, reply};
    const std::string bytes = EncodeStandbyStatus(status);
    ASSERT_EQ(bytes.size(), 34u);
    absl::StatusOr<StandbyStatus> decoded = DecodeStandbyStatus(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->write, status.write);
    EXPECT_EQ(decoded->flush, status.flush);
    EXPECT_EQ(decoded->apply, status.apply);
    EXPECT_EQ(decoded->client_time, status.client_time);
    EXPECT_EQ(decoded->reply_requested, reply);
  }
}

TEST(Frames, StandbyStatusLayoutFromLiteralBytes) {
  const StandbyStatus status{Lsn(0x0000000100000001), Lsn(0x0000000200000002), Lsn(0x0000000300000003), 4, true};
  const std::string bytes = Bytes({'r',                                             //
                                   0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,  // write 1/1
                                   0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02,  // flush 2/2
                                   0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03,  // apply 3/3
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,  // client_time
                                   0x01});                                          // reply requested
  EXPECT_EQ(Hex(EncodeStandbyStatus(status)), Hex(bytes));
}

TEST(Frames, StandbyStatusOfAnotherTypeIsDataLoss) {
  std::string bytes = EncodeStandbyStatus(StandbyStatus{});
  bytes[0] = 'k';
  EXPECT_EQ(StandbyStatusError(bytes), "standby status: expected type 'r' but got 0x6b");
  EXPECT_EQ(StandbyStatusError(""), "standby status: empty frame");
}

TEST(Frames, EveryPrefixOfEveryFixedFrameIsDataLoss) {
  const std::string keepalive = EncodeKeepalive(Keepalive{Lsn(1), 2, true});
  for (size_t n = 0; n < keepalive.size(); ++n) {
    EXPECT_NE(ServerFrameError(keepalive.substr(0, n)), "ok") << n;
  }
  const std::string xlogdata = EncodeXLogData(Lsn(1), Lsn(2), 3, "payload");
  for (size_t n = 0; n < 25; ++n) EXPECT_NE(ServerFrameError(xlogdata.substr(0, n)), "ok") << n;
  const std::string status = EncodeStandbyStatus(StandbyStatus{Lsn(1), Lsn(2), Lsn(3), 4, false});
  for (size_t n = 0; n < status.size(); ++n) EXPECT_NE(StandbyStatusError(status.substr(0, n)), "ok") << n;
  EXPECT_EQ(ServerFrameError(keepalive.substr(0, 10)), "keepalive: truncated at send_time: needs 8 bytes, 1 left");
}

TEST(Frames, StandbyStatusWithTrailingBytesIsDataLoss) {
  EXPECT_EQ(StandbyStatusError(EncodeStandbyStatus(StandbyStatus{}) + "ab"), "standby status: 2 trailing bytes");
}

TEST(Frames, EmptyOrUnknownServerFrameIsDataLoss) {
  EXPECT_EQ(ServerFrameError(""), "copydata: empty frame");
  EXPECT_EQ(ServerFrameError(EncodeStandbyStatus(StandbyStatus{})), "copydata: unknown message type 0x72");
  EXPECT_EQ(ServerFrameError(Bytes({0xFF})), "copydata: unknown message type 0xff");
}

TEST(Frames, RandomFramesDecodeOrFailWithoutCrashing) {
  std::mt19937 rng(20240601);
  const std::string types = "wkr";
  int decoded_count = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(1, types[rng() % types.size()]);
    const size_t length = rng() % 40;
    for (size_t j = 0; j < length; ++j) bytes.push_back(static_cast<char>(rng() % 3 == 0 ? rng() % 2 : rng()));
    absl::StatusOr<ServerFrame> frame = DecodeServerFrame(bytes);
    if (frame.ok()) {
      ++decoded_count;
      ASSERT_EQ(Hex(EncodeServerFrame(*frame)), Hex(bytes));
    } else {
      ASSERT_EQ(frame.status().code(), absl::StatusCode::kDataLoss) << frame.status();
    }
    absl::StatusOr<StandbyStatus> status = DecodeStandbyStatus(bytes);
    if (status.ok()) {
      ++decoded_count;
      ASSERT_EQ(Hex(EncodeStandbyStatus(*status)), Hex(bytes));
    } else {
      ASSERT_EQ(status.status().code(), absl::StatusCode::kDataLoss) << status.status();
    }
  }
  EXPECT_GT(decoded_count, 0);
}

}  // namespace
}  // namespace outbox::pg
