// ByteReader and ByteWriter: the bounds-checked big-endian cursor the wire decoders read through, and its
// inverse for the encoders. Integers are big-endian, strings end in NUL (PROTOCOL.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/lsn.h"

namespace outbox::pg {

// Names of messages and fields are string literals passed as `const char*`: the Debian abseil this project builds
// against has its own absl::string_view, which absl::StrCat takes but std::string_view does not convert to.

// "0x4b": how an unexpected byte is named in error messages.
inline std::string HexByte(uint8_t byte) { return absl::StrCat("0x", absl::Hex(byte, absl::kZeroPad2)); }

// Reads fields off a borrowed buffer, front to back. The first read that does not fit records a DATA_LOSS status
// "<message>: <reason>" and every later read returns zero (or an empty view) without moving, so a decoder can read
// a fixed layout straight through and check once; it must test ok() before acting on a value it has read (a
// length, a marker byte). Finish() reports the first error, or trailing bytes. Not thread-safe; one per message.
class ByteReader {
 public:
  // `message` names what is being decoded ("insert") and prefixes every error.
  ByteReader(std::string_view bytes, const char* message) : bytes_(bytes), message_(message) {}

  uint8_t ReadUint8(const char* field) { return static_cast<uint8_t>(ReadBigEndian(1, field)); }
  uint16_t ReadUint16(const char* field) { return static_cast<uint16_t>(ReadBigEndian(2, field)); }
  uint32_t ReadUint32(const char* field) { return static_cast<uint32_t>(ReadBigEndian(4, field)); }
  int32_t ReadInt32(const char* field) { return static_cast<int32_t>(ReadUint32(field)); }
  int64_t ReadInt64(const char* field) { return static_cast<int64_t>(ReadBigEndian(8, field)); }
  Lsn ReadLsn(const char* field) { return Lsn(ReadBigEndian(8, field)); }

  // A NUL-terminated string; the view excludes the NUL, which is consumed.
  std::string_view ReadString(const char* field) {
    if (!ok()) return {};
    const size_t nul = bytes_.find('\0', pos_);
    if (nul == std::string_view::npos) {
      Fail(absl::StrCat(field, " is not NUL-terminated"));
      return {};
    }
    std::string_view text = bytes_.substr(pos_, nul - pos_);
    pos_ = nul + 1;
    return text;
  }

  // Exactly `n` bytes, as a view into the buffer.
  std::string_view ReadBytes(size_t n, const char* field) {
    if (!Fits(n, field)) return {};
    std::string_view bytes = bytes_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }

  size_t remaining() const { return bytes_.size() - pos_; }
  bool ok() const { return status_.ok(); }

  // Records "<message>: <reason>" unless an earlier error is already recorded.
  void Fail(const std::string& reason) {
    if (ok()) status_ = absl::DataLossError(absl::StrCat(message_, ": ", reason));
  }

  // The first error, else DATA_LOSS if bytes are left over: every message has a known end.
  absl::Status Finish() const {
    if (!ok()) return status_;
    if (remaining() != 0) {
      return absl::DataLossError(
          absl::StrCat(message_, ": ", remaining(), remaining() == 1 ? " trailing byte" : " trailing bytes"));
    }
    return absl::OkStatus();
  }

 private:
  // Inlined into every read; the message of a read that does not fit is built out of line.
  bool Fits(size_t n, const char* field) {
    if (!ok()) return false;
    if (n > remaining()) [[unlikely]] {
      FailTruncated(n, field);
      return false;
    }
    return true;
  }

  [[gnu::cold, gnu::noinline]] void FailTruncated(size_t n, const char* field) {
    Fail(absl::StrCat("truncated at ", field, ": needs ", n, n == 1 ? " byte" : " bytes", ", ", remaining(), " left"));
  }

  uint64_t ReadBigEndian(size_t n, const char* field) {
    if (!Fits(n, field)) return 0;
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) value = (value << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
    pos_ += n;
    return value;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  const char* message_;
  absl::Status status_;
};

// Appends fields in the same encoding. Strings must not contain NUL (the server never sends one).
class ByteWriter {
 public:
  void PutUint8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void PutUint16(uint16_t value) { PutBigEndian(value, 2); }
  void PutUint32(uint32_t value) { PutBigEndian(value, 4); }
  void PutInt32(int32_t value) { PutBigEndian(static_cast<uint32_t>(value), 4); }
  void PutInt64(int64_t value) { PutBigEndian(static_cast<uint64_t>(value), 8); }
  void PutLsn(Lsn lsn) { PutBigEndian(lsn.value(), 8); }
  void PutString(std::string_view text) {
    out_.append(text);
    out_.push_back('\0');
  }
  void PutBytes(std::string_view bytes) { out_.append(bytes); }

  std::string Take() && { return std::move(out_); }

 private:
  void PutBigEndian(uint64_t value, int n) {
    for (int shift = 8 * (n - 1); shift >= 0; shift -= 8) out_.push_back(static_cast<char>((value >> shift) & 0xFF));
  }

  std::string out_;
};

}  // namespace outbox::pg
