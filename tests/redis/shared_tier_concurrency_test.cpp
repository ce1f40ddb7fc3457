// redis_shared_tier under load from many threads (run under ThreadSanitizer
// by the concurrency preset): workers store, find and erase exact answers
// and insert into and look up the semantic caches (whose observer queues
// under the cache's lock) on two replicas, while each tier's tailer applies
// the other's changes and a thread reads the statistics. Nothing races,
// nothing is lost while the queue has room, and both replicas end up with
// every semantic entry.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.hpp"
#include "shared_replica.hpp"

using namespace std::chrono_literals;
using llmgate::cache_scope;
using llmgate::test::answer_of;
using llmgate::test::eventually;
using llmgate::test::find_exact;
using llmgate::test::redis_server;
using llmgate::test::shared_config_for;
using llmgate::test::shared_replica;

BOOST_AUTO_TEST_SUITE(shared_tier_concurrency_test)

BOOST_AUTO_TEST_CASE(replicas_under_concurrent_load_agree) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a")), b(shared_config_for(server.port(), "b"));
  a.tier->start();
  b.tier->start();
  shared_replica* replicas[] = {&a, &b};
  const cache_scope scope({.tenant = "acme", .model = "m"});

  constexpr int workers_per_replica = 2, each = 60;
  std::atomic<int> wrong_answers = 0;
  std::atomic<bool> done = false;
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < 2; ++r)
      for (int w = 0; w < workers_per_replica; ++w)
        threads.emplace_back([&, r, w] {
          shared_replica& mine = *replicas[r];
          shared_replica& other = *replicas[1 - r];
          for (int i = 0; i < each; ++i) {
            const std::string text = "replica " + std::to_string(r) + " worker " + std::to_string(w) + " item " +
                                     std::to_string(i);
            const auto key = mine.caches.exact().make_key(scope, text);
            mine.tier->store_exact(key, answer_of(text));
            if (const auto found = find_exact(*other.tier, key); found && found->content != text) ++wrong_answers;
            if (i % 10 == 9) mine.tier->erase_exact(key);
            mine.semantic().insert(scope, text, answer_of(text));
            (void)other.semantic().lookup(scope, text);
          }
        });
    threads.emplace_back([&] {
      while (!done.load())
        for (auto* replica : replicas) (void)replica->tier->statistics();
    });
    for (std::size_t t = 0; t + 1 < threads.size(); ++t) threads[t].join();
    done = true;
  }
  BOOST_TEST(wrong_answers.load() == 0);

  constexpr std::size_t total = 2 * workers_per_replica * each;
  BOOST_TEST_REQUIRE(eventually([&] { return a.semantic().size() == total && b.semantic().size() == total; }, 20s));
  // An entry is in the cache a moment before it is counted as applied.
  // Each replica applies the other's inserts and exact erasures.
  constexpr std::size_t applied = total / 2 + workers_per_replica * (each / 10);
  BOOST_TEST_REQUIRE(eventually([&] {
    return a.tier->statistics().applied_changes == applied && b.tier->statistics().applied_changes == applied;
  }));
  for (auto* replica : replicas) {
    const auto s = replica->tier->statistics();
    BOOST_TEST(s.available);
    BOOST_TEST(s.dropped_writes == 0u);
  }
  // Every exact answer not erased is found through either replica.
  BOOST_TEST_REQUIRE(eventually([&] {
    return a.tier->statistics().queued_writes == 0 && b.tier->statistics().queued_writes == 0;
  }));
  for (int r = 0; r < 2; ++r)
    for (int w = 0; w < workers_per_replica; ++w)
      for (int i = 0; i < each; i += 7) {
        const std::string text =
            "replica " + std::to_string(r) + " worker " + std::to_string(w) + " item " + std::to_string(i);
        const auto found = find_exact(*replicas[(r + i) % 2]->tier, a.caches.exact().make_key(scope, text));
        if (i % 10 == 9) BOOST_TEST(!found, text);
        else BOOST_TEST((found && found->content == text), text);
      }
}

BOOST_AUTO_TEST_SUITE_END()
