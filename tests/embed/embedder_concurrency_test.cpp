// Embeds on several threads while another observes and refreshes: run
// under ThreadSanitizer (preset "tsan", label "concurrency") to prove the
// absence of data races; in every build it checks that each embed used one
// whole generation's weights: all vectors of one text reported with the
// same generation are bit-identical, and generations only move forward.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/simd/kernels.hpp"

BOOST_AUTO_TEST_SUITE(embedder_concurrency_test)

BOOST_AUTO_TEST_CASE(embeds_run_while_another_thread_observes_and_refreshes) {
  llmgate::hashing_embedder embedder({.dimension = 64, .frequency_table_bits = 12, .first_refresh = 50});
  const std::vector<std::string> texts = {"How do I reset my router?", "What is 2 + 2?",
                                          "Où est la gare ?", "東京はどこですか"};
  std::atomic<bool> learning{true};
  std::atomic<std::size_t> bad{0};
  std::mutex seen_mutex;
  std::map<std::pair<std::uint64_t, std::size_t>, std::vector<float>> seen;  // (generation, text) -> vector

  std::thread learner([&] {
    for (int i = 0; i < 400; ++i) {
      embedder.observe("question number " + std::to_string(i % 37) + " about " + texts[i % texts.size()]);
      if (embedder.refresh_due()) embedder.refresh();
    }
    embedder.refresh();
    learning = false;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::vector<float> v(embedder.dimension());
      std::uint64_t last_generation = 0;
      for (std::size_t i = r; learning || i < 100; ++i) {
        const std::size_t t = i % texts.size();
        const auto weights = embedder.current_weights();
        const std::uint64_t generation = weights ? weights->generation : 0;
        if (embedder.embed(texts[t], v, weights)) bad++;
        if (generation < last_generation) bad++;
        last_generation = generation;
        if (std::abs(llmgate::simd::dot(v.data(), v.data(), v.size()) - 1.0f) > 1e-4f) bad++;
        std::lock_guard lock(seen_mutex);
        const auto [at, added] = seen.try_emplace({generation, t}, v);
        if (!added && at->second != v) bad++;
      }
    });
  }
  learner.join();
  for (auto& reader : readers) reader.join();
  BOOST_TEST(bad.load() == 0u);
  BOOST_TEST(embedder.documents_observed() == 400u);
  BOOST_TEST(embedder.generation() >= 4u);  // due at 50, 100, 200, 400, and the last refresh
}

BOOST_AUTO_TEST_SUITE_END()
