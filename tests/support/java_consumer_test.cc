// Kafka's own console consumer as a read_committed reader (support/java_consumer.h), against the shared broker:
// records written by librdkafka, plain and in aborted and committed transactions, read back field by field.
#include "support/java_consumer.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Message {
  std::optional<std::string> key;    // nullopt: a null key
  std::optional<std::string> value;  // nullopt: a null value
  std::vector<KafkaHeader> headers;
};

void CountFailure(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  if (msg->err) static_cast<std::atomic<int>*>(opaque)->fetch_add(1);
}

// A librdkafka producer (idempotent; transactional with a transactional id) whose failed deliveries are counted.
struct Producer {
  std::atomic<int> failed{0};
  RdKafkaPtr rk;
};

std::unique_ptr<Producer> NewProducer(const std::string& bootstrap, const std::string& transactional_id = "") {
  auto producer = std::make_unique<Producer>();
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  std::vector<std::pair<std::string, std::string>> settings = {{"bootstrap.servers", bootstrap},
                                                               {"enable.idempotence", "true"}};
  if (!transactional_id.empty()) settings.emplace_back("transactional.id", transactional_id);
  for (const auto& [k, v] : settings) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << k << ": " << errstr;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, CountFailure);
  rd_kafka_conf_set_opaque(conf, &producer->failed);
  producer->rk.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr)));
  if (producer->rk == nullptr) {
    ADD_FAILURE() << errstr;
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  return producer;
}

// "" for no error, else its text (the error is destroyed).
std::string TxnError(rd_kafka_error_t* error) {
  if (error == nullptr) return "";
  std::string text = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  return text;
}

