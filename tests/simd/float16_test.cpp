// float16 conversion against the rules of IEEE 754 binary16, and the
// float32-query x float16-row kernels against a double reference.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "llmgate/simd/float16.hpp"

namespace simd = llmgate::simd;

BOOST_AUTO_TEST_SUITE(float16_test)

BOOST_AUTO_TEST_CASE(every_float16_survives_a_round_trip_through_float) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const simd::float16 h{static_cast<std::uint16_t>(bits)};
    const float f = simd::to_float(h);
    if (std::isnan(f)) continue;  // NaN payloads are made quiet
    BOOST_TEST_REQUIRE(simd::to_float16(f).bits == h.bits, "bits " << bits);
  }
}

BOOST_AUTO_TEST_CASE(conversion_rounds_to_nearest_even_and_saturates_to_infinity) {
  BOOST_TEST(simd::to_float(simd::to_float16(1.0f)) == 1.0f);
  BOOST_TEST(simd::to_float(simd::to_float16(-2.5f)) == -2.5f);
  BOOST_TEST(simd::to_float(simd::to_float16(65504.0f)) == 65504.0f);  // the largest half
  BOOST_TEST(std::isinf(simd::to_float(simd::to_float16(65536.0f))));
  BOOST_TEST(std::isinf(simd::to_float(simd::to_float16(std::numeric_limits<float>::infinity()))));
  BOOST_TEST(std::isnan(simd::to_float(simd::to_float16(std::numeric_limits<float>::quiet_NaN()))));
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to even, 1.
  BOOST_TEST(simd::to_float(simd::to_float16(1.0f + 0x1.0p-11f)) == 1.0f);
  BOOST_TEST(simd::to_float(simd::to_float16(1.0f + 0x1.8p-11f)) == 1.0f + 0x1.0p-10f);
  BOOST_TEST(simd::to_float(simd::to_float16(0x1.0p-24f)) == 0x1.0p-24f);  // smallest subnormal
  BOOST_TEST(simd::to_float(simd::to_float16(0x1.0p-26f)) == 0.0f);
  BOOST_TEST(simd::to_float16(-0.0f).bits == 0x8000u);
}

// widen() converts a register at a time (the conversion instruction where
// the build allows it) and the tail one by one: both must give to_float's
// bits, for every float16 and for every length around a register's width.
BOOST_AUTO_TEST_CASE(widen_gives_the_bits_of_to_float_for_every_float16) {
  std::vector<simd::float16> all(0x10000);
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) all[bits].bits = static_cast<std::uint16_t>(bits);
  std::vector<float> widened(all.size());
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, simd::lanes - 1, simd::lanes, simd::lanes + 3, all.size()}) {
    std::ranges::fill(widened, -7.0f);
    simd::widen(all.data(), widened.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      BOOST_TEST_REQUIRE(std::bit_cast<std::uint32_t>(widened[i]) == std::bit_cast<std::uint32_t>(simd::to_float(all[i])),
                         "float16 bits " << i << ", n " << n);
    if (n < widened.size()) BOOST_TEST(widened[n] == -7.0f);  // nothing written past n
  }
}

BOOST_AUTO_TEST_CASE(kernels_on_float16_rows_match_the_reference_for_every_dimension) {
  std::mt19937 generator(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> query(1100);
  std::vector<simd::float16> row(1100);
  for (float& x : query) x = uniform(generator);
  for (auto& h : row) h = simd::to_float16(uniform(generator));
  for (std::size_t n = 1; n <= 1100; ++n) {
    double dot = 0, l2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = query[i], y = simd::to_float(row[i]);
      dot += x * y;
      l2 += (x - y) * (x - y);
    }
    const double tolerance = 1e-5 * (1 + std::sqrt(double(n)));
    BOOST_TEST_REQUIRE(std::abs(simd::dot(query.data(), row.data(), n) - dot) <= tolerance + 1e-5 * std::abs(dot), "n=" << n);
    BOOST_TEST_REQUIRE(std::abs(simd::squared_l2(query.data(), row.data(), n) - l2) <= tolerance + 1e-5 * l2, "n=" << n);
  }
}

BOOST_AUTO_TEST_SUITE_END()
