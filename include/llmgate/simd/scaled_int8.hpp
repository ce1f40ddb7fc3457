// scaled_int8: a vector stored as one signed byte per component and one
// scale for the whole vector (value = scale * code), and the kernels that
// score a float32 query against such a row.
//
// Why: a quarter of float32's bytes and half of float16's. An index of a
// million vectors reads its rows at random from memory, one cache-line
// miss per 64 bytes, so half the bytes is close to half the waiting; an
// index of a few tens of thousands fits in the last-level cache at all.
// The price is precision: the scale is max |value| / 127, so a component
// is off by at most half a step. For unit 384-d vectors that moves the
// cosine of a float query and a row by about 1.5e-3 at most, and of two
// rows by about 2e-3 (tests/simd/scaled_int8_test.cpp): enough to rank
// near neighbours and to compare with a cache threshold of two decimals,
// not to tell 0.9990 from 0.9995.
#pragma once

#include <algorithm>  // std::clamp, std::fill_n
#include <cmath>      // std::abs, std::nearbyint
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int8_t, std::int32_t
#include <cstring>    // std::memcpy

#include "llmgate/simd/arch.hpp"
#include "llmgate/simd/detail/widening.hpp"

#if defined(__AVX2__) || defined(__SSE4_1__)
#include <immintrin.h>  // _mm256_cvtepi8_epi32, _mm256_maddubs_epi16, _mm_cvtepi8_epi32, ...
#endif

LLMGATE_SIMD_WARNINGS_OFF

namespace llmgate::inline v0::simd {

/// One component's code: its value divided by the row's scale, rounded.
struct scaled_int8 {
  std::int8_t code = 0;
  friend bool operator==(scaled_int8, scaled_int8) = default;
};

/// A stored row: its codes and the scale that turns them back into values.
struct scaled_int8_row {
  const scaled_int8* codes;
  float scale;
};

/// max |values[i]|, a register of lanes at a time: written as one running
/// std::max the loop stays scalar (the compiler may not reorder float max),
/// a chain of dependent steps; at 384-d, quantize took 310-400 ns with it
/// and takes 190 ns with this.
inline float largest_magnitude(const float* values, std::size_t n) noexcept {
  float_batch lane_largest(0.0f);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    lane_largest = xsimd::max(lane_largest, xsimd::abs(float_batch::load_unaligned(values + i)));
  alignas(64) float lane[lanes];
  lane_largest.store_aligned(lane);
  float largest = 0.0f;
  for (const float value : lane) largest = std::max(largest, value);
  for (; i < n; ++i) largest = std::max(largest, std::abs(values[i]));
  return largest;
}

/// Writes the codes of n values to `codes` and returns the row's scale,
/// max |value| / 127 (0 for the zero vector, whose codes are all 0).
inline float quantize(const float* values, scaled_int8* codes, std::size_t n) noexcept {
  const float largest = largest_magnitude(values, n);
  if (!(largest > 0.0f)) {
    std::fill_n(codes, n, scaled_int8{});
    return 0.0f;
  }
  // nearbyint rounds in the current mode (to nearest) without setting
  // errno, so the compiler vectorises the loop; the clamp only catches the
  // largest value's product landing a hair past 127.
  const float inverse = 127.0f / largest;
  for (std::size_t i = 0; i < n; ++i)
    codes[i].code = static_cast<std::int8_t>(std::clamp(std::nearbyint(values[i] * inverse), -127.0f, 127.0f));
  return largest / 127.0f;
}

namespace detail {

template <>
struct widening<scaled_int8> {
  // One register of floats from `lanes` codes, with the processor's
  // sign-extending conversion where the compile flags allow it. (A
  // template so that the branches for other register widths are never
  // instantiated.)
  template <class Batch = float_batch>
  static Batch load(const scaled_int8* p) noexcept {
#if defined(__AVX512F__)
    if constexpr (Batch::size == 16)
      return Batch(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))));
#endif
#if defined(__AVX2__)
    if constexpr (Batch::size == 8)
      return Batch(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))));
#endif
#if defined(__SSE4_1__)
    if constexpr (Batch::size == 4) {
      std::int32_t four;
      std::memcpy(&four, p, sizeof four);
      return Batch(_mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(four))));
    }
#endif
    alignas(64) float widened[Batch::size];
    for (std::size_t i = 0; i < Batch::size; ++i) widened[i] = p[i].code;
    return Batch::load_aligned(widened);
  }
  static float value(scaled_int8 c) noexcept { return c.code; }
};

// Integer sums over two rows of codes, exact for any length: ab = sum
// a[i] b[i] and, when `squares` is set, aa = sum a[i]^2 and bb = sum b[i]^2.
struct code_sums {
  std::int64_t ab = 0, aa = 0, bb = 0;
};

