// KafkaSink: librdkafka producer, delivery reports on the loop thread.
#include "common/strings.h"
#include "kafka/sink.h"
#include "kafka/producer_config.h"

#include <fcntl.h>

#include <algorithm>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace outbox::kafka {

absl::Status ApplyConf(rd_kafka_conf_t* c, const std::map<std::string, std::string>& conf) {
  char errstr[512];
  for (const auto& [key, value] : conf) {
    if (rd_kafka_conf_set(c, key.c_str(), value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      return absl::InvalidArgumentError(Cat("kafka.", key, ": ", errstr));
    }
  }
  return absl::OkStatus();
}

void InstallLogCallback(rd_kafka_conf_t* conf) {
  // librdkafka's own lines go through the relay's logger (level, JSON format, secret masking), not to stderr.
  rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t*, int level, const char* facility, const char* buf) {
    auto logger = spdlog::get("kafka");
    if (!logger) logger = spdlog::default_logger();
    const spdlog::level::level_enum lvl = level <= 2   ? spdlog::level::critical
                                          : level == 3 ? spdlog::level::err
                                          : level == 4 ? spdlog::level::warn
                                          : level <= 6 ? spdlog::level::info
                                                       : spdlog::level::debug;
    logger->log(lvl, "librdkafka {}: {}", facility, buf);
  });
}

DeliveryOutcome ClassifyDeliveryError(int code) {
  switch (static_cast<rd_kafka_resp_err_t>(code)) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return DeliveryOutcome::kAcked;
    // The producer's end: recreate it.
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return DeliveryOutcome::kFatal;
    // Ours (a rewind purges), or given up on for a reason a reconnect may cure.
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
    case RD_KAFKA_RESP_ERR__DESTROY:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__FAIL:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__RETRY:
    case RD_KAFKA_RESP_ERR__NODE_UPDATE:
    case RD_KAFKA_RESP_ERR__INCONSISTENT:
    case RD_KAFKA_RESP_ERR__GAPLESS_GUARANTEE:
    case RD_KAFKA_RESP_ERR__BAD_MSG:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_REPLICA_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
    case RD_KAFKA_RESP_ERR_DUPLICATE_SEQUENCE_NUMBER:
    case RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID:
    case RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS:
    case RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_NOT_CONTROLLER:
      return DeliveryOutcome::kRetriable;
    // This record, for good.
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    // A partition of its own (a column placed as the partition) that the topic does not have: refused at once when
    // the topic's metadata is known at Produce, and reported so when it arrives later (the same record, the same
    // decision: a rewind would only send its predecessors again and meet it again).
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return DeliveryOutcome::kRejectedEvent;
    // Its whole batch, for good: MSG_SIZE_TOO_LARGE, INVALID_TIMESTAMP, UNSUPPORTED_COMPRESSION_TYPE,
    // CORRUPT_MESSAGE, POLICY_VIOLATION, RECORD_LIST_TOO_LARGE, INVALID_REQUIRED_ACKS, UNSUPPORTED_VERSION and every
    // code not named above: retrying could only loop.
    default:
      return DeliveryOutcome::kRejectedBatch;
  }
}

