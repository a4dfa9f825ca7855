// pgoutput codec tests: every message of protos 1 to 4 round-trips, literal bytes pin the layouts, and truncated,
// oversized, lying and random buffers give DATA_LOSS, never a crash.
#include "pg/pgoutput.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace outbox::pg {

// Field-by-field equality for the round-trip checks (the API structs declare no operator==). In outbox::pg so
// that argument-dependent lookup finds it, also from std::variant's and std::vector's own operator==.
auto Tie(const ColumnValue& v) { return std::tie(v.kind, v.data); }
auto Tie(const TupleData& v) { return std::tie(v.columns); }
auto Tie(const Begin& v) { return std::tie(v.final_lsn, v.commit_time, v.xid); }
auto Tie(const Commit& v) { return std::tie(v.flags, v.commit_lsn, v.end_lsn, v.commit_time); }
auto Tie(const Origin& v) { return std::tie(v.origin_lsn, v.name); }
auto Tie(const RelationColumn& v) { return std::tie(v.flags, v.name, v.type_oid, v.type_modifier); }
auto Tie(const Relation& v) {
  return std::tie(v.xid, v.oid, v.nspname, v.relname, v.replica_identity, v.columns);
}
auto Tie(const Type& v) { return std::tie(v.xid, v.oid, v.nspname, v.name); }
auto Tie(const Insert& v) { return std::tie(v.xid, v.relation_oid, v.new_tuple); }
auto Tie(const Update& v) { return std::tie(v.xid, v.relation_oid, v.old_kind, v.old_tuple, v.new_tuple); }
auto Tie(const Delete& v) { return std::tie(v.xid, v.relation_oid, v.old_kind, v.old_tuple); }
auto Tie(const Truncate& v) { return std::tie(v.xid, v.flags, v.relation_oids); }
auto Tie(const LogicalMessage& v) { return std::tie(v.xid, v.flags, v.lsn, v.prefix, v.content); }
auto Tie(const StreamStart& v) { return std::tie(v.xid, v.first_segment); }
auto Tie(const StreamStop&) { return std::tie(); }
auto Tie(const StreamCommit& v) { return std::tie(v.xid, v.flags, v.commit_lsn, v.end_lsn, v.commit_time); }
auto Tie(const StreamAbort& v) { return std::tie(v.xid, v.subxid, v.abort_lsn, v.abort_time); }
auto Tie(const BeginPrepare& v) { return std::tie(v.prepare_lsn, v.end_lsn, v.prepare_time, v.xid, v.gid); }
auto Tie(const Prepare& v) {
  return std::tie(v.stream, v.flags, v.prepare_lsn, v.end_lsn, v.prepare_time, v.xid, v.gid);
}
auto Tie(const CommitPrepared& v) {
  return std::tie(v.flags, v.commit_lsn, v.end_lsn, v.commit_time, v.xid, v.gid);
}
auto Tie(const RollbackPrepared& v) {
  return std::tie(v.flags, v.prepare_end_lsn, v.rollback_end_lsn, v.prepare_time, v.rollback_time, v.xid, v.gid);
}

template <typename T>
  requires requires(const T& v) { Tie(v); }
bool operator==(const T& a, const T& b) {
  return Tie(a) == Tie(b);
}

