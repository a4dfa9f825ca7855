// OutboxMapper::MapMessage: a logical decoding message's JSON content to the record a table row gives.
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "common/strings.h"
#include "outbox/mapper.h"
#include "pg/type_oids.h"

namespace outbox::outbox {
namespace {

// Finds the raw source spans of the top-level members of a JSON object. The text was validated by nlohmann
// first, so this only has to find boundaries: strings (with escapes) and nesting.
class SpanScanner {
 public:
  explicit SpanScanner(std::string_view text) : t_(text) {}

  // Calls on_member(raw key span including quotes, raw value span) for each member. False if not an object.
  template <typename Fn>
  bool Members(Fn on_member) {
    SkipSpace();
    if (!Eat('{')) return false;
    SkipSpace();
    if (Eat('}')) return true;
    while (true) {
      SkipSpace();
      const size_t key_start = p_;
      if (!SkipString()) return false;
      const std::string_view key = t_.substr(key_start, p_ - key_start);
      SkipSpace();
      if (!Eat(':')) return false;
      SkipSpace();
      const size_t value_start = p_;
      if (!SkipValue()) return false;
      on_member(key, t_.substr(value_start, p_ - value_start));
      SkipSpace();
      if (Eat(',')) continue;
      return Eat('}');
    }
  }

 private:
  void SkipSpace() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool Eat(char c) {
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool SkipString() {
    if (!Eat('"')) return false;
    while (p_ < t_.size()) {
      const char c = t_[p_++];
      if (c == '\\') {
        ++p_;
      } else if (c == '"') {
        return true;
      }
    }
    return false;
  }
  bool SkipValue() {
    if (p_ >= t_.size()) return false;
    const char c = t_[p_];
    if (c == '"') return SkipString();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (p_ < t_.size()) {
        const char d = t_[p_];
        if (d == '"') {
          if (!SkipString()) return false;
          continue;
        }
        ++p_;
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') {
          if (--depth == 0) return true;
        }
      }
      return false;
    }
    // A number or a literal: up to the next delimiter.
    while (p_ < t_.size() && t_[p_] != ',' && t_[p_] != '}' && t_[p_] != ' ' && t_[p_] != '\t' && t_[p_] != '\n' &&
           t_[p_] != '\r') {
      ++p_;
    }
    return true;
  }

  std::string_view t_;
  size_t p_ = 0;
};

}  // namespace

absl::StatusOr<Record> OutboxMapper::MapMessage(std::string_view content, Lsn commit_lsn, int64_t commit_time_ms) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("unparsable logical message content at LSN ", commit_lsn.ToString(), ": ",
                                          why));
  };
  if (!nlohmann::json::accept(content.begin(), content.end())) return bad("not JSON");
  for (Field* f : {&s_.id, &s_.key, &s_.route, &s_.payload, &s_.timestamp, &s_.type}) f->SetNull();
  for (Field& f : s_.additional) f.SetNull();
  std::string error;
  const bool object = SpanScanner(content).Members([&](std::string_view raw_key, std::string_view raw_value) {
    const std::string key = nlohmann::json::parse(raw_key).get<std::string>();
    Field* field = nullptr;
    if (key == config_.fields.id) field = &s_.id;
    else if (key == config_.fields.key) field = &s_.key;
    else if (key == config_.route_by) field = &s_.route;
    else if (key == config_.fields.payload) field = &s_.payload;
    else if (config_.fields.timestamp && key == *config_.fields.timestamp) field = &s_.timestamp;
    const auto set = [&](Field* f) {
      if (raw_value == "null") {
        f->SetNull();
      } else if (!raw_value.empty() && raw_value.front() == '"') {
        f->Set(nlohmann::json::parse(raw_value).get<std::string>());
      } else {
        f->Set(raw_value);
      }
    };
    if (field) set(field);
    if (key == config_.fields.type) set(&s_.type);
    for (size_t i = 0; i < config_.fields.additional.size(); ++i) {
      if (key == config_.fields.additional[i].column) set(&s_.additional[i]);
    }
  });
  if (!object) return bad("not a JSON object");
  s_.payload_type = 0;  // text: passed through as is
  s_.key_type = 0;
  s_.key_form = &kFromText;  // not the last relation's forms
  s_.value_form = &kFromText;
  // A timestamp in a message: a number of milliseconds, or timestamptz text.
  s_.timestamp_type = 0;
  if (!s_.timestamp.null) {
    int64_t ms = 0;
    if (absl::SimpleAtoi(s_.timestamp.text, &ms)) {
      s_.timestamp_type = pg::oid::kInt8;  // bigint milliseconds
    } else {
      s_.timestamp_type = pg::oid::kTimestampTz;  // timestamptz text
    }
  }
  return Build(commit_lsn, commit_time_ms);
}

}  // namespace outbox::outbox
