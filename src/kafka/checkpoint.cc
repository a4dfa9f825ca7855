// Checkpoint codec, Kafka reader and file store.
#include "common/strings.h"
#include "kafka/checkpoint.h"
#include "kafka/sink.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace outbox::kafka {

namespace {

// The checkpoint reader only assigns partitions and commits nothing: its group has nothing to leave. Closing it
// as a group member waited up to a second (a coordinator query in flight) in about one read of six.
struct RkDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE); }
};
using Rk = std::unique_ptr<rd_kafka_t, RkDeleter>;

// A client of `type` with only the connection-related keys of the producer configuration.
absl::StatusOr<Rk> NewClient(rd_kafka_type_t type, const std::map<std::string, std::string>& kafka_conf,
                             rd_kafka_resp_err_t* delivery_error = nullptr, bool read_committed = false) {
  char errstr[512];
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  InstallLogCallback(c);
  if (delivery_error != nullptr) {
    rd_kafka_conf_set(c, "acks", "all", errstr, sizeof errstr);
    rd_kafka_conf_set_opaque(c, delivery_error);
    rd_kafka_conf_set_dr_msg_cb(c, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      *static_cast<rd_kafka_resp_err_t*>(opaque) = m->err;
    });
  }
  // Once the bootstrap connection has told the client the cluster's brokers, librdkafka 2.x drops that connection,
  // and a request of ours that went out on it is retried on a new one only after the sparse-connection pause
  // (half of reconnect.backoff.ms): 50 ms by default, in one start of two. These clients live for one request or
  // read, so they retry after about 11 ms, librdkafka's floor (the backoff still doubles up to
  // reconnect.backoff.max.ms while a broker is down).
  rd_kafka_conf_set(c, "reconnect.backoff.ms", "10", errstr, sizeof errstr);
  std::map<std::string, std::string> connection;
  for (const auto& [key, value] : kafka_conf) {
    if (key == "bootstrap.servers" || key == "metadata.broker.list" || absl::StartsWith(key, "security.") ||
        absl::StartsWith(key, "ssl.") || absl::StartsWith(key, "sasl.") || key == "client.id" ||
        key == "broker.address.family") {
      connection.emplace(key, value);
    }
  }
  if (absl::Status st = ApplyConf(c, connection); !st.ok()) {
    rd_kafka_conf_destroy(c);
    return st;
  }
  if (type == RD_KAFKA_CONSUMER) {
    rd_kafka_conf_set(c, "enable.partition.eof", "true", errstr, sizeof errstr);
    // The reader stops at the high watermark it asked for; a short fetch wait keeps the last fetch from idling.
    rd_kafka_conf_set(c, "fetch.wait.max.ms", "10", errstr, sizeof errstr);
    rd_kafka_conf_set(c, "enable.auto.commit", "false", errstr, sizeof errstr);
    rd_kafka_conf_set(c, "group.id", "outbox-relay-checkpoint-reader", errstr, sizeof errstr);
    rd_kafka_conf_set(c, "isolation.level", read_committed ? "read_committed" : "read_uncommitted", errstr,
                      sizeof errstr);
  }
  rd_kafka_t* rk = rd_kafka_new(type, c, errstr, sizeof errstr);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(c);
    return absl::InvalidArgumentError(Cat("kafka: ", errstr));
  }
  return Rk(rk);
}

}  // namespace