namespace {

using Kind = ColumnValue::Kind;

// Bytes from a list of byte values: literal layouts read better as numbers than as escaped strings.
std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string Hex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

DecoderState State(int proto_version, bool in_stream_block = false, bool parallel_streaming = false) {
  DecoderState state;
  state.proto_version = proto_version;
  state.in_stream_block = in_stream_block;
  state.parallel_streaming = parallel_streaming;
  return state;
}

// One sample message and the decoder state it is written and read in.
struct Case {
  std::string name;
  Message message;
  DecoderState state;
};

constexpr std::string_view kBinaryValue("\x00\x01\xfe\xff", 4);

TupleData EveryColumnKind() {
  return TupleData{{{Kind::kNull, {}},
                    {Kind::kUnchanged, {}},
                    {Kind::kText, "hello"},
                    {Kind::kText, ""},
                    {Kind::kBinary, kBinaryValue},
                    {Kind::kBinary, ""}}};
}

Relation OutboxRelation(std::optional<uint32_t> xid) {
  return Relation{xid,
                  16384,
                  "public",
                  "outbox",
                  'f',
                  {{1, "id", 20, -1}, {0, "payload", 3802, -1}, {0, "topic", 1043, 68}, {0, "", 25, -1}}};
}

// At least one message of every type byte, outside and (where it applies) inside a stream block.
std::vector<Case> EveryMessage() {
  const TupleData row = EveryColumnKind();
  const TupleData key{{{Kind::kText, "42"}}};
  const TupleData empty{};
  std::vector<Case> cases = {
      // Proto 1.
      {"begin", Begin{Lsn(0x16B374D848), 725'000'000'123'456, 757}, State(1)},
      {"begin extremes", Begin{Lsn(~uint64_t{0}), INT64_MIN, UINT32_MAX}, State(1)},
      {"commit", Commit{0, Lsn(0x16B374D848), Lsn(0x16B374D878), 725'000'000'123'999}, State(1)},
      {"origin", Origin{Lsn(0x1000), "node_a"}, State(1)},
      {"origin empty name", Origin{Lsn(), ""}, State(1)},
      {"relation", OutboxRelation(std::nullopt), State(1)},
      {"relation pg_catalog no columns", Relation{std::nullopt, 1259, "", "pg_class", 'n', {}}, State(1)},
      {"relation identity default", Relation{std::nullopt, 1, "s", "t", 'd', {{0, "a", 23, -1}}}, State(1)},
      {"relation identity index", Relation{std::nullopt, 2, "s", "t", 'i', {{1, "a", 23, -1}}}, State(1)},
      {"type", Type{std::nullopt, 16500, "public", "mood"}, State(1)},
      {"insert every column kind", Insert{std::nullopt, 16384, row}, State(1)},
      {"insert no columns", Insert{std::nullopt, 16384, empty}, State(1)},
      {"update no old tuple", Update{std::nullopt, 16384, 0, {}, row}, State(1)},
      {"update old key", Update{std::nullopt, 16384, 'K', key, row}, State(1)},
      {"update old row", Update{std::nullopt, 16384, 'O', row, row}, State(1)},
      {"delete key", Delete{std::nullopt, 16384, 'K', key}, State(1)},
      {"delete old row", Delete{std::nullopt, 16384, 'O', row}, State(1)},
      {"truncate none", Truncate{std::nullopt, 0, {}}, State(1)},
      {"truncate cascade restart", Truncate{std::nullopt, 3, {16384, 16390, UINT32_MAX}}, State(1)},
      {"message transactional", LogicalMessage{std::nullopt, 1, Lsn(0x2000), "outbox", "{\"id\":1}"}, State(1)},
      {"message empty", LogicalMessage{std::nullopt, 0, Lsn(), "", ""}, State(1)},
      {"message binary", LogicalMessage{std::nullopt, 0, Lsn(7), "p", kBinaryValue}, State(1)},
      // Proto 2: stream control, outside a block.
      {"stream start first", StreamStart{795, 1}, State(2)},
      {"stream start later", StreamStart{795, 0}, State(2)},
      {"stream stop", StreamStop{}, State(2, /*in_stream_block=*/true)},
      {"stream commit", StreamCommit{795, 0, Lsn(0x3000), Lsn(0x3030), 725'000'000'000'001}, State(2)},
      {"stream abort top level", StreamAbort{795, 795, std::nullopt, std::nullopt}, State(2)},
      {"stream abort subxact", StreamAbort{795, 796, std::nullopt, std::nullopt}, State(2)},
      // Proto 2: inside a block every change and catalog message carries the (sub)transaction xid.
      {"streamed relation", OutboxRelation(796), State(2, true)},
      {"streamed type", Type{796, 16500, "public", "mood"}, State(2, true)},
      {"streamed insert", Insert{796, 16384, row}, State(2, true)},
      {"streamed update", Update{796, 16384, 'K', key, row}, State(2, true)},
      {"streamed delete", Delete{796, 16384, 'O', row}, State(2, true)},
      {"streamed truncate", Truncate{796, 1, {16384}}, State(2, true)},
      {"streamed message", LogicalMessage{796, 1, Lsn(0x4000), "outbox", "x"}, State(2, true)},
      // Proto 3: two-phase.
      {"begin prepare", BeginPrepare{Lsn(0x5000), Lsn(0x5040), 725'000'000'000'002, 800, "gid-1"}, State(3)},
      {"prepare", Prepare{false, 0, Lsn(0x5000), Lsn(0x5040), 725'000'000'000'003, 800, "gid-1"}, State(3)},
      {"prepare empty gid", Prepare{false, 0, Lsn(1), Lsn(2), 3, 4, ""}, State(3)},
      {"stream prepare", Prepare{true, 0, Lsn(0x6000), Lsn(0x6040), 725'000'000'000'004, 801, "gid-2"}, State(3)},
      {"commit prepared", CommitPrepared{0, Lsn(0x7000), Lsn(0x7040), 725'000'000'000'005, 800, "gid-1"}, State(3)},
      {"rollback prepared",
       RollbackPrepared{0, Lsn(0x5040), Lsn(0x8040), 725'000'000'000'003, 725'000'000'000'006, 802, "gid-3"},
       State(3)},
      // Proto 4: Stream Abort grows abort_lsn/abort_time only with streaming = parallel.
      {"stream abort proto 4 parallel", StreamAbort{795, 796, Lsn(0x9000), 725'000'000'000'007}, State(4, false, true)},
      {"stream abort proto 4 not parallel", StreamAbort{795, 796, std::nullopt, std::nullopt}, State(4)},
      {"streamed insert proto 4 parallel", Insert{797, 16384, key}, State(4, true, true)},
  };
  return cases;
}

// Decodes `bytes` in a copy of `state`.
absl::StatusOr<Message> DecodeIn(std::string_view bytes, DecoderState state) { return Decode(bytes, state); }

// The exact error for `bytes`, or "ok".
std::string ErrorOf(std::string_view bytes, DecoderState state = State(4)) {
  absl::StatusOr<Message> decoded = Decode(bytes, state);
  if (decoded.ok()) return "ok";
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  return std::string(decoded.status().message());
}

TEST(PgOutput, EveryMessageOfProtos1To4RoundTrips) {
  for (const Case& c : EveryMessage()) {
    SCOPED_TRACE(c.name);
    const std::string bytes = Encode(c.message, c.state);
    absl::StatusOr<Message> decoded = DecodeIn(bytes, c.state);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_TRUE(*decoded == c.message);
    EXPECT_EQ(Hex(Encode(*decoded, c.state)), Hex(bytes));
  }
}

TEST(PgOutput, SampleMessagesCoverEveryTypeByte) {
  std::set<char> seen;
  for (const Case& c : EveryMessage()) seen.insert(Encode(c.message, c.state)[0]);
  EXPECT_EQ(std::string(seen.begin(), seen.end()), "ABCDEIKMOPRSTUYbcpr");
}

TEST(PgOutput, ThreeHundredKilobyteTextValueRoundTrips) {
  std::string big(300 * 1024, 'j');
  for (size_t i = 0; i < big.size(); i += 97) big[i] = static_cast<char>('a' + i % 26);
  const Insert insert{std::nullopt, 16384, {{{Kind::kText, "1"}, {Kind::kText, big}, {Kind::kNull, {}}}}};
  const std::string bytes = Encode(insert, State(1));
  EXPECT_EQ(bytes.size(), 1 + 4 + 1 + 2 + (1 + 4 + 1) + (1 + 4 + big.size()) + 1);
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Insert& got = std::get<Insert>(*decoded);
  ASSERT_EQ(got.new_tuple.columns.size(), 3u);
  EXPECT_EQ(got.new_tuple.columns[1].data, big);
}

TEST(PgOutput, DecodedValuesAreViewsIntoTheInput) {
  const std::string bytes = Encode(Insert{std::nullopt, 1, {{{Kind::kText, "abc"}}}}, State(1));
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const std::string_view data = std::get<Insert>(*decoded).new_tuple.columns[0].data;
  EXPECT_EQ(data.data(), bytes.data() + bytes.size() - 3);
}

// Literal layouts: these bytes are what PostgreSQL's proto.c writes.

TEST(PgOutput, BeginLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'B',                                             //
                                   0x00, 0x00, 0x00, 0x16, 0xB3, 0x74, 0xD8, 0x48,  // final_lsn 16/B374D848
                                   0x00, 0x02, 0x93, 0x64, 0xD7, 0x2C, 0xE2, 0x40,  // commit_time
                                   0x00, 0x00, 0x02, 0xF5});                        // xid 757
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Begin& begin = std::get<Begin>(*decoded);
  EXPECT_EQ(begin.final_lsn.ToString(), "16/B374D848");
  EXPECT_EQ(begin.commit_time, 0x29364D72CE240);
  EXPECT_EQ(begin.xid, 757u);
  EXPECT_EQ(Hex(Encode(begin, State(1))), Hex(bytes));
}

