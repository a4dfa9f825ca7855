// Loader: continuous outbox writes for fault tests.
#include "e2e/loader.h"

#include <chrono>
#include <optional>

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include "support/util.h"

namespace outbox::testing {

Loader::Loader(PgServer* pg, std::string db, std::string type, int keys, int max_events_per_second)
    : pg_(pg), db_(std::move(db)), type_(std::move(type)), keys_(keys), max_events_per_second_(max_events_per_second) {}

Loader::~Loader() { Stop(); }

void Loader::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Loader::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::set<std::string> Loader::committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_;
}

std::set<std::string> Loader::uncertain() const {
  std::lock_guard<std::mutex> lock(mu_);
  return uncertain_;
}

std::vector<std::string> Loader::unexpected_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unexpected_;
}

// A server going away shows as a connection that is no longer OK, an error without SQLSTATE (the connection was
// lost), a connection exception (class 08) or an operator intervention (57P01 admin shutdown, 57P02 crash
// shutdown, 57P03 cannot connect now). Anything else is the loader's or the schema's fault.
void Loader::Note(const absl::Status& error, const PgConnection& conn, const std::string& what) {
  const std::string state = SqlState(error);
  const bool server_gone = PQstatus(conn.get()) != CONNECTION_OK || state.empty() || state.rfind("08", 0) == 0 ||
                           state == "57P01" || state == "57P02" || state == "57P03";
  if (server_gone) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (unexpected_.size() < 5) unexpected_.push_back(what + ": " + std::string(error.message()));
}

void ExpectLoadHealthy(const Loader& loader, size_t min_committed, const std::string& what) {
  EXPECT_TRUE(loader.unexpected_errors().empty())
      << what << ": the loader met errors that are not a server going away:\n"
      << [&] {
           std::string all;
           for (const std::string& e : loader.unexpected_errors()) all += "  " + e + "\n";
           return all;
         }();
  EXPECT_GE(loader.committed().size(), min_committed) << what << ": the load committed too few events to show anything";
}

void Loader::Run() {
  std::optional<PgConnection> conn;
  uint64_t n = 0;
  uint64_t events_written = 0;
  const auto started = std::chrono::steady_clock::now();
  while (!stop_) {
    if (!conn) {
      auto c = pg_->Connect(db_);
      if (!c.ok()) {
        PollUntil([&] { return stop_.load(); }, std::chrono::milliseconds(50));
        continue;
      }
      conn.emplace(std::move(*c));
    }
    const int events = 1 + static_cast<int>(n % 3);
    std::vector<std::string> ids;
    std::map<std::string, int> steps = next_step_;
    std::string sql = "BEGIN;";
    absl::Status begun = conn->Exec("BEGIN");
    bool ok = begun.ok();
    if (!ok) Note(begun, *conn, "BEGIN");
    for (int e = 0; ok && e < events; ++e) {
      const std::string key = "k" + std::to_string((n + e) % keys_);
      const int step = steps[key]++;
      const std::string insert =
          "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'load', '" +
          key + "', '" + type_ + "', '{\"key\":\"" + key + "\",\"step\":" + std::to_string(step) + "}') RETURNING id";
      auto id = conn->QueryValue(insert);
      ok = id.ok() && id->has_value();
      if (!id.ok()) Note(id.status(), *conn, insert);
      if (ok) ids.push_back(**id);
    }
    if (!ok) {
      (void)conn->Exec("ROLLBACK");
      conn.reset();  // the server may be gone; reconnect
      continue;
    }
    absl::Status commit = conn->Exec("COMMIT");
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (commit.ok()) {
        committed_.insert(ids.begin(), ids.end());
        next_step_ = steps;
      } else {
        // The answer was lost: the transaction may have committed. Its steps are not reused.
        uncertain_.insert(ids.begin(), ids.end());
        next_step_ = steps;
        conn.reset();
      }
    }
    ++n;
    ++transactions_;
    events_written += ids.size();
    if (max_events_per_second_ > 0) {
      // Not ahead of the pace: wait (interruptibly) until this many events are due.
      const auto due = started + std::chrono::microseconds(events_written * 1000000 / max_events_per_second_);
      PollUntil([&] { return stop_.load() || std::chrono::steady_clock::now() >= due; },
                std::chrono::duration_cast<std::chrono::milliseconds>(due - std::chrono::steady_clock::now()) +
                    std::chrono::milliseconds(1));
    } else if (n % 20 == 0) {
      PollUntil([&] { return stop_.load(); }, std::chrono::milliseconds(5));
    }
  }
}

}  // namespace outbox::testing
