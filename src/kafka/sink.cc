// KafkaSink: librdkafka producer, delivery reports on the loop thread.
#include "common/strings.h"
#include "kafka/sink.h"

#include <fcntl.h>
#include <unistd.h>

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

bool IsPermanentDeliveryError(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<std::unique_ptr<KafkaSink>> KafkaSink::Create(const std::map<std::string, std::string>& conf,
                                                             ReportFn on_report) {
  std::unique_ptr<KafkaSink> sink(new KafkaSink());
  sink->on_report_ = std::move(on_report);
  char errstr[512];
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  if (absl::Status st = ApplyConf(c, conf); !st.ok()) {
    rd_kafka_conf_destroy(c);
    return st;
  }
  if (auto it = conf.find("message.max.bytes"); it != conf.end()) absl::SimpleAtoi(it->second, &sink->message_max_bytes_);
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
  return sink;
}

KafkaSink::~KafkaSink() {
  if (rk_ != nullptr) {
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    on_report_ = nullptr;
    rd_kafka_flush(rk_, 1000);
    rd_kafka_queue_t* main_queue = rd_kafka_queue_get_main(rk_);
    rd_kafka_queue_io_event_enable(main_queue, -1, nullptr, 0);
    rd_kafka_queue_destroy(main_queue);
    for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
    if (admin_queue_) rd_kafka_queue_destroy(admin_queue_);
    rd_kafka_destroy(rk_);
  }
  if (wake_read_ >= 0) close(wake_read_);
  if (wake_write_ >= 0) close(wake_write_);
}

rd_kafka_topic_t* KafkaSink::Topic(std::string_view name) {
  // Consecutive records mostly go to the same topic: no lookup, no allocation then.
  if (last_topic_ != nullptr && name == last_topic_name_) return last_topic_;
  std::string key(name);
  last_topic_name_ = key;
  auto it = topics_.find(key);
  if (it != topics_.end()) return last_topic_ = it->second;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, key.c_str(), nullptr);
  if (rkt != nullptr) topics_.emplace(std::move(key), rkt);
  return last_topic_ = rkt;
}

absl::Status KafkaSink::Produce(const outbox::Record& record, uint64_t opaque) {
  if (static_cast<int64_t>(record.Bytes()) > message_max_bytes_) {
    return absl::InvalidArgumentError(Cat("record of ", record.Bytes(), " bytes is larger than message.max.bytes (",
                                                   message_max_bytes_, ")"));
  }
  if (auto limit = TopicMaxMessageBytes(record.topic); limit && static_cast<int64_t>(record.Bytes()) > *limit) {
    return absl::InvalidArgumentError(Cat("record of ", record.Bytes(), " bytes is larger than topic ", record.topic,
                                          "'s max.message.bytes (", *limit, ")"));
  }
  rd_kafka_topic_t* rkt = Topic(record.topic);
  if (rkt == nullptr) {
    return absl::InvalidArgumentError(Cat("cannot produce to topic \"", record.topic, "\": ",
                                                   rd_kafka_err2str(rd_kafka_last_error())));
  }
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.headers.size());
  for (const outbox::Header& h : record.headers) {
    rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()),
                        h.value ? h.value->data() : nullptr, h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  }
  void* key = record.key ? const_cast<char*>(record.key->data()) : nullptr;
  const size_t key_len = record.key ? record.key->size() : 0;
  void* value = record.value ? const_cast<char*>(record.value->data()) : nullptr;
  const size_t value_len = record.value ? record.value->size() : 0;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk_, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
      RD_KAFKA_V_TIMESTAMP(record.timestamp_ms), RD_KAFKA_V_HEADERS(headers),
      RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(opaque))), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  rd_kafka_headers_destroy(headers);
  switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return absl::ResourceExhaustedError("producer queue full");
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return absl::InvalidArgumentError(rd_kafka_err2str(err));
    case RD_KAFKA_RESP_ERR__FATAL:
      // Recreating the producer clears it (the relay rewinds): UNAVAILABLE, not fatal for the relay.
      return absl::UnavailableError(Msg(FatalError()));
    default:
      return absl::UnavailableError(Cat("produce failed: ", rd_kafka_err2str(err)));
  }
}

int KafkaSink::Poll(int timeout_ms) {
  const int served = rd_kafka_poll(rk_, timeout_ms);
  CollectTopicLimits();
  return served;
}

