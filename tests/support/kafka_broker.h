// A throwaway single-node Kafka broker (scripts/kafka-temp.sh, KRaft) and librdkafka client helpers.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::testing {

// Closes (consumers) and destroys a librdkafka handle.
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

// A librdkafka client with the given properties (e.g. {"bootstrap.servers", broker.bootstrap()}).
absl::StatusOr<RdKafkaPtr> NewKafkaClient(rd_kafka_type_t type, const std::map<std::string, std::string>& conf);

class KafkaBroker {
 public:
  struct Options {
    int port = 0;                  // the broker port; 0: a free one (the controller port is always chosen)
    std::string extra_properties;  // server.properties lines appended (KAFKA_TEMP_PROPERTIES)
    bool sasl = false;             // a second listener, SASL_PLAINTEXT with SCRAM (KAFKA_TEMP_SASL): sasl_bootstrap()
    bool tls = false;              // a second listener, SSL with a throwaway CA (KAFKA_TEMP_TLS): tls_bootstrap()
  };

  // Formats a fresh temp dir and starts the broker (about 2 to 5 s here).
  static absl::StatusOr<std::unique_ptr<KafkaBroker>> Create(Options options);
  static absl::StatusOr<std::unique_ptr<KafkaBroker>> Create() { return Create(Options{}); }

  // One broker per process, started on first use and killed at exit. With OUTBOX_TEST_KAFKA_BOOTSTRAP set, an
  // already running broker at that address instead (Start/Stop/Kill/Restart then fail with FailedPrecondition).
  // Tests sharing it use their own topics (UniqueName()). Tests that stop or kill the broker must Create() their
  // own. Returns nullptr (and records a gtest failure) when it cannot start.
  static KafkaBroker* Shared();

  // Kills the broker and removes the directory.
  ~KafkaBroker();
  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  // "127.0.0.1:<port>".
  const std::string& bootstrap() const { return bootstrap_; }
  int port() const { return port_; }
  // "127.0.0.1:<port>" of the SASL_PLAINTEXT listener (SCRAM-SHA-256 and -512) with Options.sasl, else "".
  const std::string& sasl_bootstrap() const { return sasl_bootstrap_; }
  // "127.0.0.1:<port>" of the SSL listener with Options.tls, else ""; its CA is tls_dir() + "/ca.crt".
  const std::string& tls_bootstrap() const { return tls_bootstrap_; }
  const std::string& tls_dir() const { return tls_dir_; }
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/server.log"; }
  bool external() const { return dir_.empty(); }
  bool running() const { return running_; }

  // Starts again on the same ports and data, waiting until it serves.
  absl::Status Start();
  // SIGTERM (controlled shutdown), SIGKILL after 30 s.
  absl::Status Stop();
  // SIGKILL: a crash. The next Start recovers the logs (and waits about 4 s for the old session to expire).
  absl::Status Kill();
  absl::Status Restart();

  // Creates a topic (replication factor 1) through the admin API and waits until every partition has a leader.
  // AlreadyExists when it exists.
  absl::Status CreateTopic(std::string_view name, int partitions = 1,
                           const std::map<std::string, std::string>& configs = {},
                           std::chrono::milliseconds deadline = std::chrono::seconds(30));
  // The same for many topics at once (one CreateTopics request, one metadata request per wait): AlreadyExists
  // naming the first that exists.
  absl::Status CreateTopics(const std::vector<std::string>& names, int partitions = 1,
                            const std::map<std::string, std::string>& configs = {},
                            std::chrono::milliseconds deadline = std::chrono::seconds(60));
  absl::Status DeleteTopic(std::string_view name, std::chrono::milliseconds deadline = std::chrono::seconds(30));

  // Creates the SCRAM-SHA-256 user `user` with `password`, or sets its password (Admin API over the PLAINTEXT
  // listener). Authentication on sasl_bootstrap() takes it from then on.
  absl::Status UpsertScramUser(const std::string& user, const std::string& password,
                               std::chrono::milliseconds deadline = std::chrono::seconds(30));

 private:
  KafkaBroker(std::string dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {}
  absl::Status RunScript(const std::vector<std::string>& args, std::string* out);

  std::string dir_;  // empty for an external broker
  Options options_;
  std::string bootstrap_;
  std::string sasl_bootstrap_;
  std::string tls_bootstrap_, tls_dir_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace outbox::testing
