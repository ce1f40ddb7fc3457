// http_embedder: the Embedder concept over /v1/embeddings, with concurrent
// callers batched into few upstream requests, each getting its own vector,
// and failures returned as error codes.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/serialize.hpp>

#include "llmgate/backend/http_embedder.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/embed/embedder.hpp"
#include "upstream_server.hpp"

using namespace std::chrono_literals;
using llmgate::errc;
using llmgate::http_embedder;
using llmgate::openai_backend;
using llmgate::test::received_request;
using llmgate::test::reply;
namespace json = boost::json;

static_assert(llmgate::Embedder<http_embedder<openai_backend>>);

namespace {

// Answers each input "text-<n>" with the vector (n, 1, 0, 0), slowly, so
// that callers pile up while a request is in flight.
reply numbered_vectors(const received_request& request) {
  json::array data;
  const auto body = request.json();
  const auto& input = body.at("input").as_array();
  for (std::size_t i = 0; i < input.size(); ++i) {
    const double n = std::stod(std::string(input[i].as_string()).substr(5));
    data.push_back(json::object{{"index", i}, {"embedding", json::array{n, 1, 0, 0}}});
  }
  auto answer = reply::json(json::object{{"model", "e"}, {"data", std::move(data)},
                                         {"usage", {{"prompt_tokens", input.size()}}}});
  answer.first_byte_delay = 30ms;
  return answer;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(http_embedder_concurrency_test)

BOOST_AUTO_TEST_CASE(concurrent_callers_share_requests_and_get_their_own_vectors) {
  llmgate::test::upstream_server server;
  server.start();
  server.on("/v1/embeddings", numbered_vectors);
  http_embedder<openai_backend> embedder({.model = "e", .dimension = 4, .max_batch = 16},
                                         llmgate::openai_options{.base_url = server.url("/v1")});
  constexpr int callers = 48;
  std::vector<std::vector<float>> vectors(callers, std::vector<float>(4));
  std::vector<std::error_code> results(callers);
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      results[i] = embedder.embed("text-" + std::to_string(i + 1), vectors[i]);
    });
  for (auto& thread : threads) thread.join();

  for (int i = 0; i < callers; ++i) {
    BOOST_TEST_CONTEXT("caller " << i) {
      BOOST_TEST(!results[i], results[i].message());
      const double n = i + 1, norm = std::sqrt(n * n + 1);
      BOOST_TEST(vectors[i][0] == n / norm, boost::test_tools::tolerance(1e-5));
      BOOST_TEST(vectors[i][1] == 1 / norm, boost::test_tools::tolerance(1e-5));
    }
  }
  BOOST_TEST(server.requests("/v1/embeddings") < callers / 4u);
  BOOST_TEST(embedder.mean_batch() > 4.0);
}

BOOST_AUTO_TEST_CASE(failures_and_wrong_sizes_are_error_codes) {
  llmgate::test::upstream_server server;
  server.start();
  server.on("/v1/embeddings", reply::openai_error(500, "server_error", "", "down"));
  http_embedder<openai_backend> embedder({.model = "e", .dimension = 4},
                                         llmgate::openai_options{.base_url = server.url("/v1")});
  std::vector<float> out(4, 7.0f);
  BOOST_TEST(embedder.embed("text-1", out) == errc::upstream_error);
  BOOST_TEST(out[0] == 7.0f);  // left alone
  std::vector<float> short_out(3);
  BOOST_TEST(embedder.embed("text-1", short_out) == errc::dimension_mismatch);
  server.on("/v1/embeddings", numbered_vectors);
  http_embedder<openai_backend> wrong({.model = "e", .dimension = 8},
                                      llmgate::openai_options{.base_url = server.url("/v1")});
  std::vector<float> eight(8);
  BOOST_TEST(wrong.embed("text-1", eight) == errc::dimension_mismatch);
}

BOOST_AUTO_TEST_SUITE_END()
