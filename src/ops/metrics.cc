// Metrics rendering.
#include "common/strings.h"
#include "ops/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox::ops {

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(seconds < 0 ? 0 : seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& help, std::string* out) const {
  Append(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " histogram\n");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    Append(out, name, "_bucket{le=\"", absl::StrFormat("%g", kBounds[i]), "\"} ", cumulative, "\n");
  }
  cumulative += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  Append(out, name, "_bucket{le=\"+Inf\"} ", cumulative, "\n");
  Append(out, name, "_sum ", absl::StrFormat("%.6f", sum_micros_.load() / 1e6), "\n");
  // The count of this snapshot of the buckets, so that _count always equals the +Inf bucket.
  Append(out, name, "_count ", cumulative, "\n");
}

void Metrics::SetNotReadyReason(std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  not_ready_reason_ = std::move(reason);
}

std::string Metrics::not_ready_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return not_ready_reason_;
}

Metrics::Readiness Metrics::readiness() const {
  if (!loop_running.load()) return {false, "the replication loop is not running"};
  const std::string reason = not_ready_reason();
  if (!streaming.load()) return {false, reason.empty() ? "not streaming" : reason};
  if (!broker_reachable.load()) return {false, reason.empty() ? "broker unreachable" : reason};
  return {true, ""};
}

std::string Metrics::Render() const {
  std::string out;
  const auto gauge = [&](const char* name, const char* help, auto value) {
    Append(&out, "# HELP outbox_relay_", name, " ", help, "\n# TYPE outbox_relay_", name, " gauge\n",
                    "outbox_relay_", name, " ", value, "\n");
  };
  Append(&out, "# HELP outbox_relay_events_total Outbox events by result.\n",
                  "# TYPE outbox_relay_events_total counter\n",
                  "outbox_relay_events_total{result=\"published\"} ", events_published.load(), "\n",
                  "outbox_relay_events_total{result=\"dead_lettered\"} ", events_dead_lettered.load(), "\n",
                  "outbox_relay_events_total{result=\"skipped\"} ", events_skipped.load(), "\n");
  Append(&out, "# HELP outbox_relay_delivery_errors_total Delivery errors by kind.\n",
                  "# TYPE outbox_relay_delivery_errors_total counter\n",
                  "outbox_relay_delivery_errors_total{kind=\"transient\"} ", delivery_errors_transient.load(), "\n",
                  "outbox_relay_delivery_errors_total{kind=\"permanent\"} ", delivery_errors_permanent.load(), "\n");
  gauge("confirmed_lsn", "LSN confirmed to the server (as a number).", confirmed_lsn.load());
  gauge("received_lsn", "Highest commit end LSN received.", received_lsn.load());
  gauge("server_wal_lsn", "Server WAL position last seen (keepalive walEnd).", server_wal_lsn.load());
  const uint64_t server = server_wal_lsn.load(), confirmed = confirmed_lsn.load();
  gauge("replication_lag_bytes", "Server WAL position minus the confirmed LSN.", server > confirmed ? server - confirmed : 0);
  gauge("inflight_events", "Records and transactions waiting for the broker.", inflight_events.load());
  gauge("inflight_bytes", "Bytes waiting for the broker.", inflight_bytes.load());
  gauge("oldest_inflight_age_seconds", "Age of the oldest unacknowledged record.",
        absl::StrFormat("%.3f", oldest_inflight_age_seconds.load()));
  commit_to_ack_seconds.Render("outbox_relay_commit_to_ack_seconds", "Commit time to broker acknowledgement.", &out);
  Append(&out, "# HELP outbox_relay_reconnects_total Replication reconnects.\n",
                  "# TYPE outbox_relay_reconnects_total counter\n", "outbox_relay_reconnects_total ",
                  reconnects.load(), "\n");
  gauge("standby", "1 while waiting as a standby for the slot.", standby.load());
  absl::StrAppend(&out, "# HELP outbox_relay_stream_spills_total Streamed transactions spilled to a file.\n",
                  "# TYPE outbox_relay_stream_spills_total counter\n", "outbox_relay_stream_spills_total ",
                  stream_spills.load(), "\n");
  gauge("ready", "1 while streaming with the broker reachable (what /readyz answers).", readiness().ready ? 1 : 0);
  return out;
}

}  // namespace outbox::ops