TEST(PgOutput, CommitLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'C', 0x00,                                       // flags
                                   0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10,  // commit_lsn 1/10
                                   0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40,  // end_lsn 1/40
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE});  // commit_time -2
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Commit& commit = std::get<Commit>(*decoded);
  EXPECT_EQ(commit.commit_lsn.ToString(), "1/10");
  EXPECT_EQ(commit.end_lsn.ToString(), "1/40");
  EXPECT_EQ(commit.commit_time, -2);
  EXPECT_EQ(Hex(Encode(commit, State(1))), Hex(bytes));
}

TEST(PgOutput, RelationLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'R', 0x00, 0x00, 0x40, 0x00}) + "public" + '\0' + "outbox" + '\0' +
                            Bytes({'f', 0x00, 0x02,                                 // replica identity, ncols
                                   0x01}) + "id" + '\0' +                          // key column "id"
                            Bytes({0x00, 0x00, 0x00, 0x14, 0xFF, 0xFF, 0xFF, 0xFF,  // int8, typmod -1
                                   0x00}) + "topic" + '\0' +                       // column "topic"
                            Bytes({0x00, 0x00, 0x04, 0x13, 0x00, 0x00, 0x00, 0x44});  // varchar(64)
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Relation& relation = std::get<Relation>(*decoded);
  EXPECT_FALSE(relation.xid.has_value());
  EXPECT_EQ(relation.oid, 16384u);
  EXPECT_EQ(relation.nspname, "public");
  EXPECT_EQ(relation.relname, "outbox");
  EXPECT_EQ(relation.replica_identity, 'f');
  ASSERT_EQ(relation.columns.size(), 2u);
  EXPECT_EQ(relation.columns[0].flags, 1);
  EXPECT_EQ(relation.columns[0].name, "id");
  EXPECT_EQ(relation.columns[0].type_oid, 20u);
  EXPECT_EQ(relation.columns[0].type_modifier, -1);
  EXPECT_EQ(relation.columns[1].name, "topic");
  EXPECT_EQ(relation.columns[1].type_oid, 1043u);
  EXPECT_EQ(relation.columns[1].type_modifier, 68);
  EXPECT_EQ(Hex(Encode(relation, State(1))), Hex(bytes));
}

