// bench-kafka: the Kafka side of the benchmark harness (bench/run.sh), built by bench/run.sh against the same
// librdkafka as the relay. Subcommands:
//
//   bench-kafka mock [--topic NAME[:PARTITIONS]]...
//       Starts librdkafka's mock cluster (one broker) in this process, creates the topics (the mock has no
//       controller for CreateTopics), prints BOOTSTRAP=<host:port> and waits until SIGTERM/SIGINT. The mock keeps
//       every record in memory: it runs in its own process so that memory is not counted as the relay's.
//   bench-kafka create-topics --bootstrap B [--partitions N] [--config k=v]... TOPIC...
//       CreateTopics (an existing topic is fine).
//   bench-kafka wait-count --bootstrap B --target N [--timeout-ms T] [--interval-ms I] TOPIC...
//       Polls the sum of the topics' high watermarks until it reaches N; prints REACHED <unix ms> <count>, exits
//       0 (or TIMEOUT <count>, exits 1).
//   bench-kafka counts --bootstrap B TOPIC...
//       Prints "<topic> <partition> <high watermark>" per partition.
//   bench-kafka version
//       Prints librdkafka's version.
//   bench-kafka dump --bootstrap B [--count N] [--timeout-ms T] TOPIC...
//       Reads the topics from the beginning and prints one JSON object per record: topic, partition, offset,
//       timestamp type (create|append), timestamp (ms), key, headers [[name, value]...], value.
//   bench-kafka count-committed --bootstrap B --target N [--timeout-ms T] TOPIC...
//       Reads the topics from the beginning with isolation.level=read_committed (what a transactional producer
//       committed, never an aborted record) until it has read at least N records and every partition is at its end
//       (the last stable offset), or the timeout; prints COUNT <records> <distinct id headers> <records without an
//       id header>, exits 0 when the distinct ids reach N (1 otherwise).
//   bench-kafka visibility --bootstrap B --count N [--timeout-ms T] [--fetch-wait-ms W] TOPIC...
//       The latency consumer: assigns the topics from the beginning with isolation.level=read_committed, prints
//       READY once every partition has been fetched to its end (so it is fetching before the load starts), then
//       for each record notes the local wall-clock time it was received. At N records (or the timeout) prints one
//       line per record, "<received unix us> <timestamp ms> <timestamp type a|c|n> <payload ts_us>" (ts_us: the
//       payload's "ts_us" field, -1 when absent), then DONE <records>; exits 0 when it got N.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "bench-kafka: %s\n", msg.c_str());
  std::exit(2);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Args {
  std::string bootstrap;
  long long target = -1;
  long long count = -1;
  int timeout_ms = 60000;
  int interval_ms = 50;
  int fetch_wait_ms = 10;
  int partitions = 1;
  std::vector<std::pair<std::string, std::string>> configs;
  std::vector<std::string> topics;  // positional, or --topic
};

Args Parse(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + s);
      return argv[++i];
    };
    if (s == "--bootstrap") a.bootstrap = next();
    else if (s == "--target") a.target = std::atoll(next().c_str());
    else if (s == "--count") a.count = std::atoll(next().c_str());
    else if (s == "--timeout-ms") a.timeout_ms = std::atoi(next().c_str());
    else if (s == "--interval-ms") a.interval_ms = std::atoi(next().c_str());
    else if (s == "--fetch-wait-ms") a.fetch_wait_ms = std::atoi(next().c_str());
    else if (s == "--partitions") a.partitions = std::atoi(next().c_str());
    else if (s == "--topic") a.topics.push_back(next());
    else if (s == "--config") {
      std::string kv = next();
      auto eq = kv.find('=');
      if (eq == std::string::npos) Die("--config wants k=v");
      a.configs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else if (!s.empty() && s[0] == '-') Die("unknown option " + s);
    else a.topics.push_back(s);
  }
  return a;
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

