// Metrics: the relay's counters and gauges (SPEC.md §6), written by the loop thread and read by the HTTP thread
// (atomics, no locks). One instance per pipeline, passed in; rendered as Prometheus text exposition format.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace outbox::ops {

// A fixed-bucket histogram of seconds. The sub-millisecond buckets resolve a commit-to-ack latency that is mostly
// under a millisecond at low rates with linger.ms=0.
class Histogram {
 public:
  // Fine below 20 ms, where a relay that keeps up lives (a p99 of a few milliseconds is read within 25 %).
  static constexpr std::array<double, 23> kBounds = {0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003,
                                                     0.004,  0.005,   0.0075, 0.01,    0.015, 0.02,   0.05,  0.1,
                                                     0.25,   0.5,     1,      2.5,     5,     10,     30};
  void Observe(double seconds);
  // The samples (no HELP/TYPE lines); `labels` is empty or `name="value",` pairs each followed by a comma.
  void RenderSamples(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};  // last one is +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micros_{0};
};

// pg_replication_slots.wal_status values, as slot_wal_status indexes them ("" = unknown).
inline constexpr const char* kSlotWalStatuses[] = {"", "reserved", "extended", "unreserved", "lost"};
int SlotWalStatusIndex(std::string_view status);

struct Metrics {
  std::atomic<uint64_t> events_published{0};
  std::atomic<uint64_t> events_dead_lettered{0};
  std::atomic<uint64_t> events_skipped{0};
  std::atomic<uint64_t> delivery_errors_transient{0};
  std::atomic<uint64_t> delivery_errors_permanent{0};
  std::atomic<uint64_t> confirmed_lsn{0};
  std::atomic<uint64_t> received_lsn{0};
  std::atomic<uint64_t> server_wal_lsn{0};
  std::atomic<int64_t> inflight_events{0};
  std::atomic<int64_t> inflight_bytes{0};
  // The delivery bounds (delivery.max_inflight_events / _bytes), so that a dashboard can draw in-flight against them.
  std::atomic<int64_t> inflight_events_limit{0};
  std::atomic<int64_t> inflight_bytes_limit{0};
  std::atomic<double> oldest_inflight_age_seconds{0};
  std::atomic<uint64_t> reconnects{0};
  std::atomic<int> standby{0};
  std::atomic<uint64_t> stream_spills{0};  // streamed transactions spilled to a file
  // Slot health, from a periodic query on a plain connection (source.slot_check_ms); -1 until known.
  std::atomic<int64_t> slot_retained_wal_bytes{-1};   // the server's WAL position minus the slot's restart_lsn
  std::atomic<int64_t> slot_safe_wal_size_bytes{-1};  // -1 also when unlimited (max_slot_wal_keep_size = -1)
  std::atomic<int> slot_active{-1};
  std::atomic<int> slot_wal_status{0};                // an index into kSlotWalStatuses (0: unknown)
  // Now minus the commit time of the oldest transaction received and not yet acknowledged; with nothing pending but
  // a backlog not read yet, of the newest received; 0 when caught up.
  std::atomic<double> behind_source_seconds{0};
  Histogram commit_to_ack_seconds;

  // Readiness: streaming with the broker reachable.
  std::atomic<bool> loop_running{false};
  std::atomic<bool> streaming{false};
  std::atomic<bool> broker_reachable{false};

  void SetNotReadyReason(std::string reason);
  std::string not_ready_reason() const;
  // The loop has ended for good (a fatal error, or a halt): readiness says so with `why` from then on.
  void SetStopped(std::string why);

  // What /readyz answers: ready, or why not (never empty when not ready).
  struct Readiness {
    bool ready = false;
    std::string reason;
    bool standby = false;  // not ready only because another relay streams the slot and this one waits for it
  };
  Readiness readiness() const;

  // Prometheus text exposition format, every name prefixed outbox_relay_.
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::string not_ready_reason_ ABSL_GUARDED_BY(mu_) = "starting";
  std::string stopped_ ABSL_GUARDED_BY(mu_);
};

// One pipeline's metrics, its name (empty: the only pipeline, rendered without a label) and the sink type it feeds
// (sink.type: kafka, nats, rabbitmq, http; empty: no label).
struct PipelineMetrics {
  std::string pipeline;
  const Metrics* metrics = nullptr;
  std::string sink;
};

// Every pipeline's metrics in one exposition: each family once, a sample per pipeline labelled
// pipeline="<name>" (no label for a lone unnamed pipeline) and sink="<sink.type>", before the family's own labels.
std::string RenderMetrics(const std::vector<PipelineMetrics>& pipelines);

}  // namespace outbox::ops
