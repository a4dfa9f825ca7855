// KafkaSink: the relay's producer around librdkafka. Owned by the loop thread: Produce, Poll and the delivery
// callback all run there (librdkafka's own threads never call back into the relay). The main queue signals a
// pipe when it turns non-empty, so the loop can wait on it beside the PostgreSQL socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/record.h"

// librdkafka's handles, declared as librdkafka declares them (its header stays out of the sink's users).
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace outbox::kafka {

// What one delivery report means for the relay, decided once per librdkafka error code (ClassifyDeliveryError).
// The producer retries transient broker errors itself, forever (retries and message.timeout.ms are unbounded), so
// an error that reaches a report is either the relay's own doing (a purge), the producer's end (fatal), or the
// broker refusing the record for good.
enum class DeliveryOutcome {
  kAcked,           // written and acknowledged
  kRetriable,       // given up for a reason a rewind may cure (purged, timed out, transport): rewind
  kRejectedEvent,   // this record refused for good (topic unknown or not authorized, invalid record):
                    // delivery.on_error decides
  kRejectedBatch,   // the batch it was in refused for good (too large, bad timestamp, compression, corrupt, policy,
                    // and any code not known to be transient): halt, never dead-letter its batch mates
  kFatal,           // the producer is unusable: rewind and recreate it
};

// One exhaustive decision per librdkafka error code (rd_kafka_resp_err_t); an unknown code is kRejectedBatch
// (halt rather than loop on it).
DeliveryOutcome ClassifyDeliveryError(int err);
std::string_view DeliveryOutcomeName(DeliveryOutcome outcome);

// Why Produce refused a record before producing it (carried as a payload of its INVALID_ARGUMENT status, so callers
// decide on the type, never on the text).
enum class Rejection { kNone = 0, kTooLarge = 1, kTimestamp = 2, kTopic = 3 };
absl::Status Rejected(Rejection why, absl::string_view message);
Rejection RejectionOf(const absl::Status& status);

// An upper bound of the record's size in a record batch of its own, in Kafka's v2 format (the 61-byte batch
// header, the record's varint framing, key, value and headers; before compression): what the broker compares
// with the topic's max.message.bytes and librdkafka with message.max.bytes.
size_t WireBytes(const ::outbox::Record& record);

// How far a record's timestamp may be from the broker's clock (a topic's message.timestamp.after.max.ms and
// before.max.ms), less this margin for the skew between the relay's clock and the broker's.
inline constexpr int64_t kTimestampSkewMarginMs = 60000;
// How long the first record to a topic waits for the topic's configuration (its limits are checked before
// producing); past that it is produced unchecked. A broker answers in milliseconds; one that lets this pass (no
// DescribeConfigs support, as librdkafka's mock cluster) makes later topics wait for nothing until it answers.
inline constexpr int kTopicConfigWaitMs = 500;

// One record's delivery report, on the loop thread; its views are valid during the callback.
struct DeliveryReport {
  uint64_t opaque = 0;  // what Produce was given
  DeliveryOutcome outcome = DeliveryOutcome::kAcked;
  std::string_view error;       // the broker's or the producer's words ("" when acked)
  std::string_view error_name;  // the error code's name (INVALID_TIMESTAMP, ...)
  bool too_large = false;       // refused for its size (MESSAGE_TOO_LARGE: its batch was too large)
  std::string_view topic;
  int32_t partition = -1;
  int64_t offset = -1;
  size_t bytes = 0;  // key + value as produced
  int64_t timestamp_ms = -1;
  std::string_view event_id;    // the record's `id` header (for errors)
  std::string_view source_lsn;  // the record's `source_lsn` header
  const ::outbox::OwnedRecord* rejected = nullptr;  // not acked: the record as it was produced (for a dead letter)
};


// Sets every property of `conf` on `c` (librdkafka's names); an error names the key as `kafka.<key>`. On error
// `c` keeps what was set before; the caller still owns (and destroys) it.
absl::Status ApplyConf(rd_kafka_conf_t* c, const std::map<std::string, std::string>& conf);

// Routes librdkafka's log lines to the spdlog logger "kafka" (used for every client the relay creates).
void InstallLogCallback(rd_kafka_conf_t* conf);

class KafkaSink {
 public:
  using ReportFn = std::function<void(const DeliveryReport&)>;

  // `conf` is the full librdkafka configuration (see BuildProducerConfig). Errors name the key.
  static absl::StatusOr<std::unique_ptr<KafkaSink>> Create(const std::map<std::string, std::string>& conf,
                                                           ReportFn on_report);
  ~KafkaSink();
  KafkaSink(const KafkaSink&) = delete;
  KafkaSink& operator=(const KafkaSink&) = delete;

  // Enqueues one record. RESOURCE_EXHAUSTED: not now (librdkafka's queue is full, or the first record to a topic
  // waits for the topic's configuration): poll and retry. INVALID_ARGUMENT: a permanent error for this record (too
  // large, or a timestamp the topic refuses), checked before producing. UNAVAILABLE: the producer failed.
  absl::Status Produce(const ::outbox::Record& record, uint64_t opaque);
  // Serves delivery reports and error events; returns how many events were served.
  int Poll(int timeout_ms);
  // Readable when the main queue has events; drain it with DrainWakeup() then Poll(0).
  int wakeup_fd() const { return wake_read_; }
  void DrainWakeup();
  // Drops every queued and in-flight record (each still gets a delivery report with _PURGE_*).
  void Purge();
  int OutQueueLength() const;
  // Waits for every record's delivery report, up to the timeout.
  absl::Status Flush(int timeout_ms);
  // The idempotent producer's fatal error, if one was raised.
  absl::Status FatalError() const;
  // True while librdkafka reports every broker down (set by the error callback, cleared by a delivery success).
  bool all_brokers_down() const { return all_brokers_down_; }
  // Metadata request to the cluster: OK when a broker answers within the timeout (blocks; not on the hot path).
  absl::Status CheckReachable(int timeout_ms);
  int64_t message_max_bytes() const { return message_max_bytes_; }
  // A topic's configuration as far as it limits records (DescribeConfigs; the first record to a topic asks for it).
  struct TopicLimits {
    std::optional<int64_t> max_message_bytes;
    bool log_append_time = false;  // message.timestamp.type=LogAppendTime: the broker sets the timestamp
    std::optional<int64_t> timestamp_after_max_ms, timestamp_before_max_ms;
  };
  // kPending: asked, no answer yet (for at most kTopicConfigWaitMs). kUnknown: the broker did not say (the topic
  // does not exist yet, no access, no answer in time: asked again after 30 s). Never blocks; Poll() collects.
  enum class LimitsState { kKnown, kPending, kUnknown };
  LimitsState Limits(std::string_view topic, const TopicLimits** limits);
  // Raises a fatal error inside the idempotent producer (tests only: OUTBOX_RELAY_TEST_HOOKS).
  void TestFatalError();
  rd_kafka_t* handle() { return rk_; }

 private:
  KafkaSink() = default;
  static void OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  rd_kafka_topic_t* Topic(std::string_view name);

  rd_kafka_t* rk_ = nullptr;
  ReportFn on_report_;
  absl::flat_hash_map<std::string, rd_kafka_topic_t*> topics_;
  void CollectTopicLimits();
  absl::Status CheckLimits(const ::outbox::Record& record, int64_t wire, const TopicLimits& limits) const;
  struct TopicState {
    bool answered = false;
    std::optional<TopicLimits> limits;  // when the answer named the topic's configuration
    std::chrono::steady_clock::time_point asked;
  };
  rd_kafka_queue_t* admin_queue_ = nullptr;  // DescribeConfigs answers
  // The last topic used, and the last topic whose limit is known (the hot path mostly repeats them).
  rd_kafka_topic_t* last_topic_ = nullptr;
  std::string last_topic_name_;
  std::string last_limits_topic_;
  const TopicLimits* last_limits_ = nullptr;  // known limits of last_limits_topic_ (stable: node map)
  absl::node_hash_map<std::string, TopicState> topic_limits_;
  bool config_unanswered_ = false;  // a topic's configuration request went unanswered past kTopicConfigWaitMs
  int wake_read_ = -1;
  int wake_write_ = -1;
  bool all_brokers_down_ = false;
  int64_t message_max_bytes_ = 1000000;
};

}  // namespace outbox::kafka
