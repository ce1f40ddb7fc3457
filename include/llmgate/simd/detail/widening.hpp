// What the kernels on compact rows (float16, scaled int8) share: a float32
// query is scored against a row whose values are widened to floats a
// register at a time, as they are loaded. Each compact format says how it
// widens in a specialisation of widening<Element>.
#pragma once

#include <cstddef>  // std::size_t

#include "llmgate/simd/arch.hpp"

LLMGATE_SIMD_WARNINGS_OFF

namespace llmgate::inline v0::simd::detail {

/// Specialised by each compact format, with
///   static float_batch load(const Element* p)  `lanes` elements as a register of floats
///   static float value(Element e)              one element as a float
template <class Element>
struct widening;

/// step(query register, widened row register, sum) over whole registers
/// with two accumulators, then scalar(query value, row value) over the tail.
template <class Element, class Step, class Scalar>
inline float accumulate_widened(const float* a, const Element* b, std::size_t n, Step step,
                                Scalar scalar) noexcept {
  using widen = widening<Element>;
  float_batch s0(0.0f), s1(0.0f);
  std::size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    s0 = step(float_batch::load_unaligned(a + i), widen::load(b + i), s0);
    s1 = step(float_batch::load_unaligned(a + i + lanes), widen::load(b + i + lanes), s1);
  }
  for (; i + lanes <= n; i += lanes) s0 = step(float_batch::load_unaligned(a + i), widen::load(b + i), s0);
  float sum = horizontal_sum(s0 + s1);
  for (; i < n; ++i) sum += scalar(a[i], widen::value(b[i]));
  return sum;
}

/// The float values of n elements, written to `out` a register at a time.
template <class Element>
inline void widen_all(const Element* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) widening<Element>::load(in + i).store_unaligned(out + i);
  for (; i < n; ++i) out[i] = widening<Element>::value(in[i]);
}

}  // namespace llmgate::inline v0::simd::detail

LLMGATE_SIMD_WARNINGS_ON
