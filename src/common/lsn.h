// Lsn: a PostgreSQL WAL position as a strong type, printed and parsed as "X/X" (upper-case hex).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace outbox {

class Lsn {
 public:
  constexpr Lsn() = default;
  constexpr explicit Lsn(uint64_t value) : value_(value) {}

  constexpr uint64_t value() const { return value_; }
  constexpr bool IsZero() const { return value_ == 0; }

  // "16/B374D848" (the form pg_lsn prints).
  std::string ToString() const;
  // Accepts "X/Y" with 1 to 8 hex digits on each side.
  static absl::StatusOr<Lsn> Parse(std::string_view text);

  friend constexpr auto operator<=>(Lsn, Lsn) = default;

 private:
  uint64_t value_ = 0;
};

// Microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch) to and from Unix epoch microseconds.
inline constexpr int64_t kPgEpochOffsetMicros = 946'684'800'000'000LL;
constexpr int64_t PgTimeToUnixMicros(int64_t pg_micros) { return pg_micros + kPgEpochOffsetMicros; }
constexpr int64_t UnixMicrosToPgTime(int64_t unix_micros) { return unix_micros - kPgEpochOffsetMicros; }

}  // namespace outbox
