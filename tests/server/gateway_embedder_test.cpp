// The gateway's semantic cache over an HTTP embedder (semantic_cache.embedder
// kind "openai") end to end over real sockets: the in-test upstream computes
// bag-of-words embeddings, so a rephrasing lands close; the gateway refuses
// to start when the embedder does not answer; its snapshot keeps the
// vectors; and the adaptive threshold rises after wrong-hit feedback
// posted to /v1/feedback.
#include <bit>         // std::bit_cast
#include <cmath>       // std::sqrt
#include <cstdint>     // std::uint32_t
#include <filesystem>  // std::filesystem
#include <map>         // std::map
#include <random>      // std::random_device
#include <string>      // std::string

#include <boost/beast/core/detail/base64.hpp>  // decoding the base64 answer
#include <boost/test/unit_test.hpp>

#include "../backend/bag_of_words_embeddings.hpp"
#include "../backend/upstream_server.hpp"
#include "llmgate/server/gateway.hpp"
#include "gateway_client.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

constexpr std::size_t dimension = 256;

// An upstream that answers chat and embeds by bag of words.
struct model_server {
  upstream_server upstream;
  model_server() {
    upstream.on("/v1/chat/completions", reply::chat("Paris."));
    upstream.on("/v1/embeddings", [](const received_request& r) { return bag_of_words_embeddings(r, dimension); });
    upstream.start();
  }
};

gateway_config embedder_config_for(const std::string& url) {
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 2;
  config.tenants = {{"acme", "key-acme"}};
  config.log.requests = false;
  config.limits.request_timeout_ms = 5000;
  config.backends = {{.name = "up", .base_url = url, .retries = 0}};
  config.models = {{.name = "m", .backends = {"up"}}};
  config.semantic_cache.embedder = {.kind = "openai", .base_url = url, .model = "bow", .dimension = dimension};
  return config;
}

std::string ask(unsigned short port, std::string_view question, std::map<std::string, std::string>& headers,
                std::string* id = nullptr, std::string_view key = "key-acme") {
  const auto reply = post(port, "/v1/chat/completions", chat_body(question, false, "m"), key);
  BOOST_TEST_REQUIRE(reply.status == 200u, reply.body);
  headers = reply.headers;
  if (id) *id = std::string(reply.json().at("id").as_string());
  return headers["x-llmgate-cache"];
}

