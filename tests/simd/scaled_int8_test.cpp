// scaled_int8: quantization within half a step, and the kernels against
// references computed in double (float query x row) or in exact integers
// (row x row).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "llmgate/simd/kernels.hpp"
#include "llmgate/simd/scaled_int8.hpp"

namespace simd = llmgate::simd;

namespace {

struct quantized {
  std::vector<simd::scaled_int8> codes;
  float scale;
  simd::scaled_int8_row row() const { return {codes.data(), scale}; }
};

quantized quantize(const std::vector<float>& values) {
  quantized q{std::vector<simd::scaled_int8>(values.size()), 0.0f};
  q.scale = simd::quantize(values.data(), q.codes.data(), values.size());
  return q;
}

std::vector<float> random_values(std::size_t n, std::mt19937& generator) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& x : values) x = uniform(generator);
  return values;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scaled_int8_test)

BOOST_AUTO_TEST_CASE(quantization_keeps_every_value_within_half_a_step) {
  std::mt19937 generator(3);
  for (const std::size_t n : {1, 7, 384, 1000}) {
    const auto values = random_values(n, generator);
    const auto q = quantize(values);
    const float largest = std::ranges::max(values, {}, [](float x) { return std::abs(x); });
    BOOST_TEST(q.scale == std::abs(largest) / 127.0f);
    std::vector<float> widened(n);
    simd::widen(q.row(), widened.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      BOOST_TEST_REQUIRE(std::abs(q.codes[i].code) <= 127);
      BOOST_TEST_REQUIRE(std::abs(widened[i] - values[i]) <= 0.5f * q.scale * 1.0001f, "n " << n << ", i " << i);
    }
    // The largest magnitude is the end of the range, exactly.
    BOOST_TEST(std::ranges::count_if(q.codes, [](simd::scaled_int8 c) { return std::abs(c.code) == 127; }) >= 1);
  }
}

// The largest magnitude is found a register at a time with a scalar tail:
// wherever it sits, in a register's lane or in the tail, it sets the scale.
BOOST_AUTO_TEST_CASE(the_scale_comes_from_the_largest_magnitude_wherever_it_is) {
  std::mt19937 generator(4);
  for (const std::size_t n : {13, 389}) {
    for (std::size_t at = 0; at < n; ++at) {
      auto values = random_values(n, generator);
      for (float& x : values) x *= 0.5f;
      values[at] = -0.9f;
      BOOST_TEST_REQUIRE(simd::largest_magnitude(values.data(), n) == 0.9f, "n " << n << ", at " << at);
      BOOST_TEST_REQUIRE(quantize(values).codes[at].code == -127);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_zero_vector_has_scale_zero_and_zero_codes) {
  const auto q = quantize(std::vector<float>(40, 0.0f));
  BOOST_TEST(q.scale == 0.0f);
  BOOST_TEST(std::ranges::all_of(q.codes, [](simd::scaled_int8 c) { return c.code == 0; }));
  const std::vector<float> query(40, 1.0f);
  BOOST_TEST(simd::dot(query.data(), q.row(), 40) == 0.0f);
  BOOST_TEST(simd::dot(q.row(), q.row(), 40) == 0.0f);
}

BOOST_AUTO_TEST_CASE(float_query_kernels_match_the_reference_for_every_dimension) {
  std::mt19937 generator(5);
  const auto query = random_values(1100, generator);
  const auto q = quantize(random_values(1100, generator));
  for (std::size_t n = 1; n <= 1100; ++n) {
    double dot = 0, l2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = query[i], y = double{q.scale} * q.codes[i].code;
      dot += x * y;
      l2 += (x - y) * (x - y);
    }
    const double tolerance = 1e-5 * (1 + std::sqrt(double(n)));
    BOOST_TEST_REQUIRE(std::abs(simd::dot(query.data(), q.row(), n) - dot) <= tolerance + 1e-5 * std::abs(dot),
                       "n=" << n);
    BOOST_TEST_REQUIRE(std::abs(simd::squared_l2(query.data(), q.row(), n) - l2) <= tolerance + 1e-5 * l2,
                       "n=" << n);
  }
}

// The integer kernels sum code products exactly; only the final scaling
// rounds.
BOOST_AUTO_TEST_CASE(row_kernels_sum_the_codes_exactly_for_every_dimension) {
  std::mt19937 generator(9);
  const auto a = quantize(random_values(1100, generator));
  const auto b = quantize(random_values(1100, generator));
  for (std::size_t n = 1; n <= 1100; ++n) {
    std::int64_t ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t x = a.codes[i].code, y = b.codes[i].code;
      ab += x * y, aa += x * x, bb += y * y;
    }
    const double dot = double{a.scale} * b.scale * static_cast<double>(ab);
    const double l2 = double{a.scale} * a.scale * static_cast<double>(aa) +
                      double{b.scale} * b.scale * static_cast<double>(bb) - 2 * dot;
    BOOST_TEST_REQUIRE(std::abs(simd::dot(a.row(), b.row(), n) - dot) <= 1e-6 * (1 + std::abs(dot)), "n=" << n);
    BOOST_TEST_REQUIRE(std::abs(simd::squared_l2(a.row(), b.row(), n) - l2) <= 1e-5 * (1 + l2), "n=" << n);
  }
}

