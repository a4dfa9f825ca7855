// RelayHarness: one test's own database, outbox table, publication, slot and topics on a throwaway PostgreSQL,
// and the outbox-relay binary run as a child process against a Kafka bootstrap (the real broker or a mock
// cluster). Every name is unique to the test.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "common/lsn.h"
#include <gtest/gtest.h>

#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"

namespace outbox::testing {

class RelayHarness {
 public:
  // Creates the database and writes relay.yaml; `extra_yaml` is appended (top-level sections).
  RelayHarness(PgServer* pg, std::string bootstrap, std::string extra_yaml = "");
  ~RelayHarness();

  // From now on the config is a Debezium Server application.properties of this harness's database, slot,
  // publication and topics (the Outbox Event Router routing by `type` to <topic_prefix>.<type>, offsets in
  // <dir>/offsets.dat), with `sink_properties` (the debezium.sink.* lines) appended.
  void UseDebeziumServerFile(const std::string& sink_properties);

  // Runs `outbox-relay <args...> -c <the config>` to completion; returns its exit code and fills `output`.
  int RunCommand(const std::vector<std::string>& args, std::string* output = nullptr,
                 std::chrono::milliseconds deadline = std::chrono::seconds(60));
  // `init --create-table`, asserting success.
  void Init();
  // Starts `outbox-relay run` in the background and waits until it holds the slot (with `wait_active`) or at least
  // until it has bound its HTTP port. Unless `extra_args` set http.listen, http_port() is then that relay's.
  std::unique_ptr<ChildProcess> StartRelay(const std::vector<std::string>& extra_args = {}, bool wait_active = true,
                                          const std::map<std::string, std::string>& env = {});

  // Words put before the relay's command line by StartRelay, e.g. {"prlimit", "--fsize=262144"} (it must exec the
  // relay, so that the child's PID is the relay's).
  void set_command_prefix(std::vector<std::string> prefix) { command_prefix_ = std::move(prefix); }

  // A second relay of this config beside the first (a standby), not waiting for the slot: on an HTTP port of its
  // own, returned in `*http_port` (0 when it exited first); http_port() stays the first relay's.
  std::unique_ptr<ChildProcess> StartSecondRelay(const std::vector<std::string>& extra_args, int* http_port);

  // Creates the least-privilege role `init --print` emits (LOGIN REPLICATION, no superuser; pg::CreateRoleSql,
  // after Init) and returns the arguments that run the relay as it.
  std::vector<std::string> AsLeastPrivilegeRole() const;

  void Sql(const std::string& sql) const;
  std::optional<std::string> Value(const std::string& sql) const;
  Lsn ConfirmedFlush() const;
  Lsn CurrentWal() const;
  bool SlotActive() const;
  // The PID of the process holding the slot (its walsender); "" when none holds it.
  std::string ActivePid() const;
  // How many of the changes the (inactive) slot would still send name `event_id` (pgoutput, peeked: nothing is
  // consumed): 1 while its INSERT is not confirmed past, 0 after; nullopt when the slot cannot be read. Unlike a
  // comparison with a WAL position read earlier, this holds while other tests write WAL on the same server (their
  // positions reach an idle relay in keepalives and may be confirmed).
  std::optional<int> PendingChangesNaming(const std::string& event_id) const;
  // Inserts one outbox row in its own transaction and returns its id.
  std::string InsertEvent(const std::string& type, const std::string& key, const std::string& payload_json) const;

  // The topic events of `type` land in: <topic_prefix>.<type>.
  std::string Topic(const std::string& type) const { return topic_prefix_ + "." + type; }
  std::string checkpoint_topic() const { return topic_prefix_ + ".checkpoints"; }

