// What the llama.cpp backends of several gateway workers share, used from
// several threads at once (each with an io_context of its own, as the
// gateway's workers are): the per-slot async_mutex admits one coroutine at
// a time and hands itself over in arrival order, across threads; the slot
// record's choose/release keep every slot's users count exact.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "llmgate/backend/detail/async_mutex.hpp"
#include "llmgate/backend/llama_cpp_backend.hpp"

using namespace std::chrono_literals;
namespace net = boost::asio;

BOOST_AUTO_TEST_SUITE(llama_cpp_slots_concurrency_test)

BOOST_AUTO_TEST_CASE(the_slot_lock_admits_one_coroutine_at_a_time_across_threads) {
  constexpr int threads = 4, coroutines = 8, rounds = 20;
  llmgate::detail::async_mutex mutex;
  std::atomic<int> inside{0}, most{0}, entered{0};
  int unguarded = 0;  // written only under the lock: TSan reports a race if the lock fails
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      net::io_context io;
      for (int c = 0; c < coroutines; ++c)
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
              net::steady_timer pause(co_await net::this_coro::executor);
              for (int r = 0; r < rounds; ++r) {
                co_await mutex.async_lock(net::use_awaitable);
                llmgate::detail::async_lock_guard guard(mutex);
                const int now = ++inside;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {
                }
                ++unguarded;
                ++entered;
                pause.expires_after(100us);  // hold it across a wait, as a request does
                co_await pause.async_wait(net::use_awaitable);
                --inside;
              }
            },
            net::detached);
      io.run();
    });
  for (auto& worker : workers) worker.join();
  BOOST_TEST(entered.load() == threads * coroutines * rounds);
  BOOST_TEST(unguarded == threads * coroutines * rounds);
  BOOST_TEST(most.load() == 1);
}

BOOST_AUTO_TEST_CASE(choose_and_release_keep_each_slots_users_exact_across_threads) {
  llmgate::llama_cpp_slots slots;
  slots.set_count(3);
  std::atomic<int> out_of_range{0};  // Boost.Test's checks are for the main thread only
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const auto [index, slot] = slots.choose("prefix-" + std::to_string((t + i) % 5));
        if (index >= 3) ++out_of_range;
        slots.release(*slot);
      }
    });
  for (auto& worker : workers) worker.join();
  BOOST_TEST(out_of_range.load() == 0);
  // Nobody holds a slot now: each prefix asked for again gets an idle slot
  // given it or a free one, and three at once take the three slots.
  std::vector<std::size_t> taken;
  for (const char* prefix : {"x", "y", "z"}) taken.push_back(slots.choose(prefix).first);
  std::sort(taken.begin(), taken.end());
  BOOST_TEST(taken == (std::vector<std::size_t>{0, 1, 2}));
}

BOOST_AUTO_TEST_SUITE_END()