TEST(PgOutput, InsertLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'I', 0x00, 0x00, 0x40, 0x00,  // relation 16384
                                   'N', 0x00, 0x04,              // new tuple of 4 columns
                                   'n', 'u',                     // null, unchanged TOAST
                                   't', 0x00, 0x00, 0x00, 0x02, 'h', 'i',  // text "hi"
                                   'b', 0x00, 0x00, 0x00, 0x01, 0xFF});    // binary 0xff
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Insert& insert = std::get<Insert>(*decoded);
  EXPECT_FALSE(insert.xid.has_value());
  EXPECT_EQ(insert.relation_oid, 16384u);
  ASSERT_EQ(insert.new_tuple.columns.size(), 4u);
  EXPECT_EQ(insert.new_tuple.columns[0].kind, Kind::kNull);
  EXPECT_EQ(insert.new_tuple.columns[1].kind, Kind::kUnchanged);
  EXPECT_EQ(insert.new_tuple.columns[2].kind, Kind::kText);
  EXPECT_EQ(insert.new_tuple.columns[2].data, "hi");
  EXPECT_EQ(insert.new_tuple.columns[3].kind, Kind::kBinary);
  EXPECT_EQ(insert.new_tuple.columns[3].data, "\xFF");
  EXPECT_EQ(Hex(Encode(insert, State(1))), Hex(bytes));
}

