// Metrics::Render against the Prometheus text exposition format (version 0.0.4): every family has its HELP and
// TYPE lines before its samples, every name SPEC.md §6 lists is there, and histograms are cumulative with +Inf,
// _sum and _count.
#include "ops/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::ops {
namespace {


struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Family {
  std::string help;
  std::string type;
  std::vector<Sample> samples;
};

// A strict reader of the text format: fails the test on any line it does not understand, on a sample before its
// family's TYPE line, and on a family declared twice.
std::map<std::string, Family> Parse(const std::string& text) {
  static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+))");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex kSample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+))");
  static const std::regex kLabel(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)\"(,|$))");
  std::map<std::string, Family> families;
  std::set<std::string> typed;
  std::string current;  // the family whose samples may follow
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "the exposition ends with a newline";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kHelp)) {
      EXPECT_EQ(families.count(m[1]), 0u) << "family declared twice: " << m[1];
      families[m[1]].help = m[2];
      current.clear();
    } else if (std::regex_match(line, m, kType)) {
      EXPECT_EQ(families.count(m[1]), 1u) << "TYPE before HELP: " << line;
      EXPECT_TRUE(typed.insert(m[1]).second) << "TYPE twice: " << line;
      families[m[1]].type = m[2];
      current = m[1];
    } else if (std::regex_match(line, m, kSample)) {
      Sample s;
      s.name = m[1];
      std::string labels = m[3];
      for (std::sregex_iterator it(labels.begin(), labels.end(), kLabel), end; it != end; ++it) {
        s.labels[(*it)[1]] = (*it)[2];
      }
      const std::string value = m[4];
      char* end = nullptr;
      s.value = std::strtod(value.c_str(), &end);
      EXPECT_TRUE(end != nullptr && *end == '\0') << "not a number: " << line;
      if (current.empty()) {
        ADD_FAILURE() << "sample outside a family: " << line;
        continue;
      }
      const Family& f = families[current];
      if (f.type == "histogram") {
        EXPECT_TRUE(s.name == current + "_bucket" || s.name == current + "_sum" || s.name == current + "_count")
            << line;
      } else {
        EXPECT_EQ(s.name, current) << line;
      }
      if (f.type == "counter") {
        EXPECT_TRUE(current.ends_with("_total")) << current;
      }
      families[current].samples.push_back(std::move(s));
    } else {
      ADD_FAILURE() << "not a line of the text format: \"" << line << "\"";
    }
  }
  for (const auto& [name, f] : families) {
    EXPECT_FALSE(f.type.empty()) << name << " has no TYPE";
    EXPECT_FALSE(f.samples.empty()) << name << " has no sample";
  }
  return families;
}

