// The decisions the Kafka sink takes without the broker: what each librdkafka error code in a delivery report
// means (review defect 4: a permanent code outside the old list looped forever), and a record's size on the wire
// (review defect 8: the old estimate was ~100 bytes short, so the broker refused records the pre-check let by).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <string>

#include "kafka/sink.h"

namespace outbox::kafka {
namespace {

TEST(ClassifyDeliveryError, TransientAndOwnCodesRewind) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR__PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION}) {
    EXPECT_EQ(ClassifyDeliveryError(err), DeliveryOutcome::kRetriable) << rd_kafka_err2name(err);
  }
}

TEST(ClassifyDeliveryError, ErrorsAboutOneRecordGoToOnError) {
  for (rd_kafka_resp_err_t err : {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC,
                                  RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION,
                                  RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION}) {
    EXPECT_EQ(ClassifyDeliveryError(err), DeliveryOutcome::kRejectedEvent) << rd_kafka_err2name(err);
  }
}

// Errors that refuse a whole batch halt (never dead-letter the innocent records beside the bad one), and so does
// any code not known to be transient: looping on it could only repeat it.
TEST(ClassifyDeliveryError, BatchErrorsAndUnknownCodesHalt) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP,
        RD_KAFKA_RESP_ERR_UNSUPPORTED_COMPRESSION_TYPE, RD_KAFKA_RESP_ERR_INVALID_MSG, RD_KAFKA_RESP_ERR_POLICY_VIOLATION,
        RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE, RD_KAFKA_RESP_ERR_INVALID_REQUIRED_ACKS,
        RD_KAFKA_RESP_ERR_INVALID_RECORD,  // the broker refuses the whole batch for it (KIP-467)
        RD_KAFKA_RESP_ERR_INVALID_PARTITIONS}) {  // the last: a code the switch does not name
    EXPECT_EQ(ClassifyDeliveryError(err), DeliveryOutcome::kRejectedBatch) << rd_kafka_err2name(err);
  }
}

TEST(ClassifyDeliveryError, AProducerThatFailedIsFatalAndSuccessIsAcked) {
  EXPECT_EQ(ClassifyDeliveryError(RD_KAFKA_RESP_ERR__FATAL), DeliveryOutcome::kFatal);
  EXPECT_EQ(ClassifyDeliveryError(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED), DeliveryOutcome::kFatal);
  EXPECT_EQ(ClassifyDeliveryError(RD_KAFKA_RESP_ERR_NO_ERROR), DeliveryOutcome::kAcked);
}

// Every code librdkafka knows gets one of the five outcomes, and the retriable set holds no code whose name says
// it is about the record's content (those must not loop).
TEST(ClassifyDeliveryError, EveryKnownCodeIsClassifiedAndNoContentErrorRewinds) {
  const rd_kafka_err_desc* descs = nullptr;
  size_t n = 0;
  rd_kafka_get_err_descs(&descs, &n);
  ASSERT_GT(n, 100u);
  int classified = 0;
  for (size_t i = 0; i < n; ++i) {
    if (descs[i].name == nullptr) continue;
    const std::string name = descs[i].name;
    const DeliveryOutcome outcome = ClassifyDeliveryError(descs[i].code);
    EXPECT_NE(DeliveryOutcomeName(outcome), "?") << name;
    ++classified;
    for (const char* content : {"TIMESTAMP", "COMPRESSION", "TOO_LARGE", "CORRUPT", "INVALID_MSG", "POLICY"}) {
      if (name.find(content) != std::string::npos) {
        EXPECT_NE(outcome, DeliveryOutcome::kRetriable) << name;
      }
    }
  }
  EXPECT_GT(classified, 100);
}

outbox::Record RecordOf(std::string_view key, std::string_view value) {
  outbox::Record r;
  r.topic = "a.rather.long.topic.name.that.is.not.on.the.wire";
  r.key = key;
  r.value = value;
  return r;
}

// A v2 record batch of one record: 61 bytes of batch header, then length, attributes, timestamp and offset deltas
// (counted at their widest: 10 + 5), key and value with their zigzag varint lengths, and the header count.
TEST(WireBytes, IsTheBatchHeaderAndTheRecordFramingNotTheTopic) {
  const std::string value(100, 'v');
  // body = 1 + 15 + (1 + 1) + (2 + 100) + 1 = 121; its length is a 2-byte varint.
  EXPECT_EQ(WireBytes(RecordOf("k", value)), 61u + 2u + 121u);
  outbox::Record with_headers = RecordOf("k", value);
  with_headers.headers = {{"id", std::string_view("0123456789")}, {"nothing", std::nullopt}};
  // + (1 + 2 + 1 + 10) + (1 + 7 + 1)
  EXPECT_EQ(WireBytes(with_headers), 61u + 2u + 121u + 14u + 9u);
  outbox::Record tombstone = RecordOf("k", value);
  tombstone.key.reset();
  tombstone.value.reset();
  EXPECT_EQ(WireBytes(tombstone), 61u + 1u + (1u + 15u + 1u + 1u + 1u));
}

// The old estimate (topic + key + value + headers) was short of what the broker counts by about 100 bytes.
TEST(WireBytes, ExceedsTheOldEstimateByTheBatchFraming) {
  const std::string value(1900, 'v');
  outbox::Record r = RecordOf("k", value);
  r.headers = {{"id", std::string_view("9b2f6f0e-5d8a-4d39-9d5f-3c6a2a1e7b11")}, {"source_lsn", std::string_view("0/16B3F58")}};
  EXPECT_GE(WireBytes(r), 1900u + 130u);
}

}  // namespace
}  // namespace outbox::kafka
