// The record every sink takes: what the outbox mapper makes of an event, independent of any broker. Below both
// outbox/ and the sinks, so that a sink needs nothing of the mapper (DESIGN.md: never a sink including outbox/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace outbox {

struct Header {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt = a null header value
};

// One record. Its views stay valid as long as whatever made it says (the mapper: until its next Map call).
struct Record {
  std::string_view topic;                 // the topic (Kafka), or what a sink derives its destination from
  std::optional<std::string_view> key;    // nullopt = null key
  std::optional<std::string_view> value;  // nullopt = null value (a tombstone)
  std::vector<Header> headers;
  int64_t timestamp_ms = 0;               // Unix epoch milliseconds; 0 = the sink's (broker's) time
  std::optional<int32_t> partition;       // a partition hint; nullopt = the sink's partitioner decides
  std::string_view event_id;              // the id column's text (for errors and logs); empty when NULL
  std::string_view route_value;           // the route column's value (${routedByValue}) for a sink's own templates
  size_t Bytes() const;                   // topic + key + value + headers (an estimate; sinks know their framing)
  // Key + value bytes, as the ack tracker and the delivery report count them.
  size_t PayloadBytes() const { return (key ? key->size() : 0) + (value ? value->size() : 0); }
};

// A Record that owns its bytes: for a record kept past the mapper's next Map call (one the sink had no room for,
// a dead letter built from a delivery report).
struct OwnedRecord {
  std::string topic, event_id, route_value;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  int64_t timestamp_ms = 0;
  std::optional<int32_t> partition;

  static OwnedRecord Of(const Record& record);
  // A record viewing this one (valid while it lives and is not changed).
  Record View() const;
  // Key + value bytes, as the ack tracker and the delivery report count them.
  size_t PayloadBytes() const { return (key ? key->size() : 0) + (value ? value->size() : 0); }
  // The value of the last header named `name` ("" when none has a value): a report's source_lsn.
  std::string_view HeaderText(std::string_view name) const {
    std::string_view text;
    for (const auto& [n, v] : headers) {
      if (n == name && v) text = *v;
    }
    return text;
  }
};

}  // namespace outbox