  const std::string& db() const { return db_; }
  const std::string& slot() const { return slot_; }
  const std::string& publication() const { return publication_; }
  const std::string& topic_prefix() const { return topic_prefix_; }
  const std::string& dir() const { return dir_; }
  const std::string& config_path() const { return config_path_; }
  const std::string& bootstrap() const { return bootstrap_; }
  // The HTTP port of the last relay StartRelay started on the config's http.listen (127.0.0.1:0: each relay gets
  // a port from the kernel, so no other process can take it between a pick and the bind); 0 before any.
  int http_port() const { return http_port_; }
  PgServer* pg() const { return pg_; }

 private:
  PgServer* pg_;
  std::string bootstrap_;
  std::string db_, slot_, publication_, topic_prefix_, dir_, config_path_;
  int http_port_ = 0;
  int relay_runs_ = 0;
  std::vector<std::string> command_prefix_;
};

// A relay run from a Debezium Server file (RelayHarness::UseDebeziumServerFile with `sink_properties`, init, run),
// its checkpoint checked beside the offsets file, and two events of key k1 committed: `created`, then `paid`, each
// on its own topic. The sinks' tests then read what their server got.
struct DebeziumServerRun {
  std::unique_ptr<ChildProcess> relay;  // nullptr when it did not start (a gtest failure says why)
  std::string created, paid;            // the event ids
  // The id header Debezium Server writes for an event id: its header format (json, the default) is Kafka Connect's
  // JsonConverter with schemas, over the uuid column's schema.
  static std::string IdHeader(const std::string& id) {
    return R"({"schema":{"type":"string","optional":false,"name":"io.debezium.data.Uuid","version":1},"payload":")" +
           id + "\"}";
  }
};
DebeziumServerRun RunDebeziumServerFile(RelayHarness& h, const std::string& sink_properties);

// A test on the shared PostgreSQL and Kafka broker, with a reader of that broker.
class SharedServicesTest : public ::testing::Test {
 protected:
  void SetUp() override;
  PgServer* pg_ = nullptr;
  KafkaBroker* broker_ = nullptr;
  std::unique_ptr<KafkaReader> reader_;
};

// The outbox-relay binary this build made (the compile definition OUTBOX_RELAY_BIN, kept in harness.cc).
std::string RelayBin();

// The HTTP port a relay bound, from its start line ("... starting: ..., http 127.0.0.1:<port>"), waiting for it
// up to `deadline`; 0 when the relay exited (or the deadline passed) without printing one. For relays run with
// http.listen port 0, as the harness's config has it.
int RelayHttpPort(ChildProcess& relay, std::chrono::milliseconds deadline = std::chrono::seconds(30));

// The arguments that make a relay dead-letter to `topic` (delivery.on_error: dead_letter).
std::vector<std::string> DeadLetterArgs(const std::string& topic);

// SIGTERM, and the clean stop's exit code 0 within `deadline` (a gtest failure with the relay's output otherwise).
void ExpectStopsCleanly(ChildProcess& relay, std::chrono::milliseconds deadline = std::chrono::seconds(30));

// GET http://127.0.0.1:<port><path>: the status code (0 when nothing answers) and body.
std::pair<int, std::string> HttpGet(int port, const std::string& path);

// A series as the text exposition writes it, `name{k="v",...}`: its name and labels (nullopt when malformed).
struct Series {
  std::string name;
  std::map<std::string, std::string> labels;
};
std::optional<Series> ParseSeries(std::string_view text);

// The value of the first sample of `series` (a name with some of its labels, e.g.
// `outbox_relay_events_total{result="published"}`) in a text exposition: a sample of that name that carries every
// label given, with its value, whatever other labels it has (the relay adds sink="...", and pipeline="..." when
// named); nullopt when there is none.
std::optional<double> Sample(const std::string& exposition, const std::string& series);
// The current value of a series on the relay's /metrics; nullopt when the relay does not answer.
std::optional<double> Scrape(int port, const std::string& series);

// The value of the first sample of metric `name` (any labels) at http://127.0.0.1:<port>/metrics; nullopt when
// nothing answers or the metric is absent (so a check on it cannot pass blind).
std::optional<double> MetricValue(int port, const std::string& name);

}  // namespace outbox::testing
