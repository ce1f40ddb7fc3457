// gateway_config: what the gateway serves and how, read from a JSON file
// and validated before anything starts. Every key at every level is one
// the gateway reads, or it is refused with the nearest known key
// ("config: semantic_cache.treshold is not a known key; did you mean
// threshold?"); every value is checked against its range by check(), the
// same code whether --check-config or the gateway's constructor runs it.
// Each message names its field once, by its JSON path:
// "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 0".
//
// docs/configuration.md is the file's reference: every section with its
// defaults, the valid values, and what each section does. The reading kit
// is config/config_reader.hpp; backends are read and checked by
// backend/backend_config.hpp, which the evaluation kit shares. Older
// spellings are still read (docs/configuration.md lists them).
#pragma once

#include <algorithm>     // std::find, std::find_if, std::any_of
#include <array>         // std::array
#include <cstdint>       // std::uint64_t
#include <cstdlib>       // std::getenv
#include <filesystem>    // std::filesystem::path, is_directory
#include <fstream>       // std::ifstream
#include <iterator>      // std::istreambuf_iterator
#include <memory>        // std::shared_ptr
#include <optional>      // std::optional
#include <span>          // std::span
#include <stdexcept>     // std::invalid_argument (from preferences::parse, model_registry)
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::move, std::pair
#include <vector>        // std::vector

#include <boost/asio/ip/address.hpp>  // boost::asio::ip::make_address (listen.address is checked)
#include <boost/json/parse.hpp>       // boost::json::parse
#include <boost/json/serialize.hpp>   // boost::json::serialize (a model's card for the registry check)
#include <boost/json/value.hpp>       // boost::json::value
#include <boost/unordered/unordered_flat_map.hpp>  // tenants by key (check)

#include "llmgate/backend/backend_config.hpp"      // backend_config, read_backends, check_backend
#include "llmgate/backend/price_table.hpp"         // price_table, model_price
#include "llmgate/cache/configured_threshold.hpp"  // threshold_kind_named (the policy names)
#include "llmgate/cache/eviction/configured.hpp"   // eviction_kind_named (the policy names)
#include "llmgate/cache/semantic_cache.hpp"        // semantic_cache_options (the hnsw defaults)
#include "llmgate/config/config_error.hpp"         // config_error
#include "llmgate/config/config_reader.hpp"        // config_reader, refuse, within, only_known_keys
#include "llmgate/detail/name_set.hpp"             // name_set (names must not repeat)
#include "llmgate/error.hpp"                       // errc
#include "llmgate/route/model_registry.hpp"        // model_registry (routing cards are checked by it)
#include "llmgate/route/preferences.hpp"           // preferences::parse (router.preferences is checked)
#include "llmgate/route/routing_target.hpp"        // routing_target::parse (router.target is checked)

namespace llmgate::inline v0 {

/// What a model answers: chat completions, or embeddings (/v1/embeddings).
enum class model_mode { chat, embedding };

struct model_config {
  std::string name;                   ///< what clients ask for
  std::vector<std::string> backends;  ///< names from gateway_config::backends, in fallback order
  model_mode mode = model_mode::chat;  ///< "mode": "chat" (the default) or "embedding"
  std::string upstream_model = {};    ///< sent upstream instead of `name`; empty: `name` (or the backend's model)
  boost::json::object routing = {};   ///< model_registry card fields (name left out); empty: none
};

struct router_config {
  std::vector<std::string> aliases = {"auto"};        ///< models that ask the router to choose
  /// "registry": the models' ratings weighed by preferences (route/router.hpp);
  /// "predictor": learned from `outcomes` (route/predictive_router.hpp).
  std::string mode = "registry";
  std::string preferences = "balanced";               ///< preferences::parse form (registry)
  std::optional<std::filesystem::path> registry = {};  ///< a model_registry file instead of the models' routing (registry)
  std::optional<std::filesystem::path> examples = {};  ///< labelled requests for the local analyser, JSON lines (registry)
  std::optional<std::filesystem::path> outcomes = {};  ///< RouterBench CSV or dcrouter JSON (predictor)
  std::string target = "match-best";                  ///< routing_target::parse form (predictor)
};

/// Who leaves a full cache, and how long an answer may be served.
struct eviction_config {
  std::string policy = "lru";  ///< lru | lfu | cost_aware
  double ttl_seconds = 0;      ///< > 0: answers older than this are not served
};

struct threshold_config {
  std::string policy = "static";  ///< static | adaptive
  double value = 0.9;             ///< static: the threshold; adaptive: where it starts (when given)
  bool value_given = false;       ///< adaptive starts at its own default unless a value is given
  double error_bound = 0.05;      ///< adaptive: the share of served hits allowed to be wrong
  std::uint64_t min_feedback = 30;  ///< adaptive: verdicts heard before the learned threshold is used
};

struct embedder_config {
  std::string kind = "hashing";  ///< hashing (built in) | openai (an OpenAI-compatible /embeddings)
  std::string base_url = {};     ///< openai: the server's /v1 base (POST {base_url}/embeddings)
  std::string api_key = {};      ///< openai: from api_key_env
  std::string model = "llmgate-hashing";  ///< the name /v1/embeddings serves; openai: the upstream's model
  std::uint64_t dimension = 384;  ///< floats per vector; openai: the model's, which must be given
};

/// The "shared" section: the Redis (or Redis Cluster) the replicas share.
struct shared_redis_config {
  std::vector<std::string> endpoints = {"127.0.0.1:6379"};  ///< "host:port", seeds of a cluster
  std::string user = {};      ///< an ACL user; "" : the default user
  std::string password = {};  ///< from password_env or password; "" : no AUTH; never logged
  unsigned database = 0;
  bool tls = false;           ///< set by a "tls" object
  std::string tls_ca_file = {}, tls_cert_file = {}, tls_key_file = {}, tls_server_name = {};
  bool tls_verify = true;
  unsigned connect_timeout_ms = 1000;
  unsigned command_timeout_ms = 1000;  ///< the background work's commands (writes, stream reads)
  unsigned connections = 2;            ///< per Redis node
};

struct shared_config {
  shared_redis_config redis = {};
  std::string prefix = "llmgate";  ///< of every key the tier writes
  std::string replica = {};        ///< "" : host name and process id
  bool exact = true;
  bool semantic = true;
  unsigned read_timeout_ms = 20;   ///< the longest a request waits for the exact tier's answer
  std::uint64_t max_queued_writes = 10'000;
  unsigned snapshot_interval_s = 60;
};

struct tenant_config {
  std::string name;
  std::string api_key;  ///< from api_key_env or api_key; never logged
};

struct gateway_config {
  std::string address = "127.0.0.1";
  unsigned short port = 8080;  ///< 0: a free port the system picks
  unsigned threads = 2;

