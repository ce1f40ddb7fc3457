// flat_index is exact: its answers equal a brute-force double-precision
// ranking under each metric.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "llmgate/index/flat_index.hpp"
#include "../test_vectors.hpp"

namespace {

template <class Metric>
void check_exact_ranking(auto distance) {
  std::mt19937 generator(11);
  std::normal_distribution<float> normal;
  const std::size_t dim = 19, count = 700;
  std::vector<float> data(count * dim);
  for (float& x : data) x = normal(generator);
  llmgate::flat_index<Metric> index(dim);
  for (std::size_t i = 0; i < count; ++i) BOOST_TEST_REQUIRE(!index.add(i, {data.data() + i * dim, dim}));
  for (int q = 0; q < 20; ++q) {
    std::vector<float> query(dim);
    for (float& x : query) x = normal(generator);
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::vector<double> d(count);
    for (std::size_t i = 0; i < count; ++i) d[i] = distance(query.data(), data.data() + i * dim, dim);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return d[a] < d[b]; });
    const auto hits = index.search(query, 10);
    BOOST_TEST_REQUIRE(hits.size() == 10u);
    for (std::size_t r = 0; r < 10; ++r) BOOST_TEST(hits[r].id == order[r], "query " << q << " rank " << r);
  }
}

double dot(const float* a, const float* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += double(a[i]) * b[i];
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(flat_index_test)

BOOST_AUTO_TEST_CASE(cosine_ranking_is_exact) {
  check_exact_ranking<llmgate::cosine_metric>(
      [](const float* a, const float* b, std::size_t n) { return -dot(a, b, n) / std::sqrt(dot(a, a, n) * dot(b, b, n)); });
}

BOOST_AUTO_TEST_CASE(inner_product_ranking_is_exact) {
  check_exact_ranking<llmgate::inner_product_metric>(
      [](const float* a, const float* b, std::size_t n) { return -dot(a, b, n); });
}

BOOST_AUTO_TEST_CASE(l2_ranking_is_exact) {
  check_exact_ranking<llmgate::l2_metric>([](const float* a, const float* b, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    return s;
  });
}

BOOST_AUTO_TEST_CASE(similarity_reads_as_the_metric_says) {
  llmgate::flat_index<llmgate::cosine_metric> cosine(2);
  BOOST_TEST_REQUIRE(!cosine.add(1, std::vector<float>{3, 4}));
  const auto hit = cosine.search(std::vector<float>{4, 3}, 1).at(0);
  BOOST_TEST(hit.similarity == 24.0f / 25.0f, boost::test_tools::tolerance(1e-6f));
  llmgate::flat_index<llmgate::l2_metric> l2(2);
  BOOST_TEST_REQUIRE(!l2.add(1, std::vector<float>{3, 4}));
  BOOST_TEST(l2.search(std::vector<float>{0, 0}, 1).at(0).distance == 25.0f);
  BOOST_TEST(l2.search(std::vector<float>{0, 0}, 1).at(0).similarity == -25.0f);
}

BOOST_AUTO_TEST_SUITE_END()
