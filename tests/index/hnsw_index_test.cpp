// hnsw_index: what is particular to the approximate index (recall against
// the exact answer, determinism, the search breadth, slot reuse of the
// entry point).
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/hnsw_index.hpp"
#include "../file_bytes.hpp"  // read_bytes
#include "../temporary_directory.hpp"
#include "../test_vectors.hpp"

namespace {

using llmgate::test::read_bytes;

const llmgate::hnsw_parameters parameters{.m = 12, .ef_construction = 100, .ef_search = 10, .seed = 3};

llmgate::hnsw_index<> build(const llmgate::test::vector_set& data, llmgate::hnsw_parameters p = parameters) {
  llmgate::hnsw_index<> index(data.dimension, p);
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST_REQUIRE(!index.add(i, data[i]));
  return index;
}

double recall_at_10(const llmgate::hnsw_index<>& index, const llmgate::flat_index<>& exact,
                    const llmgate::test::vector_set& queries, std::size_t ef) {
  std::size_t found = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto truth = exact.search(queries[q], 10);
    for (const auto& hit : index.search(queries[q], 10, ef))
      found += std::count_if(truth.begin(), truth.end(), [&](const auto& t) { return t.id == hit.id; });
  }
  return double(found) / (10.0 * queries.size());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hnsw_index_test)

BOOST_AUTO_TEST_CASE(recall_grows_with_ef_and_is_high_at_a_moderate_ef) {
  const auto data = llmgate::test::clustered_vectors(4000, 48, 60, 21);
  const auto queries = llmgate::test::clustered_vectors(100, 48, 60, 21 + 1);
  const auto index = build(data);
  llmgate::flat_index<> exact(48);
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST_REQUIRE(!exact.add(i, data[i]));
  const double low = recall_at_10(index, exact, queries, 10);
  const double high = recall_at_10(index, exact, queries, 200);
  BOOST_TEST_MESSAGE("recall@10: ef=10 " << low << ", ef=200 " << high);
  BOOST_TEST(high >= 0.97);
  BOOST_TEST(high >= low);
}

BOOST_AUTO_TEST_CASE(the_same_seed_and_data_give_the_same_graph) {
  llmgate::test::temporary_directory dir;
  const auto data = llmgate::test::clustered_vectors(800, 16, 20, 22);
  BOOST_TEST_REQUIRE(!build(data).save(dir / "a.bin"));
  BOOST_TEST_REQUIRE(!build(data).save(dir / "b.bin"));
  BOOST_TEST((read_bytes(dir / "a.bin") == read_bytes(dir / "b.bin")));
  auto other_seed = parameters;
  other_seed.seed = 4;
  BOOST_TEST_REQUIRE(!build(data, other_seed).save(dir / "c.bin"));
  BOOST_TEST((read_bytes(dir / "a.bin") != read_bytes(dir / "c.bin")));
}

BOOST_AUTO_TEST_CASE(a_loaded_index_keeps_growing_as_the_original_would) {
  llmgate::test::temporary_directory dir;
  const auto data = llmgate::test::clustered_vectors(600, 16, 20, 23);
  auto original = build(data);
  BOOST_TEST_REQUIRE(!original.save(dir / "saved.bin"));
  auto loaded = llmgate::hnsw_index<>::load(dir / "saved.bin");
  BOOST_TEST(loaded.parameters().m == parameters.m);
  const auto more = llmgate::test::clustered_vectors(200, 16, 20, 24);
  for (std::size_t i = 0; i < more.size(); ++i) {
    BOOST_TEST_REQUIRE(!original.add(10000 + i, more[i]));
    BOOST_TEST_REQUIRE(!loaded.add(10000 + i, more[i]));
  }
  BOOST_TEST_REQUIRE(!original.save(dir / "original.bin"));
  BOOST_TEST_REQUIRE(!loaded.save(dir / "loaded.bin"));
  BOOST_TEST((read_bytes(dir / "original.bin") == read_bytes(dir / "loaded.bin")));
}

BOOST_AUTO_TEST_CASE(the_entry_point_can_be_removed_and_its_slot_reused) {
  const auto data = llmgate::test::clustered_vectors(300, 16, 10, 25);
  auto index = build(data);
  // Remove everything but a few, reuse the freed slots, and check that
  // every element is still reachable, whichever slot held the entry point.
  for (std::size_t i = 0; i < 290; ++i) BOOST_TEST(index.remove(i));
  for (std::size_t i = 0; i < 290; ++i) BOOST_TEST_REQUIRE(!index.add(1000 + i, data[i]));
  std::size_t self_found = 0;
  for (std::size_t i = 0; i < 290; ++i) self_found += index.search(data[i], 1, 50).at(0).id == 1000 + i;
  BOOST_TEST(self_found >= 285u);
}

BOOST_AUTO_TEST_CASE(a_copy_is_independent_and_overwritten_vectors_are_found_through_the_old_graph) {
  const auto data = llmgate::test::clustered_vectors(1000, 32, 20, 26);
  const auto index = build(data);
  auto copy = index.copy();
  BOOST_TEST(copy.size() == index.size());
  BOOST_TEST_REQUIRE(!copy.add(5000, data[0]));
  BOOST_TEST(!index.contains(5000));

  // Every vector moved a little (as a re-weighting of the same texts does):
  // the copy keeps its links and still finds each under its new vector.
  const auto moved = llmgate::test::clustered_vectors(1000, 32, 20, 27, 0.05f);
  std::size_t self_found = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    std::vector<float> nudged(data[i].begin(), data[i].end());
    for (std::size_t d = 0; d < nudged.size(); ++d) nudged[d] += 0.1f * moved[i][d];
    BOOST_TEST_REQUIRE(!copy.overwrite(i, nudged));
    self_found += copy.search(nudged, 1, 50).at(0).id == i;
  }
  BOOST_TEST(self_found >= 990u);
  BOOST_TEST(index.search(data[3], 1).at(0).id == 3u);  // the original is untouched
  BOOST_TEST((copy.overwrite(9999, data[0]) == llmgate::errc::unknown_id));
  BOOST_TEST((copy.overwrite(1, std::vector<float>(5)) == llmgate::errc::dimension_mismatch));
}

BOOST_AUTO_TEST_CASE(bad_parameters_are_refused) {
  BOOST_CHECK_THROW(llmgate::hnsw_index<>(0), std::invalid_argument);
  BOOST_CHECK_THROW(llmgate::hnsw_index<>(8, {.m = 1}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
