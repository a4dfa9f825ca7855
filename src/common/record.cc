// The neutral record: its size estimate and its owning copy.
#include "common/record.h"

namespace outbox {

size_t Record::Bytes() const {
  size_t n = topic.size() + (key ? key->size() : 0) + (value ? value->size() : 0);
  for (const Header& h : headers) n += h.name.size() + (h.value ? h.value->size() : 0);
  return n;
}

OwnedRecord OwnedRecord::Of(const Record& record) {
  OwnedRecord o;
  o.topic = record.topic;
  o.event_id = record.event_id;
  o.route_value = record.route_value;
  if (record.key) o.key = std::string(*record.key);
  if (record.value) o.value = std::string(*record.value);
  o.headers.reserve(record.headers.size());
  for (const Header& h : record.headers) {
    o.headers.emplace_back(std::string(h.name), h.value ? std::optional<std::string>(*h.value) : std::nullopt);
  }
  o.timestamp_ms = record.timestamp_ms;
  o.partition = record.partition;
  return o;
}

Record OwnedRecord::View() const {
  Record r;
  r.topic = topic;
  r.event_id = event_id;
  r.route_value = route_value;
  if (key) r.key = *key;
  if (value) r.value = *value;
  r.headers.reserve(headers.size());
  for (const auto& [name, v] : headers) {
    r.headers.push_back(Header{name, v ? std::optional<std::string_view>(*v) : std::nullopt});
  }
  r.timestamp_ms = timestamp_ms;
  r.partition = partition;
  return r;
}

}  // namespace outbox
