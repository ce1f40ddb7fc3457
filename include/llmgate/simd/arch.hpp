// The one place that decides which instruction set llmgate's kernels use,
// and the small layer that hides differences between xsimd versions.
//
// How the instruction set is chosen: llmgate is header-only, so its kernels
// are compiled as part of the including translation unit and use the widest
// instruction set that unit's flags enable (xsimd::default_arch). Build with
// -march=native (or e.g. -mavx2 -mfma, -mavx512f -mavx512bw) to get AVX2 or
// AVX-512; without such flags x86-64 gets SSE2, AArch64 gets NEON. The
// integer kernels of two int8 rows (scaled_int8.hpp) go by the same flags:
// AVX-512 VNNI with -mavx512vnni -mavx512bw, else AVX-VNNI with -mavxvnni,
// else AVX2 (-march=native picks what the processor has). Runtime
// dispatch would need one object file per instruction set, which a
// header-only library cannot ship, so it is left to the application: compile
// the translation unit that calls llmgate once per target if you need it.
// `llmgate::simd::arch_name()` says what a translation unit got.
#pragma once

#include <cstddef>  // std::size_t

#include <xsimd/xsimd.hpp>  // xsimd::batch, xsimd::default_arch, load/fma/reduce

#include "llmgate/version.hpp"

// GCC 12 gives three false warnings on the kernels once they are inlined:
// that register loads read past the end of a short vector whose length it
// knows (the loop guards never let them run), that a scalar tail loop
// after the register loop would run 2^62 times for such a length (it never
// runs at all), and that AVX-512 intrinsics use an "uninitialized" register
// (their deliberately undefined lanes). The kernel headers turn just these
// off around their code.
#if defined(__GNUC__) && !defined(__clang__)
#define LLMGATE_SIMD_WARNINGS_OFF                                 \
  _Pragma("GCC diagnostic push")                                  \
  _Pragma("GCC diagnostic ignored \"-Warray-bounds\"")            \
  _Pragma("GCC diagnostic ignored \"-Waggressive-loop-optimizations\"") \
  _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define LLMGATE_SIMD_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define LLMGATE_SIMD_WARNINGS_OFF
#define LLMGATE_SIMD_WARNINGS_ON
#endif

namespace llmgate::inline v0::simd {

/// The instruction set of this translation unit's kernels.
using arch = xsimd::default_arch;

/// A register full of floats for `arch`.
using float_batch = xsimd::batch<float, arch>;

/// How many floats one register holds (4 for SSE/NEON, 8 for AVX2, 16 for AVX-512).
inline constexpr std::size_t lanes = float_batch::size;

/// The name of the instruction set, e.g. "avx512bw", for logs and benchmarks.
inline const char* arch_name() noexcept { return arch::name(); }

/// Sum of a register's lanes. xsimd 8 calls it hadd, xsimd 9 and later
/// reduce_add; this shim lets llmgate build with either.
inline float horizontal_sum(const float_batch& b) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::reduce_add(b);
#else
  return xsimd::hadd(b);
#endif
}

}  // namespace llmgate::inline v0::simd
