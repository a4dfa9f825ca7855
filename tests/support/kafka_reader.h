// Reads topics back for assertions: a librdkafka consumer that assigns every partition of a topic from the
// beginning (no subscription, no offset commits).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "support/kafka_broker.h"

namespace outbox::testing {

enum class TimestampType { kNotAvailable, kCreateTime, kLogAppendTime };

struct KafkaHeader {
  std::string name;
  std::optional<std::string> value;  // nullopt: a null header value
  bool operator==(const KafkaHeader&) const = default;
};

struct KafkaRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;    // nullopt: a null key
  std::optional<std::string> value;  // nullopt: a null value (tombstone)
  std::vector<KafkaHeader> headers;  // in record order, duplicates kept
  int64_t timestamp_ms = -1;
  TimestampType timestamp_type = TimestampType::kNotAvailable;

  // The first header named `name`, nullptr when absent.
  const KafkaHeader* FindHeader(std::string_view name) const;
};

// Not thread-safe. Records of a topic are kept from the first ReadUntil on it: every call returns all of the
// topic's records read so far (from offset 0), in arrival order (per-partition offset order), and only fetches
// what is new. Reads committed records only (isolation.level=read_committed).
class KafkaReader {
 public:
  using Predicate = std::function<bool(const std::vector<KafkaRecord>&)>;

  // extra_conf: librdkafka consumer properties added to (or overriding) the defaults.
  static absl::StatusOr<std::unique_ptr<KafkaReader>> Create(const std::string& bootstrap,
                                                            const std::map<std::string, std::string>& extra_conf = {});

  // Waits (up to `deadline`) for the topic to exist, then reads until `done(records)` holds for all of the
  // topic's records so far. DeadlineExceeded when it does not hold in time (Records(topic) has what was read).
  absl::StatusOr<std::vector<KafkaRecord>> ReadUntil(std::string_view topic, const Predicate& done,
                                                     std::chrono::milliseconds deadline);
  // Until at least `count` records were read.
  absl::StatusOr<std::vector<KafkaRecord>> ReadUntil(std::string_view topic, size_t count,
                                                     std::chrono::milliseconds deadline);
  // Until every partition's position reached the high watermark it had when the call began: everything the topic
  // holds now. The topic must exist.
  absl::StatusOr<std::vector<KafkaRecord>> ReadAll(std::string_view topic, std::chrono::milliseconds deadline);

  // Several topics at once, for many topics (one metadata request per try, one assignment): waits for all of them
  // to exist, then reads until each holds at least `count` records (Records(topic) has them). DeadlineExceeded
  // naming how many topics are missing or short.
  absl::Status ReadEachUntil(const std::vector<std::string>& topics, size_t count, std::chrono::milliseconds deadline);

  // The end of a partition as this reader sees it: the last stable offset at read_committed (held back by an open
  // transaction), the high watermark at read_uncommitted.
  absl::StatusOr<int64_t> EndOffset(std::string_view topic, int partition,
                                    std::chrono::milliseconds deadline = std::chrono::seconds(10));

  // The topic's records read so far.
  const std::vector<KafkaRecord>& Records(std::string_view topic);

  // Every topic name in the cluster (internal ones such as __consumer_offsets included), sorted.
  absl::StatusOr<std::vector<std::string>> ListTopics(std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // The partition count of a topic; NotFound when it does not exist.
  absl::StatusOr<int> PartitionCount(std::string_view topic,
                                     std::chrono::milliseconds deadline = std::chrono::seconds(10));

  rd_kafka_t* handle() const { return rk_.get(); }

 private:
  struct TopicState {
    int partitions = 0;
    std::vector<int64_t> next_offset;  // per partition; RD_KAFKA_OFFSET_BEGINNING before the first record
    std::vector<KafkaRecord> records;
  };

  explicit KafkaReader(RdKafkaPtr rk) : rk_(std::move(rk)) {}
  // Waits for the topic and (re)assigns when it is new or gained partitions.
  absl::Status Assign(const std::string& topic, std::chrono::steady_clock::time_point until);
  // Partition counts of every topic in the cluster, from one metadata request.
  absl::StatusOr<std::map<std::string, int, std::less<>>> PartitionCounts(std::chrono::milliseconds deadline);
  // Notes a topic's partition count; false when nothing changed.
  bool Track(const std::string& topic, int partitions);
  // assign() with every tracked topic, at the offsets to continue from.
  absl::Status AssignTracked();
  // Polls for up to `max_wait` and stores what arrives.
  void PollOnce(std::chrono::milliseconds max_wait);

  RdKafkaPtr rk_;
  std::map<std::string, TopicState, std::less<>> topics_;
  std::string last_error_;
};

}  // namespace outbox::testing
