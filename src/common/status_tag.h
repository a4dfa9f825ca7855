// Typed meanings carried on an absl::Status as a payload, so that callers decide on a type, never on the text
// (STYLE.md: decisions travel as types or status codes).
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace outbox {

// Sets the integer `value` under `type_url` on (a copy of) `status`. OK statuses carry no payload: returned as is.
absl::Status Tagged(absl::Status status, std::string_view type_url, int value);
// The integer under `type_url`, if any.
std::optional<int> TagOf(const absl::Status& status, std::string_view type_url);

// What the reconnect loop and the command line need to know about an error besides its code.
enum class StatusReason {
  kNone = 0,
  kStandby = 1,  // another relay streams the slot: wait as a standby (UNAVAILABLE)
  kUsage = 2,    // the user's arguments are wrong (exit 2, not 1)
};
inline constexpr std::string_view kStatusReasonUrl = "outbox-relay/reason";
inline absl::Status WithReason(absl::Status status, StatusReason reason) {
  return Tagged(std::move(status), kStatusReasonUrl, static_cast<int>(reason));
}
inline StatusReason ReasonOf(const absl::Status& status) {
  const std::optional<int> v = TagOf(status, kStatusReasonUrl);
  return v && *v >= 0 && *v <= static_cast<int>(StatusReason::kUsage) ? static_cast<StatusReason>(*v)
                                                                         : StatusReason::kNone;
}

}  // namespace outbox
