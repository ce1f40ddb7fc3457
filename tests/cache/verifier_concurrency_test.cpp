// Lookups, inserts and feedback at once on a cache whose learned verifier
// learns from that feedback: under ThreadSanitizer (preset "tsan", label
// "concurrency") this proves the verifier's corrections race with nothing;
// in every build it checks that no lookup serves another scope's answer
// and that only the scopes that gave feedback learned.
#include <boost/test/unit_test.hpp>

#include <cstddef>  // std::size_t
#include <random>   // std::mt19937
#include <string>   // std::string, std::to_string
#include <thread>   // std::jthread
#include <vector>   // std::vector

#include "llmgate/cache/learned_verifier.hpp"
#include "llmgate/cache/semantic_cache.hpp"

namespace {

using verified_cache =
    llmgate::basic_semantic_cache<std::string, llmgate::hashing_embedder, llmgate::default_index_factory,
                                  llmgate::lru_eviction, llmgate::static_threshold, llmgate::learned_verifier>;

constexpr int scope_count = 6, text_count = 40, threads = 4, steps = 3'000;

// Scopes 0 to 2 report on the hits they get; 3 to 5 never do.
constexpr bool reports(int scope) { return scope < scope_count / 2; }

}  // namespace

BOOST_AUTO_TEST_SUITE(verifier_concurrency_test)

BOOST_AUTO_TEST_CASE(feedback_learning_races_with_nothing_and_stays_in_its_scope) {
  verified_cache cache({.max_entries = 200}, llmgate::hashing_embedder(), llmgate::static_threshold{0.6f},
                       llmgate::learned_verifier());
  std::vector<llmgate::cache_scope> scopes;
  for (int s = 0; s < scope_count; ++s)
    scopes.emplace_back(llmgate::cache_scope_fields{.tenant = "tenant-" + std::to_string(s)});
  std::vector<std::size_t> foreign(threads, 0);
  {
    std::vector<std::jthread> workers;
    for (int w = 0; w < threads; ++w)
      workers.emplace_back([&, w] {
        std::mt19937 random(static_cast<unsigned>(w) + 1);
        for (int step = 0; step < steps; ++step) {
          const int s = static_cast<int>(random() % scope_count);
          const int t = static_cast<int>(random() % text_count);
          // Two phrasings of each question, so that lookups hit semantically.
          const std::string text = (random() % 2 ? "How do I renew permit number " : "how can I renew permit ") +
                                   std::to_string(t) + " quickly";
          const std::string answer = std::to_string(s) + "/" + std::to_string(t);
          auto found = cache.lookup(scopes[s], text);
          if (found.outcome == llmgate::lookup_outcome::miss) {
            cache.insert(std::move(found), scopes[s], text, answer);
            continue;
          }
          foreign[w] += found.answer->substr(0, found.answer->find('/')) != std::to_string(s);
          if (reports(s)) cache.feedback(found, *found.answer == answer);
        }
      });
  }
  for (const std::size_t count : foreign) BOOST_TEST(count == 0u);
  BOOST_TEST(cache.verifier().scopes_learned() <= static_cast<std::size_t>(scope_count / 2));
  BOOST_TEST(cache.verifier().scopes_learned() > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
