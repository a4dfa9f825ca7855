// Producer defaults and guarantee checks.
#include "common/strings.h"
#include "kafka/producer_config.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::kafka {

absl::StatusOr<std::map<std::string, std::string>> BuildProducerConfig(
    const std::map<std::string, std::string>& user, const ProducerBounds& bounds, bool unsafe) {
  // Headroom above the delivery bounds for checkpoint and dead-letter records.
  const int64_t max_messages = std::min<int64_t>(bounds.max_inflight_events + 100000, 2147483647);
  const int64_t max_kbytes = std::min<int64_t>(bounds.max_inflight_bytes / 1024 * 2 + 65536, 2147483647);
  std::map<std::string, std::string> conf = {
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"message.timeout.ms", "0"},
      {"partitioner", "murmur2_random"},
      {"compression.type", "lz4"},
      {"linger.ms", "5"},
      {"queue.buffering.max.messages", Cat(max_messages)},
      {"queue.buffering.max.kbytes", Cat(max_kbytes)},
      {"client.id", "outbox-relay"},
  };
  for (const auto& [key, value] : user) conf[key] = value;
  if (unsafe) return conf;

  const auto refuse = [](const std::string& key, const std::string& value, const char* why) {
    return absl::InvalidArgumentError(Cat("kafka.", key, ": \"", value, "\" ", why,
                                                   " (set delivery.unsafe: true to allow it)"));
  };
  const std::string idem = absl::AsciiStrToLower(conf["enable.idempotence"]);
  if (idem != "true") return refuse("enable.idempotence", conf["enable.idempotence"], "would allow reordered or lost records");
  const std::string acks = absl::AsciiStrToLower(conf["acks"]);
  if (acks != "all" && acks != "-1") return refuse("acks", conf["acks"], "would confirm records the broker may lose");
  if (auto it = user.find("request.required.acks"); it != user.end()) {
    const std::string v = absl::AsciiStrToLower(it->second);
    if (v != "all" && v != "-1") return refuse("request.required.acks", it->second, "would confirm records the broker may lose");
  }
  for (const char* key : {"message.timeout.ms", "delivery.timeout.ms"}) {
    auto it = conf.find(key);
    if (it == conf.end()) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v != 0) {
      return refuse(key, it->second, "would drop records that wait for the broker (must be 0: wait forever)");
    }
  }
  return conf;
}

bool IsSecretKey(const std::string& key) {
  return absl::EndsWith(key, "password") || absl::EndsWith(key, ".secret") ||
         absl::StrContains(key, "sasl.oauthbearer.client.secret") || key == "ssl.key.pem" ||
         key == "sasl.oauthbearer.config";
}

}  // namespace outbox::kafka
