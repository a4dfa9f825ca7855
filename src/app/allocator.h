// Which allocator serves the relay's malloc: the build links mimalloc ahead of the C library (OUTBOX_ALLOCATOR, see
// CMakeLists.txt), since glibc's malloc took a quarter of the relay's CPU (librdkafka allocates a message and each of
// its headers per record and frees them on the delivery report, libpq copies every message it hands out).
#pragma once

#include <string>

namespace outbox::app {

// "mimalloc 2.0.9" when mimalloc serves malloc, "system" when the build chose the C library's, and "system (mimalloc
// linked but not serving malloc)" when the link order or an LD_PRELOAD put another allocator first.
std::string AllocatorName();

}  // namespace outbox::app
