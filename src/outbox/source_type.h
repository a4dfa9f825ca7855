// Debezium's column.propagate.source.type and datatype.propagate.source.type: a column they select gets its source
// type as parameters of its schema (PropagateSourceMetadataToSchemaParameter), which JsonConverter writes with
// schemas.enable=true. Debezium's PostgreSQL connector builds the column from pgoutput's Relation message
// (ColumnMetaData): its type's name, and a length and scale that pgjdbc's TypeInfoCache works out from the type and
// the column's modifier. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace outbox::outbox {

// A column as Debezium's ColumnMetaData sees it.
struct SourceColumnType {
  std::string_view column;     // the column's name
  std::string_view type_name;  // pg_type.typname of the column's type (a domain's own name)
  uint32_t type_oid = 0;       // the column's type (a domain's own OID)
  int32_t type_modifier = -1;  // pg_attribute.atttypmod, which the Relation message gives
  // A domain's root type and the modifier the domain gives it (pg::ColumnCatalog's); 0 when not a domain.
  uint32_t domain_root_oid = 0;
  int32_t domain_root_modifier = -1;
};

// The length and scale Debezium's ColumnMetaData gives the column (Column.length(), Column.scale()): pgjdbc's
// precision and scale of its type under its modifier, or PostgresType's defaults (Integer.MAX_VALUE for a type of
// unknown length, such as text). FAILED_PRECONDITION for an array whose element type pgjdbc does not know from the
// start.
struct SourceLengthAndScale {
  int length = 0;
  int scale = 0;
};
absl::StatusOr<SourceLengthAndScale> SourceColumnLength(const SourceColumnType& column);

// The parameters Debezium adds, as "key":"value" pairs in its order, for AppendConnectJsonSchema's more_parameters:
// __debezium.source.column.type (the type's name in upper case), __debezium.source.column.length,
// __debezium.source.column.scale and __debezium.source.column.name (no comment: a column built from a Relation message
// has none). For example "__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"64",
// "__debezium.source.column.scale":"0","__debezium.source.column.name":"kind". FAILED_PRECONDITION for an array whose
// element type pgjdbc does not know from the start (its length depends on which arrays Debezium's connection has
// read before), and for a type name that is not ASCII (Java upper-cases it by Unicode's rules).
absl::StatusOr<std::string> SourceTypeParameters(const SourceColumnType& column);

}  // namespace outbox::outbox
