// Many searches while another thread adds and removes: run under
// ThreadSanitizer (preset "tsan", label "concurrency") to prove the absence
// of data races; in every build it checks that searches only ever return
// ids that were added and never an id that was removed before they began.
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/hnsw_index.hpp"
#include "../test_vectors.hpp"

namespace {
using index_types = boost::mpl::list<llmgate::flat_index<>, llmgate::hnsw_index<llmgate::cosine_metric, float>,
                                     llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::float16>,
                                     llmgate::hnsw_index<llmgate::cosine_metric, llmgate::simd::scaled_int8>>;
}

BOOST_AUTO_TEST_SUITE(index_concurrency_test)

BOOST_AUTO_TEST_CASE_TEMPLATE(searches_run_while_a_writer_adds_and_removes, Index, index_types) {
  constexpr std::size_t dim = 16, initial = 500, added = 600;
  const auto data = llmgate::test::clustered_vectors(initial + added, dim, 10, 31);
  Index index(dim);
  for (std::size_t i = 0; i < initial; ++i) BOOST_TEST_REQUIRE(!index.add(i, data[i]));

  // Ids below `removed_below` are gone for good once it is published.
  std::atomic<std::size_t> removed_below{0};
  std::atomic<bool> writing{true};
  std::atomic<std::size_t> bad_hits{0}, searches{0};

  std::thread writer([&] {
    for (std::size_t i = initial; i < initial + added; ++i) {
      if (index.add(i, data[i])) bad_hits++;
      if (i % 2 == 0) {
        const std::size_t victim = (i - initial) / 2;
        if (!index.remove(victim)) bad_hits++;
        removed_below.store(victim + 1);
      }
    }
    writing = false;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      for (std::size_t q = r; writing || q < 200; q += 3) {
        const std::size_t gone = removed_below.load();
        for (const auto& hit : index.search(data[q % data.size()], 5))
          if (hit.id < gone || hit.id >= initial + added) bad_hits++;
        searches++;
      }
    });
  }
  writer.join();
  for (auto& reader : readers) reader.join();
  BOOST_TEST(bad_hits.load() == 0u);
  BOOST_TEST(searches.load() > 0u);
  BOOST_TEST(index.size() == initial + added - added / 2);
}

BOOST_AUTO_TEST_SUITE_END()
