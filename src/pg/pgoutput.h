// The pgoutput logical decoding messages of protocol versions 1 to 4 (PROTOCOL.md §3), decoded from and encoded
// to bytes. Pure: no I/O. Decoded values hold string_views into the input buffer where noted, so a message must
// be consumed before its buffer is freed; Relation and Type own their strings because they are cached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "common/lsn.h"

namespace outbox::pg {

// One column of a TupleData.
struct ColumnValue {
  enum class Kind : char { kNull = 'n', kUnchanged = 'u', kText = 't', kBinary = 'b' };
  Kind kind = Kind::kNull;
  std::string_view data;  // text or send() bytes for kText/kBinary; empty otherwise (view into the input)
};

struct TupleData {
  std::vector<ColumnValue> columns;
};

struct Begin {
  Lsn final_lsn;            // the commit record's LSN
  int64_t commit_time = 0;  // PostgreSQL epoch microseconds
  uint32_t xid = 0;
};

struct Commit {
  uint8_t flags = 0;
  Lsn commit_lsn;  // start of the commit record
  Lsn end_lsn;     // end of the commit record: what the client confirms
  int64_t commit_time = 0;
};

struct Origin {
  Lsn origin_lsn;
  std::string name;
};

struct RelationColumn {
  uint8_t flags = 0;  // 1 = part of the replica identity key
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
};

struct Relation {
  std::optional<uint32_t> xid;  // present only inside a Stream Start..Stop block
  uint32_t oid = 0;
  std::string nspname;  // "" means pg_catalog
  std::string relname;
  char replica_identity = 'd';
  std::vector<RelationColumn> columns;
};

// What a Relation message leaves out of a column and Debezium's connector reads from the catalog at each Relation
// (its schema's `optional` and default): ColumnCatalogSql's rows, read on a plain connection (never on the
// replication one, whose walsender would decode with the relcache entries the query leaves: app/relay.cc).
struct ColumnCatalog {
  std::string name;
  bool not_null = false;     // pg_attribute.attnotnull
  bool has_default = false;  // pg_attribute.atthasdef (a default or a generation expression)
  std::optional<std::string> default_expression = std::nullopt;  // pg_get_expr of the default, as Debezium's JDBC reads it
  bool generated = false;                          // pg_attribute.attgenerated: the expression generates it
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
  std::string type_name = {};                             // pg_type.typname
  std::optional<std::string> enum_labels = std::nullopt;  // an enum type's labels in their sort order, joined by ','
  // A domain's root type (the first of its chain of base types that is not a domain) and the type modifier the
  // domain gives it (-1 for none); 0 when the column's type is not a domain.
  uint32_t domain_root_oid = 0;
  int32_t domain_root_modifier = -1;
  // An array of an enum: the enum's labels in their sort order, joined by ','.
  std::optional<std::string> element_enum_labels = std::nullopt;
  char type_type = 0;  // pg_type.typtype: 'b' base, 'c' composite, 'd' domain, 'e' enum, 'r' range, 'm' multirange
  // An array type (typcategory 'A'): its element type's OID, name, typtype and typdelim; 0 and empty otherwise.
  uint32_t element_oid = 0;
  std::string element_name = {};
  char element_type_type = 0;
  char element_delimiter = 0;
};

struct Type {
  std::optional<uint32_t> xid;
  uint32_t oid = 0;
  std::string nspname;
  std::string name;
};

struct Insert {
  std::optional<uint32_t> xid;
  uint32_t relation_oid = 0;
  TupleData new_tuple;
};

struct Update {
  std::optional<uint32_t> xid;
  uint32_t relation_oid = 0;
  char old_kind = 0;  // 'K' (key), 'O' (old row) or 0 (absent)
  TupleData old_tuple;
  TupleData new_tuple;
};

struct Delete {
  std::optional<uint32_t> xid;
  uint32_t relation_oid = 0;
  char old_kind = 'K';  // 'K' or 'O'
  TupleData old_tuple;
};

struct Truncate {
  std::optional<uint32_t> xid;
  uint8_t flags = 0;  // 1 = CASCADE, 2 = RESTART IDENTITY
  std::vector<uint32_t> relation_oids;
};

// A logical decoding message (pg_logical_emit_message).
struct LogicalMessage {
  std::optional<uint32_t> xid;
  uint8_t flags = 0;  // 1 = transactional
  Lsn lsn;
  std::string_view prefix;   // view into the input
  std::string_view content;  // view into the input
  bool transactional() const { return (flags & 1) != 0; }
};

struct StreamStart {
  uint32_t xid = 0;
  uint8_t first_segment = 0;
};

struct StreamStop {};

struct StreamCommit {
  uint32_t xid = 0;
  uint8_t flags = 0;
  Lsn commit_lsn;
  Lsn end_lsn;
  int64_t commit_time = 0;
};

struct StreamAbort {
  uint32_t xid = 0;
  uint32_t subxid = 0;
  std::optional<Lsn> abort_lsn;        // proto 4 with streaming = parallel only
  std::optional<int64_t> abort_time;   // likewise
};

// Proto 3 (two-phase).
struct BeginPrepare {
  Lsn prepare_lsn;
  Lsn end_lsn;
  int64_t prepare_time = 0;
  uint32_t xid = 0;
  std::string gid;
};

// 'P' (Prepare) and 'p' (Stream Prepare) share this layout.
struct Prepare {
  bool stream = false;  // true for 'p'
  uint8_t flags = 0;
  Lsn prepare_lsn;
  Lsn end_lsn;
  int64_t prepare_time = 0;
  uint32_t xid = 0;
  std::string gid;
};

struct CommitPrepared {
  uint8_t flags = 0;
  Lsn commit_lsn;
  Lsn end_lsn;
  int64_t commit_time = 0;
  uint32_t xid = 0;
  std::string gid;
};

struct RollbackPrepared {
  uint8_t flags = 0;
  Lsn prepare_end_lsn;
  Lsn rollback_end_lsn;
  int64_t prepare_time = 0;
  int64_t rollback_time = 0;
  uint32_t xid = 0;
  std::string gid;
};

using Message = std::variant<Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate, LogicalMessage,
                             StreamStart, StreamStop, StreamCommit, StreamAbort, BeginPrepare, Prepare,
                             CommitPrepared, RollbackPrepared>;

// The decoder's per-connection state: which protocol was asked for, and whether a Stream Start..Stop block is
// open (inside one, Relation/Type/Insert/Update/Delete/Truncate/Message carry an xid prefix).
struct DecoderState {
  int proto_version = 1;
  bool parallel_streaming = false;  // proto 4 with streaming = parallel: Stream Abort has abort_lsn/abort_time
  bool in_stream_block = false;     // updated by Decode on Stream Start / Stream Stop
};

// Decodes one pgoutput message. Every read is bounds-checked; a truncated, oversized (trailing bytes) or unknown
// message gives DATA_LOSS with a precise reason ("insert: expected new tuple 'N' but got 0x4b"). Never crashes.
absl::StatusOr<Message> Decode(std::string_view bytes, DecoderState& state);

// Encodes a message exactly as the server would (used by tests and benchmarks). `in_stream_block` decides
// whether the xid prefix is written for messages that may carry one (the message's own xid must then be set);
// `parallel_streaming` decides whether Stream Abort's proto-4 fields are written.
std::string Encode(const Message& message, const DecoderState& state);

}  // namespace outbox::pg
