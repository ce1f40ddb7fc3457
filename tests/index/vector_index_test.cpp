// The VectorIndex contract, checked for every index llmgate ships: exact
// matches, filters, removal and slot reuse, errors as values, and save/load.
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/hnsw_index.hpp"
#include "../temporary_directory.hpp"
#include "../test_vectors.hpp"

using llmgate::errc;
using llmgate::vector_id;

namespace {

using index_types = boost::mpl::list<llmgate::flat_index<>, llmgate::hnsw_index<llmgate::cosine_metric, float>,
                                     llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::float16>,
                                     llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::scaled_int8>>;

// How close to 1 a vector's similarity to itself must be: float16 storage
// rounds each component to 11 significant bits, scaled int8 to a 255th of
// the vector's largest component.
template <class Index>
constexpr float self_similarity = 0.9999f;
template <>
constexpr float self_similarity<llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::float16>> = 0.999f;
template <>
constexpr float self_similarity<llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::scaled_int8>> = 0.995f;

template <class Index>
Index make_index(std::size_t dimension) {
  if constexpr (!std::is_same_v<Index, llmgate::flat_index<>>)
    return Index(dimension, llmgate::hnsw_parameters{.m = 8, .ef_construction = 100, .ef_search = 64, .seed = 7});
  else
    return Index(dimension);
}

template <class Index>
Index filled_index(const llmgate::test::vector_set& data) {
  Index index = make_index<Index>(data.dimension);
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST_REQUIRE(!index.add(1000 + i, data[i]));
  return index;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vector_index_test)

BOOST_AUTO_TEST_CASE_TEMPLATE(every_stored_vector_finds_itself_first, Index, index_types) {
  const auto data = llmgate::test::clustered_vectors(500, 32, 20, 1);
  const Index index = filled_index<Index>(data);
  BOOST_TEST(index.size() == 500u);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto hits = index.search(data[i], 3);
    BOOST_TEST_REQUIRE(hits.size() == 3u);
    BOOST_TEST(hits[0].id == 1000 + i);
    BOOST_TEST(hits[0].similarity > self_similarity<Index>);
    BOOST_TEST(hits[0].similarity <= 1.0f);  // a cosine, though a stored row's rounding may push the dot product past 1
    BOOST_TEST(hits[0].distance <= hits[1].distance);
    BOOST_TEST(hits[1].distance <= hits[2].distance);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(the_filter_decides_which_ids_may_be_returned, Index, index_types) {
  const auto data = llmgate::test::clustered_vectors(400, 16, 10, 2);
  const Index index = filled_index<Index>(data);
  const auto even = [](vector_id id) { return id % 2 == 0; };
  for (std::size_t i = 0; i < 50; ++i) {
    const auto hits = index.search(data[i], 10, even);
    BOOST_TEST(hits.size() == 10u);
    for (const auto& hit : hits) BOOST_TEST(hit.id % 2 == 0u);
  }
  const auto none = [](vector_id) { return false; };
  BOOST_TEST(index.search(data[0], 5, none).empty());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(mistakes_are_reported_as_error_codes, Index, index_types) {
  Index index = make_index<Index>(4);
  const std::vector<float> v = {1, 0, 0, 0};
  const std::vector<float> wrong = {1, 0, 0};
  BOOST_TEST(!index.add(1, v));
  BOOST_TEST(index.add(1, v) == errc::duplicate_id);
  BOOST_TEST(index.add(2, wrong) == errc::dimension_mismatch);
  BOOST_TEST(index.size() == 1u);
  BOOST_TEST(index.search(wrong, 1).empty());
  BOOST_TEST(index.search(v, 0).empty());
  BOOST_TEST(!index.remove(99));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(an_empty_index_finds_nothing, Index, index_types) {
  const Index index = make_index<Index>(8);
  BOOST_TEST(index.search(std::vector<float>(8, 1.0f), 5).empty());
  BOOST_TEST(index.size() == 0u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(removed_ids_are_never_returned_and_their_slots_are_reused, Index, index_types) {
  const auto data = llmgate::test::clustered_vectors(600, 24, 12, 3);
  Index index = filled_index<Index>(data);
  for (std::size_t i = 0; i < data.size(); i += 3) BOOST_TEST(index.remove(1000 + i));
  BOOST_TEST(index.size() == 400u);
  for (std::size_t i = 0; i < data.size(); ++i) {
    BOOST_TEST(index.contains(1000 + i) == (i % 3 != 0));
    for (const auto& hit : index.search(data[i], 10)) BOOST_TEST((hit.id - 1000) % 3 != 0u);
  }
  // Adding as many as were removed reuses their slots: memory does not grow.
  const std::size_t memory = index.memory_usage();
  for (std::size_t i = 0; i < data.size(); i += 3) BOOST_TEST(!index.add(5000 + i, data[i]));
  BOOST_TEST(index.memory_usage() == memory);
  BOOST_TEST(index.size() == 600u);
  for (std::size_t i = 0; i < data.size(); i += 3) BOOST_TEST(index.search(data[i], 1).at(0).id == 5000 + i);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(removing_everything_then_adding_again_works, Index, index_types) {
  const auto data = llmgate::test::clustered_vectors(50, 8, 5, 4);
  Index index = filled_index<Index>(data);
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST(index.remove(1000 + i));
  BOOST_TEST(index.search(data[0], 5).empty());
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST(!index.add(i, data[i]));
  // An approximate index may leave the odd element unreachable (pruning can
  // drop every link into it); an exact one finds all of them.
  std::size_t found = 0;
  for (std::size_t i = 0; i < data.size(); ++i) found += index.search(data[i], 1).at(0).id == i;
  BOOST_TEST(found >= (std::is_same_v<Index, llmgate::flat_index<>> ? data.size() : data.size() - 2));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_loaded_index_answers_exactly_as_the_saved_one, Index, index_types) {
  llmgate::test::temporary_directory dir;
  const auto data = llmgate::test::clustered_vectors(300, 20, 10, 5);
  Index index = filled_index<Index>(data);
  for (std::size_t i = 0; i < data.size(); i += 7) index.remove(1000 + i);
  BOOST_TEST_REQUIRE(!index.save(dir / "index.bin"));
  const Index loaded = Index::load(dir / "index.bin");
  BOOST_TEST(loaded.size() == index.size());
  BOOST_TEST(loaded.dimension() == index.dimension());
  for (std::size_t i = 0; i < data.size(); ++i) BOOST_TEST((loaded.search(data[i], 5) == index.search(data[i], 5)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(corrupt_or_truncated_files_are_refused_with_a_clear_error, Index, index_types) {
  llmgate::test::temporary_directory dir;
  const auto data = llmgate::test::clustered_vectors(40, 8, 4, 6);
  const Index index = filled_index<Index>(data);
  BOOST_TEST_REQUIRE(!index.save(dir / "index.bin"));
  std::string bytes;
  {
    std::ifstream in(dir / "index.bin", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto damaged = dir / "damaged.bin";
  const auto refused = [&](const std::string& content) {
    std::ofstream(damaged, std::ios::binary | std::ios::trunc) << content;
    try {
      (void)Index::load(damaged);
    } catch (const llmgate::error& e) {
      return std::string(e.what()).find("damaged.bin") != std::string::npos;
    }
    return false;
  };
  for (std::size_t i = 0; i < bytes.size(); i += 1 + bytes.size() / 300) {
    std::string copy = bytes;
    copy[i] = static_cast<char>(copy[i] ^ 0x21);
    BOOST_TEST(refused(copy), "byte " << i << " changed but the file loaded");
    BOOST_TEST(refused(bytes.substr(0, i)), "truncated to " << i << " bytes but the file loaded");
  }
  BOOST_CHECK_THROW((void)Index::load(dir / "missing.bin"), llmgate::error);
}

BOOST_AUTO_TEST_CASE(a_file_of_another_metric_is_refused) {
  llmgate::test::temporary_directory dir;
  llmgate::flat_index<llmgate::l2_metric> l2(3);
  BOOST_TEST_REQUIRE(!l2.save(dir / "l2.bin"));
  try {
    (void)llmgate::flat_index<llmgate::cosine_metric>::load(dir / "l2.bin");
    BOOST_FAIL("an l2 index loaded as cosine");
  } catch (const llmgate::error& e) {
    BOOST_TEST(e.code() == errc::wrong_kind_of_file);
  }
}

BOOST_AUTO_TEST_SUITE_END()
