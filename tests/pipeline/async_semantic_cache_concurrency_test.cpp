// The semantic cache stage with an asynchronous HTTP embedder never makes
// an io thread wait on an embedding: on ONE io thread, while the upstream
// holds the embedding of one request (until the test releases it), an
// exact hit and other scopes' lookups (a semantic hit and a miss in another
// tenant) complete; then the held one completes as a miss and is stored.
// Proved by the order of completions, not by timing.
#include <boost/test/unit_test.hpp>

#include <chrono>     // std::chrono::seconds, a bound on a broken run only
#include <exception>  // std::exception_ptr
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/asio/as_tuple.hpp>       // a cancelled timer wait as a value
#include <boost/asio/co_spawn.hpp>       // net::co_spawn
#include <boost/asio/detached.hpp>       // net::detached
#include <boost/asio/io_context.hpp>     // net::io_context
#include <boost/asio/post.hpp>           // the upstream's thread wakes the io thread
#include <boost/asio/steady_timer.hpp>   // the wake-up, cancelled by that post
#include <boost/asio/use_awaitable.hpp>  // net::use_awaitable

#include "../backend/bag_of_words_embeddings.hpp"  // deterministic embeddings upstream
#include "../backend/upstream_server.hpp"          // upstream_server, reply::hold
#include "llmgate/backend/async_http_embedder.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/embed/external_embedder.hpp"
#include "llmgate/pipeline.hpp"

namespace {

using namespace llmgate;
namespace net = boost::asio;

using answer_cache = exact_cache<cached_answer>;
using remote_cache = basic_semantic_cache<cached_answer, external_embedder>;
constexpr std::size_t dimension = 64;

chat_request ask(std::string question) {
  chat_request request;
  request.model = "m1";
  request.messages.push_back({.role = "user", .content = question});
  return request;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(async_semantic_cache_concurrency_test)

BOOST_AUTO_TEST_CASE(a_stalled_embedding_holds_up_only_its_own_request) {
  net::io_context io;  // the one io thread: this one
  test::upstream_server server;
  server.start();
  // The embedding of any text that says "stalled" is held until release("stall");
  // its arrival is posted to the io thread.
  net::steady_timer arrival(io, net::steady_timer::time_point::max());
  bool stall_arrived = false;
  server.on("/v1/embeddings", [&](const test::received_request& r) {
    auto answer = test::bag_of_words_embeddings(r, dimension);
    if (r.body.find("stalled") != std::string::npos) {
      answer.hold = "stall";
      net::post(io, [&] {
        stall_arrived = true;
        arrival.cancel();
      });
    }
    return answer;
  });

  answer_cache exact;
  remote_cache semantic{{}, external_embedder(dimension), static_threshold{0.8f}};
  async_http_embedder<openai_backend> embeddings(
      {.model = "e", .dimension = dimension, .endpoint = server.url("/v1/embeddings")},
      openai_backend(io.get_executor(), openai_options{.base_url = server.url("/v1")}));
  auto model = scripted_backend::echo();
  pipeline answer{exact_cache_stage(exact), semantic_cache_stage(semantic, embeddings), backend_stage(model)};

  request_context first{.tenant = "acme"};
  complete_blocking(io, answer, ask("What is the capital of France?"), first);
  request_context other_first{.tenant = "globex"};
  complete_blocking(io, answer, ask("How tall is the Eiffel Tower?"), other_first);
  BOOST_TEST_REQUIRE(semantic.size() == 2u);
  BOOST_TEST_REQUIRE(model.calls() == 2u);

  std::vector<std::string> completed;  // in order of completion
  request_context stalled{.tenant = "acme"};
  request_context exact_hit{.tenant = "acme"}, other_hit{.tenant = "globex"}, other_miss{.tenant = "globex"};
  std::exception_ptr stalled_failure;
  bool stalled_done_before_release = true;
  chat_request stalled_request = ask("Which river flows through the stalled city?");
  io.restart();
  net::co_spawn(io, answer(stalled_request, stalled),
                [&](std::exception_ptr failure, chat_response) {
                  stalled_failure = failure;
                  completed.push_back("stalled");
                });
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        if (!stall_arrived) co_await arrival.async_wait(net::as_tuple(net::use_awaitable));
        chat_request repeated = ask("What is the capital of France?");
        co_await answer(repeated, exact_hit);
        completed.push_back("exact hit");
        chat_request similar = ask("How tall is the Eiffel Tower in Paris?");
        co_await answer(similar, other_hit);
        completed.push_back("other tenant's semantic hit");
        chat_request fresh = ask("Who wrote Hamlet?");
        co_await answer(fresh, other_miss);
        completed.push_back("other tenant's miss");
        stalled_done_before_release = !completed.empty() && completed.front() == "stalled";
        server.release("stall");
      },
      net::detached);
  io.run_for(std::chrono::seconds(60));  // returns when all is done; the bound only stops a broken run

  BOOST_TEST(completed == (std::vector<std::string>{"exact hit", "other tenant's semantic hit",
                                                    "other tenant's miss", "stalled"}),
             boost::test_tools::per_element());
  BOOST_TEST(!stalled_done_before_release);
  BOOST_TEST(stall_arrived);
  BOOST_TEST(!stalled_failure);
  BOOST_TEST(to_string(exact_hit.cache) == "exact");
  BOOST_TEST(to_string(other_hit.cache) == "semantic");
  BOOST_TEST(to_string(other_miss.cache) == "miss");
  BOOST_TEST(to_string(stalled.cache) == "miss");
  BOOST_TEST(model.calls() == 4u);  // the two misses of this round
  BOOST_TEST(semantic.size() == 4u);  // both stored, the stalled one with its vector:

  request_context rephrased{.tenant = "acme"};
  complete_blocking(io, answer, ask("Which river flows through the stalled city of Paris?"), rephrased);
  BOOST_TEST(to_string(rephrased.cache) == "semantic");
  BOOST_TEST(model.calls() == 4u);
}

BOOST_AUTO_TEST_SUITE_END()
