// gateway_config: a valid file reads as written, with defaults where it is
// silent; every mistake is refused with a message that names the field.
#include <cstdio>   // std::fopen
#include <cstdlib>  // setenv, unsetenv (POSIX)
#include <string>   // std::string

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
  BOOST_TEST(config.backends[0].name == "b");
  BOOST_TEST(config.backends[1].name == "a");
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
  refused_with(with("models", "[1]"), "config: models[0] must be a string");
  refused_with(with("backends", "[]"), "config: backends must list at least one backend");
  refused_with(with("backends", R"([{"name": "a", "base_url": "ftp://x"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL");
  refused_with(with("backends", R"([{"name": "a", "kind": "magic"}])"),
               "config: backends[0].kind must be \"openai\" or \"demo\"");
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
  refused_with(with("embedder", R"({"kind": "openai"})"), "config: embedder.kind must be \"hashing\"");
  refused_with(with("limits", R"({"max_concurrent_requests": 0})"),
               "config: limits.max_concurrent_requests must be at least 1");
  refused_with(with("prices", R"({"gpt-4o-mini": {"input": -1}})"), "price of gpt-4o-mini");
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