namespace {

// Bytes of a zigzag varint (Kafka's record framing).
size_t VarintBytes(int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  size_t n = 1;
  while (z >= 0x80) {
    z >>= 7;
    ++n;
  }
  return n;
}

size_t FieldBytes(const std::optional<std::string_view>& field) {
  return field ? VarintBytes(static_cast<int64_t>(field->size())) + field->size() : VarintBytes(-1);
}

std::string UnknownPartitionError(int32_t partition, std::string_view topic, std::string_view error) {
  return Cat("partition ", partition, " of topic ", topic, ": ", error);
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

size_t WireBytes(const ::outbox::Record& record) {
  constexpr size_t kBatchHeader = 61;  // baseOffset .. recordsCount of a v2 record batch
  constexpr size_t kMaxDeltas = 10 + 5;  // timestampDelta (varlong) and offsetDelta (varint), at their widest
  size_t body = 1 /* attributes */ + kMaxDeltas + FieldBytes(record.key) + FieldBytes(record.value) +
                VarintBytes(static_cast<int64_t>(record.headers.size()));
  for (const ::outbox::Header& h : record.headers) body += FieldBytes(h.name) + FieldBytes(h.value);
  return kBatchHeader + VarintBytes(static_cast<int64_t>(body)) + body;
}

absl::StatusOr<std::unique_ptr<KafkaSink>> KafkaSink::Create(const std::map<std::string, std::string>& conf,
                                                             sinks::ReportHandler* handler, bool send_held_when_idle) {
  std::unique_ptr<KafkaSink> sink(new KafkaSink());
  sink->handler_ = handler;
  sink->send_held_when_idle_ = send_held_when_idle;
  for (const char* key : {"queue.buffering.max.ms", "linger.ms"}) {
    int64_t ms = 0;
    if (auto it = conf.find(key); it != conf.end() && absl::SimpleAtoi(it->second, &ms)) {
      sink->send_held_ = SendHeldPolicy(std::chrono::milliseconds(ms));
    }
  }
  char errstr[512];
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  if (absl::Status st = ApplyConf(c, conf); !st.ok()) {
    rd_kafka_conf_destroy(c);
    return st;
  }
  if (auto it = conf.find("message.max.bytes"); it != conf.end()) absl::SimpleAtoi(it->second, &sink->message_max_bytes_);
  sink->transactional_ = conf.contains("transactional.id");
  sink->txn_timeout_ms_ = static_cast<int>(TransactionTimeoutMs(conf));
  rd_kafka_conf_set_dr_msg_cb(c, &KafkaSink::OnDelivery);
  InstallLogCallback(c);
  rd_kafka_conf_set_error_cb(c, &KafkaSink::OnError);
  rd_kafka_conf_set_opaque(c, sink.get());
  sink->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, c, errstr, sizeof errstr);
  if (sink->rk_ == nullptr) {
    rd_kafka_conf_destroy(c);
    return absl::InvalidArgumentError(Cat("kafka: could not create the producer: ", errstr));
  }
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return absl::InternalError("could not create the wakeup pipe");
  sink->wake_read_ = fds[0];
  sink->wake_write_ = fds[1];
  rd_kafka_queue_t* main_queue = rd_kafka_queue_get_main(sink->rk_);
  rd_kafka_queue_io_event_enable(main_queue, sink->wake_write_, "1", 1);
  rd_kafka_queue_destroy(main_queue);
  sink->admin_queue_ = rd_kafka_queue_new(sink->rk_);
  // A topic's configuration answer wakes the loop too (a first record to the topic waits for it).
  rd_kafka_queue_io_event_enable(sink->admin_queue_, sink->wake_write_, "1", 1);
  return sink;
}

KafkaSink::~KafkaSink() {
  if (rk_ != nullptr && in_transaction_ && broken_.ok()) {
    handler_ = nullptr;
    // Not committed: aborted now rather than left to the coordinator's timeout (or the next relay's fencing).
    if (rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, 2000)) rd_kafka_error_destroy(e);
  }
  if (rk_ != nullptr) {
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    handler_ = nullptr;
    rd_kafka_flush(rk_, 1000);
    rd_kafka_queue_t* main_queue = rd_kafka_queue_get_main(rk_);
    rd_kafka_queue_io_event_enable(main_queue, -1, nullptr, 0);
    rd_kafka_queue_destroy(main_queue);
    for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
    if (admin_queue_) {
      rd_kafka_queue_io_event_enable(admin_queue_, -1, nullptr, 0);
      rd_kafka_queue_destroy(admin_queue_);
    }
    rd_kafka_destroy(rk_);
  }
  if (wake_read_ >= 0) close(wake_read_);
  if (wake_write_ >= 0) close(wake_write_);
}

rd_kafka_topic_t* KafkaSink::Topic(std::string_view name) {
  // Consecutive records mostly go to the same topic: no lookup then; and no copy of the name for the lookup (a heap
  // allocation past 15 bytes) when records spread over a few topics.
  if (last_topic_ != nullptr && name == last_topic_name_) return last_topic_;
  last_topic_name_.assign(name);
  auto it = topics_.find(ToAbsl(name));
  if (it != topics_.end()) return last_topic_ = it->second;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, last_topic_name_.c_str(), nullptr);
  if (rkt != nullptr) topics_.emplace(last_topic_name_, rkt);
  return last_topic_ = rkt;
}

