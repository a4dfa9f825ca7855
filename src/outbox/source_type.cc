#include "outbox/source_type.h"

#include <climits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "common/strings.h"
#include "outbox/connect_header.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

namespace oid = ::outbox::pg::oid;

// pgjdbc's unknownLength connection property, at its default.
constexpr int kUnknownLength = INT_MAX;

// The element type of the arrays pgjdbc's TypeInfoCache knows from the start (its table of core types); 0 for any
// other type. TypeInfoCache reads an array of another type as that type (convertArrayToBaseOid).
uint32_t CoreArrayElement(uint32_t type) {
  switch (type) {
    case oid::kInt2Array: return oid::kInt2;
    case oid::kInt4Array: return oid::kInt4;
    case oid::kOidArray: return oid::kOid;
    case oid::kInt8Array: return oid::kInt8;
    case oid::kMoneyArray: return oid::kMoney;
    case oid::kNumericArray: return oid::kNumeric;
    case oid::kFloat4Array: return oid::kFloat4;
    case oid::kFloat8Array: return oid::kFloat8;
    case oid::kCharArray: return oid::kChar;
    case oid::kBpcharArray: return oid::kBpchar;
    case oid::kVarcharArray: return oid::kVarchar;
    case oid::kVarbitArray: return oid::kVarbit;
    case oid::kTextArray: return oid::kText;
    case oid::kNameArray: return oid::kName;
    case oid::kByteaArray: return oid::kBytea;
    case oid::kBoolArray: return oid::kBool;
    case oid::kBitArray: return oid::kBit;
    case oid::kDateArray: return oid::kDate;
    case oid::kTimeArray: return oid::kTime;
    case oid::kTimeTzArray: return oid::kTimeTz;
    case oid::kTimestampArray: return oid::kTimestamp;
    case oid::kTimestampTzArray: return oid::kTimestampTz;
    case oid::kRefCursorArray: return oid::kRefCursor;
    case oid::kJsonArray: return oid::kJson;
    case oid::kJsonbArray: return oid::kJsonb;
    case oid::kPointArray: return oid::kPoint;
    case oid::kBoxArray: return oid::kBox;
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

absl::StatusOr<SourceLengthAndScale> SourceColumnLength(const SourceColumnType& c) {
  if (IsOtherArray(c)) {
    return absl::FailedPreconditionError(
        Cat("column \"", c.column, "\" of type ", c.type_name, ": the relay does not work out the length Debezium "
            "gives it (pgjdbc's length of this array type depends on which arrays Debezium's connection read "
            "before)"));
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
  return SourceLengthAndScale{length, scale};
}

absl::StatusOr<std::string> SourceTypeParameters(const SourceColumnType& c) {
  if (!IsAscii(c.type_name)) {
    return absl::FailedPreconditionError(Cat("column \"", c.column, "\" of type ", c.type_name,
                                             ": the relay does not work out the source type parameters Debezium "
                                             "gives it (a type name that is not ASCII)"));
  }
  absl::StatusOr<SourceLengthAndScale> size = SourceColumnLength(c);
  if (!size.ok()) return size.status();
  const auto [length, scale] = *size;
  std::string out = R"("__debezium.source.column.type":)";
  AppendJsonString(absl::AsciiStrToUpper(ToAbsl(c.type_name)), &out);
  out.append(Cat(R"(,"__debezium.source.column.length":")", length, R"(","__debezium.source.column.scale":")", scale,
                 R"(","__debezium.source.column.name":)"));
  AppendJsonString(c.column, &out);
  return out;
}

}  // namespace outbox::outbox