// Produces to partition 0 and waits until every message is acknowledged.
void Send(Producer& producer, const std::string& topic, const std::vector<Message>& messages) {
  for (const Message& m : messages) {
    rd_kafka_headers_t* headers = rd_kafka_headers_new(m.headers.size());
    for (const KafkaHeader& h : m.headers) {
      rd_kafka_header_add(headers, h.name.c_str(), -1, h.value ? h.value->data() : nullptr,
                          h.value ? static_cast<ssize_t>(h.value->size()) : 0);
    }
    // A null pointer makes a null key or value; a pointer with size 0 an empty one.
    const void* key = m.key ? m.key->data() : nullptr;
    const size_t key_size = m.key ? m.key->size() : 0;
    void* value = m.value ? const_cast<char*>(m.value->data()) : nullptr;
    const size_t value_size = m.value ? m.value->size() : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer.rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_KEY(key, key_size),
        RD_KAFKA_V_VALUE(value, value_size), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err) rd_kafka_headers_destroy(headers);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }
  ASSERT_EQ(rd_kafka_flush(producer.rk.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(producer.failed.load(), 0);
}

Message Plain(std::string value) { return Message{std::nullopt, std::move(value), {}}; }

// Every field KafkaRecord has, for comparing two readers' records.
auto Fields(const KafkaRecord& r) {
  return std::tie(r.topic, r.partition, r.offset, r.key, r.value, r.headers, r.timestamp_ms, r.timestamp_type);
}

// Polls until `into` holds at least `count` records or `deadline` passes.
bool PollForCount(JavaCommittedConsumer& consumer, std::vector<TimedKafkaRecord>& into, size_t count,
                  milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (into.size() < count && std::chrono::steady_clock::now() < until) {
    for (TimedKafkaRecord& r : consumer.Poll(milliseconds(100))) into.push_back(std::move(r));
  }
  return into.size() >= count;
}

TEST(JavaConsumerTest, ReadCommittedJavaReturnsCommittedRecordsWithEveryFieldAndNoAbortedOne) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueName("java_committed");
  const std::string other = UniqueName("java_other");
  ASSERT_TRUE(kafka->CreateTopics({topic, other}, 1).ok());

  // Offsets 0-2: plain records with what the formatter has to keep apart: null and empty keys and header values,
  // a null value and the JSON text null, a header value holding ':', repeated header names, no headers, and a
  // header name outside ASCII (the JVM prints names in its stdout charset).
  auto plain = NewProducer(kafka->bootstrap());
  ASSERT_NE(plain, nullptr);
  Send(*plain, topic,
       {Message{"k0", R"({"n":0,"s":"a:b"})",
                {{"id", "h0"}, {"empty", ""}, {"null", std::nullopt}, {"ключ", "é"}}},
        Message{std::nullopt, "null", {}},
        Message{"", std::nullopt, {{"dup", "a"}, {"dup", "b:c"}}}});
  // Offsets 3-4 aborted (5 its marker), 6-7 committed (8 its marker).
  auto txn = NewProducer(kafka->bootstrap(), UniqueName("txn"));
  ASSERT_NE(txn, nullptr);
  ASSERT_EQ(TxnError(rd_kafka_init_transactions(txn->rk.get(), 30000)), "");
  ASSERT_EQ(TxnError(rd_kafka_begin_transaction(txn->rk.get())), "");
  Send(*txn, topic, {Message{"a0", R"({"aborted":0})", {{"txn", "aborted"}}}, Message{"a1", R"({"aborted":1})", {}}});
  ASSERT_EQ(TxnError(rd_kafka_abort_transaction(txn->rk.get(), 30000)), "");
  ASSERT_EQ(TxnError(rd_kafka_begin_transaction(txn->rk.get())), "");
  Send(*txn, topic,
       {Message{"c0", R"({"committed":0})", {{"txn", "committed"}}}, Message{"c1", R"({"committed":1})", {}}});
  ASSERT_EQ(TxnError(rd_kafka_commit_transaction(txn->rk.get(), 30000)), "");
  Send(*plain, other, {Plain(R"({"other":0})")});

  const auto started = std::chrono::steady_clock::now();
  auto records = ReadCommittedJava(kafka->bootstrap(), {topic, other}, 6, seconds(90));
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  ASSERT_TRUE(records.ok()) << records.status();
  std::cout << "ReadCommittedJava of 2 topics took " << took.count() << " ms (3 s of it the idle wait)\n";
  ASSERT_EQ(records->size(), 6u);

  std::vector<int64_t> offsets;
  for (size_t i = 0; i < 5; ++i) {
    const KafkaRecord& r = (*records)[i];
    EXPECT_EQ(r.topic, topic);
    EXPECT_EQ(r.partition, 0);
    offsets.push_back(r.offset);
    EXPECT_THAT(r.value.value_or(""), ::testing::Not(HasSubstr("aborted")));
    EXPECT_EQ(r.timestamp_type, TimestampType::kCreateTime);
    EXPECT_GT(r.timestamp_ms, 0);
  }
  EXPECT_THAT(offsets, ElementsAre(0, 1, 2, 6, 7));
  const std::vector<KafkaRecord>& r = *records;
  EXPECT_EQ(r[0].key, "k0");
  EXPECT_EQ(r[0].value, R"({"n":0,"s":"a:b"})");
  EXPECT_THAT(r[0].headers, ElementsAre(KafkaHeader{"id", "h0"}, KafkaHeader{"empty", ""},
                                        KafkaHeader{"null", std::nullopt}, KafkaHeader{"ключ", "é"}));
  EXPECT_EQ(r[1].key, std::nullopt);
  EXPECT_EQ(r[1].value, "null");
  EXPECT_TRUE(r[1].headers.empty());
  EXPECT_EQ(r[2].key, "");
  EXPECT_EQ(r[2].value, std::nullopt);
  EXPECT_THAT(r[2].headers, ElementsAre(KafkaHeader{"dup", "a"}, KafkaHeader{"dup", "b:c"}));
  EXPECT_EQ(r[3].key, "c0");
  EXPECT_EQ(r[3].value, R"({"committed":0})");
  EXPECT_THAT(r[3].headers, ElementsAre(KafkaHeader{"txn", "committed"}));
  EXPECT_EQ(r[4].key, "c1");
  EXPECT_EQ(r[4].value, R"({"committed":1})");
  EXPECT_EQ(r[5].topic, other);
  EXPECT_EQ(r[5].value, R"({"other":0})");

  // librdkafka's read_committed reader reads the very same records.
  auto reader = KafkaReader::Create(kafka->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto librdkafka = (*reader)->ReadAll(topic, seconds(30));
  ASSERT_TRUE(librdkafka.ok()) << librdkafka.status();
  ASSERT_EQ(librdkafka->size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(Fields(r[i]), Fields((*librdkafka)[i])) << "record " << i;
}

TEST(JavaConsumerTest, ReadCommittedJavaReportsAConsumerThatExitedByItself) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  // The broker refuses the name; the console consumer logs InvalidTopicException and exits.
  auto records = ReadCommittedJava(kafka->bootstrap(), {"not a topic!"}, 1, seconds(60));
  EXPECT_EQ(records.status().code(), absl::StatusCode::kUnavailable) << records.status();
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("InvalidTopicException"));
}

