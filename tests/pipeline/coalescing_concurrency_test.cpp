// Coalesced calls across io threads, as the gateway's workers make them:
// two io_contexts, each running its own pipeline (an exact cache stage
// over one shared cache and one shared table of calls in flight, then the
// model). The model is a stage of this test that counts
// its calls and holds each answer until the test opens its gate (a fake:
// what is tested is who waits for whom, not a model). Every wait for a
// condition is bounded by ten seconds, so a broken run fails rather than
// hangs; nothing is timed.
#include <boost/test/unit_test.hpp>

#include <atomic>     // std::atomic
#include <chrono>     // std::chrono
#include <exception>  // std::exception_ptr
#include <functional> // std::function
#include <memory>     // std::shared_ptr
#include <mutex>      // std::mutex
#include <string>     // std::string
#include <thread>     // std::thread, std::this_thread
#include <vector>     // std::vector

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "llmgate/backend/backend_error.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/pipeline.hpp"
#include "llmgate/pipeline/coalesced_calls.hpp"

namespace {

using namespace llmgate;
namespace net = boost::asio;
using namespace std::chrono_literals;

// Waits until `done()` holds; false after ten seconds.
bool eventually(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Closed until open(); each waiter waits on a timer of its own executor,
// which open() cancels there.
class gate {
 public:
  net::awaitable<void> pass() {
    auto timer = std::make_shared<net::steady_timer>(co_await net::this_coro::executor,
                                                     net::steady_timer::time_point::max());
    {
      std::lock_guard lock(mutex_);
      if (open_) co_return;
      waiting_.push_back(timer);
    }
    co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    const auto state = co_await net::this_coro::cancellation_state;
    if (state.cancelled() != net::cancellation_type::none) throw std::runtime_error("cancelled while held");
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    for (auto& timer : waiting_) net::post(timer->get_executor(), [timer] { timer->cancel(); });
  }

 private:
  std::mutex mutex_;
  bool open_ = false;
  std::vector<std::shared_ptr<net::steady_timer>> waiting_;
};

// The model: streams "one " at once, then, once the gate opens, "two three",
// or answers the whole text after the gate; or throws what `failure` makes.
struct held_model {
  gate* held;
  std::atomic<int>* calls;
  std::atomic<int>* cancelled;
  bool fail = false;

  template <class Next>
  net::awaitable<chat_response> handle(chat_request&, request_context& context, Next&) {
    ++*calls;
    context.backend = "model";
    chat_response response{.id = "answer", .model = "m1", .content = "one two three", .finish_reason = "stop"};
    response.cost_usd = 0.25;
    try {
      if (context.streaming()) {
        chat_chunk first;
        first.content_delta = "one ";
        co_await context.on_chunk(first);
        co_await held->pass();
        for (const char* piece : {"two ", "three"}) {
          chat_chunk next;
          next.content_delta = piece;
          co_await context.on_chunk(next);
        }
      } else {
        co_await held->pass();
      }
    } catch (...) {
      ++*cancelled;
      throw;
    }
    if (fail)
      throw backend_error(errc::upstream_error, "upstream said 500",
                          {.backend = "model", .status = 500, .upstream_error = {{"message", "boom"}}});
    co_return response;
  }
};

using answer_cache = exact_cache<cached_answer>;
using test_pipeline = pipeline<exact_cache_stage<answer_cache>, held_model>;

// What one request came to.
struct result {
  std::atomic<bool> done{false};
  std::atomic<int> chunks{0};  // streamed so far: the test reads this while the request runs
  chat_response response;
  std::string streamed;
  cache_outcome cache = cache_outcome::miss;
  double saved_usd = 0;
  std::string backend;
  std::string failure;
};

net::awaitable<void> ask(test_pipeline& answer, request_context context, bool stream, result& out) {
  chat_request request{.model = "m1", .messages = {{.role = "user", .content = "count to three"}}};
  if (stream)
    context.on_chunk = [&out](const chat_chunk& chunk) -> net::awaitable<void> {
      out.streamed += chunk.content_delta;
      ++out.chunks;
      co_return;
    };
  try {
    out.response = co_await answer(request, context);
  } catch (const std::exception& e) {
    out.failure = e.what();
  }
  out.cache = context.cache;
  out.saved_usd = context.saved_usd;
  out.backend = context.backend;
  out.done = true;
}

// Waits until every request has ended; false after ten seconds.
bool all_done(const std::vector<result>& results) {
  return eventually([&] {
    for (const auto& r : results)
      if (!r.done) return false;
    return true;
  });
}

// Two io threads, each with its pipeline over `calls`, as the gateway's workers.
struct two_workers {
  two_workers() {
    for (int w = 0; w < 2; ++w) {
      pipelines.push_back(std::make_unique<test_pipeline>(exact_cache_stage(cache, no_second_level{}, &calls),
                                                          held_model{&held, &model_calls, &model_cancelled}));
      threads.emplace_back([this, w] { io[w].run(); });
    }
  }
  ~two_workers() {
    held.open();
    for (auto& guard : guards) guard.reset();
    for (auto& thread : threads) thread.join();
  }
  // Request `i` on worker i % 2.
  void spawn(int i, request_context context, bool stream, result& out,
             net::cancellation_slot slot = {}) {
    auto& worker = io[i % 2];
    net::co_spawn(worker, ask(*pipelines[i % 2], std::move(context), stream, out),
                  net::bind_cancellation_slot(slot, net::detached));
  }
  void set_failing() {
    for (auto& p : pipelines) p->stage<1>().fail = true;
  }

  net::io_context io[2];  // first: what runs on them is gone before them
  answer_cache cache;
  coalesced_calls calls;
  gate held;
  std::atomic<int> model_calls{0};
  std::atomic<int> model_cancelled{0};
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards{
      net::make_work_guard(io[0]), net::make_work_guard(io[1])};
  std::vector<std::unique_ptr<test_pipeline>> pipelines;
  std::vector<std::thread> threads;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(coalescing_concurrency_test)

BOOST_AUTO_TEST_CASE(fifty_identical_misses_make_one_call_and_get_one_answer) {
  std::vector<result> results(50);
  two_workers workers;
  for (int i = 0; i < 50; ++i) workers.spawn(i, {.tenant = "acme"}, false, results[i]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 49; }));
  BOOST_TEST(workers.calls.stats().calls == 1u);
  workers.held.open();
  BOOST_TEST_REQUIRE(all_done(results));
  BOOST_TEST(workers.model_calls == 1);
  int misses = 0, coalesced = 0;
  for (auto& r : results) {
    BOOST_TEST(r.failure == "");
    BOOST_TEST(r.response.content == "one two three");
    if (r.cache == cache_outcome::miss) {
      ++misses;
      BOOST_TEST(r.response.cost_usd == 0.25);
      BOOST_TEST(r.backend == "model");
    } else {
      ++coalesced;
      BOOST_TEST((r.cache == cache_outcome::coalesced));
      BOOST_TEST(r.response.cost_usd == 0.0);  // charged nothing
      BOOST_TEST(r.saved_usd == 0.25);
      BOOST_TEST(r.backend == "");
    }
  }
  BOOST_TEST(misses == 1);
  BOOST_TEST(coalesced == 49);
  const auto after = workers.calls.stats();
  BOOST_TEST(after.calls == 0u);
  BOOST_TEST(after.waiting == 0u);
  BOOST_TEST(after.coalesced == 49u);
}

BOOST_AUTO_TEST_CASE(a_stream_joined_midway_is_relayed_from_its_start) {
  std::vector<result> results(50);
  two_workers workers;
  for (int i = 0; i < 25; ++i) workers.spawn(i, {.tenant = "acme"}, true, results[i]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 24; }));
  // The first chunk has reached the first 25 before the others join.
  BOOST_TEST_REQUIRE(eventually([&] {
    for (int i = 0; i < 25; ++i)
      if (results[i].chunks == 1) return true;  // the one making the call has its first chunk
    return false;
  }));
  for (int i = 25; i < 50; ++i) workers.spawn(i, {.tenant = "acme"}, i % 3 != 0, results[i]);  // some whole
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 49; }));
  workers.held.open();
  BOOST_TEST_REQUIRE(all_done(results));
  BOOST_TEST(workers.model_calls == 1);
  for (int i = 0; i < 50; ++i) {
    const bool streamed = i < 25 || i % 3 != 0;
    BOOST_TEST(results[i].failure == "");
    BOOST_TEST(results[i].streamed == (streamed ? "one two three" : ""));
    BOOST_TEST(results[i].response.content == "one two three");
  }
}

