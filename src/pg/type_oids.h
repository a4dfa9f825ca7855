// The PostgreSQL type OIDs the relay interprets (pg_type.oid; fixed since the types are built in). A Relation
// message names each column's type by these.
#pragma once

#include <cstdint>

namespace outbox::pg::oid {

inline constexpr uint32_t kBool = 16, kBytea = 17, kChar = 18, kName = 19, kInt8 = 20, kInt2 = 21, kInt4 = 23,
                          kText = 25, kOid = 26, kJson = 114, kXml = 142, kPoint = 600, kBox = 603, kCidr = 650,
                          kFloat4 = 700, kFloat8 = 701, kMacaddr8 = 774, kMoney = 790, kMacaddr = 829, kInet = 869,
                          kBpchar = 1042, kVarchar = 1043, kDate = 1082, kTime = 1083, kTimestamp = 1114,
                          kTimestampTz = 1184, kInterval = 1186, kTimeTz = 1266, kBit = 1560, kVarbit = 1562,
                          kNumeric = 1700, kRefCursor = 1790, kUuid = 2950, kJsonb = 3802, kInt4Range = 3904,
                          kNumRange = 3906, kTsRange = 3908, kTsTzRange = 3910, kDateRange = 3912,
                          kInt8Range = 3926, kTsvector = 3614, kInt2Vector = 22, kOidVector = 30;
// Their arrays (pg_type.typarray).
inline constexpr uint32_t kJsonArray = 199, kCidrArray = 651, kMacaddr8Array = 775, kMoneyArray = 791,
                          kBoolArray = 1000, kByteaArray = 1001, kCharArray = 1002, kNameArray = 1003,
                          kInt2Array = 1005, kInt4Array = 1007, kTextArray = 1009, kBpcharArray = 1014,
                          kVarcharArray = 1015, kInt8Array = 1016, kPointArray = 1017, kBoxArray = 1020,
                          kFloat4Array = 1021, kFloat8Array = 1022, kOidArray = 1028, kMacaddrArray = 1040,
                          kInetArray = 1041, kTimestampArray = 1115, kDateArray = 1182, kTimeArray = 1183,
                          kTimestampTzArray = 1185, kNumericArray = 1231, kTimeTzArray = 1270, kBitArray = 1561,
                          kVarbitArray = 1563, kRefCursorArray = 2201, kUuidArray = 2951, kJsonbArray = 3807,
                          kInt4RangeArray = 3905, kNumRangeArray = 3907, kTsRangeArray = 3909,
                          kTsTzRangeArray = 3911, kDateRangeArray = 3913, kInt8RangeArray = 3927,
                          kTsvectorArray = 3643;

}  // namespace outbox::pg::oid
