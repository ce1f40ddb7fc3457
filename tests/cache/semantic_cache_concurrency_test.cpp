// Concurrent lookups, inserts, feedback and re-embedding under new weights
// on one semantic cache: run under
// ThreadSanitizer (label "concurrency"); in every build it checks that no
// lookup returns another scope's answer.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/index/flat_index.hpp"

using namespace llmgate;

BOOST_AUTO_TEST_SUITE(semantic_cache_concurrency_test)

BOOST_AUTO_TEST_CASE(lookups_inserts_and_feedback_run_together) {
  basic_semantic_cache<std::string, hashing_embedder, hnsw_index<cosine_metric>, lru_eviction, adaptive_threshold>
      cache({.max_entries = 300}, hashing_embedder(), adaptive_threshold({.min_feedback = 5}));
  const std::vector<cache_scope> scopes = {cache_scope({.tenant = "a"}), cache_scope({.tenant = "b"})};
  std::atomic<int> crossed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 250; ++i) {
        const std::size_t s = (i + t) % 2;
        const std::string question = "question number " + std::to_string(i % 60) + " about topic " + std::to_string(t);
        const auto result = cache.lookup(scopes[s], question);
        if (result.answer) {
          if (result.answer->front() != static_cast<char>('a' + s)) crossed++;
          cache.feedback(result, i % 4 != 0);
        } else {
          cache.insert(scopes[s], question, std::string(1, static_cast<char>('a' + s)) + question);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  BOOST_TEST(crossed.load() == 0);
  BOOST_TEST(cache.size() <= 300u);
  BOOST_TEST(cache.statistics().lookups == 1000u);
}

BOOST_AUTO_TEST_CASE(new_weights_are_built_while_lookups_and_inserts_go_on) {
  // Refreshes are due at 32 documents and whenever they double since the
  // last weights (how many happen depends on how the threads interleave:
  // while one re-embedding runs, no other starts): each re-embeds the
  // stored texts outside the exclusive lock while the other threads insert
  // (past capacity, so entries leave meanwhile too) and look up.
  // The exact index keeps approximate search out of what is checked here:
  // these texts differ in one number only, which HNSW's graph navigates
  // badly (every text is equally far from every other).
  hashing_embedder::options_type learning;
  learning.first_refresh = 32;
  basic_semantic_cache<std::string, hashing_embedder, flat_index<>> cache({.max_entries = 400},
                                                                          hashing_embedder(learning),
                                                                          static_threshold{0.995f});
  const cache_scope scope({.tenant = "a"});
  const auto text_of = [](int i) { return "how do I configure feature " + std::to_string(i) + " of the product"; };
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 600; i += 3) {
        cache.insert(scope, text_of(i), std::to_string(i));
        const int earlier = i / 2;
        if (const auto found = cache.lookup(scope, text_of(earlier)); found.answer && *found.answer != std::to_string(earlier))
          wrong++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(cache.embedder().generation() >= 3u);
  // Every entry still stored is found under the weights now published,
  // whether it was stored before, during or after a re-embedding.
  std::size_t found_again = 0;
  for (int i = 0; i < 600; ++i) {
    const auto found = cache.lookup(scope, text_of(i));
    if (!found.answer) continue;
    ++found_again;
    BOOST_TEST(*found.answer == std::to_string(i));
  }
  BOOST_TEST(found_again == cache.size());
  BOOST_TEST(cache.size() == 400u);
}

BOOST_AUTO_TEST_SUITE_END()
