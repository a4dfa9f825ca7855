// The documentation against the code (issue 21): docs/configuration.md lists every key the loader accepts with its
// default, and only those; its Kafka defaults table is what the producer gets; docs/metrics.md lists every metric
// family /metrics exports, and every outbox_relay_* name in the docs, the alert rules and the dashboard is
// exported; every relative link and anchor in README.md and docs/ resolves. Pure: reads the source tree's files.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "config/config.h"
#include "kafka/producer_config.h"
#include "ops/metrics.h"

namespace outbox {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = OUTBOX_SOURCE_DIR;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The lines of `text` outside ``` fences.
std::vector<std::string> ProseLines(const std::string& text) {
  std::vector<std::string> out;
  bool fenced = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "```")) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.emplace_back(line);
  }
  return out;
}

// A Markdown table: its header cells and its rows' cells (cells split on " | ", so a cell may hold a bare '|').
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

std::vector<std::string> Cells(const std::string& line) {
  std::string inner = line.substr(1, line.size() - (absl::EndsWith(line, "|") ? 2 : 1));
  std::vector<std::string> cells;
  for (absl::string_view cell : absl::StrSplit(inner, " | ")) {
    cells.emplace_back(absl::StripAsciiWhitespace(cell));
  }
  return cells;
}

std::vector<Table> Tables(const std::string& text) {
  std::vector<Table> tables;
  const std::vector<std::string> lines = ProseLines(text);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "|") || !absl::StartsWith(lines[i + 1], "|---")) continue;
    Table t{Cells(lines[i]), {}};
    for (i += 2; i < lines.size() && absl::StartsWith(lines[i], "|"); ++i) t.rows.push_back(Cells(lines[i]));
    tables.push_back(std::move(t));
  }
  return tables;
}

