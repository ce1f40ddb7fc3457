// One replica_pool shared by several workers' threads, as every gateway
// worker's backend_pool of one entry shares it: placements, their ends
// (answered, failed, abandoned) and /metrics' reports from other threads at
// once, under ThreadSanitizer in its preset. Nothing is lost: every
// placement is counted once, every load returns to zero, every token
// reported is summed.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "llmgate/backend/pool/pool_config.hpp"   // configured_balancing
#include "llmgate/backend/pool/replica_pool.hpp"  // replica_pool

BOOST_AUTO_TEST_SUITE(replica_pool_concurrency_test)

BOOST_AUTO_TEST_CASE(placements_from_many_threads_are_each_counted_once) {
  constexpr int threads = 4;
  constexpr int per_thread = 5000;
  llmgate::balancing_config prefix;  // the default policy: prefix affinity with bounded loads
  llmgate::replica_pool<llmgate::configured_balancing> pool({{.name = "a"}, {.name = "b"}, {.name = "c"}},
                                                            llmgate::configured_balancing(prefix));
  std::atomic<bool> done{false}, overloaded{false};
  std::thread reader([&] {  // Boost.Test's checks are for the main thread: it notes, the main thread checks
    while (!done.load()) {
      std::uint64_t in_flight = 0;
      for (const auto& r : pool.reports()) in_flight += r.in_flight;
      if (in_flight > 2 * threads) overloaded = true;  // each thread holds at most two leases
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&pool, t] {
      const std::vector<bool> none_tried(3, false);
      for (int i = 0; i < per_thread; ++i) {
        auto first = pool.place({.prefix = static_cast<std::uint64_t>(1 + (i + t) % 17)}, none_tried);
        auto second = pool.place({}, none_tried);
        first.succeeded({.prompt_tokens = 3, .cached_prompt_tokens = 2});
        if (i % 2 == 0) second.failed(false);  // the request's own mistake: no rest
        // otherwise dropped unsaid, as a cancelled call's lease is
      }
    });
  for (auto& w : workers) w.join();
  done = true;
  reader.join();
  BOOST_TEST(!overloaded.load());
  std::uint64_t requests = 0, prompt_tokens = 0, reused = 0, failures = 0;
  for (const auto& r : pool.reports()) {
    BOOST_TEST(r.in_flight == 0u);
    BOOST_TEST(r.up);
    requests += r.requests, prompt_tokens += r.prompt_tokens, reused += r.reused_tokens, failures += r.failures;
  }
  BOOST_TEST(requests == 2u * threads * per_thread);
  BOOST_TEST(prompt_tokens == 3u * threads * per_thread);
  BOOST_TEST(reused == 2u * threads * per_thread);
  BOOST_TEST(failures == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
