#include "support/kafka_reader.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "support/internal.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

KafkaRecord ToRecord(const rd_kafka_message_t* msg) {
  KafkaRecord r;
  r.topic = rd_kafka_topic_name(msg->rkt);
  r.partition = msg->partition;
  r.offset = msg->offset;
  if (msg->key != nullptr) r.key.emplace(static_cast<const char*>(msg->key), msg->key_len);
  if (msg->payload != nullptr) r.value.emplace(static_cast<const char*>(msg->payload), msg->len);
  rd_kafka_timestamp_type_t tstype = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  r.timestamp_ms = rd_kafka_message_timestamp(msg, &tstype);
  switch (tstype) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME:
      r.timestamp_type = TimestampType::kCreateTime;
      break;
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME:
      r.timestamp_type = TimestampType::kLogAppendTime;
      break;
    default:
      r.timestamp_type = TimestampType::kNotAvailable;
  }
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(msg, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != nullptr) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      KafkaHeader h;
      h.name = name;
      if (value != nullptr) h.value.emplace(static_cast<const char*>(value), size);
      r.headers.push_back(std::move(h));
    }
  }
  return r;
}

}  // namespace

const KafkaHeader* KafkaRecord::FindHeader(std::string_view name) const {
  for (const auto& h : headers) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<KafkaReader>> KafkaReader::Create(const std::string& bootstrap,
                                                                const std::map<std::string, std::string>& extra_conf) {
  std::map<std::string, std::string> conf = {
      {"bootstrap.servers", bootstrap},
      // A group id is required by the consumer API; nothing joins or commits (assign() only).
      {"group.id", UniqueName("outbox_test_reader")},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
      {"isolation.level", "read_committed"},
      {"fetch.wait.max.ms", "50"},
      {"fetch.error.backoff.ms", "50"},
      // Come back quickly after a broker restart.
      {"reconnect.backoff.ms", "50"},
      {"reconnect.backoff.max.ms", "500"},
      {"log.connection.close", "false"},
  };
  for (const auto& [k, v] : extra_conf) conf[k] = v;
  auto rk = NewKafkaClient(RD_KAFKA_CONSUMER, conf);
  if (!rk.ok()) return rk.status();
  rd_kafka_poll_set_consumer(rk->get());
  return std::unique_ptr<KafkaReader>(new KafkaReader(std::move(*rk)));
}

absl::StatusOr<std::map<std::string, int, std::less<>>> KafkaReader::PartitionCounts(
    std::chrono::milliseconds deadline) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), 1, nullptr, &md, std::max(1, static_cast<int>(deadline.count())));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("metadata: ", rd_kafka_err2str(err)));
  }
  std::map<std::string, int, std::less<>> counts;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topics[i].partition_cnt > 0) {
      counts[md->topics[i].topic] = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  return counts;
}

absl::StatusOr<int> KafkaReader::PartitionCount(std::string_view topic, std::chrono::milliseconds deadline) {
  auto counts = PartitionCounts(deadline);
  if (!counts.ok()) return counts.status();
  auto it = counts->find(topic);
  if (it == counts->end()) return absl::NotFoundError(absl::StrCat("topic ", internal::Av(topic), " does not exist"));
  return it->second;
}

absl::StatusOr<std::vector<std::string>> KafkaReader::ListTopics(std::chrono::milliseconds deadline) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), 1, nullptr, &md, std::max(1, static_cast<int>(deadline.count())));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("metadata: ", rd_kafka_err2str(err)));
  }
  std::vector<std::string> names;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) names.emplace_back(md->topics[i].topic);
  }
  rd_kafka_metadata_destroy(md);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status KafkaReader::Assign(const std::string& topic, Clock::time_point until) {
  absl::StatusOr<int> partitions = absl::NotFoundError("");
  while (true) {
    partitions = PartitionCount(topic, std::chrono::milliseconds(std::clamp(RemainingMs(until), 1, 5000)));
    if (partitions.ok()) break;
    if (RemainingMs(until) == 0) {
      return absl::DeadlineExceededError(absl::StrCat("topic ", topic, " did not appear: ", partitions.status().message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(RemainingMs(until), 20)));
  }
  if (!Track(topic, *partitions)) return absl::OkStatus();
  return AssignTracked();
}

bool KafkaReader::Track(const std::string& topic, int partitions) {
  TopicState& state = topics_[topic];
  if (state.partitions >= partitions) return false;
  state.partitions = partitions;
  state.next_offset.resize(static_cast<size_t>(partitions), RD_KAFKA_OFFSET_BEGINNING);
  return true;
}

absl::Status KafkaReader::AssignTracked() {
  // assign() replaces the whole assignment: list every topic, at the offsets to continue from.
  PartitionList list(rd_kafka_topic_partition_list_new(8));
  for (const auto& [name, st] : topics_) {
    for (int p = 0; p < st.partitions; ++p) {
      rd_kafka_topic_partition_list_add(list.get(), name.c_str(), p)->offset = st.next_offset[static_cast<size_t>(p)];
    }
  }
  if (rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get()); err) {
    return absl::InternalError(absl::StrCat("assign: ", rd_kafka_err2str(err)));
  }
  return absl::OkStatus();
}

