// map_large_allocations: asks the C library to give every large allocation
// a mapping of its own, which goes back to the system when it is freed.
//
// Why: glibc raises its mmap threshold each time a mapped block is freed
// (up to 32 MiB). After that, large blocks come from the heap, where freed
// space stays in the process. Examples are the copy of an HNSW index the
// semantic cache builds while it re-embeds, and a cache's arrays growing.
// With glibc's moving threshold a long-running gateway's RSS keeps
// growing; with one fixed at 128 KiB it stays nearly flat at the same
// request rate (bench/gateway_bench.cpp's soak measures both). The setting holds for
// the whole process, so the program chooses it (examples/gateway.cpp
// does); the library never calls it.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdlib>  // (defines __GLIBC__ on glibc)

#if defined(__GLIBC__)
#include <malloc.h>  // mallopt, M_MMAP_THRESHOLD
#endif

namespace llmgate::inline v0 {

/// Serves allocations of at least `bytes` from their own mappings, with a
/// fixed threshold (glibc's mallopt). True when set; false on other C
/// libraries, where it does nothing.
inline bool map_large_allocations(std::size_t bytes = std::size_t{128} * 1024) noexcept {
#if defined(__GLIBC__)
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) == 1;
#else
  (void)bytes;
  return false;
#endif
}

}  // namespace llmgate::inline v0