TEST(PgOutput, StreamedInsertCarriesTheXidBeforeTheRelationOid) {
  const std::string bytes = Bytes({'I', 0x00, 0x00, 0x03, 0x1C,  // xid 796
                                   0x00, 0x00, 0x40, 0x00,       // relation 16384
                                   'N', 0x00, 0x01, 'n'});
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(2, /*in_stream_block=*/true));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Insert& insert = std::get<Insert>(*decoded);
  EXPECT_EQ(insert.xid, 796u);
  EXPECT_EQ(insert.relation_oid, 16384u);
  // Outside a block the same bytes do not parse: the relation oid is taken for the marker.
  EXPECT_EQ(ErrorOf(bytes, State(2)), "insert: expected new tuple 'N' but got 0x00");
}

TEST(PgOutput, UpdateWithKeyLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'U', 0x00, 0x00, 0x40, 0x00,                          //
                                   'K', 0x00, 0x01, 't', 0x00, 0x00, 0x00, 0x01, '7',  // old key (7)
                                   'N', 0x00, 0x02, 't', 0x00, 0x00, 0x00, 0x01, '8', 'u'});
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Update& update = std::get<Update>(*decoded);
  EXPECT_EQ(update.old_kind, 'K');
  ASSERT_EQ(update.old_tuple.columns.size(), 1u);
  EXPECT_EQ(update.old_tuple.columns[0].data, "7");
  ASSERT_EQ(update.new_tuple.columns.size(), 2u);
  EXPECT_EQ(update.new_tuple.columns[0].data, "8");
  EXPECT_EQ(update.new_tuple.columns[1].kind, Kind::kUnchanged);
  EXPECT_EQ(Hex(Encode(update, State(1))), Hex(bytes));
}

TEST(PgOutput, TruncateLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'T', 0x00, 0x00, 0x00, 0x02,  // nrels
                                   0x01,                         // CASCADE
                                   0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x40, 0x06});
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Truncate& truncate = std::get<Truncate>(*decoded);
  EXPECT_EQ(truncate.flags, 1);
  EXPECT_EQ(truncate.relation_oids, (std::vector<uint32_t>{16384, 16390}));
  EXPECT_EQ(Hex(Encode(truncate, State(1))), Hex(bytes));
}

TEST(PgOutput, LogicalMessageLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'M', 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00}) + "outbox" +
                            '\0' + Bytes({0x00, 0x00, 0x00, 0x03}) + "abc";
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const LogicalMessage& message = std::get<LogicalMessage>(*decoded);
  EXPECT_TRUE(message.transactional());
  EXPECT_EQ(message.lsn.ToString(), "0/2000");
  EXPECT_EQ(message.prefix, "outbox");
  EXPECT_EQ(message.content, "abc");
  EXPECT_EQ(Hex(Encode(message, State(1))), Hex(bytes));
}

TEST(PgOutput, RollbackPreparedLayoutFromLiteralBytes) {
  const std::string bytes = Bytes({'r', 0x00,                                       // flags
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,  // prepare_end_lsn
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,  // rollback_end_lsn
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,  // prepare_time
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,  // rollback_time
                                   0x00, 0x00, 0x00, 0x05}) +                       // xid
                            "g" + '\0';
  absl::StatusOr<Message> decoded = DecodeIn(bytes, State(3));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const RollbackPrepared& rollback = std::get<RollbackPrepared>(*decoded);
  EXPECT_EQ(rollback.prepare_end_lsn, Lsn(1));
  EXPECT_EQ(rollback.rollback_end_lsn, Lsn(2));
  EXPECT_EQ(rollback.prepare_time, 3);
  EXPECT_EQ(rollback.rollback_time, 4);
  EXPECT_EQ(rollback.xid, 5u);
  EXPECT_EQ(rollback.gid, "g");
}

