// Migration from Debezium end to end: `outbox-relay run -c application.properties` against a real PostgreSQL and
// Kafka writes the records Debezium's Outbox Event Router writes for the same rows (topic outbox.event.<aggregate
// type>, key = aggregateid, value = the payload's text, header id = the event id, plus the configured additional
// header). When Debezium itself is installed (bench/install-bench-deps.sh puts its Postgres connector next to
// Kafka's jars), the same connector file also runs in Kafka Connect and both outputs are compared record by record.
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

// One record as Debezium's documentation describes it.
struct Expected {
  std::string topic;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::optional<std::string> event_type;  // the `eventType` header (table.fields.additional.placement)
  bool operator==(const Expected&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Expected& e) {
  return os << "{topic " << e.topic << ", key " << e.key.value_or("(null)") << ", value "
            << e.value.value_or("(null)") << ", eventType " << e.event_type.value_or("(none)") << "}";
}

std::optional<std::string> HeaderOf(const KafkaRecord& r, const std::string& name) {
  const KafkaHeader* h = r.FindHeader(name);
  return h ? h->value : std::nullopt;
}

// A record whole: topic, key, value and headers.
struct FullRecord {
  std::string topic;
  int32_t partition = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<KafkaHeader> headers;
  int64_t timestamp_ms = -1;  // the record's CreateTime (both write one: the event's time)
  bool operator==(const FullRecord&) const = default;
};

std::ostream& operator<<(std::ostream& os, const FullRecord& r) {
  os << "{topic " << r.topic << ", partition " << r.partition << ", key " << r.key.value_or("(null)") << ", value " << r.value.value_or("(null)")
     << ", headers";
  for (const KafkaHeader& h : r.headers) os << " " << h.name << "=" << (h.value ? "\"" + *h.value + "\"" : "(null)");
  return os << ", timestamp " << r.timestamp_ms << "}";
}

// How many of `records` `holds` is true of (each record printed first when OUTBOX_TEST_SHOW_RECORDS is set): a
// side-by-side test's premise, that Debezium's own records show the feature.
template <typename Predicate>
size_t CountRecords(const std::map<std::string, FullRecord>& records, Predicate holds) {
  size_t count = 0;
  for (const auto& [id, record] : records) {
    if (std::getenv("OUTBOX_TEST_SHOW_RECORDS") != nullptr) std::cerr << record << "\n";
    count += holds(record);
  }
  return count;
}

// How many of `records` have a header `name` whose value contains `part`.
size_t CountHeadersContaining(const std::map<std::string, FullRecord>& records, const std::string& name,
                              std::string_view part) {
  return CountRecords(records, [&](const FullRecord& record) {
    return std::any_of(record.headers.begin(), record.headers.end(), [&](const KafkaHeader& h) {
      return h.name == name && h.value.value_or("").find(part) != std::string::npos;
    });
  });
}

// Where the records' timestamps come from. kCommitTime: no table.field.event.timestamp (or a NULL in it): the relay
// writes the transaction's commit time, Debezium its own processing time (the change event's ts_ms), which comes
// later (SPEC's record format). kColumn: both the column's, the same milliseconds.
enum class Timestamps { kCommitTime, kColumn };

void ExpectTimestampsFrom(Timestamps from, const FullRecord& ours, const FullRecord& theirs, const std::string& id) {
  ASSERT_NE(ours.timestamp_ms, -1) << id << ": the relay's record has no CreateTime";
  ASSERT_NE(theirs.timestamp_ms, -1) << id << ": Debezium's record has no CreateTime";
  if (from == Timestamps::kColumn) {
    EXPECT_EQ(ours.timestamp_ms, theirs.timestamp_ms) << id << ": the record's timestamp";
    return;
  }
  EXPECT_LE(ours.timestamp_ms, theirs.timestamp_ms) << id << ": the commit time comes before Debezium processed it";
  EXPECT_LT(theirs.timestamp_ms - ours.timestamp_ms, 300000) << id << ": Debezium processed it 5 minutes later?";
}

// The relay's records against Debezium's, event by event: topic, partition, key, value, the timestamp's source, then
// header by header.
void ExpectSameRecords(const std::map<std::string, FullRecord>& relayed, const std::map<std::string, FullRecord>& debezium,
                       Timestamps timestamps = Timestamps::kCommitTime) {
  EXPECT_EQ(relayed.size(), debezium.size());
  for (const auto& [id, theirs] : debezium) {
    const auto it = relayed.find(id);
    ASSERT_NE(it, relayed.end()) << "the relay did not send event " << id;
    const FullRecord& ours = it->second;
    EXPECT_EQ(ours.topic, theirs.topic) << id;
    EXPECT_EQ(ours.partition, theirs.partition) << id;
    EXPECT_EQ(ours.key, theirs.key) << id;
    EXPECT_EQ(ours.value, theirs.value) << id;
    ExpectTimestampsFrom(timestamps, ours, theirs, id);
    ASSERT_EQ(ours.headers.size(), theirs.headers.size()) << ours << "\n" << theirs;
    for (size_t i = 0; i < theirs.headers.size(); ++i) {
      EXPECT_EQ(ours.headers[i].name, theirs.headers[i].name) << id;
      EXPECT_EQ(ours.headers[i].value, theirs.headers[i].value) << id << " header " << theirs.headers[i].name;
    }
  }
}

// A key or value of a .properties line with java.util.Properties' escapes undone: \t \n \r \f, \uXXXX (as UTF-8, a
// surrogate pair as one character; a malformed one kept as written, where Java would fail), and a backslash before
// any other character stands for that character.
std::string UnescapeJavaProperty(std::string_view text) {
  const auto hex4 = [&](size_t at) -> std::optional<unsigned> {
    if (at + 4 > text.size()) return std::nullopt;
    unsigned code = 0;
    for (size_t i = at; i < at + 4; ++i) {
      const char c = text[i];
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (digit < 0) return std::nullopt;
      code = code * 16 + static_cast<unsigned>(digit);
    }
    return code;
  };
  const auto append_utf8 = [](unsigned code, std::string* out) {
    if (code < 0x80) {
      *out += static_cast<char>(code);
    } else if (code < 0x800) {
      *out += static_cast<char>(0xC0 | (code >> 6));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      *out += static_cast<char>(0xE0 | (code >> 12));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (code >> 18));
      *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    }
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    if (c == 'u') {
      std::optional<unsigned> code = hex4(i + 1);
      if (!code) {
        out += "\\u";
        continue;
      }
      i += 4;
      if (*code >= 0xD800 && *code < 0xDC00 && i + 2 < text.size() && text[i + 1] == '\\' && text[i + 2] == 'u') {
        if (std::optional<unsigned> low = hex4(i + 3); low && *low >= 0xDC00 && *low < 0xE000) {
          *code = 0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00);
          i += 6;
        }
      }
      append_utf8(*code, &out);
      continue;
    }
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
  }
  return out;
}

// The properties of a connector file as java.util.Properties reads them (comments, continued lines, the key ending
// at an unescaped '=', ':' or blank), for Kafka Connect's REST API, which takes JSON. The relay reads the same file
// with its own parser, so the two readings meet in the side-by-side tests.
std::map<std::string, std::string> JavaProperties(const std::string& text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\f'; };
  const auto skip_blanks = [&](std::string_view s) {
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    return s;
  };
  const auto continued = [](std::string_view s) {
    size_t backslashes = 0;
    while (backslashes < s.size() && s[s.size() - 1 - backslashes] == '\\') ++backslashes;
    return backslashes % 2 == 1;
  };
  std::map<std::string, std::string> properties;
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view first = skip_blanks(lines[i]);
    if (first.empty() || first.front() == '#' || first.front() == '!') continue;
    std::string line(first);
    while (continued(line) && i + 1 < lines.size()) {
      line.pop_back();
      line += skip_blanks(lines[++i]);
    }
    size_t end = 0;
    while (end < line.size() && line[end] != '=' && line[end] != ':' && !blank(line[end])) end += line[end] == '\\' ? 2 : 1;
    end = std::min(end, line.size());
    std::string_view rest = skip_blanks(std::string_view(line).substr(end));
    if (!rest.empty() && (rest.front() == '=' || rest.front() == ':')) rest = skip_blanks(rest.substr(1));
    properties[UnescapeJavaProperty(std::string_view(line).substr(0, end))] = UnescapeJavaProperty(rest);
  }
  return properties;
}

// Kafka Connect in standalone mode, started with no connector and Debezium's on its plugin path
// (scripts/connect-temp.sh); each side-by-side test adds its connector through the REST API and deletes it when done.
// scripts/test.sh starts one for the whole run (OUTBOX_TEST_CONNECT_DIR); without it, the first test of a process
// starts one, stopped at exit. Each test starting its own JVM paid 7 to 18 s for the start and the plugin scan.
class ConnectWorker {
 public:
  static ConnectWorker* Shared(const std::string& bootstrap) {
    static std::mutex mu;
    static std::unique_ptr<ConnectWorker> shared;
    static absl::Status failure;
    std::lock_guard<std::mutex> lock(mu);
    if (shared == nullptr && failure.ok()) {
      const char* external = std::getenv("OUTBOX_TEST_CONNECT_DIR");
      if (external != nullptr && *external != '\0') {
        shared.reset(new ConnectWorker(external, /*owned=*/false));
      } else if (absl::StatusOr<std::string> dir = MakeTempDir("connect-worker-"); !dir.ok()) {
        failure = dir.status();
      } else {
        auto started = RunCommand({"bash", Script(), "start", *dir, bootstrap}, 240s,
                                  {{"CONNECT_TEMP_OWNER_PID", std::to_string(getpid())}});
        if (!started.ok()) {
          failure = started.status();
        } else if (started->exit_code != 0) {
          failure = absl::InternalError("scripts/connect-temp.sh start: " + started->out + started->err);
        } else {
          shared.reset(new ConnectWorker(*dir, /*owned=*/true));
        }
      }
      if (shared != nullptr && shared->port_ == 0) {
        failure = absl::InternalError("no port in " + shared->dir_ + "/port");
        shared.reset();
      }
    }
    if (shared == nullptr) ADD_FAILURE() << "Kafka Connect did not start: " << failure;
    return shared.get();
  }

  ~ConnectWorker() {
    if (!owned_) return;
    (void)RunCommand({"bash", Script(), "stop", dir_}, 60s);
    RemoveTree(dir_);
  }

  std::string log() const { return dir_ + "/connect.log"; }

  // POST /connectors: the connector `name` with `config`.
  absl::Status Add(const std::string& name, const std::map<std::string, std::string>& config) {
    nlohmann::json body = {{"name", name}, {"config", config}};
    auto res = Client().Post("/connectors", body.dump(), "application/json");
    if (!res) return absl::UnavailableError("Kafka Connect does not answer: " + httplib::to_string(res.error()));
    if (res->status != 201) return absl::InternalError("POST /connectors: " + std::to_string(res->status) + " " + res->body);
    return absl::OkStatus();
  }

  // DELETE /connectors/<name>: its task stops and lets go of its slot.
  absl::Status Remove(const std::string& name) {
    auto res = Client().Delete("/connectors/" + name);
    if (!res) return absl::UnavailableError("Kafka Connect does not answer: " + httplib::to_string(res.error()));
    if (res->status != 204) return absl::InternalError("DELETE /connectors/" + name + ": " + std::to_string(res->status) + " " + res->body);
    return absl::OkStatus();
  }

  // GET /connectors/<name>/status: the connector's and its task's states (with a failed one's stack trace).
  std::string Status(const std::string& name) {
    auto res = Client().Get("/connectors/" + name + "/status");
    return res ? res->body : "(Kafka Connect does not answer)";
  }

  bool Failed(const std::string& name) { return Status(name).find("\"FAILED\"") != std::string::npos; }

  // SIGQUIT: the JVM prints its threads to connect.log; waits until it has.
  void DumpThreads() {
    const size_t before = ReadFile(log()).value_or("").size();
    const absl::StatusOr<std::string> pid = ReadFile(dir_ + "/connect.pid");
    if (!pid.ok() || ::kill(std::stoi(*pid), SIGQUIT) != 0) return;
    (void)WaitFor([&] { return ReadFile(log()).value_or("").find("Full thread dump", before) != std::string::npos; },
                  10s, "Kafka Connect's thread dump");
  }

 private:
  ConnectWorker(std::string dir, bool owned) : dir_(std::move(dir)), owned_(owned) {
    (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(dir_ + "/port").value_or("")), &port_);
  }

  static std::string Script() { return SourceDir() + "/scripts/connect-temp.sh"; }

  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    // Adding a connector validates its config (the connector connects to PostgreSQL) before it answers.
    client.set_read_timeout(60, 0);
    return client;
  }

  std::string dir_;
  bool owned_;
  int port_ = 0;
};

class DebeziumE2E : public SharedServicesTest {
 protected:
  friend class SideBySide;
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SharedServicesTest::SetUp());
    db_ = UniqueName("dbz");
    ASSERT_TRUE(pg_->CreateDatabase(db_).ok());
    auto dir = MakeTempDir("debezium-e2e-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *dir;
    relay_slot_ = UniqueName("relay_slot");
    publication_ = UniqueName("pub");
    // Aggregate types unique to this test, so that its topics (outbox.event.<type>) are its own.
    order_type_ = UniqueName("order");
    customer_type_ = UniqueName("customer");
  }

  void TearDown() override {
    for (const std::string& slot : slots_) {
      (void)pg_->Exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" +
                      slot + "' AND NOT active");
    }
    if (!HasFailure()) RemoveTree(dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // `outbox-relay <args>` to completion.
  int Relay(const std::vector<std::string>& args, std::string* output) {
    std::vector<std::string> argv = {RelayBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = RunCommand(argv, 60s);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return -1;
    *output = result->out + result->err;
    return result->exit_code;
  }

  std::unique_ptr<ChildProcess> Spawn(std::vector<std::string> argv, const std::string& log) {
    ProcessOptions o;
    o.argv = std::move(argv);
    o.output_path = dir_ + "/" + log;
    auto child = ChildProcess::Spawn(o);
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? std::move(*child) : nullptr;
  }

  // Whether `slot` is held and streaming. A slot being created is active already, but until its snapshot is
  // consistent (which waits for the transactions running then, other tests' included) it has no confirmed_flush_lsn,
  // and a row committed meanwhile lies before the point it streams from: Debezium would never see it (CI's rehearsal
  // saw Debezium write nothing, also after a restart, where rows were inserted as soon as its new slot was active).
  // `consistent` false: whether it is held at all.
  bool SlotActive(const std::string& slot, bool consistent = true) {
    auto v = pg_->QueryValue(std::string("SELECT active") + (consistent ? " AND confirmed_flush_lsn IS NOT NULL" : "") +
                             " FROM pg_replication_slots WHERE slot_name = '" + slot + "'", db_);
    return v.ok() && *v == "t";
  }

  // Commits events in three transactions (one of three events over both aggregate types), rolls one back, and
  // returns the records Debezium documents for the committed rows, by event id.
  std::map<std::string, Expected> InsertEvents() {
    const auto row = [](const std::string& type, const std::string& id, const std::string& event,
                        const std::string& payload) {
      return "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), '" +
             type + "', '" + id + "', '" + event + "', " + payload + ");";
    };
    const std::string order = order_type_, customer = customer_type_;
    const std::string first_payload = R"('{"id": 1, "lines": [{"sku": "A-1", "qty": 2}], "note": "Zoë ☕"}')";
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-1", "OrderCreated", first_payload) + "COMMIT;", db_).ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-1", "OrderPaid", "'{\"amount\": 12.50}'") +
                              row(customer, "c-7", "CustomerRegistered", "'{\"name\": \"Ann\"}'") +
                              row(order, "o-2", "OrderCreated", "'{\"id\": 2}'") + "COMMIT;",
                          db_)
                    .ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-3", "OrderCreated", "'{\"id\": 3}'") + "ROLLBACK;", db_).ok());
    EXPECT_TRUE(pg_->Exec("BEGIN;" + row(order, "o-2", "OrderCancelled", "NULL") + "COMMIT;", db_).ok());

    std::map<std::string, Expected> expected;
    auto rows = pg_->Query("SELECT id, aggregatetype, aggregateid, type, payload::text FROM outbox", db_);
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const PgRow& r : rows.value_or(PgRows{})) {
      expected[*r[0]] = Expected{.topic = "outbox.event." + *r[1], .key = r[2], .value = r[4], .event_type = r[3]};
    }
    EXPECT_EQ(expected.size(), 5u);
    return expected;
  }

  std::string OrderTopic() const { return "outbox.event." + order_type_; }
  std::string CustomerTopic() const { return "outbox.event." + customer_type_; }

  // The records of both topics whose `source_lsn` header is present (`relay`) or absent (Debezium's), by id,
  // once the order topic has `order_count` and the customer topic `customer_count` such records. `json_headers`:
  // the id and eventType headers are JsonConverter's {"schema":…,"payload":"…"} (Debezium Server's default header
  // format), checked and unwrapped.
  std::map<std::string, Expected> ReadRecords(bool relay, size_t order_count, size_t customer_count,
                                              bool json_headers = false) {
    const auto unwrap = [json_headers](std::optional<std::string> header, const std::string& schema) {
      if (!json_headers || !header) return header;
      const std::string prefix = R"({"schema":)" + schema + R"(,"payload":")";
      EXPECT_TRUE(header->starts_with(prefix) && header->ends_with("\"}")) << *header;
      if (!header->starts_with(prefix) || !header->ends_with("\"}")) return header;
      return std::optional<std::string>(header->substr(prefix.size(), header->size() - prefix.size() - 2));
    };
    std::map<std::string, Expected> got;
    for (const auto& [topic, count] : {std::pair{OrderTopic(), order_count}, {CustomerTopic(), customer_count}}) {
      const auto mine = [relay](const KafkaRecord& r) { return (r.FindHeader("source_lsn") != nullptr) == relay; };
      auto records = reader_->ReadUntil(
          topic,
          [&, want = count](const std::vector<KafkaRecord>& rs) {
            return static_cast<size_t>(std::count_if(rs.begin(), rs.end(), mine)) >= want;
          },
          90s);
      EXPECT_TRUE(records.ok()) << topic << ": " << records.status();
      for (const KafkaRecord& r : records.value_or(std::vector<KafkaRecord>{})) {
        if (!mine(r)) continue;
        const std::optional<std::string> id =
            unwrap(HeaderOf(r, "id"), R"({"type":"string","optional":false,"name":"io.debezium.data.Uuid","version":1})");
        EXPECT_TRUE(id.has_value()) << "a record without an id header in " << topic;
        const Expected e{.topic = r.topic, .key = r.key, .value = r.value,
                         .event_type = unwrap(HeaderOf(r, "eventType"), R"({"type":"string","optional":false})")};
        // Debezium restarted after a stall (SideBySide::AwaitDebezium) writes again what it had not committed.
        if (auto seen = got.find(id.value_or("")); seen != got.end()) {
          EXPECT_FALSE(relay) << "event " << id.value_or("") << " twice";
          EXPECT_EQ(seen->second, e) << "event " << id.value_or("") << " written twice, differently";
        }
        got[id.value_or("")] = e;
      }
    }
    return got;
  }

  // Every record of `topic` whose `source_lsn` header is present (`relay`) or absent (Debezium's), by its `id`
  // header, once there are `count` of them: topic, key, value and the headers but source_lsn, in order; the
  // __debezium.context.* headers only `with_context`, the runId's value (a UUIDv7, one per run) as "<UUIDv7>".
  std::map<std::string, FullRecord> ReadFull(bool relay, const std::string& topic, size_t count,
                                             bool with_context = false) {
    // Debezium's side gets longer: Kafka Connect shares two cores with the other tests.
    const auto deadline = relay ? std::chrono::milliseconds(90s) : std::chrono::milliseconds(180s);
    const auto mine = [relay](const KafkaRecord& r) { return (r.FindHeader("source_lsn") != nullptr) == relay; };
    auto records = reader_->ReadUntil(
        topic,
        [&](const std::vector<KafkaRecord>& rs) {
          return static_cast<size_t>(std::count_if(rs.begin(), rs.end(), mine)) >= count;
        },
        deadline);
    EXPECT_TRUE(records.ok()) << topic << ": " << records.status()
                              << (relay || worker_ == nullptr ? "" : "\nKafka Connect's log:\n" + TailOfFile(worker_->log()));
    std::map<std::string, FullRecord> got;
    std::set<std::string> run_ids;
    for (const KafkaRecord& r : records.value_or(std::vector<KafkaRecord>{})) {
      if (!mine(r)) continue;
      FullRecord f{.topic = r.topic, .partition = r.partition, .key = r.key, .value = r.value, .headers = {},
                   .timestamp_ms = r.timestamp_type == TimestampType::kCreateTime ? r.timestamp_ms : -1};
      for (const KafkaHeader& h : r.headers) {
        if (h.name == "source_lsn" || (!with_context && h.name.starts_with("__debezium.context."))) continue;
        if (h.name == "__debezium.context.runId") {
          const std::string v = h.value.value_or("");
          EXPECT_TRUE(v.size() == 36 && v[14] == '7' && std::string("89ab").find(v[19]) != std::string::npos)
              << "runId " << v << " is no UUIDv7";
          run_ids.insert(v);
          f.headers.push_back(KafkaHeader{h.name, "<UUIDv7>"});
          continue;
        }
        f.headers.push_back(h);
      }
      const std::string id = HeaderOf(r, "id").value_or("");
      if (auto seen = got.find(id); seen != got.end()) {
        EXPECT_FALSE(relay) << "event " << id << " twice";
        FullRecord again = f;
        again.timestamp_ms = seen->second.timestamp_ms;  // Debezium's processing time, later the second time
        EXPECT_EQ(seen->second, again) << "event " << id << " written twice, differently";
      }
      got[id] = f;
    }
    if (with_context) {
      EXPECT_EQ(run_ids.size(), 1u) << "one runId per run";
    }
    return got;
  }

  // Whether `topic` holds `count` records of Debezium's (no source_lsn header) within `deadline`; fails nothing.
  bool DebeziumWrote(const std::string& topic, size_t count, std::chrono::milliseconds deadline) {
    const auto mine = [](const KafkaRecord& r) { return r.FindHeader("source_lsn") == nullptr; };
    return reader_
        ->ReadUntil(
            topic,
            [&](const std::vector<KafkaRecord>& rs) {
              return static_cast<size_t>(std::count_if(rs.begin(), rs.end(), mine)) >= count;
            },
            deadline)
        .ok();
  }

  std::string db_, dir_, relay_slot_, publication_, order_type_, customer_type_;
  std::vector<std::string> slots_;
  ConnectWorker* worker_ = nullptr;  // the side-by-side tests' Kafka Connect
};

TEST_F(DebeziumE2E, RelayRunWithApplicationPropertiesWritesTheRecordsDebeziumDocuments) {
  slots_.push_back(relay_slot_);
  const std::string config = Write("application.properties", R"(# A Debezium Server configuration of the outbox.
debezium.sink.type=kafka
debezium.sink.kafka.producer.bootstrap.servers=)" + broker_->bootstrap() + R"(
debezium.sink.kafka.producer.key.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.sink.kafka.producer.value.serializer=org.apache.kafka.common.serialization.StringSerializer
debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector
debezium.source.offset.storage.file.filename=data/offsets.dat
debezium.source.offset.flush.interval.ms=0
debezium.source.database.hostname=127.0.0.1
debezium.source.database.port=)" + std::to_string(pg_->port()) + R"(
debezium.source.database.user=postgres
debezium.source.database.password=${PGPASSWORD:not-needed-with-trust}
debezium.source.database.dbname=)" + db_ + R"(
debezium.source.topic.prefix=)" + db_ + R"(
debezium.source.plugin.name=pgoutput
debezium.source.slot.name=)" + relay_slot_ + R"(
debezium.source.publication.name=)" + publication_ + R"(
debezium.source.table.include.list=public.outbox
debezium.source.snapshot.mode=no_data
debezium.transforms=outbox
debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
debezium.transforms.outbox.table.fields.additional.placement=type:header:eventType
debezium.format.key=simplestring
debezium.format.value=simplestring
# The relay's own settings.
outbox-relay.source.checkpoint_topic=)" + db_ + R"(.checkpoints
outbox-relay.source.status_interval_ms=200
outbox-relay.http.listen=127.0.0.1:0
)");

  std::string output;
  ASSERT_EQ(Relay({"init", "--create-table", "-c", config}, &output), 0) << output;
  auto relay = Spawn({RelayBin(), "run", "-c", config}, "relay.log");
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return SlotActive(relay_slot_) || !relay->Running(); }, 60s, "the relay holds the slot"));
  ASSERT_TRUE(relay->Running()) << relay->Output();

  const std::map<std::string, Expected> expected = InsertEvents();
  const std::map<std::string, Expected> got = ReadRecords(/*relay=*/true, 4, 1, /*json_headers=*/true);
  EXPECT_EQ(got, expected);
  // The Debezium keys with no effect were accepted, each with a warning naming it.
  for (const std::string key : {"debezium.source.offset.storage.file.filename", "debezium.source.topic.prefix",
                                "debezium.source.snapshot.mode"}) {
    EXPECT_NE(relay->Output().find(key + ": no effect"), std::string::npos) << key << "\n" << relay->Output();
  }
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), 0) << relay->Output();
  // Nothing else reached the topics (the rolled-back event in particular).
  for (const std::string& topic : {OrderTopic(), CustomerTopic()}) {
    auto all = reader_->ReadAll(topic, 30s);
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(all->size(), topic == OrderTopic() ? 4u : 1u) << topic;
  }
}

