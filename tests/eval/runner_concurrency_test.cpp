// The runner never has more than plan.concurrency requests in flight, over
// every candidate, and keeps that many busy while requests are left: a
// backend that counts its calls in flight, in process and in front of an
// in-test model server.
#include <boost/test/unit_test.hpp>

#include <algorithm>    // std::max
#include <cstddef>      // std::size_t
#include <memory>       // std::shared_ptr, std::make_shared
#include <sstream>      // std::ostringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/io_context.hpp>     // net::io_context
#include <boost/asio/post.hpp>           // net::post: a call that yields, as a network wait would
#include <boost/asio/this_coro.hpp>      // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>  // net::use_awaitable

#include "../backend/upstream_server.hpp"        // upstream_server, reply
#include "llmgate/backend/blocking.hpp"          // run_blocking
#include "llmgate/backend/openai_backend.hpp"    // openai_backend
#include "llmgate/backend/scripted_backend.hpp"  // scripted_backend
#include "llmgate/eval/run/run_store.hpp"        // run_store
#include "llmgate/eval/run/runner.hpp"           // evaluation_runner

namespace {

using namespace llmgate;
namespace net = boost::asio;

// Calls in flight now and at most, over every backend that shares it.
struct flight_log {
  std::size_t now = 0;
  std::size_t most = 0;
  std::size_t calls = 0;
};

// A backend that counts its calls in flight, then asks `inner`; `yields`
// times it lets the other coroutines run first.
template <Backend B>
class counted_backend {
 public:
  counted_backend(B inner, std::shared_ptr<flight_log> log, int yields = 0)
      : inner_(std::move(inner)), log_(std::move(log)), yields_(yields) {}

  std::string_view name() const { return inner_.name(); }

  net::awaitable<chat_response> complete(const chat_request& request) {
    return stream(request, [](const chat_chunk&) -> net::awaitable<void> { co_return; });
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    const struct in_flight {
      explicit in_flight(flight_log& l) : log(l) {
        ++log.calls;
        log.most = std::max(log.most, ++log.now);
      }
      ~in_flight() { --log.now; }
      flight_log& log;
    } counting(*log_);
    for (int i = 0; i < yields_; ++i) co_await net::post(co_await net::this_coro::executor, net::use_awaitable);
    co_return co_await inner_.stream(request, std::move(on_chunk));
  }

 private:
  B inner_;
  std::shared_ptr<flight_log> log_;
  int yields_;
};

evaluation_plan plan_of(std::size_t candidates, std::size_t prompts, std::uint64_t repetitions, std::uint64_t concurrency) {
  evaluation_plan plan;
  for (std::size_t c = 0; c < candidates; ++c) plan.candidates.push_back({.name = "m" + std::to_string(c)});
  plan.templates = {{"t", {{.role = "user", .content = "question {{n}}"}}}};
  for (std::size_t p = 0; p < prompts; ++p) plan.prompts.push_back({"t", {{"n", std::to_string(p)}}});
  plan.repetitions = repetitions;
  plan.concurrency = concurrency;
  return plan;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(runner_concurrency_test)

BOOST_AUTO_TEST_CASE(in_process_calls_in_flight_reach_the_limit_and_never_pass_it) {
  for (const std::uint64_t limit : {1u, 3u, 8u}) {
    BOOST_TEST_CONTEXT("concurrency " << limit) {
      const auto plan = plan_of(3, 5, 2, limit);  // 30 requests
      auto log = std::make_shared<flight_log>();
      candidate_backends backends;
      for (const auto& c : plan.candidates)
        backends.emplace(c.name, counted_backend(scripted_backend::echo(c.name), log, 3));
      net::io_context io;
      run_store store = run_store::in_memory();
      std::ostringstream lines;
      run_progress progress(lines);
      evaluation_runner runner(plan, std::move(backends), store, progress);
      run_blocking(io, runner.run());
      BOOST_TEST(log->calls == 30u);
      BOOST_TEST(log->most == limit);
      BOOST_TEST(log->now == 0u);
      BOOST_TEST(store.counts().recorded == 30u);
      BOOST_TEST(store.results().at(4).response == "echo: question 1");  // evaluation/m1/1/0
    }
  }
}

BOOST_AUTO_TEST_CASE(requests_in_flight_to_a_model_server_never_pass_the_limit) {
  llmgate::test::upstream_server server;
  server.start();
  auto slow = llmgate::test::reply::chat_stream({"An", " answer"});
  slow.first_byte_delay = std::chrono::milliseconds(20);
  server.on("/v1/chat/completions", slow);

  const auto plan = plan_of(2, 4, 1, 2);  // 8 requests, 2 at a time
  net::io_context io;
  auto client = std::make_shared<http_client>(io.get_executor());
  auto log = std::make_shared<flight_log>();
  candidate_backends backends;
  for (const auto& c : plan.candidates)
    backends.emplace(c.name, counted_backend(openai_backend(client, {.name = c.name, .base_url = server.url("/v1")}), log));
  run_store store = run_store::in_memory();
  std::ostringstream lines;
  run_progress progress(lines);
  evaluation_runner runner(plan, std::move(backends), store, progress);
  run_blocking(io, runner.run());

  BOOST_TEST(server.requests("/v1/chat/completions") == 8u);
  BOOST_TEST(log->most == 2u);
  // Connections are reused: no more were opened than requests were in flight.
  BOOST_TEST(server.connections() <= 2u);
  for (const auto& r : store.results()) {
    BOOST_TEST(r.ok());
    BOOST_TEST(r.response == "An answer");
  }
}

BOOST_AUTO_TEST_SUITE_END()
