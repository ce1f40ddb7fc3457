// What both HTTP embedders (http_embedder, async_http_embedder) do with a
// vector a model server answered: check its length, then copy it scaled
// to unit length, since cosine is what the caches compare.
#pragma once

#include <cmath>         // std::sqrt
#include <cstddef>       // std::size_t
#include <span>          // std::span
#include <system_error>  // std::error_code

#include "llmgate/error.hpp"  // errc::dimension_mismatch

namespace llmgate::inline v0::detail {

/// Copies `vector` into `out`, scaled to unit length when `normalize` (a
/// zero vector stays zero). errc::dimension_mismatch, with `out` left
/// alone, when their lengths differ.
inline std::error_code copy_unit_vector(std::span<const float> vector, std::span<float> out, bool normalize) {
  if (vector.size() != out.size()) return make_error_code(errc::dimension_mismatch);
  double norm = 0;
  for (const float x : vector) norm += static_cast<double>(x) * x;
  const float scale = normalize && norm > 0 ? static_cast<float>(1 / std::sqrt(norm)) : 1.0f;
  for (std::size_t i = 0; i < vector.size(); ++i) out[i] = vector[i] * scale;
  return {};
}

}  // namespace llmgate::inline v0::detail