std::string refusal(gateway_config config) {
  try {
    gateway server(std::move(config), nullptr);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

struct temporary_directory {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("llmgate-embedder-" + std::to_string(std::random_device{}()));
  temporary_directory() { std::filesystem::create_directories(path); }
  ~temporary_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// The cosine of two bags of words with `shared` words of `a` and `b`.
float cosine(double shared, double a, double b) { return static_cast<float>(shared / std::sqrt(a * b)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_embedder_test)

BOOST_AUTO_TEST_CASE(a_rephrasing_hits_through_the_upstreams_embeddings) {
  model_server server;
  gateway g(embedder_config_for(server.upstream.url("/v1")), nullptr);
  BOOST_REQUIRE(g.semantic().remote());
  BOOST_TEST(!g.semantic().hashing());
  BOOST_TEST(server.upstream.requests("/v1/embeddings") == 1u);  // the probe at start
  g.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(g.port(), "What is the capital of France?", headers) == "miss");
  BOOST_TEST(ask(g.port(), "what is the capital city of France", headers) == "semantic");
  // 6 of the words shared, of 6 and 7: the upstream's vectors, not the hashing embedder's.
  BOOST_TEST(std::stof(headers["x-llmgate-similarity"]) == cosine(6, 6, 7), boost::test_tools::tolerance(0.002f));
  BOOST_TEST(server.upstream.requests("/v1/chat/completions") == 1u);
  BOOST_TEST(server.upstream.requests("/v1/embeddings") == 3u);
  const auto received = server.upstream.received();
  const auto last = received.back().json();
  BOOST_TEST(last.at("model").as_string() == "bow");
  BOOST_TEST(last.at("input").at(0).as_string() == "what is the capital city of France");
  BOOST_TEST(g.semantic().size() == 1u);
  BOOST_TEST(g.semantic().statistics().hits == 1u);
}

BOOST_AUTO_TEST_CASE(v1_embeddings_serves_the_configured_model_through_the_same_embedder) {
  model_server server;
  gateway g(embedder_config_for(server.upstream.url("/v1")), nullptr);
  g.start();
  const auto before = server.upstream.requests("/v1/embeddings");
  const auto reply = post(g.port(), "/v1/embeddings", R"({"model": "bow", "input": ["red apple", "green pear"]})",
                          "key-acme");
  BOOST_TEST_REQUIRE(reply.status == 200u, reply.body);
  const auto body = reply.json();
  const auto& data = body.at("data").as_array();
  BOOST_TEST_REQUIRE(data.size() == 2u);
  for (const auto& item : data) {
    const auto& vector = item.at("embedding").as_array();
    BOOST_TEST(vector.size() == dimension);
    double norm = 0;
    for (const auto& x : vector) norm += x.to_number<double>() * x.to_number<double>();
    BOOST_TEST(norm == 1.0, boost::test_tools::tolerance(1e-4));
  }
  BOOST_TEST(server.upstream.requests("/v1/embeddings") == before + 1);  // both inputs in one batch
  BOOST_TEST(post(g.port(), "/v1/embeddings", R"({"model": "other", "input": "x"})", "key-acme").status == 404u);
}

// A model of mode "embedding" is served by its backends beside the
// built-in embedder, listed in /v1/models, and answered in both of
// OpenAI's encodings under the name the client asked for.
BOOST_AUTO_TEST_CASE(embedding_models_of_the_backends_are_served_in_both_encodings) {
  model_server server;
  auto config = embedder_config_for(server.upstream.url("/v1"));
  config.semantic_cache.embedder = {};  // the built-in hashing embedder for the cache
  config.models.push_back({.name = "words", .backends = {"up"}, .mode = model_mode::embedding, .upstream_model = "bow"});
  gateway g(std::move(config), nullptr);
  g.start();

  const auto models = get(g.port(), "/v1/models", "key-acme").json();
  std::vector<std::string> ids;
  for (const auto& model : models.at("data").as_array()) ids.emplace_back(model.at("id").as_string());
  BOOST_TEST(ids == (std::vector<std::string>{"m", "words", "llmgate-hashing"}), boost::test_tools::per_element());

  const auto floats = post(g.port(), "/v1/embeddings", R"({"model": "words", "input": ["red apple", "red"]})", "key-acme");
  BOOST_TEST_REQUIRE(floats.status == 200u, floats.body);
  BOOST_TEST(floats.json().at("model").as_string() == "words");
  BOOST_TEST(server.upstream.received().back().json().at("model").as_string() == "bow");
  const auto floats_body = floats.json();
  const auto& first = floats_body.at("data").at(0).at("embedding").as_array();
  BOOST_TEST_REQUIRE(first.size() == dimension);

  const auto packed = post(g.port(), "/v1/embeddings",
                           R"({"model": "words", "input": ["red apple", "red"], "encoding_format": "base64"})", "key-acme");
  BOOST_TEST_REQUIRE(packed.status == 200u, packed.body);
  const std::string text(packed.json().at("data").at(0).at("embedding").as_string());
  BOOST_TEST(text.size() == 4 * ((4 * dimension + 2) / 3));  // base64 of 256 float32
  std::string bytes(boost::beast::detail::base64::decoded_size(text.size()), '\0');
  bytes.resize(boost::beast::detail::base64::decode(bytes.data(), text.data(), text.size()).first);
  BOOST_TEST_REQUIRE(bytes.size() == 4 * dimension);
  for (std::size_t i = 0; i < dimension; ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = 0; b < 4; ++b) bits |= std::uint32_t(static_cast<unsigned char>(bytes[4 * i + b])) << (8 * b);
    BOOST_TEST(std::bit_cast<float>(bits) == static_cast<float>(first[i].to_number<double>()));
  }

  const auto hashing = post(g.port(), "/v1/embeddings",
                            R"({"model": "llmgate-hashing", "input": "red", "encoding_format": "base64"})", "key-acme");
  BOOST_TEST(hashing.json().at("data").at(0).at("embedding").as_string().size() == 4 * ((4 * 384 + 2) / 3));
  const auto code = [&](std::string_view path, std::string body) {
    const auto reply = post(g.port(), path, std::move(body), "key-acme");
    return std::to_string(reply.status) + " " + std::string(reply.json().at("error").at("code").as_string());
  };
  BOOST_TEST(code("/v1/embeddings", R"({"model": "m", "input": "x"})") == "400 model_not_supported");
  BOOST_TEST(code("/v1/embeddings", R"({"model": "nope", "input": "x"})") == "404 model_not_found");
  BOOST_TEST(code("/v1/embeddings", R"({"model": "words", "input": "x", "encoding_format": "hex"})") ==
             "400 invalid_request");
  BOOST_TEST(code("/v1/chat/completions", chat_body("hi", false, "words")) == "400 model_not_supported");
}

// An embedding model's upstream that refuses the input passes its 400 on;
// one that fails is a 502 whose message names no upstream address.
BOOST_AUTO_TEST_CASE(an_embedding_models_failures_reach_the_client_as_chat_failures_do) {
  upstream_server upstream;
  upstream.enqueue("/v1/embeddings", reply::openai_error(400, "invalid_request_error", "invalid_input", "Input too long."));
  upstream.enqueue("/v1/embeddings", reply::openai_error(500, "server_error", "boom", "Overloaded."));
  upstream.start();
  auto config = embedder_config_for(upstream.url("/v1"));
  config.semantic_cache.embedder = {};
  config.models.push_back({.name = "words", .backends = {"up"}, .mode = model_mode::embedding});
  gateway g(std::move(config), nullptr);
  g.start();
  const auto refused = post(g.port(), "/v1/embeddings", R"({"model": "words", "input": "x"})", "key-acme");
  BOOST_TEST(refused.status == 400u);
  BOOST_TEST(refused.json().at("error").at("code").as_string() == "invalid_input");
  BOOST_TEST(refused.json().at("error").at("message").as_string() == "Input too long.");
  const auto failed = post(g.port(), "/v1/embeddings", R"({"model": "words", "input": "x"})", "key-acme");
  BOOST_TEST(failed.status == 502u);
  BOOST_TEST(failed.json().at("error").at("message").as_string() == "The upstream model server failed: HTTP 500: Overloaded.");
  BOOST_TEST(upstream.requests("/v1/embeddings") == 2u);  // retries 0: one try each
}

BOOST_AUTO_TEST_CASE(an_embedder_that_does_not_answer_keeps_the_gateway_from_starting) {
  auto config = embedder_config_for("http://127.0.0.1:1/v1");
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.base_url http://127.0.0.1:1/v1 does not answer"),
             refusal(config));
  // A server that answers, without an embeddings endpoint.
  upstream_server chat_only;
  chat_only.on("/v1/chat/completions", reply::chat("hi"));
  chat_only.start();
  config = embedder_config_for(chat_only.url("/v1"));
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.base_url " + chat_only.url("/v1") +
                                         " does not answer"),
             refusal(config));
  // Vectors of another length than the config's.
  model_server server;
  config = embedder_config_for(server.upstream.url("/v1"));
  config.semantic_cache.embedder.dimension = 128;
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.dimension 128"), refusal(config));
  // The dimension must be given.
  const auto file = json::parse(R"({"backends": [{"name": "d", "kind": "demo"}], "models": ["m"],
      "tenants": [{"name": "a", "api_key": "k"}],
      "semantic_cache": {"embedder": {"kind": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "e"}}})");
  try {
    (void)gateway_config::from_json(file);
    BOOST_FAIL("no error");
  } catch (const error& e) {
    BOOST_TEST(std::string(e.what()).starts_with("config: semantic_cache.embedder.dimension"), e.what());
  }
  config.semantic_cache.embedder.dimension = 0;
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.dimension"), refusal(config));
}

