// outbox.format: protobuf end to end: rows and logical messages through the real relay, PostgreSQL and Kafka, each
// record's value decoded with the classes protoc generated from proto/outbox/v1/envelope.proto.
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <set>
#include <string>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "outbox/v1/envelope.pb.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kContentType = "application/x-protobuf; messageType=outbox.v1.Envelope";

class ProtobufEnvelope : public SharedServicesTest {
 protected:
  // The topic's records by their id header, once `count` have arrived.
  std::map<std::string, KafkaRecord> ReadById(const std::string& topic, size_t count) {
    auto records = reader_->ReadUntil(topic, count, 60s);
    EXPECT_TRUE(records.ok()) << topic << ": " << records.status();
    std::map<std::string, KafkaRecord> by_id;
    for (const KafkaRecord& r : records.value_or(std::vector<KafkaRecord>{})) by_id[HeaderValue(r, "id")] = r;
    return by_id;
  }

  static outbox::v1::Envelope Decode(const KafkaRecord& r) {
    outbox::v1::Envelope e;
    if (!r.value) {
      ADD_FAILURE() << "null value at offset " << r.offset;
    } else if (!e.ParseFromString(*r.value)) {
      ADD_FAILURE() << "the value at offset " << r.offset << " is not an outbox.v1.Envelope";
    }
    return e;
  }
};