TEST(JavaCommittedConsumerTest, StampsRecordsWhenReadAndHoldsBackAnOpenTransaction) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueName("java_stream");
  ASSERT_TRUE(kafka->CreateTopic(topic, 1).ok());
  auto consumer = JavaCommittedConsumer::Start(kafka->bootstrap(), topic);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  JavaCommittedConsumer& java = **consumer;
  auto txn = NewProducer(kafka->bootstrap(), UniqueName("txn"));
  auto plain = NewProducer(kafka->bootstrap());
  ASSERT_NE(txn, nullptr);
  ASSERT_NE(plain, nullptr);
  ASSERT_EQ(TxnError(rd_kafka_init_transactions(txn->rk.get(), 30000)), "");

  // A committed marker (offset 0, its commit marker 1): once it is read, the consumer is fetching.
  std::vector<TimedKafkaRecord> read;
  ASSERT_EQ(TxnError(rd_kafka_begin_transaction(txn->rk.get())), "");
  Send(*txn, topic, {Plain("marker")});
  ASSERT_EQ(TxnError(rd_kafka_commit_transaction(txn->rk.get(), 30000)), "");
  ASSERT_TRUE(PollForCount(java, read, 1, seconds(60))) << java.status() << "\n" << java.StderrTail();
  EXPECT_EQ(read[0].record.value, "marker");

  // An open transaction's record (offset 2) and a plain one after it (3): both in the log (read_uncommitted
  // sees them), neither past the last stable offset, so a read_committed consumer gets neither.
  ASSERT_EQ(TxnError(rd_kafka_begin_transaction(txn->rk.get())), "");
  Send(*txn, topic, {Plain("in-open-txn")});
  Send(*plain, topic, {Plain("after-open-txn")});
  auto uncommitted = KafkaReader::Create(kafka->bootstrap(), {{"isolation.level", "read_uncommitted"}});
  ASSERT_TRUE(uncommitted.ok()) << uncommitted.status();
  ASSERT_TRUE((*uncommitted)->ReadUntil(topic, 3, seconds(30)).ok());
  std::vector<TimedKafkaRecord> early;
  EXPECT_FALSE(PollForCount(java, early, 1, seconds(1))) << "read before the commit: " << early[0].record.offset;

  const auto committing = std::chrono::system_clock::now();
  ASSERT_EQ(TxnError(rd_kafka_commit_transaction(txn->rk.get(), 30000)), "");
  ASSERT_TRUE(PollForCount(java, read, 3, seconds(30))) << java.status() << "\n" << java.StderrTail();
  const auto polled = std::chrono::system_clock::now();
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[1].record.offset, 2);
  EXPECT_EQ(read[1].record.value, "in-open-txn");
  EXPECT_EQ(read[2].record.offset, 3);
  EXPECT_EQ(read[2].record.value, "after-open-txn");
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_GE(read[i].read_at, committing);
    EXPECT_LE(read[i].read_at, polled);
  }
  std::cout << "commit to read by the console consumer: "
            << std::chrono::duration_cast<milliseconds>(read[1].read_at - committing).count() << " ms\n";

  java.Stop();
  EXPECT_TRUE(java.status().ok()) << java.status();
  EXPECT_TRUE(java.Poll(milliseconds(0)).empty());
}

TEST(JavaCommittedConsumerTest, FromLatestSkipsRecordsProducedBeforeIt) {
  KafkaBroker* kafka = KafkaBroker::Shared();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueName("java_latest");
  ASSERT_TRUE(kafka->CreateTopic(topic, 1).ok());
  auto plain = NewProducer(kafka->bootstrap());
  ASSERT_NE(plain, nullptr);
  Send(*plain, topic, {Plain("old-0"), Plain("old-1")});

  auto consumer = JavaCommittedConsumer::Start(kafka->bootstrap(), topic, JavaCommittedConsumer::From::kLatest);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  JavaCommittedConsumer& java = **consumer;
  // Markers until one is read: those produced before the group assigned the partition are skipped too.
  std::vector<TimedKafkaRecord> read;
  int markers = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        Send(*plain, topic, {Plain(absl::StrCat("marker-", markers++))});
        for (TimedKafkaRecord& r : java.Poll(milliseconds(500))) read.push_back(std::move(r));
        return !read.empty();
      },
      seconds(60), "the console consumer reads a marker"))
      << java.status() << "\n" << java.StderrTail();
  Send(*plain, topic, {Plain("after")});
  ASSERT_TRUE(WaitFor(
      [&] {
        for (TimedKafkaRecord& r : java.Poll(milliseconds(100))) read.push_back(std::move(r));
        return read.back().record.value == "after";
      },
      seconds(30), "the console consumer reads the record after the markers"))
      << java.status();
  // From the first marker read on, every record (offsets 0 and 1 are the old ones).
  EXPECT_GE(read.front().record.offset, 2);
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].record.offset, read.front().record.offset + static_cast<int64_t>(i));
    EXPECT_THAT(read[i].record.value.value_or(""), ::testing::Not(HasSubstr("old")));
  }
  EXPECT_TRUE(java.status().ok()) << java.status();
}

}  // namespace
}  // namespace outbox::testing
