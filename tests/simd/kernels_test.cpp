// The SIMD kernels against a double-precision scalar reference, for every
// dimension from 1 to 4096 and for pointers that are not aligned.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "llmgate/simd/kernels.hpp"

namespace simd = llmgate::simd;

namespace {

struct reference {
  static double dot(const float* a, const float* b, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += double(a[i]) * b[i];
    return s;
  }
  static double squared_l2(const float* a, const float* b, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    return s;
  }
};

// Float sums of n products in [-1, 1] carry an error that grows with n.
double tolerance(std::size_t n, double magnitude) { return 1e-5 * (magnitude + std::sqrt(double(n))); }

// Values with a 3-float margin so that pointers can start unaligned.
std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n + 3);
  for (float& x : v) x = uniform(generator);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernels_test)

BOOST_AUTO_TEST_CASE(dot_and_squared_l2_match_the_reference_for_every_dimension_and_offset) {
  const auto a = random_values(4096, 1);
  const auto b = random_values(4096, 2);
  for (std::size_t n = 1; n <= 4096; ++n) {
    const std::size_t offset = n % 4;  // 0..3 floats: aligned and unaligned starts
    const float* x = a.data() + offset;
    const float* y = b.data() + (3 - offset);
    const double dot = reference::dot(x, y, n);
    const double l2 = reference::squared_l2(x, y, n);
    BOOST_TEST_REQUIRE(std::abs(simd::dot(x, y, n) - dot) <= tolerance(n, std::abs(dot)), "dot, n=" << n);
    BOOST_TEST_REQUIRE(std::abs(simd::squared_l2(x, y, n) - l2) <= tolerance(n, l2), "l2, n=" << n);
  }
}

BOOST_AUTO_TEST_CASE(cosine_matches_the_reference_and_is_zero_for_a_zero_vector) {
  const auto a = random_values(1536, 3);
  const auto b = random_values(1536, 4);
  for (std::size_t n : {1u, 2u, 7u, 15u, 16u, 17u, 63u, 64u, 65u, 384u, 1000u, 1536u}) {
    const double expected = reference::dot(a.data(), b.data(), n) /
                            std::sqrt(reference::dot(a.data(), a.data(), n) * reference::dot(b.data(), b.data(), n));
    BOOST_TEST(std::abs(simd::cosine(a.data(), b.data(), n) - expected) <= 1e-5, "n=" << n);
  }
  const std::vector<float> zero(17, 0.0f);
  BOOST_TEST(simd::cosine(zero.data(), a.data(), 17) == 0.0f);
}

BOOST_AUTO_TEST_CASE(normalize_gives_unit_length_and_leaves_zero_alone) {
  for (std::size_t n = 1; n <= 700; n += 3) {
    auto v = random_values(n, unsigned(n));
    const double length = std::sqrt(reference::dot(v.data() + 1, v.data() + 1, n));
    BOOST_TEST(std::abs(simd::normalize(v.data() + 1, n) - length) <= 1e-5 * length);
    BOOST_TEST(std::abs(reference::dot(v.data() + 1, v.data() + 1, n) - 1.0) <= 1e-5, "n=" << n);
  }
  std::vector<float> zero(9, 0.0f);
  BOOST_TEST(simd::normalize(zero.data(), 9) == 0.0f);
  for (float x : zero) BOOST_TEST(x == 0.0f);
}

BOOST_AUTO_TEST_CASE(batched_scores_equal_one_query_against_each_row) {
  for (std::size_t dim : {1u, 3u, 16u, 31u, 384u, 1537u}) {
    for (std::size_t rows : {1u, 3u, 4u, 5u, 9u}) {
      const auto query = random_values(dim, unsigned(dim));
      const auto block = random_values(rows * dim, unsigned(rows * 31 + dim));
      std::vector<float> dots(rows), distances(rows);
      // Rows start one float in, so neither block nor query is aligned.
      simd::dot_batch(query.data() + 1, block.data() + 1, rows, dim, dots.data());
      simd::squared_l2_batch(query.data() + 1, block.data() + 1, rows, dim, distances.data());
      for (std::size_t r = 0; r < rows; ++r) {
        const float* row = block.data() + 1 + r * dim;
        const double dot = reference::dot(query.data() + 1, row, dim);
        const double l2 = reference::squared_l2(query.data() + 1, row, dim);
        BOOST_TEST(std::abs(dots[r] - dot) <= tolerance(dim, std::abs(dot)), "dim=" << dim << " row=" << r);
        BOOST_TEST(std::abs(distances[r] - l2) <= tolerance(dim, l2), "dim=" << dim << " row=" << r);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_instruction_set_is_named) {
  BOOST_TEST(std::string(simd::arch_name()).size() > 0);
  BOOST_TEST(simd::lanes >= 1u);
}

BOOST_AUTO_TEST_SUITE_END()
