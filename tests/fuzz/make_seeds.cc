// Writes the fuzzers' seed corpus from the encoders: fuzz_make_seeds <dir> fills <dir>/frames and <dir>/pgoutput
// (committed as tests/fuzz/corpus; rerun it when a layout changes).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pg/frames.h"
#include "pg/pgoutput.h"
#include "pgoutput_fuzz_state.h"

namespace outbox::pg {
namespace {

using Kind = ColumnValue::Kind;

bool WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::fprintf(stderr, "could not write %s\n", path.c_str());
  return static_cast<bool>(out);
}

DecoderState State(int proto_version, bool in_stream_block = false, bool parallel_streaming = false) {
  DecoderState state;
  state.proto_version = proto_version;
  state.in_stream_block = in_stream_block;
  state.parallel_streaming = parallel_streaming;
  return state;
}

// One seed per message type, plus the stream-block and proto-4 variants; each file is the state byte the
// pgoutput fuzz target reads first, then the message.
std::vector<std::pair<std::string, std::string>> PgOutputSeeds() {
  const TupleData row{{{Kind::kText, "42"}, {Kind::kNull, {}}, {Kind::kUnchanged, {}}, {Kind::kBinary, "\x01"}}};
  const TupleData key{{{Kind::kText, "42"}}};
  const std::vector<std::tuple<std::string, Message, DecoderState>> messages = {
      {"begin", Begin{Lsn(0x16B374D848), 725'000'000'000'000, 757}, State(1)},
      {"commit", Commit{0, Lsn(0x16B374D848), Lsn(0x16B374D878), 725'000'000'000'001}, State(1)},
      {"origin", Origin{Lsn(0x1000), "node_a"}, State(1)},
      {"relation", Relation{std::nullopt, 16384, "public", "outbox", 'd', {{1, "id", 20, -1}, {0, "v", 25, -1}}},
       State(1)},
      {"type", Type{std::nullopt, 16500, "public", "mood"}, State(1)},
      {"insert", Insert{std::nullopt, 16384, row}, State(1)},
      {"update", Update{std::nullopt, 16384, 'K', key, row}, State(1)},
      {"delete", Delete{std::nullopt, 16384, 'O', row}, State(1)},
      {"truncate", Truncate{std::nullopt, 1, {16384, 16390}}, State(1)},
      {"message", LogicalMessage{std::nullopt, 1, Lsn(0x2000), "outbox", "{}"}, State(1)},
      {"stream_start", StreamStart{795, 1}, State(2)},
      {"stream_stop", StreamStop{}, State(2, true)},
      {"stream_commit", StreamCommit{795, 0, Lsn(0x3000), Lsn(0x3030), 725'000'000'000'002}, State(2)},
      {"stream_abort", StreamAbort{795, 796, std::nullopt, std::nullopt}, State(2)},
      {"stream_abort_parallel", StreamAbort{795, 796, Lsn(0x9000), 7}, State(4, false, true)},
      {"streamed_relation", Relation{796, 16384, "public", "outbox", 'f', {{1, "id", 20, -1}}}, State(2, true)},
      {"streamed_insert", Insert{796, 16384, row}, State(2, true)},
      {"streamed_update", Update{796, 16384, 0, {}, row}, State(2, true)},
      {"streamed_truncate", Truncate{796, 0, {16384}}, State(2, true)},
      {"streamed_message", LogicalMessage{796, 0, Lsn(0x4000), "p", "x"}, State(2, true)},
      {"begin_prepare", BeginPrepare{Lsn(0x5000), Lsn(0x5040), 3, 800, "gid"}, State(3)},
      {"prepare", Prepare{false, 0, Lsn(0x5000), Lsn(0x5040), 3, 800, "gid"}, State(3)},
      {"stream_prepare", Prepare{true, 0, Lsn(0x6000), Lsn(0x6040), 4, 801, "gid"}, State(3)},
      {"commit_prepared", CommitPrepared{0, Lsn(0x7000), Lsn(0x7040), 5, 800, "gid"}, State(3)},
      {"rollback_prepared", RollbackPrepared{0, Lsn(0x5040), Lsn(0x8040), 3, 6, 802, "gid"}, State(3)},
  };
  std::vector<std::pair<std::string, std::string>> seeds;
  for (const auto& [name, message, state] : messages) {
    seeds.emplace_back(name, std::string(1, static_cast<char>(FuzzByteFromState(state))) + Encode(message, state));
  }
  return seeds;
}

std::vector<std::pair<std::string, std::string>> FrameSeeds() {
  const std::string begin = Encode(Begin{Lsn(0x16B374D848), 725'000'000'000'000, 757}, State(1));
  return {
      {"xlogdata_begin", EncodeXLogData(Lsn(0x16B374D800), Lsn(0x16B374D800), 725'000'000'000'000, begin)},
      {"xlogdata_empty", EncodeXLogData(Lsn(), Lsn(), 0, "")},
      {"keepalive", EncodeKeepalive(Keepalive{Lsn(0x18919E98), 725'000'000'000'000, false})},
      {"keepalive_reply", EncodeKeepalive(Keepalive{Lsn(0x18919E98), 725'000'000'000'000, true})},
      {"standby_status", EncodeStandbyStatus(StandbyStatus{Lsn(0x100), Lsn(0x80), Lsn(0x80), 1, false})},
  };
}

}  // namespace
}  // namespace outbox::pg

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  bool ok = true;
  for (const auto& [folder, seeds] : {std::pair{"frames", outbox::pg::FrameSeeds()},
                                      std::pair{"pgoutput", outbox::pg::PgOutputSeeds()}}) {
    std::error_code error;
    std::filesystem::create_directories(root / folder, error);
    if (error) {
      std::fprintf(stderr, "could not create %s: %s\n", (root / folder).c_str(), error.message().c_str());
      return 1;
    }
    for (const auto& [name, bytes] : seeds) ok = outbox::pg::WriteFile(root / folder / name, bytes) && ok;
  }
  return ok ? 0 : 1;
}
