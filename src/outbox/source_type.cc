#include "outbox/source_type.h"

#include <climits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "common/strings.h"
#include "outbox/connect_header.h"

namespace outbox::outbox {
namespace {

namespace oid {
constexpr uint32_t kBool = 16, kBytea = 17, kChar = 18, kName = 19, kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25,
                   kOid = 26, kJson = 114, kPoint = 600, kBox = 603, kFloat4 = 700, kFloat8 = 701, kMoney = 790,
                   kBpchar = 1042, kVarchar = 1043, kDate = 1082, kTime = 1083, kTimestamp = 1114,
                   kTimestampTz = 1184, kInterval = 1186, kTimeTz = 1266, kBit = 1560, kVarbit = 1562,
                   kNumeric = 1700, kRefCursor = 1790, kJsonb = 3802;
}  // namespace oid

// pgjdbc's unknownLength connection property, at its default.
constexpr int kUnknownLength = INT_MAX;

// The element type of the arrays pgjdbc's TypeInfoCache knows from the start (its table of core types); 0 for any
// other type. TypeInfoCache reads an array of another type as that type (convertArrayToBaseOid).
uint32_t CoreArrayElement(uint32_t type) {
  switch (type) {
    case 1005: return oid::kInt2;
    case 1007: return oid::kInt4;
    case 1028: return oid::kOid;
    case 1016: return oid::kInt8;
    case 791: return oid::kMoney;
    case 1231: return oid::kNumeric;
    case 1021: return oid::kFloat4;
    case 1022: return oid::kFloat8;
    case 1002: return oid::kChar;
    case 1014: return oid::kBpchar;
    case 1015: return oid::kVarchar;
    case 1563: return oid::kVarbit;
    case 1009: return oid::kText;
    case 1003: return oid::kName;
    case 1001: return oid::kBytea;
    case 1000: return oid::kBool;
    case 1561: return oid::kBit;
    case 1182: return oid::kDate;
    case 1183: return oid::kTime;
    case 1270: return oid::kTimeTz;
    case 1115: return oid::kTimestamp;
    case 1185: return oid::kTimestampTz;
    case 2201: return oid::kRefCursor;
    case 199: return oid::kJson;
    case 3807: return oid::kJsonb;
    case 1017: return oid::kPoint;
    case 1020: return oid::kBox;
    default: return 0;
  }
}

uint32_t BaseOid(uint32_t type) {
  const uint32_t element = CoreArrayElement(type);
  return element != 0 ? element : type;
}

// TypeInfoCache.getDisplaySize.
int DisplaySize(uint32_t type, int32_t typmod) {
  switch (BaseOid(type)) {
    case oid::kInt2: return 6;
    case oid::kInt4: return 11;
    case oid::kOid: return 10;
    case oid::kInt8: return 20;
    case oid::kFloat4: return 15;
    case oid::kFloat8: return 25;
    case oid::kChar:
    case oid::kBool: return 1;
    case oid::kDate: return 13;
    case oid::kTime:
    case oid::kTimeTz:
    case oid::kTimestamp:
    case oid::kTimestampTz: {
      const int seconds = typmod == -1 ? 7 : typmod == 0 ? 0 : typmod == 1 ? 3 : typmod + 1;
      switch (BaseOid(type)) {
        case oid::kTime: return 8 + seconds;
        case oid::kTimeTz: return 8 + seconds + 6;
        case oid::kTimestamp: return 13 + 1 + 8 + seconds;
        default: return 13 + 1 + 8 + seconds + 6;
      }
    }
    case oid::kInterval: return 49;
    case oid::kVarchar:
    case oid::kBpchar: return typmod == -1 ? kUnknownLength : typmod - 4;
    case oid::kNumeric: {
      if (typmod == -1) return 131089;
      const int precision = ((typmod - 4) >> 16) & 0xffff;
      const int scale = (typmod - 4) & 0xffff;
      return 1 + precision + (scale != 0 ? 1 : 0);
    }
    case oid::kBit: return typmod;
    case oid::kVarbit: return typmod == -1 ? kUnknownLength : typmod;
    default: return kUnknownLength;
  }
}

// TypeInfoCache.getPrecision.
int Precision(uint32_t type, int32_t typmod) {
  switch (BaseOid(type)) {
    case oid::kInt2: return 5;
    case oid::kOid:
    case oid::kInt4: return 10;
    case oid::kInt8: return 19;
    case oid::kFloat4: return 8;
    case oid::kFloat8: return 17;
    case oid::kNumeric: return typmod == -1 ? 0 : static_cast<int>((static_cast<uint32_t>(typmod - 4) & 0xffff0000u) >> 16);
    case oid::kChar:
    case oid::kBool: return 1;
    case oid::kBpchar:
    case oid::kVarchar: return typmod == -1 ? kUnknownLength : typmod - 4;
    case oid::kDate:
    case oid::kTime:
    case oid::kTimeTz:
    case oid::kInterval:
    case oid::kTimestamp:
    case oid::kTimestampTz: return DisplaySize(type, typmod);
    case oid::kBit: return typmod;
    case oid::kVarbit: return typmod == -1 ? kUnknownLength : typmod;
    default: return kUnknownLength;
  }
}

// TypeInfoCache.getScale.
int Scale(uint32_t type, int32_t typmod) {
  switch (BaseOid(type)) {
    case oid::kFloat4: return 8;
    case oid::kFloat8: return 17;
    case oid::kNumeric: return typmod == -1 ? 0 : (typmod - 4) & 0xffff;
    case oid::kTime:
    case oid::kTimeTz:
    case oid::kTimestamp:
    case oid::kTimestampTz: return typmod == -1 ? 6 : typmod;
    case oid::kInterval: return typmod == -1 ? 6 : typmod & 0xffff;
    default: return 0;
  }
}

// PostgresType.getDefaultLength of a type that is not a domain (its modifiers are -1).
int DefaultLength(uint32_t type) {
  const int size = Precision(type, -1);
  return size != 0 ? size : DisplaySize(type, -1);
}

// An array type pgjdbc does not know from the start: PostgreSQL names arrays _<element>, and Debezium reads the
// Relation's array columns by that name.
bool IsOtherArray(const SourceColumnType& c) {
  return c.domain_root_oid == 0 && c.type_name.starts_with('_') && CoreArrayElement(c.type_oid) == 0;
}

}  // namespace

absl::StatusOr<std::string> SourceTypeParameters(const SourceColumnType& c) {
  const auto refuse = [&](std::string_view why) {
    return absl::FailedPreconditionError(Cat("column \"", c.column, "\" of type ", c.type_name,
                                             ": the relay does not work out the source type parameters Debezium "
                                             "gives it (", why, ")"));
  };
  if (!IsAscii(c.type_name)) return refuse("a type name that is not ASCII");
  if (IsOtherArray(c)) {
    return refuse("pgjdbc's length of this array type depends on which arrays Debezium's connection read before");
  }
  // ColumnMetaData: with a modifier, pgjdbc's precision and scale of the column's own type; without, PostgresType's
  // defaults (a domain's from its base type under the domain's modifier).
  int length = 0;
  int scale = 0;
  if (c.type_modifier != -1) {
    length = Precision(c.type_oid, c.type_modifier);
    scale = Scale(c.type_oid, c.type_modifier);
  } else if (c.domain_root_oid == 0) {
    length = DefaultLength(c.type_oid);
    scale = Scale(c.type_oid, -1);
  } else if (c.domain_root_modifier == -1) {
    length = DefaultLength(c.domain_root_oid);
    scale = Scale(c.domain_root_oid, -1);
  } else {
    int size = Precision(c.domain_root_oid, c.domain_root_modifier);
    if (size == 0) size = DisplaySize(c.domain_root_oid, c.domain_root_modifier);
    length = size != 0 && size != kUnknownLength ? size : DefaultLength(c.type_oid);
    scale = Scale(c.domain_root_oid, c.domain_root_modifier);
  }
  std::string out = R"("__debezium.source.column.type":)";
  AppendJsonString(absl::AsciiStrToUpper(ToAbsl(c.type_name)), &out);
  out.append(Cat(R"(,"__debezium.source.column.length":")", length, R"(","__debezium.source.column.scale":")", scale,
                 R"(","__debezium.source.column.name":)"));
  AppendJsonString(c.column, &out);
  return out;
}

}  // namespace outbox::outbox
