// The semantic cache's count of bytes while inserts, removals, snapshots
// and re-embeddings run together: run under ThreadSanitizer (label
// "concurrency"); in every build it checks that the count never passes
// max_bytes and always equals the sum over the entries held.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"

using namespace llmgate;

namespace {

// Prompts of 1 to 20 KB of random words, far apart for the embedder.
std::vector<std::string> prompts(std::size_t count) {
  std::mt19937_64 draw(7);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t size = 1000 + draw() % 19'000;
    std::string text;
    while (text.size() < size) {
      std::uint64_t letters = draw();
      for (int l = 0; l < 8; ++l, letters /= 26) text += static_cast<char>('a' + letters % 26);
      text += ' ';
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

// The sum over the entries held of what each counts: its key text, its
// answer (the string object and its characters) and its vector of 384
// components at a byte each in the default (int8) index.
template <class Cache>
std::size_t entries_bytes(const Cache& cache) {
  std::size_t bytes = 0;
  cache.for_each_entry([&](const hash128&, std::string_view text, const std::string& answer, const answer_cost&) {
    bytes += text.size() + sizeof(std::string) + answer.size() + 384;
  });
  return bytes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_bytes_concurrency_test)

BOOST_AUTO_TEST_CASE(the_count_stays_exact_and_within_max_bytes_under_concurrent_changes) {
  constexpr std::size_t max_bytes = 150'000;
  hashing_embedder::options_type learning;
  learning.first_refresh = 32;  // re-embeddings run beside the inserts
  semantic_cache cache({.max_bytes = max_bytes}, hashing_embedder(learning), static_threshold{0.9f});
  const cache_scope scope;
  const auto texts = prompts(150);

  std::atomic<bool> inserting{true};
  std::atomic<int> over_bound{0};
  std::vector<std::thread> inserters;
  for (std::size_t t = 0; t < 3; ++t)
    inserters.emplace_back([&, t] {
      for (std::size_t i = t; i < texts.size(); i += 3) {
        auto found = cache.lookup(scope, texts[i]);
        if (found.outcome == lookup_outcome::miss) cache.insert(std::move(found), scope, texts[i], std::to_string(i));
      }
    });
  std::thread remover([&] {  // as another replica's evictions arrive
    while (inserting)
      for (std::size_t i = 0; i < texts.size(); i += 4) (void)cache.erase_replica(scope.hash(), texts[i]);
  });
  std::string snapshot;
  std::thread watcher([&] {
    while (inserting) {
      if (cache.bytes() > max_bytes || cache.statistics().bytes > max_bytes) ++over_bound;
      snapshot = cache.save_bytes();
    }
  });
  for (auto& thread : inserters) thread.join();
  inserting = false;
  remover.join();
  watcher.join();

  BOOST_TEST(over_bound == 0);
  BOOST_TEST(cache.bytes() <= max_bytes);
  BOOST_TEST(cache.bytes() == entries_bytes(cache));
  BOOST_TEST(cache.statistics().evictions > 0u);
  BOOST_TEST_REQUIRE(!snapshot.empty());
  const auto loaded = semantic_cache::load_bytes(snapshot, "a snapshot taken while inserts ran",
                                                 {.max_bytes = max_bytes});
  BOOST_TEST(loaded.bytes() <= max_bytes);
  BOOST_TEST(loaded.bytes() == entries_bytes(loaded));
}

BOOST_AUTO_TEST_SUITE_END()