TEST(PgOutput, StreamAbortCarriesAbortLsnOnlyWithProto4Parallel) {
  const std::string short_form = Bytes({'A', 0x00, 0x00, 0x03, 0x1B, 0x00, 0x00, 0x03, 0x1C});
  const std::string long_form = short_form + Bytes({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0x00,  // abort_lsn
                                                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07});  // time
  absl::StatusOr<Message> parallel = DecodeIn(long_form, State(4, false, true));
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  EXPECT_EQ(std::get<StreamAbort>(*parallel).xid, 795u);
  EXPECT_EQ(std::get<StreamAbort>(*parallel).subxid, 796u);
  EXPECT_EQ(std::get<StreamAbort>(*parallel).abort_lsn, Lsn(0x9000));
  EXPECT_EQ(std::get<StreamAbort>(*parallel).abort_time, 7);

  for (DecoderState state : {State(2), State(3), State(4), State(3, false, true)}) {
    absl::StatusOr<Message> plain = DecodeIn(short_form, state);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_FALSE(std::get<StreamAbort>(*plain).abort_lsn.has_value());
    EXPECT_EQ(ErrorOf(long_form, state), "stream abort: 16 trailing bytes");
  }
  EXPECT_EQ(ErrorOf(short_form, State(4, false, true)), "stream abort: truncated at abort_lsn: needs 8 bytes, 0 left");
}

// The stream block state.

TEST(PgOutput, StreamStartOpensTheBlockAndStreamStopClosesIt) {
  DecoderState state = State(2);
  ASSERT_TRUE(Decode(Encode(StreamStart{795, 1}, state), state).ok());
  EXPECT_TRUE(state.in_stream_block);
  absl::StatusOr<Message> insert = Decode(Encode(Insert{796, 1, {}}, state), state);
  ASSERT_TRUE(insert.ok()) << insert.status();
  EXPECT_EQ(std::get<Insert>(*insert).xid, 796u);
  ASSERT_TRUE(Decode(Encode(StreamStop{}, state), state).ok());
  EXPECT_FALSE(state.in_stream_block);
  insert = Decode(Encode(Insert{std::nullopt, 1, {}}, state), state);
  ASSERT_TRUE(insert.ok()) << insert.status();
  EXPECT_FALSE(std::get<Insert>(*insert).xid.has_value());
}

TEST(PgOutput, BrokenStreamStartOrStopLeavesTheBlockStateUnchanged) {
  DecoderState state = State(2);
  EXPECT_FALSE(Decode(Bytes({'S', 0x00, 0x00, 0x03}), state).ok());
  EXPECT_FALSE(state.in_stream_block);
  state.in_stream_block = true;
  EXPECT_FALSE(Decode(Bytes({'E', 0x00}), state).ok());
  EXPECT_TRUE(state.in_stream_block);
}

// Malformed input.

TEST(PgOutput, EveryPrefixOfEveryMessageIsDataLoss) {
  for (const Case& c : EveryMessage()) {
    SCOPED_TRACE(c.name);
    const std::string bytes = Encode(c.message, c.state);
    for (size_t n = 0; n < bytes.size(); ++n) {
      absl::StatusOr<Message> decoded = DecodeIn(std::string_view(bytes).substr(0, n), c.state);
      ASSERT_FALSE(decoded.ok()) << "prefix of " << n << " bytes decoded";
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
    }
  }
}

TEST(PgOutput, TrailingBytesAfterEveryMessageAreDataLoss) {
  for (const Case& c : EveryMessage()) {
    SCOPED_TRACE(c.name);
    const std::string message = ErrorOf(Encode(c.message, c.state) + '\0', c.state);
    EXPECT_TRUE(message.ends_with(": 1 trailing byte")) << message;
  }
  EXPECT_EQ(ErrorOf(Encode(Begin{}, State(1)) + "abc"), "begin: 3 trailing bytes");
  EXPECT_EQ(ErrorOf(Bytes({'E', 1, 2})), "stream stop: 2 trailing bytes");
}

TEST(PgOutput, EmptyMessageIsDataLoss) { EXPECT_EQ(ErrorOf(""), "pgoutput: empty message"); }