  std::uint64_t max_body_bytes = 1 << 20;
  std::uint64_t max_concurrent_requests = 256;
  std::uint64_t max_queued_requests = 1024;
  std::uint64_t request_timeout_ms = 120'000;
  std::uint64_t max_header_bytes = 16 * 1024;
  std::uint64_t max_json_depth = 64;  ///< deep enough for real tool schemas
  std::uint64_t max_connections = 10'000;
  std::uint64_t max_connections_per_address = 1'000;
  std::uint64_t idle_timeout_ms = 60'000;
  std::uint64_t header_timeout_ms = 10'000;
  std::uint64_t body_timeout_ms = 60'000;
  std::uint64_t max_embedding_inputs = 2'048;  ///< as OpenAI's /v1/embeddings
  std::uint64_t max_embedding_input_tokens = 300'000;

  std::vector<backend_config> backends;  ///< by name; models say which they use
  std::vector<model_config> models;
  std::optional<router_config> router = {};
  std::shared_ptr<const price_table> prices = std::make_shared<price_table>();  ///< by model name
  std::vector<tenant_config> tenants;
  std::string admin_key = {};  ///< "" : the admin views are off
  std::string metrics_token = {};  ///< opens /metrics (as the admin key does) and nothing else; "" : none

  bool exact_cache = true;
  std::uint64_t exact_max_entries = 100'000;
  std::uint64_t exact_max_bytes = std::uint64_t{256} << 20;
  eviction_config exact_eviction = {};
  bool semantic_cache = true;
  std::uint64_t semantic_max_entries = 100'000;
  std::uint64_t semantic_max_bytes = std::uint64_t{256} << 20;  ///< stored requests, answers and vectors
  double semantic_threshold = 0.9;  ///< the static threshold (threshold_config::value, kept in step)
  threshold_config semantic_threshold_policy = {};
  eviction_config semantic_eviction = {};
  hnsw_parameters semantic_hnsw = default_index_factory{}.parameters;
  embedder_config embedder = {};
  std::string semantic_verifier = "default";  ///< "default", "none" or a weights file

  std::optional<std::filesystem::path> snapshot_directory = {};
  std::optional<shared_config> shared = {};  ///< the tier shared with other replicas, when configured
  std::vector<std::filesystem::path> prompt_schemas = {};  ///< PML schema files, read at start
  std::optional<std::filesystem::path> prompt_admin_directory = {};  ///< src= of POSTed schemas; none: no src
  std::uint64_t prompt_source_max_bytes = std::uint64_t{1} << 20;    ///< the largest src= file
  bool log_requests = true;

  /// Reads the JSON form above and check()s it. Throws config_error
  /// naming the field and what is wrong with it. `kinds`: the backend
  /// kinds that exist (those registered in C++ too).
  static gateway_config from_json(const boost::json::value& value,
                                  std::span<const std::string_view> kinds = builtin_backend_kinds);

  /// from_json of a file; a file that cannot be read or is not JSON is
  /// refused naming the file.
  static gateway_config load(const std::filesystem::path& path,
                             std::span<const std::string_view> kinds = builtin_backend_kinds) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error("config: cannot read '" + path.string() + "'", errc::io_failure);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::error_code ec;
    const boost::json::value value = boost::json::parse(text, ec);
    if (ec) throw config_error("config: '" + path.string() + "' is not JSON: " + ec.message());
    return from_json(value, kinds);
  }

  /// Every value against its range (the list atop this file) and the
  /// sections against each other: every model has backends that exist,
  /// names and keys are unique, a router has models to route over. The
  /// one check of a config, whether read from JSON (from_json calls it,
  /// so --check-config runs it) or built in C++ (the gateway calls it
  /// before it starts). Throws config_error naming the field by its JSON
  /// path. `kinds`: the backend kinds that exist.
  void check(std::span<const std::string_view> kinds = builtin_backend_kinds) const;

  /// The model called `name`, or nullptr.
  const model_config* find_model(std::string_view name) const {
    const auto found = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.name == name; });
    return found == models.end() ? nullptr : &*found;
  }
  const backend_config* find_backend(std::string_view name) const {
    const auto found = std::find_if(backends.begin(), backends.end(), [&](const auto& b) { return b.name == name; });
    return found == backends.end() ? nullptr : &*found;
  }
};

