// Producer defaults and guarantee checks.
#include "common/strings.h"
#include "kafka/producer_config.h"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::kafka {

int64_t MinQueueMessages(const ProducerBounds& bounds) {
  return std::min<int64_t>(bounds.max_inflight_events + kQueueHeadroomMessages, kLibrdkafkaQueueMax);
}

int64_t MinQueueKbytes(const ProducerBounds& bounds) {
  return std::min<int64_t>((bounds.max_inflight_bytes + 1023) / 1024 + kQueueHeadroomKbytes, kLibrdkafkaQueueMax);
}

bool SendsHeldWhenIdle(const std::map<std::string, std::string>& user, bool exactly_once) {
  return !exactly_once && !user.contains("linger.ms") && !user.contains("queue.buffering.max.ms");
}

std::string TransactionalId(const std::string& system_id, const std::string& slot) {
  return Cat("outbox-relay.", system_id, ".", slot);
}

int64_t TransactionTimeoutMs(const std::map<std::string, std::string>& conf) {
  int64_t v = kDefaultTransactionTimeoutMs;
  if (auto it = conf.find("transaction.timeout.ms"); it != conf.end()) absl::SimpleAtoi(it->second, &v);
  return v;
}

namespace {

// exactly_once: the transactional producer's settings over the at-least-once defaults, and the refusals.
absl::Status ExactlyOnceSettings(const std::map<std::string, std::string>& user,
                                 std::map<std::string, std::string>* conf) {
  const auto refuse = [](const std::string& key, const std::string& value, std::string_view why) {
    return absl::InvalidArgumentError(Cat("kafka.", key, ": \"", value, "\" ", why, " (delivery.guarantee: exactly_once)"));
  };
  if (auto it = user.find("transactional.id"); it != user.end()) {
    return refuse("transactional.id", it->second,
                  "is the relay's to set: it derives one from the cluster's system identifier and the slot, the same "
                  "for every relay of that slot, so a new relay fences the old one");
  }
  if (absl::AsciiStrToLower((*conf)["enable.idempotence"]) != "true") {
    return refuse("enable.idempotence", (*conf)["enable.idempotence"], "must be true: transactions need it");
  }
  int64_t txn_timeout = kDefaultTransactionTimeoutMs;
  if (auto it = user.find("transaction.timeout.ms"); it != user.end()) {
    if (!absl::SimpleAtoi(it->second, &txn_timeout) || txn_timeout < 1000) {
      return refuse("transaction.timeout.ms", it->second, "must be an integer of at least 1000");
    }
  }
  conf->erase("message.timeout.ms");
  for (const char* key : {"message.timeout.ms", "delivery.timeout.ms"}) {
    auto it = user.find(key);
    if (it == user.end()) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v <= 0 || v > txn_timeout) {
      return refuse(key, it->second,
                    Cat("must be from 1 to transaction.timeout.ms (", txn_timeout,
                        "): a record still waiting when its transaction times out is lost to it"));
    }
    (*conf)[key] = it->second;
  }
  if (!conf->contains("message.timeout.ms") && !conf->contains("delivery.timeout.ms")) {
    (*conf)["message.timeout.ms"] = Cat(txn_timeout);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> BuildProducerConfig(
    const std::map<std::string, std::string>& user, const ProducerBounds& bounds, bool unsafe, bool exactly_once) {
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
      // A topic the broker auto-creates at its first record can take longer than librdkafka's 30 s to appear in
      // the metadata when many are created at once (3,000 in one transaction took about 90 s here); past this
      // librdkafka fails its records as an unknown topic, which the relay must take as a permanent error.
      {"topic.metadata.propagation.max.ms", "300000"},
      {"queue.buffering.max.messages", Cat(max_messages)},
      {"queue.buffering.max.kbytes", Cat(max_kbytes)},
      {"client.id", "outbox-relay"},
  };
  for (const auto& [key, value] : user) conf[key] = value;

  // librdkafka refuses more than 5 requests in flight with idempotence on (it could not keep order): say so as a
  // config error naming the key, whatever delivery.unsafe says, instead of failing when the producer is created.
  if (absl::AsciiStrToLower(conf["enable.idempotence"]) == "true") {
    for (const char* key : {"max.in.flight.requests.per.connection", "max.in.flight"}) {
      auto it = user.find(key);
      if (it == user.end()) continue;
      int64_t v = 0;
      if (!absl::SimpleAtoi(it->second, &v) || v < 1 || v > kMaxIdempotentInFlight) {
        return absl::InvalidArgumentError(Cat("kafka.", key, ": \"", it->second, "\" must be an integer from 1 to ",
                                              kMaxIdempotentInFlight, " with enable.idempotence=true"));
      }
    }
  }
  if (exactly_once) {
    if (absl::Status st = ExactlyOnceSettings(user, &conf); !st.ok()) return st;
  }
  if (unsafe) return conf;

  const auto refuse = [](const std::string& key, const std::string& value, std::string_view why) {
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
    if (it == conf.end() || exactly_once) continue;  // finite by design in exactly_once (checked above)
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v != 0) {
      return refuse(key, it->second, "would drop records that wait for the broker (must be 0: wait forever)");
    }
  }
  for (const char* key : {"retries", "message.send.max.retries"}) {
    auto it = user.find(key);
    if (it == user.end()) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v < kUnlimitedRetries) {
      return refuse(key, it->second,
                    Cat("would let a later record of a key land before an earlier one that ran out of retries (must "
                        "be ", kUnlimitedRetries, ", librdkafka's default: retry forever)"));
    }
  }
  // librdkafka's queue must hold everything the delivery bounds let in flight, plus checkpoint and dead-letter
  // records; below that a full queue would stall the stream short of its own bound.
  const int64_t min_messages = MinQueueMessages(bounds);
  const int64_t min_kbytes = MinQueueKbytes(bounds);
  for (const auto& [key, minimum, what] :
       {std::tuple<const char*, int64_t, const char*>{"queue.buffering.max.messages", min_messages,
                                                      "delivery.max_inflight_events"},
        std::tuple<const char*, int64_t, const char*>{"queue.buffering.max.kbytes", min_kbytes,
                                                      "delivery.max_inflight_bytes"}}) {
    auto it = user.find(key);
    if (it == user.end()) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v < minimum) {
      return refuse(key, it->second,
                    Cat("is below the delivery bounds (must be at least ", minimum, ": ", what,
                        " plus room for checkpoint and dead-letter records)"));
    }
  }
  return conf;
}

}  // namespace outbox::kafka