// Where bench/install-bench-deps.sh put Kafka Connect's jars and Debezium's Postgres connector ("" when absent).
std::pair<std::string, std::string> KafkaLibAndDebeziumPlugins() {
  auto result = RunCommand({"bash", "-c",
                            "source \"$0/scripts/versions.sh\" && source \"$0/bench/bench-versions.sh\" && "
                            "echo \"$DEBEZIUM_CONNECT_LIB\" && echo \"$DEBEZIUM_HOME/plugins\"",
                            SourceDir()},
                           30s);
  if (!result.ok() || result->exit_code != 0) return {"", ""};
  std::vector<std::string> lines = absl::StrSplit(result->out, '\n', absl::SkipEmpty());
  if (lines.size() < 2 || !std::filesystem::is_directory(lines[1] + "/debezium-connector-postgres") ||
      !std::filesystem::is_directory(lines[0])) {
    return {"", ""};
  }
  return {lines[0], lines[1]};
}


// One connector file run by Kafka Connect (Debezium) and then by the relay, each on its own slot of the same
// publication.
class SideBySide {
 public:
  static constexpr const char* kStringConverters =
      "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
      "value.converter=org.apache.kafka.connect.storage.StringConverter\n";
  // JsonConverter (with schemas, its default) for keys, values and headers.
  static constexpr const char* kJsonConverters =
      "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
      "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
      "header.converter=org.apache.kafka.connect.json.JsonConverter\n";

  SideBySide(DebeziumE2E& test, const std::string& router, const std::string& converters = kStringConverters)
      : t_(test), worker_(test.worker_) {
    debezium_slot_ = UniqueName("dbz_slot");
    t_.slots_.push_back(t_.relay_slot_);
    t_.slots_.push_back(debezium_slot_);
    connector_ = t_.Write("outbox-connector.properties", R"(name=)" + t_.db_ + R"(
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=127.0.0.1
database.port=)" + std::to_string(t_.pg_->port()) + R"(
database.user=postgres
database.password=not-needed-with-trust
database.dbname=)" + t_.db_ + R"(
topic.prefix=)" + t_.db_ + R"(
slot.name=)" + debezium_slot_ + R"(
publication.name=)" + t_.publication_ + R"(
publication.autocreate.mode=disabled
snapshot.mode=no_data
table.include.list=public.outbox
)" + converters + R"(transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
)" + router);
    sets_ = {"--set", "source.slot=" + t_.relay_slot_,
             "--set", "kafka.bootstrap.servers=" + t_.broker_->bootstrap(),
             "--set", "source.checkpoint_topic=" + t_.db_ + ".checkpoints",
             "--set", "source.status_interval_ms=200",
             "--set", "http.listen=127.0.0.1:0"};
  }

  // The table, the publication (Debezium uses it too) and the relay's slot, before any event.
  bool Init(int order_partitions = 1) {
    std::string output;
    const int code = t_.Relay(Args({"init", "--create-table", "-c", connector_}), &output);
    EXPECT_EQ(code, 0) << output;
    // The topics exist before either writes: Kafka Connect's producer waits for a topic's metadata without limit
    // (max.block.ms), so an auto-creation that hangs would stop its task without a word in its log.
    absl::Status topics = t_.broker_->CreateTopic(t_.OrderTopic(), order_partitions);
    if (topics.ok()) topics = t_.broker_->CreateTopic(t_.CustomerTopic());
    EXPECT_TRUE(topics.ok()) << topics;
    return code == 0 && topics.ok();
  }

  // Waits until Debezium wrote `counts` records (of its own) to each topic. In CI its task twice stopped producing
  // with nothing in Kafka Connect's log (once after 2 of 5 records): after 60 s short, Kafka Connect prints its
  // threads to connect.log (SIGQUIT) and the connector is added again; it resumes from its offsets, and a record it writes
  // again must be the same bytes (ReadFull checks). Fails the test, with the log's tail, if the restart does not help.
  bool AwaitDebezium(const std::vector<std::pair<std::string, size_t>>& counts) {
    const auto all = [&](std::chrono::milliseconds deadline) {
      for (const auto& [topic, count] : counts) {
        if (!t_.DebeziumWrote(topic, count, deadline)) return false;
      }
      return true;
    };
    if (all(60s)) return true;
    worker_->DumpThreads();
    std::cerr << "Debezium wrote too few records in 60 s; its status: " << worker_->Status(t_.db_)
              << "\nKafka Connect's log with its threads:\n" << TailOfFile(worker_->log(), 60000) << "\n";
    StopDebezium();
    if (!StartDebezium()) return false;
    const bool done = all(120s);
    EXPECT_TRUE(done) << "Debezium did not write its records, also after a restart. Its status: "
                      << worker_->Status(t_.db_) << "\nKafka Connect's log:\n" << TailOfFile(worker_->log());
    return done;
  }

  // Adds the connector file's connector to Kafka Connect; true once it streams from its slot.
  bool StartDebezium() {
    running_ = true;  // before the POST: one that timed out may still have added it
    const absl::Status added = worker_->Add(t_.db_, JavaProperties(ReadFile(connector_).value_or("")));
    EXPECT_TRUE(added.ok()) << added;
    if (!added.ok()) return false;
    const bool streaming = WaitFor([&] { return t_.SlotActive(debezium_slot_) || worker_->Failed(t_.db_); }, 120s,
                                   "Debezium streams from its slot");
    const bool failed = worker_->Failed(t_.db_);
    EXPECT_TRUE(streaming && !failed) << worker_->Status(t_.db_) << "\n" << TailOfFile(worker_->log());
    return streaming && !failed;
  }

  // Deletes the connector; returns once its slot is free.
  void StopDebezium() {
    running_ = false;
    const absl::Status removed = worker_->Remove(t_.db_);
    ASSERT_TRUE(removed.ok()) << removed;
    ASSERT_TRUE(WaitFor([&] { return !t_.SlotActive(debezium_slot_, /*consistent=*/false); }, 30s,
                        "Debezium lets go of its slot"));
  }

  // A test that ended early leaves no connector behind in the shared worker.
  ~SideBySide() {
    if (running_) (void)worker_->Remove(t_.db_);
  }

  // A relay setting (key=value) beside the connector file's.
  void RelaySet(const std::string& setting) {
    sets_.push_back("--set");
    sets_.push_back(setting);
  }

  bool StartRelay() {
    relay_ = t_.Spawn(Args({RelayBin(), "run", "-c", connector_}), "relay.log");
    return relay_ != nullptr;
  }

  void StopRelay() {
    ASSERT_TRUE(relay_->Kill(SIGTERM).ok());
    EXPECT_EQ(relay_->Wait(60s), 0) << relay_->Output();
  }

  // The outbox.* keys the connector file becomes, as `check --offline` prints them: (key, value).
  std::vector<std::pair<std::string, std::string>> OutboxKeys() {
    std::string output;
    EXPECT_EQ(t_.Relay(Args({"check", "--offline", "-c", connector_}), &output), 0) << output;
    std::vector<std::pair<std::string, std::string>> keys;
    for (absl::string_view line : absl::StrSplit(output, '\n')) {
      line = absl::StripLeadingAsciiWhitespace(line);
      const size_t colon = line.find(": ");
      if (absl::StartsWith(line, "outbox.") && colon != std::string_view::npos) {
        keys.emplace_back(std::string(line.substr(0, colon)), std::string(line.substr(colon + 2)));
      }
    }
    return keys;
  }

  // The relay run from the YAML file `yaml` instead of the connector file, with `sets` (key=value) before the side's.
  bool StartRelayFromYaml(const std::string& yaml, const std::vector<std::string>& sets) {
    std::vector<std::string> argv = {RelayBin(), "run", "-c", yaml};
    for (const std::string& set : sets) argv.insert(argv.end(), {"--set", set});
    relay_ = t_.Spawn(Args(argv), "relay-yaml.log");
    return relay_ != nullptr;
  }

  // The relay's exit code once it stopped by itself (a halt), within 90 s; nullopt if it still runs (then stopped).
  std::optional<int> AwaitRelayExit(std::string* output) {
    const std::optional<int> code = relay_->Wait(90s);
    if (!code) (void)relay_->Kill(SIGKILL), (void)relay_->Wait(10s);
    *output = relay_->Output();
    return code;
  }

 private:
  std::vector<std::string> Args(std::vector<std::string> args) const {
    args.insert(args.end(), sets_.begin(), sets_.end());
    return args;
  }

  DebeziumE2E& t_;
  ConnectWorker* worker_;  // null where only the relay runs
  bool running_ = false;
  std::string debezium_slot_, connector_;
  std::vector<std::string> sets_;
  std::unique_ptr<ChildProcess> relay_;
};

// The side-by-side tests: they need Debezium, which bench/install-bench-deps.sh puts beside Kafka Connect's jars.
class DebeziumSideBySide : public DebeziumE2E {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DebeziumE2E::SetUp());
    if (KafkaLibAndDebeziumPlugins().second.empty()) {
      // scripts/test.sh installs Debezium and sets OUTBOX_REQUIRE_DEBEZIUM=1: there, a missing install fails.
      const char* required = std::getenv("OUTBOX_REQUIRE_DEBEZIUM");
      if (required != nullptr && std::string(required) == "1") FAIL() << "Debezium is not installed (bench/install-bench-deps.sh)";
      GTEST_SKIP() << "Debezium is not installed (bench/install-bench-deps.sh)";
    }
    worker_ = ConnectWorker::Shared(broker_->bootstrap());
    ASSERT_NE(worker_, nullptr);
  }

  // Debezium's records of `topic` once it wrote `count`, then, Debezium stopped, the relay's of the same rows.
  struct Outputs {
    std::map<std::string, FullRecord> debezium, relayed;
  };
  Outputs DebeziumThenRelay(SideBySide& side, const std::string& topic, size_t count, bool with_context = false) {
    Outputs out;
    if (!side.AwaitDebezium({{topic, count}})) return out;
    out.debezium = ReadFull(/*relay=*/false, topic, count, with_context);
    side.StopDebezium();
    if (!side.StartRelay()) return out;
    out.relayed = ReadFull(/*relay=*/true, topic, count, with_context);
    side.StopRelay();
    return out;
  }

  // An order event whose key and payload need Jackson's escapes (quotes, backslashes, control characters, characters
  // beyond U+FFFF).
  void InsertEscapedEvent() {
    ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), '" +
                              order_type_ + R"(', E'k"\\2', 'Escapes', jsonb_build_object('s', E'q\" b\\\\ /\n\t' || chr(1) || )"
                              R"(' é ☕ 😀', 'n', 12.50, 'z', null)))",
                          db_)
                    .ok());
  }

  // Key and value through JsonConverter with schemas.enable=true (or `converters`), from a `ref` column of `key_type`
  // (the event key) and a `body` column of `payload_type` (the payload), both nullable, over `rows` of "ref, body" SQL
  // values; compared record by record with Debezium's. `debezium` (if given) gets Debezium's records, for a premise.
  static constexpr const char* kJsonKeysAndValues =
      "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
      "value.converter=org.apache.kafka.connect.json.JsonConverter\n";
  // The same with schemas.enable=false for both.
  static constexpr const char* kJsonKeysAndValuesWithoutSchemas =
      "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
      "key.converter.schemas.enable=false\n"
      "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
      "value.converter.schemas.enable=false\n";
  void CompareSchemasOfColumns(const std::string& key_type, const std::string& payload_type,
                               const std::vector<std::string>& rows, const std::string& converters = kJsonKeysAndValues,
                               std::map<std::string, FullRecord>* debezium_out = nullptr) {
    SideBySide side(*this,
                    "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                    "transforms.outbox.table.field.event.key=ref\n"
                    "transforms.outbox.table.field.event.payload=body\n",
                    converters);
    ASSERT_TRUE(side.Init());
    ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ADD COLUMN ref " + key_type + ", ADD COLUMN body " + payload_type, db_)
                    .ok());
    ASSERT_TRUE(side.StartDebezium());
    std::string values;
    for (const std::string& row : rows) {
      values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ +
                "', 'a', 'Typed', '{}', " + row + ")";
    }
    ASSERT_TRUE(
        pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, ref, body) VALUES " + values, db_)
            .ok());
    const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
    ASSERT_EQ(debezium.size(), rows.size());
    ExpectSameRecords(relayed, debezium);
    if (debezium_out != nullptr) *debezium_out = debezium;
  }

  // A failure, side by side, Debezium and the relay running at once. `first` (SQL) writes one order event, which
  // both write, the same bytes; `bad` (SQL, run once both wrote it) fails Debezium's task, its status then holding
  // `debezium_error`, and stops the relay (exit 1, its output holding each of `relay_errors`); neither writes
  // `after`'s event (SQL, run after `bad`). The relay's slot stays before `bad`'s commit, and a relay started again
  // stops at the same place (nothing is skipped).
  // With `same_transaction`, `first` and `bad` are one transaction, written at once: the relay reads them in one
  // round, and each side must still write `first` before it stops (Kafka Connect sends it before converting `bad`).
  void CompareFailure(SideBySide& side, const std::string& first, const std::string& bad, const std::string& after,
                      const std::string& debezium_error, const std::vector<std::string>& relay_errors,
                      bool same_transaction = false) {
    ASSERT_TRUE(side.StartDebezium());
    ASSERT_TRUE(side.StartRelay());
    const auto compare_first = [&] {
      const std::map<std::string, FullRecord> debezium = ReadFull(/*relay=*/false, OrderTopic(), 1);
      const std::map<std::string, FullRecord> relayed = ReadFull(/*relay=*/true, OrderTopic(), 1);
      ExpectSameRecords(relayed, debezium);
    };
    if (!same_transaction) {
      ASSERT_TRUE(pg_->Exec(first, db_).ok());
      ASSERT_TRUE(side.AwaitDebezium({{OrderTopic(), 1}}));
      compare_first();
    }
    // The failing transaction on one connection, with the WAL position just before its commit record: a slot
    // confirmed at or past its commit would skip it at the next start (decoding skips a transaction whose commit
    // record starts before the confirmed position). The bound is that position, not the one before the transaction:
    // a keepalive sent while the transaction was being written may carry a walEnd inside it, which the relay may
    // confirm while nothing is open (the transaction is then decoded again, from its start, at the next start).
    absl::StatusOr<PgConnection> writer = pg_->Connect(db_);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->Exec("BEGIN").ok());
    if (same_transaction) {
      ASSERT_TRUE(writer->Exec(first).ok());
    }
    const absl::Status bad_done = writer->Exec(bad);
    ASSERT_TRUE(bad_done.ok()) << bad_done;
    auto before_bad = writer->QueryValue("SELECT pg_current_wal_insert_lsn()");
    ASSERT_TRUE(before_bad.ok() && before_bad->has_value()) << before_bad.status();
    ASSERT_TRUE(writer->Exec("COMMIT").ok());
    ASSERT_TRUE(pg_->Exec(after, db_).ok());

    ASSERT_TRUE(WaitFor([&] { return worker_->Failed(db_); }, 120s, "Debezium's task fails")) << worker_->Status(db_);
    const std::string status = worker_->Status(db_);
    EXPECT_NE(status.find(debezium_error), std::string::npos) << status;
    side.StopDebezium();
    std::string output;
    EXPECT_EQ(side.AwaitRelayExit(&output), 1) << output;
    for (const std::string& error : relay_errors) EXPECT_NE(output.find(error), std::string::npos) << error << "\n" << output;
    if (same_transaction) compare_first();

    // Neither wrote the failing event or the one after it: one record each in the topic.
    absl::StatusOr<std::vector<KafkaRecord>> all = reader_->ReadAll(OrderTopic(), 30s);
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(all->size(), 2u) << "the failing event or the one after it was written";
    auto confirmed = pg_->QueryValue("SELECT confirmed_flush_lsn <= '" + **before_bad +
                                         "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + relay_slot_ + "'",
                                     db_);
    ASSERT_TRUE(confirmed.ok()) << confirmed.status();
    EXPECT_EQ(*confirmed, std::optional<std::string>("t")) << "the relay confirmed the failing transaction's commit";

    ASSERT_TRUE(side.StartRelay());
    std::string again;
    EXPECT_EQ(side.AwaitRelayExit(&again), 1) << again;
    EXPECT_NE(again.find(relay_errors.front()), std::string::npos) << "a restart stops at the same place:\n" << again;
  }

  void CompareTextPayloadUnderByteArrayConverter(bool same_transaction);
  void CompareTraceHeaders(const std::string& header_converter);
  void CompareRoutes(const std::string& regex);
  void CompareUnroutableEvent(const std::string& route, const std::string& debezium_error,
                              const std::string& relay_error);

  // The YAML form of a connector file through `converters` (TheYamlForm... tests): Debezium's records, then the
  // relay's from a YAML file with the outbox.* keys the file becomes; `premise` holds of one of Debezium's records.
  void CompareYamlForm(const std::string& converters, const std::function<bool(const FullRecord&)>& premise) {
    SideBySide side(*this,
                    "transforms.outbox.table.fields.additional.placement=type:envelope:eventType,amount:envelope,"
                    "stamp:header\n"
                    "transforms.outbox.table.field.event.key=ref\n",
                    converters);
    ASSERT_TRUE(side.Init());
    std::string names;
    ASSERT_TRUE(AddColumns({{"ref", "boolean"}, {"amount", "numeric(10,2) DEFAULT 1.50"}, {"stamp", "timestamptz"}},
                           &names));
    ASSERT_TRUE(side.StartDebezium());
    ASSERT_TRUE(InsertKeyedRows({"true, 12.5, '2026-12-03 13:45:07.5+02'", "NULL, NULL, NULL"}, "Typed", names));
    ASSERT_TRUE(side.AwaitDebezium({{OrderTopic(), 2}}));
    const std::map<std::string, FullRecord> debezium = ReadFull(/*relay=*/false, OrderTopic(), 2);
    side.StopDebezium();

    const std::vector<std::pair<std::string, std::string>> keys = side.OutboxKeys();
    ASSERT_GT(keys.size(), 20u);
    std::vector<std::string> sets;
    for (const auto& [key, value] : keys) sets.push_back(key + "=" + value);
    const std::string yaml = Write("relay.yaml", "source:\n  conninfo: \"host=127.0.0.1 port=" +
                                                     std::to_string(pg_->port()) + " dbname=" + db_ +
                                                     " user=postgres\"\n  publication: " + publication_ + "\n");
    ASSERT_TRUE(side.StartRelayFromYaml(yaml, sets));
    const std::map<std::string, FullRecord> relayed = ReadFull(/*relay=*/true, OrderTopic(), 2);
    side.StopRelay();
    EXPECT_EQ(CountRecords(debezium, premise), 1u);
    ExpectSameRecords(relayed, debezium);
  }

  // Adds `columns` (name, SQL type) to the outbox table; `names` gets ", <name>" for each, for an INSERT's list.
  // Inserts one row per entry of `rows` (the values of the columns AddColumns added as `names`, after the payload
  // '{}'), their keys k0, k1..., their event type `type`.
  bool InsertKeyedRows(const std::vector<std::string>& rows, const std::string& type, const std::string& names) {
    std::string values;
    for (size_t i = 0; i < rows.size(); ++i) {
      values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ + "', 'k" +
                std::to_string(i) + "', '" + type + "', '{}', " + rows[i] + ")";
    }
    const absl::Status st =
        pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload" + names + ") VALUES " + values, db_);
    EXPECT_TRUE(st.ok()) << st;
    return st.ok();
  }

  bool AddColumns(const std::vector<std::pair<std::string, std::string>>& columns, std::string* names) {
    std::string add;
    for (const auto& [name, type] : columns) {
      add += (add.empty() ? "" : ", ") + ("ADD COLUMN " + name + " " + type);
      *names += ", " + name;
    }
    const absl::Status st = pg_->Exec("ALTER TABLE outbox " + add, db_);
    EXPECT_TRUE(st.ok()) << st;
    return st.ok();
  }

  // A numeric(10,2) payload and a timestamptz envelope field through JsonConverter (with or without schemas),
  // compared with Debezium's records.
  void CompareTypedEnvelopePayloads(bool schemas) {
    SideBySide side(*this,
                    "transforms.outbox.table.fields.additional.placement=type:envelope:eventType,stamp:envelope\n"
                    "transforms.outbox.table.field.event.payload=amount\n",
                    std::string("key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                                "value.converter=org.apache.kafka.connect.json.JsonConverter\n") +
                        (schemas ? "" : "value.converter.schemas.enable=false\n"));
    ASSERT_TRUE(side.Init());
    std::string names;
    ASSERT_TRUE(AddColumns({{"amount", "numeric(10,2)"}, {"stamp", "timestamptz"}}, &names));
    ASSERT_TRUE(side.StartDebezium());
    ASSERT_TRUE(InsertKeyedRows({"12.50, '2026-12-03 11:45:07.5+00'", "NULL, NULL", "-0.01, '1970-01-01 00:00:00+00'"},
                                "Typed", names));
    const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 3);
    ASSERT_EQ(debezium.size(), 3u);
    // The premise: the payload field is the Decimal's base64 ("BOI=" for 12.50), not the column's text.
    EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
                return r.value.value_or("").find(R"("payload":"BOI=")") != std::string::npos;
              }), 1u);
    ExpectSameRecords(relayed, debezium);
  }

  // NULLs in columns with defaults (kDefaultedColumns, the key and the payload), in headers under StringConverter or
  // in the envelope under JsonConverter with schemas; compared with Debezium's records.
  void CompareDefaults(bool schemas);
  // Header values through JsonConverter (header.converter), with or without schemas, compared with Debezium's.
  void CompareJsonHeaders(bool schemas);
  // interval, timetz and range columns in headers, as text (SimpleHeaderConverter) or `json` (JsonConverter).
  void CompareIntervalsTimesAndRanges(bool json);
  void CompareArrays(bool json);
  // decimal.handling.mode `mode` (string or double) on numeric and money columns, through StringConverters or
  // (`json`) JsonConverters with schemas.
  void CompareDecimalModes(const std::string& mode, bool json);
  // time.precision.mode `mode` on time, timestamp and date columns.
  void CompareTimeModes(const std::string& mode, bool json);
  // interval.handling.mode=string on interval columns.
  void CompareIntervalStrings(bool json);
  // money.fraction.digits=`digits` on money columns.
  void CompareMoneyDigits(int digits, bool json);
  // binary.handling.mode `mode` on bytea columns.
  void CompareBinaryModes(const std::string& mode, bool json);
  // hstore.handling.mode=map on hstore columns.
  void CompareHstoreMaps(bool json);
  // column.truncate.*, column.mask.* on the key and placed columns.
  void CompareColumnMappers(bool json);
  // Columns of the types Debezium leaves out of its change events, and "char" and tsvector beside them.
  void CompareLeftOutTypes(bool json);
  // include.unknown.datatypes=true on those types (`connector_keys`: more lines of the connector file).
  void CompareUnknownDatatypes(bool json, const std::string& connector_keys);
  // User-defined types Debezium has no schema for, left out, or (`unknown_included`) bytes.
  void CompareUserDefinedTypes(bool unknown_included);
  // Values Debezium's converter fails on, under event.converting.failure.handling.mode=warn.
  void CompareConversionFailures(bool json);
  void CompareTemporalAndNumericArrays(bool json);
  // Multi-dimensional arrays of numbers, booleans, dates, times, timestamps and bytea, and under the modes.
  void CompareMultiDimensionalArrays(bool json);
  void CompareMultiDimensionalArraysUnderModes(const std::string& connector_keys);
  // Debezium then the relay on added `columns`, each a header or (where `in_envelope` says) an envelope field, one
  // row per entry of `rows` (the columns' literals), through StringConverters or (`json`) JsonConverters with
  // schemas; `premise` names a header and a text some record of Debezium's must have. `connector_keys`: more lines
  // of the connector file.
  void CompareColumns(bool json, const std::vector<std::pair<std::string, std::string>>& columns,
                      const std::function<bool(const std::string&)>& in_envelope, const std::vector<std::string>& rows,
                      const std::string& event_type, const std::pair<std::string, std::string>& premise,
                      const std::string& connector_keys = "");
  // CompareColumns over `typed` (name, SQL type, literal): one row of the literals, one of NULLs (the first column
  // 'k2'); the columns named e_* in the envelope, the others headers.
  void CompareTypedRows(bool json, const std::vector<std::tuple<std::string, std::string, std::string>>& typed,
                        const std::string& event_type, const std::pair<std::string, std::string>& premise,
                        const std::string& connector_keys);
  void CompareMoney(bool json);
  void CompareBits(bool json);
  void ComparePoints(bool json);
  void ComparePostgis(bool json);
  void CompareExtensionTypes(bool json);
  void CompareEnumArrays(bool json);
  void CompareHstores(bool json);
  void CompareExtensionArrays(bool json);
  void ComparePgvector(bool json);

  // CREATE EXTENSION `name` in the test's database. scripts/install-deps.sh installs PostGIS and pgvector for Debian's
  // PostgreSQL 15, and the version matrix's 17 and 18 are built without them: missing on 15 the test fails, on another
  // version it is skipped (the caller returns when IsSkipped() or HasFailure()).
  void CreateExtensionOn15(const std::string& name) {
    auto available = pg_->QueryValue("SELECT count(*) FROM pg_available_extensions WHERE name = '" + name + "'");
    ASSERT_TRUE(available.ok()) << available.status();
    if (available->value_or("0") == "0") {
      ASSERT_NE(pg_->VersionNum() / 10000, 15)
          << "extension " << name << " is not installed for PostgreSQL 15 (scripts/install-deps.sh installs it)";
      GTEST_SKIP() << "extension " << name << " is not installed for this server (the install script gives it to 15)";
    }
    ASSERT_TRUE(pg_->Exec("CREATE EXTENSION " + name, db_).ok());
  }
  void CompareDomains(bool json);
  void CompareLostValues(bool json);
  // pgvector's arrays (vector[], halfvec[], sparsevec[]).
  void CompareVectorArrays(bool json);
  // PostgreSQL's infinity and -infinity in dates and timestamps, and as defaults Debezium drops.
  void CompareInfinities(bool json);
  // The same under another time.precision.mode.
  void CompareInfinitiesUnderTimeMode(const std::string& mode, bool json);

  // Placement envelope of typed columns (name, SQL type) under `converters`, over `rows` of their SQL values (in the
  // columns' order), with the router's `extra` keys; records compared with Debezium's.
  // `envelope_start`: how each of Debezium's values must start (the test's premise).
  void CompareEnvelopes(const std::vector<std::pair<std::string, std::string>>& columns,
                        const std::vector<std::string>& rows, const std::string& converters,
                        const std::string& envelope_start, const std::string& extra = "") {
    std::string placement = "type:header:eventType";
    for (const auto& [name, type] : columns) placement += "," + name + ":envelope";
    placement += ",aggregateid:envelope:aggregate";  // an alias
    SideBySide side(*this,
                    "transforms.outbox.table.fields.additional.placement=" + placement + "\n" + extra, converters);
    ASSERT_TRUE(side.Init());
    std::string names;
    ASSERT_TRUE(AddColumns(columns, &names));
    ASSERT_TRUE(side.StartDebezium());
    std::string values;
    for (size_t i = 0; i < rows.size(); ++i) {
      values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ + "', 'k" +
                std::to_string(i) + "', 'Enveloped', " + rows[i] + ")";
    }
    ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload" + names + ") VALUES " +
                              values,
                          db_)
                    .ok());
    const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
    ASSERT_EQ(debezium.size(), rows.size());
    for (const auto& [id, record] : debezium) {
      EXPECT_TRUE(record.value.value_or("").starts_with(envelope_start)) << record;
      if (std::getenv("OUTBOX_TEST_SHOW_RECORDS") != nullptr) std::cerr << record << "\n";
    }
    ExpectSameRecords(relayed, debezium);
  }
};