absl::StatusOr<SlotCheckpoints> ReadKafkaCheckpoint(const std::map<std::string, std::string>& kafka_conf,
                                                    const std::string& topic, const std::string& slot,
                                                    const std::string& system_id, int timeout_ms, ReadUntil until) {
  const bool committed = until == ReadUntil::kCommittedToHighWatermark;
  auto rk = NewClient(RD_KAFKA_CONSUMER, kafka_conf, nullptr, committed);
  if (!rk.ok()) return rk.status();
  // A read_committed client's ListOffsets answers the last stable offset, not the high watermark: the high
  // watermark comes from a read_uncommitted one.
  auto watermarks = committed ? NewClient(RD_KAFKA_CONSUMER, kafka_conf) : absl::StatusOr<Rk>(Rk(nullptr));
  if (!watermarks.ok()) return watermarks.status();
  rd_kafka_t* offsets_client = committed ? watermarks->get() : rk->get();
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk->get(), topic.c_str(), nullptr);
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk->get(), 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(Cat("reading checkpoint topic \"", topic, "\": ", rd_kafka_err2str(err)));
  }
  std::vector<int32_t> partitions;
  bool missing = md->topic_cnt == 0 || md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  if (!missing) {
    for (int i = 0; i < md->topics[0].partition_cnt; ++i) partitions.push_back(md->topics[0].partitions[i].id);
  }
  rd_kafka_metadata_destroy(md);
  if (missing || partitions.empty()) return SlotCheckpoints{};

  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  int open = 0;
  std::map<int32_t, int64_t> last_offset;  // per partition: the offset of its last record when the read began
  for (int32_t p : partitions) {
    int64_t low = 0, high = 0;
    err = rd_kafka_query_watermark_offsets(offsets_client, topic.c_str(), p, &low, &high, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_partition_list_destroy(assignment);
      return absl::UnavailableError(Cat("checkpoint topic offsets: ", rd_kafka_err2str(err)));
    }
    if (high > low) {
      rd_kafka_topic_partition_list_add(assignment, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
      last_offset[p] = high - 1;
      ++open;
    }
  }
  SlotCheckpoints found;
  if (open > 0) {
    rd_kafka_assign(rk->get(), assignment);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    const std::string suffix = Cat("/", slot, "/");
    while (open > 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        rd_kafka_topic_partition_list_destroy(assignment);
        if (!committed) return absl::UnavailableError("reading the checkpoint topic timed out");
        // Where each unfinished partition stands: its last stable offset (a read_committed ListOffsets) is where the
        // oldest open transaction began.
        std::string stuck;
        std::optional<std::pair<int32_t, int64_t>> example;
        for (const auto& [partition, last] : last_offset) {
          int64_t low = 0, stable = -1;
          if (rd_kafka_query_watermark_offsets(rk->get(), topic.c_str(), partition, &low, &stable, 2000) !=
              RD_KAFKA_RESP_ERR_NO_ERROR) {
            stable = -1;
          }
          stuck += Cat(stuck.empty() ? "" : ", ", "partition ", partition, ": last stable offset ",
                       stable >= 0 ? Cat(stable) : std::string("unknown"), ", high watermark ", last + 1);
          if (!example && stable >= 0 && stable <= last) example = {partition, stable};
        }
        const int32_t partition = example ? example->first : 0;
        return absl::UnavailableError(Cat(
            "reading the checkpoint topic ", topic, " timed out: a transaction open on it holds its last stable offset "
            "back (", stuck, "). Another pipeline's transaction ends within its transaction.timeout.ms; one that "
            "nothing will end (a hanging transaction) shows in kafka-transactions.sh describe-producers --topic ", topic,
            " --partition ", partition, example ? Cat(", starting at offset ", example->second) : std::string(),
            ": read 'A hanging transaction on the checkpoint topic' in docs/failure-modes.md before ending it"));
      }
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk->get(), 100);
      if (m == nullptr) continue;
      // A partition is done at its end of file, or once its record at the high watermark's offset was read
      // (compaction may have removed that very record: then the end of file ends it).
      const auto done = [&](int32_t partition) {
        if (last_offset.erase(partition) > 0) --open;
      };
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // read_committed: the end is the last stable offset, behind the high watermark while a transaction is open
        // (the next end of file comes once it is decided). Transaction markers take offsets and are never read.
        auto it = last_offset.find(m->partition);
        if (!committed || (it != last_offset.end() && m->offset > it->second)) done(m->partition);
      } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->key != nullptr && m->payload != nullptr) {
        std::string_view key(static_cast<const char*>(m->key), m->key_len);
        if (key.find(suffix) != std::string_view::npos) {
          auto c = DecodeCheckpoint(std::string_view(static_cast<const char*>(m->payload), m->len));
          if (c.ok()) AddCheckpoint(*c, system_id, slot, &found);
        }
      }
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        auto it = last_offset.find(m->partition);
        if (it != last_offset.end() && m->offset >= it->second) done(m->partition);
      }
      rd_kafka_message_destroy(m);
    }
  }
  rd_kafka_topic_partition_list_destroy(assignment);
  return found;
}

