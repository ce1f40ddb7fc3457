// gateway_config: a valid file reads as written, with defaults where it is
// silent; every mistake is refused with a message that names the field.
#include <cstdio>   // std::fopen
#include <cstdlib>  // setenv, unsetenv (POSIX)
#include <string>   // std::string
#include <vector>   // std::vector

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/server/config.hpp"
#include "../temporary_directory.hpp"

namespace {

using llmgate::gateway_config;

constexpr const char* minimal = R"({
  "models": ["gpt-4o-mini"],
  "backends": [{"name": "primary", "base_url": "https://api.openai.com/v1"}],
  "tenants": [{"name": "acme", "api_key": "sk-acme"}]
})";

// The message the config `text` is refused with ("" when it is accepted).
std::string refusal(const std::string& text) {
  try {
    gateway_config::from_json(boost::json::parse(text));
    return {};
  } catch (const llmgate::error& e) {
    return e.what();
  }
}

// `minimal` with one top-level member replaced or added.
std::string with(const std::string& member, const std::string& value) {
  auto config = boost::json::parse(minimal).as_object();
  config[member] = boost::json::parse(value);
  return boost::json::serialize(config);
}


constexpr const char* composed = R"({
  "backends": [{"name": "cloud", "kind": "openai", "base_url": "https://api.example.com/v1", "retries": 1},
               {"name": "claude", "kind": "anthropic"},
               {"name": "local", "kind": "ollama", "base_url": "http://127.0.0.1:11434"},
               {"name": "demo", "kind": "demo"}],
  "models": [{"name": "coder", "backend": ["cloud", "demo"], "upstream_model": "coder-2024",
              "prices": {"input": 1.0, "output": 4.0},
              "routing": {"accuracy": 0.7, "task_accuracy": {"coding": 0.95}, "task_types": ["coding"]}},
             {"name": "chatty", "backend": "local", "routing": {"accuracy": 0.7, "input_cost_per_million": 0.1}},
             {"name": "sonnet", "backend": "claude"}],
  "router": {"aliases": ["smart"], "preferences": "accuracy=0.8,cost=0.2"},
  "tenants": [{"name": "acme", "api_key": "sk-acme"}],
  "exact_cache": {"eviction": {"policy": "lfu"}, "ttl_seconds": 60},
  "semantic_cache": {"capacity": 500, "threshold": {"policy": "adaptive", "error_bound": 0.02},
                     "eviction": {"policy": "cost_aware"}, "ttl_seconds": 3600,
                     "embedder": {"kind": "hashing", "dimension": 256, "model": "my-embedder"}}
})";

// `composed` with one top-level member replaced.
std::string composed_with(const std::string& member, const std::string& value) {
  auto config = boost::json::parse(composed).as_object();
  config[member] = boost::json::parse(value);
  return boost::json::serialize(config);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_test)

BOOST_AUTO_TEST_CASE(a_minimal_config_gets_the_defaults) {
  const auto config = gateway_config::from_json(boost::json::parse(minimal));
  BOOST_TEST(config.address == "127.0.0.1");
  BOOST_TEST(config.port == 8080);
  BOOST_TEST(config.backends.size() == 1u);
  BOOST_TEST(config.backends[0].kind == "openai");
  BOOST_TEST(config.tenants[0].api_key == "sk-acme");
  BOOST_TEST(config.exact_cache);
  BOOST_TEST(config.semantic_threshold == 0.9);
  BOOST_TEST(config.semantic_hnsw.ef_construction == llmgate::default_index_factory{}.parameters.ef_construction);
  BOOST_TEST(!config.snapshot_directory);
}

BOOST_AUTO_TEST_CASE(the_semantic_index_can_trade_recall_for_cpu) {
  const auto config = gateway_config::from_json(
      boost::json::parse(with("semantic_cache", R"({"hnsw": {"ef_construction": 40, "ef_search": 16}})")));
  BOOST_TEST(config.semantic_hnsw.m == llmgate::default_index_factory{}.parameters.m);  // not given: the cache's default
  BOOST_TEST(config.semantic_hnsw.ef_construction == 40u);
  BOOST_TEST(config.semantic_hnsw.ef_search == 16u);
}