TEST_F(DebeziumSideBySide, TheSameConnectorFileGivesTheSameRecordsInDebeziumAndInTheRelay) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(side.StartDebezium());
  const std::map<std::string, Expected> expected = InsertEvents();
  ASSERT_TRUE(side.AwaitDebezium({{OrderTopic(), 4}, {CustomerTopic(), 1}}));
  const std::map<std::string, Expected> debezium = ReadRecords(/*relay=*/false, 4, 1);
  side.StopDebezium();
  ASSERT_TRUE(side.StartRelay());
  const std::map<std::string, Expected> relayed = ReadRecords(/*relay=*/true, 4, 1);
  side.StopRelay();

  EXPECT_EQ(debezium, expected) << "Debezium did not write what its documentation says";
  EXPECT_EQ(relayed, debezium);
}

// table.field.event.timestamp naming a timestamp column: both write its milliseconds as the record's timestamp
// (Debezium's MicroTimestamp divided by 1,000, the microseconds truncated); a NULL in it falls back to the commit
// time in the relay and to its processing time in Debezium.
TEST_F(DebeziumSideBySide, TheTimestampColumnIsTheRecordsTimestamp) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                         "transforms.outbox.table.field.event.timestamp=created\n");
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns({{"created", "timestamp"}}, &names));
  ASSERT_TRUE(side.StartDebezium());
  ASSERT_TRUE(InsertKeyedRows({"'2026-12-03 11:45:07.123456'", "'2000-02-29 23:59:59.999999'",
                               "'1970-01-01 00:00:00.001999'", "NULL"},
                              "Timed", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 4);
  ASSERT_EQ(debezium.size(), 4u);
  // The premise: Debezium's timestamps are the column's (1,796,298,307,123 ms for the first row).
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) { return r.timestamp_ms == 1796298307123; }), 1u);
  std::map<std::string, FullRecord> ours_null, theirs_null, ours_set, theirs_set;
  for (const auto& [id, r] : debezium) (r.key == "k3" ? theirs_null : theirs_set)[id] = r;
  for (const auto& [id, r] : relayed) (r.key == "k3" ? ours_null : ours_set)[id] = r;
  ExpectSameRecords(ours_set, theirs_set, Timestamps::kColumn);
  ExpectSameRecords(ours_null, theirs_null, Timestamps::kCommitTime);
}

// Kafka Connect's JsonConverter (schemas.enable=false) for key and value: JSON strings with Jackson's escapes
// (quotes, backslashes, control characters, characters beyond U+FFFF as surrogate pairs), NULL as the text null;
// with outbox.debezium_context_logical_name, the four __debezium.context.* headers in Debezium's place and order.
TEST_F(DebeziumSideBySide, JsonConvertersGiveTheKeysAndValuesDebeziumWrites) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n",
                  kJsonKeysAndValuesWithoutSchemas);
  // Debezium's __debezium.context.* headers too (its topic.prefix is the database's name).
  side.RelaySet("outbox.debezium_context_logical_name=" + db_);
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(side.StartDebezium());
  InsertEvents();
  InsertEscapedEvent();
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 5, /*with_context=*/true);

  ASSERT_EQ(debezium.size(), 5u);
  bool escaped = false;
  for (const auto& [id, record] : debezium) {
    escaped = escaped || (record.value && record.value->find(R"(\uD83D\uDE00)") != std::string::npos);
  }
  EXPECT_TRUE(escaped) << "Debezium no longer escapes characters beyond U+FFFF: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

// Kafka Connect's JsonConverter with schemas.enable=true (its default: left unset for the value) for key and value:
// {"schema":…,"payload":…} with the schema Debezium gives each column (aggregateid text NOT NULL: a string, not
// optional; payload jsonb: an optional io.debezium.data.Json), a NULL payload as a null payload, Jackson's escapes.
TEST_F(DebeziumSideBySide, JsonConvertersWithSchemasGiveTheEnvelopesDebeziumWrites) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n",
                  "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
                  "key.converter.schemas.enable=true\n"
                  "value.converter=org.apache.kafka.connect.json.JsonConverter\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(side.StartDebezium());
  InsertEvents();
  InsertEscapedEvent();
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 5);

  ASSERT_EQ(debezium.size(), 5u);
  size_t nulls = 0;
  for (const auto& [id, record] : debezium) {
    EXPECT_TRUE(record.key.value_or("").starts_with(R"({"schema":{"type":"string","optional":false},"payload":")"))
        << record;
    nulls += record.value == R"({"schema":{"type":"string","optional":true,"name":"io.debezium.data.Json",)"
                             R"("version":1},"payload":null})";
  }
  EXPECT_EQ(nulls, 1u) << "Debezium no longer writes a NULL payload as a null payload: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

// The same for other column types as the event key and payload, both nullable: optional schemas, NULL keys and
// payloads as null payloads, an integer key as a number, bytes as base64, uuid as io.debezium.data.Uuid.
TEST_F(DebeziumSideBySide, JsonConvertersWithSchemasGiveTheEnvelopesOfTextPayloadsAndBigintKeys) {
  CompareSchemasOfColumns("bigint", "text",
                          {"7, 'plain'", "-9007199254740993, E'q\" \\\\ \\n \u00e9'", "NULL, 'no key'", "8, NULL",
                           "9, ''"});
}

TEST_F(DebeziumSideBySide, JsonConvertersWithSchemasGiveTheEnvelopesOfByteaPayloadsAndUuidKeys) {
  CompareSchemasOfColumns("uuid", "bytea",
                          {"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff41'", "NULL, '\\x'",
                           "'00000000-0000-0000-0000-000000000000', NULL"});
}

// Keys and payloads of the other types Debezium has a schema for, through JsonConverter with and without schemas:
// Debezium's value of the column (a Decimal's base64, a boolean, epoch days, a ZonedTimestamp's text, a
// MicroTimestamp's number, a VariableScaleDecimal's struct), as in an envelope field.
TEST_F(DebeziumSideBySide, JsonConvertersWithSchemasGiveTypedKeysAndPayloads) {
  std::map<std::string, FullRecord> debezium;
  ASSERT_NO_FATAL_FAILURE(CompareSchemasOfColumns(
      "numeric(10,2)", "timestamptz",
      {"12.50, '2026-12-03 11:45:07.123456+00'", "NULL, '1969-12-31 23:59:59+00'", "-0.01, NULL"},
      kJsonKeysAndValues, &debezium));
  // The premise: a Decimal key and a ZonedTimestamp payload, not strings.
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.key.value_or("").find(R"("name":"org.apache.kafka.connect.data.Decimal")") != std::string::npos;
            }), 3u);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.value.value_or("").find(R"("payload":"2026-12-03T11:45:07.123456Z")") != std::string::npos;
            }), 1u);
}

TEST_F(DebeziumSideBySide, JsonConvertersWithoutSchemasGiveTypedKeysAndPayloads) {
  std::map<std::string, FullRecord> debezium;
  ASSERT_NO_FATAL_FAILURE(CompareSchemasOfColumns(
      "boolean", "timestamp", {"true, '2026-12-03 11:45:07.123456'", "NULL, '1900-01-01 00:00:00'", "false, NULL"},
      kJsonKeysAndValuesWithoutSchemas, &debezium));
  // The premise: a JSON boolean key and a MicroTimestamp's number.
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.key == "true" && r.value == "1796298307123456";
            }), 1u);
}

TEST_F(DebeziumSideBySide, JsonConvertersWithSchemasGiveDateKeysAndVariableNumericPayloads) {
  std::map<std::string, FullRecord> debezium;
  ASSERT_NO_FATAL_FAILURE(CompareSchemasOfColumns(
      "date", "numeric", {"'2026-12-03', 12.50", "'1900-01-01', -0.000", "NULL, NULL"}, kJsonKeysAndValues,
      &debezium));
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.key.value_or("").find(R"("name":"io.debezium.time.Date")") != std::string::npos &&
                     r.value.value_or("").find(R"("name":"io.debezium.data.VariableScaleDecimal")") != std::string::npos;
            }), 3u);
}

// Debezium's BinaryDataConverter: a bytea payload (a BYTES value) as its bytes, NULL as no value; a text key (a STRING
// value) through its delegate.converter.type, StringConverter here; a NULL key as none. The value converter has no
// delegate, which only a value of another type would need.
TEST_F(DebeziumSideBySide, BinaryDataConverterWritesByteaAsItsBytesAndOtherValuesThroughItsDelegate) {
  CompareSchemasOfColumns("text", "bytea", {"'k1', '\\x00ff41'", "NULL, '\\x'", "'k2', NULL", "'k3', '\\x0a'"},
                          "key.converter=io.debezium.converters.BinaryDataConverter\n"
                          "key.converter.delegate.converter.type=org.apache.kafka.connect.storage.StringConverter\n"
                          "value.converter=io.debezium.converters.BinaryDataConverter\n");
}

// BinaryDataConverter with JsonConverter delegates: a jsonb payload through JsonConverter with schemas (its default),
// a bigint key through one without (the delegate's own options under delegate.converter.type).
TEST_F(DebeziumSideBySide, BinaryDataConverterWritesOtherPayloadsThroughItsJsonConverterDelegate) {
  CompareSchemasOfColumns("bigint", "jsonb", {"7, '{\"a\": 1}'", "NULL, '[]'", "8, NULL"},
                          "key.converter=io.debezium.converters.BinaryDataConverter\n"
                          "key.converter.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\n"
                          "key.converter.delegate.converter.type.schemas.enable=false\n"
                          "value.converter=io.debezium.converters.BinaryDataConverter\n"
                          "value.converter.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\n");
}

// Kafka Connect's own ByteArrayConverter for keys and values: a bytea key and payload as their bytes, a NULL key a
// null key, a NULL payload a tombstone, an empty bytea an empty value.
TEST_F(DebeziumSideBySide, ByteArrayConvertersWriteByteaKeysAndPayloadsAsTheirBytes) {
  CompareSchemasOfColumns("bytea", "bytea", {"'\\x6b31', '\\x00ff41'", "NULL, '\\x'", "'\\x6b32', NULL", "'\\x', '\\x0a'"},
                          "key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
                          "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n");
}

// StringConverter over a typed key and payload: Debezium's value of the column as Java prints it (a Boolean's
// "true", a timestamp's epoch microseconds, a timestamptz's ISO-8601 text in UTC, a numeric's BigDecimal text), not
// PostgreSQL's text of it.
TEST_F(DebeziumSideBySide, StringConvertersWriteTypedKeysAndPayloadsAsJavaPrintsDebeziumsValues) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("boolean", "timestamptz",
                          {"true, '2026-12-03 13:45:07.123456+02'", "false, '1970-01-01 00:00:00+00'", "NULL, NULL"},
                          SideBySide::kStringConverters, &debezium);
  // The premise: Debezium's text is not PostgreSQL's (t, 2026-12-03 11:45:07.123456+00).
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.key == "true" && r.value == "2026-12-03T11:45:07.123456Z";
            }),
            1u);
}

TEST_F(DebeziumSideBySide, StringConvertersWriteNumericKeysAndTimestampPayloadsAsJavaPrintsDebeziumsValues) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("numeric(10,2)", "timestamp",
                          {"12.5, '2026-12-03 13:45:07.123456'", "-0.01, '1969-12-31 23:59:59.9'", "0, NULL"},
                          SideBySide::kStringConverters, &debezium);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) { return r.key == "12.50" && r.value == "1796305507123456"; }),
            1u);
}

// A bytea key and payload under StringConverter: Java's text of the ByteBuffer Debezium holds each in.
TEST_F(DebeziumSideBySide, StringConvertersWriteByteaKeysAndPayloadsAsJavaPrintsTheirByteBuffers) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("bytea", "bytea", {"'\\x6b31', '\\x00ff41'", "NULL, '\\x'", "'\\x', NULL"},
                          SideBySide::kStringConverters, &debezium);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.key == "java.nio.HeapByteBuffer[pos=0 lim=2 cap=2]" &&
                     r.value == "java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]";
            }),
            1u);
}

// binary.handling.mode other than bytes: Debezium's value of a bytea key or payload is its base64 or hex text, which
// StringConverter writes as is and JsonConverter as a string (with a string schema); an empty bytea's is "", blank,
// so a tombstone under route.tombstone.on.empty.payload.
TEST_F(DebeziumSideBySide, BinaryHandlingModeBase64KeysAndPayloadsThroughStringConvertersAreDebeziums) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("bytea", "bytea", {"'\\x6b31', '\\x00ff41'", "NULL, '\\x'", "'\\x', NULL", "'\\xfbff', '\\x20'"},
                          std::string(SideBySide::kStringConverters) +
                              "binary.handling.mode=base64\ntransforms.outbox.route.tombstone.on.empty.payload=true\n",
                          &debezium);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) { return r.key == "azE=" && r.value == "AP9B"; }), 1u);
}

TEST_F(DebeziumSideBySide, BinaryHandlingModeHexKeysAndPayloadsThroughJsonConvertersWithSchemasAreDebeziums) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("bytea", "bytea", {"'\\x6b31', '\\x00ff41'", "NULL, '\\x'", "'\\x', NULL"},
                          std::string(kJsonKeysAndValues) + "binary.handling.mode=hex\n", &debezium);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.value.value_or("").find(R"("payload":"00ff41")") != std::string::npos;
            }),
            1u);
}

TEST_F(DebeziumSideBySide, BinaryHandlingModeBase64UrlSafeKeysAndPayloadsThroughJsonConvertersAreDebeziums) {
  CompareSchemasOfColumns("bytea", "bytea", {"'\\xfbff', '\\xfbefff'", "NULL, '\\x'"},
                          std::string(kJsonKeysAndValuesWithoutSchemas) + "binary.handling.mode=base64-url-safe\n");
}

// The YAML form: the outbox.* keys a connector file becomes (`check --offline` prints them), set on a YAML
// configuration of the same server, slot and broker, give Debezium's records byte for byte, so that a user who starts
// on YAML gets the records a migrating user gets (a typed key, an envelope, a column default, a typed header), through
// JsonConverters with schemas and through StringConverters.
TEST_F(DebeziumSideBySide, TheYamlFormOfAConnectorFileGivesDebeziumsRecords) {
  CompareYamlForm(kJsonKeysAndValues, [](const FullRecord& r) {
    return r.key.value_or("").find(R"("payload":true)") != std::string::npos;
  });
}

TEST_F(DebeziumSideBySide, TheYamlFormOfAConnectorFileWithStringConvertersGivesDebeziumsRecords) {
  CompareYamlForm(SideBySide::kStringConverters, [](const FullRecord& r) {
    return r.key == "true" && r.value.value_or("").starts_with("Struct{payload={},eventType=Typed,amount=12.50");
  });
}

// route.tombstone.on.empty.payload=true with a bytea payload under ByteArrayConverter: Debezium judges a payload empty
// by its toString, and a ByteBuffer's ("java.nio.HeapByteBuffer[pos=0 lim=0 cap=0]") never is: an empty bytea is an
// empty value, not a tombstone; a NULL is a tombstone.
TEST_F(DebeziumSideBySide, AnEmptyByteaPayloadIsNoTombstoneUnderTombstoneOnEmptyPayload) {
  std::map<std::string, FullRecord> debezium;
  CompareSchemasOfColumns("text", "bytea", {"'k1', '\\x'", "'k2', NULL", "'k3', '\\x20'"},
                          "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                          "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
                          "transforms.outbox.route.tombstone.on.empty.payload=true\n",
                          &debezium);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) { return r.key == "k1" && r.value == ""; }), 1u);
}

// A failure, side by side: once the payload column becomes text, its first event under ByteArrayConverter fails
// Debezium's task (Kafka Connect's converter refuses the STRING schema), and the relay stops at the table's new layout
// (fatal, naming the key and the column, as for a column dropped from under it); what came before is the same bytes,
// what came after is written by neither, and the relay's slot stays before the change. With `same_transaction`, the
// change is in the transaction of the event before it.
void DebeziumSideBySide::CompareTextPayloadUnderByteArrayConverter(bool same_transaction) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                  "transforms.outbox.table.field.event.payload=body\n",
                  "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                  "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ADD COLUMN body bytea, ADD COLUMN text_body text", db_).ok());
  const std::string insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, body) VALUES ";
  const std::string order = order_type_;
  CompareFailure(side, insert + "(gen_random_uuid(), '" + order + "', 'k1', 'Bytes', '{}', '\\x00ff')",
                 // The payload column becomes text: the next row's payload is a string.
                 "ALTER TABLE outbox DROP COLUMN body; ALTER TABLE outbox RENAME COLUMN text_body TO body; " +
                     insert + "(gen_random_uuid(), '" + order + "', 'k2', 'Text', '{}', 'not bytes')",
                 insert + "(gen_random_uuid(), '" + order + "', 'k3', 'Text', '{}', 'after')",
                 "Invalid schema type for ByteArrayConverter",
                 {"outbox.value_converter: column \"body\"", "needs a bytea column"}, same_transaction);
}

TEST_F(DebeziumSideBySide, ATextPayloadUnderByteArrayConverterStopsBothBeforeIt) {
  CompareTextPayloadUnderByteArrayConverter(/*same_transaction=*/false);
}

// Kafka Connect sends k1 before the conversion of k2 fails the task; the relay, stopping at the table's new layout,
// delivers k1 first as at a halt (the error ended it at once, and k1, produced in the same round, was purged with
// the producer). Neither writes k2 or k3, and the relay confirms nothing of the transaction.
TEST_F(DebeziumSideBySide, ATextPayloadUnderByteArrayConverterInTheTransactionOfAnEventStopsBothAfterWritingIt) {
  CompareTextPayloadUnderByteArrayConverter(/*same_transaction=*/true);
}

// An event whose routing column (aggregatetype, route.by.field's default) is `route` (SQL) fails Debezium's task with
// `debezium_error`; the relay halts naming `relay_error` and the --start-lsn that skips its transaction; neither
// writes it or the one after, and the event before is the same bytes in both.
void DebeziumSideBySide::CompareUnroutableEvent(const std::string& route, const std::string& debezium_error,
                                                const std::string& relay_error) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ALTER COLUMN aggregatetype DROP NOT NULL", db_).ok());
  const std::string insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ";
  const std::string order = "'" + order_type_ + "'";
  CompareFailure(side, insert + "(gen_random_uuid(), " + order + ", 'k1', 'Created', '{}')",
                 insert + "(gen_random_uuid(), " + route + ", 'k2', 'Created', '{}')",
                 insert + "(gen_random_uuid(), " + order + ", 'k3', 'Created', '{}')", debezium_error,
                 {relay_error, "--start-lsn"});
}

// Debezium's RegexRouter throws a NullPointerException; the relay names the column.
TEST_F(DebeziumSideBySide, ANullRoutingColumnStopsBothAtTheSameEvent) {
  CompareUnroutableEvent("NULL", "NullPointerException", "aggregatetype");
}

// Kafka refuses the topic the routing value makes.
TEST_F(DebeziumSideBySide, AnIllegalTopicNameStopsBothAtTheSameEvent) {
  CompareUnroutableEvent("'bad type!'", "InvalidTopicException: Invalid topics: [outbox.event.bad type!]",
                         "outbox.event.bad type!");
}

// table.op.invalid.behavior=fatal: an UPDATE of the outbox fails Debezium's task and halts the relay, naming the
// --start-lsn that skips it (init made the publication publish updates, so both see it); the insert before it is the
// same bytes in both, the one after is written by neither.
TEST_F(DebeziumSideBySide, AnUpdateOfTheOutboxUnderFatalStopsBothAtTheSameEvent) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                  "transforms.outbox.table.op.invalid.behavior=fatal\n");
  ASSERT_TRUE(side.Init());
  const std::string insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ";
  const std::string order = order_type_;
  CompareFailure(side, insert + "(gen_random_uuid(), '" + order + "', 'k1', 'Created', '{}')",
                 "UPDATE outbox SET payload = '{\"changed\": true}' WHERE aggregateid = 'k1'",
                 insert + "(gen_random_uuid(), '" + order + "', 'k3', 'Created', '{}')",
                 "Unexpected update message received", {"outbox.on_update: error", "--start-lsn"});
}

// table.op.invalid.behavior=warn, with a publication that publishes updates and deletes: both drop the UPDATE and the
// DELETE of an outbox row and write the inserts around them, the same bytes.
TEST_F(DebeziumSideBySide, UpdatesAndDeletesOfTheOutboxUnderWarnAreDroppedByBoth) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                  "transforms.outbox.table.op.invalid.behavior=warn\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(pg_->Exec("ALTER PUBLICATION " + publication_ + " SET (publish = 'insert, update, delete')", db_).ok());
  ASSERT_TRUE(side.StartDebezium());
  const std::string insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ";
  ASSERT_TRUE(pg_->Exec(insert + "(gen_random_uuid(), '" + order_type_ + "', 'k1', 'Created', '{\"n\": 1}')", db_).ok());
  ASSERT_TRUE(pg_->Exec("UPDATE outbox SET payload = '{\"n\": 2}' WHERE aggregateid = 'k1'", db_).ok());
  ASSERT_TRUE(pg_->Exec("DELETE FROM outbox WHERE aggregateid = 'k1'", db_).ok());
  ASSERT_TRUE(pg_->Exec(insert + "(gen_random_uuid(), '" + order_type_ + "', 'k2', 'Created', '{\"n\": 3}')", db_).ok());
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 2);
  // ReadFull fails on an event id written twice (the UPDATE's row has k1's id); the premise: Debezium saw both inserts.
  ASSERT_EQ(CountRecords(debezium, [](const FullRecord& r) { return r.value == R"({"n": 1})" || r.value == R"({"n": 3})"; }),
            2u);
  ExpectSameRecords(relayed, debezium);
  absl::StatusOr<std::vector<KafkaRecord>> all = reader_->ReadAll(OrderTopic(), 30s);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 4u) << "two inserts from each, nothing for the UPDATE or the DELETE";
}

