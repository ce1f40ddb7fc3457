// gateway_config: a valid file reads as written, with defaults where it is
// silent; every mistake is refused with a message that names the field
// once; an unknown key is refused with the nearest known one; the older
// spellings are still read; check() refuses a config built in C++ with the
// messages from_json gives.
#include <cstdio>      // std::fopen
#include <cstdlib>     // setenv, unsetenv (POSIX)
#include <filesystem>  // std::filesystem::path (examples/gateway.json)
#include <span>        // std::span (the backend kinds)
#include <string>      // std::string
#include <vector>      // std::vector

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/server/gateway_config.hpp"
#include "../file_bytes.hpp"  // read_bytes (the README)
#include "../temporary_directory.hpp"
#include "config_text.hpp"

namespace {

using llmgate::gateway_config;
using llmgate::test::refusal;
using llmgate::test::with;
constexpr const char* minimal = llmgate::test::minimal_config;

// Checks that the config `text` is refused with `message`.
void refused_with(const std::string& text, const std::string& message) {
  BOOST_TEST_CONTEXT(text) BOOST_TEST(refusal(text) == message);
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
  BOOST_TEST(config.listen.address == "127.0.0.1");
  BOOST_TEST(config.listen.port == 8080);
  BOOST_TEST(config.backends.size() == 1u);
  BOOST_TEST(config.backends[0].kind == "openai");
  BOOST_TEST(config.tenants[0].api_key == "sk-acme");
  BOOST_TEST(config.exact_cache.enabled);
  BOOST_TEST(config.semantic_cache.threshold.value == 0.9);
  BOOST_TEST(config.semantic_cache.hnsw.ef_construction == llmgate::default_index_factory{}.parameters.ef_construction);
  BOOST_TEST(config.semantic_cache.verifier == "default");
  BOOST_TEST(!config.snapshot.directory);
}

BOOST_AUTO_TEST_CASE(the_semantic_index_can_trade_recall_for_cpu) {
  const auto config = gateway_config::from_json(
      boost::json::parse(with("semantic_cache", R"({"hnsw": {"ef_construction": 40, "ef_search": 16}})")));
  BOOST_TEST(config.semantic_cache.hnsw.m == llmgate::default_index_factory{}.parameters.m);  // not given: the cache's default
  BOOST_TEST(config.semantic_cache.hnsw.ef_construction == 40u);
  BOOST_TEST(config.semantic_cache.hnsw.ef_search == 16u);
}

BOOST_AUTO_TEST_CASE(secrets_come_from_the_environment) {
  const auto from_environment = with("backends",
      R"([{"name": "a", "base_url": "http://x/v1", "api_key_env": "LLMGATE_TEST_UPSTREAM_KEY"}])");
  ::setenv("LLMGATE_TEST_UPSTREAM_KEY", "sk-upstream", 1);
  BOOST_TEST(gateway_config::from_json(boost::json::parse(from_environment)).backends[0].api_key == "sk-upstream");
  ::unsetenv("LLMGATE_TEST_UPSTREAM_KEY");
  BOOST_TEST(refusal(from_environment) ==
             "config: backends[0].api_key_env names LLMGATE_TEST_UPSTREAM_KEY, which is not set");
  BOOST_TEST(refusal(with("backends", R"([{"name": "a", "base_url": "http://x/v1", "api_key": "sk-in-the-file"}])")) ==
             "config: backends[0].api_key is not allowed here; use api_key_env");
}

BOOST_AUTO_TEST_CASE(fallback_order_picks_and_orders_backends) {
  auto text = boost::json::parse(minimal).as_object();
  text["backends"] = boost::json::parse(R"([{"name": "a", "base_url": "http://a/v1"}, {"name": "b", "kind": "demo"}])");
  text["fallback_order"] = boost::json::array{"b", "a"};
  const auto config = gateway_config::from_json(text);
  BOOST_TEST((config.models[0].backends == std::vector<std::string>{"b", "a"}));
  text["fallback_order"] = boost::json::array{"c"};
  BOOST_TEST(refusal(boost::json::serialize(text)) == "config: fallback_order[0] names \"c\", which is not in backends");
}

BOOST_AUTO_TEST_CASE(mistakes_are_refused_by_name) {
  refused_with("[]", "config: the file must be an object");
  refused_with(with("colour", "1"),
               "config: colour is not a known key (known: listen, limits, backends, models, router, tenants, admin, "
               "exact_cache, semantic_cache, snapshot, log, fallback_order, prices, embedder, prompt_schemas, prompt_sources, shared)");
  refused_with(R"({"backends": [], "tenants": []})", "config: models must list the models clients may ask for");
  refused_with(with("models", "[1]"), "config: models[0] must be a model's name or an object {\"name\", \"backend\", ...}");
  refused_with(with("backends", "[]"), "config: backends must list at least one backend");
  refused_with(with("backends", R"([{"name": "a", "base_url": "ftp://x"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL with a host, not \"ftp://x\"");
  refused_with(with("backends", R"([{"name": "a", "kind": "magic"}])"),
               "config: backends[0].kind must be one of \"openai\", \"anthropic\", \"ollama\", \"llama.cpp\", \"demo\" (not \"magic\")");
  refused_with(with("backends", R"([{"name": "a", "kind": "demo"}, {"name": "a", "kind": "demo"}])"),
               "config: backends[1].name repeats \"a\"");
  refused_with(with("tenants", R"([{"name": "a"}])"), "config: tenants[0] needs api_key_env or api_key");
  refused_with(with("tenants", R"([{"name": "a", "api_key": "k"}, {"name": "b", "api_key": "k"}])"),
               "config: tenants[1] has the key of tenant \"a\"");
  refused_with(with("listen", R"({"port": 70000})"), "config: listen.port must be between 0 and 65535, not 70000");
  refused_with(with("listen", R"({"port": "80"})"), "config: listen.port must be a non-negative integer");
  refused_with(with("semantic_cache", R"({"threshold": 1.5})"),
               "config: semantic_cache.threshold must be greater than 0 and at most 1, not 1.5");
  refused_with(with("semantic_cache", R"({"hnsw": {"m": 1}})"), "config: semantic_cache.hnsw.m must be between 2 and 128, not 1");
  refused_with(with("semantic_cache", R"({"hnsw": {"ef_search": 0}})"),
               "config: semantic_cache.hnsw.ef_search must be between 1 and 4096, not 0");
  refused_with(with("semantic_cache", R"({"hnsw": 3})"), "config: semantic_cache.hnsw must be an object");
  refused_with(with("semantic_cache", R"({"threshold": "high"})"),
               "config: semantic_cache.threshold must be a number or {\"policy\", \"value\", \"error_bound\", \"min_feedback\"}");
  refused_with(with("exact_cache", R"({"eviction": 3})"),
               "config: exact_cache.eviction must be a policy's name or {\"policy\", \"ttl_seconds\"}");
  refused_with(with("exact_cache", R"({"enabled": "yes"})"), "config: exact_cache.enabled must be true or false");
  refused_with(with("embedder", R"({"kind": "word2vec"})"),
               "config: embedder.kind must be one of \"hashing\", \"openai\" (not \"word2vec\")");
  refused_with(with("embedder", R"({"kind": "openai", "model": "e", "dimension": 8})"),
               "config: embedder.base_url must be an http:// or https:// URL with a host");
  refused_with(with("limits", R"({"max_concurrent_requests": 0})"),
               "config: limits.max_concurrent_requests must be between 1 and 1000000, not 0");
  refused_with(with("prices", R"({"gpt-4o-mini": {"input": -1, "output": 1}})"),
               "config: prices.gpt-4o-mini.input must be between 0 and 1000000, not -1");
  refused_with(with("prices", R"({"gpt-4o-mini": {"input": 1}})"),
               "config: prices.gpt-4o-mini.output must be given (USD per million tokens)");
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
  BOOST_TEST(config.exact_cache.eviction.policy == "lfu");
  BOOST_TEST(config.exact_cache.eviction.ttl_seconds == 60.0);
  BOOST_TEST(config.semantic_cache.max_entries == 500u);
  BOOST_TEST(config.semantic_cache.threshold.policy == "adaptive");
  BOOST_TEST(config.semantic_cache.threshold.error_bound == 0.02);
  BOOST_TEST(!config.semantic_cache.threshold.value_given);
  BOOST_TEST(config.semantic_cache.eviction.policy == "cost_aware");
  BOOST_TEST(config.semantic_cache.eviction.ttl_seconds == 3600.0);
  BOOST_TEST(config.semantic_cache.embedder.dimension == 256u);
  BOOST_TEST(config.semantic_cache.embedder.model == "my-embedder");
  // Today's numeric threshold still reads as the static policy's value.
  const auto numeric = gateway_config::from_json(boost::json::parse(with("semantic_cache", R"({"threshold": 0.8})")));
  BOOST_TEST(numeric.semantic_cache.threshold.policy == "static");
  BOOST_TEST(numeric.semantic_cache.threshold.value == 0.8);
}

BOOST_AUTO_TEST_CASE(composed_mistakes_are_refused_by_name) {
  refused_with(composed_with("backends", R"([{"name": "x", "kind": "bedrock"}])"),
               "config: backends[0].kind must be one of \"openai\", \"anthropic\", \"ollama\", \"llama.cpp\", \"demo\" (not \"bedrock\")");
  refused_with(composed_with("models", R"([{"name": "coder"}])"),
               "config: models[0].backend must name a backend (or a list of them) for \"coder\"");
  refused_with(composed_with("models", R"([{"name": "coder", "backend": ["cloud", "nowhere"]}])"),
               "config: models[0].backend names \"nowhere\", which is not in backends");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo"}, {"name": "a", "backend": "demo"}])"),
               "config: models[1].name repeats \"a\"");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo"}])"),
               "config: router has no models to route over: give models \"routing\" metrics or router.registry");
  refused_with(composed_with("models", R"([{"name": "a", "backend": "demo", "routing": {"accuracy": 2}}])"),
               "config: models[0].routing: accuracy must be a fraction 0..1");
  refused_with(composed_with("router", R"({"aliases": ["coder"]})"),
               "config: router.aliases[1] is \"coder\", a model of its own; an alias must name no model");
  BOOST_TEST(refusal(composed_with("router", R"({"preferences": "speed=1"})")).starts_with(
      "config: router.preferences cannot be read: "));
  refused_with(composed_with("router", R"({"mode": "predictor"})"),
               "config: router.outcomes is needed with mode \"predictor\": the outcomes it learns from");
  refused_with(composed_with("router", R"({"mode": "predictor", "outcomes": "o.csv", "registry": "r.json"})"),
               "config: router.registry is for mode \"registry\"; a predictor learns from router.outcomes");
  refused_with(composed_with("router", R"({"outcomes": "o.csv"})"), "config: router.outcomes is for mode \"predictor\"");
  BOOST_TEST(refusal(composed_with("router", R"({"mode": "predictor", "outcomes": "o.csv", "target": "most"})"))
                 .starts_with("config: router.target cannot be read: routing target 'most': expected match-best"));
  refused_with(composed_with("semantic_cache", R"({"eviction": {"policy": "fifo"}})"),
               "config: semantic_cache.eviction.policy must be one of \"lru\", \"lfu\", \"cost_aware\" (not \"fifo\")");
  refused_with(composed_with("semantic_cache", R"({"ttl_seconds": -1})"),
               "config: semantic_cache.ttl_seconds must be between 0 and 1000000000, not -1");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "learned"}})"),
               "config: semantic_cache.threshold.policy must be one of \"static\", \"adaptive\", \"error_bound\" "
               "(not \"learned\")");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "error_bound", "bound": 0}})"),
               "config: semantic_cache.threshold.bound must be greater than 0 and less than 1, not 0");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "adaptive", "bound": 0.1}})"),
               "config: semantic_cache.threshold.bound is for the error_bound policy only");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "error_bound", "value": 0.9}})"),
               "config: semantic_cache.threshold.value is not for the error_bound policy, which serves by its bound");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "error_bound", "error_bound": 0.1}})"),
               "config: semantic_cache.threshold.error_bound is for the adaptive policy only");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "adaptive", "error_bound": 1.5}})"),
               "config: semantic_cache.threshold.error_bound must be greater than 0 and less than 1, not 1.5");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"value": 0}})"),
               "config: semantic_cache.threshold.value must be greater than 0 and at most 1, not 0");
  refused_with(composed_with("semantic_cache", R"({"embedder": {"kind": "openai", "model": "e", "dimension": 8}})"),
               "config: semantic_cache.embedder.base_url must be an http:// or https:// URL with a host");
  refused_with(composed_with("semantic_cache", R"({"embedder": {"dimension": 0}})"),
               "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 0");
  refused_with(composed_with("semantic_cache",
                             R"({"embedder": {"kind": "openai", "base_url": "http://e/v1", "model": "e"}})"),
               "config: semantic_cache.embedder.dimension must give the embedding model's vector length");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "adaptive", "min_feedback": 0}})"),
               "config: semantic_cache.threshold.min_feedback must be between 1 and 1000000, not 0");
  refused_with(composed_with("semantic_cache", R"({"threshold": {"policy": "static", "min_feedback": 3}})"),
               "config: semantic_cache.threshold.min_feedback is for the adaptive policy only");
  refused_with(composed_with("semantic_cache", R"({"verifier": "no/such/file.weights"})"),
               "config: semantic_cache.verifier names no weights file at 'no/such/file.weights' (nor is it "
               "\"default\" or \"none\")");
  // A kind registered in C++ is known to from_json when it is told of it.
  const std::vector<std::string_view> kinds = {"openai", "demo", "mykind"};
  BOOST_TEST(gateway_config::from_json(boost::json::parse(with("backends", R"([{"name": "m", "kind": "mykind", "x": 1}])")),
                                       kinds).backends[0].options.at("x").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(unknown_keys_are_refused_with_the_nearest_known_one) {
  refused_with(with("semantic_cache", R"({"treshold": 0.8})"),
               "config: semantic_cache.treshold is not a known key; did you mean threshold?");
  refused_with(with("semantic_cahce", "{}"), "config: semantic_cahce is not a known key; did you mean semantic_cache?");
  refused_with(with("limits", R"({"max_body_size": 10})"),
               "config: limits.max_body_size is not a known key; did you mean max_body_bytes?");
  refused_with(with("listen", R"({"Port": 80})"), "config: listen.Port is not a known key; did you mean port?");
  // Nothing near: the known keys are listed instead.
  refused_with(with("listen", R"({"host": "0.0.0.0"})"),
               "config: listen.host is not a known key (known: address, port, threads)");
  refused_with(with("backends", R"([{"name": "a", "base_url": "http://x/v1", "timeout_ms": 5000}])"),
               "config: backends[0].timeout_ms is not a known key of an openai backend "
               "(known: name, kind, base_url, api_key_env, api_key, model, retries, replicas, balance)");
  refused_with(with("backends", R"([{"name": "a", "kind": "demo", "base_url": "http://x/v1"}])"),
               "config: backends[0].base_url is not a known key of a demo backend (known: name, kind)");
  refused_with(with("backends", R"([{"name": "a", "kind": "anthropic", "verison": "2023-06-01"}])"),
               "config: backends[0].verison is not a known key; did you mean version?");
  refused_with(with("models", R"([{"name": "m", "backend": "primary", "upstream": "m-1"}])"),
               "config: models[0].upstream is not a known key (known: name, backend, mode, upstream_model, prices, routing)");
  refused_with(with("models", R"([{"name": "m", "backend": "primary", "routing": {"acuracy": 0.5}}])"),
               "config: models[0].routing.acuracy is not a known key; did you mean accuracy?");
  refused_with(with("models", R"([{"name": "m", "backend": "primary", "prices": {"input": 1, "ouput": 2}}])"),
               "config: models[0].prices.ouput is not a known key; did you mean output?");
  refused_with(with("tenants", R"([{"name": "a", "apikey": "k"}])"),
               "config: tenants[0].apikey is not a known key; did you mean api_key?");
  refused_with(with("semantic_cache", R"({"threshold": {"policy": "adaptive", "min_feedbacks": 3}})"),
               "config: semantic_cache.threshold.min_feedbacks is not a known key; did you mean min_feedback?");
  refused_with(with("semantic_cache", R"({"hnsw": {"ef_constrution": 40}})"),
               "config: semantic_cache.hnsw.ef_constrution is not a known key; did you mean ef_construction?");
  refused_with(with("semantic_cache", R"({"embedder": {"kind": "hashing", "base_url": "http://e/v1"}})"),
               "config: semantic_cache.embedder.base_url is not a known key of a hashing embedder "
               "(known: kind, model, dimension)");
  refused_with(with("exact_cache", R"({"eviction": {"policy": "lru", "ttl": 5}})"),
               "config: exact_cache.eviction.ttl is not a known key (known: policy, ttl_seconds)");
  refused_with(with("router", R"({"alias": ["smart"]})"), "config: router.alias is not a known key; did you mean aliases?");
  refused_with(with("snapshot", R"({"dir": "x"})"), "config: snapshot.dir is not a known key (known: directory)");
  refused_with(with("log", R"({"request": false})"), "config: log.request is not a known key; did you mean requests?");
  refused_with(with("admin", R"({"key": "k"})"),
               "config: admin.key is not a known key (known: api_key_env, api_key, metrics_token)");
  // The metrics token sits beside the admin key (a string).
  BOOST_TEST(gateway_config::from_json(boost::json::parse(with("admin", R"({"metrics_token": "scrape-me"})"))).admin.metrics_token ==
             "scrape-me");
  refused_with(with("admin", R"({"metrics_token": 1})"), "config: admin.metrics_token must be a string");
}

BOOST_AUTO_TEST_CASE(the_nearest_known_key_is_a_few_edits_away) {
  using llmgate::detail::edit_distance;
  BOOST_TEST(edit_distance("treshold", "threshold") == 1u);   // a letter left out
  BOOST_TEST(edit_distance("thresohld", "threshold") == 1u);  // two neighbours swapped
  BOOST_TEST(edit_distance("PORT", "port") == 0u);            // case aside
  BOOST_TEST(edit_distance("", "port") == 4u);
  BOOST_TEST(edit_distance("host", "address") == 6u);
}

// The bounds a hostile client meets (issue 35): read as written, each
// refused out of its range by its path; the metrics token may not be a
// tenant's key (it would open every tenant's figures to that tenant).
BOOST_AUTO_TEST_CASE(the_bounds_on_clients_read_as_written_and_refuse_their_mistakes) {
  const auto config = gateway_config::from_json(boost::json::parse(with("limits", R"({
      "max_header_bytes": 32768, "max_json_depth": 80, "max_connections": 500, "max_connections_per_address": 50,
      "idle_timeout_ms": 30000, "header_timeout_ms": 5000, "body_timeout_ms": 20000,
      "max_embedding_inputs": 16, "max_embedding_input_tokens": 4096})")));
  BOOST_TEST(config.limits.max_header_bytes == 32768u);
  BOOST_TEST(config.limits.max_json_depth == 80u);
  BOOST_TEST(config.limits.max_connections == 500u);
  BOOST_TEST(config.limits.max_connections_per_address == 50u);
  BOOST_TEST(config.limits.idle_timeout_ms == 30000u);
  BOOST_TEST(config.limits.header_timeout_ms == 5000u);
  BOOST_TEST(config.limits.body_timeout_ms == 20000u);
  BOOST_TEST(config.limits.max_embedding_inputs == 16u);
  BOOST_TEST(config.limits.max_embedding_input_tokens == 4096u);
  const auto defaults = gateway_config::from_json(boost::json::parse(minimal));
  BOOST_TEST(defaults.limits.max_header_bytes == 16384u);
  BOOST_TEST(defaults.limits.max_json_depth == 64u);
  BOOST_TEST(defaults.semantic_cache.max_bytes == std::uint64_t{256} << 20);
  BOOST_TEST(!defaults.prompts.admin_directory);
  BOOST_TEST(defaults.prompts.source_max_bytes == std::uint64_t{1} << 20);

  const auto sources = gateway_config::from_json(boost::json::parse(
      with("prompt_sources", R"({"admin_directory": "prompts/shared", "max_bytes": 4096})")));
  BOOST_TEST(sources.prompts.admin_directory->string() == "prompts/shared");
  BOOST_TEST(sources.prompts.source_max_bytes == 4096u);
  BOOST_TEST(gateway_config::from_json(boost::json::parse(with("semantic_cache", R"({"max_bytes": 1000})")))
                 .semantic_cache.max_bytes == 1000u);

  refused_with(with("limits", R"({"max_header_bytes": 100})"),
               "config: limits.max_header_bytes must be between 1024 and 1048576, not 100");
  refused_with(with("limits", R"({"max_json_depth": 0})"), "config: limits.max_json_depth must be between 1 and 1024, not 0");
  refused_with(with("limits", R"({"max_connections": 0})"),
               "config: limits.max_connections must be between 1 and 10000000, not 0");
  refused_with(with("limits", R"({"header_timeout_ms": 0})"),
               "config: limits.header_timeout_ms must be between 1 and 86400000, not 0");
  refused_with(with("limits", R"({"max_embedding_inputs": 0})"),
               "config: limits.max_embedding_inputs must be between 1 and 1000000, not 0");
  refused_with(with("semantic_cache", R"({"max_bytes": 0})"),
               "config: semantic_cache.max_bytes must be between 1 and 1099511627776, not 0");
  refused_with(with("prompt_sources", R"({"admin_directory": ""})"),
               "config: prompt_sources.admin_directory must be a non-empty path");
  refused_with(with("prompt_sources", R"({"max_bytes": 0})"),
               "config: prompt_sources.max_bytes must be between 1 and 1073741824, not 0");
  refused_with(with("prompt_sources", R"({"admin_directroy": "x"})"),
               "config: prompt_sources.admin_directroy is not a known key; did you mean admin_directory?");
  refused_with(with("admin", R"({"api_key": "admin", "metrics_token": "sk-acme"})"),
               "config: tenants[0] has the metrics token as its key, which would open /metrics (every tenant's figures) "
               "to it");
}

BOOST_AUTO_TEST_CASE(values_out_of_range_are_refused_by_their_path) {
  refused_with(with("semantic_cache", R"({"embedder": {"dimension": 0}})"),
               "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 0");
  refused_with(with("limits", R"({"max_body_bytes": 0})"),
               "config: limits.max_body_bytes must be between 1 and 1073741824, not 0");
  refused_with(with("backends", R"([{"name": "a", "base_url": "api.openai.com/v1"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL with a host, not \"api.openai.com/v1\"");
  refused_with(with("backends", R"([{"name": "a", "base_url": "http:///v1"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL with a host, not \"http:///v1\"");
  refused_with(with("backends", R"([{"name": "a"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL with a host");
  refused_with(with("backends", R"([{"name": "a", "kind": "ollama", "base_url": "localhost:11434"}])"),
               "config: backends[0].base_url must be an http:// or https:// URL with a host, not \"localhost:11434\"");
  refused_with(with("backends", R"([{"name": "a", "base_url": "http://x/v1", "retries": 11}])"),
               "config: backends[0].retries must be between 0 and 10, not 11");
  refused_with(with("backends", R"([{"name": "a", "kind": "anthropic", "max_tokens": 0}])"),
               "config: backends[0].max_tokens must be between 1 and 1000000, not 0");
  refused_with(with("listen", R"({"address": "localhost"})"),
               "config: listen.address must be an IPv4 or IPv6 address, not \"localhost\"");
  refused_with(with("listen", R"({"threads": 0})"), "config: listen.threads must be between 1 and 1024, not 0");
  refused_with(with("limits", R"({"request_timeout_ms": 0})"),
               "config: limits.request_timeout_ms must be between 1 and 86400000, not 0");
  refused_with(with("limits", R"({"max_queued_requests": 1000001})"),
               "config: limits.max_queued_requests must be between 0 and 1000000, not 1000001");
  refused_with(with("exact_cache", R"({"max_entries": 0})"),
               "config: exact_cache.max_entries must be between 1 and 1000000000, not 0");
  refused_with(with("exact_cache", R"({"max_bytes": 0})"),
               "config: exact_cache.max_bytes must be between 1 and 1099511627776, not 0");
  refused_with(with("exact_cache", R"({"eviction": {"ttl_seconds": -5}})"),
               "config: exact_cache.eviction.ttl_seconds must be between 0 and 1000000000, not -5");
  refused_with(with("semantic_cache", R"({"capacity": 0})"),
               "config: semantic_cache.capacity must be between 1 and 1000000000, not 0");
  refused_with(with("semantic_cache", R"({"threshold": 0.05, "max_entries": 0})"),
               "config: semantic_cache.max_entries must be between 1 and 1000000000, not 0");
  refused_with(with("semantic_cache", R"({"embedder": {"kind": "openai", "base_url": "http://e/v1", "model": "e",
                                                        "dimension": 70000}})"),
               "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 70000");
  refused_with(with("embedder", R"({"dimension": 0})"), "config: embedder.dimension must be between 1 and 65536, not 0");
  refused_with(with("models", R"([{"name": "m", "backend": "primary", "mode": "vision"}])"),
               R"(config: models[0].mode must be "chat" or "embedding", not "vision")");
  refused_with(with("models", R"([{"name": "e", "backend": "primary", "mode": "embedding", "routing": {"accuracy": 0.5}}])"),
               R"(config: models[0].routing is for chat models; "e" is an embedding model)");
  BOOST_TEST(refusal(with("models", R"([{"name": "e", "backend": "primary", "mode": "embedding"}])")) == "");
  refused_with(with("tenants", R"([{"name": "a", "api_key": "k"}])").insert(1, R"("admin": {"api_key": "k"}, )"),
               "config: tenants[0] has the admin key; give the admin a key of its own");
  refused_with(with("models", R"([{"name": "m", "backend": ["primary", "primary"]}])"),
               "config: models[0].backend names \"primary\" twice");
  // Both the older and the newer place of one setting: say which to keep.
  refused_with(with("semantic_cache", R"({"capacity": 5, "max_entries": 5})"),
               "config: semantic_cache.capacity is another name for max_entries; give one of them");
  refused_with(with("semantic_cache", R"({"embedder": {"dimension": 8}})").insert(1, R"("embedder": {"dimension": 8}, )"),
               "config: embedder is the older place of semantic_cache.embedder; give one of them");
}

BOOST_AUTO_TEST_CASE(check_refuses_a_config_built_in_cpp_with_the_same_messages) {
  const auto base = gateway_config::from_json(boost::json::parse(minimal));
  const auto checked = [](const gateway_config& config, std::span<const std::string_view> kinds =
                                                            llmgate::builtin_backend_kinds) -> std::string {
    try {
      config.check(kinds);
      return {};
    } catch (const llmgate::config_error& e) {
      return e.what();
    }
  };
  BOOST_TEST(checked(base).empty());
  auto config = base;
  config.semantic_cache.embedder.dimension = 0;
  BOOST_TEST(checked(config) == "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 0");
  BOOST_TEST(checked(config) == refusal(with("semantic_cache", R"({"embedder": {"dimension": 0}})")));
  config = base;
  config.limits.max_body_bytes = 0;
  BOOST_TEST(checked(config) == refusal(with("limits", R"({"max_body_bytes": 0})")));
  config = base;
  config.backends[0].base_url = "api.openai.com/v1";
  BOOST_TEST(checked(config) ==
             "config: backends[0].base_url must be an http:// or https:// URL with a host, not \"api.openai.com/v1\"");
  config = base;
  config.semantic_cache.eviction.policy = "fifo";
  BOOST_TEST(checked(config) ==
             "config: semantic_cache.eviction.policy must be one of \"lru\", \"lfu\", \"cost_aware\" (not \"fifo\")");
  config = base;
  config.semantic_cache.threshold.value = 0;
  // One field per setting: the static threshold is threshold.value, named as the JSON spells it.
  BOOST_TEST(checked(config) == "config: semantic_cache.threshold.value must be greater than 0 and at most 1, not 0");
  BOOST_TEST(checked(config) == refusal(with("semantic_cache", R"({"threshold": {"value": 0}})")));
  // The gateway checks with the kinds its registry knows.
  config = base;
  config.backends[0].kind = "mykind";
  BOOST_TEST(checked(config) ==
             "config: backends[0].kind must be one of \"openai\", \"anthropic\", \"ollama\", \"llama.cpp\", \"demo\" (not \"mykind\")");
  const std::vector<std::string_view> kinds = {"openai", "mykind"};
  BOOST_TEST(checked(config, kinds).empty());
}

BOOST_AUTO_TEST_CASE(messages_end_with_the_mistake) {
  try {
    (void)gateway_config::from_json(boost::json::parse(with("listen", R"({"port": 70000})")));
    BOOST_FAIL("accepted");
  } catch (const llmgate::error& e) {  // a config_error is an llmgate::error, as before
    BOOST_TEST(std::string(e.what()) == "config: listen.port must be between 0 and 65535, not 70000");
    BOOST_TEST((e.code() == llmgate::errc::invalid_request));
  }
}

BOOST_AUTO_TEST_CASE(every_older_spelling_is_still_read) {
  auto text = boost::json::parse(R"({
    "models": ["a", "b"],
    "backends": [{"name": "one", "base_url": "http://one/v1"}, {"name": "two", "kind": "demo"}],
    "fallback_order": ["two", "one"],
    "prices": {"a": {"input": 1.0, "output": 2.0}},
    "router": {"aliases": "smart", "registry": "models.json"},
    "tenants": [{"name": "t", "api_key": "sk-literal"}],
    "embedder": {"kind": "hashing", "dimension": 128, "model": "bow"},
    "exact_cache": {"eviction": "lfu"},
    "semantic_cache": {"capacity": 77, "threshold": 0.85, "eviction": {"policy": "lfu", "ttl_seconds": 30}}
  })");
  const auto config = gateway_config::from_json(text);
  BOOST_TEST((config.models[0].backends == std::vector<std::string>{"two", "one"}));  // every backend, in that order
  BOOST_TEST((config.models[1].backends == std::vector<std::string>{"two", "one"}));
  BOOST_TEST(config.prices->find("a")->output == 2.0);
  BOOST_TEST(config.prices->find("a")->cached_input == 1.0);  // the input price where none is given
  BOOST_TEST((config.router->aliases == std::vector<std::string>{"auto", "smart"}));
  BOOST_TEST(config.tenants[0].api_key == "sk-literal");
  BOOST_TEST(config.semantic_cache.embedder.dimension == 128u);
  BOOST_TEST(config.semantic_cache.embedder.model == "bow");
  BOOST_TEST(config.exact_cache.eviction.policy == "lfu");
  BOOST_TEST(config.semantic_cache.max_entries == 77u);
  BOOST_TEST(config.semantic_cache.threshold.policy == "static");
  BOOST_TEST(config.semantic_cache.threshold.value == 0.85);
  BOOST_TEST(config.semantic_cache.eviction.policy == "lfu");
  BOOST_TEST(config.semantic_cache.eviction.ttl_seconds == 30.0);
}

BOOST_AUTO_TEST_CASE(the_example_configuration_is_valid) {
  const auto path = std::filesystem::path(LLMGATE_EXAMPLES_DIR) / "gateway.json";
  const auto config = gateway_config::load(path);
  BOOST_TEST(config.models.size() == 3u);
  BOOST_TEST(config.backends.size() == 3u);
  BOOST_TEST(config.router.has_value());
  BOOST_TEST(config.semantic_cache.hnsw.ef_search == 12u);
}

// The README's gateway with one model, as written there (its key from
// LLMGATE_KEY, which the README's command line sets): what it says the
// rest defaults to is what it gets.
BOOST_AUTO_TEST_CASE(the_readme_configuration_is_valid_and_defaults_as_it_says) {
  const std::string readme = llmgate::test::read_bytes(std::filesystem::path(LLMGATE_EXAMPLES_DIR) / ".." / "README.md");
  const auto start = readme.find("```json\n");
  BOOST_TEST_REQUIRE(start != std::string::npos);
  const auto end = readme.find("```", start + 8);
  BOOST_TEST_REQUIRE(end != std::string::npos);
  ::setenv("LLMGATE_KEY", "sk-mine", 1);
  const auto config = gateway_config::from_json(boost::json::parse(readme.substr(start + 8, end - start - 8)));
  ::unsetenv("LLMGATE_KEY");
  BOOST_TEST(config.models.size() == 1u);
  BOOST_TEST(config.models[0].name == "llama3.2");
  BOOST_TEST((config.models[0].backends == std::vector<std::string>{"local"}));
  BOOST_TEST(config.tenants[0].api_key == "sk-mine");
  BOOST_TEST(config.listen.address == "127.0.0.1");
  BOOST_TEST(config.listen.port == 8080u);
  BOOST_TEST(config.exact_cache.enabled);
  BOOST_TEST(config.semantic_cache.enabled);
  BOOST_TEST(config.semantic_cache.threshold.value == 0.9);  // "the gateway's default is 0.9"
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

// A tenant's budget and rate limits: read as written, none by default,
// each mistake refused by its path.
BOOST_AUTO_TEST_CASE(a_tenants_budget_and_rate_limits_read_as_written_and_refuse_mistakes_by_name) {
  const auto config = gateway_config::from_json(boost::json::parse(with("tenants", R"([
    {"name": "acme", "api_key": "a", "budget": {"usd": 25.5, "period": "7d"},
     "rate_limits": {"requests_per_minute": 600, "output_tokens_per_minute": 40000}},
    {"name": "dev", "api_key": "d"}])")));
  const auto& acme = config.tenants[0].limits;
  BOOST_TEST(acme.budget_usd == 25.5);
  BOOST_TEST_REQUIRE(acme.budget_period.has_value());
  BOOST_TEST(acme.budget_period->text() == "7d");
  BOOST_TEST(acme.requests_per_minute == 600u);
  BOOST_TEST(acme.input_tokens_per_minute == 0u);
  BOOST_TEST(acme.output_tokens_per_minute == 40000u);
  BOOST_TEST(!config.tenants[1].limits.any());

  const auto tenant_with = [](const std::string& fields) {
    return with("tenants", R"([{"name": "acme", "api_key": "a", )" + fields + "}]");
  };
  refused_with(tenant_with(R"("budget": {"usd": 5, "period": "week"})"),
               "config: tenants[0].budget.period must be \"day\", \"month\" or a duration such as \"12h\", "
               "\"7d\", \"90m\" or \"3600s\" (not \"week\")");
  refused_with(tenant_with(R"("budget": {"period": "day"})"),
               "config: tenants[0].budget.usd must be a number of US dollars above 0");
  refused_with(tenant_with(R"("budget": {"usd": 5, "period": "day", "currency": "EUR"})"),
               "config: tenants[0].budget.currency is not a known key (known: usd, period)");
  refused_with(tenant_with(R"("rate_limits": {"output_token_per_minute": 5})"),
               "config: tenants[0].rate_limits.output_token_per_minute is not a known key; did you mean "
               "output_tokens_per_minute?");
  refused_with(tenant_with(R"("rate_limits": {"requests_per_minute": -1})"),
               "config: tenants[0].rate_limits.requests_per_minute must be a non-negative integer");
}

// The shared tier's section: read as written, defaults where left out,
// each mistake refused by its path.
BOOST_AUTO_TEST_CASE(the_shared_section_reads_as_written_and_refuses_mistakes_by_name) {
  const auto config = gateway_config::from_json(boost::json::parse(with("shared", R"({
    "redis": {"endpoints": ["10.0.0.1:7000", "[::1]:7001"], "user": "llmgate", "password": "secret",
              "tls": {"verify": false, "server_name": "redis.internal"}, "connections": 4,
              "command_timeout_ms": 500},
    "replica": "gw-2", "exact": false, "read_timeout_ms": 5, "max_queued_writes": 100, "snapshot_interval_s": 0})")));
  BOOST_TEST_REQUIRE(config.shared.has_value());
  const auto& shared = *config.shared;
  BOOST_TEST(shared.redis.endpoints == (std::vector<std::string>{"10.0.0.1:7000", "[::1]:7001"}),
             boost::test_tools::per_element());
  BOOST_TEST(shared.redis.user == "llmgate");
  BOOST_TEST(shared.redis.password == "secret");
  BOOST_TEST(shared.redis.tls);
  BOOST_TEST(!shared.redis.tls_verify);
  BOOST_TEST(shared.redis.tls_server_name == "redis.internal");
  BOOST_TEST(shared.redis.connections == 4u);
  BOOST_TEST(shared.redis.command_timeout_ms == 500u);
  BOOST_TEST(shared.redis.connect_timeout_ms == 1000u);
  BOOST_TEST(shared.prefix == "llmgate");
  BOOST_TEST(shared.replica == "gw-2");
  BOOST_TEST(!shared.exact);
  BOOST_TEST(shared.semantic);
  BOOST_TEST(shared.read_timeout_ms == 5u);
  BOOST_TEST(shared.max_queued_writes == 100u);
  BOOST_TEST(shared.snapshot_interval_s == 0u);
  BOOST_TEST(!gateway_config::from_json(boost::json::parse(minimal)).shared.has_value());

  const auto endpoint = llmgate::detail::host_and_port("[::1]:7001");
  BOOST_TEST_REQUIRE(endpoint.has_value());
  BOOST_TEST(endpoint->first == "::1");
  BOOST_TEST(endpoint->second == 7001);
  for (const char* bad : {"redis", ":6379", "host:", "host:0", "host:65536", "host:12x", "[::1:6379"})
    BOOST_TEST(!llmgate::detail::host_and_port(bad).has_value(), bad);

  const auto refused_with = [](const std::string& shared_section, const std::string& message) {
    const std::string text = with("shared", shared_section);
    BOOST_TEST_CONTEXT(text) BOOST_TEST(refusal(text) == message);
  };
  refused_with(R"({"redis": {"endpoints": ["localhost"]}})",
               "config: shared.redis.endpoints[0] must be \"host:port\" (not \"localhost\")");
  refused_with(R"({"redis": {"endpoints": []}})", "config: shared.redis.endpoints must list at least one \"host:port\"");
  refused_with(R"({"redis": {"database": 16}})", "config: shared.redis.database must be between 0 and 15, not 16");
  refused_with(R"({"redis": {"tls": {"ca_file": "/no/such/ca.pem"}}})",
               "config: shared.redis.tls.ca_file names no file at '/no/such/ca.pem'");
  refused_with(R"({"redis": {"password_env": "LLMGATE_TEST_UNSET_VARIABLE"}})",
               "config: shared.redis.password_env names LLMGATE_TEST_UNSET_VARIABLE, which is not set");
  refused_with(R"({"prefix": "a{b}"})",
               "config: shared.prefix must be non-empty and hold no '{' or '}' (they mark Redis Cluster hash tags)");
  refused_with(R"({"exact": false, "semantic": false})",
               "config: shared shares nothing: exact and semantic are both false and no tenant has spending limits");
  refused_with(R"({"read_timeout_ms": 0})", "config: shared.read_timeout_ms must be between 1 and 10000, not 0");
  refused_with(R"({"redsi": {}})", "config: shared.redsi is not a known key; did you mean redis?");
  // Only the tenants' spending is shared: that is something.
  auto spending_only = boost::json::parse(with("shared", R"({"exact": false, "semantic": false})")).as_object();
  spending_only["tenants"] = boost::json::parse(R"([{"name": "acme", "api_key": "a", "budget": {"usd": 1, "period": "day"}}])");
  BOOST_TEST(refusal(boost::json::serialize(spending_only)) == "");
  auto no_exact = boost::json::parse(with("shared", "{}")).as_object();
  no_exact["exact_cache"] = boost::json::parse(R"({"enabled": false})");
  BOOST_TEST(refusal(boost::json::serialize(no_exact)) ==
             "config: shared.exact needs exact_cache.enabled (the shared tier is its second level)");
}

BOOST_AUTO_TEST_SUITE_END()