sinks::ProduceResult KafkaSink::Produce(const ::outbox::Record& record, uint64_t opaque) {
  using sinks::ProduceResult;
  if (transactional_) {
    if (absl::Status st = BeginIfNeeded(); !st.ok()) return ProduceResult::Failed(std::string(st.message()));
  }
  const int64_t wire = static_cast<int64_t>(WireBytes(record));
  if (wire > message_max_bytes_) {
    return ProduceResult::Rejected(Rejection::kTooLarge, Cat("record of ", wire, " bytes on the wire is larger than message.max.bytes (",
                                          message_max_bytes_, ")"));
  }
  const TopicLimits* limits = nullptr;
  switch (Limits(record.topic, &limits)) {
    case LimitsState::kPending:  // waiting for the topic's configuration
      return ProduceResult::Full();
    case LimitsState::kUnknown:
      break;
    case LimitsState::kKnown:
      if (ProduceResult r = CheckLimits(record, wire, *limits); !r.ok()) return r;
      break;
  }
  rd_kafka_topic_t* rkt = Topic(record.topic);
  if (rkt == nullptr) {
    return ProduceResult::Rejected(Rejection::kTopic, Cat("cannot produce to topic \"", record.topic, "\": ",
                                                   rd_kafka_err2str(rd_kafka_last_error())));
  }
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.headers.size());
  for (const ::outbox::Header& h : record.headers) {
    rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()),
                        h.value ? h.value->data() : nullptr, h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  }
  void* key = record.key ? const_cast<char*>(record.key->data()) : nullptr;
  const size_t key_len = record.key ? record.key->size() : 0;
  void* value = record.value ? const_cast<char*>(record.value->data()) : nullptr;
  const size_t value_len = record.value ? record.value->size() : 0;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk_, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(record.partition.value_or(RD_KAFKA_PARTITION_UA)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
      RD_KAFKA_V_TIMESTAMP(record.timestamp_ms), RD_KAFKA_V_HEADERS(headers),
      RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(opaque))), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (send_held_when_idle_) send_held_.Produced();
    return ProduceResult::Ok();
  }
  rd_kafka_headers_destroy(headers);
  switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return ProduceResult::Full();
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      return ProduceResult::Rejected(Rejection::kTooLarge, rd_kafka_err2str(err));
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
      return ProduceResult::Rejected(Rejection::kTopic, rd_kafka_err2str(err));
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return ProduceResult::Rejected(Rejection::kNone, rd_kafka_err2str(err));
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      // Only a record with a partition of its own (a column placed as the partition) is refused this at once: the
      // topic's metadata is known and has no such partition.
      return ProduceResult::Rejected(Rejection::kNone, UnknownPartitionError(record.partition.value_or(-1),
                                                                             record.topic, rd_kafka_err2str(err)));
    case RD_KAFKA_RESP_ERR__FATAL:
      // Recreating the producer clears it (the relay rewinds), so not fatal for the relay.
      return ProduceResult::Failed(Msg(FatalError()));
    default:
      return ProduceResult::Failed(Cat("produce failed: ", rd_kafka_err2str(err)));
  }
}

size_t KafkaSink::Outstanding() const {
  return static_cast<size_t>(std::max(0, rd_kafka_outq_len(rk_))) + commit_reports_.size() +
         (commit_waiting_ ? 1 : 0);
}

int KafkaSink::Poll(int timeout_ms) {
  if (commit_waiting_ && rd_kafka_outq_len(rk_) > 0) {
    // The commit waits for its records: what lingers goes out now, as commit_transaction's own flush sent it (a
    // flush marks the producer as flushing, which makes linger.ms immediate).
    rd_kafka_flush(rk_, kSendHeldWaitMs);
  }
  CommitIfAcknowledged();  // before waiting: its report is then served at once
  const int served = rd_kafka_poll(rk_, commit_reports_.empty() ? timeout_ms : 0) +
                     static_cast<int>(commit_reports_.size());
  CommitIfAcknowledged();
  ServeCommitReports();
  CollectTopicLimits();
  return served;
}