BOOST_AUTO_TEST_CASE(secrets_come_from_the_environment) {
  const auto from_environment = with("backends",
      R"([{"name": "a", "base_url": "http://x/v1", "api_key_env": "LLMGATE_TEST_UPSTREAM_KEY"}])");
  ::setenv("LLMGATE_TEST_UPSTREAM_KEY", "sk-upstream", 1);
  BOOST_TEST(gateway_config::from_json(boost::json::parse(from_environment)).backends[0].api_key == "sk-upstream");
  ::unsetenv("LLMGATE_TEST_UPSTREAM_KEY");
  BOOST_TEST(refusal(from_environment) ==
             "config: backends[0].api_key_env names LLMGATE_TEST_UPSTREAM_KEY, which is not set: invalid request");
  BOOST_TEST(refusal(with("backends", R"([{"name": "a", "base_url": "http://x/v1", "api_key": "sk-in-the-file"}])"))
                 .starts_with("config: backends[0].api_key is not allowed here; use api_key_env"));
}

BOOST_AUTO_TEST_CASE(fallback_order_picks_and_orders_backends) {
  auto text = boost::json::parse(minimal).as_object();
  text["backends"] = boost::json::parse(R"([{"name": "a", "base_url": "http://a/v1"}, {"name": "b", "kind": "demo"}])");
  text["fallback_order"] = boost::json::array{"b", "a"};
  const auto config = gateway_config::from_json(text);
  BOOST_TEST((config.models[0].backends == std::vector<std::string>{"b", "a"}));
  text["fallback_order"] = boost::json::array{"c"};
  BOOST_TEST(refusal(boost::json::serialize(text)).starts_with(
      "config: fallback_order[0] names \"c\", which is not in backends"));
}

BOOST_AUTO_TEST_CASE(mistakes_are_refused_by_name) {
  const auto refused_with = [](const std::string& text, const std::string& message) {
    BOOST_TEST_CONTEXT(text) BOOST_TEST(refusal(text).starts_with(message), refusal(text));
  };
  refused_with("[]", "config: the file must be an object");
  refused_with(with("colour", "1"), "config: colour is not a known section");
  refused_with(R"({"backends": [], "tenants": []})", "config: models must list the models clients may ask for");
  refused_with(with("models", "[1]"), "config: models[0] must be a model's name or an object");
  refused_with(with("backends", "[]"), "config: backends must list at least one backend");
  refused_with(with("backends", R"([{"name": "a", "base_url": "ftp://x"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL");
  refused_with(with("backends", R"([{"name": "a", "kind": "magic"}])"),
               "config: backends[0].kind must be one of \"openai\", \"anthropic\", \"ollama\", \"demo\" (not \"magic\")");
  refused_with(with("backends", R"([{"name": "a", "kind": "demo"}, {"name": "a", "kind": "demo"}])"),
               "config: backends[1].name repeats \"a\"");
  refused_with(with("tenants", R"([{"name": "a"}])"), "config: tenants[0] needs api_key_env or api_key");
  refused_with(with("tenants", R"([{"name": "a", "api_key": "k"}, {"name": "b", "api_key": "k"}])"),
               "config: tenants[1] has the key of tenant \"a\"");
  refused_with(with("listen", R"({"port": 70000})"), "config: listen.port must be at most 65535");
  refused_with(with("listen", R"({"port": "80"})"), "config: listen.port must be a non-negative integer");
  refused_with(with("semantic_cache", R"({"threshold": 1.5})"), "config: semantic_cache.threshold must be in (0, 1]");
  refused_with(with("semantic_cache", R"({"hnsw": {"m": 1}})"), "config: semantic_cache.hnsw.m must be from 2 to 128");
  refused_with(with("semantic_cache", R"({"hnsw": {"ef_search": 0}})"),
               "config: semantic_cache.hnsw.ef_search must be from 1 to 4096");
  refused_with(with("semantic_cache", R"({"hnsw": 3})"), "config: semantic_cache.hnsw must be an object");
  refused_with(with("exact_cache", R"({"enabled": "yes"})"), "config: exact_cache.enabled must be true or false");
  refused_with(with("embedder", R"({"kind": "word2vec"})"),
               "config: embedder.kind must be one of \"hashing\", \"openai\"");
  refused_with(with("embedder", R"({"kind": "openai"})"),
               "config: embedder.base_url must be an http:// or https:// URL");
  refused_with(with("limits", R"({"max_concurrent_requests": 0})"),
               "config: limits.max_concurrent_requests must be at least 1");
  refused_with(with("prices", R"({"gpt-4o-mini": {"input": -1}})"), "price of gpt-4o-mini");
}


BOOST_AUTO_TEST_CASE(models_backends_router_and_cache_policies_read_as_written) {
  const auto config = gateway_config::from_json(boost::json::parse(composed));
  BOOST_TEST(config.backends.size() == 4u);
  BOOST_TEST(config.backends[1].kind == "anthropic");
  BOOST_TEST(config.backends[2].kind == "ollama");
  BOOST_TEST(config.models.size() == 3u);
  BOOST_TEST((config.models[0].backends == std::vector<std::string>{"cloud", "demo"}));
  BOOST_TEST((config.models[1].backends == std::vector<std::string>{"local"}));
  BOOST_TEST(config.models[0].upstream_model == "coder-2024");
  BOOST_TEST(config.prices->find("coder")->output == 4.0);
  BOOST_TEST(config.prices->find("coder-2024")->output == 4.0);  // what the upstream reports is priced too
  BOOST_TEST(config.models[0].routing.at("input_cost_per_million").as_double() == 1.0);  // from its prices
  BOOST_TEST(config.models[2].routing.empty());
  BOOST_REQUIRE(config.router.has_value());
  BOOST_TEST((config.router->aliases == std::vector<std::string>{"auto", "smart"}));
  BOOST_TEST(config.router->preferences == "accuracy=0.8,cost=0.2");
  BOOST_TEST(config.exact_eviction.policy == "lfu");
  BOOST_TEST(config.exact_eviction.ttl_seconds == 60.0);
  BOOST_TEST(config.semantic_max_entries == 500u);
  BOOST_TEST(config.semantic_threshold_policy.policy == "adaptive");
  BOOST_TEST(config.semantic_threshold_policy.error_bound == 0.02);
  BOOST_TEST(!config.semantic_threshold_policy.value_given);
  BOOST_TEST(config.semantic_eviction.policy == "cost_aware");
  BOOST_TEST(config.semantic_eviction.ttl_seconds == 3600.0);
  BOOST_TEST(config.embedder.dimension == 256u);
  BOOST_TEST(config.embedder.model == "my-embedder");
  // Today's numeric threshold still reads as the static policy's value.
  const auto numeric = gateway_config::from_json(boost::json::parse(with("semantic_cache", R"({"threshold": 0.8})")));
  BOOST_TEST(numeric.semantic_threshold_policy.policy == "static");
  BOOST_TEST(numeric.semantic_threshold == 0.8);
}

BOOST_AUTO_TEST_CASE(composed_mistakes_are_refused_by_name) {
  const auto refused_with = [](const std::string& text, const std::string& message) {
    BOOST_TEST_CONTEXT(text) BOOST_TEST(refusal(text).starts_with(message), refusal(text));
  };
  refused_with(composed_with("backends", R"([{"name": "x", "kind": "bedrock"}])"),
               "config: backends[0].kind must be one of \"openai\", \"anthropic\", \"ollama\", \"demo\" (not \"bedrock\")");
  refused_with(composed_with("models", R"([{"name": "coder"}])"),
               "config: models[0].backend must name a backend (or a list of them) for \"coder\"");
  refused_with(composed_with("models", R"([{"name": "coder", "backend": ["cloud", "nowhere"]}])"),
               "config: models[0].backend names \"nowhere\", which is not in backends");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo"}, {"name": "a", "backend": "demo"}])"),
               "config: models[1].name repeats \"a\"");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo"}])"),
               "config: router has no models to route over");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo", "routing": {"accuracy": 2}}])"),
               "config: models[0].routing is not a model card");
  refused_with(composed_with("router", R"({"aliases": ["coder"]})"), "config: router.aliases[1] is \"coder\"");
  refused_with(composed_with("router", R"({"preferences": "speed=1"})"), "config: router.preferences cannot be read");
  refused_with(composed_with("semantic_cache", R"({"eviction": {"policy": "fifo"}})"),
               "config: semantic_cache.eviction.policy must be one of \"lru\", \"lfu\", \"cost_aware\"");
  refused_with(composed_with("semantic_cache", R"({"ttl_seconds": -1})"),
               "config: semantic_cache.ttl_seconds must be from 0 (no expiry) to 1e9");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "learned"}})"),
               "config: semantic_cache.threshold.policy must be one of \"static\", \"adaptive\"");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "adaptive", "error_bound": 1.5}})"),
               "config: semantic_cache.threshold.error_bound must be in (0, 1)");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"value": 0}})"),
               "config: semantic_cache.threshold.value must be in (0, 1]");
  refused_with(composed_with("semantic_cache", R"({"embedder": {"kind": "openai", "model": "e"}})"),
               "config: semantic_cache.embedder.base_url must be an http:// or https:// URL");
  refused_with(composed_with("semantic_cache", R"({"embedder": {"dimension": 0}})"),
               "config: semantic_cache.embedder.dimension must be from 1 to 65536");
  refused_with(composed_with("semantic_cache",
                             R"({"embedder": {"kind": "openai", "base_url": "http://e/v1", "model": "e"}})"),
               "config: semantic_cache.embedder.dimension must give the embedding model's vector length");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "adaptive", "min_feedback": 0}})"),
               "config: semantic_cache.threshold.min_feedback must be from 1 to 1000000");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "static", "min_feedback": 3}})"),
               "config: semantic_cache.threshold.min_feedback is for the adaptive policy only");
  // A kind registered in C++ is known to from_json when it is told of it.
  const std::vector<std::string_view> kinds = {"openai", "demo", "mykind"};
  BOOST_TEST(gateway_config::from_json(boost::json::parse(with("backends", R"([{"name": "m", "kind": "mykind", "x": 1}])")),
                                       kinds).backends[0].options.at("x").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(files_that_are_missing_or_not_json_are_named) {
  llmgate::test::temporary_directory directory;
  BOOST_CHECK_EXCEPTION(gateway_config::load(directory / "absent.json"), llmgate::error, [](const auto& e) {
    return std::string(e.what()).find("absent.json") != std::string::npos;
  });
  {
    std::FILE* file = std::fopen((directory / "broken.json").c_str(), "w");
    std::fputs("{\"models\": [", file);
    std::fclose(file);
  }
  BOOST_CHECK_EXCEPTION(gateway_config::load(directory / "broken.json"), llmgate::error, [](const auto& e) {
    return std::string(e.what()).find("broken.json' is not JSON") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()