// The integer sums themselves, exactly, against a scalar loop, on lengths
// that take every path of detail::sum_codes on this build (AVX-512 VNNI:
// four registers of 64 codes a loop step, up to three single registers, a
// masked tail; AVX-VNNI: four or two registers of 32 a step, single ones,
// a scalar tail; AVX2: one register a step, a scalar tail) and cross its
// 32K-code blocks, at an aligned and an unaligned start, on random codes
// and on the extremes. dot of two rows with scale 1 is the float nearest
// the exact sum.
BOOST_AUTO_TEST_CASE(code_sums_are_exact_on_every_path_and_tail) {
  constexpr std::size_t lengths[] = {0,   1,   2,   31,  32,  33,   63,   64,    65,    100,   127,   128,   129,
                                     191, 192, 193, 255, 384, 1000, 1536, 32767, 32768, 32769, 65636, 70000};
  constexpr std::size_t longest = 70000 + 1;
  std::mt19937 generator(13);
  std::uniform_int_distribution<int> code(-127, 127);
  const auto codes = [&](auto make) {
    std::vector<simd::scaled_int8> v(longest);
    for (std::size_t i = 0; i < longest; ++i) v[i].code = static_cast<std::int8_t>(make(i));
    return v;
  };
  const std::vector<std::pair<const char*, std::vector<simd::scaled_int8>>> rows = {
      {"random", codes([&](std::size_t) { return code(generator); })},
      {"random", codes([&](std::size_t) { return code(generator); })},
      {"+127", codes([](std::size_t) { return 127; })},
      {"-127", codes([](std::size_t) { return -127; })},
      {"alternating +-127", codes([](std::size_t i) { return i % 2 ? -127 : 127; })},
      {"runs of +-127", codes([](std::size_t i) { return i / 37 % 2 ? -127 : 127; })},
  };
  for (const auto& [a_name, a] : rows)
    for (const auto& [b_name, b] : rows)
      for (const std::size_t start : {0, 1})
        for (const std::size_t n : lengths) {
          const simd::scaled_int8* x = a.data() + start;
          const simd::scaled_int8* y = b.data() + start;
          std::int64_t ab = 0, aa = 0, bb = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t p = x[i].code, q = y[i].code;
            ab += p * q, aa += p * p, bb += q * q;
          }
          const auto with_squares = simd::detail::sum_codes<true>(x, y, n);
          const auto without = simd::detail::sum_codes<false>(x, y, n);
          BOOST_TEST_CONTEXT(a_name << " x " << b_name << ", start " << start << ", n " << n) {
            BOOST_TEST_REQUIRE(with_squares.ab == ab);
            BOOST_TEST_REQUIRE(with_squares.aa == aa);
            BOOST_TEST_REQUIRE(with_squares.bb == bb);
            BOOST_TEST_REQUIRE(without.ab == ab);
            BOOST_TEST_REQUIRE(simd::dot({x, 1.0f}, {y, 1.0f}, n) == static_cast<float>(ab));
          }
        }
}

// Rows long enough that 32-bit lanes summing 127 * 127 products would
// overflow: the kernel must widen its sums in time.
BOOST_AUTO_TEST_CASE(row_kernels_do_not_overflow_on_long_rows_of_extreme_codes) {
  constexpr std::size_t n = 200'000;
  const std::vector<simd::scaled_int8> plus(n, simd::scaled_int8{127}), minus(n, simd::scaled_int8{-127});
  const double products = 127.0 * 127.0 * n;  // 3.2e9, past 2^31
  BOOST_TEST(simd::dot({plus.data(), 1.0f}, {plus.data(), 1.0f}, n) == products, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(simd::dot({plus.data(), 1.0f}, {minus.data(), 1.0f}, n) == -products, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(simd::squared_l2({plus.data(), 1.0f}, {minus.data(), 1.0f}, n) == 4 * products,
             boost::test_tools::tolerance(1e-6));
}

// What the header promises: on unit 384-d vectors the cosine of a float
// query and a stored row moves by about 1.5e-3 at most, and that of two
// stored rows scored in integers by about 2e-3.
BOOST_AUTO_TEST_CASE(unit_vector_cosines_move_by_about_a_thousandth) {
  constexpr std::size_t dim = 384;
  std::mt19937 generator(11);
  std::normal_distribution<float> normal;
  const auto unit = [&] {
    std::vector<float> v(dim);
    for (float& x : v) x = normal(generator);
    simd::normalize(v.data(), dim);
    return v;
  };
  double worst_query = 0, worst_rows = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto a = unit(), b = unit();
    // Mix so that pairs range from unrelated to near duplicates.
    const float mix = static_cast<float>(trial % 100) / 100.0f;
    for (std::size_t i = 0; i < dim; ++i) b[i] = mix * a[i] + (1 - mix) * b[i];
    simd::normalize(b.data(), dim);
    const double exact = simd::dot(a.data(), b.data(), dim);
    const auto qa = quantize(a), qb = quantize(b);
    worst_query = std::max(worst_query, std::abs(simd::dot(a.data(), qb.row(), dim) - exact));
    worst_rows = std::max(worst_rows, std::abs(simd::dot(qa.row(), qb.row(), dim) - exact));
  }
  BOOST_TEST_MESSAGE("largest cosine error: float query " << worst_query << ", two int8 rows " << worst_rows);
  BOOST_TEST(worst_query < 2e-3);
  BOOST_TEST(worst_rows < 3e-3);
}

BOOST_AUTO_TEST_SUITE_END()
