// Private to the support library. Debian's abseil (20220623) has its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0): absl::StrCat and friends do not take a std::string_view.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace outbox::testing::internal {

inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view Sv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace outbox::testing::internal