// include.unknown.datatypes=true: a key and a payload of types Debezium has no schema for (tid, pg_lsn) through
// JsonConverters, with and without schemas: bytes of their text, base64 in JSON, as Debezium writes them.
TEST_F(DebeziumSideBySide, UnknownDatatypesAsKeysAndPayloadsThroughJsonConvertersAreDebeziums) {
  CompareSchemasOfColumns("tid", "pg_lsn", {"'(1,2)', '16/B374D848'", "NULL, '0/0'", "'(0,0)', NULL"},
                          std::string(kJsonKeysAndValues) + "include.unknown.datatypes=true\n");
}

TEST_F(DebeziumSideBySide, UnknownDatatypesAsKeysAndPayloadsThroughJsonConvertersWithoutSchemasAreDebeziums) {
  CompareSchemasOfColumns("xid", "txid_snapshot", {"'5', '10:20:10,14,15'", "NULL, NULL"},
                          std::string(kJsonKeysAndValuesWithoutSchemas) + "include.unknown.datatypes=true\n");
}

// Typed columns placed in headers: Debezium's connector values as Kafka Connect's SimpleHeaderConverter writes them
// (`true`, epoch microseconds, ISO-8601 in UTC, base64, BigDecimal text), compared header by header, value and key
// too. Debezium also writes its __debezium.context.* headers, which the relay does not (left out of the comparison).
TEST_F(DebeziumSideBySide, TypedColumnsPlacedInHeadersGiveTheHeadersDebeziumWrites) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"c_bool", "boolean"}, {"c_int2", "smallint"}, {"c_int8", "bigint"}, {"c_f4", "real"},
      {"c_f8", "double precision"}, {"c_num", "numeric(12,4)"}, {"c_numt", "numeric(30,10)"}, {"c_numv", "numeric"},
      {"c_ch", "char(5)"}, {"c_uuid", "uuid"}, {"c_jsonb", "jsonb"}, {"c_date", "date"}, {"c_time", "time"},
      {"c_time3", "time(3)"}, {"c_ts", "timestamp"}, {"c_ts3", "timestamp(3)"}, {"c_tstz", "timestamptz"},
      {"c_tstz0", "timestamptz(0)"}, {"c_bytea", "bytea"}, {"c_inet", "inet"}};
  std::string placement = "type:header:eventType";
  for (const auto& [name, type] : columns) placement += "," + name + ":header";
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=" + placement + "\n");
  ASSERT_TRUE(side.Init());
  std::string add;
  for (const auto& [name, type] : columns) add += (add.empty() ? "" : ", ") + ("ADD COLUMN " + name + " " + type);
  ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox " + add, db_).ok());
  ASSERT_TRUE(side.StartDebezium());

  const std::string insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload";
  std::string names;
  for (const auto& [name, type] : columns) names += ", " + name;
  const std::string order = order_type_;
  const auto row = [&](const std::string& key, const std::string& values) {
    return "(gen_random_uuid(), '" + order + "', '" + key + "', 'Typed', '{}', " + values + ")";
  };
  ASSERT_TRUE(pg_->Exec(insert + names + ") VALUES " +
                            row("k1", "true, 7, 9007199254740993, 1.5, 0.1, 12.5, 0.0000001, 12.5, 'ab', "
                                      "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"b\": [1, 2]}', '2026-12-03', "
                                      "'13:45:07.123456', '13:45:07.1', '2026-12-03 13:45:07.123456', "
                                      "'2026-12-03 13:45:07.12', '2026-12-03 13:45:07.123456+02', "
                                      "'2026-12-03 13:45:07+02', '\\x00ff41', '10.0.0.1/8'") + ", " +
                            row("k2", "false, -32768, -1, 1e20, 123456789.125, -0.0001, 1234567.5, -129, '', "
                                      "'00000000-0000-0000-0000-000000000000', 'null', '1969-12-31', '00:00:00', "
                                      "'23:59:59.999', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00', "
                                      "'1900-01-01 00:00:00+00', '1970-01-01 00:00:00+00', '\\x', '::1'") + ", " +
                            row("k3", "NULL, NULL, NULL, 0.001, 1e7, 0, 0, 0.000, NULL, NULL, NULL, NULL, NULL, "
                                      "NULL, NULL, NULL, NULL, NULL, NULL, NULL") + ", " +
                            row("k4", "NULL, NULL, NULL, 'NaN', '-Infinity', 99999999.9999, 0.0000000001, "
                                      "-0.5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL") + ", " +
                            row("k5", "NULL, NULL, NULL, NULL, NULL, NULL, NULL, 12.500, NULL, NULL, NULL, NULL, "
                                      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL") + ", " +
                            row("k6", "NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1200, NULL, NULL, NULL, NULL, "
                                      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"),
                        db_)
                  .ok());
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 6);

  ASSERT_EQ(debezium.size(), 6u);
  for (const auto& [id, record] : debezium) {
    ASSERT_EQ(record.headers.size(), columns.size() + 2) << record;  // id, eventType and the typed columns
  }
  ExpectSameRecords(relayed, debezium);
}

// Placement partition: an integer column's value is the record's partition (NULL: the partitioner's choice by key,
// murmur2 in both), compared record by record with Debezium's, partition included.
TEST_F(DebeziumSideBySide, AColumnPlacedAsThePartitionGivesDebeziumsPartitions) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType,shard:partition\n");
  ASSERT_TRUE(side.Init(/*order_partitions=*/3));
  ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ADD COLUMN shard integer", db_).ok());
  ASSERT_TRUE(side.StartDebezium());
  std::string values;
  for (const auto& [key, shard] : std::vector<std::pair<std::string, std::string>>{
           {"k1", "2"}, {"k2", "0"}, {"k3", "1"}, {"k4", "2"}, {"k5", "NULL"}, {"k6", "NULL"}, {"k7", "NULL"}}) {
    values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ + "', '" + key +
              "', 'Sharded', '{}', " + shard + ")";
  }
  ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, shard) VALUES " + values, db_)
                  .ok());
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 7);

  ASSERT_EQ(debezium.size(), 7u);
  const std::map<std::string, int32_t> placed = {{"k1", 2}, {"k2", 0}, {"k3", 1}};
  std::set<int32_t> partitions;
  for (const auto& [id, record] : debezium) {
    partitions.insert(record.partition);
    const auto it = placed.find(record.key.value_or(""));
    if (it != placed.end()) {
      EXPECT_EQ(record.partition, it->second) << record;
    }
  }
  EXPECT_EQ(partitions.size(), 3u);
  ExpectSameRecords(relayed, debezium);
}

// Placement envelope (the value is Debezium's struct {payload, <fields>}) through JsonConverter without schemas:
// each column type's JSON as Kafka Connect writes Debezium's value (numbers, booleans, a Decimal's base64, a
// VariableScaleDecimal's struct, times as numbers, timestamptz as a string, bytea as base64), NULLs as null, a NULL
// payload as a null payload.
const std::vector<std::pair<std::string, std::string>> kEnvelopeColumns = {
    {"c_bool", "boolean"},    {"c_int4", "integer"},      {"c_int8", "bigint"},   {"c_f8", "double precision"},
    {"c_f4", "real"},         {"c_num", "numeric(12,4)"}, {"c_date", "date"},     {"c_ts", "timestamp"},
    {"c_ts3", "timestamp(3)"}, {"c_tstz", "timestamptz"}, {"c_uuid", "uuid"},     {"c_jsonb", "jsonb"},
    {"c_text", "text"}};
const std::vector<std::string> kEnvelopeRows = {
    "'{\"a\": 1}', true, 7, 9007199254740993, 1e20, 1.5, 12.5, '2026-12-03', '2026-12-03 13:45:07.123456', "
    "'2026-12-03 13:45:07.12', '2026-12-03 13:45:07.5+02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
    "'{\"b\": [1, 2]}', E'q\" \\\\ \\n'",
    "'{}', false, -1, -9, 0.1, 'NaN', -0.0001, '1969-12-31', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00', "
    "'1900-01-01 00:00:00+00', '00000000-0000-0000-0000-000000000000', 'null', ''",
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};

TEST_F(DebeziumSideBySide, EnvelopePlacementThroughJsonConvertersGivesDebeziumsValues) {
  std::vector<std::pair<std::string, std::string>> columns = kEnvelopeColumns;
  columns.emplace_back("c_numv", "numeric");
  columns.emplace_back("c_bytea", "bytea");
  std::vector<std::string> rows = kEnvelopeRows;
  rows[0] += ", 12.50, '\\x00ff41'";
  rows[1] += ", -129, '\\x'";
  rows[2] += ", NULL, NULL";
  CompareEnvelopes(columns, rows,
                   "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                   "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                   "value.converter.schemas.enable=false\n",
                   R"({"payload":)");
}

// The same with schemas (JsonConverter's default): the envelope's struct schema, named after the row's schema with
// the route value ("<topic.prefix>.public.outbox.<aggregatetype>.Value"), each field with Debezium's column schema
// and optional as the catalog says, versioned by table.field.event.schema.version's column.
TEST_F(DebeziumSideBySide, EnvelopePlacementWithSchemasGivesDebeziumsEnvelopeSchema) {
  std::vector<std::pair<std::string, std::string>> columns = kEnvelopeColumns;
  columns.emplace_back("c_numv", "numeric");
  columns.emplace_back("c_req", "integer NOT NULL");
  columns.emplace_back("v", "integer");
  std::vector<std::string> rows = kEnvelopeRows;
  rows[0] += ", 12.50, 5, 1";
  rows[1] += ", 0.000, 6, 2";
  rows[2] += ", NULL, 7, 1";
  CompareEnvelopes(columns, rows,
                   "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                   "value.converter=org.apache.kafka.connect.json.JsonConverter\n",
                   R"({"schema":{"type":"struct","fields":[{"type":"string","optional":true,)"
                   R"("name":"io.debezium.data.Json","version":1,"field":"payload"})",
                   "transforms.outbox.table.field.event.schema.version=v\n");
}

// Under StringConverter the value is Struct.toString: the fields that are not null, as Java prints each value.
TEST_F(DebeziumSideBySide, EnvelopePlacementThroughStringConvertersGivesStructToString) {
  CompareEnvelopes(kEnvelopeColumns, kEnvelopeRows, SideBySide::kStringConverters, "Struct{");
}

// A typed payload column in the envelope under JsonConverter, with and without schemas: the payload field holds
// Debezium's value of the column (a Decimal's base64, a ZonedTimestamp's text), as the other envelope fields do.
TEST_F(DebeziumSideBySide, TypedPayloadsInTheEnvelopeThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareTypedEnvelopePayloads(/*schemas=*/true);
}

TEST_F(DebeziumSideBySide, TypedPayloadsInTheEnvelopeThroughJsonConvertersWithoutSchemasAreDebeziums) {
  CompareTypedEnvelopePayloads(/*schemas=*/false);
}

// A bytea envelope field under StringConverter: Struct.toString prints the ByteBuffer Debezium holds the bytes in
// ("java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]"), no identity hash code (a numeric without a scale, a bit string:
// "Struct{scale=1,value=[B@15bdc97a}", "[B@14c2178", seen side by side, stay refused); a bytea payload in the
// envelope too.
TEST_F(DebeziumSideBySide, ByteaInTheEnvelopeThroughStringConvertersIsJavasTextOfItsByteBuffer) {
  CompareEnvelopes({{"e_bytea", "bytea"}}, {"'{}', '\\x00ff41'", "'{}', NULL", "'{}', '\\x'"},
                   SideBySide::kStringConverters, "Struct{");
}

TEST_F(DebeziumSideBySide, AByteaPayloadInTheEnvelopeThroughStringConvertersIsJavasTextOfItsByteBuffer) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:envelope:eventType\n"
                  "transforms.outbox.table.field.event.payload=body\n");
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns({{"body", "bytea"}}, &names));
  ASSERT_TRUE(side.StartDebezium());
  ASSERT_TRUE(InsertKeyedRows({"'\\x00ff41'", "NULL", "'\\x'"}, "Bytes", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 3);
  ASSERT_EQ(debezium.size(), 3u);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.value == "Struct{payload=java.nio.HeapByteBuffer[pos=0 lim=3 cap=3],eventType=Bytes}";
            }),
            1u);
  ExpectSameRecords(relayed, debezium);
}

// A typed payload column in the envelope under StringConverter: Struct.toString prints the payload field as Java
// prints Debezium's value (a ZonedTimestamp's ISO-8601 text in UTC), not the column's text.
TEST_F(DebeziumSideBySide, TypedPayloadsInTheEnvelopeThroughStringConvertersAreJavasTextOfDebeziumsValues) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:envelope:eventType,stamp:envelope\n"
                  "transforms.outbox.table.field.event.payload=happened\n");
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns({{"happened", "timestamptz"}, {"stamp", "timestamptz"}}, &names));
  ASSERT_TRUE(side.StartDebezium());
  ASSERT_TRUE(InsertKeyedRows({"'2026-12-03 13:45:07.5+02', '2026-12-03 11:45:07.5+00'", "NULL, NULL",
                               "'1970-01-01 00:00:00+00', NULL"},
                              "Typed", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 3);
  ASSERT_EQ(debezium.size(), 3u);
  EXPECT_EQ(CountRecords(debezium, [](const FullRecord& r) {
              return r.value.value_or("").find("payload=2026-12-03T11:45:07.500000Z,") != std::string::npos;
            }),
            1u);
  ExpectSameRecords(relayed, debezium);
}

// Debezium caches the envelope's schema by the payload's schema, so the first event's route value names the
// envelope of every later event, of other route values too (here the customer's envelope is named after the order).
// With route.tombstone.on.empty.payload a NULL or blank payload is a tombstone, not an envelope.
TEST_F(DebeziumSideBySide, EnvelopeSchemaIsNamedByTheFirstRouteValueAndEmptyPayloadsAreTombstones) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:envelope:eventType\n"
                  "transforms.outbox.route.tombstone.on.empty.payload=true\n",
                  "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                  "key.converter=org.apache.kafka.connect.storage.StringConverter\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(side.StartDebezium());
  const std::string order = order_type_, customer = customer_type_;
  ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
                        "(gen_random_uuid(), '" + order + "', 'o1', 'Placed', '{\"n\": 1}'), "
                        "(gen_random_uuid(), '" + customer + "', 'c1', 'Joined', '{\"n\": 2}'), "
                        "(gen_random_uuid(), '" + order + "', 'o2', 'Deleted', NULL), "
                        "(gen_random_uuid(), '" + customer + "', 'c2', 'Left', '\"  \"')",
                        db_)
                  .ok());
  ASSERT_TRUE(side.AwaitDebezium({{OrderTopic(), 2}, {CustomerTopic(), 2}}));
  std::map<std::string, FullRecord> debezium = ReadFull(/*relay=*/false, OrderTopic(), 2);
  debezium.merge(ReadFull(/*relay=*/false, CustomerTopic(), 2));
  side.StopDebezium();
  ASSERT_TRUE(side.StartRelay());
  std::map<std::string, FullRecord> relayed = ReadFull(/*relay=*/true, OrderTopic(), 2);
  relayed.merge(ReadFull(/*relay=*/true, CustomerTopic(), 2));
  side.StopRelay();

  ASSERT_EQ(debezium.size(), 4u);
  size_t named_after_order = 0, tombstones = 0;
  for (const auto& [id, record] : debezium) {
    tombstones += !record.value.has_value();
    named_after_order += record.value.value_or("").find(".public.outbox." + order + ".Value") != std::string::npos;
  }
  EXPECT_EQ(tombstones, 1u) << "the blank JSON string \"  \" is not blank: only the NULL payload is a tombstone";
  EXPECT_EQ(named_after_order, 3u) << "Debezium no longer names every envelope after the first route value";
  ExpectSameRecords(relayed, debezium);
}

// Columns with defaults: for a NULL, Debezium's records have the column's default as its parser reads the default
// expression (Kafka Connect's Struct.get returns the schema's default): the payload, the key and header columns,
// with placeholders for function defaults (gen_random_uuid() gives the zero UUID, md5(...) an empty string, an
// interval function a zero interval).
const std::vector<std::pair<std::string, std::string>> kDefaultedColumns = {
    {"d_text", "text DEFAULT 'dflt'"},      {"d_quote", "text DEFAULT 'it''s'"},
    {"d_fn", "text DEFAULT md5('x')"},      {"d_int", "integer DEFAULT 42"},
    {"d_neg", "bigint DEFAULT -7"},         {"d_bool", "boolean DEFAULT true"},
    {"d_uuid", "uuid DEFAULT gen_random_uuid()"}, {"d_num", "numeric(10,3) DEFAULT 1.5"},
    {"d_f8", "double precision DEFAULT 2.5"},     {"d_none", "integer"},
    {"d_now", "timestamptz DEFAULT now()"},       {"d_tstz", "timestamptz(3) DEFAULT '2024-05-01 10:00:00.5+02'"},
    {"d_ts", "timestamp DEFAULT '2024-05-01 10:00:00.25'"}, {"d_date", "date DEFAULT '2024-01-31'"},
    {"d_today", "date DEFAULT CURRENT_DATE"},     {"d_time", "time DEFAULT '10:30'"},
    {"d_ival", "interval DEFAULT '1 day 02:03:04.5'"}, {"d_ival_neg", "interval DEFAULT '-1 year 2 mons -3 days'"},
    {"d_bits", "bit(5) DEFAULT B'10110'"},        {"d_bit1", "bit(1) DEFAULT B'1'"},
    {"d_vbit", "varbit DEFAULT B'0101'"},          {"d_vbit1", "varbit(1) DEFAULT B'0'"},
    {"d_numvar", "numeric DEFAULT 2.50"},         {"d_point", "point DEFAULT '(1,2)'"},
    {"d_ival_fn", "interval DEFAULT (now() - now())"}, {"d_ival_mk", "interval DEFAULT make_interval(days => 2)"}};

void DebeziumSideBySide::CompareDefaults(bool schemas) {
  {
    std::string placement = "type:header:eventType";
    for (const auto& [name, type] : kDefaultedColumns) placement += "," + name + (schemas ? ":envelope" : ":header");
    SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=" + placement + "\n",
                    schemas ? "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
                              "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                            : SideBySide::kStringConverters);
    ASSERT_TRUE(side.Init());
    std::string add = "ALTER COLUMN payload SET DEFAULT '{\"d\": 1}'::jsonb, ALTER COLUMN aggregateid SET DEFAULT "
                      "'k-default'";
    std::string names, nulls;
    for (const auto& [name, type] : kDefaultedColumns) {
      add += ", ADD COLUMN " + name + " " + type;
      names += ", " + name;
      nulls += ", NULL";
    }
    ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ALTER COLUMN aggregateid DROP NOT NULL", db_).ok());
    ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox " + add, db_).ok());
    ASSERT_TRUE(side.StartDebezium());
    const std::string row = "(gen_random_uuid(), '" + order_type_ + "', ";
    ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload" + names + ") VALUES " +
                              row + "NULL, 'Defaulted', NULL" + nulls + "), " + row +
                              "'k1', 'Given', '{\"g\": 2}', 'x', 'y', 'z', 1, 2, false, "
                              "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 3.25, 0.5, 9, '2026-12-04 10:00:00+00', "
                              "'2026-12-04 11:00:00.125+00', '2026-12-04 12:00:00', '2026-12-04', '2026-12-05', "
                              "'23:59:59', '2 hours', '-1 month', B'00001', B'0', B'1', B'1', 3.14, '(3,4)', '2 hours', "
                              "'3 days')",
                          db_)
                    .ok());
    const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 2);
    ASSERT_EQ(debezium.size(), 2u);
    const size_t defaulted = CountRecords(debezium, [](const FullRecord& record) {
      return record.key == "k-default" || record.key.value_or("").ends_with(R"("payload":"k-default"})");
    });
    EXPECT_EQ(defaulted, 1u) << "Debezium no longer writes a NULL key column's default: the test's premise changed";
    ExpectSameRecords(relayed, debezium);
  }
}

TEST_F(DebeziumSideBySide, ANullInAColumnWithADefaultGivesTheDefaultInHeadersKeyAndValue) {
  CompareDefaults(/*schemas=*/false);
}

// With JsonConverter's schemas the defaults are in the schemas too (key, payload and envelope fields).
TEST_F(DebeziumSideBySide, ANullInAColumnWithADefaultGivesTheDefaultAndTheSchemasCarryIt) {
  CompareDefaults(/*schemas=*/true);
}

// Kafka Connect's JsonConverter as the header converter (and Debezium Server's default header format, the same
// converter): the id and each header column as the JSON of Debezium's value, inside {"schema":…,"payload":…} unless
// schemas.enable=false; a NULL as the JSON null.
void DebeziumSideBySide::CompareJsonHeaders(bool schemas) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_bool", "boolean"}, {"h_int", "integer NOT NULL"}, {"h_num", "numeric(12,4)"}, {"h_tstz", "timestamptz"},
      {"h_jsonb", "jsonb"},  {"h_uuid", "uuid"},            {"h_bytea", "bytea"},      {"h_f8", "double precision"}};
  std::string placement = "type:header:eventType";
  for (const auto& [name, type] : columns) placement += "," + name + ":header";
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=" + placement + "\n",
                  std::string(SideBySide::kStringConverters) +
                      "header.converter=org.apache.kafka.connect.json.JsonConverter\n" +
                      (schemas ? "" : "header.converter.schemas.enable=false\n"));
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns(columns, &names));
  ASSERT_TRUE(side.StartDebezium());
  const std::string row = "(gen_random_uuid(), '" + order_type_ + "', ";
  ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload" + names + ") VALUES " +
                            row + "'k1', 'Headed', '{}', true, 7, 12.5, '2026-12-03 13:45:07.5+02', "
                                  "'{\"q\": \"a\\\"b\"}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff', 1e20), " +
                            row + "'k2', 'Headed', '{}', NULL, -1, NULL, NULL, NULL, NULL, NULL, NULL)",
                        db_)
                  .ok());
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 2);
  ASSERT_EQ(debezium.size(), 2u);
  for (const auto& [id, record] : debezium) {
    if (std::getenv("OUTBOX_TEST_SHOW_RECORDS") != nullptr) std::cerr << record << "\n";
    ASSERT_FALSE(record.headers.empty()) << record;
    EXPECT_EQ(record.headers[0].value.value_or("").starts_with(schemas ? R"({"schema":)" : R"(")"), true) << record;
  }
  ExpectSameRecords(relayed, debezium);
}

TEST_F(DebeziumSideBySide, AJsonHeaderConverterGivesTheHeadersDebeziumWrites) { CompareJsonHeaders(/*schemas=*/true); }

TEST_F(DebeziumSideBySide, AJsonHeaderConverterWithoutSchemasGivesTheHeadersDebeziumWrites) {
  CompareJsonHeaders(/*schemas=*/false);
}

