// Metrics rendering.
#include "common/strings.h"
#include "ops/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <functional>
#include <utility>
#include <vector>

namespace outbox::ops {

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(seconds < 0 ? 0 : seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::RenderSamples(const std::string& name, const std::string& labels, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    Append(out, name, "_bucket{", labels, "le=\"", absl::StrFormat("%g", kBounds[i]), "\"} ", cumulative, "\n");
  }
  cumulative += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  Append(out, name, "_bucket{", labels, "le=\"+Inf\"} ", cumulative, "\n");
  const std::string plain = labels.empty() ? "" : Cat("{", labels.substr(0, labels.size() - 1), "}");
  Append(out, name, "_sum", plain, " ", absl::StrFormat("%.6f", sum_micros_.load() / 1e6), "\n");
  // The count of this snapshot of the buckets, so that _count always equals the +Inf bucket.
  Append(out, name, "_count", plain, " ", cumulative, "\n");
}

void Metrics::SetNotReadyReason(std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  not_ready_reason_ = std::move(reason);
}

std::string Metrics::not_ready_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return not_ready_reason_;
}

void Metrics::SetStopped(std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = std::move(why);
}

int SlotWalStatusIndex(std::string_view status) {
  for (int i = 1; i < static_cast<int>(std::size(kSlotWalStatuses)); ++i) {
    if (status == kSlotWalStatuses[i]) return i;
  }
  return 0;
}

Metrics::Readiness Metrics::readiness() const {
  if (!loop_running.load()) {
    std::lock_guard<std::mutex> lock(mu_);
    return {false, stopped_.empty() ? "the replication loop is not running" : Cat("stopped: ", stopped_)};
  }
  const std::string reason = not_ready_reason();
  if (!streaming.load()) return {false, reason.empty() ? "not streaming" : reason, standby.load() == 1};
  if (!broker_reachable.load()) return {false, reason.empty() ? "broker unreachable" : reason};
  // The slot is past max_slot_wal_keep_size (unreserved: invalidated at the next checkpoint unless it catches up).
  if (const int st = slot_wal_status.load(); st == SlotWalStatusIndex("unreserved") || st == SlotWalStatusIndex("lost")) {
    return {false, Cat("slot wal_status ", kSlotWalStatuses[st], ": past max_slot_wal_keep_size")};
  }
  return {true, ""};
}

std::string Metrics::Render() const { return RenderMetrics({{"", this, ""}}); }

