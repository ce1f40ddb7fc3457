// Many threads looking up and inserting at once, in a cache small enough
// that evictions and expirations run all the time: under ThreadSanitizer
// (preset "tsan", label "concurrency") this proves the absence of data
// races; in every build it checks that no lookup returns an answer other
// than the one stored for its own scope and request, and that the
// statistics add up.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/eviction/ttl.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "../temporary_directory.hpp"
#include "fake_clock.hpp"

using namespace std::chrono_literals;

namespace {

constexpr int scope_count = 8, text_count = 64, threads = 4, steps = 20'000;

std::vector<llmgate::cache_scope> make_scopes() {
  std::vector<llmgate::cache_scope> scopes;
  for (int s = 0; s < scope_count; ++s)
    scopes.emplace_back(llmgate::cache_scope_fields{.tenant = "tenant-" + std::to_string(s % 4),
                                                    .model = "model-" + std::to_string(s / 4)});
  return scopes;
}

std::string answer_of(int scope, int text) {
  return "answer " + std::to_string(scope) + "/" + std::to_string(text);
}

// Each thread looks a random request up and stores its answer after a
// miss; returns how many lookups returned a wrong answer.
template <class Cache>
std::size_t hammer(Cache& cache, const std::vector<llmgate::cache_scope>& scopes, unsigned seed,
                   std::atomic<std::uint64_t>& lookups) {
  std::mt19937 random(seed);
  std::size_t wrong = 0;
  for (int step = 0; step < steps; ++step) {
    const int s = static_cast<int>(random() % scope_count);
    const int t = static_cast<int>(random() % text_count);
    auto key = cache.make_key(scopes[s], "Question " + std::to_string(t));
    ++lookups;
    if (const auto found = cache.find(key)) {
      if (*found != answer_of(s, t)) ++wrong;
    } else {
      cache.insert(std::move(key), answer_of(s, t));
    }
  }
  return wrong;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exact_cache_concurrency_test)

BOOST_AUTO_TEST_CASE(lookups_and_inserts_race_in_a_crowded_cache) {
  const auto scopes = make_scopes();
  // 512 requests compete for 100 entries in 8 shards.
  llmgate::exact_cache<std::string, llmgate::lfu_eviction> cache({.max_entries = 100, .shards = 8});
  std::atomic<std::uint64_t> lookups{0};
  std::atomic<std::size_t> wrong{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w)
    workers.emplace_back([&, w] { wrong += hammer(cache, scopes, 100 + w, lookups); });
  for (auto& worker : workers) worker.join();

  const auto stats = cache.statistics();
  BOOST_TEST(wrong.load() == 0u);
  BOOST_TEST(stats.hits + stats.misses == lookups.load());
  BOOST_TEST(stats.insertions == stats.misses);
  BOOST_TEST(stats.entries <= 100u);
  BOOST_TEST(stats.hits > 0u);
  BOOST_TEST(stats.evictions > 0u);
  BOOST_TEST(stats.insertions - stats.evictions - stats.expirations >= stats.entries);
}

BOOST_AUTO_TEST_CASE(lifetimes_sweeps_and_snapshots_run_beside_lookups) {
  const auto scopes = make_scopes();
  llmgate::test::fake_clock clock;  // a fake: real waiting would make the test slow and flaky
  using policy = llmgate::ttl_eviction<llmgate::test::fake_clock>;
  llmgate::exact_cache<std::string, policy> cache({.max_entries = 200, .shards = 4},
                                                  policy(10s, llmgate::ttl_refresh::on_hit, clock));
  llmgate::test::temporary_directory dir;
  std::atomic<std::uint64_t> lookups{0};
  std::atomic<std::size_t> wrong{0}, failed_saves{0};
  std::atomic<bool> keeping{true};

  // Time passes, expired entries are swept and the cache is saved, while the
  // others look up and insert until the keeper is done.
  std::thread keeper([&] {
    for (int round = 0; round < 100; ++round) {
      clock.advance(1s);
      cache.purge_expired();
      if (round % 25 == 0 && cache.save(dir / "exact.llmgate")) ++failed_saves;
    }
    keeping = false;
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < threads - 1; ++w)
    workers.emplace_back([&, w] {
      for (unsigned pass = 0; pass == 0 || keeping; ++pass)
        wrong += hammer(cache, scopes, 200 + 16 * pass + w, lookups);
    });
  keeper.join();
  for (auto& worker : workers) worker.join();

  auto stats = cache.statistics();
  BOOST_TEST(wrong.load() == 0u);
  BOOST_TEST(failed_saves.load() == 0u);
  BOOST_TEST(stats.hits + stats.misses == lookups.load());
  BOOST_TEST(stats.entries <= 200u);
  BOOST_TEST(cache.size() == stats.entries);

  BOOST_TEST_MESSAGE("during the race: " << stats.hits << " hits, " << stats.misses << " misses, "
                     << stats.evictions << " evictions, " << stats.expirations << " expirations");

  // Whatever outlived the race expires once its lifetime is over.
  const auto before = stats;
  clock.advance(11s);
  BOOST_TEST(cache.purge_expired() == before.entries);
  stats = cache.statistics();
  BOOST_TEST(stats.entries == 0u);
  BOOST_TEST(stats.bytes == 0u);
  BOOST_TEST(stats.expirations == before.expirations + before.entries);
}

BOOST_AUTO_TEST_SUITE_END()