void KafkaSink::SendHeld() {
  if (!send_held_when_idle_) return;
  rd_kafka_poll(rk_, 0);  // reports already in: what is still outstanding is then queued or on its way
  if (std::optional<int> wait_ms = send_held_.Decide(rd_kafka_outq_len(rk_), std::chrono::steady_clock::now())) {
    rd_kafka_flush(rk_, *wait_ms);
    CollectTopicLimits();
  }
}

void KafkaSink::DrainWakeup() {
  char buf[256];
  while (read(wake_read_, buf, sizeof buf) > 0) {
  }
}

void KafkaSink::Purge() {
  commit_waiting_.reset();  // not asked for yet: the transaction is aborted below
  if (transactional_ && in_transaction_) {
    AbortTransaction("a rewind");
    return;
  }
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
}

absl::Status KafkaSink::InitTransactions(int timeout_ms) {
  if (initialized_) return absl::OkStatus();
  rd_kafka_error_t* e = rd_kafka_init_transactions(rk_, timeout_ms);
  if (e == nullptr) {
    initialized_ = true;
    return absl::OkStatus();
  }
  const std::string what = Cat("kafka: init_transactions: ", rd_kafka_error_name(e), ": ", rd_kafka_error_string(e));
  const bool fatal = rd_kafka_error_is_fatal(e) != 0;
  const rd_kafka_resp_err_t code = rd_kafka_error_code(e);
  rd_kafka_error_destroy(e);
  if (code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
      code == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
    return absl::PermissionDeniedError(Cat(what, " (the relay's principal needs Write and Describe on its "
                                                 "transactional id, outbox-relay.<system identifier>.<slot>)"));
  }
  if (fatal) broken_ = absl::InternalError(what);
  return absl::UnavailableError(what);
}

absl::Status KafkaSink::BeginIfNeeded() {
  if (in_transaction_) return absl::OkStatus();
  if (!initialized_) return absl::FailedPreconditionError("kafka: producing before init_transactions");
  if (!broken_.ok()) return broken_;
  rd_kafka_error_t* e = rd_kafka_begin_transaction(rk_);
  if (e != nullptr) {
    const std::string what = Cat("kafka: begin_transaction: ", rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    broken_ = absl::InternalError(what);  // a transaction state the relay does not expect: start over
    return broken_;
  }
  in_transaction_ = true;
  return absl::OkStatus();
}

void KafkaSink::AbortTransaction(std::string_view why) {
  in_transaction_ = false;
  // Bounded: an abort that does not finish leaves the producer broken, and its successor's init_transactions
  // aborts the transaction (the loop must not stand still for a transaction timeout).
  rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, std::min(txn_timeout_ms_, kAbortWaitMs));
  if (e == nullptr) return;
  // Not aborted (the broker is down or slow, or the producer was fenced): this producer cannot go on; its
  // successor's init_transactions aborts the transaction. Only a fatal error (fenced) is the producer's own fault.
  const std::string what = Cat("kafka: abort_transaction after ", why, ": ", rd_kafka_error_name(e), ": ",
                               rd_kafka_error_string(e));
  broken_ = rd_kafka_error_is_fatal(e) ? absl::InternalError(what) : absl::UnavailableError(what);
  rd_kafka_error_destroy(e);
}

sinks::CheckpointWrite KafkaSink::CommitTransaction(const ::outbox::Record& checkpoint, uint64_t origin) {
  using Code = sinks::CheckpointWrite::Code;
  if (!broken_.ok()) return {Code::kFailed, broken_};
  if (commit_waiting_) return {Code::kBusy, absl::OkStatus()};
  const sinks::ProduceResult produced = Produce(checkpoint, 0);
  switch (produced.code) {
    case sinks::ProduceResult::Code::kOk:
      break;
    case sinks::ProduceResult::Code::kFull:
      return {Code::kBusy, absl::OkStatus()};
    case sinks::ProduceResult::Code::kFailed:
      return {Code::kFailed, absl::UnavailableError(Cat("writing a checkpoint failed: ", produced.error))};
    case sinks::ProduceResult::Code::kRejected:
      return {Code::kError, absl::FailedPreconditionError(Cat("the checkpoint topic refused a checkpoint: ",
                                                              produced.error))};
  }
  // Wait here for the records' acknowledgements, as commit_transaction's own flush did (a flush makes linger.ms
  // immediate); what is not acknowledged by then is committed by the Poll that finds every record acknowledged.
  commit_waiting_ = origin;
  rd_kafka_flush(rk_, std::min(txn_timeout_ms_, kCommitFlushWaitMs));
  CommitIfAcknowledged();
  return {Code::kPending, absl::OkStatus()};
}