template <bool squares>
inline code_sums sum_codes(const scaled_int8* a, const scaled_int8* b, std::size_t n) noexcept {
  code_sums sums;
  std::size_t i = 0;
#if defined(__AVX2__)
  // 32 codes a step: maddubs multiplies unsigned by signed bytes and adds
  // pairs into 16 bits, so a's sign moves onto b first (|a| * sign(a) b);
  // codes are in [-127, 127], so a pair (at most 2 * 127^2) fits. madd
  // with ones widens the pairs into 32-bit lanes, which are added into the
  // 64-bit sums every block, long before they could overflow.
  const auto lane_sum = [](__m256i v) -> std::int64_t {
    const __m128i four = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i two = _mm_add_epi32(four, _mm_shuffle_epi32(four, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 0xb1)));
  };
  const __m256i ones = _mm256_set1_epi16(1);
  constexpr std::size_t block = 32 * 1024;
  while (i + 32 <= n) {
    __m256i ab = _mm256_setzero_si256(), aa = ab, bb = ab;
    for (const std::size_t end = std::min(n, i + block); i + 32 <= end; i += 32) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
      const __m256i x_magnitude = _mm256_sign_epi8(x, x);
      ab = _mm256_add_epi32(ab, _mm256_madd_epi16(_mm256_maddubs_epi16(x_magnitude, _mm256_sign_epi8(y, x)), ones));
      if constexpr (squares) {
        const __m256i y_magnitude = _mm256_sign_epi8(y, y);
        aa = _mm256_add_epi32(aa, _mm256_madd_epi16(_mm256_maddubs_epi16(x_magnitude, x_magnitude), ones));
        bb = _mm256_add_epi32(bb, _mm256_madd_epi16(_mm256_maddubs_epi16(y_magnitude, y_magnitude), ones));
      }
    }
    sums.ab += lane_sum(ab);
    if constexpr (squares) sums.aa += lane_sum(aa), sums.bb += lane_sum(bb);
  }
#endif
  // The rest (all of it without AVX2).
  for (; i < n; ++i) {
    const std::int64_t x = a[i].code, y = b[i].code;
    sums.ab += x * y;
    if constexpr (squares) sums.aa += x * x, sums.bb += y * y;
  }
  return sums;
}

}  // namespace detail

/// Writes the n values of `row` (scale * code) to `out`.
inline void widen(scaled_int8_row row, float* out, std::size_t n) noexcept {
  detail::widen_all(row.codes, out, n);
  const float_batch scale(row.scale);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) (float_batch::load_unaligned(out + i) * scale).store_unaligned(out + i);
  for (; i < n; ++i) out[i] *= row.scale;
}

/// Sum of a[i] * b[i] for a float32 query and a scaled int8 row.
inline float dot(const float* a, scaled_int8_row b, std::size_t n) noexcept {
  return b.scale * detail::accumulate_widened(
                       a, b.codes, n, [](float_batch x, float_batch y, float_batch s) { return xsimd::fma(x, y, s); },
                       [](float x, float y) { return x * y; });
}

/// Sum of (a[i] - b[i])^2 for a float32 query and a scaled int8 row.
inline float squared_l2(const float* a, scaled_int8_row b, std::size_t n) noexcept {
  const float_batch scale(b.scale);
  return detail::accumulate_widened(
      a, b.codes, n,
      [scale](float_batch x, float_batch y, float_batch s) {
        const float_batch d = xsimd::fnma(scale, y, x);  // x - scale * y
        return xsimd::fma(d, d, s);
      },
      [&b](float x, float y) { return (x - b.scale * y) * (x - b.scale * y); });
}

/// Sum of a[i] * b[i] for two scaled int8 rows, in integers: a query
/// quantized once is scored against many rows with a quarter of the
/// instructions that widening each row to floats takes.
inline float dot(scaled_int8_row a, scaled_int8_row b, std::size_t n) noexcept {
  return a.scale * b.scale * static_cast<float>(detail::sum_codes<false>(a.codes, b.codes, n).ab);
}

/// Sum of (a[i] - b[i])^2 for two scaled int8 rows, as |a|^2 + |b|^2 - 2 a.b.
inline float squared_l2(scaled_int8_row a, scaled_int8_row b, std::size_t n) noexcept {
  const detail::code_sums s = detail::sum_codes<true>(a.codes, b.codes, n);
  const float value = a.scale * a.scale * static_cast<float>(s.aa) + b.scale * b.scale * static_cast<float>(s.bb) -
                      2.0f * a.scale * b.scale * static_cast<float>(s.ab);
  return value > 0.0f ? value : 0.0f;  // rounding may leave a tiny negative for equal rows
}

}  // namespace llmgate::inline v0::simd

LLMGATE_SIMD_WARNINGS_ON
