// Seeded vector data for the index tests: clustered unit vectors, the shape
// of real embeddings (near neighbours much closer than random pairs).
#pragma once

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "llmgate/simd/kernels.hpp"

namespace llmgate::test {

struct vector_set {
  std::size_t dimension;
  std::vector<float> values;  // row i at values[i * dimension]
  std::span<const float> operator[](std::size_t i) const {
    return {values.data() + i * dimension, dimension};
  }
  std::size_t size() const { return values.size() / dimension; }
};

/// `count` unit vectors around `clusters` random centres.
inline vector_set clustered_vectors(std::size_t count, std::size_t dimension, std::size_t clusters,
                                    unsigned seed, float spread = 0.6f) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<float> centres(clusters * dimension);
  for (float& x : centres) x = normal(generator);
  vector_set set{dimension, std::vector<float>(count * dimension)};
  for (std::size_t i = 0; i < count; ++i) {
    const float* centre = centres.data() + (generator() % clusters) * dimension;
    float* row = set.values.data() + i * dimension;
    for (std::size_t j = 0; j < dimension; ++j) row[j] = centre[j] + spread * normal(generator);
    simd::normalize(row, dimension);
  }
  return set;
}

}  // namespace llmgate::test
