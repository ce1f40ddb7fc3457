// Callers on several threads using one client the way its thread rule
// says: each co_spawns its work onto the client's executor (one
// io_context thread) and waits for the future. Every reply must be the
// caller's own; run under ThreadSanitizer this also shows that nothing
// of the client is touched from the callers' threads but statistics().
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "llmgate/redis/client.hpp"
#include "redis_server.hpp"

namespace llmgate::redis {
namespace {

constexpr int threads = 4, tasks_per_thread = 8, commands_per_task = 50;

// One task's commands, single and pipelined; how many replies were right.
net::awaitable<int> task(client& redis, int thread, int number) {
  int right = 0;
  for (int i = 0; i < commands_per_task; ++i) {
    const std::string key = "t" + std::to_string(thread) + ":" + std::to_string(number) + ":" + std::to_string(i);
    const std::string value(static_cast<std::size_t>(1 + (i * 37) % 300), static_cast<char>('a' + thread));
    if (i % 5 == 0) {
      auto pipeline = redis.exec_pipeline({{"SET", key, value}, {"APPEND", key, "!"}, {"GET", key}});
      const auto replies = co_await std::move(pipeline);
      right += replies.size() == 3 && replies[1].integer == static_cast<long long>(value.size() + 1) &&
               replies[2].text == value + "!";
      continue;
    }
    auto set = redis.exec({"SET", key, value});
    const reply stored = co_await std::move(set);
    auto get = redis.exec({"GET", key});
    const reply got = co_await std::move(get);
    right += stored.text == "OK" && got.is_string() && got.text == value;
  }
  co_return right;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(client_concurrency_test)

BOOST_AUTO_TEST_CASE(callers_on_many_threads_each_get_their_own_replies) {
  if (llmgate::test::skip_without_redis()) return;
  llmgate::test::redis_server server;
  net::io_context io;
  auto work = net::make_work_guard(io);
  std::thread runner([&io] { io.run(); });
  {
    client redis(io.get_executor(), {.endpoints = {server.endpoint()}, .connections_per_node = 3});
    net::co_spawn(io, redis.connect(), net::use_future).get();

    std::atomic<int> right{0};
    std::atomic<bool> running{true};
    // Metrics read the counters from another thread while the work runs.
    std::thread reader([&] {
      while (running) {
        const auto now = redis.statistics();
        BOOST_CHECK(now.errors == 0u);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&, t] {
        std::vector<std::future<int>> done;
        for (int n = 0; n < tasks_per_thread; ++n) done.push_back(net::co_spawn(io, task(redis, t, n), net::use_future));
        for (auto& d : done) right += d.get();
      });
    }
    for (auto& c : callers) c.join();
    running = false;
    reader.join();
    BOOST_TEST(right.load() == threads * tasks_per_thread * commands_per_task);
    const auto statistics = redis.statistics();
    BOOST_TEST(statistics.errors == 0u);
    BOOST_TEST(statistics.reconnects == 0u);
    BOOST_TEST(statistics.round_trips == 1u + threads * tasks_per_thread * (commands_per_task / 5 * 9));
    // The client is destroyed on its own thread, as it lives there.
    net::co_spawn(io, [&redis]() -> net::awaitable<void> {
      redis.close();
      co_return;
    }, net::use_future).get();
  }
  work.reset();
  io.stop();
  runner.join();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace llmgate::redis