// interval (MicroDuration: Debezium adds the parts up in doubles with 365.25 / 12 days a month), timetz (ZonedTime in
// UTC) and ranges placed in headers, through SimpleHeaderConverter and through JsonConverter with schemas.
void DebeziumSideBySide::CompareIntervalsTimesAndRanges(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_iv", "interval"},   {"h_ttz", "timetz"},    {"h_i4r", "int4range"}, {"h_i8r", "int8range"},
      {"h_nr", "numrange"},   {"h_dr", "daterange"},  {"h_tsr", "tsrange"},   {"h_tzr", "tstzrange"}};
  std::string placement = "type:header:eventType";
  for (const auto& [name, type] : columns) placement += "," + name + ":header";
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=" + placement + "\n",
                  std::string(SideBySide::kStringConverters) +
                      (json ? "header.converter=org.apache.kafka.connect.json.JsonConverter\n" : ""));
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns(columns, &names));
  ASSERT_TRUE(side.StartDebezium());
  const std::vector<std::string> rows = {
      "'1 year 2 mons 3 days 04:05:06.789', '13:45:07.5+02', '[1,5)', '[-9007199254740993,0]', '(1.5,2.25]', "
      "'[2026-01-01,2026-02-01)', '[\"2026-01-01 10:00\",\"2026-01-02 00:00:00.5\")', "
      "'[\"2026-01-01 10:00+02\",\"2026-01-02 00:00:00.5-03:30\")'",
      "'-1 days +02:00:00', '01:00:00+02', 'empty', '(,)', '[0,)', '(,2026-01-01]', 'empty', '(,)'",
      "'00:00:00.000001', '23:30:00-01:30', NULL, NULL, NULL, NULL, NULL, 'empty'",
      "'100 years 11 mons 29 days 23:59:59.999999', '12:00:00.123456-05', NULL, NULL, NULL, NULL, NULL, NULL",
      "'-3 mons -00:00:01.5', '00:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL",
      "'0.1 seconds', '24:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL",
      "'1234 years 5 mons 6 days 07:08:09.123457', '10:00:00+14', NULL, NULL, NULL, NULL, NULL, NULL"};
  ASSERT_TRUE(InsertKeyedRows(rows, "Typed", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  for (const auto& [id, record] : debezium) {
    if (std::getenv("OUTBOX_TEST_SHOW_RECORDS") != nullptr) std::cerr << record << "\n";
    ASSERT_EQ(record.headers.size(), columns.size() + 2) << record;
  }
  ExpectSameRecords(relayed, debezium);
}

TEST_F(DebeziumSideBySide, IntervalsTimesWithZonesAndRangesInHeadersGiveDebeziumsHeaders) {
  CompareIntervalsTimesAndRanges(/*json=*/false);
}

TEST_F(DebeziumSideBySide, IntervalsTimesWithZonesAndRangesThroughAJsonHeaderConverterGiveDebeziumsHeaders) {
  CompareIntervalsTimesAndRanges(/*json=*/true);
}

// Enum columns (io.debezium.data.Enum): the label in a header, in envelope fields and as the key, through JsonConverter
// with schemas for keys, headers and values, the schema naming the type's labels in their sort order (one added BEFORE
// another), and a NULL's default label (one with a doubled quote in its literal).
TEST_F(DebeziumSideBySide, EnumColumnsGiveDebeziumsLabelsSchemasAndDefaults) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType,e_status:envelope,"
                  "e_odd:envelope:odd,e_plain:header\n",
                  SideBySide::kJsonConverters);
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(pg_->Exec("CREATE TYPE order_status AS ENUM ('new', 'shipped', 'it''s odd')", db_).ok());
  ASSERT_TRUE(pg_->Exec("ALTER TYPE order_status ADD VALUE 'paid' BEFORE 'shipped'", db_).ok());
  // The key column an enum too: JsonConverter writes the key with the Enum schema.
  ASSERT_TRUE(pg_->Exec("CREATE TYPE order_key AS ENUM ('k0', 'k1', 'k2')", db_).ok());
  ASSERT_TRUE(
      pg_->Exec("ALTER TABLE outbox ALTER COLUMN aggregateid TYPE order_key USING aggregateid::text::order_key", db_)
          .ok());
  std::string names;
  ASSERT_TRUE(AddColumns({{"e_status", "order_status DEFAULT 'new'"},
                          {"e_odd", "order_status DEFAULT 'it''s odd'"},
                          {"e_plain", "order_status"}},
                         &names));
  ASSERT_TRUE(side.StartDebezium());
  const std::vector<std::string> rows = {"'paid', 'shipped', 'new'", "NULL, NULL, NULL", "'it''s odd', 'new', 'paid'"};
  ASSERT_TRUE(InsertKeyedRows(rows, "Labelled", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  const size_t enums = CountRecords(debezium, [](const FullRecord& record) {
    return record.value.value_or("").find(R"("name":"io.debezium.data.Enum")") != std::string::npos &&
           record.key.value_or("").find(R"("allowed":"k0,k1,k2")") != std::string::npos;
  });
  EXPECT_EQ(enums, 3u) << "Debezium no longer gives an enum column its Enum schema: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

void DebeziumSideBySide::CompareColumns(bool json, const std::vector<std::pair<std::string, std::string>>& columns,
                                        const std::function<bool(const std::string&)>& in_envelope,
                                        const std::vector<std::string>& rows, const std::string& event_type,
                                        const std::pair<std::string, std::string>& premise,
                                        const std::string& connector_keys) {
  std::string placement = "type:header:eventType";
  for (const auto& [name, type] : columns) placement += "," + name + (in_envelope(name) ? ":envelope" : ":header");
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=" + placement + "\n" + connector_keys,
                  json ? SideBySide::kJsonConverters : SideBySide::kStringConverters);
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns(columns, &names));
  ASSERT_TRUE(side.StartDebezium());
  ASSERT_TRUE(InsertKeyedRows(rows, event_type, names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  EXPECT_GE(CountHeadersContaining(debezium, premise.first, premise.second), 1u)
      << "Debezium's " << premise.first << " header no longer holds " << premise.second << ": the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

void DebeziumSideBySide::CompareTypedRows(bool json,
                                          const std::vector<std::tuple<std::string, std::string, std::string>>& typed,
                                          const std::string& event_type,
                                          const std::pair<std::string, std::string>& premise,
                                          const std::string& connector_keys) {
  std::vector<std::pair<std::string, std::string>> columns;
  std::string values, nulls;
  for (const auto& [name, type, literal] : typed) {
    columns.emplace_back(name, type);
    values += (values.empty() ? "" : ", ") + literal;
    nulls += nulls.empty() ? "'k2'" : ", NULL";
  }
  CompareColumns(json, columns, [](const std::string& name) { return name.starts_with("e_"); }, {values, nulls},
                 event_type, premise, connector_keys);
}

// One-dimensional arrays in headers and envelope fields: Connect arrays of optional elements, written by
// SimpleHeaderConverter ([e1,e2]: strings quoted and escaped, null), by Struct.toString under StringConverter
// ([e1, e2]) and by JsonConverter with schemas; quoted, escaped, NULL and empty elements, empty arrays, NULL arrays,
// arrays with explicit lower bounds (written without them).
void DebeziumSideBySide::CompareArrays(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"a_text", "text[]"},   {"a_int", "integer[]"}, {"a_big", "bigint[]"},   {"a_bool", "boolean[]"},
      {"a_f8", "float8[]"},   {"a_f4", "real[]"},     {"a_uuid", "uuid[]"},    {"a_jsonb", "jsonb[]"},
      {"a_inet", "inet[]"},   {"a_vc", "varchar(10)[]"}, {"a_small", "smallint[]"}, {"e_text", "text[]"},
      {"e_f8", "float8[]"},   {"e_int", "integer[]"}, {"a_lb", "integer[]"}, {"e_lb", "text[]"}};
  const std::vector<std::string> rows = {
      R"('{a,"b c",NULL,"q\"x","back\\slash","",null}', '{1,-2,NULL}', '{9007199254740993}', '{t,f,NULL}', )"
      R"('{1e20,NaN,-Infinity,0.1}', '{1.5,NULL}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}', )"
      R"(ARRAY['{"k": "v"}'::jsonb, NULL], '{10.0.0.1/8,::1}', '{"ab  ",x}', '{32767,-32768}', )"
      R"('{x,"y, z"}', '{2.5,NULL}', '{}', '[0:2]={5,NULL,-6}', '[-1:0]={"a]=b",c}')",
      "'{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Arrayed", {"a_int", "-2"});
}

TEST_F(DebeziumSideBySide, ArraysInHeadersAndTheEnvelopeThroughStringConvertersAreDebeziums) {
  CompareArrays(/*json=*/false);
}

TEST_F(DebeziumSideBySide, ArraysThroughJsonConvertersWithSchemasAreDebeziums) { CompareArrays(/*json=*/true); }

// Arrays of dates, times, timestamps (both precisions), timestamptz, timetz, numeric(p,s), bytea and ranges: each
// element as Debezium converts it (a number, an ISO string, a Decimal, base64), in headers through
// SimpleHeaderConverter and JsonConverter with schemas (where the elements' logical types are in the schema), and
// in an envelope field through StringConverter (List.toString).
void DebeziumSideBySide::CompareTemporalAndNumericArrays(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"a_date", "date[]"},         {"a_time", "time[]"},      {"a_time3", "time(3)[]"},
      {"a_ts", "timestamp[]"},      {"a_ts3", "timestamp(3)[]"}, {"a_tstz", "timestamptz[]"},
      {"a_tstz2", "timestamptz(2)[]"}, {"a_timetz", "timetz[]"}, {"a_num", "numeric(10,2)[]"},
      {"a_bytea", "bytea[]"},       {"a_i4r", "int4range[]"},  {"a_tsr", "tsrange[]"},
      {"e_date", "date[]"},         {"e_tstz", "timestamptz[]"}, {"e_num", "numeric(8,3)[]"},
      {"a_numv", "numeric[]"}};
  const std::vector<std::string> rows = {
      R"sql('{2026-12-03,1970-01-01,NULL,1969-12-31}', '{13:45:07.123456,00:00:00,13:45:07.123999,23:59:59.999999,00:00:00.0005}', '{13:45:07.5,23:59:59.999}', )sql"
      R"sql('{2026-12-03 13:45:07.123456,1960-01-01 00:00:00}', '{2026-12-03 13:45:07.125}', )sql"
      R"sql('{2026-12-03 13:45:07.123456+02,NULL}', '{2026-12-03 13:45:07.1+00}', '{13:45:07.5+02,00:00:00+00,13:45:07.999+02,23:59:59.999999+00,10:00:00.123456-03}', )sql"
      R"sql('{12.50,-0.01,NULL,99999999.99}', ARRAY['\x00ff41'::bytea, NULL, ''::bytea], '{"[1,5)",empty}', )sql"
      R"sql('{"[2026-12-03 10:00,2026-12-04 10:00)"}', '{2000-02-29}', '{1970-01-01 00:00:00+00}', '{1.5,0.001}', '{1.50,NULL,-0.001,12345678901234567890}')sql",
      "'{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Dated",
                 {"a_date", json ? "io.debezium.time.Date" : "20790"});
}

TEST_F(DebeziumSideBySide, TemporalNumericBinaryAndRangeArraysThroughStringConvertersAreDebeziums) {
  CompareTemporalAndNumericArrays(/*json=*/false);
}

TEST_F(DebeziumSideBySide, TemporalNumericBinaryAndRangeArraysThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareTemporalAndNumericArrays(/*json=*/true);
}

// Multi-dimensional arrays: pgjdbc reads {{1,2},{3,4}} as an Object[] of Integer[], and Debezium's element converter,
// given each inner Java array, gives null for it where it knows no Java array (numbers, booleans, dates, times,
// timestamps, timestamptz, timetz, bytea): a list of one null per inner array, in headers and envelope fields, through StringConverters and
// JsonConverters with schemas (the schema is the one-dimensional array's); NULL elements inside, explicit bounds,
// three dimensions.
void DebeziumSideBySide::CompareMultiDimensionalArrays(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"m_i2", "smallint[][]"},  {"m_i4", "integer[][]"},  {"m_i8", "bigint[][]"},      {"m_f4", "real[][]"},
      {"m_f8", "float8[][]"},    {"m_num", "numeric(6,2)[][]"}, {"m_numv", "numeric[][]"}, {"m_bool", "boolean[][]"},
      {"m_date", "date[][]"},    {"m_time", "time[][]"},   {"m_ts", "timestamp(3)[][]"}, {"e_i4", "integer[][][]"},
      {"e_ts", "timestamp[][]"}, {"e_f8", "float8[][]"},   {"m_tstz", "timestamptz[][]"}, {"m_timetz", "timetz[][]"},
      {"m_bytea", "bytea[][]"}};
  const std::vector<std::string> rows = {
      R"sql('{{1,2},{3,NULL}}', '{{1},{2},{3}}', '{{9007199254740993}}', '{{1.5,2}}', '{{1e20,NaN},{0,-1}}', )sql"
      R"sql('{{1.50,2},{NULL,-0.01}}', '{{1.5}}', '{{t,f},{NULL,t}}', '{{2026-12-03,1969-12-31}}', '{{13:45:07.123456}}', )sql"
      R"sql('{{"2026-12-03 13:45:07.123"},{NULL}}', '{{{1,2},{3,4}},{{5,6},{7,8}}}', '[0:1][1:1]={{"1960-01-01 00:00:00"},{"2026-12-03 00:00:00"}}', )sql"
      R"sql('{{0.1}}', '{{"2026-12-03 13:45:07+00"},{NULL}}', '{{13:45:07+02}}', ARRAY[ARRAY['\\x00ff'::bytea],ARRAY[NULL::bytea]])sql",
      "'{1,2}', '{}', '{3}', '{}', '{1.5}', '{}', '{}', '{t}', '{}', '{}', '{}', '{}', '{}', '{2.5}', '{}', '{}', '{}'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Nested",
                 {"m_i4", "[null,null,null]"});
}

// The same under the modes' forms of the elements (`connector_keys`), through JsonConverters with schemas (the
// schema is the one-dimensional array's under the modes): dates, times, timestamps, bytea and numerics.
void DebeziumSideBySide::CompareMultiDimensionalArraysUnderModes(const std::string& connector_keys) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"m_date", "date[][]"}, {"m_time", "time[][]"}, {"m_ts", "timestamp[][]"}, {"m_bytea", "bytea[][]"},
      {"m_num", "numeric[][]"}};
  const std::vector<std::string> rows = {
      R"sql('{{2026-12-03},{NULL}}', '{{13:45:07}}', '{{"2026-12-03 00:00:00"}}', ARRAY[ARRAY['\x00ff'::bytea]], '{{1.5}}')sql",
      "NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(/*json=*/true, columns, [](const std::string&) { return false; }, rows, "Nested",
                 {"m_date", "[null,null]"}, connector_keys);
}

TEST_F(DebeziumSideBySide, MultiDimensionalArraysUnderIsostringHexAndDoubleAreOneNullPerInnerArrayAsInDebezium) {
  CompareMultiDimensionalArraysUnderModes(
      "time.precision.mode=isostring\nbinary.handling.mode=hex\ndecimal.handling.mode=double\n");
}

TEST_F(DebeziumSideBySide, MultiDimensionalArraysUnderConnectBase64AndStringAreOneNullPerInnerArrayAsInDebezium) {
  CompareMultiDimensionalArraysUnderModes(
      "time.precision.mode=connect\nbinary.handling.mode=base64\ndecimal.handling.mode=string\n");
}

TEST_F(DebeziumSideBySide, MultiDimensionalArraysThroughStringConvertersAreOneNullPerInnerArrayAsInDebezium) {
  CompareMultiDimensionalArrays(/*json=*/false);
}

TEST_F(DebeziumSideBySide, MultiDimensionalArraysThroughJsonConvertersWithSchemasAreOneNullPerInnerArrayAsInDebezium) {
  CompareMultiDimensionalArrays(/*json=*/true);
}

// Columns of domain types: over text (with a CHECK), integer, numeric(10,2), timestamp(3), timestamptz(0), uuid,
// a NOT NULL domain over boolean, and a domain over a domain with a column default. Debezium reads each as its root
// type under the domain's modifier (a scale of 2, milliseconds), a NOT NULL domain's column as not optional, and no
// default of a domain column (its default value converter knows the type by the domain's name): a NULL stays NULL.
// In headers through SimpleHeaderConverter, and in headers and envelope fields through JsonConverter with schemas.
void DebeziumSideBySide::CompareDomains(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE DOMAIN d_email AS text CHECK (VALUE LIKE '%@%'); "
                        "CREATE DOMAIN d_contact AS d_email; "
                        "CREATE DOMAIN d_count AS integer CHECK (VALUE >= 0); "
                        "CREATE DOMAIN d_amount AS numeric(10,2); "
                        "CREATE DOMAIN d_ts AS timestamp(3); "
                        "CREATE DOMAIN d_tstz AS timestamptz(0); "
                        "CREATE DOMAIN d_ref AS uuid; "
                        "CREATE DOMAIN d_flag AS boolean NOT NULL",
                        db_)
                  .ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_email", "d_email"}, {"h_count", "d_count"}, {"h_amount", "d_amount"}, {"h_ts", "d_ts"},
      {"h_tstz", "d_tstz"},   {"h_ref", "d_ref"},     {"h_flag", "d_flag"},     {"h_contact", "d_contact DEFAULT 'x@y'"},
      {"e_amount", "d_amount"}, {"e_ts", "d_ts"}};
  const std::vector<std::string> rows = {
      "'a@b.example', 7, 12.5, '2026-12-03 13:45:07.123456', '2026-12-03 13:45:07.6+02', "
      "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true, 'c@d', -0.01, '1960-01-01 00:00:00.0005'",
      "'\"q\"@x', 0, 99999999.99, '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', "
      "'00000000-0000-0000-0000-000000000000', false, 'e@f', 0, '2026-12-03 23:59:59.9999'",
      "NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, NULL, NULL"};
  CompareColumns(json, columns, [json](const std::string& name) { return json && name.starts_with("e_"); }, rows,
                 "Domained", {"h_amount", json ? R"("scale":"2")" : "12.50"});
}

TEST_F(DebeziumSideBySide, DomainColumnsInHeadersAreTheirRootTypesAsDebeziumWritesThem) {
  CompareDomains(/*json=*/false);
}

TEST_F(DebeziumSideBySide, DomainColumnsThroughJsonConvertersWithSchemasAreTheirRootTypesAsDebeziumWritesThem) {
  CompareDomains(/*json=*/true);
}

// money (a Decimal of scale 2 that Debezium parses from the server's text of it): in headers through
// SimpleHeaderConverter, and in headers and an envelope field through JsonConverter with schemas; negatives, grouping,
// zero, the extremes and NULL.
void DebeziumSideBySide::CompareMoney(bool json) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType,m_header:header" +
                      std::string(json ? ",m_field:envelope" : ",m_field:header") + "\n",
                  json ? SideBySide::kJsonConverters : SideBySide::kStringConverters);
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns({{"m_header", "money"}, {"m_field", "money"}}, &names));
  ASSERT_TRUE(side.StartDebezium());
  const std::vector<std::string> rows = {"1234.56, -0.5", "0, -1234567.89", "'92233720368547758.07', "
                                         "'-92233720368547758.08'", "NULL, 12.3"};
  ASSERT_TRUE(InsertKeyedRows(rows, "Priced", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  EXPECT_GE(CountHeadersContaining(debezium, "m_header", json ? R"("scale":"2")" : "1234.56"), 1u) << "Debezium no longer writes money as a Decimal of scale 2: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

TEST_F(DebeziumSideBySide, MoneyInHeadersGivesDebeziumsDecimals) { CompareMoney(/*json=*/false); }

TEST_F(DebeziumSideBySide, MoneyThroughJsonConvertersWithSchemasGivesDebeziumsDecimals) { CompareMoney(/*json=*/true); }

// bit and varbit: Debezium's Bits (bit(n), varbit(n) for n > 1: the string as a little-endian number, as few bytes as
// it takes) or a boolean (bit(1), varbit(1), varbit without a length), in headers through SimpleHeaderConverter and
// in headers and envelope fields through JsonConverter with schemas.
void DebeziumSideBySide::CompareBits(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"b1", "bit(1)"},         {"b5", "bit(5)"}, {"b12", "bit(12)"}, {"vb20", "varbit(20)"},
      {"vb", "varbit"},         {"b8", "bit(8)"}};
  const std::vector<std::string> rows = {"'1', '10110', '000100000001', '101', '0001', '00000000'",
                                         "'0', '00000', '111111111111', '', '1', '11111111'",
                                         "NULL, NULL, NULL, NULL, NULL, NULL"};
  // "Fg==": bit(5) '10110' as the byte 0x16.
  CompareColumns(
      json, columns, [json](const std::string& name) { return json && (name == "b12" || name == "vb"); }, rows,
      "Bitten", {"b5", "Fg=="});
}

TEST_F(DebeziumSideBySide, BitStringsInHeadersGiveDebeziumsBitsAndBooleans) { CompareBits(/*json=*/false); }

TEST_F(DebeziumSideBySide, BitStringsThroughJsonConvertersWithSchemasGiveDebeziumsBitsAndBooleans) {
  CompareBits(/*json=*/true);
}

// point: Debezium's io.debezium.data.geometry.Point struct (x, y, the well-known binary, srid null), printed
// {"x":…,"y":…,"wkb":"…","srid":null} by SimpleHeaderConverter and written by JsonConverter with schemas in headers
// and an envelope field; exact doubles, negative zero, the extremes, NaN and the infinities, NULL, and a column with a
// default, which Debezium does not read for a point.
void DebeziumSideBySide::ComparePoints(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"p_header", "point"}, {"p_field", "point"}, {"p_dflt", "point NOT NULL DEFAULT '(1,2)'"}};
  const std::vector<std::string> rows = {"'(1.5,2)', '(-0,1e300)', '(3,4)'",
                                         "'(NaN,Infinity)', '(-1.7976931348623157e308,5e-324)', '(0.1,-Infinity)'",
                                         "NULL, NULL, '(-7.25,123456789.125)'"};
  CompareColumns(
      json, columns, [json](const std::string& name) { return json && name == "p_field"; }, rows, "Pointed",
      {"p_header", json ? "io.debezium.data.geometry.Point" : R"({"x":1.5,"y":2.0,"wkb":)"});
}

TEST_F(DebeziumSideBySide, PointsInHeadersGiveDebeziumsPointStructs) { ComparePoints(/*json=*/false); }

// PostGIS's geometry and geography (found by their types' names, as Debezium's TypeRegistry finds them): Debezium's
// Geometry and Geography structs of the EWKB and its SRID, in headers through SimpleHeaderConverter and in headers and
// envelope fields through JsonConverter with schemas (Geometry's schema optional even for a NOT NULL column,
// Geography's not); points, lines, polygons, collections, empty ones, Z coordinates, with and without an SRID, a
// typmod-constrained column, NULL, and a column with a default, which Debezium has no parser for; arrays of both
// (their elements separated by ':' in PostgreSQL's text), with NULL elements, empty and NULL. PostGIS comes with
// Debian's PostgreSQL 15 (scripts/install-deps.sh); against a server built without it (the version matrix's 17 and
// 18) the test is skipped.
void DebeziumSideBySide::ComparePostgis(bool json) {
  CreateExtensionOn15("postgis");
  if (IsSkipped() || HasFailure()) return;
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"g_plain", "geometry"},
      {"g_srid", "geometry(Point,4326)"},
      {"g_geog", "geography"},
      {"g_z", "geometry"},
      {"e_geom", "geometry NOT NULL DEFAULT 'POINT(0 0)'"},
      {"e_geog", "geography NOT NULL"},
      {"g_arr", "geometry[]"},
      {"e_garr", "geography[]"}};
  const std::vector<std::string> rows = {
      "'POINT(1 2)', 'SRID=4326;POINT(13.4 52.5)', 'POINT(-71.06 42.36)', 'POINT Z (1 2 3)', "
      "'POLYGON((0 0,1 0,1 1,0 1,0 0))', 'LINESTRING(0 0,1 1)', "
      "ARRAY['POINT(1 2)'::geometry, NULL, 'SRID=4326;LINESTRING(0 0,1 1)'::geometry], "
      "ARRAY['POINT(-71.06 42.36)'::geography, NULL]",
      "'LINESTRING(0 0,1 1,2 1)', 'SRID=4326;POINT(-0.5 1e-7)', 'POLYGON((0 0,1 0,1 1,0 1,0 0))', "
      "'GEOMETRYCOLLECTION EMPTY', 'SRID=3857;MULTIPOINT((1 2),(3 4))', 'POINT(3 4)', '{}', "
      "ARRAY['SRID=4326;POINT(1 1)'::geography]",
      "NULL, NULL, NULL, 'SRID=4326;GEOMETRYCOLLECTION(POINT(1 1),LINESTRING EMPTY)', 'POINT EMPTY', "
      "'SRID=4269;POINT(1 2)', NULL, NULL"};
  CompareColumns(
      json, columns, [json](const std::string& name) { return json && name.starts_with("e_"); }, rows, "Located",
      {"g_srid", json ? "io.debezium.data.geometry.Geometry" : R"("srid":4326})"});
}

TEST_F(DebeziumSideBySide, PostgisColumnsInHeadersGiveDebeziumsGeometryStructs) { ComparePostgis(/*json=*/false); }

TEST_F(DebeziumSideBySide, PostgisColumnsThroughJsonConvertersWithSchemasGiveDebeziumsGeometryStructs) {
  ComparePostgis(/*json=*/true);
}

// The contrib extensions' types Debezium's TypeRegistry finds by name and reads as strings: citext, ltree (a string
// named io.debezium.data.Ltree) and isbn, in headers through SimpleHeaderConverter and in headers and envelope fields
// through JsonConverter with schemas; with a default, which Debezium has no parser for.
void DebeziumSideBySide::CompareExtensionTypes(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE EXTENSION citext; CREATE EXTENSION ltree; CREATE EXTENSION isn", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"x_ci", "citext"}, {"x_tree", "ltree"}, {"x_isbn", "isbn"}, {"e_tree", "ltree"},
      {"e_ci", "citext NOT NULL DEFAULT 'Dflt'"}};
  const std::vector<std::string> rows = {
      "'MiXeD \"Case\" é', 'Top.Science.Astronomy', '978-0-393-04002-9', 'a.b_c', 'x'",
      "'', 'a', '0-393-04002-X', '', ''", "NULL, NULL, NULL, NULL, 'y'"};
  CompareColumns(
      json, columns, [json](const std::string& name) { return json && name.starts_with("e_"); }, rows, "Extended",
      {"x_tree", json ? "io.debezium.data.Ltree" : "Top.Science.Astronomy"});
}

// Arrays of an enum: lists of labels (quoted by SimpleHeaderConverter; [a, b] by Struct.toString in an envelope field
// under StringConverter), and with JsonConverter's schemas arrays of the enum's required Enum strings. Empty, quoted
// and NULL arrays; a NULL element is left out (Debezium's converter fails on it:
// ValuesDebeziumsConverterFailsOnAreNullUnderWarn...).
void DebeziumSideBySide::CompareEnumArrays(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE TYPE order_flag AS ENUM ('urgent', 'gift', 'it''s \"fragile\"', 'a,b')", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {{"f_header", "order_flag[]"},
                                                                    {"e_field", "order_flag[]"}};
  const std::vector<std::string> rows = {R"('{urgent,gift}', '{"it''s \"fragile\""}')", R"('{}', '{"a,b",urgent}')",
                                         "NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Flagged",
      {"f_header", json ? "io.debezium.data.Enum" : R"(["urgent","gift"])"});
}

