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

#include <librdkafka/rdkafka.h>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "outbox/mapper.h"

namespace outbox::kafka {

struct DeliveryReport {
  uint64_t opaque = 0;  // what Produce was given
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string_view topic;
  int32_t partition = -1;
  int64_t offset = -1;
  size_t bytes = 0;  // key + value as produced
  int64_t timestamp_ms = -1;
  std::string_view event_id;    // the record's `id` header (for errors)
  std::string_view source_lsn;  // the record's `source_lsn` header
  const rd_kafka_message_t* message = nullptr;  // the record itself (key, payload, headers), valid during the call
};

// Errors that are about the record itself and will not go away by retrying (delivery.on_error decides). Any
// other error in a delivery report makes the relay rewind.
bool IsPermanentDeliveryError(rd_kafka_resp_err_t err);

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

  // Enqueues one record. RESOURCE_EXHAUSTED: librdkafka's queue is full (poll and retry). INVALID_ARGUMENT: a
  // permanent error for this record (too large). Others: fatal.
  absl::Status Produce(const outbox::Record& record, uint64_t opaque);
  // Serves delivery reports and error events; returns how many events were served.
  int Poll(int timeout_ms);
  // Readable when the main queue has events; drain it with DrainWakeup() then Poll(0).
  int wakeup_fd() const { return wake_read_; }
  void DrainWakeup();
  // Drops every queued and in-flight record (each still gets a delivery report with _PURGE_*).
  void Purge();
  int OutQueueLength() const { return rd_kafka_outq_len(rk_); }
  // Waits for every record's delivery report, up to the timeout.
  absl::Status Flush(int timeout_ms);
  // The idempotent producer's fatal error, if one was raised.
  absl::Status FatalError() const;
  // True while librdkafka reports every broker down (set by the error callback, cleared by a delivery success).
  bool all_brokers_down() const { return all_brokers_down_; }
  // Metadata request to the cluster: OK when a broker answers within the timeout (blocks; not on the hot path).
  absl::Status CheckReachable(int timeout_ms);
  int64_t message_max_bytes() const { return message_max_bytes_; }
  // The topic's max.message.bytes as far as known: the first call for a topic sends a DescribeConfigs request
  // and returns nullopt; Poll() collects the answer. Never blocks (the loop must keep its status updates going).
  // nullopt also while the broker does not say (the topic does not exist yet: asked again after 30 s).
  std::optional<int64_t> TopicMaxMessageBytes(std::string_view topic);
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
  struct TopicLimit {
    std::optional<int64_t> max_message_bytes;
    std::chrono::steady_clock::time_point asked;
  };
  rd_kafka_queue_t* admin_queue_ = nullptr;  // DescribeConfigs answers
  // The last topic used, and the last topic whose limit is known (the hot path mostly repeats them).
  rd_kafka_topic_t* last_topic_ = nullptr;
  std::string last_topic_name_;
  bool last_limit_known_ = false;
  std::string last_limit_topic_;
  std::optional<int64_t> last_limit_;
  absl::flat_hash_map<std::string, TopicLimit> topic_limits_;
  int wake_read_ = -1;
  int wake_write_ = -1;
  bool all_brokers_down_ = false;
  int64_t message_max_bytes_ = 1000000;
};

}  // namespace outbox::kafka
