// Logical decoding messages as a table-less outbox (source.messages: true).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Messages : public SharedServicesTest {};

std::string EmitSql() {
  std::ifstream in(SourceDir() + "/sql/outbox_emit.sql");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(Messages, TransactionalMessageBecomesTheSameRecordAsARow) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.Sql(EmitSql());
  auto relay = h.StartRelay({"--set", "source.messages=true"});
  ASSERT_NE(relay, nullptr);
  // A row and a message with the same fields.
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
        "('6f1c1a64-0000-4000-8000-000000000001', 'order', 'k1', 'Same', '{\"a\":1}')");
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', '{\"id\":\"6f1c1a64-0000-4000-8000-000000000002\","
        "\"aggregatetype\":\"order\",\"aggregateid\":\"k1\",\"type\":\"Same\",\"payload\":{\"a\": 1}}')");
  // A string payload gives its decoded text; the sql/ helper function works.
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', '{\"id\":\"m3\",\"aggregateid\":\"k2\",\"type\":\"Same\","
        "\"payload\":\"say \\\"hi\\\"\"}')");
  h.Sql("SELECT outbox_emit('order', 'k3', 'Same', '{\"b\": [1, 2]}', '6f1c1a64-0000-4000-8000-000000000004')");
  auto records = reader_->ReadUntil(h.Topic("Same"), 4, 30s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  ASSERT_EQ(records->size(), 4u);
  const KafkaRecord& row = (*records)[0];
  const KafkaRecord& msg = (*records)[1];
  EXPECT_EQ(msg.topic, row.topic);
  EXPECT_EQ(msg.key, row.key);
  EXPECT_EQ(msg.value, row.value) << "a JSON payload is passed as its exact source bytes";
  EXPECT_EQ(HeaderValue(msg, "id"), "6f1c1a64-0000-4000-8000-000000000002");
  EXPECT_TRUE(Lsn::Parse(HeaderValue(msg, "source_lsn")).ok());
  EXPECT_EQ((*records)[2].value, "say \"hi\"");
  EXPECT_EQ((*records)[2].key, "k2");
  EXPECT_EQ((*records)[3].value, "{\"b\": [1, 2]}");
  EXPECT_EQ(HeaderValue((*records)[3], "id"), "6f1c1a64-0000-4000-8000-000000000004");
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST_F(Messages, RolledBackNonTransactionalAndOtherPrefixMessagesProduceNothing) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "source.messages=true"});
  ASSERT_NE(relay, nullptr);
  const std::string body = "'{\"id\":\"x\",\"aggregateid\":\"k\",\"type\":\"Quiet\",\"payload\":{}}'";
  h.Sql("BEGIN; SELECT pg_logical_emit_message(true, 'outbox', " + body + "); ROLLBACK;");
  h.Sql("SELECT pg_logical_emit_message(false, 'outbox', " + body + ")");
  h.Sql("SELECT pg_logical_emit_message(true, 'other', " + body + ")");
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', '{\"id\":\"last\",\"aggregateid\":\"k\",\"type\":\"Quiet\","
        "\"payload\":{}}')");
  auto records = reader_->ReadUntil(h.Topic("Quiet"), 1, 30s);
  ASSERT_TRUE(records.ok()) << relay->Output();
  // Everything before the last message was decoded first; wait for its confirmation, then read the whole topic.
  const Lsn wal = h.CurrentWal();
  ASSERT_TRUE(WaitFor([&] { return h.ConfirmedFlush() >= wal; }, 30s, "confirmed"));
  auto all = reader_->ReadAll(h.Topic("Quiet"), 30s);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(HeaderValue(all->front(), "id"), "last");
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

TEST_F(Messages, ContentThatIsNotJsonHaltsOrIsDeadLettered) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', 'not json {')");
  std::string out;
  EXPECT_EQ(h.RunCommand({"run", "--set", "source.messages=true"}, &out), 1);
  EXPECT_NE(out.find("unparsable logical message content"), std::string::npos) << out;
  EXPECT_NE(out.find("--start-lsn"), std::string::npos) << out;
  const std::string dlq = UniqueName("dlq");
  auto relay = h.StartRelay({"--set", "source.messages=true", "--set", "delivery.on_error=dead_letter", "--set",
                             "delivery.dead_letter_topic=" + dlq});
  ASSERT_NE(relay, nullptr);
  auto dead = reader_->ReadUntil(dlq, 1, 30s);
  ASSERT_TRUE(dead.ok()) << relay->Output();
  EXPECT_EQ(dead->front().value, "not json {");
  EXPECT_NE(HeaderValue(dead->front(), "error").find("not JSON"), std::string::npos);
  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(30s), 0) << relay->Output();
}

// SPEC.md §3: unparsable message content is a per-event error. Content that is a JSON object but for one string's
// bytes, which are not UTF-8 (\xe9 alone, as Latin-1 writes "é"), is not JSON: halt naming the LSN and the
// --start-lsn that skips it; under dead_letter, dead-lettered exactly as it came, and the next message arrives.
TEST_F(Messages, ContentThatIsNotUtf8HaltsOrIsDeadLetteredAsItCame) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string head = R"({"id":"latin1","aggregateid":"k","type":"Utf8","payload":{"name":"caf)";
  const std::string tail = R"("}})";
  h.Sql("SELECT pg_logical_emit_message(true, 'outbox', convert_to('" + head + "', 'UTF8') || '\\xe9'::bytea || "
        "convert_to('" + tail + "', 'UTF8'))");
  std::string out;
  EXPECT_EQ(h.RunCommand({"run", "--set", "source.messages=true"}, &out), 1) << out;
  EXPECT_NE(out.find("unparsable logical message content at LSN"), std::string::npos) << out;
  EXPECT_NE(out.find("--start-lsn"), std::string::npos) << out;
  const std::string dlq = UniqueName("dlq");
  std::vector<std::string> args = DeadLetterArgs(dlq);
  args.insert(args.end(), {"--set", "source.messages=true"});
  auto relay = h.StartRelay(args);
  ASSERT_NE(relay, nullptr);
  h.Sql(R"(SELECT pg_logical_emit_message(true, 'outbox', '{"id":"utf8","aggregateid":"k","type":"Utf8","payload":{"name":"café"}}'))");
  auto dead = reader_->ReadUntil(dlq, 1, 30s);
  ASSERT_TRUE(dead.ok()) << dead.status() << relay->Output();
  EXPECT_EQ(dead->front().value, head + "\xe9" + tail) << "the content was not dead-lettered as it came";
  EXPECT_NE(HeaderValue(dead->front(), "error").find("not JSON"), std::string::npos) << HeaderValue(dead->front(), "error");
  auto kept = reader_->ReadUntil(h.Topic("Utf8"), 1, 30s);
  ASSERT_TRUE(kept.ok()) << kept.status() << relay->Output();
  EXPECT_EQ(HeaderValue(kept->front(), "id"), "utf8");
  EXPECT_EQ(kept->front().value, "{\"name\":\"café\"}");
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