TEST_F(DebeziumSideBySide, ArraysOfAnEnumThroughStringConvertersAreDebeziums) { CompareEnumArrays(/*json=*/false); }

// Values Debezium's converter fails on, under its default event.converting.failure.handling.mode (warn): an enum
// array's NULL element (its elements are required), an ltree[]'s NULL element (the converter calls its toString) and,
// under time.precision.mode=nanoseconds, a timestamp past 2262 (a long of nanoseconds overflows: Debezium's converter
// gives null, and an array's element is null), an isbn[]'s NULL
// element (required strings too; its other values are lists of the elements' text, an ISBN-13 printed as PostgreSQL
// prints it, in its ISBN-10 form). Debezium leaves the field unset, so the header or envelope field is null; the relay
// writes null too.
void DebeziumSideBySide::CompareConversionFailures(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE TYPE order_flag AS ENUM ('urgent', 'gift'); CREATE EXTENSION ltree; "
                        "CREATE EXTENSION isn",
                        db_)
                  .ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"f_header", "order_flag[]"}, {"e_field", "order_flag[]"}, {"t_tree", "ltree[]"}, {"ts_nanos", "timestamp"},
      {"i_isbn", "isbn[]"},         {"e_isbn", "isbn[]"},         {"a_nanos", "timestamp[]"}, {"e_ananos", "timestamp[]"}};
  const std::vector<std::string> rows = {
      "'{urgent,NULL}', '{NULL}', '{Top.Science,NULL}', '2263-01-01 00:00:00', '{978-0-393-04002-9}', "
      "'{0-393-04002-X,NULL}', '{\"2026-12-03 00:00:00\",\"2263-01-01 00:00:00\"}', '{\"2300-01-01 00:00:00\"}'",
      "'{urgent}', '{gift}', '{a.b}', '2026-12-03 13:45:07.123456', '{}', '{}', '{\"2026-12-03 13:45:07.123456\",NULL}', "
      "'{}'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Failed",
      {"ts_nanos", "1796305507123456000"}, "time.precision.mode=nanoseconds\n");
}

TEST_F(DebeziumSideBySide, ValuesDebeziumsConverterFailsOnAreNullUnderWarnThroughStringConverters) {
  CompareConversionFailures(/*json=*/false);
}

TEST_F(DebeziumSideBySide, ValuesDebeziumsConverterFailsOnAreNullUnderWarnThroughJsonConvertersWithSchemas) {
  CompareConversionFailures(/*json=*/true);
}

// A timestamp past 2262 under time.precision.mode=nanoseconds is one Debezium's converter catches itself (it logs a
// warning and gives null), so even under event.converting.failure.handling.mode=fail the column is null and an array's
// element is a null element: in headers and an envelope field, through JsonConverters with schemas.
TEST_F(DebeziumSideBySide, ANanosecondOverflowIsNullEvenUnderFailThroughJsonConvertersWithSchemas) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"ts_nanos", "timestamp"}, {"a_nanos", "timestamp[]"}, {"e_nanos", "timestamp"}, {"e_ananos", "timestamp[]"}};
  const std::vector<std::string> rows = {
      R"('2263-01-01 00:00:00', '{"2026-12-03 00:00:00","2263-01-01 00:00:00"}', '1600-01-01 00:00:00', )"
      R"('{"1600-01-01 00:00:00",NULL}')",
      R"('2026-12-03 13:45:07.123456', '{}', '2026-12-03 00:00:00', '{"2026-12-03 00:00:00"}')",
      "NULL, NULL, NULL, NULL"};
  CompareColumns(
      /*json=*/true, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Overflowed",
      {"ts_nanos", "1796305507123456000"},
      "time.precision.mode=nanoseconds\nevent.converting.failure.handling.mode=fail\n");
}

TEST_F(DebeziumSideBySide, ArraysOfAnEnumThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareEnumArrays(/*json=*/true);
}

// hstore (hstore.handling.mode=json): Debezium's JSON text of pgjdbc's HashMap of it, keys in the map's iteration
// order: escapes, NULL values, non-ASCII and characters beyond U+FFFF, an empty hstore, NULL, and 40 and 200 keys
// (the table resized four times); in headers and envelope fields.
void DebeziumSideBySide::CompareHstores(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE EXTENSION hstore", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {{"h_store", "hstore"}, {"e_store", "hstore"}};
  const auto many = [](int n) {
    return "(SELECT hstore(array_agg('key' || i), array_agg(i::text)) FROM generate_series(1, " + std::to_string(n) +
           ") i)";
  };
  const std::vector<std::string> rows = {
      R"('a=>1, b=>NULL, "key with \"q\""=>"v\\x"', 'z=>1, "é"=>2, "😀x"=>3, "日本"=>"4 5"')",
      many(40) + ", " + many(200), "'', NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Stored",
      {"h_store", json ? "io.debezium.data.Json" : R"("key with \"q\"":"v\\x")"});
}

TEST_F(DebeziumSideBySide, HstoresThroughStringConvertersAreDebeziumsJsonOfAHashMap) { CompareHstores(/*json=*/false); }

TEST_F(DebeziumSideBySide, HstoresThroughJsonConvertersWithSchemasAreDebeziumsJsonOfAHashMap) {
  CompareHstores(/*json=*/true);
}

// Arrays of the contrib extensions' types (_citext, _ltree, _hstore by name in Debezium's TypeRegistry): lists of each
// element's value, in headers and envelope fields, through StringConverters (SimpleHeaderConverter's ["a","b"],
// Struct.toString's [a, b]) and JsonConverters with schemas; quoted, escaped, empty and NULL elements (but in an
// ltree[], whose NULL element Debezium's converter fails on: ValuesDebeziumsConverterFailsOnAreNullUnderWarn...),
// hstores with NULL values and quotes, empty and NULL arrays. (An isbn[]: CompareConversionFailures.)
void DebeziumSideBySide::CompareExtensionArrays(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE EXTENSION citext; CREATE EXTENSION ltree; CREATE EXTENSION hstore", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"a_ci", "citext[]"}, {"a_tree", "ltree[]"},   {"a_store", "hstore[]"},
      {"e_ci", "citext[]"}, {"e_store", "hstore[]"}, {"e_tree", "ltree[]"}};
  const std::vector<std::string> rows = {
      R"('{MiXeD,"b c","q\"x",NULL,""}', '{Top.Science,a.b_c}', )"
      R"(ARRAY['a=>1, b=>NULL'::hstore, NULL, '"k,1"=>"v}"'::hstore], '{x,"Y z"}', ARRAY['z=>1'::hstore, ''::hstore], )"
      R"('{a}')",
      R"('{}', '{}', '{}', '{""}', '{}', '{}')", "NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Listed",
      {"a_tree", json ? "io.debezium.data.Ltree" : R"(["Top.Science","a.b_c"])"});
}

// pgvector's vector, halfvec and sparsevec: Debezium's DoubleVector and FloatVector lists and its SparseDoubleVector
// struct (a HashMap of index to value, in the map's order), in headers and envelope fields, through StringConverters
// and JsonConverters with schemas; exponents, negative zero, half precision's rounding, empty sparse vectors, indices
// that share a bucket of the map, a NOT NULL column and NULL. pgvector comes with the install script for Debian's
// PostgreSQL 15 (built from Debian trixie's source package); against a server without it (the version matrix's 17
// and 18) the test is skipped.
void DebeziumSideBySide::ComparePgvector(bool json) {
  CreateExtensionOn15("vector");
  if (IsSkipped() || HasFailure()) return;
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"v_vec", "vector(4)"},   {"v_half", "halfvec(3)"}, {"v_sparse", "sparsevec(40)"},
      {"e_vec", "vector"},      {"e_sparse", "sparsevec"}, {"e_half", "halfvec NOT NULL"}};
  const std::vector<std::string> rows = {
      "'[1,2.5,-3e-05,100000000]', '[1,0.1,-0]', '{1:1.5,3:2,17:-1}/40', '[0.1,1e20]', '{}/5', '[65504,-0.5]'",
      "'[0,0,0,0]', '[0.333,2,3]', '{}/40', '[-1]', '{1:1,8:2,9:3,16:4,17:5}/30', '[1e-3]'",
      "NULL, NULL, NULL, NULL, NULL, '[0,0]'"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Embedded",
      {"v_sparse", json ? "io.debezium.data.SparseDoubleVector" : R"({"dimensions":40,"vector":{1:1.5,17:-1.0,3:2.0}})"});
}

TEST_F(DebeziumSideBySide, PgvectorColumnsThroughStringConvertersGiveDebeziumsVectors) {
  ComparePgvector(/*json=*/false);
}

TEST_F(DebeziumSideBySide, PgvectorColumnsThroughJsonConvertersWithSchemasGiveDebeziumsVectors) {
  ComparePgvector(/*json=*/true);
}

// column.propagate.source.type and datatype.propagate.source.type through JsonConverters with schemas: the selected
// columns' schemas (the key's, the payload's, headers' and envelope fields') carry Debezium's source type parameters
// after their own (a Decimal's, an Enum's, a struct's doc), for varchar, numeric with and without a scale, timestamptz
// and time with a precision, an enum, a domain, int4, an array, point, bit and interval; a column neither list
// selects (the type header, x_plain) has none, one only the type list selects (x_num) has them. Comments on the
// columns (include.schema.comments=true) give no doc: Debezium builds a streamed change's columns from the Relation.
TEST_F(DebeziumSideBySide, PropagatedSourceTypesThroughJsonConvertersWithSchemasAreDebeziums) {
  ASSERT_TRUE(pg_->Exec("CREATE TYPE mood AS ENUM ('sad', 'ok'); CREATE DOMAIN d_amount AS numeric(10,2)", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_vc", "varchar(20)"}, {"h_num", "numeric(10,2)"}, {"x_num", "numeric(5,1)"}, {"x_plain", "text"},
      {"h_ts", "timestamptz(3)"}, {"h_mood", "mood"}, {"h_dom", "d_amount"}, {"e_int", "int4 NOT NULL DEFAULT 0"},
      {"e_arr", "varchar(8)[]"}, {"e_pt", "point"}, {"e_n", "numeric"}, {"e_time", "time(3)"}, {"e_bits", "bit(5)"},
      {"e_iv", "interval"}};
  std::string placement = "type:header:eventType";
  for (const auto& [name, type] : columns) placement += "," + name + (name.starts_with("e_") ? ":envelope" : ":header");
  // A properties file reads \\ as one backslash.
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=" + placement + "\n" +
                      "column.propagate.source.type=public\\\\.outbox\\\\.(payload|aggregateid|id|h_.*|e_.*)\n"
                      "datatype.propagate.source.type=.+\\\\.NUMERIC, .+\\\\.TIMESTAMPTZ\n"
                      "include.schema.comments=true\n",
                  SideBySide::kJsonConverters);
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns(columns, &names));
  ASSERT_TRUE(pg_->Exec("COMMENT ON COLUMN outbox.payload IS 'the event'; COMMENT ON COLUMN outbox.h_vc IS 'a kind'",
                        db_).ok());
  ASSERT_TRUE(side.StartDebezium());
  const std::vector<std::string> rows = {
      "'abc', 12.5, 3.5, 'plain', '2026-12-03 13:45:07.123+00', 'ok', 9.99, 7, '{a,b}', '(1,2)', 1.50, "
      "'13:45:07.123', B'10101', '1 day 02:00'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL"};
  ASSERT_TRUE(InsertKeyedRows(rows, "Propagated", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  EXPECT_GE(CountHeadersContaining(debezium, "h_vc", R"("__debezium.source.column.length":"20")"), 1u)
      << "Debezium no longer propagates a varchar's length: the test's premise changed";
  EXPECT_EQ(CountHeadersContaining(debezium, "eventType", "__debezium.source"), 0u)
      << "Debezium propagates the source type of a column no pattern selects: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

// Column exclude lists and masks that leave the router's columns alone: an excluded column the router does not read
// (junk), a masked one (junk2), and a placed header under table.field.additional.missing=ignore (h_gone), which
// Debezium then leaves out, as the relay does; the other header (h_keep) stays. Through StringConverters.
TEST_F(DebeziumSideBySide, ColumnExcludeListsAndMasksBesideTheRoutersColumnsAreDebeziums) {
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType,h_keep:header,"
                  "h_gone:header\n"
                  "transforms.outbox.table.field.additional.missing=ignore\n"
                  "column.exclude.list=public\\\\.outbox\\\\.(h_gone|junk)\n"
                  "column.mask.with.4.chars=public\\\\.outbox\\\\.junk2\n");
  ASSERT_TRUE(side.Init());
  std::string names;
  ASSERT_TRUE(AddColumns({{"h_keep", "text"}, {"h_gone", "text"}, {"junk", "text"}, {"junk2", "text"}}, &names));
  ASSERT_TRUE(side.StartDebezium());
  const std::vector<std::string> rows = {"'kept', 'gone', 'j', 'secret'", "NULL, 'gone', NULL, NULL"};
  ASSERT_TRUE(InsertKeyedRows(rows, "Excluded", names));
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  EXPECT_GE(CountHeadersContaining(debezium, "h_keep", "kept"), 1u) << "Debezium's h_keep header is gone: the test's premise changed";
  EXPECT_EQ(CountHeadersContaining(debezium, "h_gone", ""), 0u)
      << "Debezium writes the header of an excluded column: the test's premise changed";
  ExpectSameRecords(relayed, debezium);
}

// Columns of the types Debezium leaves out of its change events (no schema in its PostgresValueConverter under
// include.unknown.datatypes=false): geometric types but point, arrays of money, name, interval, varbit, xml, point and
// refcursor, and the types pgjdbc knows no SQL type of (tid, xid, xid8, cid, pg_lsn, snapshots, tsquery, jsonpath,
// aclitem, the reg* types, multiranges) and their arrays, placed as headers and envelope fields under
// table.field.additional.missing=ignore: Debezium's router finds no such field and writes none, nor does the relay.
// Beside them "char", tsvector and their arrays, which Debezium writes as strings (a Tsvector's schema is named).
void DebeziumSideBySide::CompareLeftOutTypes(bool json) {
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},
      {"g_lseg", "lseg", "'[(1,2),(3,4)]'"}, {"g_path", "path", "'((1,2),(3,4))'"},
      {"g_box", "box", "'((1,2),(3,4))'"}, {"g_polygon", "polygon", "'((1,2),(3,4),(5,6))'"},
      {"g_line", "line", "'{1,2,3}'"}, {"g_circle", "circle", "'<(1,2),3>'"},
      {"ga_lseg", "lseg[]", R"x('{"[(1,2),(3,4)]"}')x"}, {"ga_path", "path[]", R"x('{"((1,2),(3,4))"}')x"},
      {"ga_box", "box[]", R"x('{"((1,2),(3,4))"}')x"}, {"ga_polygon", "polygon[]", R"x('{"((1,2),(3,4),(5,6))"}')x"},
      {"ga_line", "line[]", R"x('{"{1,2,3}"}')x"}, {"ga_circle", "circle[]", R"x('{"<(1,2),3>"}')x"},
      {"a_money", "money[]", "'{1.5,NULL}'"}, {"a_name", "name[]", "'{a,b}'"},
      {"a_interval", "interval[]", "'{1 day,NULL}'"}, {"a_varbit", "varbit[]", "'{101,NULL}'"},
      {"a_xml", "xml[]", "ARRAY['<a/>'::xml]"}, {"a_point", "point[]", R"x('{"(1,2)"}')x"},
      {"a_refcursor", "refcursor[]", "'{c1}'"},
      {"t_tid", "tid", "'(1,2)'"}, {"t_xid", "xid", "'5'"}, {"t_cid", "cid", "'7'"}, {"t_xid8", "xid8", "'9'"},
      {"t_lsn", "pg_lsn", "'16/B374D848'"}, {"ta_tid", "tid[]", R"x('{"(1,2)"}')x"}, {"ta_xid", "xid[]", "'{5}'"},
      {"ta_cid", "cid[]", "'{7}'"}, {"ta_xid8", "xid8[]", "'{9}'"}, {"ta_lsn", "pg_lsn[]", "'{16/B374D848}'"},
      {"s_txid", "txid_snapshot", "'10:20:10,14,15'"}, {"s_pg", "pg_snapshot", "'10:20:10,14,15'"},
      {"sa_txid", "txid_snapshot[]", R"x('{"10:20:10,14,15"}')x"}, {"sa_pg", "pg_snapshot[]", R"x('{"10:20:"}')x"},
      {"q_tsquery", "tsquery", "'a & b'"}, {"q_jsonpath", "jsonpath", "'$.a'"},
      {"q_acl", "aclitem", "'postgres=arwdDxt/postgres'"}, {"qa_tsquery", "tsquery[]", R"x('{"a & b"}')x"},
      {"qa_jsonpath", "jsonpath[]", R"x('{"$.a"}')x"}, {"qa_acl", "aclitem[]", "'{postgres=r/postgres}'"},
      {"r_proc", "regproc", "'now'"}, {"r_procedure", "regprocedure", "'now()'"}, {"r_oper", "regoper", "'||/'"},
      {"r_operator", "regoperator", "'+(integer,integer)'"}, {"r_class", "regclass", "'pg_class'"},
      {"r_type", "regtype", "'integer'"}, {"r_config", "regconfig", "'english'"},
      {"r_dictionary", "regdictionary", "'simple'"}, {"r_namespace", "regnamespace", "'public'"},
      {"r_role", "regrole", "'postgres'"}, {"r_collation", "regcollation", R"x('"C"')x"},
      {"ra_proc", "regproc[]", "'{now}'"}, {"ra_procedure", "regprocedure[]", R"x('{"now()"}')x"},
      {"ra_oper", "regoper[]", "'{||/}'"}, {"ra_operator", "regoperator[]", R"x('{"+(integer,integer)"}')x"},
      {"ra_class", "regclass[]", "'{pg_class}'"}, {"ra_type", "regtype[]", "'{integer}'"},
      {"ra_config", "regconfig[]", "'{english}'"}, {"ra_dictionary", "regdictionary[]", "'{simple}'"},
      {"ra_namespace", "regnamespace[]", "'{public}'"}, {"ra_role", "regrole[]", "'{postgres}'"},
      {"ra_collation", "regcollation[]", R"x(ARRAY['"C"'::regcollation])x"},
      {"m_int4", "int4multirange", "'{[1,3)}'"}, {"m_num", "nummultirange", "'{[1.5,2)}'"},
      {"m_ts", "tsmultirange", "'{[2020-01-01,2020-02-01)}'"},
      {"m_tstz", "tstzmultirange", "'{[2020-01-01 00:00+00,2020-02-01 00:00+00)}'"},
      {"m_date", "datemultirange", "'{[2020-01-01,2020-02-01)}'"}, {"m_int8", "int8multirange", "'{[1,3)}'"},
      {"ma_int4", "int4multirange[]", "ARRAY['{[1,3)}'::int4multirange]"},
      {"ma_num", "nummultirange[]", "ARRAY['{[1.5,2)}'::nummultirange]"},
      {"ma_ts", "tsmultirange[]", "ARRAY['{[2020-01-01,2020-02-01)}'::tsmultirange]"},
      {"ma_tstz", "tstzmultirange[]", "ARRAY['{[2020-01-01 00:00+00,2020-02-01 00:00+00)}'::tstzmultirange]"},
      {"ma_date", "datemultirange[]", "ARRAY['{[2020-01-01,2020-02-01)}'::datemultirange]"},
      {"ma_int8", "int8multirange[]", "ARRAY['{[1,3)}'::int8multirange]"},
      {"e_box", "box", "'((1,2),(3,4))'"}, {"e_lsn", "pg_lsn", "'0/1'"},
      {"c_char", "\"char\"", "'x'"}, {"c_chars", "\"char\"[]", "'{x,NULL,\"\"}'"},
      {"c_vector", "tsvector", "'a:1 b:2'"}, {"c_vectors", "tsvector[]", R"x('{"a:1 b",NULL}')x"},
      {"e_char", "\"char\"", "'y'"}, {"e_vector", "tsvector", "'fat:2,4 cat:3'"}};
  CompareTypedRows(json, typed, "LeftOut", {"c_vector", "'a':1 'b':2"},
                   "transforms.outbox.table.field.additional.missing=ignore\n");
}

// User-defined types Debezium has no schema for: a composite type, a range type, the extensions' cube and seg (base
// types its TypeRegistry does not know), arrays of these, the range's multirange, and arrays of domains (Debezium has
// a schema for a domain, none for an array of one). Under
// table.field.additional.missing=ignore Debezium leaves them out; under include.unknown.datatypes=true it writes
// the bytes of their PostgreSQL text (arrays: lists of them; a composite's elements unquoted as pgjdbc's parser gives
// them), in headers and (through JsonConverters with schemas) envelope fields. An enum beside them stays.
void DebeziumSideBySide::CompareUserDefinedTypes(bool unknown_included) {
  CreateExtensionOn15("cube");
  if (IsSkipped() || HasFailure()) return;
  CreateExtensionOn15("seg");
  ASSERT_TRUE(pg_->Exec("CREATE TYPE pair AS (a int, b text); CREATE TYPE floatrange AS RANGE (subtype = float8); "
                        "CREATE TYPE mood AS ENUM ('sad', 'ok'); CREATE DOMAIN d_count AS integer CHECK (VALUE >= 0); "
                        "CREATE DOMAIN d_email AS text",
                        db_)
                  .ok());
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},           {"u_pair", "pair", "ROW(1, 'x y')::pair"},
      {"u_range", "floatrange", "'[1.5,2)'"}, {"u_cube", "cube", "'(1,2),(3,4)'"},
      {"u_seg", "seg", "'1 .. 2'"},           {"ua_pair", "pair[]", R"x(ARRAY[ROW(1,'x')::pair, ROW(2,'a,"b')::pair])x"},
      {"ua_range", "floatrange[]", "ARRAY['[1,2)'::floatrange]"}, {"ua_cube", "cube[]", "ARRAY['(1,2)'::cube]"},
      {"u_multi", "floatmultirange", "'{[1,2), [3,4)}'"}, {"u_mood", "mood", "'ok'"},
      {"e_pair", "pair", "ROW(3, NULL)::pair"}, {"e_mood", "mood", "'sad'"},
      {"da_count", "d_count[]", "'{1,2}'"},   {"da_email", "d_email[]", "'{a@b,NULL}'"},
      {"e_counts", "d_count[]", "'{3}'"}};
  CompareTypedRows(/*json=*/unknown_included, typed, "UserTyped", {"h_keep", "kept"},
                   std::string("transforms.outbox.table.field.additional.missing=ignore\n") +
                       (unknown_included ? "include.unknown.datatypes=true\n" : ""));
}

// pgvector's arrays, which the relay refused: a vector[] is a list of required DoubleVectors, a halfvec[] of
// FloatVectors ([[1.0,2.0],[3.0,4.5]]), and a sparsevec[] has the schema of a list of required SparseDoubleVectors
// but is always null (Debezium loses it), in headers and the envelope; with a default too (none in Debezium's schema).
void DebeziumSideBySide::CompareVectorArrays(bool json) {
  CreateExtensionOn15("vector");
  if (IsSkipped() || HasFailure()) return;
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"}, {"va_vec", "vector[]", R"x(ARRAY['[1,2]'::vector, '[3,4.5]'::vector])x"},
      {"va_half", "halfvec[]", R"x(ARRAY['[1,2]'::halfvec])x"}, {"va_sparse", "sparsevec[]", R"x(ARRAY['{1:1.5}/3'::sparsevec])x"},
      {"e_vecs", "vector[]", R"x(ARRAY['[-0.5,1e20]'::vector])x"}, {"e_halfs", "halfvec[]", R"x('{}')x"},
      {"e_sparse_d", "sparsevec[] DEFAULT ARRAY['{1:1}/2'::sparsevec]", R"x(ARRAY['{1:2}/2'::sparsevec])x"}};
  CompareTypedRows(json, typed, "VecArr", {"va_vec", "[[1.0,2.0],[3.0,4.5]]"}, "");
}

