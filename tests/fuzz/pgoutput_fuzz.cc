// libFuzzer target for the pgoutput decoder: any input decodes or gives DATA_LOSS, and whatever decodes
// re-encodes to exactly the bytes it came from, which decode again to the same message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pg/pgoutput.h"
#include "pgoutput_fuzz_state.h"

using outbox::pg::DecoderState;
using outbox::pg::Message;

// Input: one byte choosing the decoder state (see pgoutput_fuzz_state.h), then one pgoutput message.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const DecoderState before = outbox::pg::FuzzStateFromByte(data[0]);
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  DecoderState state = before;
  const absl::StatusOr<Message> decoded = outbox::pg::Decode(bytes, state);
  if (!decoded.ok()) {
    if (decoded.status().code() != absl::StatusCode::kDataLoss) __builtin_trap();
    return 0;
  }

  const std::string reencoded = outbox::pg::Encode(*decoded, before);
  if (reencoded != bytes) __builtin_trap();

  DecoderState again = before;
  const absl::StatusOr<Message> redecoded = outbox::pg::Decode(reencoded, again);
  if (!redecoded.ok()) __builtin_trap();
  if (outbox::pg::Encode(*redecoded, before) != reencoded) __builtin_trap();
  if (again.in_stream_block != state.in_stream_block) __builtin_trap();
  return 0;
}
