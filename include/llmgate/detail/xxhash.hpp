// xxHash (Debian's libxxhash-dev), compiled into the including translation
// unit so that llmgate stays header-only: XXH_INLINE_ALL makes every
// function static inline and needs no library at link time.
#pragma once

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
// GCC 12 reports the AVX-512 intrinsics of xxHash's long-input path as
// (maybe) uninitialised under -march=native: a false positive in GCC's own
// intrinsic headers (_mm512_undefined_epi32), not in xxHash or llmgate.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xxhash.h>  // XXH3_64bits_withSeed, XXH3_64bits
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