// PostgreSQL's infinities, which Debezium writes as sentinels (a timestamp's microseconds of pgjdbc's
// DATE_POSITIVE_INFINITY, a date's epoch day of -5877611-06-21, a timestamptz's text), a timestamp[]'s elements as a
// timestamp's, a date[]'s and a timestamptz[]'s -infinity as pgjdbc's java.sql types make them in the JVM's calendar
// (UTC here); and the infinite defaults (the second row): a timestamp(3)'s and a timestamptz's, which Debezium's
// converters overflow on, so that their schemas have no default and a NULL stays null, and a longer timestamp's and a
// date's, whose LocalDateTime.MAX and MIN Debezium saturates and cuts.
void DebeziumSideBySide::CompareInfinities(bool json) {
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},
      {"h_ts", "timestamp", "'infinity'"},
      {"h_ts3", "timestamp(3)", "'-infinity'"},
      {"h_d", "date", "'-infinity'"},
      {"h_tz", "timestamptz(2)", "'infinity'"},
      {"h_tsa", "timestamp[]", "ARRAY['infinity'::timestamp, '-infinity', '2024-01-01']"},
      {"h_ts3a", "timestamp(3)[]", "ARRAY['infinity'::timestamp, '-infinity', '2024-01-01']"},
      {"h_da", "date[]", "ARRAY['infinity'::date, '-infinity', '2024-01-01']"},
      {"h_tza", "timestamptz[]", "ARRAY['infinity'::timestamptz, '-infinity', '2024-01-01 00:00:00+00']"},
      {"h_tz0a", "timestamptz(0)[]", "ARRAY['-infinity'::timestamptz]"},
      {"h_dp", "date DEFAULT 'infinity'", "'2024-01-01'"},
      {"h_dm", "date DEFAULT '-infinity'", "'2024-01-02'"},
      {"h_tsp", "timestamp DEFAULT 'infinity'", "'2024-01-01'"},
      {"h_ts4m", "timestamp(4) DEFAULT '-infinity'", "'2024-01-01'"},
      {"e_ts", "timestamp", "'-infinity'"},
      {"e_ts3", "timestamp(3) DEFAULT 'infinity'", "'infinity'"},
      {"e_tz", "timestamptz DEFAULT '-infinity'", "'-infinity'"},
      {"e_d", "date", "'infinity'"},
      {"e_da", "date[]", "ARRAY['-infinity'::date, 'infinity']"},
      {"e_tz3a", "timestamptz(3)[]", "ARRAY['infinity'::timestamptz, '-infinity']"},
      {"e_dp", "date DEFAULT 'infinity'", "'2024-01-01'"},
      {"e_tsm", "timestamp DEFAULT '-infinity'", "'2024-01-01'"}};
  CompareTypedRows(json, typed, "Infinite", {"h_ts", "9223372036825200000"}, "");
}

// Under the other time.precision.modes Debezium reads the infinities through the mode's converter: microseconds as
// adaptive's longer timestamps (a timestamp(3)'s infinite default too), nanoseconds saturated to a long (and no
// timestamp default), isostring as Java's ISO text of pgjdbc's instants (of LocalDateTime.MAX and MIN for defaults),
// connect as java.util.Dates of adaptive's days and milliseconds (and no timestamp default).
void DebeziumSideBySide::CompareInfinitiesUnderTimeMode(const std::string& mode, bool json) {
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},
      {"h_ts", "timestamp", "'infinity'"},
      {"h_tsm", "timestamp", "'-infinity'"},
      {"h_ts3", "timestamp(3)", "'-infinity'"},
      {"h_d", "date", "'-infinity'"},
      {"h_dp", "date", "'infinity'"},
      {"h_tz", "timestamptz(2)", "'infinity'"},
      {"h_tsa", "timestamp[]", "ARRAY['infinity'::timestamp, '-infinity']"},
      {"h_ts3a", "timestamp(3)[]", "ARRAY['infinity'::timestamp, '-infinity']"},
      {"h_da", "date[]", "ARRAY['infinity'::date, '-infinity']"},
      {"h_dfp", "date DEFAULT 'infinity'", "'2024-01-01'"},
      {"h_dfm", "date DEFAULT '-infinity'", "'2024-01-01'"},
      {"h_tsdp", "timestamp DEFAULT 'infinity'", "'2024-01-01'"},
      {"h_tsdm", "timestamp DEFAULT '-infinity'", "'2024-01-01'"},
      {"h_ts3dp", "timestamp(3) DEFAULT 'infinity'", "'2024-01-01'"},
      {"e_ts", "timestamp", "'-infinity'"},
      {"e_da", "date[]", "ARRAY['infinity'::date]"},
      {"e_ts3dm", "timestamp(3) DEFAULT '-infinity'", "'2024-01-01'"}};
  // Under connect and StringConverter the envelope cannot hold a java.util.Date (the relay refuses Date.toString).
  std::vector<std::tuple<std::string, std::string, std::string>> used;
  for (const auto& column : typed) {
    if (mode != "connect" || json || !std::get<0>(column).starts_with("e_")) used.push_back(column);
  }
  CompareTypedRows(json, used, "InfiniteMode", {"h_keep", "kept"}, "time.precision.mode=" + mode + "\n");
}

TEST_F(DebeziumSideBySide, InfinitiesUnderAdaptiveTimeMicrosecondsAreDebeziums) {
  CompareInfinitiesUnderTimeMode("adaptive_time_microseconds", /*json=*/false);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderMicrosecondsAreDebeziums) {
  CompareInfinitiesUnderTimeMode("microseconds", /*json=*/false);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderNanosecondsThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareInfinitiesUnderTimeMode("nanoseconds", /*json=*/true);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderConnectAreDebeziums) {
  CompareInfinitiesUnderTimeMode("connect", /*json=*/false);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderConnectThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareInfinitiesUnderTimeMode("connect", /*json=*/true);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderIsostringAreDebeziums) {
  CompareInfinitiesUnderTimeMode("isostring", /*json=*/false);
}

TEST_F(DebeziumSideBySide, InfinitiesUnderIsostringThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareInfinitiesUnderTimeMode("isostring", /*json=*/true);
}

TEST_F(DebeziumSideBySide, InfinitiesThroughStringConvertersAreDebeziums) { CompareInfinities(/*json=*/false); }

TEST_F(DebeziumSideBySide, InfinitiesThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareInfinities(/*json=*/true);
}

TEST_F(DebeziumSideBySide, PgvectorArraysThroughStringConvertersAreDebeziums) { CompareVectorArrays(/*json=*/false); }

TEST_F(DebeziumSideBySide, PgvectorArraysThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareVectorArrays(/*json=*/true);
}

TEST_F(DebeziumSideBySide, UserDefinedTypesDebeziumHasNoSchemaForAreLeftOut) {
  CompareUserDefinedTypes(/*unknown_included=*/false);
}

TEST_F(DebeziumSideBySide, UserDefinedTypesDebeziumHasNoSchemaForAreBytesWithUnknownDatatypesIncluded) {
  CompareUserDefinedTypes(/*unknown_included=*/true);
}

// Under include.unknown.datatypes=true Debezium writes most of those types as bytes, but
// still leaves out the arrays its PostgresValueConverter gives no schema whatever the option says: money[], name[],
// interval[], varbit[], xml[], point[], refcursor[]. Placed under table.field.additional.missing=ignore, the relay
// leaves them out too.
TEST_F(DebeziumSideBySide, TheArraysDebeziumHasNoSchemaForAreLeftOutEvenWithUnknownDatatypesIncluded) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_keep", "text"},      {"a_money", "money[]"}, {"a_name", "name[]"},        {"a_interval", "interval[]"},
      {"a_varbit", "varbit[]"}, {"a_xml", "xml[]"},    {"a_point", "point[]"},      {"a_refcursor", "refcursor[]"},
      {"e_interval", "interval[]"}};
  const std::vector<std::string> rows = {
      R"x('kept', '{1.5,NULL}', '{a,b}', '{1 day,NULL}', '{101,NULL}', ARRAY['<a/>'::xml], '{"(1,2)"}', '{c1}', )x"
      R"x('{2 hours}')x",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  CompareColumns(/*json=*/false, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows,
                 "Included", {"h_keep", "kept"},
                 "transforms.outbox.table.field.additional.missing=ignore\ninclude.unknown.datatypes=true\n");
}

// include.unknown.datatypes=true: the types Debezium otherwise leaves out, but the geometric ones, are bytes of their
// PostgreSQL text (pgoutput's), their arrays lists of required bytes (a NULL element is one Debezium's converter
// fails on: null under its default warn); in headers (base64 through SimpleHeaderConverter) and, through
// JsonConverters with schemas or under binary.handling.mode=hex, envelope fields.
void DebeziumSideBySide::CompareUnknownDatatypes(bool json, const std::string& connector_keys) {
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},
      {"t_tid", "tid", "'(1,2)'"}, {"t_xid", "xid", "'5'"}, {"t_cid", "cid", "'7'"}, {"t_xid8", "xid8", "'9'"},
      {"t_lsn", "pg_lsn", "'16/B374D848'"}, {"ta_tid", "tid[]", R"x('{"(1,2)","(3,4)"}')x"},
      {"ta_xid", "xid[]", "'{5,NULL}'"}, {"ta_cid", "cid[]", "'{7}'"}, {"ta_xid8", "xid8[]", "'{9}'"},
      {"ta_lsn", "pg_lsn[]", "'{16/B374D848,0/0}'"}, {"s_txid", "txid_snapshot", "'10:20:10,14,15'"},
      {"s_pg", "pg_snapshot", "'10:20:10,14,15'"}, {"sa_txid", "txid_snapshot[]", R"x('{"10:20:10,14,15"}')x"},
      {"sa_pg", "pg_snapshot[]", R"x('{"10:20:"}')x"}, {"q_tsquery", "tsquery", "'a & b | !c'"},
      {"q_jsonpath", "jsonpath", "'$.a[*] ? (@ > 1)'"}, {"q_acl", "aclitem", "'postgres=arwdDxt/postgres'"},
      {"qa_tsquery", "tsquery[]", R"x('{"a & b"}')x"}, {"qa_jsonpath", "jsonpath[]", R"x('{"$.a"}')x"},
      {"qa_acl", "aclitem[]", "'{postgres=r/postgres}'"},
      {"r_proc", "regproc", "'now'"}, {"r_procedure", "regprocedure", "'now()'"}, {"r_oper", "regoper", "'||/'"},
      {"r_operator", "regoperator", "'+(integer,integer)'"}, {"r_class", "regclass", "'pg_class'"},
      {"r_type", "regtype", "'integer'"}, {"r_config", "regconfig", "'english'"},
      {"r_dictionary", "regdictionary", "'simple'"}, {"r_namespace", "regnamespace", "'public'"},
      {"r_role", "regrole", "'postgres'"}, {"r_collation", "regcollation", R"x('"C"')x"},
      {"ra_proc", "regproc[]", "'{now}'"}, {"ra_type", "regtype[]", "'{integer,text}'"},
      {"ra_class", "regclass[]", "'{pg_class}'"}, {"ra_role", "regrole[]", "'{postgres}'"},
      {"m_int4", "int4multirange", "'{[1,3), [5,8)}'"}, {"m_num", "nummultirange", "'{[1.5,2)}'"},
      {"m_ts", "tsmultirange", "'{[2020-01-01,2020-02-01)}'"},
      {"m_tstz", "tstzmultirange", "'{[2020-01-01 00:00+00,2020-02-01 00:00+00)}'"},
      {"m_date", "datemultirange", "'{[2020-01-01,2020-02-01)}'"}, {"m_int8", "int8multirange", "'{}'"},
      {"ma_int4", "int4multirange[]", "ARRAY['{[1,3)}'::int4multirange]"},
      {"ma_date", "datemultirange[]", "ARRAY['{[2020-01-01,2020-02-01)}'::datemultirange]"},
      {"g_lseg", "lseg", "'[(1,2),(-3.5,0.1)]'"}, {"g_path", "path", "'((1,2),(3,4),(1e20,-0))'"},
      {"g_open", "path", "'[(1,2),(3,4)]'"}, {"g_box", "box", "'((1,2),(3,4))'"},
      {"g_polygon", "polygon", "'((1,2),(3,4),(5,6.25))'"}, {"g_line", "line", "'{1,-2,3}'"},
      {"g_circle", "circle", "'<(1,2),3.5>'"},
      {"ga_box", "box[]", R"x('{(3,4),(1,2);(1,1),(0,0)}')x"}, {"ga_line", "line[]", R"x('{"{1,2,3}"}')x"},
      {"ga_circle", "circle[]", R"x('{"<(1,2),3>","<(0,0),1>"}')x"}, {"ga_path", "path[]", R"x('{"[(1,2),(3,4)]"}')x"},
      {"e_box", "box", "'((0.5,2),(3,4))'"},
      {"a_money", "money[]", "'{1.5}'"},  // left out even so
      {"e_lsn", "pg_lsn", "'0/1'"}, {"e_tids", "tid[]", R"x('{"(0,1)"}')x"}, {"e_query", "tsquery", "'x'"}};
  CompareTypedRows(json, typed, "Unknown", {"h_keep", "kept"},
                   "transforms.outbox.table.field.additional.missing=ignore\ninclude.unknown.datatypes=true\n" +
                       connector_keys);
}

TEST_F(DebeziumSideBySide, UnknownDatatypesIncludedAreBytesOfTheirTextThroughJsonConvertersWithSchemas) {
  CompareUnknownDatatypes(/*json=*/true, "");
}

TEST_F(DebeziumSideBySide, UnknownDatatypesIncludedAreBytesOfTheirTextUnderHexThroughStringConverters) {
  CompareUnknownDatatypes(/*json=*/false, "binary.handling.mode=hex\n");
}

TEST_F(DebeziumSideBySide, TypesDebeziumLeavesOutAreLeftOutThroughStringConverters) {
  CompareLeftOutTypes(/*json=*/false);
}

TEST_F(DebeziumSideBySide, TypesDebeziumLeavesOutAreLeftOutThroughJsonConvertersWithSchemas) {
  CompareLeftOutTypes(/*json=*/true);
}

// Types Debezium gives a schema but whose value its converter loses: a bit(n)[] is always null (under a bit(n)'s
// schema: Bits of length n, a boolean for n = 1), an int2vector and an oidvector always an empty array (of required
// int16 or int64) when not NULL. The relay refused them; it now writes them as Debezium does, in headers and in the
// envelope. A bit(n)[]'s default is none (Debezium has no parser for arrays' defaults), so its NULL stays null and its
// schema has no default.
void DebeziumSideBySide::CompareLostValues(bool json) {
  const std::vector<std::tuple<std::string, std::string, std::string>> typed = {
      {"h_keep", "text", "'kept'"},         {"b_bits", "bit(3)[]", "'{101,010}'"}, {"b_bit1", "bit(1)[]", "'{1,0}'"},
      {"v_int2", "int2vector", "'1 2'"},    {"v_oid", "oidvector", "'1 2'"},     {"e_bits", "bit(3)[]", "'{111}'"},
      {"e_int2", "int2vector", "'4 5'"},    {"e_oid", "oidvector", "'7'"},
      {"b_bits_d", "bit(3)[] DEFAULT '{101}'", "'{110}'"}, {"e_bits_d", "bit(3)[] DEFAULT '{101,011}'", "'{110}'"}};
  CompareTypedRows(json, typed, "Lost", {"v_int2", "[]"}, "");
}

TEST_F(DebeziumSideBySide, ValuesDebeziumLosesAreWrittenAsItWritesThemThroughStringConverters) {
  CompareLostValues(/*json=*/false);
}

TEST_F(DebeziumSideBySide, ValuesDebeziumLosesAreWrittenAsItWritesThemThroughJsonConvertersWithSchemas) {
  CompareLostValues(/*json=*/true);
}

// column.truncate.to.N.chars, column.mask.with.N.chars and column.mask.hash[.v2] on columns the Outbox Event Router
// reads: the key (aggregateid cut to one character) and placed columns, through StringConverters or JsonConverters
// with schemas (whose schemas carry the mappers' truncateLength and masked parameters). Truncations cut Java Strings
// in UTF-16 code units (an emoji cut in half becomes '?') and bytea's bytes, and leave an integer and a varchar(2)
// alone; masks turn every value of a text, bpchar or varchar column, NULL too, into asterisks and leave an integer
// alone; hashes (v1: Java's serialization of the String; v2: its UTF-8) keep a column's length in hex digits (a
// varchar(10), a char(6) whose value is padded); a column two kinds select gets the truncation.
void DebeziumSideBySide::CompareColumnMappers(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"t_text", "text"},   {"t_bytes", "bytea"},    {"t_uuid", "uuid"},    {"t_int", "integer"},
      {"t_vc", "varchar(2)"}, {"m_text", "text"},    {"m_null", "text"},    {"m_int", "integer"},
      {"m_bpchar", "char(4)"}, {"h_text", "text"},   {"h_vc", "varchar(10)"}, {"h_bp", "char(6)"},
      {"h2", "text"},       {"p_both", "text"},      {"e_text", "text"},    {"e_mask", "varchar(20)"}};
  const std::vector<std::string> rows = {
      "'ab😀cd', '\\x0102030405', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 123456, 'xy', 'secret', NULL, 42, 'ab', "
      "'alice@example.com', 'bob', 'x', 'bob', 'abcdef', 'hidden', 'abcdef'",
      "'a😀', '\\x01', NULL, NULL, NULL, NULL, 'x', NULL, NULL, 'héllo 😀', NULL, NULL, 'ünï 😀', NULL, NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Masked",
      {"m_text", "*****"},
      "column.truncate.to.1.chars=public\\\\.outbox\\\\.aggregateid\n"
      "column.truncate.to.3.chars=public\\\\.outbox\\\\.(t_.*|p_both|e_text)\n"
      "column.mask.with.5.chars=public\\\\.outbox\\\\.(m_.*|p_both|e_mask)\n"
      "column.mask.hash.SHA-256.with.salt.pepper=public\\\\.outbox\\\\.h_.*\n"
      "column.mask.hash.v2.MD5.with.salt.s=public\\\\.outbox\\\\.h2\n");
}

TEST_F(DebeziumSideBySide, ColumnMasksAndTruncationsThroughStringConvertersAreDebeziums) {
  CompareColumnMappers(/*json=*/false);
}

TEST_F(DebeziumSideBySide, ColumnMasksAndTruncationsThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareColumnMappers(/*json=*/true);
}

// decimal.handling.mode string and double: numeric with and without a scale and money, and arrays of numeric with and
// without a scale (each element as a numeric column's value: a string or a double), in headers and envelope fields,
// through StringConverters (SimpleHeaderConverter's text, Struct.toString) or JsonConverters with schemas; large,
// small, negative and zero values, trailing zeros, NaN (double only: under string Debezium writes its own
// spelling, which the relay refuses as a per-event error), NULL elements, empty arrays and NULL.
void DebeziumSideBySide::CompareDecimalModes(const std::string& mode, bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"n_head", "numeric(12,2)"}, {"v_head", "numeric"}, {"m_head", "money"},
      {"n_env", "numeric(12,2)"},  {"v_env", "numeric"},  {"m_env", "money"},
      {"an_head", "numeric(10,2)[]"}, {"av_head", "numeric[]"}, {"an_env", "numeric(8,3)[]"}};
  std::vector<std::string> rows = {
      "12.5, 1234.5678, 1234.56, -0.01, 0.000100, -5.5, '{12.5,-0.01,NULL,99999999.99}', "
      "'{1.50,NULL,-0.001,12345678901234567890,1e-20}', '{1.5,0}'",
      "9999999999.99, 123456789012345678901234567890.123, -1234567.89, 0, 1e-20, 0.01, '{}', '{0.1}', '{}'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  if (mode == "double") rows.push_back("0.1, 'NaN', 0.1, 1, 'NaN', 100, '{0.1}', '{2}', '{-3.25}'");
  CompareColumns(
      json, columns, [](const std::string& name) { return name.ends_with("_env"); }, rows, "Decimal",
      {"n_head", mode == "string" ? (json ? R"("payload":"12.50")" : "12.50") : (json ? "12.5}" : "12.5")},
      "decimal.handling.mode=" + mode + "\n");
}

TEST_F(DebeziumSideBySide, DecimalHandlingModeStringThroughStringConvertersIsDebeziums) {
  CompareDecimalModes("string", /*json=*/false);
}

TEST_F(DebeziumSideBySide, DecimalHandlingModeDoubleThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareDecimalModes("double", /*json=*/true);
}

// time.precision.mode adaptive_time_microseconds, microseconds, nanoseconds, connect and isostring: time and timestamp
// columns of each precision, and arrays of date, time and timestamp (each element as the mode writes a column of its
// type, from pgjdbc's java.sql value: a time element keeps milliseconds), in headers and envelope fields, with date
// and timestamptz beside them (the same in every mode); through StringConverters or JsonConverters with schemas.
void DebeziumSideBySide::CompareTimeModes(const std::string& mode, bool json) {
  std::vector<std::pair<std::string, std::string>> columns = {
      {"t0", "time(0)"},       {"t3", "time(3)"},  {"t6", "time"},       {"ts3", "timestamp(3)"},
      {"e_ts6", "timestamp"},  {"e_t3", "time(3)"}, {"d", "date"},      {"tz", "timestamptz(3)"}};
  std::vector<std::string> rows = {
      "'13:45:07', '13:45:07.123', '13:45:07.123456', '2026-12-03 13:45:07.123', '1960-01-01 00:00:00.000001', "
      "'23:59:59.999', '2026-12-03', '2026-12-03 13:45:07.5+02'",
      "'00:00:00', '24:00:00', '00:00:00.000001', '1970-01-01 00:00:00', '2262-04-11 23:47:16.854775', "
      "'00:00:00.001', '1900-02-28', '1970-01-01 00:00:00+00'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"};
  columns.insert(columns.end(), {{"a_t3", "time(3)[]"}, {"e_ats", "timestamp(3)[]"}, {"a_t6", "time[]"},
                                  {"a_ts6", "timestamp[]"}, {"a_d", "date[]"}, {"e_at6", "time[]"}});
  rows[0] += R"(, '{13:45:07.123,NULL}', '{"2026-12-03 13:45:07.123"}', '{13:45:07.123456,00:00:00,23:59:59.999999}', )"
             R"('{"2026-12-03 13:45:07.123456","1960-01-01 00:00:00.000001",NULL}', '{2026-12-03,1969-12-31,NULL}', )"
             R"('{00:00:00.000999,12:00:00.5}')";
  rows[1] += ", '{}', '{}', '{00:00:00.001}', '{\"1970-01-01 00:00:00\"}', '{1970-01-01}', '{}'";
  rows[2] += ", NULL, NULL, NULL, NULL, NULL, NULL";
  // t3 (13:45:07.123) past midnight: micro- or nanoseconds, or Kafka Connect's Time (milliseconds; formatted by
  // SimpleHeaderConverter). Under connect and StringConverters every column is a header: Struct.toString prints a
  // java.util.Date in the JVM's zone, which the relay refuses.
  const bool envelope = !(mode == "connect" && !json);
  const std::string premise = mode == "nanoseconds" ? "49507123000000"
                              : mode == "isostring" ? "13:45:07.123Z"
                              : mode != "connect"   ? "49507123000"
                              : json                ? "49507123}"
                                                    : "13:45:07.123Z";
  CompareColumns(
      json, columns, [envelope](const std::string& name) { return envelope && name.starts_with("e_"); }, rows,
      "Timed", {"t3", premise}, "time.precision.mode=" + mode + "\n");
}

TEST_F(DebeziumSideBySide, TimePrecisionModeAdaptiveTimeMicrosecondsThroughJsonConvertersIsDebeziums) {
  CompareTimeModes("adaptive_time_microseconds", /*json=*/true);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeMicrosecondsThroughStringConvertersIsDebeziums) {
  CompareTimeModes("microseconds", /*json=*/false);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeNanosecondsThroughJsonConvertersIsDebeziums) {
  CompareTimeModes("nanoseconds", /*json=*/true);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeConnectThroughStringConvertersIsDebeziums) {
  CompareTimeModes("connect", /*json=*/false);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeConnectThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareTimeModes("connect", /*json=*/true);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeIsostringThroughStringConvertersIsDebeziums) {
  CompareTimeModes("isostring", /*json=*/false);
}

TEST_F(DebeziumSideBySide, TimePrecisionModeIsostringThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareTimeModes("isostring", /*json=*/true);
}

// interval.handling.mode=string: Debezium's ISO 8601 text of intervals in headers and an envelope field, through
// StringConverters or JsonConverters with schemas; mixed signs, fractions, zero, a microsecond, a large interval,
// a NULL in a column with a default (Debezium writes the default's text) and NULL.
void DebeziumSideBySide::CompareIntervalStrings(bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"i_head", "interval"}, {"i_dflt", "interval DEFAULT '1 day 02:00:00.5'"}, {"e_iv", "interval"}};
  const std::vector<std::string> rows = {
      "'1 year 2 months -3 days 04:05:06.789', '-1 days -02:03:04.5', '0'",
      "'00:00:00.000001', '178000000 years', '-00:00:59.999999'", "NULL, NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Spanned",
      {"i_head", "P1Y2M-3DT4H5M6.789S"}, "interval.handling.mode=string\n");
}

TEST_F(DebeziumSideBySide, IntervalHandlingModeStringThroughStringConvertersIsDebeziums) {
  CompareIntervalStrings(/*json=*/false);
}

TEST_F(DebeziumSideBySide, IntervalHandlingModeStringThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareIntervalStrings(/*json=*/true);
}

// money.fraction.digits 0 and 4: money's Decimal of that scale (rounded HALF_UP), in headers and an envelope field,
// through StringConverters or JsonConverters with schemas.
void DebeziumSideBySide::CompareMoneyDigits(int digits, bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {{"m_head", "money"}, {"e_m", "money"}};
  const std::vector<std::string> rows = {"1234.56, -0.5", "0.49, -1234567.89", "'92233720368547758.07', NULL",
                                         "NULL, 0"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Priced",
      {"m_head", json ? "\"scale\":\"" + std::to_string(digits) + "\"" : (digits == 0 ? "1235" : "1234.5600")},
      "money.fraction.digits=" + std::to_string(digits) + "\n");
}