namespace {

// One metric family: its HELP/TYPE once, then `samples` for every pipeline. `samples` gets the pipeline's
// label text: empty, or `pipeline="name",` to go first inside the braces.
struct Family {
  const char* name;
  const char* type;
  const char* help;
  std::function<void(const Metrics&, const std::string& labels, std::string* out)> samples;
};

// A sample without labels of its own: `name{pipeline="x"} value` or `name value`.
std::string Sample(const char* name, const std::string& labels, const auto& value) {
  return labels.empty() ? Cat("outbox_relay_", name, " ", value, "\n")
                        : Cat("outbox_relay_", name, "{", labels.substr(0, labels.size() - 1), "} ", value, "\n");
}

Family Gauge(const char* name, const char* help, std::function<std::string(const Metrics&)> value) {
  return {name, "gauge", help, [name, value](const Metrics& m, const std::string& labels, std::string* out) {
            out->append(Sample(name, labels, value(m)));
          }};
}

Family Counter(const char* name, const char* help, std::atomic<uint64_t> Metrics::*field) {
  return {name, "counter", help, [name, field](const Metrics& m, const std::string& labels, std::string* out) {
            out->append(Sample(name, labels, (m.*field).load()));
          }};
}

// A counter split by one label of its own (result="published", kind="transient").
Family SplitCounter(const char* name, const char* help, const char* label,
                    std::vector<std::pair<const char*, std::atomic<uint64_t> Metrics::*>> parts) {
  return {name, "counter", help, [=](const Metrics& m, const std::string& labels, std::string* out) {
            for (const auto& [value, field] : parts) {
              Append(out, "outbox_relay_", name, "{", labels, label, "=\"", value, "\"} ", (m.*field).load(), "\n");
            }
          }};
}

template <typename T>
std::function<std::string(const Metrics&)> Load(std::atomic<T> Metrics::*field) {
  return [field](const Metrics& m) { return Cat((m.*field).load()); };
}

const std::vector<Family>& Families() {
  static const auto* families = new std::vector<Family>{
      SplitCounter("events_total", "Outbox events by result.", "result",
                   {{"published", &Metrics::events_published},
                    {"dead_lettered", &Metrics::events_dead_lettered},
                    {"skipped", &Metrics::events_skipped}}),
      SplitCounter("delivery_errors_total", "Delivery errors by kind.", "kind",
                   {{"transient", &Metrics::delivery_errors_transient},
                    {"permanent", &Metrics::delivery_errors_permanent}}),
      Gauge("confirmed_lsn", "LSN confirmed to the server (as a number).", Load(&Metrics::confirmed_lsn)),
      Gauge("received_lsn", "Highest commit end LSN received.", Load(&Metrics::received_lsn)),
      Gauge("server_wal_lsn", "Server WAL position last seen (keepalive walEnd).", Load(&Metrics::server_wal_lsn)),
      Gauge("replication_lag_bytes", "Server WAL position minus the confirmed LSN.",
            [](const Metrics& m) {
              const uint64_t server = m.server_wal_lsn.load(), confirmed = m.confirmed_lsn.load();
              return Cat(server > confirmed ? server - confirmed : 0);
            }),
      Gauge("inflight_events", "Records and transactions waiting for the broker.", Load(&Metrics::inflight_events)),
      Gauge("inflight_bytes", "Bytes waiting for the broker.", Load(&Metrics::inflight_bytes)),
      Gauge("inflight_events_limit", "delivery.max_inflight_events: the bound on inflight_events.",
            Load(&Metrics::inflight_events_limit)),
      Gauge("inflight_bytes_limit", "delivery.max_inflight_bytes: the bound on inflight_bytes.",
            Load(&Metrics::inflight_bytes_limit)),
      Gauge("oldest_inflight_age_seconds", "Age of the oldest unacknowledged record.",
            [](const Metrics& m) { return absl::StrFormat("%.3f", m.oldest_inflight_age_seconds.load()); }),
      {"commit_to_ack_seconds", "histogram", "Commit time to broker acknowledgement.",
       [](const Metrics& m, const std::string& labels, std::string* out) {
         m.commit_to_ack_seconds.RenderSamples("outbox_relay_commit_to_ack_seconds", labels, out);
       }},
      Counter("reconnects_total", "Replication reconnects.", &Metrics::reconnects),
      Gauge("standby", "1 while waiting as a standby for the slot.", Load(&Metrics::standby)),
      Counter("stream_spills_total", "Streamed transactions spilled to a file.", &Metrics::stream_spills),
      Gauge("slot_retained_wal_bytes", "WAL the slot holds on the server (current WAL position - restart_lsn).",
            Load(&Metrics::slot_retained_wal_bytes)),
      Gauge("slot_safe_wal_size_bytes", "WAL the slot may still retain before max_slot_wal_keep_size (-1: unlimited).",
            Load(&Metrics::slot_safe_wal_size_bytes)),
      {"slot_wal_status", "gauge", "The slot's wal_status (1 for the current one).",
       [](const Metrics& m, const std::string& labels, std::string* out) {
         const int current = m.slot_wal_status.load();
         for (int i = 1; i < static_cast<int>(std::size(kSlotWalStatuses)); ++i) {
           Append(out, "outbox_relay_slot_wal_status{", labels, "status=\"", kSlotWalStatuses[i], "\"} ",
                  i == current ? 1 : 0, "\n");
         }
       }},
      Gauge("slot_active", "1 while the slot is active on the server (-1: not known yet).", Load(&Metrics::slot_active)),
      Gauge("behind_source_seconds", "How far behind the source the relay is, in time (0 when caught up).",
            [](const Metrics& m) { return absl::StrFormat("%.3f", m.behind_source_seconds.load()); }),
      Gauge("running", "1 while the pipeline's replication loop runs (0 after a fatal error or a stop).",
            [](const Metrics& m) { return Cat(m.loop_running.load() ? 1 : 0); }),
      Gauge("ready", "1 while streaming with the broker reachable (what /readyz answers).",
            [](const Metrics& m) { return Cat(m.readiness().ready ? 1 : 0); }),
  };
  return *families;
}

}  // namespace

std::string RenderMetrics(const std::vector<PipelineMetrics>& pipelines) {
  std::string out;
  std::vector<std::string> labels;
  for (const PipelineMetrics& p : pipelines) {
    labels.push_back(Cat(p.pipeline.empty() ? "" : Cat("pipeline=\"", p.pipeline, "\","),
                         p.sink.empty() ? "" : Cat("sink=\"", p.sink, "\",")));
  }
  for (const Family& family : Families()) {
    Append(&out, "# HELP outbox_relay_", family.name, " ", family.help, "\n# TYPE outbox_relay_", family.name, " ",
           family.type, "\n");
    for (size_t i = 0; i < pipelines.size(); ++i) family.samples(*pipelines[i].metrics, labels[i], &out);
  }
  return out;
}

}  // namespace outbox::ops
