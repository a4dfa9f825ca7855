// How the pgoutput fuzz target turns its first input byte into a DecoderState, shared with the seed writer.
#pragma once

#include <cstdint>

#include "pg/pgoutput.h"

namespace outbox::pg {

// Bits 0-1: protocol version minus one; bit 2: in_stream_block; bit 3: parallel_streaming. Other bits are ignored.
inline DecoderState FuzzStateFromByte(uint8_t byte) {
  DecoderState state;
  state.proto_version = 1 + (byte & 3);
  state.in_stream_block = (byte & 4) != 0;
  state.parallel_streaming = (byte & 8) != 0;
  return state;
}

inline uint8_t FuzzByteFromState(const DecoderState& state) {
  return static_cast<uint8_t>(((state.proto_version - 1) & 3) | (state.in_stream_block ? 4 : 0) |
                              (state.parallel_streaming ? 8 : 0));
}

}  // namespace outbox::pg
