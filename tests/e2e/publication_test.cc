// The publication changed under a running relay (issue 11, item 3): pgoutput then skips the outbox table's rows
// without a word (ALTER PUBLICATION ... DROP TABLE on every version; a dropped publication on PostgreSQL 18), so the
// stream alone cannot tell, and the idle advance would confirm past events never published. The relay's publication
// watch (a plain connection, every status interval) stops it first: exit 1 naming the publication, the slot not
// confirmed past the first event it did not receive.
#include <gtest/gtest.h>

#include <string>

#include "e2e/harness.h"
#include "pg/admin.h"
#include "support/kafka_broker.h"
#include "support/kafka_reader.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using namespace std::chrono_literals;

class Publication : public SharedServicesTest {
 protected:
  // A relay streaming `h`'s slot with one event delivered; the publication's name.
  std::string StartAndDeliverOne(RelayHarness& h, std::unique_ptr<ChildProcess>* relay) {
    h.Init();
    *relay = h.StartRelay({"--set", "source.status_interval_ms=200"});
    EXPECT_NE(*relay, nullptr);
    h.InsertEvent("Before", "k", "{}");
    EXPECT_TRUE(reader_->ReadUntil(h.Topic("Before"), 1, 30s).ok()) << (*relay)->Output();
    return h.Value("SELECT pubname FROM pg_publication").value_or("?");
  }
  // Busy writes to another table while the relay runs: what the idle advance would follow.
  static void WriteElsewhere(RelayHarness& h, ChildProcess& relay) {
    h.Sql("CREATE TABLE IF NOT EXISTS busy (t text)");
    for (int i = 0; i < 20 && relay.Running(); ++i) h.Sql("INSERT INTO busy SELECT 'x' FROM generate_series(1, 100)");
  }
  // Busy writes elsewhere, then the relay's exit.
  void ExpectFatalNamingIt(RelayHarness& h, ChildProcess& relay, const std::string& pub, const Lsn missed) {
    WriteElsewhere(h, relay);
    EXPECT_EQ(relay.Wait(30s), 1) << relay.Output();
    EXPECT_NE(relay.Output().find("publication \"" + pub + "\""), std::string::npos) << relay.Output();
    EXPECT_NE(relay.Output().find("changed while the relay ran"), std::string::npos) << relay.Output();
    // `missed` is the WAL position before the missed insert: the slot may be confirmed up to it (the idle advance
    // of a keepalive), never past it.
    EXPECT_LE(h.ConfirmedFlush(), missed) << "the slot was confirmed past an event the stream no longer carried";
  }
};

TEST_F(Publication, TableDroppedFromThePublicationWhileRunningIsFatalAndConfirmsNothingPastIt) {
  RelayHarness h(pg_, broker_->bootstrap());
  std::unique_ptr<ChildProcess> relay;
  const std::string pub = StartAndDeliverOne(h, &relay);
  ASSERT_NE(relay, nullptr);
  h.Sql("CREATE TABLE IF NOT EXISTS other_published (t text)");
  h.Sql("ALTER PUBLICATION " + pub + " ADD TABLE other_published");  // the publication lives on, without the outbox
  h.Sql("ALTER PUBLICATION " + pub + " DROP TABLE outbox");
  const Lsn before_missed = h.CurrentWal();
  h.InsertEvent("Missed", "k", "{}");
  ExpectFatalNamingIt(h, *relay, pub, before_missed);
  EXPECT_NE(relay->Output().find("does not cover public.outbox"), std::string::npos) << relay->Output();
}

