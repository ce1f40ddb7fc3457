// async_http_embedder: the AsyncEmbedder concept over /v1/embeddings on one
// io thread: unit vectors of the upstream's numbers, the texts of one turn
// of the event loop in as few requests as max_batch allows (counted
// exactly), failures as values, a probe that names the endpoint, and a
// cancelled caller that stops waiting; inline_embedder adapts a
// synchronous embedder.
#include <boost/test/unit_test.hpp>

#include <cmath>      // std::sqrt
#include <exception>  // std::exception_ptr, std::rethrow_exception
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/asio/as_tuple.hpp>                // a cancelled timer wait as a value
#include <boost/asio/bind_cancellation_slot.hpp>  // cancelling one caller
#include <boost/asio/cancellation_signal.hpp>     // net::cancellation_signal
#include <boost/asio/co_spawn.hpp>                // net::co_spawn
#include <boost/asio/detached.hpp>                // net::detached
#include <boost/asio/io_context.hpp>              // net::io_context
#include <boost/asio/post.hpp>                    // net::post
#include <boost/asio/steady_timer.hpp>            // a wake-up the upstream's thread posts
#include <boost/asio/use_awaitable.hpp>           // net::use_awaitable
#include <boost/system/system_error.hpp>          // operation_aborted, thrown on cancellation

#include "bag_of_words_embeddings.hpp"  // bag_of_words, bag_of_words_embeddings
#include "llmgate/backend/async_http_embedder.hpp"
#include "llmgate/backend/blocking.hpp"  // run_blocking
#include "llmgate/backend/inline_embedder.hpp"
#include "llmgate/backend/ollama_backend.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/embed/external_embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
#include "upstream_server.hpp"

namespace {

using namespace llmgate;
using llmgate::test::received_request;
using llmgate::test::reply;
namespace net = boost::asio;

static_assert(AsyncEmbedder<async_http_embedder<openai_backend>>);
static_assert(AsyncEmbedder<async_http_embedder<ollama_backend>>);
static_assert(AsyncEmbedder<inline_embedder<hashing_embedder>>);
static_assert(!AsyncEmbedder<hashing_embedder>);

constexpr std::size_t dimension = 16;

std::vector<float> unit(const std::vector<double>& vector) {
  double norm = 0;
  for (const double x : vector) norm += x * x;
  std::vector<float> out;
  for (const double x : vector) out.push_back(static_cast<float>(x / std::sqrt(norm)));
  return out;
}

struct fixture {
  net::io_context io;
  test::upstream_server server;
  fixture() {
    server.start();
    server.on("/v1/embeddings", [](const received_request& r) { return test::bag_of_words_embeddings(r, dimension); });
  }

  async_http_embedder<openai_backend> embedder(std::string url, std::size_t size = dimension, std::size_t batch = 64) {
    return {{.model = "e", .dimension = size, .max_batch = batch, .endpoint = url + "/embeddings"},
            openai_backend(io.get_executor(), openai_options{.base_url = url})};
  }