double Value(const Family& f, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  for (const Sample& s : f.samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  ADD_FAILURE() << "no sample " << name;
  return -1;
}

TEST(Metrics, RendersEveryFamilyTheSpecNamesWithHelpAndType) {
  Metrics m;
  const auto families = Parse(m.Render());
  const std::map<std::string, std::string> expected = {
      {"outbox_relay_events_total", "counter"},
      {"outbox_relay_delivery_errors_total", "counter"},
      {"outbox_relay_confirmed_lsn", "gauge"},
      {"outbox_relay_received_lsn", "gauge"},
      {"outbox_relay_server_wal_lsn", "gauge"},
      {"outbox_relay_replication_lag_bytes", "gauge"},
      {"outbox_relay_inflight_events", "gauge"},
      {"outbox_relay_inflight_bytes", "gauge"},
      {"outbox_relay_oldest_inflight_age_seconds", "gauge"},
      {"outbox_relay_commit_to_ack_seconds", "histogram"},
      {"outbox_relay_reconnects_total", "counter"},
      {"outbox_relay_standby", "gauge"},
  };
  for (const auto& [name, type] : expected) {
    ASSERT_EQ(families.count(name), 1u) << name;
    EXPECT_EQ(families.at(name).type, type) << name;
    EXPECT_FALSE(families.at(name).help.empty()) << name;
  }
  for (const auto& [name, family] : families) EXPECT_TRUE(name.starts_with("outbox_relay_")) << name;
  const Family& events = families.at("outbox_relay_events_total");
  for (const char* result : {"published", "dead_lettered", "skipped"}) {
    EXPECT_EQ(Value(events, "outbox_relay_events_total", {{"result", result}}), 0) << result;
  }
  const Family& errors = families.at("outbox_relay_delivery_errors_total");
  for (const char* kind : {"transient", "permanent"}) {
    EXPECT_EQ(Value(errors, "outbox_relay_delivery_errors_total", {{"kind", kind}}), 0) << kind;
  }
}

TEST(Metrics, RendersTheCurrentValues) {
  Metrics m;
  m.events_published = 7;
  m.events_dead_lettered = 2;
  m.events_skipped = 1;
  m.delivery_errors_permanent = 3;
  m.confirmed_lsn = 0x16B3748;
  m.server_wal_lsn = 0x16B3748 + 4096;
  m.received_lsn = 0x16B3000;
  m.inflight_events = 5;
  m.inflight_bytes = 1234;
  m.oldest_inflight_age_seconds = 1.5;
  m.reconnects = 4;
  m.standby = 1;
  const auto f = Parse(m.Render());
  EXPECT_EQ(Value(f.at("outbox_relay_events_total"), "outbox_relay_events_total", {{"result", "published"}}), 7);
  EXPECT_EQ(Value(f.at("outbox_relay_events_total"), "outbox_relay_events_total", {{"result", "dead_lettered"}}), 2);
  EXPECT_EQ(Value(f.at("outbox_relay_events_total"), "outbox_relay_events_total", {{"result", "skipped"}}), 1);
  EXPECT_EQ(Value(f.at("outbox_relay_delivery_errors_total"), "outbox_relay_delivery_errors_total",
                  {{"kind", "permanent"}}),
            3);
  // LSNs as plain numbers (a double holds them exactly below 2^53).
  EXPECT_EQ(Value(f.at("outbox_relay_confirmed_lsn"), "outbox_relay_confirmed_lsn"), 0x16B3748);
  EXPECT_EQ(Value(f.at("outbox_relay_replication_lag_bytes"), "outbox_relay_replication_lag_bytes"), 4096);
  EXPECT_EQ(Value(f.at("outbox_relay_received_lsn"), "outbox_relay_received_lsn"), 0x16B3000);
  EXPECT_EQ(Value(f.at("outbox_relay_inflight_events"), "outbox_relay_inflight_events"), 5);
  EXPECT_EQ(Value(f.at("outbox_relay_inflight_bytes"), "outbox_relay_inflight_bytes"), 1234);
  EXPECT_DOUBLE_EQ(Value(f.at("outbox_relay_oldest_inflight_age_seconds"), "outbox_relay_oldest_inflight_age_seconds"),
                   1.5);
  EXPECT_EQ(Value(f.at("outbox_relay_reconnects_total"), "outbox_relay_reconnects_total"), 4);
  EXPECT_EQ(Value(f.at("outbox_relay_standby"), "outbox_relay_standby"), 1);
}

TEST(Metrics, LagIsZeroWhenTheConfirmedLsnIsAheadOfTheLastKeepalive) {
  Metrics m;
  m.confirmed_lsn = 5000;
  m.server_wal_lsn = 4000;
  const auto f = Parse(m.Render());
  EXPECT_EQ(Value(f.at("outbox_relay_replication_lag_bytes"), "outbox_relay_replication_lag_bytes"), 0);
}

TEST(Histogram, BucketsAreCumulativeAndEndWithInfSumAndCount) {
  Metrics m;
  // Bounds are inclusive (le): 0.001 lands in le="0.001", 0.0011 in le="0.0015".
  for (double s : {0.0005, 0.001, 0.0011, 0.3, 0.3, 2.0, 29.0, 31.0, 1000.0}) m.commit_to_ack_seconds.Observe(s);
  const auto families = Parse(m.Render());
  const Family& h = families.at("outbox_relay_commit_to_ack_seconds");
  std::vector<std::pair<std::string, double>> buckets;
  for (const Sample& s : h.samples) {
    if (s.name == "outbox_relay_commit_to_ack_seconds_bucket") {
      ASSERT_EQ(s.labels.size(), 1u);
      buckets.emplace_back(s.labels.at("le"), s.value);
    }
  }
  ASSERT_EQ(buckets.size(), Histogram::kBounds.size() + 1);
  EXPECT_EQ(buckets.back().first, "+Inf");
  double previous_bound = 0, previous_count = 0;
  for (size_t i = 0; i + 1 < buckets.size(); ++i) {
    const double bound = std::strtod(buckets[i].first.c_str(), nullptr);
    EXPECT_GT(bound, previous_bound) << "bounds ascend";
    EXPECT_GE(buckets[i].second, previous_count) << "counts are cumulative at le=" << buckets[i].first;
    previous_bound = bound;
    previous_count = buckets[i].second;
  }
  const auto count_at = [&](const std::string& le) {
    for (const auto& [bound, count] : buckets) {
      if (bound == le) return count;
    }
    ADD_FAILURE() << "no bucket le=" << le;
    return -1.0;
  };
  EXPECT_EQ(count_at("0.0001"), 0);
  EXPECT_EQ(count_at("0.00025"), 0);
  EXPECT_EQ(count_at("0.0005"), 1);  // sub-millisecond buckets
  EXPECT_EQ(count_at("0.001"), 2);
  EXPECT_EQ(count_at("0.00075"), 1);
  EXPECT_EQ(count_at("0.0015"), 3);
  EXPECT_EQ(count_at("0.02"), 3);
  EXPECT_EQ(count_at("0.25"), 3);
  EXPECT_EQ(count_at("0.5"), 5);
  EXPECT_EQ(count_at("2.5"), 6);
  EXPECT_EQ(count_at("30"), 7);
  EXPECT_EQ(count_at("+Inf"), 9);
  EXPECT_EQ(Value(h, "outbox_relay_commit_to_ack_seconds_count"), 9);
  EXPECT_NEAR(Value(h, "outbox_relay_commit_to_ack_seconds_sum"), 0.0005 + 0.001 + 0.0011 + 0.6 + 2 + 29 + 31 + 1000,
              1e-5);
  // The sample order the format expects: buckets, then _sum, then _count.
  ASSERT_GE(h.samples.size(), 2u);
  EXPECT_EQ(h.samples[h.samples.size() - 2].name, "outbox_relay_commit_to_ack_seconds_sum");
  EXPECT_EQ(h.samples.back().name, "outbox_relay_commit_to_ack_seconds_count");
}

TEST(Histogram, EmptyHistogramHasZeroBucketsSumAndCount) {
  Metrics m;
  const auto families = Parse(m.Render());
  for (const Sample& s : families.at("outbox_relay_commit_to_ack_seconds").samples) EXPECT_EQ(s.value, 0) << s.name;
}

TEST(Metrics, ReadinessSaysWhyNot) {
  Metrics m;
  EXPECT_FALSE(m.readiness().ready);
  EXPECT_EQ(m.readiness().reason, "the replication loop is not running");
  m.loop_running = true;
  EXPECT_EQ(m.readiness().reason, "starting");
  m.SetNotReadyReason("standby: replication slot \"s\" is active for PID 42");
  EXPECT_EQ(m.readiness().reason, "standby: replication slot \"s\" is active for PID 42");
  m.SetNotReadyReason("");
  EXPECT_EQ(m.readiness().reason, "not streaming");
  m.streaming = true;
  EXPECT_EQ(m.readiness().reason, "broker unreachable");
  m.broker_reachable = true;
  EXPECT_TRUE(m.readiness().ready);
  EXPECT_EQ(m.readiness().reason, "");
  const auto f = Parse(m.Render());
  EXPECT_EQ(Value(f.at("outbox_relay_ready"), "outbox_relay_ready"), 1);
}

TEST(Metrics, SeveralPipelinesShareEachFamilyAndLabelEverySample) {
  Metrics alpha, beta;
  alpha.events_published = 7;
  beta.events_published = 3;
  beta.reconnects = 2;
  alpha.loop_running = true;
  alpha.commit_to_ack_seconds.Observe(0.002);
  const auto f = Parse(RenderMetrics({{"alpha", &alpha, ""}, {"beta", &beta, ""}}));  // Parse fails on a family twice
  const Family& events = f.at("outbox_relay_events_total");
  EXPECT_EQ(Value(events, "outbox_relay_events_total", {{"pipeline", "alpha"}, {"result", "published"}}), 7);
  EXPECT_EQ(Value(events, "outbox_relay_events_total", {{"pipeline", "beta"}, {"result", "published"}}), 3);
  EXPECT_EQ(Value(f.at("outbox_relay_reconnects_total"), "outbox_relay_reconnects_total", {{"pipeline", "beta"}}), 2);
  EXPECT_EQ(Value(f.at("outbox_relay_reconnects_total"), "outbox_relay_reconnects_total", {{"pipeline", "alpha"}}), 0);
  EXPECT_EQ(Value(f.at("outbox_relay_running"), "outbox_relay_running", {{"pipeline", "alpha"}}), 1);
  EXPECT_EQ(Value(f.at("outbox_relay_running"), "outbox_relay_running", {{"pipeline", "beta"}}), 0);
  const Family& h = f.at("outbox_relay_commit_to_ack_seconds");
  EXPECT_EQ(Value(h, "outbox_relay_commit_to_ack_seconds_count", {{"pipeline", "alpha"}}), 1);
  EXPECT_EQ(Value(h, "outbox_relay_commit_to_ack_seconds_bucket", {{"pipeline", "alpha"}, {"le", "0.002"}}), 1);
  EXPECT_EQ(Value(h, "outbox_relay_commit_to_ack_seconds_count", {{"pipeline", "beta"}}), 0);
  // Every sample of every family carries the pipeline label.
  for (const auto& [name, family] : f) {
    for (const Sample& s : family.samples) EXPECT_TRUE(s.labels.contains("pipeline")) << s.name;
  }
}

TEST(Metrics, EverySampleCarriesItsPipelinesSinkType) {
  Metrics kafka, rabbit;
  kafka.events_published = 5;
  rabbit.events_published = 2;
  rabbit.commit_to_ack_seconds.Observe(0.002);
  const auto f = Parse(RenderMetrics({{"orders", &kafka, "kafka"}, {"billing", &rabbit, "rabbitmq"}}));
  const Family& events = f.at("outbox_relay_events_total");
  EXPECT_EQ(Value(events, "outbox_relay_events_total",
                  {{"pipeline", "orders"}, {"sink", "kafka"}, {"result", "published"}}), 5);
  EXPECT_EQ(Value(events, "outbox_relay_events_total",
                  {{"pipeline", "billing"}, {"sink", "rabbitmq"}, {"result", "published"}}), 2);
  EXPECT_EQ(Value(f.at("outbox_relay_commit_to_ack_seconds"), "outbox_relay_commit_to_ack_seconds_bucket",
                  {{"pipeline", "billing"}, {"sink", "rabbitmq"}, {"le", "0.002"}}), 1);
  for (const auto& [name, family] : f) {
    for (const Sample& s : family.samples) {
      ASSERT_TRUE(s.labels.contains("sink")) << s.name;
      EXPECT_EQ(s.labels.at("sink"), s.labels.at("pipeline") == "orders" ? "kafka" : "rabbitmq") << s.name;
    }
  }
  // A lone pipeline is labelled with its sink alone.
  const auto lone = Parse(RenderMetrics({{"", &rabbit, "http"}}));
  EXPECT_EQ(Value(lone.at("outbox_relay_events_total"), "outbox_relay_events_total",
                  {{"sink", "http"}, {"result", "published"}}), 2);
}

TEST(Metrics, AStoppedLoopSaysWhyInReadiness) {
  Metrics m;
  m.loop_running = true;
  m.streaming = true;
  m.broker_reachable = true;
  EXPECT_TRUE(m.readiness().ready);
  m.loop_running = false;
  EXPECT_EQ(m.readiness().reason, "the replication loop is not running");
  m.SetStopped("fatal: slot dropped");
  EXPECT_FALSE(m.readiness().ready);
  EXPECT_EQ(m.readiness().reason, "stopped: fatal: slot dropped");
}

}  // namespace
TEST(Metrics, SlotHealthIsRenderedAndAnUnreservedSlotIsNotReady) {
  Metrics m;
  m.loop_running = true;
  m.streaming = true;
  m.broker_reachable = true;
  m.slot_wal_status = SlotWalStatusIndex("reserved");
  m.slot_retained_wal_bytes = 4096;
  m.slot_active = 1;
  m.behind_source_seconds = 2.5;
  const std::string text = m.Render();
  EXPECT_NE(text.find("outbox_relay_slot_wal_status{status=\"reserved\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_slot_wal_status{status=\"lost\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_slot_retained_wal_bytes 4096\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_slot_active 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outbox_relay_behind_source_seconds 2.500\n"), std::string::npos) << text;
  EXPECT_TRUE(m.readiness().ready);
  m.slot_wal_status = SlotWalStatusIndex("unreserved");
  EXPECT_FALSE(m.readiness().ready);
  EXPECT_NE(m.readiness().reason.find("unreserved"), std::string::npos);
  m.slot_wal_status = SlotWalStatusIndex("extended");
  EXPECT_TRUE(m.readiness().ready);
}

}  // namespace outbox::ops
