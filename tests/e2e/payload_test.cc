// Payloads at their edges (SPEC.md §4 value, §3 delivery.on_error): bytes that are not UTF-8, and a value of
// megabytes that PostgreSQL keeps out of line (TOAST) and the walsender detoasts.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Payloads : public SharedServicesTest {
 protected:
  // Whether anything was dead-lettered to dlq_ (the topic exists only once a dead letter was written).
  bool AnyDeadLetter() {
    auto topics = reader_->ListTopics();
    EXPECT_TRUE(topics.ok()) << topics.status();
    return topics.ok() && std::find(topics->begin(), topics->end(), dlq_) != topics->end();
  }

  const std::string dlq_ = UniqueName("dlq");
};

// Bytes that are not UTF-8 (an invalid lead byte, a truncated sequence, a NUL) in a bytea payload.
const std::string kNotUtf8("\xff\xfe\x00\xc3\x28\xe9", 6);

// SPEC.md §4: bytea goes out as raw bytes, whatever they are: not UTF-8 is not an error, under halt or dead_letter.
TEST_F(Payloads, NonUtf8ByteaPayloadArrivesByteIdenticalUnderHaltAndDeadLetter) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8')");
  const auto insert = [&] {
    return h.Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), "
                   "'a', 'k', 'Bytes', '\\xfffe00c328e9'::bytea) RETURNING id")
        .value_or("");
  };
  std::vector<std::string> ids;
  std::string outputs;
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, DeadLetterArgs(dlq_)}) {
    auto relay = h.StartRelay(args);
    ASSERT_NE(relay, nullptr);
    ids.push_back(insert());
    auto records = reader_->ReadUntil(h.Topic("Bytes"), ids.size(), 30s);
    ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
    ASSERT_TRUE(relay->Running()) << relay->Output();
    ASSERT_NO_FATAL_FAILURE(ExpectStopsCleanly(*relay));
    outputs += relay->Output();
  }
  auto all = reader_->ReadAll(h.Topic("Bytes"), 30s);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u) << outputs;
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ(HeaderValue((*all)[i], "id"), ids[i]);
    EXPECT_EQ((*all)[i].value, kNotUtf8) << "the bytea payload was not sent as its raw bytes";
  }
  EXPECT_FALSE(AnyDeadLetter());
}

// The outbox's payload column changed type (a rewrite: jsonb to text) while an event written before the change
// waited in the slot, the relay stopped. A relay that reads the table's catalog (outbox.null_as_column_default, as
// Debezium files set; json_schema converters, placements other than header) once read it on its replication
// connection, before START_REPLICATION: the walsender opened the table for pg_get_expr, and kept that relcache entry,
// built from the current catalog, for decoding (SQL-level decoding invalidates such entries; START_REPLICATION does
// not). The event before the change was decoded with the new layout: its jsonb bytes read as text. The relay now
// reads the catalog on a plain connection. Catches the catalog read moved back to the replication connection.
TEST_F(Payloads, AnEventWrittenBeforeTheOutboxsLayoutChangedArrivesAsWrittenAfterARestart) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string before =
      h.Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'a', "
              "'k', 'Layout', '{\"n\": 1, \"s\": \"before\"}') RETURNING id")
          .value_or("");
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload TYPE text USING payload::text");
  const std::string after =
      h.Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'a', "
              "'k', 'Layout', 'after, as text') RETURNING id")
          .value_or("");
  auto relay = h.StartRelay({"--set", "outbox.null_as_column_default=true"});
  ASSERT_NE(relay, nullptr);
  auto records = reader_->ReadUntil(h.Topic("Layout"), 2, 30s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  ASSERT_EQ(records->size(), 2u) << relay->Output();
  EXPECT_EQ(HeaderValue((*records)[0], "id"), before);
  EXPECT_EQ((*records)[0].value, R"({"n": 1, "s": "before"})") << relay->Output();
  EXPECT_EQ(HeaderValue((*records)[1], "id"), after);
  EXPECT_EQ((*records)[1].value, "after, as text");
  ASSERT_NO_FATAL_FAILURE(ExpectStopsCleanly(*relay));
}

