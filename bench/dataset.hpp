// Vectors for the index benchmark: a seeded generator of clustered unit
// vectors shaped like sentence embeddings, and readers for the two common
// file formats of ANN benchmarks.
#pragma once

#include <algorithm>   // std::min
#include <cmath>       // std::sqrt
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint32_t, std::uint64_t
#include <filesystem>  // std::filesystem::path, exists, file_size
#include <fstream>     // std::ifstream
#include <initializer_list>  // std::initializer_list
#include <random>      // std::mt19937_64, std::normal_distribution
#include <span>        // std::span
#include <stdexcept>   // std::runtime_error
#include <string>      // std::string
#include <vector>      // std::vector

#include <llmgate/simd/kernels.hpp>

namespace llmgate_bench {

/// Rows of `dim` floats stored back to back.
struct vector_set {
  std::size_t dim = 0;
  std::vector<float> values;

  std::size_t size() const { return dim ? values.size() / dim : 0; }
  std::span<const float> row(std::size_t r) const { return {values.data() + r * dim, dim}; }
  float* row_data(std::size_t r) { return values.data() + r * dim; }

  void normalize_rows() {
    for (std::size_t r = 0; r < size(); ++r) llmgate::simd::normalize(row_data(r), dim);
  }
};

/// Unit vectors that have what makes real embeddings hard or easy for an
/// ANN index: a mean direction every vector shares (so a random pair has a
/// small positive cosine, as with sentence embeddings), a low-rank
/// component (a few directions carry much of the variance), clusters
/// (topics), and full-rank noise. Each vector is
///
///   normalize(a_mean * mean + a_shared * U g / sqrt(rank) + a_cluster * centre[c] + a_noise * e)
///
/// with `mean`, the columns of U and the centres random unit vectors, g and
/// e standard normal (e scaled to unit expected length), c uniform over the
/// clusters. The squared weights are the shares of each part in the
/// expected squared length; they are tuned so that among 100,000 vectors
/// of 384 dimensions a query's closest neighbour has a cosine near 0.8 and a
/// random pair near 0.04 (fewer vectors give a lower top-1; the benchmark
/// prints what it measures). The same seed gives the same vectors with the
/// same standard library (std::normal_distribution's algorithm is its own).
class clustered_generator {
 public:
  static constexpr std::size_t clusters = 1000;
  static constexpr std::size_t rank = 16;
  static constexpr double mean_share = 0.04;
  static constexpr double shared_share = 0.30;
  static constexpr double cluster_share = 0.57;
  static constexpr double noise_share = 1.0 - mean_share - shared_share - cluster_share;

  clustered_generator(std::size_t dim, std::uint64_t seed) : dim_(dim), random_(seed) {
    mean_ = unit_vectors(1);
    basis_ = unit_vectors(rank);
    centres_ = unit_vectors(clusters);
  }

  /// `count` new vectors; successive calls continue the same random stream,
  /// so the base set and the queries are disjoint draws.
  vector_set draw(std::size_t count) {
    vector_set out{dim_, std::vector<float>(count * dim_)};
    std::uniform_int_distribution<std::size_t> pick_cluster(0, clusters - 1);
    std::vector<float> g(rank);
    const float a_mean = std::sqrt(mean_share), a_cluster = std::sqrt(cluster_share);
    const float a_shared = std::sqrt(shared_share / rank);
    const float a_noise = std::sqrt(noise_share / dim_);
    for (std::size_t r = 0; r < count; ++r) {
      float* x = out.row_data(r);
      const float* centre = centres_.row(pick_cluster(random_)).data();
      for (auto& v : g) v = normal_(random_);
      for (std::size_t i = 0; i < dim_; ++i)
        x[i] = a_mean * mean_.values[i] + a_cluster * centre[i] + a_noise * normal_(random_);
      for (std::size_t j = 0; j < rank; ++j) {
        const float* u = basis_.row(j).data();
        for (std::size_t i = 0; i < dim_; ++i) x[i] += a_shared * g[j] * u[i];
      }
    }
    out.normalize_rows();
    return out;
  }

 private:
  vector_set unit_vectors(std::size_t count) {
    vector_set out{dim_, std::vector<float>(count * dim_)};
    for (auto& v : out.values) v = normal_(random_);
    out.normalize_rows();
    return out;
  }

  std::size_t dim_;
  std::mt19937_64 random_;
  std::normal_distribution<float> normal_;
  vector_set mean_, basis_, centres_;
};

/// Reads at most `limit` vectors from `path`, by its extension:
///   .fvecs  each vector as int32 dimension, then that many float32 (TEXMEX)
///   .fbin   uint32 count, uint32 dimension, then count * dimension float32
///           (big-ann-benchmarks)
/// Little-endian, as both formats are written. Throws std::runtime_error
/// with the file name when it cannot be read or is malformed.
inline vector_set read_vectors(const std::filesystem::path& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  const auto fail = [&](const char* why) {
    return std::runtime_error(path.string() + ": " + why);
  };
  if (!in) throw fail("cannot open");
  vector_set out;
  if (path.extension() == ".fbin") {
    std::uint32_t header[2];
    if (!in.read(reinterpret_cast<char*>(header), sizeof header) || header[1] == 0)
      throw fail("no .fbin header");
    out.dim = header[1];
    const std::size_t count = std::min<std::size_t>(header[0], limit);
    out.values.resize(count * out.dim);
    if (!in.read(reinterpret_cast<char*>(out.values.data()),
                 static_cast<std::streamsize>(out.values.size() * sizeof(float))))
      throw fail("shorter than its header says");
  } else if (path.extension() == ".fvecs") {
    std::uint32_t dim = 0;
    while (out.size() < limit && in.read(reinterpret_cast<char*>(&dim), sizeof dim)) {
      if (dim == 0 || (out.dim != 0 && dim != out.dim)) throw fail("vectors of different dimensions");
      out.dim = dim;
      const std::size_t first = out.values.size();
      out.values.resize(first + dim);
      if (!in.read(reinterpret_cast<char*>(out.values.data() + first), dim * sizeof(float)))
        throw fail("ends inside a vector");
    }
    if (out.dim == 0) throw fail("holds no vectors");
  } else {
    throw fail("unknown format (expected .fvecs or .fbin)");
  }
  return out;
}

/// The first existing file among `stem` + each of `suffixes`, or empty.
inline std::filesystem::path find_file(const std::string& stem, std::initializer_list<const char*> suffixes) {
  for (const char* suffix : suffixes)
    if (std::filesystem::exists(stem + suffix)) return stem + suffix;
  return {};
}

}  // namespace llmgate_bench