TEST_F(Publication, PublicationDroppedWhileRunningIsFatalNamingIt) {
  RelayHarness h(pg_, broker_->bootstrap());
  std::unique_ptr<ChildProcess> relay;
  const std::string pub = StartAndDeliverOne(h, &relay);
  ASSERT_NE(relay, nullptr);
  h.Sql("DROP PUBLICATION " + pub);
  const Lsn before_missed = h.CurrentWal();
  h.InsertEvent("Missed", "k", "{}");
  // PostgreSQL 15 also ends the stream with "publication ... does not exist"; either way the relay names it.
  WriteElsewhere(h, *relay);
  EXPECT_EQ(relay->Wait(30s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("publication \"" + pub + "\" does not exist"), std::string::npos) << relay->Output();
  EXPECT_LE(h.ConfirmedFlush(), before_missed) << "the slot was confirmed past an event the stream no longer carried";
}

// The outbox table's schema changed mid-stream: pgoutput sends the new Relation before the next row. An added column
// changes nothing; a configured column dropped is fatal naming it, with nothing of that row's transaction confirmed.
TEST_F(Publication, OutboxSchemaChangedMidStreamAddedColumnsPassDroppedOnesAreFatal) {
  RelayHarness h(pg_, broker_->bootstrap());
  std::unique_ptr<ChildProcess> relay;
  StartAndDeliverOne(h, &relay);
  ASSERT_NE(relay, nullptr);
  h.Sql("ALTER TABLE outbox ADD COLUMN tenant text DEFAULT 'acme'");
  h.InsertEvent("AfterAdd", "k", "{}");
  ASSERT_TRUE(reader_->ReadUntil(h.Topic("AfterAdd"), 1, 30s).ok()) << relay->Output();
  h.Sql("ALTER TABLE outbox DROP COLUMN aggregateid");
  const Lsn before = h.CurrentWal();
  h.Sql("INSERT INTO outbox (id, aggregatetype, type, payload) VALUES (gen_random_uuid(), 'a', 'AfterDrop', '{}')");
  EXPECT_EQ(relay->Wait(30s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("column \"aggregateid\""), std::string::npos) << relay->Output();
  // `before` is the WAL position before the insert: confirming up to it (the DDL's end, from a keepalive's walEnd)
  // leaves the insert's transaction to be sent again; only a position past it would lose the row.
  EXPECT_LE(h.ConfirmedFlush(), before) << "the slot was confirmed past the row the relay could not map";
}

// The same dropped column read in one round with the events before it (all written before the relay started, so
// the stream is a backlog and they linger: the test hook makes the linger two minutes). The error ends the relay as
// a halt does: the events before the failing row are delivered and confirmed first. They were purged with the
// producer, unconfirmed, and came only when the relay ran again once the cause was fixed.
TEST_F(Publication, ADroppedColumnStopsTheRelayAfterTheEventsBeforeItAreDeliveredAndConfirmed) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  h.InsertEvent("BeforeTheDrop", "k", "{\"n\": 1}");
  const Lsn before_second = h.CurrentWal();
  h.InsertEvent("BeforeTheDrop", "k", "{\"n\": 2}");
  h.Sql("ALTER TABLE outbox DROP COLUMN aggregateid");
  const Lsn before_row = h.CurrentWal();
  h.Sql("INSERT INTO outbox (id, aggregatetype, type, payload) VALUES (gen_random_uuid(), 'a', 'AfterDrop', '{}')");
  auto relay = h.StartRelay({}, /*wait_active=*/false,
                            {{"OUTBOX_RELAY_TEST_HOOKS", "1"}, {"OUTBOX_RELAY_TEST_LINGER_MS", "120000"}});
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(relay->Wait(60s), 1) << relay->Output();
  EXPECT_NE(relay->Output().find("column \"aggregateid\""), std::string::npos) << relay->Output();
  auto delivered = reader_->ReadUntil(h.Topic("BeforeTheDrop"), 2, 30s);
  EXPECT_TRUE(delivered.ok()) << "the events before the failing row were not delivered: " << delivered.status()
                              << "\n" << relay->Output();
  EXPECT_GT(h.ConfirmedFlush(), before_second) << "the events before the failing row were not confirmed\n"
                                               << relay->Output();
  EXPECT_LE(h.ConfirmedFlush(), before_row) << "the slot was confirmed past the row the relay could not map";
}

}  // namespace
}  // namespace outbox::testing

