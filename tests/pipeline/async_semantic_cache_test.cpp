// The semantic cache stage with an AsyncEmbedder, end to end: an HTTP
// embedder whose upstream computes the embeddings (bag-of-words vectors)
// makes a miss, then a rephrased request hits semantically; an embeddings
// server that is down makes misses that are answered but not stored; a
// synchronous embedder works through inline_embedder; an embedder of
// another dimension is refused at construction.
#include <boost/test/unit_test.hpp>

#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/io_context.hpp>  // net::io_context

#include "../backend/bag_of_words_embeddings.hpp"  // deterministic embeddings upstream
#include "../backend/upstream_server.hpp"          // upstream_server
#include "llmgate/backend/async_http_embedder.hpp"
#include "llmgate/backend/inline_embedder.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/embed/external_embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
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
  request.messages.push_back({.role = "system", .content = "Be brief."});
  request.messages.push_back({.role = "user", .content = question});
  return request;
}

struct fixture {
  net::io_context io;
  test::upstream_server server;
  answer_cache exact;
  remote_cache semantic{{}, external_embedder(dimension), static_threshold{0.8f}};
  scripted_backend model = scripted_backend::echo();

  fixture() {
    server.start();
    server.on("/v1/embeddings", [](const test::received_request& r) { return test::bag_of_words_embeddings(r, dimension); });
  }

  async_http_embedder<openai_backend> embedder(std::string base_url) {
    return {{.model = "e", .dimension = dimension, .endpoint = base_url + "/embeddings"},
            openai_backend(io.get_executor(), openai_options{.base_url = base_url})};
  }

  // What served the request, by name (printable in test messages).
  template <class Pipeline>
  std::string_view run(Pipeline& answer, std::string question, std::string tenant = "acme") {
    request_context context{.tenant = std::move(tenant)};
    complete_blocking(io, answer, ask(std::move(question)), context);
    return to_string(context.cache);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(async_semantic_cache_test)

BOOST_FIXTURE_TEST_CASE(http_embeddings_find_a_rephrased_request, fixture) {
  pipeline answer{exact_cache_stage(exact), semantic_cache_stage(semantic, embedder(server.url("/v1"))),
                  backend_stage(model)};
  BOOST_TEST(run(answer, "What is the capital city of France?") == "miss");
  BOOST_TEST(semantic.size() == 1u);
  BOOST_TEST(server.requests("/v1/embeddings") == 1u);  // one embedding per miss: the insert reuses it

  BOOST_TEST(run(answer, "what's the capital city of France") == "semantic");
  BOOST_TEST(model.calls() == 1u);
  BOOST_TEST(server.requests("/v1/embeddings") == 2u);

  BOOST_TEST(run(answer, "How do I bake sourdough bread?") == "miss");
  BOOST_TEST(run(answer, "what's the capital city of France", "globex") == "miss");  // another tenant
  BOOST_TEST(model.calls() == 3u);
}

BOOST_FIXTURE_TEST_CASE(an_embeddings_server_that_is_down_makes_unstored_misses, fixture) {
  test::upstream_server gone;
  gone.start();
  const std::string url = gone.url("/v1");
  gone.stop();
  pipeline answer{exact_cache_stage(exact), semantic_cache_stage(semantic, embedder(url)), backend_stage(model)};
  BOOST_TEST(run(answer, "What is the capital city of France?") == "miss");
  BOOST_TEST(model.calls() == 1u);
  BOOST_TEST(semantic.size() == 0u);  // no vector: it could never be found
  BOOST_TEST(exact.size() == 1u);
  BOOST_TEST(run(answer, "What is the capital city of France?") == "exact");
}

BOOST_FIXTURE_TEST_CASE(a_synchronous_embedder_through_inline_embedder, fixture) {
  inline_embedder<hashing_embedder> hashing;
  remote_cache local{{}, external_embedder(hashing.dimension()), static_threshold{0.8f}};
  pipeline answer{semantic_cache_stage(local, std::move(hashing)), backend_stage(model)};
  BOOST_TEST(run(answer, "What is the capital of France?") == "miss");
  BOOST_TEST(run(answer, "What is the capital of France") == "semantic");
  BOOST_TEST(model.calls() == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_embedder_of_another_dimension_is_refused, fixture) {
  remote_cache smaller{{}, external_embedder(dimension / 2)};
  BOOST_CHECK_EXCEPTION(semantic_cache_stage(smaller, embedder(server.url("/v1"))), llmgate::error,
                        [](const llmgate::error& e) { return e.code() == errc::dimension_mismatch; });
}

BOOST_AUTO_TEST_SUITE_END()
