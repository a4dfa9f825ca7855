// The broker probe of `check`.
#include "kafka/probe.h"

#include <librdkafka/rdkafka.h>

#include <mutex>
#include <string_view>

#include "common/strings.h"
#include "kafka/sink.h"

namespace outbox::kafka {
namespace {

// Asks the cluster for its metadata with the relay's producer configuration. librdkafka's own log lines (and
// error events, if any are served) are collected, not printed: the last one is the cause given when no broker
// answers.
class BrokerProbe {
 public:
  static absl::StatusOr<int> Run(const std::map<std::string, std::string>& conf, int timeout_ms) {
    BrokerProbe probe;
    char errstr[512];
    rd_kafka_conf_t* c = rd_kafka_conf_new();
    if (absl::Status st = kafka::ApplyConf(c, conf); !st.ok()) {
      rd_kafka_conf_destroy(c);
      return st;
    }
    rd_kafka_conf_set_opaque(c, &probe);
    rd_kafka_conf_set_log_cb(c, &BrokerProbe::OnLog);
    rd_kafka_conf_set_error_cb(c, &BrokerProbe::OnError);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, errstr, sizeof errstr);
    if (rk == nullptr) {
      rd_kafka_conf_destroy(c);
      return absl::InvalidArgumentError(Cat("kafka: ", errstr));
    }
    const rd_kafka_metadata_t* md = nullptr;
    const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, nullptr, &md, timeout_ms);
    const int brokers = md != nullptr ? md->broker_cnt : 0;
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    rd_kafka_destroy(rk);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::lock_guard<std::mutex> lock(probe.mu_);
      return absl::UnavailableError(
          Cat(rd_kafka_err2str(err), probe.last_.empty() ? "" : Cat(" (", probe.last_, ")")));
    }
    return brokers;
  }

 private:
  static void OnLog(const rd_kafka_t* rk, int level, const char*, const char* line) {
    if (level > 4) return;  // warnings and worse only
    auto* self = static_cast<BrokerProbe*>(rd_kafka_opaque(rk));
    std::string_view text(line);
    // "[thrd:127.0.0.1:9092/bootstrap]: 127.0.0.1:9092/bootstrap: Connect to ...": the thread name says nothing new.
    if (text.starts_with("[thrd:")) {
      if (const size_t end = text.find("]: "); end != std::string_view::npos) text.remove_prefix(end + 3);
    }
    std::lock_guard<std::mutex> lock(self->mu_);
    self->last_ = std::string(text);
  }
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void*) {
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) return;  // says less than the error before it
    auto* self = static_cast<BrokerProbe*>(rd_kafka_opaque(rk));
    std::lock_guard<std::mutex> lock(self->mu_);
    self->last_ = reason;
  }

  std::mutex mu_;
  std::string last_;  // the last warning or error librdkafka reported
};

}  // namespace

absl::StatusOr<int> ProbeBroker(const std::map<std::string, std::string>& conf, int timeout_ms) {
  return BrokerProbe::Run(conf, timeout_ms);
}

}  // namespace outbox::kafka