void KafkaSink::CommitIfAcknowledged() {
  // Every record of the transaction, the checkpoint included, is acknowledged (or failed): only EndTxn is left.
  if (commit_waiting_ && rd_kafka_outq_len(rk_) == 0) Commit(*std::exchange(commit_waiting_, std::nullopt));
}

void KafkaSink::Commit(uint64_t origin) {
  // One call, never resumed: a commit_transaction call that returns early (timed out) leaves its pending steps'
  // answers behind in librdkafka's one slot for the transactional API's result, and a later call takes them as its
  // own: it can return success while the EndTxn is still unanswered (found under CI load, where each Poll resumed
  // the commit with a zero timeout: the relay confirmed the slot past a transaction the coordinator then aborted).
  // Called once nothing is outstanding, the call is the EndTxn round trip alone; one that does not finish in time
  // leaves the outcome to the coordinator, and this producer is not used again.
  const int wait_ms = std::min(txn_timeout_ms_, kCommitWaitMs);
  rd_kafka_error_t* e = rd_kafka_commit_transaction(rk_, wait_ms);
  if (e == nullptr) {
    in_transaction_ = false;
    commit_reports_.push_back({origin, sinks::Outcome::kAcked, ""});
  } else {
    std::string what = Cat("commit_transaction: ", rd_kafka_error_name(e), ": ", rd_kafka_error_string(e));
    const bool fatal = rd_kafka_error_is_fatal(e) != 0;
    const bool abort = rd_kafka_error_txn_requires_abort(e) != 0;
    const bool retriable = rd_kafka_error_is_retriable(e) != 0;
    rd_kafka_error_destroy(e);
    if (fatal) {
      // Fenced (a newer relay of this slot ran init_transactions), or the producer failed for good.
      in_transaction_ = false;
      broken_ = absl::InternalError(Cat("kafka: ", what));
      commit_reports_.push_back({origin, sinks::Outcome::kFatal, std::move(what)});
    } else if (retriable && !abort) {
      // Not finished in time (the broker is slow or away): its outcome is the coordinator's to decide. The relay
      // rewinds; the next producer's init_transactions completes or aborts the transaction, and the checkpoint read
      // after it says which.
      in_transaction_ = false;
      broken_ = absl::UnavailableError(Cat("kafka: the broker did not finish a commit within ", wait_ms, " ms (",
                                           what, ")"));
      commit_reports_.push_back({origin, sinks::Outcome::kRetriable, std::move(what)});
    } else {
      // Abortable: abort, and the relay rewinds (nothing of it was committed).
      AbortTransaction(what);
      commit_reports_.push_back({origin, sinks::Outcome::kRetriable, std::move(what)});
    }
  }
  if (wake_write_ >= 0) (void)!write(wake_write_, "1", 1);
}

void KafkaSink::ServeCommitReports() {
  while (!commit_reports_.empty()) {
    const CommitReport c = std::move(commit_reports_.front());
    commit_reports_.pop_front();
    if (handler_ == nullptr) continue;
    sinks::Report r;
    r.origin = c.origin;
    r.outcome = c.outcome;
    r.error = c.error;
    r.error_name = c.outcome == sinks::Outcome::kAcked ? "" : "TRANSACTION";
    handler_->OnReport(r);
  }
}

absl::Status KafkaSink::FatalError() const {
  if (!broken_.ok()) return broken_;
  char errstr[512];
  rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk_, errstr, sizeof errstr);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::InternalError(Cat("kafka producer fatal error: ", rd_kafka_err2name(err), ": ", errstr));
}