namespace outbox::testing {
namespace {

// Slot health (SPEC.md §7 slot metrics): a streaming relay reads its slot on a plain connection every
// source.slot_check_ms and exports wal_status, the retained WAL and whether the slot is active.
TEST_F(Publication, SlotHealthMetricsFollowTheSlot) {
  RelayHarness h(pg_, broker_->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "source.status_interval_ms=200", "--set", "source.slot_check_ms=200"});
  ASSERT_NE(relay, nullptr);
  h.InsertEvent("Health", "k", "{}");
  ASSERT_TRUE(reader_->ReadUntil(h.Topic("Health"), 1, 30s).ok()) << relay->Output();
  EXPECT_TRUE(WaitFor(
      [&] {
        return Scrape(h.http_port(), "outbox_relay_slot_wal_status{status=\"reserved\"}") == 1.0 &&
               MetricValue(h.http_port(), "outbox_relay_slot_active") == 1.0 &&
               MetricValue(h.http_port(), "outbox_relay_slot_retained_wal_bytes").value_or(-1) >= 0;
      },
      30s, "the slot metrics show a reserved, active slot"))
      << relay->Output();
  // Idle, the relay is caught up: nothing is behind.
  EXPECT_TRUE(WaitFor([&] { return MetricValue(h.http_port(), "outbox_relay_behind_source_seconds") == 0.0; }, 30s,
                      "behind_source_seconds is 0 when caught up"));
}

}  // namespace
}  // namespace outbox::testing

namespace outbox::testing {
namespace {

// A slot past max_slot_wal_keep_size (wal_status unreserved) is invalidated at the server's next checkpoint unless
// the relay catches up: /readyz 503 naming it, the wal_status metric, and ready again once it is reserved. A
// transaction left open pins the slot's restart_lsn (decoding must restart before its first change) while the
// relay streams and confirms; WAL written meanwhile pushes the slot past the limit, with no checkpoint to
// invalidate it (its own server: max_wal_size 1 GB, checkpoint_timeout 1 h).
TEST(SlotHealth, UnreservedSlotMakesReadyz503UntilItIsReservedAgain) {
  auto pg = PgServer::Create(
      PgServer::Options{.extra_conf = "max_slot_wal_keep_size=32MB\nmax_wal_size=1GB\ncheckpoint_timeout=1h"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  KafkaBroker* broker = KafkaBroker::Shared();
  ASSERT_NE(broker, nullptr);
  RelayHarness h(pg->get(), broker->bootstrap());
  h.Init();
  auto relay = h.StartRelay({"--set", "source.status_interval_ms=200", "--set", "source.slot_check_ms=200"});
  ASSERT_NE(relay, nullptr);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 200; }, 30s, "ready"));
  auto holder = pg::SqlConnection::Connect((*pg)->conninfo(h.db()), "long-transaction");
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->Exec("BEGIN").ok());
  ASSERT_TRUE((*holder)->Exec("SELECT txid_current()").ok());
  h.Sql("CREATE TABLE filler (pad text)");
  const std::string status_sql = "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + h.slot() + "'";
  ASSERT_TRUE(WaitFor(
      [&] {
        h.Sql("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 10000)");
        return h.Value(status_sql) == "unreserved";
      },
      120s, "the slot past max_slot_wal_keep_size", 10ms));
  ASSERT_TRUE(WaitFor([&] { return HttpGet(h.http_port(), "/readyz").first == 503; }, 30s, "/readyz 503"))
      << relay->Output();
  const std::string why = HttpGet(h.http_port(), "/readyz").second;
  EXPECT_NE(why.find("wal_status unreserved"), std::string::npos) << why;
  EXPECT_EQ(Scrape(h.http_port(), "outbox_relay_slot_wal_status{status=\"unreserved\"}"), 1.0);
  EXPECT_NE(relay->Output().find("past max_slot_wal_keep_size (wal_status unreserved)"), std::string::npos)
      << relay->Output();
  // The transaction ends: the relay confirms past it, restart_lsn follows, the slot is reserved again.
  ASSERT_TRUE((*holder)->Exec("COMMIT").ok());
  h.InsertEvent("After", "k", "{}");
  ASSERT_TRUE(WaitFor(
      [&] {
        h.Sql("SELECT pg_switch_wal()");  // a new running_xacts record moves the restart point on
        return HttpGet(h.http_port(), "/readyz").first == 200;
      },
      60s, "ready again once the slot is reserved", 500ms))
      << HttpGet(h.http_port(), "/readyz").second;
  EXPECT_EQ(Scrape(h.http_port(), "outbox_relay_slot_wal_status{status=\"unreserved\"}"), 0.0);
  ExpectStopsCleanly(*relay);
}

}  // namespace
}  // namespace outbox::testing