BOOST_AUTO_TEST_CASE(other_tenants_and_namespaces_and_no_cache_requests_never_join) {
  std::vector<result> results(5);
  two_workers workers;
  workers.spawn(0, {.tenant = "acme"}, false, results[0]);
  workers.spawn(1, {.tenant = "globex"}, false, results[1]);
  workers.spawn(2, {.tenant = "acme", .cache_namespace = "team-b"}, false, results[2]);
  workers.spawn(3, {.tenant = "acme", .cache_control = {.lookup = false}}, false, results[3]);  // no-cache
  workers.spawn(4, {.tenant = "acme"}, false, results[4]);  // joins request 0
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_calls == 4; }));
  BOOST_TEST(workers.calls.stats().calls == 3u);  // the no-cache request's call is its own
  workers.held.open();
  BOOST_TEST_REQUIRE(all_done(results));
  BOOST_TEST(workers.model_calls == 4);
  for (int i = 0; i < 4; ++i) BOOST_TEST((results[i].cache == cache_outcome::miss));
  BOOST_TEST((results[4].cache == cache_outcome::coalesced));
}

BOOST_AUTO_TEST_CASE(a_failure_reaches_every_waiter_as_the_same_error) {
  std::vector<result> results(10);
  two_workers workers;
  workers.set_failing();
  for (int i = 0; i < 10; ++i) workers.spawn(i, {.tenant = "acme"}, i % 2 == 0, results[i]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 9; }));
  workers.held.open();
  BOOST_TEST_REQUIRE(all_done(results));
  BOOST_TEST(workers.model_calls == 1);
  for (auto& r : results) {
    BOOST_TEST(r.failure.starts_with("upstream said 500"));
    BOOST_TEST(r.failure == results[0].failure);
  }
  // Nothing is left in flight: the next request makes a call of its own.
  BOOST_TEST(workers.calls.stats().calls == 0u);
}