absl::Status KafkaSink::CheckReachable(int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, nullptr, &md, timeout_ms);
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(Cat("broker metadata: ", rd_kafka_err2str(err)));
  }
  all_brokers_down_ = false;
  last_error_.clear();
  return absl::OkStatus();
}

void KafkaSink::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->all_brokers_down_ = false;
    self->last_error_.clear();
  }
  if (self->handler_ == nullptr) return;
  // In a transaction a record's success means nothing yet: the commit's report acknowledges it.
  if (self->transactional_ && msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  sinks::Report r;
  r.origin = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(msg->_private));
  r.outcome = ClassifyDeliveryError(msg->err);
  r.topic = msg->rkt ? rd_kafka_topic_name(msg->rkt) : "";
  r.bytes = msg->len + msg->key_len;
  // The record itself, its id and source_lsn headers only serve errors and dead letters: nothing is copied or looked
  // up for the (many) successes.
  ::outbox::OwnedRecord rejected;
  std::string error;
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    r.error = rd_kafka_err2str(msg->err);
    if (msg->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {  // worded as Produce words it
      error = UnknownPartitionError(msg->partition, r.topic, r.error);
      r.error = error;
    }
    r.error_name = rd_kafka_err2name(msg->err);
    if (msg->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) r.reason = Rejection::kTooLarge;
    rejected.topic = std::string(r.topic);
    if (msg->key) rejected.key = std::string(static_cast<const char*>(msg->key), msg->key_len);
    if (msg->payload) rejected.value = std::string(static_cast<const char*>(msg->payload), msg->len);
    rd_kafka_timestamp_type_t tstype;
    rejected.timestamp_ms = rd_kafka_message_timestamp(msg, &tstype);
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(msg, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR && headers != nullptr) {
      const char* name;
      const void* value;
      size_t size;
      for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
           ++i) {
        rejected.headers.emplace_back(
            name, value ? std::optional<std::string>(std::string(static_cast<const char*>(value), size))
                        : std::nullopt);
        if (std::string_view(name) == "id" && value) rejected.event_id = *rejected.headers.back().second;
      }
    }
    r.source_lsn = rejected.HeaderText("source_lsn");
    r.event_id = rejected.event_id;
    r.rejected = &rejected;
  }
  self->handler_->OnReport(r);
}

