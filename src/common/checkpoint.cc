// The checkpoint's codec and the fold of what a store holds.
#include "common/checkpoint.h"

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

std::string EncodeCheckpoint(const Checkpoint& c) {
  nlohmann::json j = {{"system_identifier", c.system_id}, {"timeline", c.timeline}, {"slot", c.slot},
                      {"instance", c.instance},           {"lsn", c.lsn.ToString()}};
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
  if (!into->own || c.lsn > into->own->lsn) into->own = c;
}

}  // namespace outbox