TEST_F(DebeziumSideBySide, MoneyFractionDigitsZeroThroughStringConvertersIsDebeziums) {
  CompareMoneyDigits(0, /*json=*/false);
}

TEST_F(DebeziumSideBySide, MoneyFractionDigitsFourThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareMoneyDigits(4, /*json=*/true);
}

// binary.handling.mode base64, base64-url-safe and hex: bytea columns and bytea[] (arrays of those strings) in headers
// and an envelope field as strings in that encoding (under StringConverter the envelope's Struct.toString prints them, where a byte array would print an
// identity hash code); empty, one byte, bytes that need the URL-safe alphabet and padding, NULL.
void DebeziumSideBySide::CompareBinaryModes(const std::string& mode, bool json) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"b_head", "bytea"}, {"e_b", "bytea"}, {"a_b", "bytea[]"}, {"e_ab", "bytea[]"}};
  const std::vector<std::string> rows = {
      R"('\xfbff3e', '\x00', ARRAY['\xfbff3e'::bytea, NULL, ''::bytea], ARRAY['\xfbef'::bytea])",
      R"('\x', '\xfbef', '{}', '{}')", "NULL, NULL, NULL, NULL"};
  const std::string expected = mode == "hex" ? "fbff3e" : mode == "base64" ? "+/8+" : "-_8-";
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Binary",
      {"b_head", expected}, "binary.handling.mode=" + mode + "\n");
}

TEST_F(DebeziumSideBySide, BinaryHandlingModeBase64ThroughStringConvertersIsDebeziums) {
  CompareBinaryModes("base64", /*json=*/false);
}

TEST_F(DebeziumSideBySide, BinaryHandlingModeBase64UrlSafeThroughStringConvertersIsDebeziums) {
  CompareBinaryModes("base64-url-safe", /*json=*/false);
}

TEST_F(DebeziumSideBySide, BinaryHandlingModeHexThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareBinaryModes("hex", /*json=*/true);
}

// hstore.handling.mode=map: hstore columns and hstore[] (arrays of those maps) as Kafka Connect maps of strings in a
// header and an envelope field,
// through StringConverters (SimpleHeaderConverter's {"k":"v"}, HashMap.toString's {k=v}) or JsonConverters with
// schemas; the HashMap's order, NULL values, quotes and backslashes, an empty map, NULL.
void DebeziumSideBySide::CompareHstoreMaps(bool json) {
  ASSERT_TRUE(pg_->Exec("CREATE EXTENSION hstore", db_).ok());
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"h_map", "hstore"}, {"e_map", "hstore"}, {"a_map", "hstore[]"}, {"e_amap", "hstore[]"}};
  const std::vector<std::string> rows = {
      R"('b=>2, a=>NULL, "q\"x"=>"\\"', 'zeta=>1, alpha=>2, mid=>3', )"
      R"(ARRAY['b=>2, a=>NULL'::hstore, NULL, ''::hstore, '"k,1"=>"v}"'::hstore], ARRAY['zeta=>1, alpha=>2'::hstore])",
      "'', 'k=>v', '{}', '{}'", "NULL, NULL, NULL, NULL"};
  CompareColumns(
      json, columns, [](const std::string& name) { return name.starts_with("e_"); }, rows, "Mapped",
      {"h_map", json ? R"("type":"map")" : R"({"a":null,"b":"2")"}, "hstore.handling.mode=map\n");
}

TEST_F(DebeziumSideBySide, HstoreHandlingModeMapThroughStringConvertersIsDebeziums) {
  CompareHstoreMaps(/*json=*/false);
}

TEST_F(DebeziumSideBySide, HstoreHandlingModeMapThroughJsonConvertersWithSchemasIsDebeziums) {
  CompareHstoreMaps(/*json=*/true);
}

TEST_F(DebeziumSideBySide, ArraysOfCitextLtreeAndHstoreThroughStringConvertersAreDebeziums) {
  CompareExtensionArrays(/*json=*/false);
}

TEST_F(DebeziumSideBySide, ArraysOfCitextLtreeAndHstoreThroughJsonConvertersWithSchemasAreDebeziums) {
  CompareExtensionArrays(/*json=*/true);
}

TEST_F(DebeziumSideBySide, CitextLtreeAndIsbnInHeadersGiveDebeziumsStrings) { CompareExtensionTypes(/*json=*/false); }

TEST_F(DebeziumSideBySide, CitextLtreeAndIsbnThroughJsonConvertersWithSchemasGiveDebeziumsStrings) {
  CompareExtensionTypes(/*json=*/true);
}

TEST_F(DebeziumSideBySide, PointsThroughJsonConvertersWithSchemasGiveDebeziumsPointStructs) {
  ComparePoints(/*json=*/true);
}

// table.expand.json.payload=true: the payload parsed, its schema inferred and its value rebuilt as Debezium does,
// written by each value converter. Rows whose record Debezium's task fails on (JsonConverter refuses a top-level
// array or an integer beyond long) are left out of the JsonConverter runs, and arrays of objects whose merged schema
// depends on the JVM's hash codes are left out of all: json_expand_test and json_expand_differential_test cover them.
class DebeziumExpandSideBySide : public DebeziumSideBySide {
 protected:
  // JSON every payload column takes (json, jsonb and text) and every converter writes.
  static std::vector<std::optional<std::string>> JsonRows() {
    return {
        R"({"id": 7, "big": 2147483648, "neg": -2147483649, "max": 9223372036854775807, "ok": true, "s": "x"})",
        R"({"d": 0.1, "e": 123.456, "f": 1.5e-7, "g": -2.5})",
        R"({"nested": {"a": {"b": "deep"}}, "list": [1, 2, 3], "strs": ["a", "b"], "nulls": [null, 1]})",
        // Merged in either order, the fields come out the same (jsonb sorts keys: "id" stays first).
        R"({"items": [{"id": "a", "qty": 1}, {"id": "b"}], "same": [{"x": 1}, null, {"x": 2}]})",
        R"({"n": null, "empty": [], "obj": {}, "deepnull": {"z": null}, "grid": [[1], [2, 3], []]})",
        R"({"s": "q\" b\\ / \n\t é ☕ 😀 \u0001 \ud83d\ude00"})",
        R"({"dup": 1, "other": 2, "dup": "two"})",
        "[]", "{}",
        R"({"b": [[], [1]]})", R"({"mixed": [1, "x"]})", R"({"": 1})", R"([1, "x"])",
        std::nullopt,
    };
  }
  // Text only a text column holds: not JSON, JSON with text around it, numbers as Jackson reads them, a lone
  // surrogate.
  static std::vector<std::optional<std::string>> TextRows() {
    return {"not json", R"( {"lead": 1})", R"({"a": 1} and more)", R"({"a": 01})", "",
            R"({"x": 1e20, "y": -0.0, "z": 1e400, "w": 1E-7, "v": 1e-400})", R"({"lone": "\ud800 x"})"};
  }
  // What JsonConverter fails on (Kafka Connect would stop the task) and StringConverter writes as the text.
  static std::vector<std::optional<std::string>> FailingRows() {
    return {"[1, 2]", R"({"big": 12345678901234567890})", R"({"a": [{"x": 1}, {"y": 2}, null]})",
            R"({"a": [[1], ["x"]]})"};
  }

  // Debezium then the relay on `rows` of a payload column of `payload_type` (`payload`, jsonb, when empty; else a
  // `body` column of that type), with the router keys `router` and the value converter `value_converter`.
  // `expanded`: text some value of Debezium's has only if it expanded the payloads.
  void CompareExpanded(const std::string& router, const std::string& value_converter, const std::string& payload_type,
                       const std::vector<std::optional<std::string>>& rows, const std::string& expanded,
                       const std::string& placement = "type:header:eventType") {
    const std::string column = payload_type.empty() ? "payload" : "body";
    SideBySide side(*this,
                    "transforms.outbox.table.fields.additional.placement=" + placement + "\n"
                    "transforms.outbox.table.expand.json.payload=true\n"
                    "transforms.outbox.table.field.event.payload=" + column + "\n" + router,
                    "key.converter=org.apache.kafka.connect.storage.StringConverter\n" + value_converter);
    ASSERT_TRUE(side.Init());
    if (!payload_type.empty()) {
      ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ADD COLUMN body " + payload_type, db_).ok());
    }
    ASSERT_TRUE(side.StartDebezium());
    std::string values;
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string literal = "NULL";
      if (rows[i].has_value()) {
        literal = "'";
        for (char c : *rows[i]) literal += c == '\'' ? std::string("''") : std::string(1, c);
        literal += "'";
      }
      values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ + "', 'k" +
                std::to_string(i) + "', 'Expanded', " + (column == "payload" ? literal : "'{}', " + literal) + ")";
    }
    ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload" +
                              std::string(column == "payload" ? "" : ", body") + ") VALUES " + values,
                          db_)
                    .ok());
    const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
    ASSERT_EQ(debezium.size(), rows.size());
    EXPECT_TRUE(std::any_of(debezium.begin(), debezium.end(), [&](const auto& record) {
      return record.second.value.value_or("").find(expanded) != std::string::npos;
    })) << "no value of Debezium's has " << expanded << ": the test's premise changed";
    ExpectSameRecords(relayed, debezium);
  }

  static std::vector<std::optional<std::string>> Concat(std::vector<std::vector<std::optional<std::string>>> sets) {
    std::vector<std::optional<std::string>> out;
    for (auto& set : sets) out.insert(out.end(), set.begin(), set.end());
    return out;
  }
};

// jsonb payloads through JsonConverter without schemas: the expanded value as JSON.
TEST_F(DebeziumExpandSideBySide, ExpandedJsonbPayloadsThroughJsonConverterAreDebeziums) {
  CompareExpanded("", "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                      "value.converter.schemas.enable=false\n",
                  "", JsonRows(), R"("grid":[[1],[2,3],[]])");
}

// Text payloads through JsonConverter with schemas: the inferred struct schema; text that is not expanded keeps
// its column's string schema, a top-level [] a null schema.
TEST_F(DebeziumExpandSideBySide, ExpandedTextPayloadsThroughJsonConverterWithSchemasAreDebeziums) {
  CompareExpanded("", "value.converter=org.apache.kafka.connect.json.JsonConverter\n", "text",
                  Concat({JsonRows(), TextRows()}), R"("optional":true,"name":"body.nested","field":"nested")");
}

// StringConverter writes Struct.toString, and the text of what JsonConverter would fail on.
TEST_F(DebeziumExpandSideBySide, ExpandedTextPayloadsThroughStringConverterAreDebeziums) {
  CompareExpanded("", "value.converter=org.apache.kafka.connect.storage.StringConverter\n", "text",
                  Concat({JsonRows(), TextRows(), FailingRows()}), "Struct{lone=? x}");
}

// Nulls kept as optional bytes; table.json.payload.empty.array.behavior, which Debezium 3.6.1 does not know, has
// no effect on either side.
TEST_F(DebeziumExpandSideBySide, NullsKeptAsOptionalBytesAreDebeziums) {
  CompareExpanded("transforms.outbox.table.json.payload.null.behavior=optional_bytes\n"
                  "transforms.outbox.table.json.payload.empty.array.behavior=optional_string\n",
                  "value.converter=org.apache.kafka.connect.json.JsonConverter\n", "json", JsonRows(),
                  R"({"type":"bytes","optional":true,"field":"n"})");
}

// Expanded payloads in the envelope (placement envelope) through JsonConverter with schemas: the envelope's payload
// field holds the expanded struct and its inferred schema, and the envelope's schema is made once per payload
// schema. Rows Debezium's task fails on with an envelope (a top-level [], whose schema is null) are left out.
TEST_F(DebeziumExpandSideBySide, ExpandedPayloadsInTheEnvelopeAreDebeziums) {
  std::vector<std::optional<std::string>> rows = JsonRows();
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const std::optional<std::string>& r) {
               return r.has_value() && (r->starts_with("[") || r->find("[[") != std::string::npos ||
                                        r->find("mixed") != std::string::npos);
             }),
             rows.end());
  CompareExpanded("", "value.converter=org.apache.kafka.connect.json.JsonConverter\n", "", rows,
                  R"("name":"payload","field":"payload")", "type:envelope:eventType,aggregateid:envelope");
}

// field.name.adjustment.mode on the router: the adjusted names, a field looked up by its new name (null unless the
// payload has that key too), and names that become one (a-b, a.b, a b: a_b), within a record and across records.
// Text payloads, so that the keys keep the order written.
TEST_F(DebeziumExpandSideBySide, AvroAdjustedFieldNamesAreDebeziums) {
  const std::vector<std::optional<std::string>> rows = {
      R"({"a-b": 1, "a_b": 2, "ok": true})", R"({"1a": {"x y": [1, 2]}, "é": "e", "😀": 0, "_x": 1, "A9": 2})",
      R"({"a.b": 1})", R"({"a.b": 2})", R"({"a b": 3, "a-b": 4})"};
  CompareExpanded("transforms.outbox.field.name.adjustment.mode=avro\n",
                  "value.converter=org.apache.kafka.connect.json.JsonConverter\n", "text", rows,
                  R"("name":"body._1a","field":"_1a")");
}

TEST_F(DebeziumExpandSideBySide, AvroUnicodeAdjustedFieldNamesAreDebeziums) {
  const std::vector<std::optional<std::string>> rows = {
      R"({"a_b": 1, "a_u005fb": 2, "é": 3, "Āb": 4, "1a": 5, "a b": 6, "ok9": {"_": 7}})", R"({"a-b": 1})"};
  CompareExpanded("transforms.outbox.field.name.adjustment.mode=avro_unicode\n",
                  "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                  "value.converter.schemas.enable=false\n",
                  "text", rows, R"("_u0031a":null)");
}

// The trace context column (tracingspancontext, Debezium's default) with Debezium's tracing on: Kafka Connect's
// worker has OpenTelemetry's SDK on its class path (scripts/connect-temp.sh), so Debezium's Outbox Event Router reads
// the column's traceparent and tracestate with the W3C propagator, starts a span under it and writes that span's
// context ahead of the id. The relay writes the same headers in the same place, but with the writer's span id where
// Debezium's has its own span's (the relay has no span); where the column holds no context the propagator takes,
// Debezium starts a new trace and the relay writes none (docs/debezium.md says both). Each row's context is one
// case of trace_context_test.cc. `header_converter`: the worker's header.converter lines (none: Kafka Connect's
// SimpleHeaderConverter); under JsonConverter the trace headers are JSON strings, with or without the schema.
void DebeziumSideBySide::CompareTraceHeaders(const std::string& header_converter) {
  SideBySide side(*this, "transforms.outbox.table.fields.additional.placement=type:header:eventType\n",
                  std::string(SideBySide::kStringConverters) + header_converter);
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(pg_->Exec("ALTER TABLE outbox ADD COLUMN tracingspancontext varchar(400)", db_).ok());
  ASSERT_TRUE(side.StartDebezium());
  const std::string trace_id = "0af7651916cd43dd8448eb211c80319c", span_id = "b7ad6b7169203331";
  const std::string parent = "traceparent=00-" + trace_id + "-" + span_id + "-";
  // Key, the column's value (SQL), whether the propagator takes its traceparent.
  const std::vector<std::tuple<std::string, std::string, bool>> rows = {
      {"k01", "E'#a comment\\n" + parent + "01\\ntracestate=congo\\\\=t61\\n'", true},
      {"k02", "NULL", false},
      {"k03", "E'" + parent + "01\\ntracestate=congo\\\\=t61 ,\\trojo\\\\=00f067aa0ba902b7\\n'", true},
      {"k04", "E'" + parent + "00\\n'", true},
      {"k05", "E'#only a comment\\n'", false},
      {"k06", "E'traceparent=00-" + absl::AsciiStrToUpper(trace_id) + "-" + span_id + "-01\\n'", false},
      {"k07", "E'traceparent=01-" + trace_id + "-" + span_id + "-01-extra\\ntracestate=\\n'", true},
      {"k08", "E'" + parent + "01\\ntracestate=bad state\\n'", true},
      {"k09", "''", false},
      {"k10", "E'" + parent + "ff\\n'", true},
      {"k11", "E'" + parent + "02\\ntracestate=a\\\\=1,b\\\\=2,a\\\\=3\\n'", true},
      {"k12", "E'" + parent + "01\\ntracestate=a\\\\=1,,b\\\\=2,\\n'", true},
      {"k13", "E'" + parent + "01-\\n'", false},
  };
  std::string values;
  for (const auto& [key, context, valid] : rows) {
    values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + order_type_ + "', '" + key +
              "', 'Traced', '{}', " + context + ")";
  }
  ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, tracingspancontext) "
                        "VALUES " + values, db_).ok());
  auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), rows.size());
  ASSERT_EQ(debezium.size(), rows.size());
  size_t own_spans = 0, new_traces = 0;
  for (auto& [id, r] : debezium) {
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& t) { return std::get<0>(t) == r.key; });
    ASSERT_NE(row, rows.end()) << r;
    if (std::get<1>(*row) == "NULL") continue;
    // Debezium traces every row whose column is not NULL: its traceparent comes first.
    ASSERT_FALSE(r.headers.empty()) << r;
    ASSERT_EQ(r.headers[0].name, "traceparent") << r;
    std::string& header = *r.headers[0].value;
    // The traceparent's text: the header itself, or the JSON string JsonConverter wrote of it.
    std::string traceparent = header;
    if (!header_converter.empty()) {
      const nlohmann::json json = nlohmann::json::parse(header, nullptr, false);
      const nlohmann::json& text = json.is_object() && json.contains("payload") ? json["payload"] : json;
      ASSERT_TRUE(text.is_string()) << r;
      traceparent = text.get<std::string>();
    }
    ASSERT_EQ(traceparent.size(), 55u) << r;
    if (std::get<2>(*row)) {
      // The premise: its span is its own, under the writer's trace. The relay's is the writer's span id.
      EXPECT_EQ(traceparent.substr(3, 32), trace_id) << r;
      own_spans += traceparent.substr(36, 16) != span_id;
      header.replace(header.find(traceparent) + 36, 16, span_id);
    } else {
      // A new trace of Debezium's, which the relay does not start.
      new_traces += traceparent.substr(3, 32) != trace_id;
      r.headers.erase(r.headers.begin());
      if (!r.headers.empty() && r.headers[0].name == "tracestate") r.headers.erase(r.headers.begin());
    }
  }
  EXPECT_EQ(own_spans, 8u) << "Debezium wrote the writer's span id: OpenTelemetry's SDK made no span of its own";
  EXPECT_EQ(new_traces, 4u);
  ExpectSameRecords(relayed, debezium);
}

TEST_F(DebeziumSideBySide, TheTraceContextColumnGivesDebeziumsTraceHeaders) { CompareTraceHeaders(""); }

TEST_F(DebeziumSideBySide, TheTraceContextColumnGivesDebeziumsTraceHeadersUnderAJsonHeaderConverter) {
  CompareTraceHeaders("header.converter=org.apache.kafka.connect.json.JsonConverter\n");
}

TEST_F(DebeziumSideBySide, TheTraceContextColumnGivesDebeziumsTraceHeadersUnderAJsonHeaderConverterWithoutSchemas) {
  CompareTraceHeaders("header.converter=org.apache.kafka.connect.json.JsonConverter\n"
                      "header.converter.schemas.enable=false\n");
}

// route.topic.regex with the Java forms the relay spells for PCRE2, `regex` as the connector file writes it, with
// groups kind and rest: aggregate types in four cases route to the order topic in both; an upper-case one that (?i)
// did not fold would route to a topic of its own, and the relay's records would be missing here.
void DebeziumSideBySide::CompareRoutes(const std::string& regex) {
  const std::string suffix = order_type_.substr(std::string("order_").size());
  SideBySide side(*this,
                  "transforms.outbox.table.fields.additional.placement=type:header:eventType\n"
                  "transforms.outbox.route.topic.regex=" + regex + "\n"
                  "transforms.outbox.route.topic.replacement=outbox.event.order_${rest}\n");
  ASSERT_TRUE(side.Init());
  ASSERT_TRUE(side.StartDebezium());
  std::string values;
  for (const std::string& type : {"order_" + suffix, "ORDER_" + suffix, "Order_" + suffix, "OrDeR_" + suffix}) {
    values += std::string(values.empty() ? "" : ", ") + "(gen_random_uuid(), '" + type + "', 'k', 'Routed', '{}')";
  }
  ASSERT_TRUE(pg_->Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES " + values, db_).ok());
  const auto [debezium, relayed] = DebeziumThenRelay(side, OrderTopic(), 4);
  ASSERT_EQ(debezium.size(), 4u);
  ExpectSameRecords(relayed, debezium);
}

// (?i) (ASCII letters only), a class intersection with a nested negated class, and \Z.
TEST_F(DebeziumSideBySide, RouteRegexesWithCaseFlagsAndIntersectionsRouteAsDebeziumRoutes) {
  CompareRoutes("(?i)(?<kind>[a-z&&[^x]]+)_(?<rest>[0-9a-f_]+)\\\\Z");
}

// (?x), with (?i) in the same flags: whitespace and a trailing comment left out, an escaped space kept.
TEST_F(DebeziumSideBySide, RouteRegexesWithCommentsRouteAsDebeziumRoutes) {
  CompareRoutes("(?xi) (?<kind> [a-z]+ ) _ (?<rest> [0-9a-f_]+ ) (?:\\\\ x)?  # aggregate type, then its suffix");
}

// \p{..} as Java reads it: under (?i) \p{Lu} is any cased letter and \p{Lower} is \p{Alpha}; POSIX classes are
// US-ASCII, in a class with && and a negated one.
TEST_F(DebeziumSideBySide, RouteRegexesWithPropertiesUnderCaseFlagsRouteAsDebeziumRoutes) {
  CompareRoutes("(?i)(?<kind>\\\\p{Lu}\\\\p{Lower}+)_(?<rest>[\\\\p{XDigit}\\\\p{Punct}&&\\\\P{Space}]+)");
}

// Java's binary properties after Is (Unicode sets) and a script, in a class.
TEST_F(DebeziumSideBySide, RouteRegexesWithBinaryPropertiesAndScriptsRouteAsDebeziumRoutes) {
  CompareRoutes("(?<kind>\\\\p{IsAlphabetic}+)_(?<rest>[\\\\p{IsLatin}\\\\p{IsDigit}\\\\p{IsPunct}]+)");
}

// U (UNICODE_CHARACTER_CLASS): \w and the POSIX names as Unicode sets, \b as Unicode's word boundary.
TEST_F(DebeziumSideBySide, RouteRegexesUnderUnicodeCharacterClassRouteAsDebeziumRoutes) {
  CompareRoutes("(?U)\\\\b(?<kind>\\\\w+?)_(?<rest>[\\\\p{Alnum}_]+)\\\\b");
}

// \b, which the relay checks as Java 17 and Java 19 both read it (the values here are ASCII, where they agree).
TEST_F(DebeziumSideBySide, RouteRegexesWithWordBoundariesRouteAsDebeziumRoutes) {
  CompareRoutes("(?i)\\\\b(?<kind>\\\\w+?)_(?<rest>[0-9a-f_]+)\\\\b");
}

// A back reference under (?i), which Java compares ignoring ASCII case: the r of OrDeR's second letter again as its
// last.
TEST_F(DebeziumSideBySide, RouteRegexesWithCaseInsensitiveBackReferencesRouteAsDebeziumRoutes) {
  CompareRoutes("(?i)(?<kind>o(?<r>r)de\\\\k<r>)_(?<rest>[0-9a-f_]+)");
}

// (?iu), where Java folds by Character's case mappings, and inside a class the complement of a union (\P{LD}: neither
// a letter nor a digit) beside a POSIX class.
TEST_F(DebeziumSideBySide, RouteRegexesUnderUnicodeCaseRouteAsDebeziumRoutes) {
  CompareRoutes("(?iu)(?<kind>ordeR)_(?<rest>[\\\\P{LD}\\\\p{XDigit}]+)");
}

// Read since 2026-12-07: under (?x) whitespace and comments inside a class, inside {n,m} and inside the inline flags;
// \N{name}; \Q..\E inside a class.
TEST_F(DebeziumSideBySide, RouteRegexesWithNamesQuotesAndSpacedClassesRouteAsDebeziumRoutes) {
  CompareRoutes("(?x i)(?<kind> \\\\N{latin small letter o} [ r - r ] de r )_(?<rest> [ 0-9 a-f \\\\Q_\\\\E ]{1 , 64} ) "
                "# the suffix");
}

// Read since 2026-12-08: a back reference under (?iu), compared by Character's case mappings (the r of OrDeR's second
// letter again as its last), and one of two digits (\10: ten groups are open before it; read as \1 then 0, it would
// route nothing).
TEST_F(DebeziumSideBySide, RouteRegexesWithUnicodeCaseAndTwoDigitBackReferencesRouteAsDebeziumRoutes) {
  CompareRoutes("(?iu)(?<kind>(o)(r)(d)(e)()()()()()\\\\3\\\\10)_(?<rest>[0-9a-f_]+)");
}

}  // namespace
}  // namespace outbox::testing
