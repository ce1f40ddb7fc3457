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
#include <immintrin.h>  // _mm512_dpbusd_epi32, _mm256_dpbusd_avx_epi32, _mm256_maddubs_epi16, _mm_cvtepi8_epi32, ...
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
/// a chain of dependent steps, about half as fast as this at 384-d (the
/// figures are in the commit message that brought this in).
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

// How an instruction set multiplies bytes and adds them into 32-bit lanes,
// for sum_codes_in below. The processor's byte products take one unsigned
// and one signed operand, so a's sign moves onto b first: a b = |a| (sign(a)
// b). Codes are in [-127, 127] (quantize never writes -128), so neither |a|
// nor -b leaves a byte.
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// AVX-512 VNNI: 64 codes a register, vpdpbusd adds 4 byte products into
// each lane. There is no sign_epi8 for 512 bits: b is negated where a < 0
// by a masked subtract from zero (the compare runs on another port than
// vpdpbusd; vpmovb2m for the mask shares vpdpbusd's and was slower: scripts/bench
// kernels). Masked loads read a tail of fewer than 64 codes as one more
// register whose lanes past the end are 0.
struct avx512_vnni_bytes {
  using reg = __m512i;
  static constexpr std::size_t width = 64;
  static constexpr bool masked_tail = true;
  static constexpr std::size_t accumulators(bool /*squares*/) { return 4; }  // 12 of 32 registers at most
  static reg zero() noexcept { return _mm512_setzero_si512(); }
  static reg load(const scaled_int8* p) noexcept { return _mm512_loadu_si512(p); }
  static reg load_first(const scaled_int8* p, std::size_t count) noexcept {  // count < 64
    return _mm512_maskz_loadu_epi8(_cvtu64_mask64((std::uint64_t{1} << count) - 1), p);
  }
  static reg magnitude(reg x) noexcept { return _mm512_abs_epi8(x); }
  static reg with_sign_of(reg y, reg x) noexcept {
    return _mm512_mask_sub_epi8(y, _mm512_cmplt_epi8_mask(x, zero()), zero(), y);
  }
  static reg multiply_add(reg sum, reg magnitudes, reg signed_codes) noexcept {
    return _mm512_dpbusd_epi32(sum, magnitudes, signed_codes);
  }
  static reg add(reg x, reg y) noexcept { return _mm512_add_epi32(x, y); }
  static std::int64_t lane_sum(reg v) noexcept { return _mm512_reduce_add_epi32(v); }
};
#endif

#if defined(__AVX2__)
// AVX2: 32 codes a register. With AVX-VNNI, vpdpbusd on 256 bits; without,
// maddubs adds pairs of products into 16 bits (at most 2 * 127^2, so it
// never saturates) and madd with ones widens the pairs into the lanes. No
// masked byte loads: a tail of fewer than 32 codes is summed one by one.
struct avx2_bytes {
  using reg = __m256i;
  static constexpr std::size_t width = 32;
  static constexpr bool masked_tail = false;
  // Several accumulators only where the multiply-add is one instruction
  // with a long latency (vpdpbusd); with maddubs the chain from step to
  // step is one vpaddd. 16 registers: with squares, four sets of three
  // accumulators spilled to the stack.
#if defined(__AVXVNNI__)
  static constexpr std::size_t accumulators(bool squares) { return squares ? 2 : 4; }
#else
  static constexpr std::size_t accumulators(bool /*squares*/) { return 1; }
#endif
  static reg zero() noexcept { return _mm256_setzero_si256(); }
  static reg load(const scaled_int8* p) noexcept { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static reg magnitude(reg x) noexcept { return _mm256_sign_epi8(x, x); }
  static reg with_sign_of(reg y, reg x) noexcept { return _mm256_sign_epi8(y, x); }
  static reg multiply_add(reg sum, reg magnitudes, reg signed_codes) noexcept {
#if defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(sum, magnitudes, signed_codes);
#else
    return _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_codes), _mm256_set1_epi16(1)));
