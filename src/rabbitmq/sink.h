// RabbitMqSink: the Sink (sinks/sink.h) over RabbitMQ with librabbitmq (rabbitmq-c): publisher confirms on one
// channel, persistent and mandatory publishes, message_id = the event id, the record's headers (and its key as the
// `key` header) as AMQP headers, content_type and the timestamp. Exchange and routing key come from the
// rabbitmq.exchange and rabbitmq.routing_key templates.
//
//   loop thread: Produce --[mutex-guarded queue, eventfd]--> I/O thread --basic.publish--> broker
//   I/O thread: basic.ack/nack/return --> ConfirmTracker --> [mutex-guarded completions] --> eventfd (wakeup_fd)
//   loop thread: Poll --> completions --> ReportHandler::OnReport
//
// librabbitmq's writes block when the broker stops reading (connection.blocked under a memory or disk alarm), so
// the connection lives on a thread of the sink's own: the loop never waits on the socket. The I/O thread holds
// publishing while the broker says the connection is blocked; reachable() is false then and unreachable_reason()
// names the broker's reason (/readyz). The I/O thread never reaches the report handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/record.h"
#include "rabbitmq/rules.h"
#include "sinks/key_gate.h"
#include "sinks/sink.h"

namespace outbox::rabbitmq {

// What the sink needs (from config::RabbitMqConfig: this module knows no configuration).
struct Options {
  std::string url;  // amqp://[user:password@]host[:port][/vhost] or amqps://
  std::string user, password;  // override the URL's when set
  std::string exchange;              // template
  std::string routing_key = "${topic}";  // template
  std::string dead_letter_exchange;  // "" = `exchange`
  std::string dead_letter_topic;     // records with this topic are dead letters: routed with it as routing key
  std::string content_type = "application/json";
  std::string tls_ca, tls_cert, tls_key;
  bool tls_verify = true;
  int heartbeat_s = 10;
  int64_t connect_timeout_ms = 5000;
  size_t max_message_bytes = kDefaultMaxMessageBytes;
  std::string name = "outbox-relay";
};

// Connects once (no retry) and checks that each exchange exists; an error names the URL's problem or the
// missing exchange.
absl::Status ProbeExchanges(const Options& options, const std::vector<std::string>& exchanges);

class RabbitMqSink final : public sinks::Sink {
 public:
  // Connects (a refused login or TLS fails here, by name; a broker that does not answer yet is retried in the
  // background). Reports go to `handler` (which outlives the sink) from Poll.
  static absl::StatusOr<std::unique_ptr<RabbitMqSink>> Create(const Options& options, sinks::ReportHandler* handler);
  ~RabbitMqSink() override;
  RabbitMqSink(const RabbitMqSink&) = delete;
  RabbitMqSink& operator=(const RabbitMqSink&) = delete;

  // kFull: not connected, blocked by the broker, the exchange not checked yet, or a record of the same key
  // unconfirmed. kRejected: an exchange that does not exist, an illegal exchange name or routing key, a header
  // AMQP cannot carry, larger than max_message_bytes; checked before publishing.
  sinks::ProduceResult Produce(const Record& record, uint64_t origin) override;
  int Poll(int timeout_ms) override;
  int wakeup_fd() const override { return wake_fd_; }
  void DrainWakeup() override;
  void Purge() override;
  size_t Outstanding() const override { return inflight_.size(); }
  absl::Status FatalError() const override;
  bool reachable() const override { return connected_.load() && !blocked_.load(); }
  std::string unreachable_reason() const override;
  absl::Status CheckReachable(int timeout_ms) override;

 private:
  RabbitMqSink() = default;
  // One record handed to the I/O thread.
  struct Pending {
    uint64_t seq = 0;
    std::string exchange, routing_key;
    std::shared_ptr<const OwnedRecord> record;
  };
  // What the I/O thread hands to the loop.
  struct Completion {
    Settled settled;
  };
  struct InFlight {
    uint64_t origin = 0;
    std::string topic;  // the record's topic (what the core knows it by)
    size_t bytes = 0;
    std::string key_token;
    std::shared_ptr<const OwnedRecord> record;
  };
  enum class ExchangeState { kChecking, kExists, kMissing };
  struct Exchange {
    ExchangeState state = ExchangeState::kChecking;
    std::string error;
    absl::Time checked;  // a missing exchange is checked again after kRecheckMissing (it may have been created)
  };
  class Connection;  // the I/O thread's librabbitmq connection (sink.cc)
  friend absl::Status ProbeExchanges(const Options& options, const std::vector<std::string>& exchanges);

  void Wake();
  void WakeIo();
  void IoMain(std::unique_ptr<Connection> first);
  void Serve(Completion& c);
  void Complete(std::vector<Settled> settled);  // from the I/O thread

  Options options_;
  sinks::ReportHandler* handler_ = nullptr;
  int wake_fd_ = -1;     // the loop's
  int io_wake_fd_ = -1;  // the I/O thread's
  std::thread io_;
  std::atomic<bool> connected_{false};
  std::atomic<bool> blocked_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> io_exited_{false};
  std::atomic<int> sock_fd_{-1};

  mutable absl::Mutex mu_;
  std::deque<Pending> to_send_ ABSL_GUARDED_BY(mu_);
  std::deque<Completion> done_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Exchange> exchanges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> to_check_ ABSL_GUARDED_BY(mu_);
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  std::string reason_ ABSL_GUARDED_BY(mu_);  // why not reachable
  bool purge_ ABSL_GUARDED_BY(mu_) = false;

  // Loop thread only.
  absl::flat_hash_map<uint64_t, InFlight> inflight_;
  sinks::KeyGate keys_;
  uint64_t next_seq_ = 1;
};

}  // namespace outbox::rabbitmq
