// The core end-to-end workload every sink's tests run (one and many events per transaction, a rollback, a
// rolled-back savepoint, a write to another table, an event deleted in its own transaction, a last event), and
// what a sink must deliver of it: each committed event once, none of the rolled-back ones.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "common/lsn.h"
#include "e2e/harness.h"

namespace outbox::testing {

struct ExpectedEvent {
  std::string type, key, payload;  // payload as PostgreSQL renders the jsonb
};

struct CoreCases {
  std::map<std::string, ExpectedEvent> expected;  // by event id: every committed event
  std::string a, b, c;                            // the first transaction's, in commit order (a and b: key o1)
  std::string rolled, sp_rolled;                  // rolled back (the whole transaction, a savepoint): never sent
  std::string sentinel;                           // the last committed event
};

// INSERT of one outbox row (aggregatetype 'order').
inline std::string InsertOutboxRow(const std::string& id, const std::string& type, const std::string& key,
                                   const std::string& payload) {
  return "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ('" + id + "', 'order', '" + key +
         "', '" + type + "', '" + payload + "');";
}

// Writes the workload through the harness's database, in this order: a, b, c in one transaction; `rolled` in a
// rolled-back one; `sp_rolled` in a rolled-back savepoint beside a kept event; a row of another table; an event
// inserted and deleted in one transaction (its INSERT is in the WAL: it is sent); the sentinel.
inline CoreCases WriteCoreCases(const RelayHarness& h) {
  CoreCases w;
  const auto id = [&] { return h.Value("SELECT gen_random_uuid()").value_or(""); };
  w.a = id(), w.b = id(), w.c = id(), w.rolled = id(), w.sp_rolled = id(), w.sentinel = id();
  const std::string kept = id(), deleted = id();
  w.expected[w.a] = {"created", "o1", R"({"n": 1})"};
  w.expected[w.b] = {"paid", "o1", R"({"n": 2})"};
  w.expected[w.c] = {"created", "o2", R"({"n": 3})"};
  w.expected[kept] = {"created", "o3", R"({"n": 5})"};
  w.expected[deleted] = {"shipped", "o1", R"({"n": 6})"};
  w.expected[w.sentinel] = {"created", "o4", R"({"n": 7})"};
  h.Sql("BEGIN;" + InsertOutboxRow(w.a, "created", "o1", R"({"n":1})") +
        InsertOutboxRow(w.b, "paid", "o1", R"({"n":2})") + InsertOutboxRow(w.c, "created", "o2", R"({"n":3})") +
        "COMMIT;");
  h.Sql("BEGIN;" + InsertOutboxRow(w.rolled, "created", "o9", R"({"n":4})") + "ROLLBACK;");
  h.Sql("BEGIN; SAVEPOINT s;" + InsertOutboxRow(w.sp_rolled, "created", "o9", R"({"n":4})") +
        "ROLLBACK TO SAVEPOINT s;" + InsertOutboxRow(kept, "created", "o3", R"({"n":5})") + "COMMIT;");
  h.Sql("CREATE TABLE IF NOT EXISTS other (x int); INSERT INTO other VALUES (1);");
  h.Sql("BEGIN;" + InsertOutboxRow(deleted, "shipped", "o1", R"({"n":6})") + "DELETE FROM outbox WHERE id = '" +
        deleted + "'; COMMIT;");
  h.Sql(InsertOutboxRow(w.sentinel, "created", "o4", R"({"n":7})"));
  return w;
}

// `status --json` while a relay of any sink holds the slot: status reads PostgreSQL alone, so it answers the same for
// every sink (exit 0, the slot active, confirmed at least through `confirmed`, which the caller saw confirmed).
inline void ExpectStatusShowsTheActiveSlot(RelayHarness& h, Lsn confirmed) {
  std::string out;
  ASSERT_EQ(h.RunCommand({"status", "--json"}, &out), 0) << out;
  ASSERT_NE(out.find('{'), std::string::npos) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j.value("slot", ""), h.slot()) << out;
  EXPECT_EQ(j.value("active", false), true) << out;
  const absl::StatusOr<Lsn> status_confirmed = Lsn::Parse(j.value("confirmed_flush_lsn", ""));
  ASSERT_TRUE(status_confirmed.ok()) << out;
  EXPECT_GE(*status_confirmed, confirmed) << out;
}

}  // namespace outbox::testing