TEST_F(ProtobufEnvelope, RowsAndMessagesArriveAsEnvelopesWithTheRawRecordAroundThem) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.Sql("ALTER TABLE outbox ALTER COLUMN aggregateid DROP NOT NULL");
  std::vector<std::string> args = {"--set", "outbox.format=protobuf",
                                   "--set", "outbox.fields.timestamp=created_at",
                                   "--set", "outbox.fields.additional=aggregatetype:header:aggregate",
                                   "--set", "source.messages=true"};
  for (const std::string& a : h.AsLeastPrivilegeRole()) args.push_back(a);
  auto relay = h.StartRelay(args);
  ASSERT_NE(relay, nullptr);

  const std::string row_id = "6f1c1a64-0000-4000-8000-000000000001";
  const std::string null_id = "6f1c1a64-0000-4000-8000-000000000002";
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, created_at) VALUES ('" + row_id +
        "', 'order', 'k1', 'Env', '{\"a\":1}', '2024-05-01 12:00:00.123456+02')");
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ('" + null_id +
        "', 'order', NULL, 'Env', NULL)");
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', '{\"id\":\"m3\",\"aggregatetype\":\"order\","
        "\"aggregateid\":\"k3\",\"type\":\"Env\",\"payload\":{\"b\": [1, 2]},\"created_at\":1700000000250}')");
  auto records = ReadById(h.Topic("Env"), 3);
  ASSERT_EQ(records.size(), 3u) << relay->Output();

  const KafkaRecord& row = records[row_id];
  EXPECT_EQ(row.key, "k1");
  EXPECT_EQ(row.timestamp_ms, 1714557600123);
  EXPECT_EQ(HeaderValue(row, "aggregate"), "order");
  EXPECT_EQ(HeaderValue(row, "content-type"), kContentType);
  const outbox::v1::Envelope e = Decode(row);
  EXPECT_EQ(e.id(), row_id);
  EXPECT_EQ(e.type(), "Env");
  EXPECT_EQ(e.key(), "k1");
  EXPECT_EQ(e.route_value(), "Env");
  ASSERT_TRUE(e.has_payload());
  EXPECT_EQ(e.payload(), "{\"a\": 1}") << "jsonb's output text, as the raw value carries it";
  EXPECT_EQ(e.timestamp().seconds(), 1714557600);  // 10:00:00 UTC
  EXPECT_EQ(e.timestamp().nanos(), 123000000);
  EXPECT_EQ(e.source_lsn(), HeaderValue(row, "source_lsn"));
  EXPECT_TRUE(Lsn::Parse(e.source_lsn()).ok()) << e.source_lsn();
  EXPECT_EQ(e.source(), "/public/outbox");
  ASSERT_EQ(e.additional_size(), 1);
  EXPECT_EQ(e.additional(0).name(), "aggregate");
  EXPECT_EQ(e.additional(0).value(), "order");

  const KafkaRecord& null_row = records[null_id];
  EXPECT_EQ(null_row.key, std::nullopt);
  const outbox::v1::Envelope n = Decode(null_row);
  EXPECT_EQ(n.id(), null_id);
  EXPECT_FALSE(n.has_payload()) << "a NULL payload is an envelope without one";
  EXPECT_FALSE(n.has_key());

  const KafkaRecord& msg = records["m3"];
  EXPECT_EQ(msg.key, "k3");
  EXPECT_EQ(HeaderValue(msg, "content-type"), kContentType);
  const outbox::v1::Envelope m = Decode(msg);
  EXPECT_EQ(m.id(), "m3");
  EXPECT_EQ(m.payload(), "{\"b\": [1, 2]}") << "a message's JSON payload is its exact source bytes";
  EXPECT_EQ(m.timestamp().seconds(), 1700000000);
  EXPECT_EQ(m.timestamp().nanos(), 250000000);
  EXPECT_EQ(m.additional(0).value(), "order");
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST_F(ProtobufEnvelope, ByteaPayloadIsCarriedAsBytesAndTombstonesAreNullValuesWhenAsked) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8')");
  auto relay = h.StartRelay({"--set", "outbox.format=protobuf", "--set", "outbox.tombstone_on_empty_payload=true"});
  ASSERT_NE(relay, nullptr);
  const std::string bytes_id = "6f1c1a64-0000-4000-8000-00000000000b";
  const std::string empty_id = "6f1c1a64-0000-4000-8000-00000000000e";
  const std::string null_id = "6f1c1a64-0000-4000-8000-00000000000f";
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ('" + bytes_id +
        "', 'order', 'k1', 'Bin', '\\x00ff0a'::bytea), ('" + empty_id + "', 'order', 'k2', 'Bin', ''::bytea), ('" +
        null_id + "', 'order', 'k3', 'Bin', NULL)");
  auto records = ReadById(h.Topic("Bin"), 3);
  ASSERT_EQ(records.size(), 3u) << relay->Output();
  const outbox::v1::Envelope e = Decode(records[bytes_id]);
  ASSERT_TRUE(e.has_payload());
  EXPECT_EQ(e.payload(), std::string("\x00\xff\x0a", 3));
  EXPECT_EQ(e.key(), "k1");
  for (const std::string& id : {empty_id, null_id}) {
    const KafkaRecord& r = records[id];
    EXPECT_EQ(r.value, std::nullopt) << id << ": tombstone_on_empty_payload gives a tombstone";
    EXPECT_EQ(r.FindHeader("content-type"), nullptr) << id;
    EXPECT_NE(r.FindHeader("source_lsn"), nullptr) << id;
  }
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// A streamed transaction is mapped before its commit is known: its envelopes must still carry the commit's LSN
// and time, as the records' headers and timestamps do.
TEST(ProtobufEnvelopeStreaming, StreamedTransactionEnvelopesCarryTheCommitLsnAndTime) {
  auto pg = PgServer::Create(PgServer::Options{.extra_conf = "logical_decoding_work_mem=64kB"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  RelayHarness h(pg->get(), broker->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "outbox.format=protobuf", "--set", "source.streaming=true"});
  ASSERT_NE(relay, nullptr);
  constexpr int kRows = 2000;  // about 400 kB of changes: streamed in several blocks before the commit
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 's', "
        "'k' || (g % 7), 'Big', jsonb_build_object('step', g, 'pad', repeat('p', 100)) "
        "FROM generate_series(1, " + std::to_string(kRows) + ") g");
  auto reader = KafkaReader::Create(broker->bootstrap());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto records = (*reader)->ReadUntil(h.Topic("Big"), kRows, 120s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  ASSERT_EQ(records->size(), static_cast<size_t>(kRows));
  std::set<std::string> lsns;
  for (const KafkaRecord& r : *records) {
    outbox::v1::Envelope e;
    ASSERT_TRUE(r.value && e.ParseFromString(*r.value)) << "offset " << r.offset;
    ASSERT_EQ(e.source_lsn(), HeaderValue(r, "source_lsn")) << "offset " << r.offset;
    ASSERT_EQ(e.timestamp().seconds() * 1000 + e.timestamp().nanos() / 1000000, r.timestamp_ms) << r.offset;
    lsns.insert(e.source_lsn());
  }
  EXPECT_EQ(lsns.size(), 1u) << "one transaction, one commit LSN";
  EXPECT_NE(*lsns.begin(), "0/0");
  EXPECT_TRUE(WaitFor(
      [&] {
        return h.Value("SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = '" + h.slot() + "'")
                   .value_or("0") != "0";
      },
      30s, "the slot's statistics show a streamed transaction"));
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

}  // namespace
}  // namespace outbox::testing
