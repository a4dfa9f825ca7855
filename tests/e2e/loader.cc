// Loader: continuous outbox writes for fault tests.
#include "e2e/loader.h"

#include <chrono>
#include <optional>

#include "support/util.h"

namespace outbox::testing {

Loader::Loader(PgServer* pg, std::string db, std::string type, int keys)
    : pg_(pg), db_(std::move(db)), type_(std::move(type)), keys_(keys) {}

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

void Loader::Run() {
  std::optional<PgConnection> conn;
  uint64_t n = 0;
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
    bool ok = conn->Exec("BEGIN").ok();
    for (int e = 0; ok && e < events; ++e) {
      const std::string key = "k" + std::to_string((n + e) % keys_);
      const int step = steps[key]++;
      auto id = conn->QueryValue(
          "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (gen_random_uuid(), 'load', '" +
          key + "', '" + type_ + "', '{\"key\":\"" + key + "\",\"step\":" + std::to_string(step) + "}') RETURNING id");
      ok = id.ok() && id->has_value();
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
    if (n % 20 == 0) PollUntil([&] { return stop_.load(); }, std::chrono::milliseconds(5));
  }
}

}  // namespace outbox::testing
