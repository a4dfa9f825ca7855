// The checkpoint's codec and the fold of what a store holds.
#include "common/checkpoint.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace outbox {

std::string CheckpointKeyPrefix(const std::string& system_id, const std::string& slot) {
  return Cat(system_id, "/", slot, "/");
}

std::string CheckpointKey(const Checkpoint& c) {
  return Cat(CheckpointKeyPrefix(c.system_id, c.slot), c.instance);
}

bool CheckpointAhead(const Checkpoint& a, const Checkpoint& b) {
  const auto position = [](const Checkpoint& c) {
    return std::make_tuple(c.lsn, c.partial ? c.partial->commit_lsn : Lsn(0), c.partial ? c.partial->records : 0);
  };
  return position(a) > position(b);
}

std::string EncodeCheckpoint(const Checkpoint& c) {
  nlohmann::json j = {{"system_identifier", c.system_id}, {"timeline", c.timeline}, {"slot", c.slot},
                      {"instance", c.instance},           {"lsn", c.lsn.ToString()}};
  if (c.partial) j["partial"] = {{"commit_lsn", c.partial->commit_lsn.ToString()}, {"records", c.partial->records}};
  return j.dump();
}

absl::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::DataLossError("checkpoint: not a JSON object");
  try {
    Checkpoint c;
    c.system_id = j.at("system_identifier").get<std::string>();
    c.timeline = j.at("timeline").get<int64_t>();
    c.slot = j.at("slot").get<std::string>();
    c.instance = j.value("instance", "");
    auto lsn = Lsn::Parse(j.at("lsn").get<std::string>());
    if (!lsn.ok()) return absl::DataLossError(Cat("checkpoint: ", lsn.status().message()));
    c.lsn = *lsn;
    if (j.contains("partial")) {
      const nlohmann::json& p = j.at("partial");
      auto commit = Lsn::Parse(p.at("commit_lsn").get<std::string>());
      if (!commit.ok()) return absl::DataLossError(Cat("checkpoint: partial: ", commit.status().message()));
      const int64_t records = p.at("records").get<int64_t>();
      if (records < 0 || *commit < c.lsn) {
        return absl::DataLossError(Cat("checkpoint: partial: ", records, " records of the transaction at ",
                                       commit->ToString(), " after ", c.lsn.ToString(), " is impossible"));
      }
      c.partial = PartialTransaction{*commit, records};
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(Cat("checkpoint: ", e.what()));
  }
}

void AddCheckpoint(const Checkpoint& c, const std::string& system_id, const std::string& slot, SlotCheckpoints* into) {
  if (c.slot != slot) return;
  if (c.system_id != system_id) {
    into->other_systems.insert(c.system_id);
    return;
  }
  if (!into->own || CheckpointAhead(c, *into->own)) into->own = c;
}

}  // namespace outbox
