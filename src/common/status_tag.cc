// Typed status payloads.
#include "common/status_tag.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace outbox {

absl::Status Tagged(absl::Status status, std::string_view type_url, int value) {
  if (status.ok()) return status;
  status.SetPayload(absl::string_view(type_url.data(), type_url.size()), absl::Cord(std::to_string(value)));
  return status;
}

std::optional<int> TagOf(const absl::Status& status, std::string_view type_url) {
  const auto payload = status.GetPayload(absl::string_view(type_url.data(), type_url.size()));
  int v = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &v)) return std::nullopt;
  return v;
}

}  // namespace outbox