void KafkaReader::PollOnce(std::chrono::milliseconds max_wait) {
  int wait = static_cast<int>(max_wait.count());
  for (int i = 0; i < 100000; ++i) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk_.get(), i == 0 ? wait : 0);
    if (msg == nullptr) return;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        last_error_ = rd_kafka_message_errstr(msg);
      }
    } else {
      KafkaRecord record = ToRecord(msg);
      auto it = topics_.find(record.topic);
      if (it != topics_.end() && record.partition >= 0 &&
          static_cast<size_t>(record.partition) < it->second.next_offset.size()) {
        it->second.next_offset[static_cast<size_t>(record.partition)] = record.offset + 1;
        it->second.records.push_back(std::move(record));
      }
    }
    rd_kafka_message_destroy(msg);
  }
}

absl::StatusOr<std::vector<KafkaRecord>> KafkaReader::ReadUntil(std::string_view topic, const Predicate& done,
                                                                std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  std::string name(topic);
  if (absl::Status s = Assign(name, until); !s.ok()) return s;
  while (true) {
    const TopicState& state = topics_[name];
    if (done(state.records)) return state.records;
    if (RemainingMs(until) == 0) {
      return absl::DeadlineExceededError(absl::StrCat("reading ", name, ": the condition did not hold after ",
                                                      state.records.size(), " records in ", deadline.count(), " ms",
                                                      last_error_.empty() ? "" : "; last consumer error: ",
                                                      last_error_));
    }
    PollOnce(std::chrono::milliseconds(std::min(RemainingMs(until), 100)));
  }
}

absl::StatusOr<std::vector<KafkaRecord>> KafkaReader::ReadUntil(std::string_view topic, size_t count,
                                                                std::chrono::milliseconds deadline) {
  return ReadUntil(
      topic, [count](const std::vector<KafkaRecord>& records) { return records.size() >= count; }, deadline);
}

absl::StatusOr<int64_t> KafkaReader::EndOffset(std::string_view topic, int partition,
                                               std::chrono::milliseconds deadline) {
  const std::string name(topic);
  int64_t low = 0;
  int64_t high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk_.get(), name.c_str(), partition, &low, &high,
                                                             static_cast<int>(deadline.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("end offset of ", name, "[", partition, "]: ", rd_kafka_err2str(err)));
  }
  return high;
}

absl::StatusOr<std::vector<KafkaRecord>> KafkaReader::ReadAll(std::string_view topic,
                                                              std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  std::string name(topic);
  if (absl::Status s = Assign(name, until); !s.ok()) return s;
  const int partitions = topics_[name].partitions;
  std::vector<int64_t> low(static_cast<size_t>(partitions), 0);
  std::vector<int64_t> high(static_cast<size_t>(partitions), 0);
  for (int p = 0; p < partitions; ++p) {
    int64_t lo = 0;
    int64_t hi = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk_.get(), name.c_str(), p, &lo, &hi,
                                                               std::clamp(RemainingMs(until), 1, 10000));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::UnavailableError(absl::StrCat("watermarks of ", name, "[", p, "]: ", rd_kafka_err2str(err)));
    }
    low[static_cast<size_t>(p)] = lo;
    high[static_cast<size_t>(p)] = hi;
  }
  auto caught_up = [&](const std::vector<KafkaRecord>&) {
    PartitionList list(rd_kafka_topic_partition_list_new(partitions));
    for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list.get(), name.c_str(), p);
    rd_kafka_position(rk_.get(), list.get());
    const TopicState& state = topics_[name];
    for (int p = 0; p < partitions; ++p) {
      const auto i = static_cast<size_t>(p);
      if (high[i] <= low[i]) continue;  // empty
      int64_t pos = std::max(list->elems[p].offset, state.next_offset[i]);
      if (pos < high[i]) return false;
    }
    return true;
  };
  return ReadUntil(name, caught_up, std::chrono::milliseconds(std::max(RemainingMs(until), 0)));
}

absl::Status KafkaReader::ReadEachUntil(const std::vector<std::string>& topics, size_t count,
                                        std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  size_t missing = topics.size();
  while (missing > 0) {
    auto counts = PartitionCounts(std::chrono::milliseconds(std::clamp(RemainingMs(until), 1, 5000)));
    missing = 0;
    bool changed = false;
    for (const std::string& topic : topics) {
      auto it = counts.ok() ? counts->find(topic) : counts->end();
      if (counts.ok() && it != counts->end()) {
        changed = Track(topic, it->second) || changed;
      } else {
        ++missing;
      }
    }
    if (changed) {
      if (absl::Status s = AssignTracked(); !s.ok()) return s;
    }
    if (missing == 0) break;
    if (RemainingMs(until) == 0) {
      return absl::DeadlineExceededError(absl::StrCat(missing, " of ", topics.size(), " topics did not appear"));
    }
    PollOnce(std::chrono::milliseconds(std::min(RemainingMs(until), 100)));
  }
  while (true) {
    size_t short_of = 0;
    for (const std::string& topic : topics) short_of += topics_[topic].records.size() < count ? 1 : 0;
    if (short_of == 0) return absl::OkStatus();
    if (RemainingMs(until) == 0) {
      return absl::DeadlineExceededError(absl::StrCat(short_of, " of ", topics.size(), " topics hold fewer than ",
                                                      count, " records", last_error_.empty() ? "" : "; last consumer error: ",
                                                      last_error_));
    }
    PollOnce(std::chrono::milliseconds(std::min(RemainingMs(until), 100)));
  }
}

const std::vector<KafkaRecord>& KafkaReader::Records(std::string_view topic) {
  static const std::vector<KafkaRecord> kEmpty;
  auto it = topics_.find(topic);
  return it == topics_.end() ? kEmpty : it->second.records;
}

}  // namespace outbox::testing