// Every `backticked` text of a cell.
std::vector<std::string> Backticked(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex re("`([^`]+)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), re), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// docs/configuration.md's key tables (first header cell "Key"): key -> default cell.
std::map<std::string, std::string> DocumentedKeys() {
  std::map<std::string, std::string> keys;
  for (const Table& t : Tables(ReadText(kRoot / "docs/configuration.md"))) {
    if (t.header.empty() || t.header[0] != "Key") continue;
    for (const auto& row : t.rows) {
      const std::vector<std::string> names = Backticked(row[0]);
      EXPECT_EQ(names.size(), 1u) << "one key per row: " << row[0];
      if (names.size() != 1 || row.size() < 3) continue;
      EXPECT_TRUE(keys.emplace(names[0], row[1]).second) << names[0] << " is documented twice";
    }
  }
  return keys;
}

// The default of every accepted key, as `check` prints it ("" for none), each sink's keys with that sink.
std::map<std::string, std::string> CodeDefaults() {
  std::map<std::string, std::string> defaults;
  for (config::SinkType sink : {config::SinkType::kKafka, config::SinkType::kNats, config::SinkType::kRabbitMq,
                                config::SinkType::kHttp}) {
    config::PipelineConfig c;
    c.sink = sink;
    for (const auto& [key, value] : config::EffectiveValues(config::Config{}, c)) {
      if (key != "sink.type") defaults.emplace(key, value);
    }
  }
  defaults["sink.type"] = std::string(config::SinkTypeName(config::PipelineConfig{}.sink));
  return defaults;
}

TEST(Docs, ConfigurationPageListsEveryAcceptedKeyWithItsDefault) {
  const std::map<std::string, std::string> documented = DocumentedKeys();
  const std::map<std::string, std::string> defaults = CodeDefaults();
  const std::vector<std::string> accepted = config::AcceptedKeys();
  ASSERT_GT(accepted.size(), 60u);
  for (const std::string& key : accepted) {
    auto doc = documented.find(key);
    if (doc == documented.end()) {
      ADD_FAILURE() << key << " is accepted but not in docs/configuration.md";
      continue;
    }
    auto code = defaults.find(key);
    ASSERT_NE(code, defaults.end()) << key << " has no effective value (config::EffectiveValues)";
    if (code->second.empty()) {
      EXPECT_FALSE(doc->second.empty()) << key << ": say what happens without it (none, required, …)";
    } else {
      const std::vector<std::string> shown = Backticked(doc->second);
      EXPECT_TRUE(std::find(shown.begin(), shown.end(), code->second) != shown.end())
          << key << ": the code's default is `" << code->second << "`, the page says " << doc->second;
    }
  }
}

TEST(Docs, EveryKeyOnTheConfigurationPageIsAccepted) {
  const std::vector<std::string> accepted = config::AcceptedKeys();
  const std::set<std::string> known(accepted.begin(), accepted.end());
  for (const auto& [key, unused] : DocumentedKeys()) {
    if (key == "kafka.*") continue;                 // the librdkafka pass-through
    if (key == "outbox.column_mappers.*") continue;  // named as Debezium names its column mappers
    EXPECT_TRUE(known.contains(key)) << key << " is in docs/configuration.md, but the loader does not accept it";
  }
}

// `check` prints config::EffectiveValues: every accepted key has a line there (a key left out would never show).
TEST(Docs, CheckShowsEveryAcceptedKey) {
  std::set<std::string> shown;
  for (const auto& [key, unused] : CodeDefaults()) shown.insert(key);
  const std::vector<std::string> accepted = config::AcceptedKeys();
  EXPECT_EQ(shown, std::set<std::string>(accepted.begin(), accepted.end()));
}

TEST(Docs, KafkaDefaultsTableIsWhatTheProducerGets) {
  const config::PipelineConfig defaults;
  const auto producer = kafka::BuildProducerConfig(
      {}, {.max_inflight_events = defaults.delivery.max_inflight_events,
           .max_inflight_bytes = defaults.delivery.max_inflight_bytes},
      false);
  ASSERT_TRUE(producer.ok()) << producer.status();
  std::map<std::string, std::string> documented;
  for (const Table& t : Tables(ReadText(kRoot / "docs/configuration.md"))) {
    if (t.header.empty() || t.header[0] != "librdkafka property") continue;
    for (const auto& row : t.rows) documented[Backticked(row[0]).at(0)] = row.at(1);
  }
  ASSERT_FALSE(documented.empty()) << "docs/configuration.md has no librdkafka defaults table";
  for (const auto& [property, value] : *producer) {
    auto doc = documented.find(property);
    if (doc == documented.end()) {
      ADD_FAILURE() << "the relay sets " << property << "=" << value << ", which the defaults table leaves out";
      continue;
    }
    const std::vector<std::string> shown = Backticked(doc->second);
    EXPECT_TRUE(std::find(shown.begin(), shown.end(), value) != shown.end())
        << property << ": the relay sets `" << value << "`, the table says " << doc->second;
  }
  for (const auto& [property, cell] : documented) {
    EXPECT_TRUE(producer->contains(property) || absl::StrContains(cell, "not changed"))
        << property << " is in the defaults table, but the relay does not set it";
  }
}

// The exported metric families (from the HELP/TYPE lines, which /metrics always has) and every sample name.
struct Exported {
  std::set<std::string> families;
  std::set<std::string> names;   // families plus a histogram's _bucket, _sum and _count
  std::set<std::string> series;  // name{label="value"} of every sample label
};

Exported ExportedMetrics() {
  ops::Metrics metrics;
  const std::string text = ops::RenderMetrics({{.pipeline = "", .metrics = &metrics, .sink = ""}});
  Exported e;
  static const std::regex type_re("^# TYPE (outbox_relay_[a-z0-9_]+) ([a-z]+)$");
  static const std::regex sample_re("^(outbox_relay_[a-z0-9_]+)(\\{([^}]*)\\})? ");
  static const std::regex label_re("([a-z_]+)=\"([^\"]*)\"");
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    const std::string line(piece);
    std::smatch m;
    if (std::regex_match(line, m, type_re)) {
      e.families.insert(m[1]);
      e.names.insert(m[1]);
      if (m[2] == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) e.names.insert(m[1].str() + suffix);
      }
    } else if (std::regex_search(line, m, sample_re)) {
      const std::string labels = m[3];
      for (std::sregex_iterator it(labels.begin(), labels.end(), label_re), end; it != end; ++it) {
        e.series.insert(m[1].str() + "{" + (*it)[1].str() + "=\"" + (*it)[2].str() + "\"}");
      }
    }
  }
  return e;
}

