// Which allocator serves malloc (see allocator.h); only the outbox-relay executable links it, not the tests.
#include "app/allocator.h"

#include <cstdlib>

#include "common/strings.h"

#ifdef OUTBOX_MIMALLOC
#include <mimalloc.h>
#endif

namespace outbox::app {

std::string AllocatorName() {
#ifdef OUTBOX_MIMALLOC
  // Asked of a block from plain calloc, not taken on trust from the link line: mimalloc replaces malloc only when
  // the dynamic linker finds its malloc before the C library's.
  void* probe = std::calloc(1, 64);
  const bool serving = mi_is_in_heap_region(probe);
  std::free(probe);
  if (!serving) return "system (mimalloc linked but not serving malloc)";
  const int v = mi_version();  // MI_MALLOC_VERSION: 209 is 2.0.9, 212 is 2.1.2
  return Cat("mimalloc ", v / 100, ".", v / 10 % 10, ".", v % 10);
#else
  return "system";
#endif
}

}  // namespace outbox::app
