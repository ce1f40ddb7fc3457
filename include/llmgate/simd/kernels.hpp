// Float32 vector kernels: dot product, squared L2 distance, cosine
// similarity, normalisation, and the batched forms that score one query
// against a contiguous block of rows. Every kernel accepts unaligned
// pointers and any length (a scalar tail handles what is left after the
// last full register).
//
// Why explicit SIMD: without -ffast-math a compiler may not reorder a float
// sum, so a plain loop runs one add at a time; these kernels keep several
// independent accumulators in flight instead.
#pragma once

#include <cmath>    // std::sqrt
#include <cstddef>  // std::size_t

#include "llmgate/simd/arch.hpp"

LLMGATE_SIMD_WARNINGS_OFF

namespace llmgate::inline v0::simd {

namespace detail {

inline float_batch load(const float* p) noexcept { return float_batch::load_unaligned(p); }

// Accumulates op(a, b) over whole registers with four accumulators, which
// hides the latency of the fused multiply-add; returns the sum of the lanes
// and advances `i` past the part consumed.
template <class Step>
inline float accumulate_registers(const float* a, const float* b, std::size_t n,
                                  std::size_t& i, Step step) noexcept {
  float_batch s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    s0 = step(load(a + i), load(b + i), s0);
    s1 = step(load(a + i + lanes), load(b + i + lanes), s1);
    s2 = step(load(a + i + 2 * lanes), load(b + i + 2 * lanes), s2);
    s3 = step(load(a + i + 3 * lanes), load(b + i + 3 * lanes), s3);
  }
  for (; i + lanes <= n; i += lanes) s0 = step(load(a + i), load(b + i), s0);
  return horizontal_sum((s0 + s1) + (s2 + s3));
}

inline float_batch multiply_add(float_batch x, float_batch y, float_batch sum) noexcept {
  return xsimd::fma(x, y, sum);
}

inline float_batch add_squared_difference(float_batch x, float_batch y, float_batch sum) noexcept {
  const float_batch d = x - y;
  return xsimd::fma(d, d, sum);
}

}  // namespace detail

/// Sum of a[i] * b[i].
inline float dot(const float* a, const float* b, std::size_t n) noexcept {
  std::size_t i = 0;
  float sum = detail::accumulate_registers(a, b, n, i, detail::multiply_add);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

/// Sum of (a[i] - b[i])^2.
inline float squared_l2(const float* a, const float* b, std::size_t n) noexcept {
  std::size_t i = 0;
  float sum = detail::accumulate_registers(a, b, n, i, detail::add_squared_difference);
  for (; i < n; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sum;
}

/// Cosine of the angle between a and b; 0 when either is the zero vector.
inline float cosine(const float* a, const float* b, std::size_t n) noexcept {
  const float norms = dot(a, a, n) * dot(b, b, n);
  return norms > 0.0f ? dot(a, b, n) / std::sqrt(norms) : 0.0f;
}

/// Scales v to unit length in place and returns its former length; the zero
/// vector is left as it is.
inline float normalize(float* v, std::size_t n) noexcept {
  const float length = std::sqrt(dot(v, v, n));
  if (length > 0.0f) {
    const float_batch inverse(1.0f / length);
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) (detail::load(v + i) * inverse).store_unaligned(v + i);
    for (; i < n; ++i) v[i] /= length;
  }
  return length;
}

// The batched forms score rows one after the other, in memory order: a
// single stream is what the hardware prefetcher follows best (interleaving
// four rows measured at half the bandwidth), and each row's score comes out
// exactly as dot() or squared_l2() gives it.

/// out[r] = dot(query, rows + r * dim) for r in [0, count).
inline void dot_batch(const float* query, const float* rows, std::size_t count,
                      std::size_t dim, float* out) noexcept {
  for (std::size_t r = 0; r < count; ++r) out[r] = dot(query, rows + r * dim, dim);
}

/// out[r] = squared_l2(query, rows + r * dim) for r in [0, count).
inline void squared_l2_batch(const float* query, const float* rows, std::size_t count,
                             std::size_t dim, float* out) noexcept {
  for (std::size_t r = 0; r < count; ++r) out[r] = squared_l2(query, rows + r * dim, dim);
}

}  // namespace llmgate::inline v0::simd

LLMGATE_SIMD_WARNINGS_ON