rd_kafka_t* NewClient(rd_kafka_type_t type, const std::string& bootstrap, bool consumer_group = false,
                      const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* k, const char* v) {
    if (rd_kafka_conf_set(conf, k, v, errstr, sizeof errstr) != RD_KAFKA_CONF_OK) Die(errstr);
  };
  if (!bootstrap.empty()) set("bootstrap.servers", bootstrap.c_str());
  set("log_level", "3");
  if (consumer_group) {
    set("group.id", "bench-kafka");
    set("enable.auto.commit", "false");
    set("fetch.wait.max.ms", "100");
  }
  for (const auto& [k, v] : extra) set(k.c_str(), v.c_str());
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) Die(errstr);
  return rk;
}

int Mock(const Args& a) {
  rd_kafka_t* rk = NewClient(RD_KAFKA_PRODUCER, "");
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, 1);
  if (mc == nullptr) Die("rd_kafka_mock_cluster_new failed");
  for (const std::string& t : a.topics) {
    std::string name = t;
    int parts = 1;
    if (auto c = t.rfind(':'); c != std::string::npos) {
      name = t.substr(0, c);
      parts = std::atoi(t.c_str() + c + 1);
    }
    if (rd_kafka_mock_topic_create(mc, name.c_str(), parts, 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Die("rd_kafka_mock_topic_create " + name);
    }
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  std::printf("BOOTSTRAP=%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  std::fflush(stdout);
  while (!g_stop) pause();
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}

int CreateTopics(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty()) Die("create-topics needs --bootstrap and topics");
  rd_kafka_t* rk = NewClient(RD_KAFKA_PRODUCER, a.bootstrap);
  char errstr[512];
  std::vector<rd_kafka_NewTopic_t*> nts;
  for (const std::string& t : a.topics) {
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(t.c_str(), a.partitions, 1, errstr, sizeof errstr);
    if (nt == nullptr) Die(errstr);
    for (const auto& [k, v] : a.configs) rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str());
    nts.push_back(nt);
  }
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(opts, a.timeout_ms, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, nts.data(), nts.size(), opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, a.timeout_ms + 5000);
  int rc = 0;
  if (ev == nullptr) Die("CreateTopics timed out");
  if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) Die(rd_kafka_event_error_string(ev));
  size_t n = 0;
  const rd_kafka_topic_result_t** res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      std::fprintf(stderr, "bench-kafka: %s: %s\n", rd_kafka_topic_result_name(res[i]),
                   rd_kafka_topic_result_error_string(res[i]));
      rc = 1;
    }
  }
  rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_queue_destroy(q);
  for (auto* nt : nts) rd_kafka_NewTopic_destroy(nt);
  rd_kafka_destroy(rk);
  return rc;
}

// Partition counts of the topics (0 for a topic that does not exist yet).
std::vector<int> PartitionCounts(rd_kafka_t* rk, const std::vector<std::string>& topics, int timeout_ms) {
  std::vector<int> counts;
  for (const std::string& t : topics) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, t.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    int parts = 0;
    if (rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
        md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      parts = md->topics[0].partition_cnt;
    }
    if (md) rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    counts.push_back(parts);
  }
  return counts;
}

int WaitCount(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty() || a.target < 0) Die("wait-count needs --bootstrap, --target, topics");
  rd_kafka_t* rk = NewClient(RD_KAFKA_CONSUMER, a.bootstrap, true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.timeout_ms);
  std::vector<int> parts = PartitionCounts(rk, a.topics, 5000);
  long long total = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    total = 0;
    for (size_t i = 0; i < a.topics.size(); ++i) {
      for (int p = 0; p < parts[i]; ++p) {
        int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(rk, a.topics[i].c_str(), p, &lo, &hi, 2000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR) {
          total += hi;
        }
      }
    }
    if (total >= a.target) {
      std::printf("REACHED %lld %lld\n", static_cast<long long>(NowMs()), total);
      rd_kafka_destroy(rk);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(a.interval_ms));
  }
  std::printf("TIMEOUT %lld\n", total);
  rd_kafka_destroy(rk);
  return 1;
}

