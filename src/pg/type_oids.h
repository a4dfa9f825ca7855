// The PostgreSQL type OIDs the relay interprets (pg_type.oid; fixed since the types are built in). A Relation
// message names each column's type by these.
#pragma once

#include <cstdint>

namespace outbox::pg::oid {

inline constexpr uint32_t kBytea = 17;
inline constexpr uint32_t kInt8 = 20;
inline constexpr uint32_t kInt2 = 21;
inline constexpr uint32_t kInt4 = 23;
inline constexpr uint32_t kText = 25;
inline constexpr uint32_t kOid = 26;
inline constexpr uint32_t kTimestamp = 1114;
inline constexpr uint32_t kTimestampTz = 1184;
inline constexpr uint32_t kUuid = 2950;
inline constexpr uint32_t kJsonb = 3802;

}  // namespace outbox::pg::oid
