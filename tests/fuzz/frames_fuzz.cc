// libFuzzer target for the CopyBoth frame decoders: any input decodes or gives DATA_LOSS, and whatever decodes
// re-encodes to exactly the bytes it came from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "pg/frames.h"

namespace {

// A failed decode must be DATA_LOSS; anything else is a bug.
template <typename T>
bool DecodedOrTrap(const absl::StatusOr<T>& decoded) {
  if (!decoded.ok() && decoded.status().code() != absl::StatusCode::kDataLoss) __builtin_trap();
  return decoded.ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  const absl::StatusOr<outbox::pg::ServerFrame> frame = outbox::pg::DecodeServerFrame(bytes);
  if (DecodedOrTrap(frame)) {
    std::string reencoded;
    if (const auto* x = std::get_if<outbox::pg::XLogData>(&*frame)) {
      reencoded = outbox::pg::EncodeXLogData(x->data_start, x->wal_end, x->send_time, x->payload);
    } else {
      reencoded = outbox::pg::EncodeKeepalive(std::get<outbox::pg::Keepalive>(*frame));
    }
    if (reencoded != bytes) __builtin_trap();
  }

  const absl::StatusOr<outbox::pg::StandbyStatus> status = outbox::pg::DecodeStandbyStatus(bytes);
  if (DecodedOrTrap(status) && outbox::pg::EncodeStandbyStatus(*status) != bytes) __builtin_trap();
  return 0;
}