int Counts(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty()) Die("counts needs --bootstrap and topics");
  rd_kafka_t* rk = NewClient(RD_KAFKA_CONSUMER, a.bootstrap, true);
  std::vector<int> parts = PartitionCounts(rk, a.topics, 5000);
  for (size_t i = 0; i < a.topics.size(); ++i) {
    for (int p = 0; p < parts[i]; ++p) {
      int64_t lo = 0, hi = -1;
      rd_kafka_query_watermark_offsets(rk, a.topics[i].c_str(), p, &lo, &hi, 5000);
      std::printf("%s %d %lld\n", a.topics[i].c_str(), p, static_cast<long long>(hi));
    }
  }
  rd_kafka_destroy(rk);
  return 0;
}

void JsonString(std::string* out, const char* p, size_t n) {
  out->push_back('"');
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

int Dump(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty()) Die("dump needs --bootstrap and topics");
  rd_kafka_t* rk = NewClient(RD_KAFKA_CONSUMER, a.bootstrap, true);
  std::vector<int> parts = PartitionCounts(rk, a.topics, 5000);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(16);
  for (size_t i = 0; i < a.topics.size(); ++i) {
    for (int p = 0; p < parts[i]; ++p) {
      rd_kafka_topic_partition_list_add(list, a.topics[i].c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.timeout_ms);
  long long seen = 0;
  std::string line;
  while ((a.count < 0 || seen < a.count) && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++seen;
      rd_kafka_timestamp_type_t tstype;
      int64_t ts = rd_kafka_message_timestamp(m, &tstype);
      line.clear();
      line += "{\"topic\":";
      const char* tn = rd_kafka_topic_name(m->rkt);
      JsonString(&line, tn, std::strlen(tn));
      line += ",\"partition\":" + std::to_string(m->partition) + ",\"offset\":" + std::to_string(m->offset);
      line += std::string(",\"tstype\":\"") +
              (tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? "append"
               : tstype == RD_KAFKA_TIMESTAMP_CREATE_TIME  ? "create"
                                                           : "none") +
              "\",\"ts\":" + std::to_string(ts) + ",\"key\":";
      if (m->key) JsonString(&line, static_cast<const char*>(m->key), m->key_len);
      else line += "null";
      line += ",\"headers\":[";
      rd_kafka_headers_t* hdrs = nullptr;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
          if (i) line += ",";
          line += "[";
          JsonString(&line, name, std::strlen(name));
          line += ",";
          if (val) JsonString(&line, static_cast<const char*>(val), size);
          else line += "null";
          line += "]";
        }
      }
      line += "],\"value\":";
      if (m->payload) JsonString(&line, static_cast<const char*>(m->payload), m->len);
      else line += "null";
      line += "}\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
    rd_kafka_message_destroy(m);
  }
  std::fflush(stdout);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return a.count < 0 || seen >= a.count ? 0 : 1;
}


// Assigns every partition of the topics from the beginning; returns the number of partitions.
int AssignFromBeginning(rd_kafka_t* rk, const std::vector<std::string>& topics) {
  std::vector<int> parts = PartitionCounts(rk, topics, 5000);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(16);
  int n = 0;
  for (size_t i = 0; i < topics.size(); ++i) {
    if (parts[i] == 0) Die("topic " + topics[i] + " has no partitions (does it exist?)");
    for (int p = 0; p < parts[i]; ++p, ++n) {
      rd_kafka_topic_partition_list_add(list, topics[i].c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  if (rd_kafka_assign(rk, list) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
  return n;
}

std::string PartitionKey(const rd_kafka_message_t* m) {
  return std::string(rd_kafka_topic_name(m->rkt)) + "/" + std::to_string(m->partition);
}

int CountCommitted(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty() || a.target < 0) {
    Die("count-committed needs --bootstrap, --target, topics");
  }
  rd_kafka_t* rk = NewClient(RD_KAFKA_CONSUMER, a.bootstrap, true,
                             {{"isolation.level", "read_committed"}, {"enable.partition.eof", "true"}});
  const int partitions = AssignFromBeginning(rk, a.topics);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.timeout_ms);
  std::unordered_set<std::string> at_end, ids;
  long long records = 0, without_id = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (records >= a.target && static_cast<int>(at_end.size()) == partitions) break;
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(PartitionKey(m));
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      at_end.erase(PartitionKey(m));
      ++records;
      rd_kafka_headers_t* hdrs = nullptr;
      const void* val = nullptr;
      size_t size = 0;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          rd_kafka_header_get_last(hdrs, "id", &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR && val != nullptr) {
        ids.emplace(static_cast<const char*>(val), size);
      } else {
        ++without_id;
      }
    }
    rd_kafka_message_destroy(m);
  }
  std::printf("COUNT %lld %zu %lld\n", records, ids.size(), without_id);
  std::fflush(stdout);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return static_cast<long long>(ids.size()) >= a.target ? 0 : 1;
}

