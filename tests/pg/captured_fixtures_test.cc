// The fuzz seeds captured from a real PostgreSQL 15 (tests/fuzz/capture-seeds.sh) used as byte fixtures: every
// seed of the frame and pgoutput fuzzers decodes and re-encodes to exactly its bytes, the captured ones cover every
// message proto 1 sends, and the captured rows decode to the values the server was given. The corpus folder is
// OUTBOX_FUZZ_CORPUS_DIR; captured files are those named by a SHA-1 alone, the others come from fuzz_make_seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "../fuzz/pgoutput_fuzz_state.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "pg/frames.h"
#include "pg/pgoutput.h"
#include "pg/type_oids.h"

#ifndef OUTBOX_FUZZ_CORPUS_DIR
#error "OUTBOX_FUZZ_CORPUS_DIR must name tests/fuzz/corpus"
#endif

namespace outbox::pg {
namespace {

using Kind = ColumnValue::Kind;


std::string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

struct Seed {
  std::string name;
  std::string bytes;
  bool captured = false;  // named by a SHA-1 alone
};

std::vector<Seed> ReadSeeds(const std::string& folder) {
  std::vector<Seed> seeds;
  const std::filesystem::path dir = std::filesystem::path(OUTBOX_FUZZ_CORPUS_DIR) / folder;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    Seed seed;
    seed.name = entry.path().filename().string();
    seed.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    seed.captured = seed.name.size() == 40 && seed.name.find_first_not_of("0123456789abcdef") == std::string::npos;
    seeds.push_back(std::move(seed));
  }
  std::sort(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) { return a.name < b.name; });
  return seeds;
}

// A pgoutput seed decoded with the state its first byte names; its bytes must outlive the message.
struct DecodedSeed {
  const Seed* seed = nullptr;
  DecoderState before;
  DecoderState after;
  Message message;
};

std::vector<DecodedSeed> DecodeAll(const std::vector<Seed>& seeds) {
  std::vector<DecodedSeed> decoded;
  for (const Seed& seed : seeds) {
    if (seed.bytes.empty()) {
      ADD_FAILURE() << seed.name << " is empty";
      continue;
    }
    DecodedSeed d;
    d.seed = &seed;
    d.before = d.after = FuzzStateFromByte(static_cast<uint8_t>(seed.bytes[0]));
    absl::StatusOr<Message> message = Decode(std::string_view(seed.bytes).substr(1), d.after);
    if (!message.ok()) {
      ADD_FAILURE() << seed.name << ": " << message.status();
      continue;
    }
    d.message = *std::move(message);
    decoded.push_back(std::move(d));
  }
  return decoded;
}

class CapturedFixtures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    frames_ = new std::vector<Seed>(ReadSeeds("frames"));
    pgoutput_ = new std::vector<Seed>(ReadSeeds("pgoutput"));
  }
  static void TearDownTestSuite() {
    delete frames_;
    delete pgoutput_;
  }

  // The captured messages (all proto 1, outside any stream block).
  static std::vector<DecodedSeed> Captured() {
    std::vector<DecodedSeed> out;
    for (DecodedSeed& d : DecodeAll(*pgoutput_)) {
      if (d.seed->captured) out.push_back(std::move(d));
    }
    return out;
  }

  template <typename T>
  static std::vector<T> CapturedOf() {
    std::vector<T> out;
    for (const DecodedSeed& d : Captured()) {
      if (const T* m = std::get_if<T>(&d.message)) out.push_back(*m);
    }
    return out;
  }

  static std::vector<Seed>* frames_;
  static std::vector<Seed>* pgoutput_;
};

std::vector<Seed>* CapturedFixtures::frames_ = nullptr;
std::vector<Seed>* CapturedFixtures::pgoutput_ = nullptr;

TEST_F(CapturedFixtures, EveryFrameSeedDecodesAndReencodesToItsBytes) {
  ASSERT_FALSE(frames_->empty());
  for (const Seed& seed : *frames_) {
    absl::StatusOr<ServerFrame> frame = DecodeServerFrame(seed.bytes);
    if (!frame.ok()) {
      // The synthetic seeds include a client frame (standby status update).
      absl::StatusOr<StandbyStatus> status = DecodeStandbyStatus(seed.bytes);
      ASSERT_TRUE(status.ok()) << seed.name << ": " << frame.status() << " / " << status.status();
      EXPECT_FALSE(seed.captured) << seed.name << ": the server sent a client frame";
      EXPECT_EQ(EncodeStandbyStatus(*status), seed.bytes) << seed.name;
      continue;
    }
    std::string reencoded;
    if (const auto* x = std::get_if<XLogData>(&*frame)) {
      reencoded = EncodeXLogData(x->data_start, x->wal_end, x->send_time, x->payload);
    } else {
      reencoded = EncodeKeepalive(std::get<Keepalive>(*frame));
    }
    EXPECT_EQ(Hex(reencoded), Hex(seed.bytes)) << seed.name;
  }
}