namespace detail {

// The ranges of the fields narrower than their JSON reading: the reader
// checks them before narrowing, check() for a config built in C++.
inline constexpr unsigned max_threads = 1024;

inline void check_ttl(std::string_view path, double ttl_seconds) { within(path, ttl_seconds, 0.0, 1e9); }

// "eviction": {"policy", "ttl_seconds"} or "eviction": "lfu", and the
// section's "ttl_seconds" (which wins).
inline eviction_config read_eviction(const boost::json::object& section, std::string_view where) {
  using read = config_reader;
  eviction_config e;
  const std::string path = config_path(where, "eviction");
  const auto* field = section.if_contains("eviction");
  if (field && field->is_string()) {
    e.policy = field->get_string();
  } else if (field && !field->is_null() && !field->is_object()) {
    refuse(path, "must be a policy's name or {\"policy\", \"ttl_seconds\"}");
  } else if (const auto* spelled_out = read::object(section, "eviction", where)) {
    only_known_keys(*spelled_out, path, {"policy", "ttl_seconds"});
    e.policy = read::string(*spelled_out, "policy", path, e.policy);
    e.ttl_seconds = read::number(*spelled_out, "ttl_seconds", path, e.ttl_seconds);
    if (!section.contains("ttl_seconds")) check_ttl(config_path(path, "ttl_seconds"), e.ttl_seconds);
  }
  e.ttl_seconds = read::number(section, "ttl_seconds", where, e.ttl_seconds);
  return e;
}

// The checks of an embedder, at the path it was read from (the older
// top-level "embedder" too) and at semantic_cache.embedder by check().
inline void check_embedder(const embedder_config& e, std::string_view where) {
  if (e.kind != "hashing" && e.kind != "openai")
    refuse(config_path(where, "kind"), "must be one of \"hashing\", \"openai\" (not \"" + e.kind + "\")");
  within<std::uint64_t>(config_path(where, "dimension"), e.dimension, 1, 65536);
  if (e.model.empty()) refuse(config_path(where, "model"), "must name the embedding model");
  if (e.kind == "openai") check_url(config_path(where, "base_url"), e.base_url);
}

// An eviction policy's checks; `where` is the cache section.
inline void check_eviction(const eviction_config& e, std::string_view where) {
  if (!eviction_kind_named(e.policy))
    refuse(config_path(where, "eviction.policy"), "must be one of \"lru\", \"lfu\", \"cost_aware\" (not \"" + e.policy + "\")");
  check_ttl(config_path(where, "ttl_seconds"), e.ttl_seconds);
}

// A model's "prices" or an entry of the top-level table: USD per million
// tokens, input and output required, the cache's prices the input's when
// not given.
inline model_price read_price(const boost::json::value& value, std::string_view where) {
  using read = config_reader;
  const auto& fields = read::object_at(value, where);
  only_known_keys(fields, where, {"input", "output", "cached_input", "cache_write"});
  for (const std::string_view required : {"input", "output"})
    if (!fields.contains(required)) refuse(config_path(where, required), "must be given (USD per million tokens)");
  model_price price;
  price.input = read::number(fields, "input", where, 0);
  price.output = read::number(fields, "output", where, 0);
  price.cached_input = read::number(fields, "cached_input", where, price.input);
  price.cache_write = read::number(fields, "cache_write", where, price.input);
  return price;
}
inline void check_price(const model_price& price, std::string_view where) {
  within(config_path(where, "input"), price.input, 0.0, 1e6);
  within(config_path(where, "output"), price.output, 0.0, 1e6);
  within(config_path(where, "cached_input"), price.cached_input, 0.0, 1e6);
  within(config_path(where, "cache_write"), price.cache_write, 0.0, 1e6);
}

// The fields of a model_registry card (route/model_registry.hpp) a
// model's "routing" may hold; its name is the model's.
inline constexpr std::array<std::string_view, 18> routing_keys = {
    "accuracy", "task_accuracy", "task_samples", "domain_accuracy", "domain_samples", "latency_ms",
    "input_cost_per_million", "output_cost_per_million", "helpfulness", "harmlessness", "honesty",
    "steerability", "creativity", "uptime", "context_length", "task_types", "domains", "generalist"};

// The checks of a model's routing fields: a one-card registry built from
// them (model_registry names the field that is wrong, after its own
// prefixes, which are left out).
inline void check_routing(const model_config& model, const std::string& where) {
  if (model.routing.empty()) return;
  boost::json::object card = model.routing;
  card["name"] = model.name;
  try {
    (void)model_registry::from_json(boost::json::serialize(boost::json::object{{"models", boost::json::array{card}}}),
                                    "routing");
  } catch (const std::invalid_argument& e) {
    const std::string_view text = e.what();
    const auto cause = text.rfind(": ");
    refuse(config_path(where, "routing") + ":", cause == std::string_view::npos ? text : text.substr(cause + 2));
  }
}

}  // namespace detail