// Debezium reads a column's nullability from the catalog at each Relation message; so does the relay. A NOT NULL
// dropped while the relay streams is in the schema of the next record's key (pgoutput sends the table's Relation
// again after the change). Catches the catalog read once per session (the second key stayed "optional":false).
TEST_F(Payloads, ANullabilityChangedWhileStreamingIsInTheNextRecordsSchema) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "outbox.format=raw", "--set", "outbox.key_converter=json_schema"});
  ASSERT_NE(relay, nullptr);
  h.InsertEvent("Nullable", "k", R"({"n":1})");
  ASSERT_TRUE(reader_->ReadUntil(h.Topic("Nullable"), 1, 30s).ok()) << relay->Output();
  h.Sql("ALTER TABLE outbox ALTER COLUMN aggregateid DROP NOT NULL");
  h.InsertEvent("Nullable", "k", R"({"n":2})");
  auto records = reader_->ReadUntil(h.Topic("Nullable"), 2, 30s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].key, R"({"schema":{"type":"string","optional":false},"payload":"k"})");
  EXPECT_EQ((*records)[1].key, R"({"schema":{"type":"string","optional":true},"payload":"k"})");
  ASSERT_NO_FATAL_FAILURE(ExpectStopsCleanly(*relay));
}

// The catalog's plain connection outlives a session: after an outage that ended it too, the next session makes it
// again instead of failing once on it (and waiting out a backoff). Both backends are ended, the plain one first; the
// relay must stream again without a failed catalog read in its log. Catches the retry removed (the session then
// fails with "reading the outbox table's columns" and the next one streams).
TEST_F(Payloads, TheCatalogIsReadAgainOnAFreshConnectionAfterAnOutage) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "outbox.null_as_column_default=true"});
  ASSERT_NE(relay, nullptr);
  const std::string first = h.InsertEvent("Outage", "k", R"({"n":1})");
  ASSERT_TRUE(reader_->ReadUntil(h.Topic("Outage"), 1, 30s).ok()) << relay->Output();
  EXPECT_EQ(h.Value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                    "current_database() AND application_name = 'outbox-relay watch'").value_or("0"),
            "1")
      << "the relay's plain connection";
  EXPECT_EQ(h.Value("SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots WHERE slot_name = '" +
                    h.slot() + "'").value_or("0"),
            "1")
      << "the relay's walsender";
  const std::string second = h.InsertEvent("Outage", "k", R"({"n":2})");
  auto records = reader_->ReadUntil(h.Topic("Outage"), 2, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  EXPECT_EQ(relay->Output().find("reading the outbox table's columns"), std::string::npos) << relay->Output();
  ASSERT_NO_FATAL_FAILURE(ExpectStopsCleanly(*relay));
}

// A text payload that is not UTF-8 can only exist in a SQL_ASCII database (a UTF8 one refuses it on input). The
// relay asks for client_encoding UTF8, so the walsender itself fails to send the row ("invalid byte sequence for
// encoding "UTF8"", SQLSTATE 22021) on every start: the row never reaches the relay, which can neither halt on it nor
// dead-letter it. What holds: the events before it arrive, the error is named on /readyz (503) while the relay
// retries, and the slot is never confirmed past the row's transaction (its event is not lost, even under
// dead_letter).
TEST_F(Payloads, NonUtf8TextOfASqlAsciiDatabaseIsNeverConfirmedPastAndNamesTheServersError) {
  RelayHarness h(pg_, broker_->bootstrap());
  ASSERT_TRUE(pg_->Exec("DROP DATABASE \"" + h.db() + "\"").ok());
  ASSERT_TRUE(
      pg_->Exec("CREATE DATABASE \"" + h.db() + "\" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
          .ok());
  h.Init();
  h.Sql("ALTER TABLE outbox ALTER COLUMN payload TYPE text");
  auto relay = h.StartRelay(DeadLetterArgs(dlq_));
  ASSERT_NE(relay, nullptr);
  const std::string before = h.InsertEvent("Latin1", "k", "plain");
  ASSERT_TRUE(reader_->ReadUntil(h.Topic("Latin1"), 1, 30s).ok()) << relay->Output();
  h.Sql("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'a', 'k', "
        "'Latin1', E'caf\\xe9')");
  const Lsn committed = h.CurrentWal();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto [code, body] = HttpGet(h.http_port(), "/readyz");
        return code == 503 && body.find("invalid byte sequence for encoding \"UTF8\": 0xe9") != std::string::npos;
      },
      30s, "/readyz names the server's encoding error"))
      << relay->Output();
  // Several retries later the slot is still behind the row, and the relay still runs.
  ASSERT_TRUE(WaitFor([&] { return MetricValue(h.http_port(), "outbox_relay_reconnects_total").value_or(0) >= 3; },
                      60s, "the relay retried"))
      << relay->Output();
  EXPECT_LT(h.ConfirmedFlush(), committed) << "the slot was confirmed past a row that never reached Kafka";
  EXPECT_TRUE(relay->Running()) << relay->Output();
  ExpectStopsCleanly(*relay);
  auto all = reader_->ReadAll(h.Topic("Latin1"), 30s);
  ASSERT_TRUE(all.ok()) << all.status();
  // Only the event before the row arrives. It may arrive more than once (at-least-once): each retry's walsender
  // sends it and fails on the next row at once, often before the relay's confirmation of it reaches the server.
  ASSERT_GE(all->size(), 1u);
  for (const auto& record : *all) {
    EXPECT_EQ(HeaderValue(record, "id"), before) << "a record other than the event before the row";
  }
  EXPECT_FALSE(AnyDeadLetter());
}