TEST_F(CapturedFixtures, EveryPgoutputSeedDecodesAndReencodesToItsBytes) {
  ASSERT_FALSE(pgoutput_->empty());
  const std::vector<DecodedSeed> decoded = DecodeAll(*pgoutput_);
  EXPECT_EQ(decoded.size(), pgoutput_->size());
  for (const DecodedSeed& d : decoded) {
    const std::string_view bytes = std::string_view(d.seed->bytes).substr(1);
    EXPECT_EQ(Hex(Encode(d.message, d.before)), Hex(bytes)) << d.seed->name;
  }
}

TEST_F(CapturedFixtures, EachCapturedXLogDataCarriesACapturedMessage) {
  std::set<std::string> messages;
  for (const Seed& seed : *pgoutput_) {
    if (seed.captured) messages.insert(seed.bytes);
  }
  int xlogdata = 0;
  int keepalives = 0;
  for (const Seed& seed : *frames_) {
    if (!seed.captured) continue;
    absl::StatusOr<ServerFrame> frame = DecodeServerFrame(seed.bytes);
    ASSERT_TRUE(frame.ok()) << seed.name << ": " << frame.status();
    if (const auto* x = std::get_if<XLogData>(&*frame)) {
      ++xlogdata;
      const DecoderState proto1;  // proto 1, outside any stream block: state byte 0
      EXPECT_TRUE(messages.contains(std::string(1, static_cast<char>(FuzzByteFromState(proto1))) +
                                    std::string(x->payload)))
          << seed.name;
      // Logical mode: both fields are the message's write location, which PostgreSQL 15 leaves at 0/0 for the
      // Relation and Type messages pgoutput sends ahead of a change (never a position to ack from).
      EXPECT_EQ(x->data_start, x->wal_end) << seed.name;
      const bool schema = !x->payload.empty() && (x->payload[0] == 'R' || x->payload[0] == 'Y');
      EXPECT_EQ(x->data_start.IsZero(), schema) << seed.name;
    } else {
      ++keepalives;
      EXPECT_GT(std::get<Keepalive>(*frame).wal_end.value(), 0u) << seed.name;
    }
  }
  EXPECT_GE(xlogdata, 20);
  EXPECT_GE(keepalives, 1);
}

TEST_F(CapturedFixtures, CapturedMessagesCoverEveryProtoOneMessage) {
  std::set<size_t> types;
  std::set<char> old_kinds;
  std::set<char> column_kinds;
  std::set<uint8_t> truncate_flags;
  std::set<bool> transactional;
  for (const DecodedSeed& d : Captured()) {
    EXPECT_EQ(d.before.proto_version, 1) << d.seed->name;
    EXPECT_FALSE(d.before.in_stream_block) << d.seed->name;
    types.insert(d.message.index());
    auto add_columns = [&](const TupleData& tuple) {
      for (const ColumnValue& c : tuple.columns) column_kinds.insert(static_cast<char>(c.kind));
    };
    if (const auto* m = std::get_if<Insert>(&d.message)) add_columns(m->new_tuple);
    if (const auto* m = std::get_if<Update>(&d.message)) {
      old_kinds.insert(m->old_kind);
      add_columns(m->new_tuple);
    }
    if (const auto* m = std::get_if<Delete>(&d.message)) old_kinds.insert(static_cast<char>(m->old_kind | 0x20));
    if (const auto* m = std::get_if<Truncate>(&d.message)) truncate_flags.insert(m->flags);
    if (const auto* m = std::get_if<LogicalMessage>(&d.message)) transactional.insert(m->transactional());
  }
  for (size_t type : {Message(Begin{}).index(), Message(Commit{}).index(), Message(Origin{}).index(),
                      Message(Relation{}).index(), Message(Type{}).index(), Message(Insert{}).index(),
                      Message(Update{}).index(), Message(Delete{}).index(), Message(Truncate{}).index(),
                      Message(LogicalMessage{}).index()}) {
    EXPECT_TRUE(types.contains(type)) << "no captured message of variant index " << type;
  }
  // Updates: no old tuple, old key, old row; deletes (lowercased): old key, old row.
  EXPECT_EQ(old_kinds, (std::set<char>{0, 'K', 'O', 'k', 'o'}));
  EXPECT_EQ(column_kinds, (std::set<char>{'n', 'u', 't', 'b'}));
  EXPECT_EQ(truncate_flags, (std::set<uint8_t>{0, 3}));  // plain, and RESTART IDENTITY | CASCADE
  EXPECT_EQ(transactional, (std::set<bool>{false, true}));
}