BOOST_AUTO_TEST_CASE(the_snapshot_keeps_the_upstreams_vectors) {
  model_server server;
  temporary_directory directory;
  auto config = embedder_config_for(server.upstream.url("/v1"));
  config.snapshot.directory = directory.path;
  std::map<std::string, std::string> headers;
  {
    gateway first(config, nullptr);
    first.start();
    BOOST_TEST(ask(first.port(), "What is the capital of France?", headers) == "miss");
  }
  std::size_t snapshots = 0;
  for (const auto& file : std::filesystem::directory_iterator(directory.path))
    snapshots += file.path().filename().string().starts_with("semantic_openai_");
  BOOST_TEST(snapshots == 1u);
  BOOST_TEST(!std::filesystem::exists(directory.path / "semantic.snapshot"));
  {
    gateway second(config, nullptr);
    BOOST_TEST(second.semantic().size() == 1u);
    second.start();
    BOOST_TEST(ask(second.port(), "what is the capital city of France", headers) == "semantic");
    BOOST_TEST(server.upstream.requests("/v1/chat/completions") == 1u);
  }
  // Another embedding model of the same dimension: its vectors must never
  // meet the first model's, so it starts from a snapshot of its own.
  config.semantic_cache.embedder.model = "another-model";
  gateway third(config, nullptr);
  BOOST_TEST(third.semantic().size() == 0u);
}

