// The OpenAI adapter against real servers, through one conformance suite:
// - a real inference engine: node-llama-cpp (llama.cpp, 1 thread) serving
//   ../shared/data/models/stories260K through scripts/llama_engine.mjs,
//   with the npm packages scripts/setup installs (tests/node). Skipped, with
//   the reason, where Node, the packages or the model are missing: CTest
//   reports it as skipped, and CI (LLMGATE_REQUIRE_REAL_PARTS=1) as failed.
// - any OpenAI-compatible server named by LLMGATE_TEST_BASE_URL (with
//   LLMGATE_TEST_API_KEY, LLMGATE_TEST_MODEL and, to check embeddings,
//   LLMGATE_TEST_EMBEDDING_MODEL), e.g. https://api.openai.com/v1. Opt-in:
//   without the variable Boost.Test skips the case, and the suite is judged
//   by the engine's.
#include <boost/test/unit_test.hpp>

#include <cmath>    // std::sqrt
#include <cstdlib>  // std::getenv
#include <string>   // std::string

#include "llmgate/backend/openai_backend.hpp"
#include "backend_fixture.hpp"
#include "../node/node_process.hpp"  // llama_harness, llama_engine_unavailable
#include "../skip_test.hpp"          // skip_test

using llmgate::openai_backend;
using llmgate::openai_options;
using llmgate::test::chunk_log;
using llmgate::test::user_says;
namespace net = boost::asio;

namespace {

struct server_under_test {
  std::string base_url;
  std::string api_key;
  std::string model;            ///< "" for the first the server lists
  std::string embedding_model;  ///< "" to skip embeddings
  bool deterministic = false;   ///< temperature 0 gives the same text whole and streamed
};

/// What any OpenAI-compatible server must do for llmgate.
void check_conformance(const server_under_test& target) {
  net::io_context io;
  openai_backend model(io.get_executor(), {.name = "conformance", .base_url = target.base_url,
                                           .api_key = target.api_key});
  const auto run = [&](auto task) { return llmgate::run_blocking(io, std::move(task)); };

  const auto ids = run(model.models());
  BOOST_TEST_REQUIRE(!ids.empty());
  const std::string name = target.model.empty() ? ids.front() : target.model;

  auto request = user_says("Once upon a time", name);
  llmgate::set_field(request.parameters, "max_tokens", "16");
  llmgate::set_field(request.parameters, "temperature", "0");
  const auto whole = run(model.complete(request));
  BOOST_TEST(!whole.id.empty());
  BOOST_TEST(!whole.content.empty());
  BOOST_TEST(!whole.finish_reason.empty());
  BOOST_TEST(whole.usage.prompt_tokens > 0u);
  BOOST_TEST(whole.usage.completion_tokens > 0u);

  chunk_log log;
  const auto streamed = run(model.stream(request, log.handler()));
  BOOST_TEST(log.text() == streamed.content);
  BOOST_TEST(!streamed.finish_reason.empty());
  BOOST_TEST(streamed.usage.prompt_tokens == whole.usage.prompt_tokens);  // same prompt, same count
  BOOST_TEST(streamed.usage.completion_tokens > 0u);
  BOOST_TEST(log.chunks.back().usage.has_value());
  if (target.deterministic) BOOST_TEST(streamed.content == whole.content);

  llmgate::set_field(request.parameters, "max_tokens", "1");
  BOOST_TEST(run(model.complete(request)).finish_reason == "length");

  if (target.embedding_model.empty()) return;
  const auto vectors = run(model.embed({.model = target.embedding_model,
                                        .input = {"a small cat", "a small cat", "stock markets"},
                                        .parameters = {}}));
  BOOST_REQUIRE(vectors.embeddings.size() == 3u);
  const auto& a = vectors.embeddings[0];
  const auto& b = vectors.embeddings[1];
  BOOST_REQUIRE(!a.empty());
  BOOST_TEST(b.size() == a.size());
  BOOST_TEST(vectors.embeddings[2].size() == a.size());
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  BOOST_TEST(dot / std::sqrt(aa * bb) > 0.99);  // the same text embeds the same
  BOOST_TEST(vectors.usage.prompt_tokens > 0u);
}

boost::test_tools::assertion_result base_url_given(boost::unit_test::test_unit_id) {
  const char* base_url = std::getenv("LLMGATE_TEST_BASE_URL");
  const bool set = base_url && *base_url;
  boost::test_tools::assertion_result given(set);
  given.message() << "LLMGATE_TEST_BASE_URL is not set";
  return given;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(real_engine_test)

BOOST_AUTO_TEST_CASE(node_llama_cpp_serving_stories260K) {
  if (const auto missing = llmgate::test::llama_engine_unavailable()) return llmgate::test::skip_test(*missing);
  const auto harness = llmgate::test::llama_harness("real_engine_test.harness.log");
  const auto url = harness.base_url();
  if (!url) {
    BOOST_ERROR("the engine did not start, see real_engine_test.harness.log");
    return;
  }
  check_conformance({.base_url = *url, .api_key = "", .model = "", .embedding_model = "stories260K-ctx512",
                     .deterministic = true});
}

BOOST_AUTO_TEST_CASE(server_named_by_LLMGATE_TEST_BASE_URL, *boost::unit_test::precondition(base_url_given)) {
  const char* base_url = std::getenv("LLMGATE_TEST_BASE_URL");
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  check_conformance({.base_url = base_url, .api_key = variable("LLMGATE_TEST_API_KEY"),
                     .model = variable("LLMGATE_TEST_MODEL"),
                     .embedding_model = variable("LLMGATE_TEST_EMBEDDING_MODEL")});
}

BOOST_AUTO_TEST_SUITE_END()