  embedding_result embed(async_http_embedder<openai_backend>& e, std::string_view text) {
    return run_blocking(io, e.embed(text));
  }
};

// The URL of a port where nothing listens any more.
std::string dead_url() {
  test::upstream_server gone;
  gone.start();
  const std::string url = gone.url("/v1");
  gone.stop();
  return url;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(async_http_embedder_test)

BOOST_FIXTURE_TEST_CASE(vectors_are_the_upstreams_at_unit_length, fixture) {
  auto e = embedder(server.url("/v1"));
  const auto result = embed(e, "What is the capital of France?");
  BOOST_TEST_REQUIRE(static_cast<bool>(result), result.message);
  const auto expected = unit(test::bag_of_words("What is the capital of France?", dimension));
  BOOST_TEST(result.vector == expected, boost::test_tools::tolerance(1e-6f) << boost::test_tools::per_element());
  BOOST_TEST(server.requests("/v1/embeddings") == 1u);
  BOOST_TEST(server.received().front().json().at("model") == "e");
}

BOOST_FIXTURE_TEST_CASE(texts_of_one_turn_share_requests_of_max_batch, fixture) {
  auto e = embedder(server.url("/v1"), dimension, 4);
  std::vector<std::string> texts;
  for (int i = 0; i < 10; ++i) texts.push_back("question number " + std::to_string(i) + " about word" + std::to_string(i));
  std::vector<embedding_result> results(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i)
    net::co_spawn(io, [&, i]() -> net::awaitable<void> { results[i] = co_await e.embed(texts[i]); }, net::detached);
  io.run();

  // Ten callers in one turn, four texts a request: exactly three requests.
  BOOST_TEST(server.requests("/v1/embeddings") == 3u);
  std::vector<std::size_t> sizes;
  for (const auto& request : server.received()) sizes.push_back(request.json().at("input").as_array().size());
  BOOST_TEST(sizes == (std::vector<std::size_t>{4, 4, 2}), boost::test_tools::per_element());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    BOOST_TEST_CONTEXT("caller " << i) {
      BOOST_TEST_REQUIRE(static_cast<bool>(results[i]), results[i].message);
      BOOST_TEST(results[i].vector == unit(test::bag_of_words(texts[i], dimension)),
                 boost::test_tools::tolerance(1e-6f) << boost::test_tools::per_element());
    }
  }
  // A later turn is a batch of its own.
  BOOST_TEST(static_cast<bool>(embed(e, "one more")));
  BOOST_TEST(server.requests("/v1/embeddings") == 4u);
}

BOOST_FIXTURE_TEST_CASE(failures_are_values, fixture) {
  auto wrong_size = embedder(server.url("/v1"), dimension + 1);
  const auto mismatch = embed(wrong_size, "hello");
  BOOST_TEST(mismatch.error == errc::dimension_mismatch);
  BOOST_TEST(mismatch.vector.empty());
  BOOST_TEST(mismatch.message.find("16 floats") != std::string::npos, mismatch.message);

  const std::string url = dead_url();
  auto down = embedder(url);
  const auto unreachable = embed(down, "hello");
  BOOST_TEST(unreachable.error == errc::upstream_unreachable);
  BOOST_TEST(unreachable.vector.empty());
  BOOST_TEST(unreachable.message.find(url.substr(7, url.size() - 10)) != std::string::npos, unreachable.message);

  server.enqueue("/v1/embeddings", reply::openai_error(500, "server_error", "", "embeddings are down"));
  auto e = embedder(server.url("/v1"));
  const auto status = embed(e, "hello");
  BOOST_TEST(status.error == errc::upstream_error);
  BOOST_TEST(status.message.find("embeddings are down") != std::string::npos, status.message);

  server.enqueue("/v1/embeddings", reply::json({{"model", "e"}, {"data", boost::json::array{}}}));
  BOOST_TEST(embed(e, "hello").error == errc::upstream_protocol_error);
  BOOST_TEST(static_cast<bool>(embed(e, "hello")));  // and the next one is fine again
}

BOOST_FIXTURE_TEST_CASE(probe_names_the_endpoint_that_does_not_answer, fixture) {
  auto e = embedder(server.url("/v1"));
  BOOST_CHECK_NO_THROW(run_blocking(io, e.probe()));

  const std::string url = dead_url();
  auto down = embedder(url);
  try {
    run_blocking(io, down.probe());
    BOOST_FAIL("the probe of a dead endpoint must throw");
  } catch (const llmgate::error& failure) {
    const std::string what = failure.what();
    BOOST_TEST(failure.code() == errc::upstream_unreachable);
    BOOST_TEST(what.find("no embeddings from " + url + "/embeddings (model 'e')") == 0u, what);
  }
}

BOOST_FIXTURE_TEST_CASE(a_cancelled_caller_stops_waiting, fixture) {
  // The upstream holds its answer; the test hears, on the io thread, when
  // the request has arrived, and then cancels the caller.
  net::steady_timer arrival(io, net::steady_timer::time_point::max());
  bool arrived = false;
  server.on("/v1/embeddings", [&](const received_request& r) {
    auto answer = test::bag_of_words_embeddings(r, dimension);
    answer.hold = "held";
    net::post(io, [&] {
      arrived = true;
      arrival.cancel();
    });
    return answer;
  });
  auto e = embedder(server.url("/v1"));
  net::cancellation_signal cancel;
  std::exception_ptr thrown;
  bool finished = false;
  net::co_spawn(io, e.embed("held text"),
                net::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr failure, embedding_result) {
                  thrown = failure;
                  finished = true;
                }));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        if (!arrived) co_await arrival.async_wait(net::as_tuple(net::use_awaitable));
        cancel.emit(net::cancellation_type::terminal);
      },
      net::detached);
  io.run();  // returns once the caller and its (abandoned) request are done
  server.release("held");

  BOOST_TEST_REQUIRE(finished);
  BOOST_TEST_REQUIRE(static_cast<bool>(thrown));
  try {
    std::rethrow_exception(thrown);
  } catch (const boost::system::system_error& cancelled) {
    BOOST_TEST(cancelled.code() == net::error::operation_aborted);
  }
  BOOST_TEST(static_cast<bool>(embed(e, "after the cancel")));  // the embedder goes on
}

BOOST_AUTO_TEST_CASE(inline_embedder_runs_a_synchronous_embedder_where_awaited) {
  net::io_context io;
  inline_embedder<hashing_embedder> adapted;
  const auto result = run_blocking(io, adapted.embed("What is the capital of France?"));
  BOOST_TEST_REQUIRE(static_cast<bool>(result), result.message);
  std::vector<float> direct(adapted.dimension());
  BOOST_TEST(!adapted.embedder().embed("What is the capital of France?", direct));
  BOOST_TEST(result.vector == direct, boost::test_tools::per_element());

  inline_embedder<external_embedder> never(external_embedder(8));
  const auto refused = run_blocking(io, never.embed("anything"));
  BOOST_TEST(refused.error == errc::not_supported);
  BOOST_TEST(refused.vector.empty());
}

BOOST_AUTO_TEST_SUITE_END()