TEST(PgOutput, UnknownTypeByteIsDataLossNamingTheByte) {
  EXPECT_EQ(ErrorOf("Z"), "pgoutput: unknown message type 0x5a");
  EXPECT_EQ(ErrorOf(Bytes({0x00, 1, 2, 3})), "pgoutput: unknown message type 0x00");
  const std::string known = "ABCDEIKMOPRSTUYbcpr";
  for (int b = 0; b < 256; ++b) {
    if (known.find(static_cast<char>(b)) != std::string::npos) continue;
    EXPECT_TRUE(ErrorOf(Bytes({b, 0, 0, 0, 0})).starts_with("pgoutput: unknown message type 0x")) << b;
  }
}

TEST(PgOutput, TruncatedFieldIsDataLossNamingTheField) {
  EXPECT_EQ(ErrorOf(Bytes({'B', 0, 0, 0, 0, 0, 0, 0, 0, 9})),
            "begin: truncated at commit_time: needs 8 bytes, 1 left");
  EXPECT_EQ(ErrorOf(Bytes({'S', 0, 0, 0, 1})), "stream start: truncated at first_segment: needs 1 byte, 0 left");
}

TEST(PgOutput, InsertWithoutNewTupleMarkerIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'K', 0, 0})), "insert: expected new tuple 'N' but got 0x4b");
}

TEST(PgOutput, UpdateWithUnknownTupleMarkerIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'U', 0, 0, 0x40, 0, 'X', 0, 0})), "update: expected 'K', 'O' or 'N' but got 0x58");
}

TEST(PgOutput, UpdateWithOldTupleButNoNewTupleMarkerIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'U', 0, 0, 0x40, 0, 'O', 0, 1, 'n', 'K', 0, 0})),
            "update: expected new tuple 'N' but got 0x4b");
}

TEST(PgOutput, DeleteWithoutOldTupleMarkerIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'D', 0, 0, 0x40, 0, 'N', 0, 0})), "delete: expected old tuple 'K' or 'O' but got 0x4e");
}

TEST(PgOutput, UnknownColumnKindIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'N', 0, 2, 'n', 'x'})),
            "insert: new tuple column 1 has unknown kind 0x78");
  EXPECT_EQ(ErrorOf(Bytes({'D', 0, 0, 0x40, 0, 'O', 0, 1, 0})), "delete: old tuple column 0 has unknown kind 0x00");
}

TEST(PgOutput, TupleClaiming65535ColumnsInAFewBytesIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'N', 0xFF, 0xFF, 'n', 'n'})),
            "insert: new tuple claims 65535 columns but only 2 bytes follow");
  EXPECT_EQ(ErrorOf(Bytes({'U', 0, 0, 0x40, 0, 'K', 0xFF, 0xFF})),
            "update: old tuple claims 65535 columns but only 0 bytes follow");
}

TEST(PgOutput, TextLengthBeyondTheBufferIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'N', 0, 1, 't', 0x7F, 0xFF, 0xFF, 0xFF, 'a', 'b'})),
            "insert: new tuple column 0 length 2147483647 exceeds the 2 bytes left");
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'N', 0, 2, 'n', 'b', 0, 0, 0, 2, 'a'})),
            "insert: new tuple column 1 length 2 exceeds the 1 bytes left");
}

TEST(PgOutput, NegativeTextLengthIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'I', 0, 0, 0x40, 0, 'N', 0, 1, 't', 0xFF, 0xFF, 0xFF, 0xFF})),
            "insert: new tuple column 0 has negative length -1");
}

TEST(PgOutput, RelationClaimingMoreColumnsThanBytesIsDataLoss) {
  const std::string bytes = Bytes({'R', 0, 0, 0x40, 0, 's', 0, 't', 0, 'd', 0xFF, 0xFF}) + std::string(20, 'x');
  EXPECT_EQ(ErrorOf(bytes), "relation: claims 65535 columns but only 20 bytes follow");
}

TEST(PgOutput, UnknownReplicaIdentityIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'R', 0, 0, 0x40, 0, 's', 0, 't', 0, 'x', 0, 0})), "relation: unknown replica identity 0x78");
}