BOOST_AUTO_TEST_CASE(no_tenant_is_served_another_tenants_answer) {
  model_server server;
  auto config = embedder_config_for(server.upstream.url("/v1"));
  config.tenants = {{"acme", "key-acme"}, {"globex", "key-globex"}};
  gateway g(config, nullptr);
  g.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(g.port(), "What is the capital of France?", headers) == "miss");
  BOOST_TEST(ask(g.port(), "What is the capital of France?", headers, nullptr, "key-globex") == "miss");
  BOOST_TEST(ask(g.port(), "what is the capital city of France", headers, nullptr, "key-globex") == "semantic");
  // globex's hit is its own answer: acme's stored one never served it.
  BOOST_TEST(server.upstream.requests("/v1/chat/completions") == 2u);
  BOOST_TEST(ask(g.port(), "what is the capital city of France", headers) == "semantic");
  BOOST_TEST(server.upstream.requests("/v1/chat/completions") == 2u);
}

BOOST_AUTO_TEST_CASE(wrong_hit_feedback_raises_the_adaptive_threshold) {
  model_server server;
  auto config = embedder_config_for(server.upstream.url("/v1"));
  config.semantic_cache.threshold = {.policy = "adaptive", .value = 0.8, .value_given = true, .error_bound = 0.05,
                                      .min_feedback = 2};
  gateway g(config, nullptr);
  g.start();
  const auto threshold = [&] { return g.semantic().threshold_policy().threshold(); };
  const auto wrong = [&](const std::string& id) {
    return post(g.port(), "/v1/feedback", json::serialize(json::object{{"id", id}, {"correct", false}}), "key-acme");
  };
  BOOST_TEST(threshold() == 0.8f);
  std::map<std::string, std::string> headers;
  std::string id;
  BOOST_TEST(ask(g.port(), "What is the capital of France?", headers) == "miss");
  BOOST_TEST(ask(g.port(), "what is the capital city of France", headers, &id) == "semantic");
  BOOST_TEST(wrong(id).status == 200u);
  BOOST_TEST(threshold() == 0.8f);  // one verdict of the two it waits for
  BOOST_TEST(ask(g.port(), "How do I reverse a list in Python?", headers) == "miss");
  BOOST_TEST(ask(g.port(), "how do I reverse a list in python quickly", headers, &id) == "semantic");
  BOOST_TEST(wrong(id).status == 200u);
  // Every judged hit was wrong: no threshold keeps the error bound, so
  // the policy serves nothing (one bin above a similarity of 1).
  BOOST_TEST(threshold() == 1.0f + 1.0f / 1000);
  BOOST_TEST(g.semantic().statistics().wrong_reports == 2u);
  BOOST_TEST(ask(g.port(), "what is the capital city of France", headers) != "semantic");
  // A fresh near-duplicate, which the start threshold would have served.
  BOOST_TEST(ask(g.port(), "Who wrote the novel War and Peace?", headers) == "miss");
  BOOST_TEST(ask(g.port(), "who wrote the novel war and peace originally", headers) == "miss");
  BOOST_TEST(std::stof(headers["x-llmgate-similarity"]) >= 0.8f, headers["x-llmgate-similarity"]);
}

BOOST_AUTO_TEST_SUITE_END()