TEST_F(CapturedFixtures, CapturedRelationAndTypeDescribeTheTable) {
  std::optional<Relation> events;
  for (const Relation& r : CapturedOf<Relation>()) {
    if (r.relname == "capture_events") events = r;
  }
  ASSERT_TRUE(events.has_value());
  EXPECT_EQ(events->nspname, "public");
  EXPECT_EQ(events->replica_identity, 'd');
  ASSERT_EQ(events->columns.size(), 7u);
  const std::vector<std::pair<std::string, uint32_t>> expected = {
      {"id", oid::kInt8}, {"name", oid::kText}, {"doc", oid::kJsonb}, {"blob", oid::kBytea}, {"note", oid::kText}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(events->columns[i].name, expected[i].first);
    EXPECT_EQ(events->columns[i].type_oid, expected[i].second) << expected[i].first;
    EXPECT_EQ(events->columns[i].flags, i == 0 ? 1 : 0) << expected[i].first;  // the primary key
    EXPECT_EQ(events->columns[i].type_modifier, -1) << expected[i].first;
  }
  EXPECT_EQ(events->columns[5].name, "feeling");
  EXPECT_EQ(events->columns[6].name, "big");

  const std::vector<Type> types = CapturedOf<Type>();
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0].nspname, "public");
  EXPECT_EQ(types[0].name, "mood");
  EXPECT_EQ(types[0].oid, events->columns[5].type_oid);  // the enum column's type, sent before the relation
}

TEST_F(CapturedFixtures, CapturedRowsDecodeToWhatTheServerWasGiven) {
  std::optional<Insert> text_hello;
  std::optional<Insert> binary_hello;
  std::optional<Insert> multibyte;
  std::optional<Update> unchanged_toast;
  for (const DecodedSeed& d : Captured()) {
    if (const auto* m = std::get_if<Insert>(&d.message)) {
      const std::vector<ColumnValue>& c = m->new_tuple.columns;
      if (c.size() == 7 && c[1].data == "hello") (c[1].kind == Kind::kText ? text_hello : binary_hello) = *m;
      if (c.size() == 7 && c[1].kind == Kind::kText && c[1].data.starts_with("gr")) multibyte = *m;
    }
    if (const auto* m = std::get_if<Update>(&d.message)) {
      if (m->new_tuple.columns.size() == 7 && m->new_tuple.columns[6].kind == Kind::kUnchanged &&
          m->new_tuple.columns[0].kind == Kind::kText) {
        unchanged_toast = *m;
      }
    }
  }
  ASSERT_TRUE(text_hello.has_value());
  const std::vector<ColumnValue>& t = text_hello->new_tuple.columns;
  EXPECT_EQ(t[0].kind, Kind::kText);
  EXPECT_EQ(t[2].data, R"({"a": 1, "b": [true, null]})");  // jsonb's own text form
  EXPECT_EQ(t[3].data, "\\x0001ff");                       // bytea's hex text form
  EXPECT_EQ(t[4].kind, Kind::kNull);
  EXPECT_EQ(t[5].data, "happy");
  EXPECT_EQ(t[6].kind, Kind::kNull);

  ASSERT_TRUE(binary_hello.has_value());  // binary 'true': send() bytes
  const std::vector<ColumnValue>& b = binary_hello->new_tuple.columns;
  EXPECT_EQ(b[0].kind, Kind::kBinary);
  EXPECT_EQ(Hex(b[0].data), "0000000000000001");  // int8, big-endian
  EXPECT_EQ(b[2].data, std::string("\x01") + R"({"a": 1, "b": [true, null]})");  // jsonb version 1, then text
  EXPECT_EQ(Hex(b[3].data), "0001ff");
  EXPECT_EQ(b[4].kind, Kind::kNull);

  ASSERT_TRUE(multibyte.has_value());
  EXPECT_EQ(multibyte->new_tuple.columns[1].data, "gr\xc3\xbc\xc3\x9f" "e \xe2\x9c\x93");
  EXPECT_EQ(multibyte->new_tuple.columns[4].data, R"(it's "quoted")");
  EXPECT_EQ(multibyte->new_tuple.columns[6].data, std::string(2100, 'x'));

  ASSERT_TRUE(unchanged_toast.has_value());  // the TOASTed value, not sent again when unchanged
  EXPECT_EQ(unchanged_toast->old_kind, 0);
  EXPECT_EQ(unchanged_toast->new_tuple.columns[4].data, "touched");
}

TEST_F(CapturedFixtures, CapturedLogicalMessagesKeepPrefixContentAndFlags) {
  std::vector<std::string> seen;
  for (const LogicalMessage& m : CapturedOf<LogicalMessage>()) {
    EXPECT_FALSE(m.xid.has_value());
    EXPECT_EQ(m.flags, m.transactional() ? 1 : 0);
    EXPECT_GT(m.lsn.value(), 0u);
    seen.push_back((m.transactional() ? "t:" : "n:") + std::string(m.prefix) + ":" +
                   Hex(m.content));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "n::",
                      "n:capture-end:" + Hex("done"),
                      "n:outbox:" + Hex("not transactional"),
                      "t:audit:00ff10",
                      "t:outbox:" + Hex(R"({"id": 7, "type": "OrderPlaced"})"),
                  }));
}

}  // namespace
}  // namespace outbox::pg