TEST(Docs, MetricsPageListsEveryExportedFamilyAndOnlyThose) {
  const Exported exported = ExportedMetrics();
  ASSERT_GT(exported.families.size(), 20u);
  std::set<std::string> documented;
  static const std::regex row_re("^(outbox_relay_[a-z0-9_]+)(\\{([a-z_]+)(=\"([^\"]*)\")?\\})?$");
  for (const Table& t : Tables(ReadText(kRoot / "docs/metrics.md"))) {
    if (t.header.empty() || t.header[0] != "Metric") continue;
    for (const auto& row : t.rows) {
      const std::vector<std::string> names = Backticked(row[0]);
      ASSERT_EQ(names.size(), 1u) << "one metric per row: " << row[0];
      std::smatch m;
      ASSERT_TRUE(std::regex_match(names[0], m, row_re)) << names[0];
      documented.insert(m[1]);
      EXPECT_TRUE(exported.families.contains(m[1])) << m[1] << " is in docs/metrics.md but not exported";
      if (m[5].matched) {
        const std::string series = m[1].str() + "{" + m[3].str() + "=\"" + m[5].str() + "\"}";
        EXPECT_TRUE(exported.series.contains(series)) << series << " is in docs/metrics.md but no sample has it";
      }
    }
  }
  for (const std::string& family : exported.families) {
    EXPECT_TRUE(documented.contains(family)) << family << " is exported but not in docs/metrics.md";
  }
}

TEST(Docs, EveryMetricNamedInTheDocsRulesAndDashboardIsExported) {
  const Exported exported = ExportedMetrics();
  std::vector<fs::path> files = {kRoot / "README.md", kRoot / "deploy/prometheus/outbox-relay-rules.yaml",
                                 kRoot / "deploy/grafana/outbox-relay.json"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs")) files.push_back(entry.path());
  // A name, or a prefix with a wildcard (`outbox_relay_slot_*`), which must match some exported name.
  static const std::regex name_re("(outbox_relay_[a-z0-9_]*[a-z0-9])(_\\*)?");
  int named = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadText(file);
    for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) {
      ++named;
      const std::string name = (*it)[1];
      const bool prefix = (*it)[2].matched;
      EXPECT_TRUE(prefix ? std::any_of(exported.names.begin(), exported.names.end(),
                                       [&](const std::string& n) { return absl::StartsWith(n, name + "_"); })
                         : exported.names.contains(name))
          << file.lexically_relative(kRoot) << " names " << it->str() << ", which /metrics does not export";
    }
  }
  EXPECT_GT(named, 50);
}

// GitHub's heading anchors: lower case, punctuation other than '-' and '_' dropped, spaces to '-'.
std::string Slug(const std::string& heading) {
  std::string slug;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) {
      slug.push_back(static_cast<char>(std::tolower(c)));
    } else if (c == ' ') {
      slug.push_back('-');
    }
  }
  return slug;
}

std::set<std::string> Anchors(const fs::path& markdown) {
  std::set<std::string> anchors;
  for (const std::string& line : ProseLines(ReadText(markdown))) {
    if (!absl::StartsWith(line, "#")) continue;
    const size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    anchors.insert(Slug(line.substr(text + 1)));
  }
  return anchors;
}

std::vector<fs::path> Pages() {
  std::vector<fs::path> pages = {kRoot / "README.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  return pages;
}

// Every [text](target) outside code: http(s) and mailto aside, the file exists and the anchor is one of its
// headings.
TEST(Docs, EveryRelativeLinkAndAnchorResolves) {
  static const std::regex link_re("\\]\\(([^)\\s]+)\\)");
  int checked = 0;
  for (const fs::path& page : Pages()) {
    for (const std::string& line : ProseLines(ReadText(page))) {
      for (std::sregex_iterator it(line.begin(), line.end(), link_re), end; it != end; ++it) {
        const std::string target = (*it)[1];
        if (absl::StartsWith(target, "http://") || absl::StartsWith(target, "https://") ||
            absl::StartsWith(target, "mailto:")) {
          continue;
        }
        ++checked;
        const size_t hash = target.find('#');
        const fs::path file = hash == 0 ? page : page.parent_path() / target.substr(0, hash);
        const std::string where = page.lexically_relative(kRoot).string() + ": " + target;
        if (!fs::exists(file)) {
          ADD_FAILURE() << where << ": no such file";
          continue;
        }
        if (hash != std::string::npos) {
          EXPECT_TRUE(Anchors(file).contains(target.substr(hash + 1))) << where << ": no such heading";
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

// The README stays the front page: it links every page of the reference.
TEST(Docs, ReadmeLinksEveryPage) {
  const std::string readme = ReadText(kRoot / "README.md");
  for (const fs::path& page : Pages()) {
    if (page.filename() == "README.md") continue;
    EXPECT_TRUE(absl::StrContains(readme, "](docs/" + page.filename().string()))
        << "README.md does not link docs/" << page.filename().string();
  }
}

}  // namespace
}  // namespace outbox