absl::Status EnsureCheckpointTopic(const std::map<std::string, std::string>& kafka_conf, const std::string& topic,
                                   int timeout_ms) {
  auto rk = NewClient(RD_KAFKA_PRODUCER, kafka_conf);
  if (!rk.ok()) return rk.status();
  // An existing topic needs no CreateTopics permission (a list of all topics does not auto-create any).
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t merr = rd_kafka_metadata(rk->get(), 1, nullptr, &md, timeout_ms);
  if (merr != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(Cat("checkpoint topic \"", topic, "\": metadata: ", rd_kafka_err2str(merr)));
  }
  bool exists = false;
  for (int i = 0; i < md->topic_cnt; ++i) exists = exists || topic == md->topics[i].topic;
  rd_kafka_metadata_destroy(md);
  if (exists) return absl::OkStatus();
  char errstr[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), 1, -1, errstr, sizeof errstr);
  if (nt == nullptr) return absl::InvalidArgumentError(Cat("source.checkpoint_topic: ", errstr));
  rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk->get());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk->get(), &nt, 1, opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
  absl::Status status = absl::OkStatus();
  if (ev == nullptr) {
    status = absl::UnavailableError("creating the checkpoint topic timed out");
  } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = absl::UnavailableError(Cat("creating the checkpoint topic: ", rd_kafka_event_error_string(ev)));
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    for (size_t i = 0; i < n; ++i) {
      rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status = absl::UnavailableError(Cat("creating the checkpoint topic \"", topic, "\": ",
                                                     rd_kafka_topic_result_error_string(results[i])));
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  return status;
}

absl::Status WriteKafkaCheckpoint(const std::map<std::string, std::string>& kafka_conf, const std::string& topic,
                                  const Checkpoint& c, int timeout_ms) {
  rd_kafka_resp_err_t delivery = RD_KAFKA_RESP_ERR__IN_PROGRESS;
  auto rk = NewClient(RD_KAFKA_PRODUCER, kafka_conf, &delivery);
  if (!rk.ok()) return rk.status();
  const std::string key = CheckpointKey(c);
  const std::string value = EncodeCheckpoint(c);
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk->get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(Cat("writing the checkpoint: ", rd_kafka_err2str(err)));
  }
  if (rd_kafka_flush(rk->get(), timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR || rd_kafka_outq_len(rk->get()) > 0) {
    return absl::UnavailableError("writing the checkpoint: the broker did not acknowledge it in time");
  }
  rd_kafka_poll(rk->get(), 0);
  if (delivery != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(Cat("writing the checkpoint: ", rd_kafka_err2str(delivery)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileCheckpoint(const std::string& path, const Checkpoint& c) {
  const std::string tmp = path + ".tmp";
  const std::string data = EncodeCheckpoint(c) + "\n";
  const auto failed = [](std::string_view what, const std::string& file) {
    return absl::UnavailableError(Cat("source.checkpoint_file: cannot ", what, " ", file, ": ", std::strerror(errno)));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed("write", tmp);
  const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return failed("write", tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return failed("rename to", path);
  // The rename is durable only once its directory is: without this a crash could bring the old checkpoint back.
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return failed("open the directory", dir);
  const bool synced = ::fsync(dfd) == 0;
  ::close(dfd);
  if (!synced) return failed("sync the directory", dir);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Checkpoint>> ReadFileCheckpoint(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::optional<Checkpoint>();
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = DecodeCheckpoint(ss.str());
  if (!c.ok()) return c.status();
  return std::optional<Checkpoint>(*c);
}

}  // namespace outbox::kafka