// The payload's "ts_us" number (jsonb prints `"ts_us": 123`), -1 when absent.
long long PayloadTsUs(const rd_kafka_message_t* m) {
  if (m->payload == nullptr) return -1;
  const std::string_view v(static_cast<const char*>(m->payload), m->len);
  constexpr std::string_view kField = "\"ts_us\":";
  const size_t at = v.find(kField);
  if (at == std::string_view::npos) return -1;
  size_t i = at + kField.size();
  while (i < v.size() && v[i] == ' ') ++i;
  long long x = 0;
  bool any = false;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i, any = true) x = x * 10 + (v[i] - '0');
  return any ? x : -1;
}

int Visibility(const Args& a) {
  if (a.bootstrap.empty() || a.topics.empty() || a.count < 0) Die("visibility needs --bootstrap, --count, topics");
  // Fetches return as soon as anything is readable; fetch.wait.max.ms bounds the wait when nothing is.
  rd_kafka_t* rk = NewClient(RD_KAFKA_CONSUMER, a.bootstrap, true,
                             {{"isolation.level", "read_committed"},
                              {"enable.partition.eof", "true"},
                              {"fetch.wait.max.ms", std::to_string(a.fetch_wait_ms)},
                              {"fetch.error.backoff.ms", "10"}});
  const int partitions = AssignFromBeginning(rk, a.topics);
  struct Seen {
    int64_t received_us;
    int64_t ts_ms;
    char tstype;
    long long ts_us;
  };
  std::vector<Seen> seen;
  seen.reserve(static_cast<size_t>(a.count));
  std::unordered_set<std::string> at_end;
  bool ready = false;
  const auto ready_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.timeout_ms);
  while (static_cast<long long>(seen.size()) < a.count && std::chrono::steady_clock::now() < deadline) {
    if (!ready && (static_cast<int>(at_end.size()) == partitions || std::chrono::steady_clock::now() > ready_deadline)) {
      ready = true;
      std::printf("READY %d\n", static_cast<int>(at_end.size()));
      std::fflush(stdout);
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    const int64_t now = NowUs();
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(PartitionKey(m));
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_timestamp_type_t tstype;
      const int64_t ts = rd_kafka_message_timestamp(m, &tstype);
      seen.push_back({now, ts,
                      tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? 'a'
                      : tstype == RD_KAFKA_TIMESTAMP_CREATE_TIME  ? 'c'
                                                                  : 'n',
                      PayloadTsUs(m)});
    }
    rd_kafka_message_destroy(m);
  }
  if (!ready) std::printf("READY %d\n", static_cast<int>(at_end.size()));
  for (const Seen& s : seen) {
    std::printf("%lld %lld %c %lld\n", static_cast<long long>(s.received_us), static_cast<long long>(s.ts_ms),
                s.tstype, s.ts_us);
  }
  std::printf("DONE %zu\n", seen.size());
  std::fflush(stdout);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return static_cast<long long>(seen.size()) >= a.count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Die("usage: bench-kafka mock|create-topics|wait-count|counts|dump|count-committed|visibility|version ...");
  std::string cmd = argv[1];
  Args a = Parse(argc, argv, 2);
  if (cmd == "mock") return Mock(a);
  if (cmd == "create-topics") return CreateTopics(a);
  if (cmd == "wait-count") return WaitCount(a);
  if (cmd == "dump") return Dump(a);
  if (cmd == "counts") return Counts(a);
  if (cmd == "count-committed") return CountCommitted(a);
  if (cmd == "visibility") return Visibility(a);
  if (cmd == "version") {
    std::printf("%s\n", rd_kafka_version_str());
    return 0;
  }
  Die("unknown subcommand " + cmd);
}
