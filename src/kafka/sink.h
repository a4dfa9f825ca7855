// KafkaSink: the Sink (sinks/sink.h) around librdkafka's idempotent producer. Owned by the loop thread: Produce,
// Poll and the delivery callback all run there (librdkafka's own threads never call back into the relay). The main queue signals a
// pipe when it turns non-empty, so the loop can wait on it beside the PostgreSQL socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
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
#include "kafka/send_held.h"
#include "sinks/checkpoint_store.h"
#include "sinks/sink.h"

// librdkafka's handles, declared as librdkafka declares them (its header stays out of the sink's users).
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace outbox::kafka {

// The outcomes and reasons are the Sink interface's (sinks/sink.h); these names are kept for the sink's own code.
using DeliveryOutcome = ::outbox::sinks::Outcome;
using Rejection = ::outbox::sinks::Reason;

// One exhaustive decision per librdkafka error code (rd_kafka_resp_err_t), as Redpanda's is_retriable_error. The
// producer retries transient broker errors itself, forever (retries and message.timeout.ms are unbounded), so an
// error that reaches a report is either the relay's own doing (a purge), the producer's end (fatal), or the broker
// refusing the record for good. An unknown code is kRejectedBatch (halt rather than loop on it).
DeliveryOutcome ClassifyDeliveryError(int err);
inline std::string_view DeliveryOutcomeName(DeliveryOutcome outcome) { return ::outbox::sinks::OutcomeName(outcome); }

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

// Sets every property of `conf` on `c` (librdkafka's names); an error names the key as `kafka.<key>`. On error
// `c` keeps what was set before; the caller still owns (and destroys) it.
absl::Status ApplyConf(rd_kafka_conf_t* c, const std::map<std::string, std::string>& conf);

// Routes librdkafka's log lines to the spdlog logger "kafka" (used for every client the relay creates).
void InstallLogCallback(rd_kafka_conf_t* conf);

class KafkaSink final : public ::outbox::sinks::Sink {
 public:
  // `conf` is the full librdkafka configuration (see BuildProducerConfig). Errors name the key. Reports go to
  // `handler` (which outlives the sink) from Poll and Flush.
  // `send_held_when_idle` (SendsHeldWhenIdle): SendHeld sends the records lingering in librdkafka's queues.
  static absl::StatusOr<std::unique_ptr<KafkaSink>> Create(const std::map<std::string, std::string>& conf,
                                                           ::outbox::sinks::ReportHandler* handler,
                                                           bool send_held_when_idle = false);
  ~KafkaSink() override;
  KafkaSink(const KafkaSink&) = delete;
  KafkaSink& operator=(const KafkaSink&) = delete;

  // Queues one record. kFull: librdkafka's queue is full, or the first record to a topic waits for the topic's
  // configuration. kRejected: too large, or a timestamp the topic refuses, checked before producing. kFailed: the
  // producer failed.
  ::outbox::sinks::ProduceResult Produce(const ::outbox::Record& record, uint64_t opaque) override;
  // Serves delivery reports and error events; returns how many events were served.
  int Poll(int timeout_ms) override;
  // Sends the records lingering in librdkafka's queues now (rd_kafka_flush for at most kSendHeldWaitMs: while it
  // runs librdkafka takes linger.ms as over), unless records sent earlier, and recently, are still unacknowledged:
  // then the new ones wait for those and go out together (as Nagle's algorithm holds small segments). So a
  // lone record goes out at once, and a busy stream keeps librdkafka's batches. The flush returns once everything
  // is acknowledged or the wait is over, serving reports as Poll does; the wait lets librdkafka's threads see it (a
  // flush of 0 ms ends before they wake), and within the linger a later idle round repeats it.
  // When, and for how long: SendHeldPolicy (send_held.h).
  void SendHeld() override;
  static constexpr int kSendHeldWaitMs = SendHeldPolicy::kWaitMs;
  // Readable when the main queue has events; drain it with DrainWakeup() then Poll(0).
  int wakeup_fd() const override { return wake_read_; }
  void DrainWakeup() override;
  // Drops every queued and in-flight record (each still gets a delivery report with _PURGE_*).
  void Purge() override;
  size_t Outstanding() const override;
  // The idempotent producer's fatal error, if one was raised.
  absl::Status FatalError() const override;
  // False while librdkafka reports every broker down (set by the error callback, cleared by a delivery success).
  bool reachable() const override { return !all_brokers_down_; }
  // librdkafka's last error event (its code's name and words), until a delivery or a probe succeeds.
  std::string unreachable_reason() const override { return last_error_; }
  // Metadata request to the cluster: OK when a broker answers within the timeout (blocks; not on the hot path).
  absl::Status CheckReachable(int timeout_ms) override;
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
  rd_kafka_t* handle() { return rk_; }

  // ---- Transactions (a configuration with transactional.id: delivery.guarantee exactly_once) ----
  // Records go into a Kafka transaction begun at the first record after a commit; a record's success gets no
  // report of its own (the commit's report covers it), a failure is reported as usual.
  bool transactional() const { return transactional_; }
  // init_transactions: fences every earlier producer of this transactional.id and aborts its open transaction
  // (blocks). Only once the relay holds the slot (a standby must not fence the active relay).
  absl::Status InitTransactions(int timeout_ms);
  bool transactions_ready() const { return initialized_; }
  // Produces `checkpoint` into the open transaction and commits it: once every record of the transaction is
  // acknowledged (waited for here up to kCommitFlushWaitMs, else by the Poll that finds them all acknowledged),
  // commit_transaction is called once and blocks for the EndTxn round trip alone (at most kCommitWaitMs, capped by
  // the transaction timeout). The result is reported with `origin` by a Poll: kAcked
  // (committed), kRetriable (aborted, or not finished in time: rewind; the latter leaves the producer unusable),
  // kFatal (fenced or unusable: recreate the producer). kFailed when it could not even start.
  ::outbox::sinks::CheckpointWrite CommitTransaction(const ::outbox::Record& checkpoint, uint64_t origin);
  static constexpr int kCommitWaitMs = 10000;
  static constexpr int kCommitFlushWaitMs = 500;  // CommitTransaction's own wait for the records' acknowledgements
  static constexpr int kAbortWaitMs = 3000;

 private:
  KafkaSink() = default;
  static void OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  rd_kafka_topic_t* Topic(std::string_view name);

  rd_kafka_t* rk_ = nullptr;
  ::outbox::sinks::ReportHandler* handler_ = nullptr;
  absl::flat_hash_map<std::string, rd_kafka_topic_t*> topics_;
  void CollectTopicLimits();
  ::outbox::sinks::ProduceResult CheckLimits(const ::outbox::Record& record, int64_t wire, const TopicLimits& limits) const;
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
  std::string last_error_;
  int64_t message_max_bytes_ = 1000000;
  bool send_held_when_idle_ = false;
  SendHeldPolicy send_held_{std::chrono::milliseconds(5)};  // with linger.ms (queue.buffering.max.ms) as configured
  // Transactions.
  bool transactional_ = false;
  bool initialized_ = false;
  bool in_transaction_ = false;
  absl::Status broken_;  // an abort that did not complete: the producer must be recreated
  int txn_timeout_ms_ = 60000;
  struct CommitReport {
    uint64_t origin;
    ::outbox::sinks::Outcome outcome;
    std::string error;
  };
  std::deque<CommitReport> commit_reports_;  // served by Poll
  std::optional<uint64_t> commit_waiting_;  // a commit asked for, waiting for its records' acknowledgements (origin)
  absl::Status BeginIfNeeded();
  // Calls commit_transaction once for `origin` and queues its report.
  void Commit(uint64_t origin);
  // Commit() for the waiting commit once nothing is outstanding.
  void CommitIfAcknowledged();
  void AbortTransaction(std::string_view why);
  void ServeCommitReports();
};

}  // namespace outbox::kafka
