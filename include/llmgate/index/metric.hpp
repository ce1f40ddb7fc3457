// The Metric concept (how two vectors are compared) and its three models.
//
// A metric turns two vectors into a distance, smaller meaning closer, so
// that every index can minimise one number. It also says whether vectors are
// normalised on the way in (cosine stores unit vectors and compares them by
// inner product) and how a distance reads as a similarity for the caller.
// Each model also scores a float32 query against a float16 row and a
// scaled int8 row, and two scaled int8 rows, for indexes that store vectors
// compactly.
#pragma once

#include <algorithm>    // std::clamp
#include <concepts>     // std::same_as, std::convertible_to
#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

#include "llmgate/simd/float16.hpp"
#include "llmgate/simd/kernels.hpp"
#include "llmgate/simd/scaled_int8.hpp"

namespace llmgate::inline v0 {

template <class M>
concept Metric = requires(const float* a, const float* b, float* out, std::size_t n, float d) {
  { M::name } -> std::convertible_to<std::string_view>;  // stored in index files
  { M::normalizes_inputs } -> std::convertible_to<bool>;
  { M::distance(a, b, n) } -> std::same_as<float>;
  { M::distance_batch(a, b, n, n, out) };  // query, rows, row count, dimension, out
  { M::similarity(d) } -> std::same_as<float>;
};

namespace detail {

// Distance 1 - dot product, shared by the cosine and inner-product metrics.
struct one_minus_dot {
  static float distance(const float* a, const float* b, std::size_t dim) noexcept {
    return 1.0f - simd::dot(a, b, dim);
  }
  static float distance(const float* a, const simd::float16* b, std::size_t dim) noexcept {
    return 1.0f - simd::dot(a, b, dim);
  }
  static float distance(const float* a, simd::scaled_int8_row b, std::size_t dim) noexcept {
    return 1.0f - simd::dot(a, b, dim);
  }
  static float distance(simd::scaled_int8_row a, simd::scaled_int8_row b, std::size_t dim) noexcept {
    return 1.0f - simd::dot(a, b, dim);
  }
  static void distance_batch(const float* query, const float* rows, std::size_t count,
                             std::size_t dim, float* out) noexcept {
    simd::dot_batch(query, rows, count, dim, out);
    for (std::size_t i = 0; i < count; ++i) out[i] = 1.0f - out[i];
  }
  static float similarity(float distance) noexcept { return 1.0f - distance; }
};

}  // namespace detail

/// Cosine similarity. Vectors are normalised when added and when searched,
/// so the distance is 1 - dot product, in [0, 2]; similarity is the cosine,
/// kept within [-1, 1]: a row stored in float16 or int8 reads back a little
/// off unit length (each component is rounded), so the dot product of a
/// text with its own stored row can exceed 1 by that rounding. Distances
/// are left as computed; they only rank.
struct cosine_metric : detail::one_minus_dot {
  static constexpr std::string_view name = "cosine";
  static constexpr bool normalizes_inputs = true;
  static float similarity(float distance) noexcept { return std::clamp(1.0f - distance, -1.0f, 1.0f); }
};

/// Inner product of vectors as given (no normalisation). Distance is
/// 1 - dot product, as in hnswlib's "ip" space; similarity is the product.
struct inner_product_metric : detail::one_minus_dot {
  static constexpr std::string_view name = "inner_product";
  static constexpr bool normalizes_inputs = false;
};

/// Squared Euclidean distance; similarity is its negation, so that larger
/// still means closer.
struct l2_metric {
  static constexpr std::string_view name = "l2";
  static constexpr bool normalizes_inputs = false;
  static float distance(const float* a, const float* b, std::size_t dim) noexcept {
    return simd::squared_l2(a, b, dim);
  }
  static float distance(const float* a, const simd::float16* b, std::size_t dim) noexcept {
    return simd::squared_l2(a, b, dim);
  }
  static float distance(const float* a, simd::scaled_int8_row b, std::size_t dim) noexcept {
    return simd::squared_l2(a, b, dim);
  }
  static float distance(simd::scaled_int8_row a, simd::scaled_int8_row b, std::size_t dim) noexcept {
    return simd::squared_l2(a, b, dim);
  }
  static void distance_batch(const float* query, const float* rows, std::size_t count,
                             std::size_t dim, float* out) noexcept {
    simd::squared_l2_batch(query, rows, count, dim, out);
  }
  static float similarity(float distance) noexcept { return -distance; }
};

static_assert(Metric<cosine_metric> && Metric<inner_product_metric> && Metric<l2_metric>);

}  // namespace llmgate::inline v0