// One jsonb payload of about 5 MB (random text: PostgreSQL stores it out of line, in the table's TOAST relation)
// in its own transaction; returns its id.
std::string InsertToastedPayload(RelayHarness& h, const std::string& type) {
  const std::string id =
      h.Value("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) SELECT gen_random_uuid(), 'a', 'k', '" +
              type +
              "', jsonb_build_object('blob', string_agg(md5(g::text || random()::text), '')) "
              "FROM generate_series(1, 160000) g RETURNING id")
          .value_or("");
  const std::string toast =
      h.Value("SELECT pg_relation_size(reltoastrelid)::text FROM pg_class WHERE oid = 'outbox'::regclass").value_or("0");
  EXPECT_GT(std::stoll(toast), 1 << 20) << "the payload was not stored out of line";
  return id;
}

// SPEC.md §4: the value is the payload's text exactly as PostgreSQL prints it, also when it is megabytes that the
// walsender detoasts, where the topic and the producer allow a record that large.
TEST_F(Payloads, FiveMegabyteToastedJsonbArrivesByteIdenticalWhereTheTopicAllowsIt) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string limit = std::to_string(16 << 20);
  ASSERT_TRUE(broker_->CreateTopic(h.Topic("Large"), 1, {{"max.message.bytes", limit}}).ok());
  auto relay = h.StartRelay({"--set", "kafka.message.max.bytes=" + limit});
  ASSERT_NE(relay, nullptr);
  const std::string id = InsertToastedPayload(h, "Large");
  const std::string after = h.InsertEvent("Large", "k", "{}");
  auto records = reader_->ReadUntil(h.Topic("Large"), 2, 60s);
  ASSERT_TRUE(records.ok()) << records.status() << relay->Output();
  const auto text = h.Value("SELECT payload::text FROM outbox WHERE id = '" + id + "'");
  ASSERT_TRUE(text.has_value());
  ASSERT_GT(text->size(), 5000000u);
  EXPECT_EQ(HeaderValue((*records)[0], "id"), id);
  EXPECT_TRUE((*records)[0].value == *text) << "the 5 MB value differs from PostgreSQL's text ("
                                            << (*records)[0].value.value_or("").size() << " bytes against "
                                            << text->size() << ")";
  EXPECT_EQ(HeaderValue((*records)[1], "id"), after);
  ExpectStopsCleanly(*relay);
}

// SPEC.md §3: a record larger than the producer allows (librdkafka's default message.max.bytes, 1,000,000 bytes:
// nothing set) is a permanent per-event error, checked before producing: halt naming the event id, with its
// transaction not confirmed; under dead_letter, dead-lettered without its value, and the relay goes on.
TEST_F(Payloads, FiveMegabyteToastedJsonbOverTheDefaultLimitHaltsOrIsDeadLetteredNamingTheEvent) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  const std::string id = InsertToastedPayload(h, "Large");
  const Lsn committed = h.CurrentWal();
  std::string out;
  EXPECT_EQ(h.RunCommand({"run"}, &out), 1) << out;
  EXPECT_NE(out.find("event id=" + id), std::string::npos) << out;
  EXPECT_NE(out.find("larger than message.max.bytes"), std::string::npos) << out;
  EXPECT_LT(h.ConfirmedFlush(), committed) << "the halted transaction was confirmed";

  auto relay = h.StartRelay(DeadLetterArgs(dlq_));
  ASSERT_NE(relay, nullptr);
  const std::string after = h.InsertEvent("Large", "k", "{}");
  auto dead = reader_->ReadUntil(dlq_, 1, 60s);
  ASSERT_TRUE(dead.ok()) << dead.status() << relay->Output();
  ExpectDeadLetteredWithoutValue(dead->front(), id, "larger than message.max.bytes");
  auto kept = reader_->ReadUntil(h.Topic("Large"), 1, 30s);
  ASSERT_TRUE(kept.ok()) << kept.status() << relay->Output();
  EXPECT_EQ(HeaderValue(kept->front(), "id"), after);
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
