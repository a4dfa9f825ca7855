// Typed status payloads: a meaning set on a status is read back as the same type, survives a copy, and is absent
// (kNone) when never set or on another key.
#include "common/status_tag.h"

#include <gtest/gtest.h>

namespace outbox {
namespace {

TEST(StatusTag, ReasonRoundTripsAndIsNoneWhenAbsent) {
  const absl::Status standby = WithReason(absl::UnavailableError("busy"), StatusReason::kStandby);
  EXPECT_EQ(ReasonOf(standby), StatusReason::kStandby);
  const absl::Status copy = standby;  // NOLINT: a copy keeps its payloads
  EXPECT_EQ(ReasonOf(copy), StatusReason::kStandby);
  EXPECT_EQ(ReasonOf(absl::UnavailableError("is active for PID 42")), StatusReason::kNone);
  EXPECT_EQ(ReasonOf(WithReason(absl::InvalidArgumentError("x"), StatusReason::kUsage)), StatusReason::kUsage);
  EXPECT_EQ(TagOf(standby, "another/key"), std::nullopt);
  EXPECT_TRUE(WithReason(absl::OkStatus(), StatusReason::kUsage).ok());
}

}  // namespace
}  // namespace outbox
