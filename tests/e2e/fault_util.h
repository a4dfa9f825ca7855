// Helpers for fault tests: reading a topic to its end, checking no loss, duplicate bounds and per-key order.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/lsn.h"
#include "support/kafka_reader.h"
#include "support/util.h"

namespace outbox::testing {

inline std::string HeaderValue(const KafkaRecord& r, const std::string& name) {
  const KafkaHeader* h = r.FindHeader(name);
  return h && h->value ? *h->value : "";
}

// A dead letter of a record too large to carry (SPEC.md §3): the event's id, no value, and an error header that
// says `why`.
inline void ExpectDeadLetteredWithoutValue(const KafkaRecord& dead, const std::string& id, const std::string& why) {
  EXPECT_EQ(HeaderValue(dead, "id"), id);
  EXPECT_FALSE(dead.value.has_value()) << "dead-lettered with its value";
  EXPECT_NE(HeaderValue(dead, "error").find(why), std::string::npos) << HeaderValue(dead, "error");
}

// Reads the topic until it holds every id of `required` (or the deadline passes) and returns all its records.
inline std::vector<KafkaRecord> ReadUntilAll(KafkaReader& reader, const std::string& topic,
                                             const std::set<std::string>& required,
                                             std::chrono::milliseconds deadline) {
  auto records = reader.ReadUntil(
      topic,
      [&](const std::vector<KafkaRecord>& rs) {
        std::set<std::string> seen;
        for (const KafkaRecord& r : rs) seen.insert(HeaderValue(r, "id"));
        for (const std::string& id : required) {
          if (!seen.count(id)) return false;
        }
        return true;
      },
      deadline);
  return records.ok() ? *records : reader.Records(topic);
}

// The topic's record count once it stopped growing for `quiet`.
inline size_t StableCount(KafkaReader& reader, const std::string& topic,
                          std::chrono::milliseconds quiet = std::chrono::milliseconds(400)) {
  size_t last = static_cast<size_t>(-1);
  auto since = std::chrono::steady_clock::now();
  while (true) {
    auto all = reader.ReadAll(topic, std::chrono::seconds(10));
    const size_t n = all.ok() ? all->size() : reader.Records(topic).size();
    if (n != last) {
      last = n;
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since >= quiet) {
      return n;
    }
    PollUntil([] { return false; }, std::chrono::milliseconds(50));
  }
}

struct DeliveryCheck {
  size_t records = 0;
  size_t lost = 0;
  size_t duplicates = 0;
  size_t unexpected = 0;
  size_t order_violations = 0;
};

// One delivered message as any sink's reader sees it: the event id, the record's key, its value.
struct DeliveredEvent {
  std::string id;
  std::optional<std::string> key;
  std::string value;
};

// Every committed id arrived; nothing outside committed+uncertain arrived; the first occurrences of each key's
// events carry increasing steps (payload {"key":..,"step":N}).
inline DeliveryCheck CheckDeliveredEvents(const std::vector<DeliveredEvent>& events,
                                          const std::set<std::string>& committed,
                                          const std::set<std::string>& uncertain) {
  DeliveryCheck c;
  c.records = events.size();
  std::set<std::string> seen;
  std::map<std::string, int> last_step;
  static const std::regex kStep("\"step\": (\\d+)");
  for (const DeliveredEvent& e : events) {
    if (!committed.count(e.id) && !uncertain.count(e.id)) ++c.unexpected;
    if (!seen.insert(e.id).second) {
      ++c.duplicates;
      continue;
    }
    std::smatch m;
    if (e.key && std::regex_search(e.value, m, kStep)) {
      const int step = std::stoi(m[1]);
      auto it = last_step.find(*e.key);
      if (it != last_step.end() && step <= it->second) ++c.order_violations;
      last_step[*e.key] = step;
    }
  }
  for (const std::string& id : committed) {
    if (!seen.count(id)) ++c.lost;
  }
  return c;
}

// The same over Kafka records (the id header, the record's key and value).
inline DeliveryCheck CheckDelivery(const std::vector<KafkaRecord>& records, const std::set<std::string>& committed,
                                   const std::set<std::string>& uncertain) {
  std::vector<DeliveredEvent> events;
  events.reserve(records.size());
  for (const KafkaRecord& r : records) events.push_back({HeaderValue(r, "id"), r.key, r.value.value_or("")});
  return CheckDeliveredEvents(events, committed, uncertain);
}

inline int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace outbox::testing
