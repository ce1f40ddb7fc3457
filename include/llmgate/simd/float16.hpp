// float16: IEEE 754 half precision, as a storage format for vectors, and
// the kernels that score a float32 query against float16 rows.
//
// Why: an index whose vectors do not fit in cache spends its time reading
// them from memory; half the bytes per vector is close to twice the
// searches per second. Rounding a unit vector's components to 11 significant
// bits moves a 384-d cosine by about 1e-5, far below the gaps that decide a
// ranking or a cache threshold.
#pragma once

#include <bit>      // std::bit_cast
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint16_t, std::uint32_t

#include "llmgate/simd/arch.hpp"
#include "llmgate/simd/detail/widening.hpp"

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>  // _mm512_cvtph_ps, _mm256_cvtph_ps, _mm_cvtph_ps
#endif

LLMGATE_SIMD_WARNINGS_OFF

namespace llmgate::inline v0::simd {

/// The bits of an IEEE 754 binary16 number.
struct float16 {
  std::uint16_t bits = 0;
  friend bool operator==(float16, float16) = default;
};

/// Rounds to the nearest float16 (ties to even); overflow gives infinity,
/// NaN stays NaN.
inline float16 to_float16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // infinity or NaN
    return {static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u))};
  if (magnitude >= 0x477ff000u) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // rounds past 65504
  if (magnitude < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Adding 0.5 lets the float adder do the shift and the rounding to even.
    const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
    return {static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u))};
  }
  // Normal: rebias the exponent (127 -> 15) and round 23 mantissa bits to 10.
  const std::uint32_t rebiased = magnitude - 0x38000000u;
  const std::uint32_t round = 0xfffu + ((rebiased >> 13) & 1u);
  return {static_cast<std::uint16_t>(sign | ((rebiased + round) >> 13))};
}

/// The exact float value of a float16.
inline float to_float(float16 h) noexcept {
  const std::uint32_t sign = std::uint32_t{h.bits & 0x8000u} << 16;
  const std::uint32_t exponent = (h.bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f)  // infinity, or NaN made quiet as the hardware does
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa ? 0x400000u : 0u) | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float value = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -value : value;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

namespace detail {

template <>
struct widening<float16> {
  // One register of floats from `lanes` float16 values, with the
  // processor's conversion instruction where the compile flags allow it. (A
  // template so that the branches for other register widths are never
  // instantiated.)
  template <class Batch = float_batch>
  static Batch load(const float16* p) noexcept {
#if defined(__AVX512F__)
    if constexpr (Batch::size == 16)
      return Batch(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#endif
#if defined(__F16C__)
    if constexpr (Batch::size == 8)
      return Batch(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    if constexpr (Batch::size == 4)
      return Batch(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#endif
    alignas(64) float widened[Batch::size];
    for (std::size_t i = 0; i < Batch::size; ++i) widened[i] = to_float(p[i]);
    return Batch::load_aligned(widened);
  }
  static float value(float16 h) noexcept { return to_float(h); }
};

}  // namespace detail

/// Writes the float values of n float16 numbers to `out`, a register at a
/// time with the processor's conversion instruction where the compile
/// flags allow it. (The scalar to_float, a branch per number, costs more
/// than the distance that follows.)
inline void widen(const float16* in, float* out, std::size_t n) noexcept { detail::widen_all(in, out, n); }

/// Sum of a[i] * b[i] for a float32 query and a float16 row.
inline float dot(const float* a, const float16* b, std::size_t n) noexcept {
  return detail::accumulate_widened(
      a, b, n, [](float_batch x, float_batch y, float_batch s) { return xsimd::fma(x, y, s); },
      [](float x, float y) { return x * y; });
}

/// Sum of (a[i] - b[i])^2 for a float32 query and a float16 row.
inline float squared_l2(const float* a, const float16* b, std::size_t n) noexcept {
  return detail::accumulate_widened(
      a, b, n,
      [](float_batch x, float_batch y, float_batch s) {
        const float_batch d = x - y;
        return xsimd::fma(d, d, s);
      },
      [](float x, float y) { return (x - y) * (x - y); });
}

}  // namespace llmgate::inline v0::simd

LLMGATE_SIMD_WARNINGS_ON
