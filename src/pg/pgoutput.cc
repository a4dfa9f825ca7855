// The pgoutput message codec (PROTOCOL.md §3): as in PostgreSQL's proto.c, a read and a write function per message
// over a byte cursor, no I/O, and a precise DATA_LOSS error for every byte that does not fit the layout.
#include "pg/pgoutput.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pg/byte_reader.h"

namespace outbox::pg {
namespace {

// The type byte of each message (LogicalRepMsgType in PostgreSQL's logicalproto.h).
constexpr char kBeginType = 'B';
constexpr char kCommitType = 'C';
constexpr char kOriginType = 'O';
constexpr char kRelationType = 'R';
constexpr char kTypeType = 'Y';
constexpr char kInsertType = 'I';
constexpr char kUpdateType = 'U';
constexpr char kDeleteType = 'D';
constexpr char kTruncateType = 'T';
constexpr char kMessageType = 'M';
constexpr char kStreamStartType = 'S';
constexpr char kStreamStopType = 'E';
constexpr char kStreamCommitType = 'c';
constexpr char kStreamAbortType = 'A';
constexpr char kBeginPrepareType = 'b';
constexpr char kPrepareType = 'P';
constexpr char kStreamPrepareType = 'p';
constexpr char kCommitPreparedType = 'K';
constexpr char kRollbackPreparedType = 'r';

// The markers in front of a TupleData inside Insert, Update and Delete.
constexpr uint8_t kNewTupleMarker = 'N';
constexpr uint8_t kKeyTupleMarker = 'K';
constexpr uint8_t kOldTupleMarker = 'O';

// The smallest Relation column: flags, an empty name's NUL, type OID, typmod.
constexpr size_t kMinRelationColumnSize = 1 + 1 + 4 + 4;

// The name errors give each message type; nullptr for a byte that is no pgoutput message.
const char* MessageName(char type) {
  switch (type) {
    case kBeginType: return "begin";
    case kCommitType: return "commit";
    case kOriginType: return "origin";
    case kRelationType: return "relation";
    case kTypeType: return "type";
    case kInsertType: return "insert";
    case kUpdateType: return "update";
    case kDeleteType: return "delete";
    case kTruncateType: return "truncate";
    case kMessageType: return "message";
    case kStreamStartType: return "stream start";
    case kStreamStopType: return "stream stop";
    case kStreamCommitType: return "stream commit";
    case kStreamAbortType: return "stream abort";
    case kBeginPrepareType: return "begin prepare";
    case kPrepareType: return "prepare";
    case kStreamPrepareType: return "stream prepare";
    case kCommitPreparedType: return "commit prepared";
    case kRollbackPreparedType: return "rollback prepared";
    default: return nullptr;
  }
}

// Inside a Stream Start..Stop block, Relation, Type and the change messages start with the (sub)transaction's xid.
std::optional<uint32_t> ReadStreamXid(ByteReader& r, const DecoderState& state) {
  if (!state.in_stream_block) return std::nullopt;
  return r.ReadUint32("xid");
}

void WriteStreamXid(ByteWriter& w, const std::optional<uint32_t>& xid, const DecoderState& state) {
  if (state.in_stream_block) w.PutUint32(xid.value_or(0));
}

// TupleData: Int16 ncols, then per column a kind byte and, for 't' and 'b', Int32 len + bytes. `which` ("new
// tuple", "old tuple") names it in errors.
TupleData ReadTupleData(ByteReader& r, const char* which) {
  TupleData tuple;
  const uint16_t ncols = r.ReadUint16("column count");
  if (!r.ok()) return tuple;
  // Every column takes at least its kind byte: checked before reserving, so a lying count cannot allocate.
  if (ncols > r.remaining()) {
    r.Fail(absl::StrCat(which, " claims ", ncols, " columns but only ", r.remaining(), " bytes follow"));
    return tuple;
  }
  tuple.columns.reserve(ncols);
  for (uint16_t i = 0; i < ncols && r.ok(); ++i) {
    ColumnValue column;
    const uint8_t kind = r.ReadUint8("column kind");
    switch (kind) {
      case 'n':
        column.kind = ColumnValue::Kind::kNull;
        break;
      case 'u':
        column.kind = ColumnValue::Kind::kUnchanged;
        break;
      case 't':
      case 'b': {
        column.kind = static_cast<ColumnValue::Kind>(kind);
        const int32_t length = r.ReadInt32("column length");
        if (!r.ok()) break;
        if (length < 0) {
          r.Fail(absl::StrCat(which, " column ", i, " has negative length ", length));
        } else if (static_cast<size_t>(length) > r.remaining()) {
          r.Fail(absl::StrCat(which, " column ", i, " length ", length, " exceeds the ", r.remaining(),
                              " bytes left"));
        } else {
          column.data = r.ReadBytes(static_cast<size_t>(length), "column data");
        }
        break;
      }
      default:  // also a failed read (kind 0), where Fail keeps the earlier error
        r.Fail(absl::StrCat(which, " column ", i, " has unknown kind ", HexByte(kind)));
        break;
    }
    tuple.columns.push_back(column);
  }
  return tuple;
}

void WriteTupleData(ByteWriter& w, const TupleData& tuple) {
  w.PutUint16(static_cast<uint16_t>(tuple.columns.size()));
  for (const ColumnValue& column : tuple.columns) {
    w.PutUint8(static_cast<uint8_t>(column.kind));
    if (column.kind == ColumnValue::Kind::kText || column.kind == ColumnValue::Kind::kBinary) {
      w.PutInt32(static_cast<int32_t>(column.data.size()));
      w.PutBytes(column.data);
    }
  }
}

// 'B': Int64 final_lsn, Int64 commit_time, Int32 xid.
Begin ReadBegin(ByteReader& r) {
  Begin m;
  m.final_lsn = r.ReadLsn("final_lsn");
  m.commit_time = r.ReadInt64("commit_time");
  m.xid = r.ReadUint32("xid");
  return m;
}

void WriteBegin(ByteWriter& w, const Begin& m) {
  w.PutUint8(kBeginType);
  w.PutLsn(m.final_lsn);
  w.PutInt64(m.commit_time);
  w.PutUint32(m.xid);
}

// 'C': Int8 flags, Int64 commit_lsn, Int64 end_lsn, Int64 commit_time.
Commit ReadCommit(ByteReader& r) {
  Commit m;
  m.flags = r.ReadUint8("flags");
  m.commit_lsn = r.ReadLsn("commit_lsn");
  m.end_lsn = r.ReadLsn("end_lsn");
  m.commit_time = r.ReadInt64("commit_time");
  return m;
}

void WriteCommit(ByteWriter& w, const Commit& m) {
  w.PutUint8(kCommitType);
  w.PutUint8(m.flags);
  w.PutLsn(m.commit_lsn);
  w.PutLsn(m.end_lsn);
  w.PutInt64(m.commit_time);
}

// 'O': Int64 origin_lsn, String name.
Origin ReadOrigin(ByteReader& r) {
  Origin m;
  m.origin_lsn = r.ReadLsn("origin_lsn");
  m.name = r.ReadString("name");
  return m;
}

void WriteOrigin(ByteWriter& w, const Origin& m) {
  w.PutUint8(kOriginType);
  w.PutLsn(m.origin_lsn);
  w.PutString(m.name);
}

// 'R': xid?, Int32 oid, String nspname, String relname, Int8 replica identity, Int16 ncols, then per column Int8
// flags, String name, Int32 type OID, Int32 typmod.
Relation ReadRelation(ByteReader& r, const DecoderState& state) {
  Relation m;
  m.xid = ReadStreamXid(r, state);
  m.oid = r.ReadUint32("oid");
  m.nspname = r.ReadString("nspname");
  m.relname = r.ReadString("relname");
  m.replica_identity = static_cast<char>(r.ReadUint8("replica_identity"));
  if (r.ok() && m.replica_identity != 'd' && m.replica_identity != 'n' && m.replica_identity != 'f' &&
      m.replica_identity != 'i') {
    r.Fail(absl::StrCat("unknown replica identity ", HexByte(static_cast<uint8_t>(m.replica_identity))));
  }
  const uint16_t ncols = r.ReadUint16("column count");
  if (!r.ok()) return m;
  if (ncols > r.remaining() / kMinRelationColumnSize) {
    r.Fail(absl::StrCat("claims ", ncols, " columns but only ", r.remaining(), " bytes follow"));
    return m;
  }
  m.columns.reserve(ncols);
  for (uint16_t i = 0; i < ncols && r.ok(); ++i) {
    RelationColumn column;
    column.flags = r.ReadUint8("column flags");
    column.name = r.ReadString("column name");
    column.type_oid = r.ReadUint32("column type_oid");
    column.type_modifier = r.ReadInt32("column type_modifier");
    m.columns.push_back(std::move(column));
  }
  return m;
}

void WriteRelation(ByteWriter& w, const Relation& m, const DecoderState& state) {
  w.PutUint8(kRelationType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(m.oid);
  w.PutString(m.nspname);
  w.PutString(m.relname);
  w.PutUint8(static_cast<uint8_t>(m.replica_identity));
  w.PutUint16(static_cast<uint16_t>(m.columns.size()));
  for (const RelationColumn& column : m.columns) {
    w.PutUint8(column.flags);
    w.PutString(column.name);
    w.PutUint32(column.type_oid);
    w.PutInt32(column.type_modifier);
  }
}

// 'Y': xid?, Int32 oid, String nspname, String name.
Type ReadType(ByteReader& r, const DecoderState& state) {
  Type m;
  m.xid = ReadStreamXid(r, state);
  m.oid = r.ReadUint32("oid");
  m.nspname = r.ReadString("nspname");
  m.name = r.ReadString("name");
  return m;
}

void WriteType(ByteWriter& w, const Type& m, const DecoderState& state) {
  w.PutUint8(kTypeType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(m.oid);
  w.PutString(m.nspname);
  w.PutString(m.name);
}

// 'I': xid?, Int32 relation oid, 'N', TupleData.
Insert ReadInsert(ByteReader& r, const DecoderState& state) {
  Insert m;
  m.xid = ReadStreamXid(r, state);
  m.relation_oid = r.ReadUint32("relation_oid");
  const uint8_t marker = r.ReadUint8("new tuple marker");
  if (!r.ok()) return m;
  if (marker != kNewTupleMarker) {
    r.Fail(absl::StrCat("expected new tuple 'N' but got ", HexByte(marker)));
    return m;
  }
  m.new_tuple = ReadTupleData(r, "new tuple");
  return m;
}

void WriteInsert(ByteWriter& w, const Insert& m, const DecoderState& state) {
  w.PutUint8(kInsertType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(m.relation_oid);
  w.PutUint8(kNewTupleMarker);
  WriteTupleData(w, m.new_tuple);
}

// 'U': xid?, Int32 relation oid, optionally 'K' or 'O' + TupleData, then 'N' + TupleData.
Update ReadUpdate(ByteReader& r, const DecoderState& state) {
  Update m;
  m.xid = ReadStreamXid(r, state);
  m.relation_oid = r.ReadUint32("relation_oid");
  uint8_t marker = r.ReadUint8("tuple marker");
  if (!r.ok()) return m;
  if (marker == kKeyTupleMarker || marker == kOldTupleMarker) {
    m.old_kind = static_cast<char>(marker);
    m.old_tuple = ReadTupleData(r, "old tuple");
    marker = r.ReadUint8("new tuple marker");
    if (!r.ok()) return m;
    if (marker != kNewTupleMarker) {
      r.Fail(absl::StrCat("expected new tuple 'N' but got ", HexByte(marker)));
      return m;
    }
  } else if (marker != kNewTupleMarker) {
    r.Fail(absl::StrCat("expected 'K', 'O' or 'N' but got ", HexByte(marker)));
    return m;
  }
  m.new_tuple = ReadTupleData(r, "new tuple");
  return m;
}

void WriteUpdate(ByteWriter& w, const Update& m, const DecoderState& state) {
  w.PutUint8(kUpdateType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(m.relation_oid);
  if (m.old_kind != 0) {
    w.PutUint8(static_cast<uint8_t>(m.old_kind));
    WriteTupleData(w, m.old_tuple);
  }
  w.PutUint8(kNewTupleMarker);
  WriteTupleData(w, m.new_tuple);
}

// 'D': xid?, Int32 relation oid, 'K' or 'O', TupleData.
Delete ReadDelete(ByteReader& r, const DecoderState& state) {
  Delete m;
  m.xid = ReadStreamXid(r, state);
  m.relation_oid = r.ReadUint32("relation_oid");
  const uint8_t marker = r.ReadUint8("old tuple marker");
  if (!r.ok()) return m;
  if (marker != kKeyTupleMarker && marker != kOldTupleMarker) {
    r.Fail(absl::StrCat("expected old tuple 'K' or 'O' but got ", HexByte(marker)));
    return m;
  }
  m.old_kind = static_cast<char>(marker);
  m.old_tuple = ReadTupleData(r, "old tuple");
  return m;
}

void WriteDelete(ByteWriter& w, const Delete& m, const DecoderState& state) {
  w.PutUint8(kDeleteType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(m.relation_oid);
  w.PutUint8(static_cast<uint8_t>(m.old_kind));
  WriteTupleData(w, m.old_tuple);
}

// 'T': xid?, Int32 nrels, Int8 flags, Int32 relation oid × nrels.
Truncate ReadTruncate(ByteReader& r, const DecoderState& state) {
  Truncate m;
  m.xid = ReadStreamXid(r, state);
  const uint32_t nrels = r.ReadUint32("relation count");
  m.flags = r.ReadUint8("flags");
  if (!r.ok()) return m;
  if (nrels > r.remaining() / 4) {
    r.Fail(absl::StrCat("claims ", nrels, " relations but only ", r.remaining(), " bytes follow"));
    return m;
  }
  m.relation_oids.reserve(nrels);
  for (uint32_t i = 0; i < nrels; ++i) m.relation_oids.push_back(r.ReadUint32("relation oid"));
  return m;
}

void WriteTruncate(ByteWriter& w, const Truncate& m, const DecoderState& state) {
  w.PutUint8(kTruncateType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint32(static_cast<uint32_t>(m.relation_oids.size()));
  w.PutUint8(m.flags);
  for (uint32_t oid : m.relation_oids) w.PutUint32(oid);
}

// 'M': xid?, Int8 flags, Int64 lsn, String prefix, Int32 len, Bytes content.
LogicalMessage ReadLogicalMessage(ByteReader& r, const DecoderState& state) {
  LogicalMessage m;
  m.xid = ReadStreamXid(r, state);
  m.flags = r.ReadUint8("flags");
  m.lsn = r.ReadLsn("lsn");
  m.prefix = r.ReadString("prefix");
  const int32_t length = r.ReadInt32("content length");
  if (!r.ok()) return m;
  if (length < 0) {
    r.Fail(absl::StrCat("content has negative length ", length));
  } else if (static_cast<size_t>(length) > r.remaining()) {
    r.Fail(absl::StrCat("content length ", length, " exceeds the ", r.remaining(), " bytes left"));
  } else {
    m.content = r.ReadBytes(static_cast<size_t>(length), "content");
  }
  return m;
}

void WriteLogicalMessage(ByteWriter& w, const LogicalMessage& m, const DecoderState& state) {
  w.PutUint8(kMessageType);
  WriteStreamXid(w, m.xid, state);
  w.PutUint8(m.flags);
  w.PutLsn(m.lsn);
  w.PutString(m.prefix);
  w.PutInt32(static_cast<int32_t>(m.content.size()));
  w.PutBytes(m.content);
}

// 'S': Int32 xid, Int8 first_segment.
StreamStart ReadStreamStart(ByteReader& r) {
  StreamStart m;
  m.xid = r.ReadUint32("xid");
  m.first_segment = r.ReadUint8("first_segment");
  return m;
}

void WriteStreamStart(ByteWriter& w, const StreamStart& m) {
  w.PutUint8(kStreamStartType);
  w.PutUint32(m.xid);
  w.PutUint8(m.first_segment);
}

// 'E': no fields.
void WriteStreamStop(ByteWriter& w, const StreamStop&) { w.PutUint8(kStreamStopType); }

// 'c': Int32 xid, Int8 flags, Int64 commit_lsn, Int64 end_lsn, Int64 commit_time.
StreamCommit ReadStreamCommit(ByteReader& r) {
  StreamCommit m;
  m.xid = r.ReadUint32("xid");
  m.flags = r.ReadUint8("flags");
  m.commit_lsn = r.ReadLsn("commit_lsn");
  m.end_lsn = r.ReadLsn("end_lsn");
  m.commit_time = r.ReadInt64("commit_time");
  return m;
}

void WriteStreamCommit(ByteWriter& w, const StreamCommit& m) {
  w.PutUint8(kStreamCommitType);
  w.PutUint32(m.xid);
  w.PutUint8(m.flags);
  w.PutLsn(m.commit_lsn);
  w.PutLsn(m.end_lsn);
  w.PutInt64(m.commit_time);
}

// Proto 4 with streaming = parallel adds abort_lsn and abort_time to Stream Abort.
bool StreamAbortHasAbortLsn(const DecoderState& state) {
  return state.proto_version >= 4 && state.parallel_streaming;
}

// 'A': Int32 xid, Int32 subxid, then (see StreamAbortHasAbortLsn) Int64 abort_lsn, Int64 abort_time.
StreamAbort ReadStreamAbort(ByteReader& r, const DecoderState& state) {
  StreamAbort m;
  m.xid = r.ReadUint32("xid");
  m.subxid = r.ReadUint32("subxid");
  if (StreamAbortHasAbortLsn(state)) {
    m.abort_lsn = r.ReadLsn("abort_lsn");
    m.abort_time = r.ReadInt64("abort_time");
  }
  return m;
}

void WriteStreamAbort(ByteWriter& w, const StreamAbort& m, const DecoderState& state) {
  w.PutUint8(kStreamAbortType);
  w.PutUint32(m.xid);
  w.PutUint32(m.subxid);
  if (StreamAbortHasAbortLsn(state)) {
    w.PutLsn(m.abort_lsn.value_or(Lsn()));
    w.PutInt64(m.abort_time.value_or(0));
  }
}

// 'b': Int64 prepare_lsn, Int64 end_lsn, Int64 prepare_time, Int32 xid, String gid.
BeginPrepare ReadBeginPrepare(ByteReader& r) {
  BeginPrepare m;
  m.prepare_lsn = r.ReadLsn("prepare_lsn");
  m.end_lsn = r.ReadLsn("end_lsn");
  m.prepare_time = r.ReadInt64("prepare_time");
  m.xid = r.ReadUint32("xid");
  m.gid = r.ReadString("gid");
  return m;
}

void WriteBeginPrepare(ByteWriter& w, const BeginPrepare& m) {
  w.PutUint8(kBeginPrepareType);
  w.PutLsn(m.prepare_lsn);
  w.PutLsn(m.end_lsn);
  w.PutInt64(m.prepare_time);
  w.PutUint32(m.xid);
  w.PutString(m.gid);
}

// 'P' and 'p': Int8 flags, Int64 prepare_lsn, Int64 end_lsn, Int64 prepare_time, Int32 xid, String gid.
Prepare ReadPrepare(ByteReader& r, bool stream) {
  Prepare m;
  m.stream = stream;
  m.flags = r.ReadUint8("flags");
  m.prepare_lsn = r.ReadLsn("prepare_lsn");
  m.end_lsn = r.ReadLsn("end_lsn");
  m.prepare_time = r.ReadInt64("prepare_time");
  m.xid = r.ReadUint32("xid");
  m.gid = r.ReadString("gid");
  return m;
}

void WritePrepare(ByteWriter& w, const Prepare& m) {
  w.PutUint8(m.stream ? kStreamPrepareType : kPrepareType);
  w.PutUint8(m.flags);
  w.PutLsn(m.prepare_lsn);
  w.PutLsn(m.end_lsn);
  w.PutInt64(m.prepare_time);
  w.PutUint32(m.xid);
  w.PutString(m.gid);
}

// 'K': Int8 flags, Int64 commit_lsn, Int64 end_lsn, Int64 commit_time, Int32 xid, String gid.
CommitPrepared ReadCommitPrepared(ByteReader& r) {
  CommitPrepared m;
  m.flags = r.ReadUint8("flags");
  m.commit_lsn = r.ReadLsn("commit_lsn");
  m.end_lsn = r.ReadLsn("end_lsn");
  m.commit_time = r.ReadInt64("commit_time");
  m.xid = r.ReadUint32("xid");
  m.gid = r.ReadString("gid");
  return m;
}

void WriteCommitPrepared(ByteWriter& w, const CommitPrepared& m) {
  w.PutUint8(kCommitPreparedType);
  w.PutUint8(m.flags);
  w.PutLsn(m.commit_lsn);
  w.PutLsn(m.end_lsn);
  w.PutInt64(m.commit_time);
  w.PutUint32(m.xid);
  w.PutString(m.gid);
}

// 'r': Int8 flags, Int64 prepare_end_lsn, Int64 rollback_end_lsn, Int64 prepare_time, Int64 rollback_time,
// Int32 xid, String gid.
RollbackPrepared ReadRollbackPrepared(ByteReader& r) {
  RollbackPrepared m;
  m.flags = r.ReadUint8("flags");
  m.prepare_end_lsn = r.ReadLsn("prepare_end_lsn");
  m.rollback_end_lsn = r.ReadLsn("rollback_end_lsn");
  m.prepare_time = r.ReadInt64("prepare_time");
  m.rollback_time = r.ReadInt64("rollback_time");
  m.xid = r.ReadUint32("xid");
  m.gid = r.ReadString("gid");
  return m;
}

void WriteRollbackPrepared(ByteWriter& w, const RollbackPrepared& m) {
  w.PutUint8(kRollbackPreparedType);
  w.PutUint8(m.flags);
  w.PutLsn(m.prepare_end_lsn);
  w.PutLsn(m.rollback_end_lsn);
  w.PutInt64(m.prepare_time);
  w.PutInt64(m.rollback_time);
  w.PutUint32(m.xid);
  w.PutString(m.gid);
}

// Reads the body of a message whose type byte MessageName() knows.
Message ReadMessage(char type, ByteReader& r, const DecoderState& state) {
  switch (type) {
    case kBeginType: return ReadBegin(r);
    case kCommitType: return ReadCommit(r);
    case kOriginType: return ReadOrigin(r);
    case kRelationType: return ReadRelation(r, state);
    case kTypeType: return ReadType(r, state);
    case kInsertType: return ReadInsert(r, state);
    case kUpdateType: return ReadUpdate(r, state);
    case kDeleteType: return ReadDelete(r, state);
    case kTruncateType: return ReadTruncate(r, state);
    case kMessageType: return ReadLogicalMessage(r, state);
    case kStreamStartType: return ReadStreamStart(r);
    case kStreamStopType: return StreamStop{};
    case kStreamCommitType: return ReadStreamCommit(r);
    case kStreamAbortType: return ReadStreamAbort(r, state);
    case kBeginPrepareType: return ReadBeginPrepare(r);
    case kPrepareType: return ReadPrepare(r, /*stream=*/false);
    case kStreamPrepareType: return ReadPrepare(r, /*stream=*/true);
    case kCommitPreparedType: return ReadCommitPrepared(r);
    case kRollbackPreparedType: return ReadRollbackPrepared(r);
  }
  // Not reached while this switch and MessageName() list the same bytes; fail rather than return a default.
  r.Fail(absl::StrCat("no reader for type ", HexByte(static_cast<uint8_t>(type))));
  return StreamStop{};
}

// Encode's visitor: one write function per alternative of Message.
struct MessageWriter {
  ByteWriter& w;
  const DecoderState& state;

  void operator()(const Begin& m) const { WriteBegin(w, m); }
  void operator()(const Commit& m) const { WriteCommit(w, m); }
  void operator()(const Origin& m) const { WriteOrigin(w, m); }
  void operator()(const Relation& m) const { WriteRelation(w, m, state); }
  void operator()(const Type& m) const { WriteType(w, m, state); }
  void operator()(const Insert& m) const { WriteInsert(w, m, state); }
  void operator()(const Update& m) const { WriteUpdate(w, m, state); }
  void operator()(const Delete& m) const { WriteDelete(w, m, state); }
  void operator()(const Truncate& m) const { WriteTruncate(w, m, state); }
  void operator()(const LogicalMessage& m) const { WriteLogicalMessage(w, m, state); }
  void operator()(const StreamStart& m) const { WriteStreamStart(w, m); }
  void operator()(const StreamStop& m) const { WriteStreamStop(w, m); }
  void operator()(const StreamCommit& m) const { WriteStreamCommit(w, m); }
  void operator()(const StreamAbort& m) const { WriteStreamAbort(w, m, state); }
  void operator()(const BeginPrepare& m) const { WriteBeginPrepare(w, m); }
  void operator()(const Prepare& m) const { WritePrepare(w, m); }
  void operator()(const CommitPrepared& m) const { WriteCommitPrepared(w, m); }
  void operator()(const RollbackPrepared& m) const { WriteRollbackPrepared(w, m); }
};

}  // namespace

absl::StatusOr<Message> Decode(std::string_view bytes, DecoderState& state) {
  if (bytes.empty()) return absl::DataLossError("pgoutput: empty message");
  const char type = bytes[0];
  const char* name = MessageName(type);
  if (name == nullptr) {
    return absl::DataLossError(
        absl::StrCat("pgoutput: unknown message type ", HexByte(static_cast<uint8_t>(type))));
  }
  ByteReader r(bytes.substr(1), name);
  Message message = ReadMessage(type, r, state);
  if (absl::Status status = r.Finish(); !status.ok()) return status;
  // The block state changes only once its message is known to be whole.
  if (type == kStreamStartType) state.in_stream_block = true;
  if (type == kStreamStopType) state.in_stream_block = false;
  return message;
}

std::string Encode(const Message& message, const DecoderState& state) {
  ByteWriter w;
  std::visit(MessageWriter{w, state}, message);
  return std::move(w).Take();
}

}  // namespace outbox::pg
