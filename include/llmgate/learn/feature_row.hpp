// feature_row: one example's features as (index, value) pairs, the form
// the learners take: a hashed text vector and a few indicators are sparse
// or short, and a dense vector is a row with every index.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <span>     // std::span
#include <vector>   // std::vector

namespace llmgate::inline v0 {

struct feature_row {
  std::vector<std::uint32_t> index;  ///< each below the learner's dimension; may repeat (values add up)
  std::vector<float> value;

  void add(std::uint32_t at, float v) {
    index.push_back(at);
    value.push_back(v);
  }
  std::size_t size() const noexcept { return index.size(); }

  /// The dot product with a dense weight vector covering every index.
  double dot(std::span<const float> weights) const noexcept {
    double sum = 0;
    for (std::size_t k = 0; k < index.size(); ++k) sum += static_cast<double>(weights[index[k]]) * value[k];
    return sum;
  }
};

}  // namespace llmgate::inline v0