BOOST_AUTO_TEST_CASE(a_waiter_that_hangs_up_leaves_the_call_to_the_others) {
  std::vector<result> results(3);
  net::cancellation_signal hang_up;
  two_workers workers;
  workers.spawn(0, {.tenant = "acme"}, true, results[0]);  // makes the call
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_calls == 1; }));
  workers.spawn(1, {.tenant = "acme"}, true, results[1], hang_up.slot());
  workers.spawn(2, {.tenant = "acme"}, false, results[2]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 2; }));
  net::post(workers.io[1], [&] { hang_up.emit(net::cancellation_type::terminal); });
  BOOST_TEST_REQUIRE(eventually([&] { return results[1].done.load(); }));
  BOOST_TEST(results[1].failure != "");
  BOOST_TEST(workers.calls.stats().waiting == 1u);
  workers.held.open();
  BOOST_TEST_REQUIRE(eventually([&] { return results[0].done && results[2].done; }));
  BOOST_TEST(workers.model_calls == 1);
  BOOST_TEST(workers.model_cancelled == 0);
  BOOST_TEST(results[0].streamed == "one two three");
  BOOST_TEST(results[2].response.content == "one two three");
}

BOOST_AUTO_TEST_CASE(the_call_outlives_its_callers_hang_up_while_others_wait) {
  std::vector<result> results(4);
  net::cancellation_signal hang_up;
  two_workers workers;
  workers.spawn(0, {.tenant = "acme"}, true, results[0], hang_up.slot());  // makes the call
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_calls == 1; }));
  workers.spawn(1, {.tenant = "acme"}, true, results[1]);
  workers.spawn(2, {.tenant = "acme"}, false, results[2]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().waiting == 2; }));
  net::post(workers.io[0], [&] { hang_up.emit(net::cancellation_type::terminal); });
  // The call is out of the table at once: a request that comes now makes its own.
  BOOST_TEST_REQUIRE(eventually([&] { return workers.calls.stats().calls == 0; }));
  workers.spawn(3, {.tenant = "acme"}, false, results[3]);
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_calls == 2; }));
  workers.held.open();
  BOOST_TEST_REQUIRE(all_done(results));
  BOOST_TEST(workers.model_cancelled == 0);
  BOOST_TEST(results[1].streamed == "one two three");
  BOOST_TEST(results[2].response.content == "one two three");
  BOOST_TEST((results[2].cache == cache_outcome::coalesced));
  BOOST_TEST((results[3].cache == cache_outcome::miss));
}

BOOST_AUTO_TEST_CASE(a_call_no_one_else_waits_for_is_cancelled_with_its_caller) {
  result alone;
  net::cancellation_signal hang_up;
  two_workers workers;
  workers.spawn(0, {.tenant = "acme"}, false, alone, hang_up.slot());
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_calls == 1; }));
  net::post(workers.io[0], [&] { hang_up.emit(net::cancellation_type::terminal); });
  BOOST_TEST_REQUIRE(eventually([&] { return workers.model_cancelled == 1; }));
  BOOST_TEST_REQUIRE(eventually([&] { return alone.done.load(); }));
  BOOST_TEST(alone.failure != "");
  BOOST_TEST(workers.calls.stats().calls == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
