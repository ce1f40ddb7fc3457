// async_http_embedder awaited from several io threads at once: every
// caller gets the vector of its own text, every text goes upstream exactly
// once, and the batches' bookkeeping is shared safely (ThreadSanitizer
// runs this suite).
#include <boost/test/unit_test.hpp>

#include <cmath>    // std::sqrt
#include <string>   // std::string
#include <thread>   // std::thread
#include <vector>   // std::vector

#include <boost/asio/co_spawn.hpp>    // net::co_spawn
#include <boost/asio/detached.hpp>    // net::detached
#include <boost/asio/io_context.hpp>  // net::io_context
#include <boost/asio/strand.hpp>      // one strand per caller

#include "bag_of_words_embeddings.hpp"  // bag_of_words, bag_of_words_embeddings
#include "llmgate/backend/async_http_embedder.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "upstream_server.hpp"

namespace {

using namespace llmgate;
namespace net = boost::asio;

constexpr std::size_t dimension = 32;

}  // namespace

BOOST_AUTO_TEST_SUITE(async_http_embedder_concurrency_test)

BOOST_AUTO_TEST_CASE(callers_on_several_threads_get_their_own_vectors) {
  test::upstream_server server;
  server.start();
  server.on("/v1/embeddings", [](const test::received_request& r) { return test::bag_of_words_embeddings(r, dimension); });
  net::io_context io;
  async_http_embedder<openai_backend> embedder({.model = "e", .dimension = dimension, .max_batch = 8},
                                               openai_backend(io.get_executor(), openai_options{.base_url = server.url("/v1")}));
  constexpr int callers = 64;
  std::vector<std::string> texts;
  for (int i = 0; i < callers; ++i) texts.push_back("caller " + std::to_string(i) + " asks about topic" + std::to_string(i));
  std::vector<embedding_result> results(callers);
  for (int i = 0; i < callers; ++i)
    net::co_spawn(net::make_strand(io), [&, i]() -> net::awaitable<void> { results[i] = co_await embedder.embed(texts[i]); },
                  net::detached);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&] { io.run(); });
  for (auto& thread : threads) thread.join();

  std::size_t sent = 0;
  for (const auto& request : server.received()) {
    const auto size = request.json().at("input").as_array().size();
    BOOST_TEST(size <= 8u);
    sent += size;
  }
  BOOST_TEST(sent == static_cast<std::size_t>(callers));
  for (int i = 0; i < callers; ++i) {
    BOOST_TEST_CONTEXT("caller " << i) {
      BOOST_TEST_REQUIRE(static_cast<bool>(results[i]), results[i].message);
      const auto expected = test::bag_of_words(texts[i], dimension);
      double norm = 0;
      for (const double x : expected) norm += x * x;
      for (std::size_t d = 0; d < dimension; ++d)
        BOOST_TEST(results[i].vector[d] == expected[d] / std::sqrt(norm), boost::test_tools::tolerance(1e-5));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
