// Concurrent lookups, inserts and feedback on one semantic cache: run under
// ThreadSanitizer (label "concurrency"); in every build it checks that no
// lookup returns another scope's answer.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "llmgate/cache/semantic_cache.hpp"

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

BOOST_AUTO_TEST_SUITE_END()
