// Loader: a thread that writes outbox events continuously (1 to 3 per transaction, keys k0..k9 with a per-key
// step number in the payload) until stopped, tolerating a server that goes away. It records which events
// committed for sure, and which are uncertain (the COMMIT's answer was lost). Any other error (a broken INSERT, a
// missing table) is unexpected: recorded, and failed by ExpectLoadHealthy, so a fault test cannot pass on a load
// that wrote nothing.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "support/pg_server.h"

namespace outbox::testing {

class Loader {
 public:
  // `max_events_per_second` (0: as fast as it goes) paces the load for a sink slower than the loader, so that the
  // backlog a test leaves stays within what its final wait can drain.
  Loader(PgServer* pg, std::string db, std::string type, int keys = 10, int max_events_per_second = 0);
  ~Loader();
  void Start();
  void Stop();
  // Committed event ids, and ids whose commit is uncertain.
  std::set<std::string> committed() const;
  std::set<std::string> uncertain() const;
  // The step number each committed event carries for its key ({"key":..,"step":..}).
  size_t transactions() const { return transactions_.load(); }
  // Errors that are not a server going away (the first few, with their SQL), in the order they happened.
  std::vector<std::string> unexpected_errors() const;

 private:
  void Run();

  PgServer* pg_;
  std::string db_, type_;
  int keys_;
  int max_events_per_second_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> transactions_{0};
  std::thread thread_;
  mutable std::mutex mu_;
  std::set<std::string> committed_, uncertain_;
  std::map<std::string, int> next_step_;
  std::vector<std::string> unexpected_;
  void Note(const absl::Status& error, const PgConnection& conn, const std::string& what);
};

// The loader committed at least `min_committed` events and met no unexpected error (`what` names the test).
void ExpectLoadHealthy(const Loader& loader, size_t min_committed, const std::string& what);

}  // namespace outbox::testing