inline void gateway_config::check(std::span<const std::string_view> kinds) const {
  using detail::refuse;
  using detail::within;
  using count = std::uint64_t;
  boost::system::error_code bad_address;
  (void)boost::asio::ip::make_address(address, bad_address);
  if (bad_address) refuse("listen.address", "must be an IPv4 or IPv6 address, not \"" + address + "\"");
  within<unsigned>("listen.threads", threads, 1, detail::max_threads);
  within<count>("limits.max_body_bytes", max_body_bytes, 1, count{1} << 30);
  within<count>("limits.max_concurrent_requests", max_concurrent_requests, 1, 1'000'000);
  within<count>("limits.max_queued_requests", max_queued_requests, 0, 1'000'000);
  within<count>("limits.request_timeout_ms", request_timeout_ms, 1, 86'400'000);
  within<count>("limits.max_header_bytes", max_header_bytes, 1024, 1 << 20);
  within<count>("limits.max_json_depth", max_json_depth, 1, 1024);
  within<count>("limits.max_connections", max_connections, 1, 10'000'000);
  within<count>("limits.max_connections_per_address", max_connections_per_address, 1, 10'000'000);
  within<count>("limits.idle_timeout_ms", idle_timeout_ms, 1, 86'400'000);
  within<count>("limits.header_timeout_ms", header_timeout_ms, 1, 86'400'000);
  within<count>("limits.body_timeout_ms", body_timeout_ms, 1, 86'400'000);
  within<count>("limits.max_embedding_inputs", max_embedding_inputs, 1, 1'000'000);
  within<count>("limits.max_embedding_input_tokens", max_embedding_input_tokens, 1, 1'000'000'000);

  if (backends.empty()) refuse("backends", "must list at least one backend");
  detail::name_set backend_names;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string where = "backends[" + std::to_string(i) + "]";
    if (!backends[i].name.empty() && !backend_names.insert(backends[i].name).second)
      refuse(where + ".name", "repeats \"" + backends[i].name + "\"");
    detail::check_backend(backends[i], where, kinds);
  }

  if (models.empty()) refuse("models", "must list the models clients may ask for");
  detail::name_set model_names;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& model = models[i];
    const std::string where = "models[" + std::to_string(i) + "]";
    if (model.name.empty()) refuse(where + ".name", "must be a non-empty string");
    if (!model_names.insert(model.name).second) refuse(where + ".name", "repeats \"" + model.name + "\"");
    if (model.backends.empty()) refuse(where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
    detail::name_set named;
    for (const auto& name : model.backends) {
      if (!backend_names.contains(name)) refuse(where + ".backend", "names \"" + name + "\", which is not in backends");
      if (!named.insert(name).second) refuse(where + ".backend", "names \"" + name + "\" twice");
    }
    if (model.name == embedder.model)
      refuse(where + ".name", "is the embedding model's name (semantic_cache.embedder.model)");
    if (model.mode == model_mode::embedding && !model.routing.empty())
      refuse(where + ".routing", "is for chat models; \"" + model.name + "\" is an embedding model");
    detail::check_routing(model, where);
    if (const auto* price = prices ? prices->find(model.name) : nullptr) detail::check_price(*price, where + ".prices");
  }

  if (router) {
    for (std::size_t i = 0; i < router->aliases.size(); ++i) {
      const std::string where = "router.aliases[" + std::to_string(i) + "]";
      if (router->aliases[i].empty()) refuse(where, "must be a non-empty string");
      if (model_names.contains(router->aliases[i]))
        refuse(where, "is \"" + router->aliases[i] + "\", a model of its own; an alias must name no model");
    }
    if (router->mode == "predictor") {
      if (!router->outcomes) refuse("router.outcomes", "is needed with mode \"predictor\": the outcomes it learns from");
      if (router->registry || router->examples)
        refuse(router->registry ? "router.registry" : "router.examples",
               "is for mode \"registry\"; a predictor learns from router.outcomes");
      try {
        (void)routing_target::parse(router->target);
      } catch (const std::invalid_argument& e) {
        refuse("router.target", std::string("cannot be read: ") + e.what());
      }
    } else if (router->mode == "registry") {
      if (router->outcomes) refuse("router.outcomes", "is for mode \"predictor\"");
      const bool any_routing = std::any_of(models.begin(), models.end(), [](const auto& m) { return !m.routing.empty(); });
      if (!router->registry && !any_routing)
        refuse("router", "has no models to route over: give models \"routing\" metrics or router.registry");
      try {
        (void)preferences::parse(router->preferences);
      } catch (const std::invalid_argument& e) {
        refuse("router.preferences", std::string("cannot be read: ") + e.what());
      }
    } else {
      refuse("router.mode", "is \"" + router->mode + "\"; expected \"registry\" or \"predictor\"");
    }
  }

  if (tenants.empty()) refuse("tenants", "must list at least one tenant with its key");
  detail::name_set tenant_names;
  boost::unordered_flat_map<std::string_view, std::string_view, detail::string_hash> tenant_of_key;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    const auto& tenant = tenants[i];
    if (tenant.name.empty()) refuse(where + ".name", "must be a non-empty string");
    if (tenant.api_key.empty()) refuse(where, "needs api_key_env or api_key");
    if (!admin_key.empty() && tenant.api_key == admin_key) refuse(where, "has the admin key; give the admin a key of its own");
    if (!metrics_token.empty() && tenant.api_key == metrics_token)
      refuse(where, "has the metrics token as its key, which would open /metrics (every tenant's figures) to it");
    if (!tenant_names.insert(tenant.name).second) refuse(where + ".name", "repeats \"" + tenant.name + "\"");
    if (const auto [at, added] = tenant_of_key.emplace(tenant.api_key, tenant.name); !added)
      refuse(where, "has the key of tenant \"" + std::string(at->second) + "\"");
  }

  within<count>("exact_cache.max_entries", exact_max_entries, 1, 1'000'000'000);
  within<count>("exact_cache.max_bytes", exact_max_bytes, 1, count{1} << 40);
  detail::check_eviction(exact_eviction, "exact_cache");
  within<count>("semantic_cache.max_entries", semantic_max_entries, 1, 1'000'000'000);
  within<count>("semantic_cache.max_bytes", semantic_max_bytes, 1, count{1} << 40);
  const auto& threshold = semantic_threshold_policy;
  if (!threshold_kind_named(threshold.policy))
    refuse("semantic_cache.threshold.policy", "must be one of \"static\", \"adaptive\" (not \"" + threshold.policy + "\")");
  detail::fraction("semantic_cache.threshold.value", threshold.value, true);
  if (threshold.policy == "static") detail::fraction("semantic_cache.threshold", semantic_threshold, true);
  detail::fraction("semantic_cache.threshold.error_bound", threshold.error_bound, false);
  within<count>("semantic_cache.threshold.min_feedback", threshold.min_feedback, 1, 1'000'000);
  detail::check_eviction(semantic_eviction, "semantic_cache");
  within<std::size_t>("semantic_cache.hnsw.m", semantic_hnsw.m, 2, 128);
  within<std::size_t>("semantic_cache.hnsw.ef_construction", semantic_hnsw.ef_construction, 1, 4096);
  within<std::size_t>("semantic_cache.hnsw.ef_search", semantic_hnsw.ef_search, 1, 4096);
  detail::check_embedder(embedder, "semantic_cache.embedder");
  if (semantic_verifier.empty())
    refuse("semantic_cache.verifier", "must be \"default\", \"none\" or a weights file");
  else if (semantic_verifier != "default" && semantic_verifier != "none" &&
           !std::filesystem::is_regular_file(semantic_verifier))
    refuse("semantic_cache.verifier",
           "names no weights file at '" + semantic_verifier + "' (nor is it \"default\" or \"none\")");

  for (std::size_t i = 0; i < prompt_schemas.size(); ++i)
    if (prompt_schemas[i].empty()) refuse("prompt_schemas[" + std::to_string(i) + "]", "must be a non-empty path");

  if (shared) {
    const auto& redis = shared->redis;
    if (redis.endpoints.empty()) refuse("shared.redis.endpoints", "must list at least one \"host:port\"");
    for (std::size_t i = 0; i < redis.endpoints.size(); ++i)
      if (!detail::host_and_port(redis.endpoints[i]))
        refuse("shared.redis.endpoints[" + std::to_string(i) + "]",
               "must be \"host:port\" (not \"" + redis.endpoints[i] + "\")");
    within<std::uint64_t>("shared.redis.database", redis.database, 0, 15);
    within<std::uint64_t>("shared.redis.connect_timeout_ms", redis.connect_timeout_ms, 1, 600'000);
    within<std::uint64_t>("shared.redis.command_timeout_ms", redis.command_timeout_ms, 1, 600'000);
    within<std::uint64_t>("shared.redis.connections", redis.connections, 1, 64);
    if (!redis.tls && (!redis.tls_ca_file.empty() || !redis.tls_cert_file.empty() || !redis.tls_key_file.empty()))
      refuse("shared.redis.tls", "must be given for its files to be used");
    for (const auto& [field, file] : {std::pair{"ca_file", &redis.tls_ca_file}, {"cert_file", &redis.tls_cert_file},
                                      {"key_file", &redis.tls_key_file}})
      if (!file->empty() && !std::filesystem::is_regular_file(*file))
        refuse(std::string("shared.redis.tls.") + field, "names no file at '" + *file + "'");
    if (redis.tls_cert_file.empty() != redis.tls_key_file.empty())
      refuse("shared.redis.tls", "needs both cert_file and key_file, or neither");
    if (shared->prefix.empty() || shared->prefix.find_first_of("{}") != std::string::npos)
      refuse("shared.prefix", "must be non-empty and hold no '{' or '}' (they mark Redis Cluster hash tags)");
    within<std::uint64_t>("shared.read_timeout_ms", shared->read_timeout_ms, 1, 10'000);
    within<std::uint64_t>("shared.max_queued_writes", shared->max_queued_writes, 1, 10'000'000);
    within<std::uint64_t>("shared.snapshot_interval_s", shared->snapshot_interval_s, 0, 86'400);
    if (!shared->exact && !shared->semantic) refuse("shared", "shares nothing: exact and semantic are both false");
    if (shared->exact && !exact_cache) refuse("shared.exact", "needs exact_cache.enabled (the shared tier is its second level)");
    if (shared->semantic && !semantic_cache) refuse("shared.semantic", "needs semantic_cache.enabled");
  }

  within<count>("prompt_sources.max_bytes", prompt_source_max_bytes, 1, count{1} << 30);
  if (prompt_admin_directory && prompt_admin_directory->empty())
    refuse("prompt_sources.admin_directory", "must be a non-empty path");
  if (snapshot_directory) {
    if (snapshot_directory->empty()) refuse("snapshot.directory", "must be a non-empty path");
    std::error_code ec;
    if (std::filesystem::exists(*snapshot_directory, ec) && !std::filesystem::is_directory(*snapshot_directory, ec))
      refuse("snapshot.directory", "names \"" + snapshot_directory->string() + "\", which is not a directory");
  }
}

inline gateway_config gateway_config::from_json(const boost::json::value& value,
                                                std::span<const std::string_view> kinds) {
  using read = detail::config_reader;
  using detail::only_known_keys;
  using detail::refuse;
  gateway_config config;
  const auto& root = read::object_at(value, "the file");
  only_known_keys(root, "", {"listen", "limits", "backends", "models", "router", "tenants", "admin",
                             "exact_cache", "semantic_cache", "snapshot", "log", "fallback_order", "prices", "embedder",
                             "prompt_schemas", "prompt_sources", "shared"});

  if (const auto* listen = read::object(root, "listen", "")) {
    only_known_keys(*listen, "listen", {"address", "port", "threads"});
    config.address = read::string(*listen, "address", "listen", config.address);
    config.port = read::narrow_count<unsigned short>(*listen, "port", "listen", config.port, 0, 65535);
    config.threads = read::narrow_count<unsigned>(*listen, "threads", "listen", config.threads, 1, detail::max_threads);
  }
  if (const auto* limits = read::object(root, "limits", "")) {
    only_known_keys(*limits, "limits",
                    {"max_body_bytes", "max_concurrent_requests", "max_queued_requests", "request_timeout_ms",
                     "max_header_bytes", "max_json_depth", "max_connections", "max_connections_per_address",
                     "idle_timeout_ms", "header_timeout_ms", "body_timeout_ms", "max_embedding_inputs",
                     "max_embedding_input_tokens"});
    config.max_body_bytes = read::count(*limits, "max_body_bytes", "limits", config.max_body_bytes);
    config.max_concurrent_requests =
        read::count(*limits, "max_concurrent_requests", "limits", config.max_concurrent_requests);
    config.max_queued_requests = read::count(*limits, "max_queued_requests", "limits", config.max_queued_requests);
    config.request_timeout_ms = read::count(*limits, "request_timeout_ms", "limits", config.request_timeout_ms);
    const std::pair<std::string_view, std::uint64_t gateway_config::*> counts[] = {
        {"max_header_bytes", &gateway_config::max_header_bytes},
        {"max_json_depth", &gateway_config::max_json_depth},
        {"max_connections", &gateway_config::max_connections},
        {"max_connections_per_address", &gateway_config::max_connections_per_address},
        {"idle_timeout_ms", &gateway_config::idle_timeout_ms},
        {"header_timeout_ms", &gateway_config::header_timeout_ms},
        {"body_timeout_ms", &gateway_config::body_timeout_ms},
        {"max_embedding_inputs", &gateway_config::max_embedding_inputs},
        {"max_embedding_input_tokens", &gateway_config::max_embedding_input_tokens}};
    for (const auto& [key, field] : counts) config.*field = read::count(*limits, key, "limits", config.*field);
  }

  const auto* models = read::array(root, "models", "");
  if (!models || models->empty()) refuse("models", "must list the models clients may ask for");

  // backends: before the models are read, which name them.
  const auto* backends = read::array(root, "backends", "");
  if (!backends || backends->empty()) refuse("backends", "must list at least one backend");
  config.backends = detail::read_backends(*backends, "backends", kinds);

  // The older form's fallback list, for models given as plain names.
  std::vector<std::string> every_backend;
  for (const auto& b : config.backends) every_backend.push_back(b.name);
  if (const auto* order = read::array(root, "fallback_order", "")) {
    const detail::name_set backend_names(every_backend.begin(), every_backend.end());
    every_backend.clear();
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string where = "fallback_order[" + std::to_string(i) + "]";
      if (!(*order)[i].is_string()) refuse(where, "must be a backend's name");
      const std::string name((*order)[i].get_string());
      if (!backend_names.contains(name)) refuse(where, "names \"" + name + "\", which is not in backends");
      every_backend.push_back(name);
    }
    if (every_backend.empty()) refuse("fallback_order", "must name at least one backend");
  }

  auto prices = std::make_shared<price_table>();
  if (const auto* table = read::object(root, "prices", ""))
    for (const auto& [model, price] : *table) {
      const std::string where = detail::config_path("prices", model);
      const auto one = detail::read_price(price, where);
      detail::check_price(one, where);
      prices->set(std::string(model), one);
    }

  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string where = "models[" + std::to_string(i) + "]";
    model_config model;
    if (const auto* name = (*models)[i].if_string()) {
      model.name = std::string(*name);
      model.backends = every_backend;
    } else if (const auto* entry = (*models)[i].if_object()) {
      only_known_keys(*entry, where, {"name", "backend", "mode", "upstream_model", "prices", "routing"});
      model.name = read::string(*entry, "name", where);
      if (model.name.empty()) refuse(where + ".name", "must be a non-empty string");
      model.backends = read::strings(*entry, "backend", where);
      if (model.backends.empty())
        refuse(where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
      model.upstream_model = read::string(*entry, "upstream_model", where);
      if (const std::string mode = read::string(*entry, "mode", where); mode == "embedding")
        model.mode = model_mode::embedding;
      else if (!mode.empty() && mode != "chat")
        refuse(where + ".mode", "must be \"chat\" or \"embedding\", not \"" + mode + "\"");
      if (const auto* price = entry->if_contains("prices"); price && !price->is_null()) {
        const auto one = detail::read_price(*price, where + ".prices");
        detail::check_price(one, where + ".prices");
        prices->set(model.name, one);
      }
      if (const auto* routing = read::object(*entry, "routing", where)) {
        only_known_keys(*routing, where + ".routing", detail::routing_keys);
        model.routing = *routing;
      }
      if (const auto* price = prices->find(model.name); price && !model.routing.empty()) {
        if (!model.routing.contains("input_cost_per_million")) model.routing["input_cost_per_million"] = price->input;
        if (!model.routing.contains("output_cost_per_million")) model.routing["output_cost_per_million"] = price->output;
      }
    } else {
      refuse(where, "must be a model's name or an object {\"name\", \"backend\", ...}");
    }
    config.models.push_back(std::move(model));
  }
  // Upstreams report the model they ran: price it as the model asked for.
  for (const auto& model : config.models)
    if (!model.upstream_model.empty() && !prices->find(model.upstream_model))
      if (const auto* price = prices->find(model.name)) prices->set(model.upstream_model, *price);
  config.prices = std::move(prices);

  if (const auto* router = read::object(root, "router", "")) {
    only_known_keys(*router, "router", {"aliases", "mode", "preferences", "registry", "examples", "outcomes", "target"});
    router_config r;
    r.mode = read::string(*router, "mode", "router", r.mode);
    r.target = read::string(*router, "target", "router", r.target);
    if (const auto outcomes = read::string(*router, "outcomes", "router"); !outcomes.empty()) r.outcomes = outcomes;
    if (router->contains("aliases")) r.aliases = read::strings(*router, "aliases", "router");
    if (std::find(r.aliases.begin(), r.aliases.end(), "auto") == r.aliases.end()) r.aliases.insert(r.aliases.begin(), "auto");
    r.preferences = read::string(*router, "preferences", "router", r.preferences);
    if (const auto registry = read::string(*router, "registry", "router"); !registry.empty()) r.registry = registry;
    if (const auto examples = read::string(*router, "examples", "router"); !examples.empty()) r.examples = examples;
    config.router = std::move(r);
  }

  const auto* tenants = read::array(root, "tenants", "");
  if (!tenants || tenants->empty()) refuse("tenants", "must list at least one tenant with its key");
  for (std::size_t i = 0; i < tenants->size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*tenants)[i], where);
    only_known_keys(entry, where, {"name", "api_key_env", "api_key"});
    config.tenants.push_back({read::string(entry, "name", where), read::secret(entry, where, true)});
  }
  if (const auto* admin = read::object(root, "admin", "")) {
    only_known_keys(*admin, "admin", {"api_key_env", "api_key", "metrics_token"});
    config.admin_key = read::secret(*admin, "admin", true);
    config.metrics_token = read::string(*admin, "metrics_token", "admin");
  }

  if (const auto* exact = read::object(root, "exact_cache", "")) {
    only_known_keys(*exact, "exact_cache", {"enabled", "max_entries", "max_bytes", "eviction", "ttl_seconds"});
    config.exact_cache = read::flag(*exact, "enabled", "exact_cache", config.exact_cache);
    config.exact_max_entries = read::count(*exact, "max_entries", "exact_cache", config.exact_max_entries);
    config.exact_max_bytes = read::count(*exact, "max_bytes", "exact_cache", config.exact_max_bytes);
    config.exact_eviction = detail::read_eviction(*exact, "exact_cache");
  }

  // The embedder: semantic_cache.embedder, or the older top-level "embedder".
  const auto read_embedder = [&](const boost::json::object& e, const std::string& where) {
    auto& embedder = config.embedder;
    embedder.kind = read::string(e, "kind", where, embedder.kind);
    if (embedder.kind == "openai")
      only_known_keys(e, where, {"kind", "base_url", "model", "dimension", "api_key_env", "api_key"},
                      " of an openai embedder");
    else
      only_known_keys(e, where, {"kind", "model", "dimension"}, " of a hashing embedder");
    embedder.dimension = read::count(e, "dimension", where, embedder.dimension);
    embedder.model = read::string(e, "model", where, embedder.model);
    if (embedder.kind == "openai") {
      embedder.base_url = read::string(e, "base_url", where);
      embedder.api_key = read::secret(e, where, false);
      if (!e.contains("model")) refuse(where + ".model", "must name the upstream's embedding model");
      if (!e.contains("dimension")) refuse(where + ".dimension", "must give the embedding model's vector length");
    }
    detail::check_embedder(embedder, where);
  };
  const auto* semantic = read::object(root, "semantic_cache", "");
  if (const auto* embedder = read::object(root, "embedder", "")) {
    if (semantic && semantic->contains("embedder"))
      refuse("embedder", "is the older place of semantic_cache.embedder; give one of them");
    read_embedder(*embedder, "embedder");
  }

  if (semantic) {
    const std::string where = "semantic_cache";
    only_known_keys(*semantic, where, {"enabled", "max_entries", "max_bytes", "capacity", "threshold", "eviction",
                                       "ttl_seconds", "embedder", "hnsw", "verifier"});
    config.semantic_cache = read::flag(*semantic, "enabled", where, config.semantic_cache);
    if (semantic->contains("max_entries") && semantic->contains("capacity"))
      refuse("semantic_cache.capacity", "is another name for max_entries; give one of them");
    config.semantic_max_entries = read::count(*semantic, "max_entries", where, config.semantic_max_entries);
    config.semantic_max_entries = read::count(*semantic, "capacity", where, config.semantic_max_entries);
    config.semantic_max_bytes = read::count(*semantic, "max_bytes", where, config.semantic_max_bytes);
    if (semantic->contains("capacity"))
      detail::within<std::uint64_t>("semantic_cache.capacity", config.semantic_max_entries, 1, 1'000'000'000);
    auto& threshold = config.semantic_threshold_policy;
    const auto* field = semantic->if_contains("threshold");
    if (field && !field->is_null() && !field->is_number() && !field->is_object())
      refuse("semantic_cache.threshold", "must be a number or {\"policy\", \"value\", \"error_bound\", \"min_feedback\"}");
    if (field && field->is_number()) {
      threshold.value = field->to_number<double>();
      threshold.value_given = true;
      detail::fraction("semantic_cache.threshold", threshold.value, true);
    } else if (const auto* spelled = read::object(*semantic, "threshold", where)) {
      const std::string path = where + ".threshold";
      only_known_keys(*spelled, path, {"policy", "value", "error_bound", "min_feedback"});
      threshold.policy = read::string(*spelled, "policy", path, threshold.policy);
      if (spelled->contains("value")) {
        threshold.value = read::number(*spelled, "value", path, threshold.value);
        threshold.value_given = true;
        detail::fraction(path + ".value", threshold.value, true);
      }
      threshold.error_bound = read::number(*spelled, "error_bound", path, threshold.error_bound);
      threshold.min_feedback = read::count(*spelled, "min_feedback", path, threshold.min_feedback);
      for (const std::string_view adaptive_only : {"error_bound", "min_feedback"})
        if (threshold.policy == "static" && spelled->contains(adaptive_only))
          refuse(detail::config_path(path, adaptive_only), "is for the adaptive policy only");
    }
    config.semantic_threshold = threshold.value;
    config.semantic_eviction = detail::read_eviction(*semantic, where);
    if (const auto* hnsw = read::object(*semantic, "hnsw", where)) {
      only_known_keys(*hnsw, where + ".hnsw", {"m", "ef_construction", "ef_search"});
      auto& parameters = config.semantic_hnsw;
      parameters.m = read::count(*hnsw, "m", where + ".hnsw", parameters.m);
      parameters.ef_construction = read::count(*hnsw, "ef_construction", where + ".hnsw", parameters.ef_construction);
      parameters.ef_search = read::count(*hnsw, "ef_search", where + ".hnsw", parameters.ef_search);
    }
    if (const auto* embedder = read::object(*semantic, "embedder", where)) read_embedder(*embedder, where + ".embedder");
    config.semantic_verifier = read::string(*semantic, "verifier", where, config.semantic_verifier);
  }
  if (const auto* snapshot = read::object(root, "snapshot", "")) {
    only_known_keys(*snapshot, "snapshot", {"directory"});
    const std::string directory = read::string(*snapshot, "directory", "snapshot");
    if (directory.empty()) refuse("snapshot.directory", "must be a non-empty path");
    config.snapshot_directory = directory;
  }
  if (const auto* shared = read::object(root, "shared", "")) {
    only_known_keys(*shared, "shared", {"redis", "prefix", "replica", "exact", "semantic", "read_timeout_ms",
                                        "max_queued_writes", "snapshot_interval_s"});
    shared_config s;
    if (const auto* redis = read::object(*shared, "redis", "shared")) {
      const std::string where = "shared.redis";
      only_known_keys(*redis, where, {"endpoints", "user", "password", "password_env", "database", "tls",
                                      "connect_timeout_ms", "command_timeout_ms", "connections"});
      auto& r = s.redis;
      if (redis->contains("endpoints")) r.endpoints = read::strings(*redis, "endpoints", where);
      r.user = read::string(*redis, "user", where);
      if (const std::string variable = read::string(*redis, "password_env", where); !variable.empty()) {
        const char* value = std::getenv(variable.c_str());
        if (!value || !*value) refuse(where + ".password_env", "names " + variable + ", which is not set");
        r.password = value;
      } else {
        r.password = read::string(*redis, "password", where);
      }
      r.database = read::narrow_count<unsigned>(*redis, "database", where, r.database, 0, 15);
      if (const auto* tls = read::object(*redis, "tls", where)) {
        only_known_keys(*tls, where + ".tls", {"ca_file", "cert_file", "key_file", "server_name", "verify"});
        r.tls = true;
        r.tls_ca_file = read::string(*tls, "ca_file", where + ".tls");
        r.tls_cert_file = read::string(*tls, "cert_file", where + ".tls");
        r.tls_key_file = read::string(*tls, "key_file", where + ".tls");
        r.tls_server_name = read::string(*tls, "server_name", where + ".tls");
        r.tls_verify = read::flag(*tls, "verify", where + ".tls", r.tls_verify);
      }
      r.connect_timeout_ms =
          read::narrow_count<unsigned>(*redis, "connect_timeout_ms", where, r.connect_timeout_ms, 1, 600'000);
      r.command_timeout_ms =
          read::narrow_count<unsigned>(*redis, "command_timeout_ms", where, r.command_timeout_ms, 1, 600'000);
      r.connections = read::narrow_count<unsigned>(*redis, "connections", where, r.connections, 1, 64);
    }
    s.prefix = read::string(*shared, "prefix", "shared", s.prefix);
    s.replica = read::string(*shared, "replica", "shared");
    s.exact = read::flag(*shared, "exact", "shared", s.exact);
    s.semantic = read::flag(*shared, "semantic", "shared", s.semantic);
    s.read_timeout_ms = read::narrow_count<unsigned>(*shared, "read_timeout_ms", "shared", s.read_timeout_ms, 1, 10'000);
    s.max_queued_writes = read::count(*shared, "max_queued_writes", "shared", s.max_queued_writes);
    s.snapshot_interval_s =
        read::narrow_count<unsigned>(*shared, "snapshot_interval_s", "shared", s.snapshot_interval_s, 0, 86'400);
    config.shared = std::move(s);
  }
  if (const auto* schemas = root.if_contains("prompt_schemas"); schemas && !schemas->is_null()) {
    if (!schemas->is_array()) refuse("prompt_schemas", "must be a list of PML schema files");
    for (const auto& path : read::strings(root, "prompt_schemas", "")) config.prompt_schemas.emplace_back(path);
  }
  if (const auto* sources = read::object(root, "prompt_sources", "")) {
    only_known_keys(*sources, "prompt_sources", {"admin_directory", "max_bytes"});
    if (sources->contains("admin_directory")) {
      const std::string directory = read::string(*sources, "admin_directory", "prompt_sources");
      if (directory.empty()) refuse("prompt_sources.admin_directory", "must be a non-empty path");
      config.prompt_admin_directory = directory;
    }
    config.prompt_source_max_bytes = read::count(*sources, "max_bytes", "prompt_sources", config.prompt_source_max_bytes);
  }
  if (const auto* log = read::object(root, "log", "")) {
    only_known_keys(*log, "log", {"requests"});
    config.log_requests = read::flag(*log, "requests", "log", true);
  }
  config.check(kinds);
  return config;
}

}  // namespace llmgate::inline v0