TEST(PgOutput, TruncateClaimingMoreRelationsThanBytesIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'T', 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x40, 0})),
            "truncate: claims 4294967295 relations but only 4 bytes follow");
}

TEST(PgOutput, LogicalMessageContentLengthBeyondTheBufferIsDataLoss) {
  const std::string head = Bytes({'M', 0, 0, 0, 0, 0, 0, 0, 0, 0, 'p', 0});
  EXPECT_EQ(ErrorOf(head + Bytes({0x7F, 0xFF, 0xFF, 0xFF, 'a'})),
            "message: content length 2147483647 exceeds the 1 bytes left");
  EXPECT_EQ(ErrorOf(head + Bytes({0x80, 0, 0, 0})), "message: content has negative length -2147483648");
}

TEST(PgOutput, UnterminatedStringIsDataLoss) {
  EXPECT_EQ(ErrorOf(Bytes({'O', 0, 0, 0, 0, 0, 0, 0, 1, 'a', 'b'})), "origin: name is not NUL-terminated");
  EXPECT_EQ(ErrorOf(Bytes({'Y', 0, 0, 0x40, 0, 'p', 'u', 'b'})), "type: nspname is not NUL-terminated");
}

// Random input: either a value or DATA_LOSS, and whatever decodes re-encodes to the very same bytes.

// The state a random test decodes in, drawn from `rng`.
DecoderState RandomState(std::mt19937& rng) {
  return State(1 + static_cast<int>(rng() % 4), rng() % 2 == 0, rng() % 2 == 0);
}

void ExpectDecodesExactlyOrDataLoss(const std::string& bytes, const DecoderState& state, int& decoded_count) {
  DecoderState after = state;
  absl::StatusOr<Message> decoded = Decode(bytes, after);
  if (!decoded.ok()) {
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
    return;
  }
  ++decoded_count;
  ASSERT_EQ(Hex(Encode(*decoded, state)), Hex(bytes));
}

TEST(PgOutput, RandomBuffersDecodeOrFailWithoutCrashing) {
  const std::string letters = "ABCDEIKMOPRSTUYbcpr";
  // Bytes the layouts branch on, so random bodies reach past the first check more often than uniform bytes do.
  const std::string interesting = Bytes({0, 1, 2, 0xFF, 0x7F, 0x80, 'N', 'K', 'O', 'n', 'u', 't', 'b', 'd', 'f'});
  std::mt19937 rng(20240601);
  int decoded_count = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(1, letters[rng() % letters.size()]);
    const size_t length = rng() % (i % 10 == 0 ? 512 : 48);
    for (size_t j = 0; j < length; ++j) {
      bytes.push_back(rng() % 2 == 0 ? static_cast<char>(rng()) : interesting[rng() % interesting.size()]);
    }
    ExpectDecodesExactlyOrDataLoss(bytes, RandomState(rng), decoded_count);
  }
  RecordProperty("decoded", decoded_count);
  EXPECT_GT(decoded_count, 0);
}

TEST(PgOutput, MutatedMessagesDecodeOrFailWithoutCrashing) {
  const std::vector<Case> cases = EveryMessage();
  std::mt19937 rng(7);
  int decoded_count = 0;
  for (int i = 0; i < 20000; ++i) {
    const Case& c = cases[rng() % cases.size()];
    std::string bytes = Encode(c.message, c.state);
    switch (rng() % 4) {
      case 0:  // flip one byte after the type
        if (bytes.size() > 1) bytes[1 + rng() % (bytes.size() - 1)] = static_cast<char>(rng());
        break;
      case 1:  // cut
        bytes.resize(rng() % bytes.size());
        break;
      case 2:  // append
        bytes.push_back(static_cast<char>(rng()));
        break;
      default:  // decode in another state than the one it was written in
        break;
    }
    ExpectDecodesExactlyOrDataLoss(bytes, rng() % 2 == 0 ? c.state : RandomState(rng), decoded_count);
  }
  RecordProperty("decoded", decoded_count);
  EXPECT_GT(decoded_count, 1000);
}

}  // namespace
}  // namespace outbox::pg