#endif
  }
  static reg add(reg x, reg y) noexcept { return _mm256_add_epi32(x, y); }
  static std::int64_t lane_sum(reg v) noexcept {
    const __m128i four = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i two = _mm_add_epi32(four, _mm_shuffle_epi32(four, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 0xb1)));
  }
};
#endif

// The sums of codes [i, n) a register at a time with `Bytes`; i is left
// where the registers stopped (n where the tail is masked). Up to four
// accumulators (Bytes::accumulators), so that a step does not wait for the
// one before it: vpdpbusd takes 5 cycles, and with one accumulator the
// 256-bit AVX-VNNI kernel lost to maddubs at 1536-d (scripts/bench kernels). The lanes are added into the
// 64-bit sums once per block of 32K codes: a whole block's sum, at most
// 32K * 127^2 < 2^31, fits an int32. Always inlined: out of line, GCC
// returned the sums through memory.
template <class Bytes, bool squares>
[[gnu::always_inline]] inline void sum_codes_in(const scaled_int8* a, const scaled_int8* b, std::size_t n,
                                                std::size_t& i, code_sums& sums) noexcept {
  using reg = typename Bytes::reg;
  constexpr std::size_t w = Bytes::width, block = 32 * 1024;
  struct accumulators {
    reg ab = Bytes::zero(), aa = ab, bb = ab;
    void add(const accumulators& other) noexcept {
      ab = Bytes::add(ab, other.ab);
      if constexpr (squares) aa = Bytes::add(aa, other.aa), bb = Bytes::add(bb, other.bb);
    }
  };
  const auto step = [](accumulators& sum, reg x, reg y) {
    const reg x_magnitude = Bytes::magnitude(x);
    sum.ab = Bytes::multiply_add(sum.ab, x_magnitude, Bytes::with_sign_of(y, x));
    if constexpr (squares) {
      const reg y_magnitude = Bytes::magnitude(y);
      sum.aa = Bytes::multiply_add(sum.aa, x_magnitude, x_magnitude);
      sum.bb = Bytes::multiply_add(sum.bb, y_magnitude, y_magnitude);
    }
  };
  const auto step_at = [&](accumulators& sum, std::size_t at) { step(sum, Bytes::load(a + at), Bytes::load(b + at)); };
  constexpr std::size_t k = Bytes::accumulators(squares);
  static_assert(k == 1 || k == 2 || k == 4);
  while (Bytes::masked_tail ? i < n : i + w <= n) {
    // Those of s0..s3 past k are never touched: zero, and adding them folds away.
    accumulators s0, s1, s2, s3;
    const std::size_t end = std::min(n, i + block);
    for (; i + k * w <= end; i += k * w) {
      step_at(s0, i);
      if constexpr (k >= 2) step_at(s1, i + w);
      if constexpr (k == 4) {
        step_at(s2, i + 2 * w);
        step_at(s3, i + 3 * w);
      }
    }
    for (; i + w <= end; i += w) step_at(s0, i);  // fewer than k registers' worth left
    if constexpr (Bytes::masked_tail) {
      if (i < end) {
        step(s1, Bytes::load_first(a + i, end - i), Bytes::load_first(b + i, end - i));
        i = end;
      }
    }
    s0.add(s1), s2.add(s3), s0.add(s2);
    sums.ab += Bytes::lane_sum(s0.ab);
    if constexpr (squares) sums.aa += Bytes::lane_sum(s0.aa), sums.bb += Bytes::lane_sum(s0.bb);
  }
}

template <bool squares>
[[gnu::always_inline]] inline code_sums sum_codes(const scaled_int8* a, const scaled_int8* b, std::size_t n) noexcept {
  code_sums sums;
  std::size_t i = 0;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  sum_codes_in<avx512_vnni_bytes, squares>(a, b, n, i, sums);
#elif defined(__AVX2__)
  sum_codes_in<avx2_bytes, squares>(a, b, n, i, sums);
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