void KafkaSink::OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) self->all_brokers_down_ = true;
  // "All brokers are down" says less than the error before it (a refused authentication, a TLS failure): keep that.
  if (err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || self->last_error_.empty()) {
    self->last_error_ = Cat(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), ": ", reason);
  }
  spdlog::get("kafka") ? spdlog::get("kafka")->warn("kafka: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason)
                       : spdlog::warn("kafka: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

sinks::ProduceResult KafkaSink::CheckLimits(const ::outbox::Record& record, int64_t wire,
                                            const TopicLimits& limits) const {
  using sinks::ProduceResult;
  if (limits.max_message_bytes && wire > *limits.max_message_bytes) {
    return ProduceResult::Rejected(Rejection::kTooLarge, Cat("record of ", wire, " bytes on the wire is larger than topic ", record.topic,
                                          "'s max.message.bytes (", *limits.max_message_bytes, ")"));
  }
  if (limits.log_append_time || record.timestamp_ms <= 0) return ProduceResult::Ok();
  // Kafka refuses a CreateTime timestamp too far from its own clock (INVALID_TIMESTAMP, for the whole batch).
  const int64_t now = NowMillis();
  // The skew margin never takes more than half of a small limit.
  const auto allowed = [](int64_t limit) { return std::max(limit - kTimestampSkewMarginMs, limit / 2); };
  if (limits.timestamp_after_max_ms && record.timestamp_ms - now > allowed(*limits.timestamp_after_max_ms)) {
    return ProduceResult::Rejected(Rejection::kTimestamp, Cat("timestamp ", record.timestamp_ms, " is ", record.timestamp_ms - now,
                                          " ms in the future, beyond topic ", record.topic,
                                          "'s message.timestamp.after.max.ms (", *limits.timestamp_after_max_ms,
                                          ", less ", kTimestampSkewMarginMs, " ms for clock skew)"));
  }
  if (limits.timestamp_before_max_ms && now - record.timestamp_ms > allowed(*limits.timestamp_before_max_ms)) {
    return ProduceResult::Rejected(Rejection::kTimestamp, Cat("timestamp ", record.timestamp_ms, " is ", now - record.timestamp_ms,
                                          " ms in the past, beyond topic ", record.topic,
                                          "'s message.timestamp.before.max.ms (", *limits.timestamp_before_max_ms,
                                          ", less ", kTimestampSkewMarginMs, " ms for clock skew)"));
  }
  return ProduceResult::Ok();
}

KafkaSink::LimitsState KafkaSink::Limits(std::string_view topic, const TopicLimits** limits) {
  if (last_limits_ != nullptr && topic == last_limits_topic_) {
    *limits = last_limits_;
    return LimitsState::kKnown;
  }
  auto it = topic_limits_.find(ToAbsl(topic));
  if (it != topic_limits_.end() && it->second.limits) {  // an answer is kept
    last_limits_topic_.assign(topic);
    last_limits_ = &*it->second.limits;
    *limits = last_limits_;
    return LimitsState::kKnown;
  }
  const auto now = std::chrono::steady_clock::now();
  std::string name(topic);
  if (it != topic_limits_.end()) {
    TopicState& t = it->second;
    if (!t.answered && now - t.asked < std::chrono::milliseconds(kTopicConfigWaitMs) && !config_unanswered_) {
      return LimitsState::kPending;
    }
    if (!t.answered) config_unanswered_ = true;
    // No answer in time, or the broker did not say (the topic does not exist yet, the broker is down): ask again
    // later.
    if (now - t.asked < std::chrono::seconds(30)) return LimitsState::kUnknown;
  }
  topic_limits_[name] = TopicState{false, std::nullopt, now};
  char errstr[256];
  rd_kafka_ConfigResource_t* res = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name.c_str());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  rd_kafka_AdminOptions_set_request_timeout(opts, 10000, errstr, sizeof errstr);
  rd_kafka_DescribeConfigs(rk_, &res, 1, opts, admin_queue_);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_ConfigResource_destroy(res);
  return config_unanswered_ ? LimitsState::kUnknown : LimitsState::kPending;
}

void KafkaSink::CollectTopicLimits() {
  while (rd_kafka_event_t* ev = rd_kafka_queue_poll(admin_queue_, 0)) {
    const rd_kafka_DescribeConfigs_result_t* dr = rd_kafka_event_DescribeConfigs_result(ev);
    size_t nres = 0;
    const rd_kafka_ConfigResource_t** rs = dr ? rd_kafka_DescribeConfigs_result_resources(dr, &nres) : nullptr;
    for (size_t i = 0; i < nres; ++i) {
      auto it = topic_limits_.find(std::string(rd_kafka_ConfigResource_name(rs[i])));
      if (it == topic_limits_.end()) continue;
      it->second.answered = true;
      config_unanswered_ = false;
      if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR ||
          rd_kafka_ConfigResource_error(rs[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        continue;
      }
      TopicLimits limits;
      size_t nconf = 0;
      const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(rs[i], &nconf);
      for (size_t j = 0; j < nconf; ++j) {
        const std::string_view name = rd_kafka_ConfigEntry_name(entries[j]);
        const char* value = rd_kafka_ConfigEntry_value(entries[j]);
        if (value == nullptr) continue;
        int64_t v = 0;
        if (name == "max.message.bytes" && absl::SimpleAtoi(value, &v)) limits.max_message_bytes = v;
        if (name == "message.timestamp.type") limits.log_append_time = std::string_view(value) == "LogAppendTime";
        if (name == "message.timestamp.after.max.ms" && absl::SimpleAtoi(value, &v)) limits.timestamp_after_max_ms = v;
        if (name == "message.timestamp.before.max.ms" && absl::SimpleAtoi(value, &v)) {
          limits.timestamp_before_max_ms = v;
        }
      }
      it->second.limits = limits;
    }
    if (nres == 0) {  // a failed request names no resource: every topic still asked stops waiting
      for (auto& [name, t] : topic_limits_) t.answered = true;
    }
    rd_kafka_event_destroy(ev);
  }
}

}  // namespace outbox::kafka