void KafkaSink::DrainWakeup() {
  char buf[256];
  while (read(wake_read_, buf, sizeof buf) > 0) {
  }
}

void KafkaSink::Purge() { rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT); }

absl::Status KafkaSink::Flush(int timeout_ms) {
  rd_kafka_resp_err_t err = rd_kafka_flush(rk_, timeout_ms);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::DeadlineExceededError(Cat(rd_kafka_outq_len(rk_), " records still waiting for the broker"));
}

absl::Status KafkaSink::FatalError() const {
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
  return absl::OkStatus();
}

void KafkaSink::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) self->all_brokers_down_ = false;
  if (!self->on_report_) return;
  DeliveryReport r;
  r.opaque = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(msg->_private));
  r.err = msg->err;
  r.topic = msg->rkt ? rd_kafka_topic_name(msg->rkt) : "";
  r.partition = msg->partition;
  r.offset = msg->offset;
  r.bytes = msg->len + msg->key_len;
  rd_kafka_timestamp_type_t tstype;
  r.timestamp_ms = rd_kafka_message_timestamp(msg, &tstype);
  r.message = msg;
  // The id and source_lsn headers only serve error messages: no header lookups for the (many) successes.
  rd_kafka_headers_t* headers = nullptr;
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR && rd_kafka_message_headers(msg, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
      headers != nullptr) {
    const void* v = nullptr;
    size_t n = 0;
    if (rd_kafka_header_get_last(headers, "id", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR && v) {
      r.event_id = std::string_view(static_cast<const char*>(v), n);
    }
    if (rd_kafka_header_get_last(headers, "source_lsn", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR && v) {
      r.source_lsn = std::string_view(static_cast<const char*>(v), n);
    }
  }
  self->on_report_(r);
}

void KafkaSink::OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) self->all_brokers_down_ = true;
  spdlog::get("kafka") ? spdlog::get("kafka")->warn("kafka: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason)
                       : spdlog::warn("kafka: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

std::optional<int64_t> KafkaSink::TopicMaxMessageBytes(std::string_view topic) {
  if (last_limit_known_ && topic == last_limit_topic_) return last_limit_;
  std::string name(topic);
  const auto now = std::chrono::steady_clock::now();
  if (auto it = topic_limits_.find(name); it != topic_limits_.end()) {
    // An answer is kept; no answer yet (asked, the topic does not exist, the broker is down) is asked again later.
    if (it->second.max_message_bytes) {
      last_limit_known_ = true;
      last_limit_topic_ = name;
      last_limit_ = it->second.max_message_bytes;
      return last_limit_;
    }
    if (now - it->second.asked < std::chrono::seconds(30)) return std::nullopt;
  }
  topic_limits_[name] = TopicLimit{std::nullopt, now};
  char errstr[256];
  rd_kafka_ConfigResource_t* res = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name.c_str());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  rd_kafka_AdminOptions_set_request_timeout(opts, 10000, errstr, sizeof errstr);
  rd_kafka_DescribeConfigs(rk_, &res, 1, opts, admin_queue_);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_ConfigResource_destroy(res);
  return std::nullopt;
}

void KafkaSink::CollectTopicLimits() {
  while (rd_kafka_event_t* ev = rd_kafka_queue_poll(admin_queue_, 0)) {
    const rd_kafka_DescribeConfigs_result_t* dr = rd_kafka_event_DescribeConfigs_result(ev);
    size_t nres = 0;
    const rd_kafka_ConfigResource_t** rs =
        dr && rd_kafka_event_error(ev) == RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_DescribeConfigs_result_resources(dr, &nres)
                                                                    : nullptr;
    for (size_t i = 0; i < nres; ++i) {
      if (rd_kafka_ConfigResource_error(rs[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
      size_t nconf = 0;
      const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(rs[i], &nconf);
      for (size_t j = 0; j < nconf; ++j) {
        if (std::string_view(rd_kafka_ConfigEntry_name(entries[j])) != "max.message.bytes") continue;
        int64_t v = 0;
        const char* value = rd_kafka_ConfigEntry_value(entries[j]);
        if (value && absl::SimpleAtoi(value, &v)) {
          topic_limits_[rd_kafka_ConfigResource_name(rs[i])].max_message_bytes = v;
        }
      }
    }
    rd_kafka_event_destroy(ev);
  }
}

void KafkaSink::TestFatalError() {
  rd_kafka_test_fatal_error(rk_, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, "test hook: injected fatal error");
}

}  // namespace outbox::kafka
