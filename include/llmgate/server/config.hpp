// gateway_config: what the gateway serves and how, read from a JSON file
// and validated before anything starts. Every error names the field:
// "config: backends[1].base_url must be a string".
//
//   {
//     "listen":   {"address": "127.0.0.1", "port": 8080, "threads": 2},
//     "limits":   {"max_body_bytes": 1048576, "max_concurrent_requests": 256,
//                  "max_queued_requests": 1024, "request_timeout_ms": 120000},
//     "backends": [{"name": "openai", "kind": "openai", "base_url": "https://api.openai.com/v1",
//                   "api_key_env": "OPENAI_API_KEY", "retries": 2},
//                  {"name": "claude", "kind": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"},
//                  {"name": "local", "kind": "ollama", "base_url": "http://127.0.0.1:11434"},
//                  {"name": "demo", "kind": "demo"}],      // in-process answers, no network
//     "models":   [{"name": "gpt-4o-mini", "backend": ["openai", "demo"],   // a list: fallback order
//                   "upstream_model": "gpt-4o-mini-2024-07-18",          // sent upstream instead of name
//                   "prices": {"input": 0.15, "output": 0.60},            // USD per 1M tokens
//                   "routing": {"accuracy": 0.82, "task_accuracy": {"coding": 0.87}}},
//                  {"name": "llama3.2", "backend": "local"}],
//     "router":   {"aliases": ["auto"], "preferences": "balanced",
//                  "registry": "models.json", "examples": "examples.jsonl"},
//     "tenants":  [{"name": "acme", "api_key_env": "ACME_KEY"}, {"name": "dev", "api_key": "sk-dev"}],
//     "admin":    {"api_key_env": "LLMGATE_ADMIN_KEY", "metrics_token": "scraper-token"},  // token: /metrics only
//     "exact_cache":    {"enabled": true, "max_entries": 100000, "max_bytes": 268435456,
//                        "eviction": {"policy": "lru"}, "ttl_seconds": 0},
//     "semantic_cache": {"enabled": true, "max_entries": 100000,
//                        "threshold": {"policy": "static", "value": 0.9},    // or just "threshold": 0.9
//                        "eviction": {"policy": "lru"}, "ttl_seconds": 0,    // 0: answers never expire
//                        "embedder": {"kind": "hashing", "dimension": 384, "model": "llmgate-hashing"},
//                        // or {"kind": "openai", "base_url": "http://127.0.0.1:8081/v1",
//                        //     "model": "nomic-embed-text", "dimension": 768, "api_key_env": "EMBED_KEY"}
//                        "hnsw": {"m": 32, "ef_construction": 200, "ef_search": 12}},
//     "snapshot": {"directory": "/var/lib/llmgate"},   // caches saved on shutdown, loaded on start
//     "log":      {"requests": true}
//   }
//
// backends: kind "openai" is any OpenAI-compatible server (base_url
// required), "anthropic" the Messages API (optional "version",
// "max_tokens"), "ollama" Ollama's native API, "demo" canned offline
// answers; a program registers more kinds in C++ (backend_registry.hpp),
// whose fields it reads from `options`, the entry as written.
//
// models: what clients may ask for (404 otherwise). Each names its backend,
// or a list of backends tried in order. "routing" holds the fields of a
// model_registry card (route/model_registry.hpp) for the router; a model's
// "prices" stand for its card's input and output cost where the card
// gives none. The older form, "models": ["name", ...] served by every
// backend (in "fallback_order" where given), and a top-level "prices" table
// ({"model": {"input", "output"}}) are still read.
//
// router: when present, a request for model "auto" (or one of "aliases")
// is routed: the task analyser reads it, the preferences weigh the models'
// ratings (a profile or "quality=weight,...", see route/preferences.hpp;
// a request overrides them with the header x-llmgate-preferences or its
// field "llmgate_preferences"), and the chosen model's backends answer.
// The registry is built from the models' "routing" fields, or read from
// "registry" (a model_registry file whose models must all be listed in
// "models"); "examples" is a JSON-lines file of labelled requests for the
// local analyser: {"text", "task_type", "domain", "complexity",
// "outcomes": {"model": score}}, every field but text optional.
//
// semantic_cache: threshold "static" serves neighbours at or above
// "value"; "adaptive" learns the threshold from /v1/feedback so that at
// most "error_bound" of served hits are wrong (starting from "value" when
// given). eviction "lru", "lfu" or "cost_aware" chooses who leaves a full
// cache; "ttl_seconds" (> 0) expires answers that old. "min_feedback"
// (adaptive) is how many verdicts come in before the learned threshold
// replaces the start. embedder "hashing" is built in; "openai" is any
// OpenAI-compatible /embeddings endpoint at "base_url" (llama.cpp's
// server, Ollama's /v1, vLLM, OpenAI), with its "model" and "dimension"
// (both required) and an optional "api_key_env"; the gateway asks it for
// one embedding at start and does not start when it gets none.
// "capacity" is another name for max_entries.
//
// semantic_cache.hnsw trades near-duplicates found for CPU: lower
// ef_construction makes each miss's insert cheaper, lower ef_search each
// lookup, and both find fewer of the stored near-duplicates on hard data
// (bench/cache_bench.cpp measures it). A loaded snapshot keeps its graph's
// m and ef_construction and takes ef_search from here.
//
// Secrets are read from the environment variables the file names
// (api_key_env), so the file itself can be shared; a literal api_key is
// accepted for tenants in development. Keys are never logged.
#pragma once

#include <algorithm>    // std::find, std::find_if
#include <array>        // std::array
#include <cstdint>      // std::uint64_t
#include <cstdlib>      // std::getenv
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <set>          // std::set
#include <span>         // std::span
#include <stdexcept>    // std::invalid_argument (from preferences::parse)
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize (a model's card for the registry check)
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/chat/detail/json_fields.hpp"  // fail, as_object, string_field...
#include "llmgate/backend/price_table.hpp"         // price_table, model_price
#include "llmgate/cache/semantic_cache.hpp"        // semantic_cache_options (the hnsw defaults)
#include "llmgate/error.hpp"                       // llmgate::error, errc
#include "llmgate/route/model_registry.hpp"        // model_registry (routing cards are checked by it)
#include "llmgate/route/preferences.hpp"           // preferences::parse (router.preferences is checked)

namespace llmgate::inline v0 {

/// The backend kinds the gateway builds without help (backend_registry.hpp).
inline constexpr std::array<std::string_view, 4> builtin_backend_kinds = {"openai", "anthropic", "ollama", "demo"};

struct backend_config {
  std::string name;
  std::string kind = "openai";  ///< openai | anthropic | ollama | demo | a kind registered in C++
  std::string base_url = {};    ///< openai: required; anthropic, ollama: their usual address when empty
  std::string api_key = {};     ///< from api_key_env; never logged
  std::string model = {};       ///< when set, replaces the model of every request sent (a model's upstream_model wins)
  unsigned retries = 2;         ///< retries after the first try (429, 5xx, network)
  boost::json::object options = {};  ///< the entry as written: fields of a kind's own
};

struct model_config {
  std::string name;                   ///< what clients ask for
  std::vector<std::string> backends;  ///< names from gateway_config::backends, in fallback order
  std::string upstream_model = {};    ///< sent upstream instead of `name`; empty: `name` (or the backend's model)
  boost::json::object routing = {};   ///< model_registry card fields (name left out); empty: none
};

struct router_config {
  std::vector<std::string> aliases = {"auto"};        ///< models that ask the router to choose
  std::string preferences = "balanced";               ///< preferences::parse form
  std::optional<std::filesystem::path> registry = {};  ///< a model_registry file instead of the models' routing
  std::optional<std::filesystem::path> examples = {};  ///< labelled requests for the local analyser (JSON lines)
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
  double semantic_threshold = 0.9;  ///< the static threshold (threshold_config::value, kept in step)
  threshold_config semantic_threshold_policy = {};
  eviction_config semantic_eviction = {};
  hnsw_parameters semantic_hnsw = default_index_factory{}.parameters;
  embedder_config embedder = {};

  std::optional<std::filesystem::path> snapshot_directory = {};
  bool log_requests = true;

  /// Reads and validates the JSON form above. Throws llmgate::error
  /// (errc::invalid_request) naming the field and what is wrong with it.
  /// `kinds`: the backend kinds that exist (those registered in C++ too).
  static gateway_config from_json(const boost::json::value& value,
                                  std::span<const std::string_view> kinds = builtin_backend_kinds);

  /// from_json of a file; the error also names the file.
  static gateway_config load(const std::filesystem::path& path,
                             std::span<const std::string_view> kinds = builtin_backend_kinds) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::io_failure, "config: cannot read '" + path.string() + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::error_code ec;
    const boost::json::value value = boost::json::parse(text, ec);
    if (ec) throw error(errc::invalid_request, "config: '" + path.string() + "' is not JSON: " + ec.message());
    return from_json(value, kinds);
  }

  /// What from_json checks across sections, for a config built in C++ as
  /// well (the gateway calls it before it starts): every model has
  /// backends that exist, names are unique, a router has models to route
  /// over. Throws llmgate::error naming the field.
  void check() const;

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

// The validation helpers config reading shares: each throws naming
// "config: <where>.<key>".
struct config_reader {
  static constexpr auto code = errc::invalid_request;

  static const boost::json::object& object_at(const boost::json::value& value, const std::string& where) {
    return as_object(value, "config: " + where, code);
  }
  static const boost::json::object* object(const boost::json::object& o, std::string_view key,
                                           const std::string& where) {
    return object_field(o, key, "config: " + where, code);
  }
  static const boost::json::array* array(const boost::json::object& o, std::string_view key, const std::string& where) {
    return array_field(o, key, "config: " + where, code);
  }
  static std::string string(const boost::json::object& o, std::string_view key, const std::string& where,
                            std::string fallback = {}) {
    const std::string text = string_field(o, key, "config: " + where, code);
    return text.empty() ? fallback : text;
  }
  static std::uint64_t count(const boost::json::object& o, std::string_view key, const std::string& where,
                             std::uint64_t fallback) {
    return o.contains(key) ? count_field(o, key, "config: " + where, code) : fallback;
  }
  static bool flag(const boost::json::object& o, std::string_view key, const std::string& where, bool fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_bool()) fail(code, "config: " + where + "." + std::string(key), "must be true or false");
    return field->get_bool();
  }
  static double number(const boost::json::object& o, std::string_view key, const std::string& where, double fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_number()) fail(code, "config: " + where + "." + std::string(key), "must be a number");
    return field->to_number<double>();
  }
  // A string, or an array of strings (one string reads as a list of one).
  static std::vector<std::string> strings(const boost::json::object& o, std::string_view key, const std::string& where) {
    const auto* field = o.if_contains(key);
    const std::string name = "config: " + where + "." + std::string(key);
    std::vector<std::string> out;
    if (!field || field->is_null()) return out;
    if (const auto* one = field->if_string()) {
      out.emplace_back(*one);
      return out;
    }
    const auto* many = field->if_array();
    if (!many) fail(code, name, "must be a string or a list of strings");
    for (std::size_t i = 0; i < many->size(); ++i) {
      if (!(*many)[i].is_string()) fail(code, name + "[" + std::to_string(i) + "]", "must be a string");
      out.emplace_back((*many)[i].get_string());
    }
    return out;
  }
  // One of `allowed`, else an error listing them.
  static std::string choice(const boost::json::object& o, std::string_view key, const std::string& where,
                            std::string fallback, std::span<const std::string_view> allowed) {
    std::string value = string(o, key, where, fallback);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      std::string list;
      for (const auto a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
      fail(code, "config: " + where + "." + std::string(key), "must be one of " + list + " (not \"" + value + "\")");
    }
    return value;
  }
  static bool http_url(std::string_view url) { return url.starts_with("http://") || url.starts_with("https://"); }
  // api_key, or the variable api_key_env names (which must be set).
  static std::string secret(const boost::json::object& o, const std::string& where, bool literal_allowed) {
    const std::string variable = string(o, "api_key_env", where);
    if (!variable.empty()) {
      const char* value = std::getenv(variable.c_str());
      if (!value || !*value)
        fail(code, "config: " + where + ".api_key_env", "names " + variable + ", which is not set");
      return value;
    }
    const std::string literal = string(o, "api_key", where);
    if (!literal.empty() && !literal_allowed)
      fail(code, "config: " + where + ".api_key", "is not allowed here; use api_key_env");
    return literal;
  }
  // "eviction": {"policy"} and "ttl_seconds" of a cache section.
  static eviction_config eviction(const boost::json::object& section, const std::string& where) {
    static constexpr std::array<std::string_view, 3> policies = {"lru", "lfu", "cost_aware"};
    eviction_config e;
    if (const auto* field = section.if_contains("eviction"); field && field->is_string()) {
      boost::json::object spelled{{"policy", field->get_string()}};  // "eviction": "lfu" reads as {"policy": "lfu"}
      e.policy = choice(spelled, "policy", where + ".eviction", e.policy, policies);
    } else if (const auto* spelled_out = object(section, "eviction", where)) {
      e.policy = choice(*spelled_out, "policy", where + ".eviction", e.policy, policies);
      e.ttl_seconds = number(*spelled_out, "ttl_seconds", where + ".eviction", e.ttl_seconds);
    }
    e.ttl_seconds = number(section, "ttl_seconds", where, e.ttl_seconds);
    if (!(e.ttl_seconds >= 0) || e.ttl_seconds > 1e9)
      fail(code, "config: " + where + ".ttl_seconds", "must be from 0 (no expiry) to 1e9");
    return e;
  }
};

// The checks of a model's routing fields: a one-card registry built from
// them (model_registry names the field that is wrong).
inline void check_routing(const model_config& model, const std::string& where) {
  if (model.routing.empty()) return;
  boost::json::object card = model.routing;
  card["name"] = model.name;
  try {
    (void)model_registry::from_json(boost::json::serialize(boost::json::object{{"models", boost::json::array{card}}}),
                                    "config: " + where + ".routing");
  } catch (const std::invalid_argument& e) {
    fail(errc::invalid_request, "config: " + where + ".routing", std::string("is not a model card: ") + e.what());
  }
}

}  // namespace detail

inline void gateway_config::check() const {
  using detail::fail;
  constexpr auto code = errc::invalid_request;
  if (backends.empty()) fail(code, "config: backends", "must list at least one backend");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string where = "config: backends[" + std::to_string(i) + "]";
    if (backends[i].name.empty()) fail(code, where + ".name", "must be a non-empty string");
    for (std::size_t j = 0; j < i; ++j)
      if (backends[j].name == backends[i].name) fail(code, where + ".name", "repeats \"" + backends[i].name + "\"");
  }
  if (models.empty()) fail(code, "config: models", "must list the models clients may ask for");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& model = models[i];
    const std::string where = "config: models[" + std::to_string(i) + "]";
    if (model.name.empty()) fail(code, where + ".name", "must be a non-empty string");
    for (std::size_t j = 0; j < i; ++j)
      if (models[j].name == model.name) fail(code, where + ".name", "repeats \"" + model.name + "\"");
    if (model.backends.empty()) fail(code, where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
    for (const auto& name : model.backends)
      if (!find_backend(name))
        fail(code, where + ".backend", "names \"" + name + "\", which is not in backends");
    if (model.name == embedder.model)
      fail(code, where + ".name", "is the embedding model's name (semantic_cache.embedder.model)");
  }
  if (embedder.kind == "openai") {
    const std::string where = "config: semantic_cache.embedder";
    if (embedder.dimension == 0 || embedder.dimension > 65536) fail(code, where + ".dimension", "must be from 1 to 65536");
    if (!detail::config_reader::http_url(embedder.base_url))
      fail(code, where + ".base_url", "must be an http:// or https:// URL");
    if (embedder.model.empty()) fail(code, where + ".model", "must name the upstream's embedding model");
  } else if (embedder.kind != "hashing") {
    fail(code, "config: semantic_cache.embedder.kind", "must be \"hashing\" or \"openai\" (not \"" + embedder.kind + "\")");
  }
  if (semantic_threshold_policy.min_feedback == 0)
    fail(code, "config: semantic_cache.threshold.min_feedback", "must be at least 1");
  if (router) {
    for (std::size_t i = 0; i < router->aliases.size(); ++i)
      if (find_model(router->aliases[i]))
        fail(code, "config: router.aliases[" + std::to_string(i) + "]",
             "is \"" + router->aliases[i] + "\", a model of its own; an alias must name no model");
    const bool any_routing = std::any_of(models.begin(), models.end(), [](const auto& m) { return !m.routing.empty(); });
    if (!router->registry && !any_routing)
      fail(code, "config: router", "has no models to route over: give models \"routing\" metrics or router.registry");
    try {
      (void)preferences::parse(router->preferences);
    } catch (const std::invalid_argument& e) {
      fail(code, "config: router.preferences", std::string("cannot be read: ") + e.what());
    }
  }
}

inline gateway_config gateway_config::from_json(const boost::json::value& value,
                                                std::span<const std::string_view> kinds) {
  using read = detail::config_reader;
  using detail::fail;
  constexpr auto code = read::code;
  gateway_config config;
  const auto& root = read::object_at(value, "the file");

  static const std::set<std::string_view> sections = {"listen", "limits", "models", "backends", "router",
      "fallback_order", "prices", "tenants", "admin", "exact_cache", "semantic_cache", "embedder", "snapshot", "log"};
  for (const auto& field : root)
    if (!sections.contains(field.key())) fail(code, "config: " + std::string(field.key()), "is not a known section");

  if (const auto* listen = read::object(root, "listen", "")) {
    config.address = read::string(*listen, "address", "listen", config.address);
    const auto port = read::count(*listen, "port", "listen", config.port);
    if (port > 65535) fail(code, "config: listen.port", "must be at most 65535");
    config.port = static_cast<unsigned short>(port);
    config.threads = static_cast<unsigned>(read::count(*listen, "threads", "listen", config.threads));
    if (config.threads == 0) fail(code, "config: listen.threads", "must be at least 1");
  }
  if (const auto* limits = read::object(root, "limits", "")) {
    config.max_body_bytes = read::count(*limits, "max_body_bytes", "limits", config.max_body_bytes);
    config.max_concurrent_requests =
        read::count(*limits, "max_concurrent_requests", "limits", config.max_concurrent_requests);
    config.max_queued_requests = read::count(*limits, "max_queued_requests", "limits", config.max_queued_requests);
    config.request_timeout_ms = read::count(*limits, "request_timeout_ms", "limits", config.request_timeout_ms);
    if (config.max_concurrent_requests == 0) fail(code, "config: limits.max_concurrent_requests", "must be at least 1");
    if (config.request_timeout_ms == 0) fail(code, "config: limits.request_timeout_ms", "must be at least 1");
  }

  const auto* models = read::array(root, "models", "");
  if (!models || models->empty()) fail(code, "config: models", "must list the models clients may ask for");

  // backends: before the models are read, which name them.
  const auto* backends = read::array(root, "backends", "");
  if (!backends || backends->empty()) fail(code, "config: backends", "must list at least one backend");
  for (std::size_t i = 0; i < backends->size(); ++i) {
    const std::string where = "backends[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*backends)[i], where);
    backend_config backend;
    backend.name = read::string(entry, "name", where);
    if (backend.name.empty()) fail(code, "config: " + where + ".name", "must be a non-empty string");
    backend.kind = read::choice(entry, "kind", where, backend.kind, kinds);
    backend.base_url = read::string(entry, "base_url", where);
    const bool builtin = std::find(builtin_backend_kinds.begin(), builtin_backend_kinds.end(), backend.kind) !=
                         builtin_backend_kinds.end();
    if (builtin && backend.kind != "demo" && (backend.kind == "openai" || !backend.base_url.empty()) &&
        !read::http_url(backend.base_url))
      fail(code, "config: " + where + ".base_url", "must be an http:// or https:// URL");
    backend.api_key = read::secret(entry, where, false);
    backend.model = read::string(entry, "model", where);
    backend.retries = static_cast<unsigned>(read::count(entry, "retries", where, backend.retries));
    if (backend.kind == "anthropic") {
      (void)read::string(entry, "version", where);
      (void)read::count(entry, "max_tokens", where, 0);
    }
    for (const auto& other : config.backends)
      if (other.name == backend.name) fail(code, "config: " + where + ".name", "repeats \"" + backend.name + "\"");
    backend.options = entry;
    config.backends.push_back(std::move(backend));
  }

  // The older form's fallback list, for models given as plain names.
  std::vector<std::string> every_backend;
  for (const auto& b : config.backends) every_backend.push_back(b.name);
  if (const auto* order = read::array(root, "fallback_order", "")) {
    every_backend.clear();
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string where = "config: fallback_order[" + std::to_string(i) + "]";
      if (!(*order)[i].is_string()) fail(code, where, "must be a backend's name");
      const std::string name((*order)[i].get_string());
      if (!config.find_backend(name)) fail(code, where, "names \"" + name + "\", which is not in backends");
      every_backend.push_back(name);
    }
    if (every_backend.empty()) fail(code, "config: fallback_order", "must name at least one backend");
  }

  auto prices = std::make_shared<price_table>();
  if (const auto* table = root.if_contains("prices")) *prices = price_table::from_json(*table);

  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string where = "models[" + std::to_string(i) + "]";
    model_config model;
    if (const auto* name = (*models)[i].if_string()) {
      model.name = std::string(*name);
      model.backends = every_backend;
    } else if (const auto* entry = (*models)[i].if_object()) {
      model.name = read::string(*entry, "name", where);
      if (model.name.empty()) fail(code, "config: " + where + ".name", "must be a non-empty string");
      model.backends = read::strings(*entry, "backend", where);
      if (model.backends.empty())
        fail(code, "config: " + where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
      model.upstream_model = read::string(*entry, "upstream_model", where);
      if (const auto* price = entry->if_contains("prices"); price && !price->is_null()) {
        const auto one = price_table::from_json(boost::json::object{{model.name, *price}});
        prices->set(model.name, *one.find(model.name));
      }
      if (const auto* routing = read::object(*entry, "routing", where)) model.routing = *routing;
      if (const auto* price = prices->find(model.name); price && !model.routing.empty()) {
        if (!model.routing.contains("input_cost_per_million")) model.routing["input_cost_per_million"] = price->input;
        if (!model.routing.contains("output_cost_per_million")) model.routing["output_cost_per_million"] = price->output;
      }
      detail::check_routing(model, where);
    } else {
      fail(code, "config: " + where, "must be a model's name or an object {\"name\", \"backend\", ...}");
    }
    config.models.push_back(std::move(model));
  }
  // Upstreams report the model they ran: price it as the model asked for.
  for (const auto& model : config.models)
    if (!model.upstream_model.empty() && !prices->find(model.upstream_model))
      if (const auto* price = prices->find(model.name)) prices->set(model.upstream_model, *price);
  config.prices = std::move(prices);

  if (const auto* router = read::object(root, "router", "")) {
    router_config r;
    if (router->contains("aliases")) r.aliases = read::strings(*router, "aliases", "router");
    if (std::find(r.aliases.begin(), r.aliases.end(), "auto") == r.aliases.end()) r.aliases.insert(r.aliases.begin(), "auto");
    r.preferences = read::string(*router, "preferences", "router", r.preferences);
    if (const auto registry = read::string(*router, "registry", "router"); !registry.empty()) r.registry = registry;
    if (const auto examples = read::string(*router, "examples", "router"); !examples.empty()) r.examples = examples;
    config.router = std::move(r);
  }

  const auto* tenants = read::array(root, "tenants", "");
  if (!tenants || tenants->empty()) fail(code, "config: tenants", "must list at least one tenant with its key");
  for (std::size_t i = 0; i < tenants->size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*tenants)[i], where);
    tenant_config tenant{read::string(entry, "name", where), read::secret(entry, where, true)};
    if (tenant.name.empty()) fail(code, "config: " + where + ".name", "must be a non-empty string");
    if (tenant.api_key.empty()) fail(code, "config: " + where, "needs api_key_env or api_key");
    for (const auto& other : config.tenants) {
      if (other.name == tenant.name) fail(code, "config: " + where + ".name", "repeats \"" + tenant.name + "\"");
      if (other.api_key == tenant.api_key)
        fail(code, "config: " + where, "has the key of tenant \"" + other.name + "\"");
    }
    config.tenants.push_back(std::move(tenant));
  }
  if (const auto* admin = read::object(root, "admin", "")) {
    config.admin_key = read::secret(*admin, "admin", true);
    config.metrics_token = read::string(*admin, "metrics_token", "admin");
  }

  if (const auto* exact = read::object(root, "exact_cache", "")) {
    config.exact_cache = read::flag(*exact, "enabled", "exact_cache", config.exact_cache);
    config.exact_max_entries = read::count(*exact, "max_entries", "exact_cache", config.exact_max_entries);
    config.exact_max_bytes = read::count(*exact, "max_bytes", "exact_cache", config.exact_max_bytes);
    config.exact_eviction = read::eviction(*exact, "exact_cache");
  }

  // The embedder: semantic_cache.embedder, or the older top-level "embedder".
  const auto read_embedder = [&](const boost::json::object& e, const std::string& where) {
    static constexpr std::array<std::string_view, 2> embedder_kinds = {"hashing", "openai"};
    auto& embedder = config.embedder;
    embedder.kind = read::choice(e, "kind", where, embedder.kind, embedder_kinds);
    embedder.dimension = read::count(e, "dimension", where, embedder.dimension);
    if (embedder.dimension == 0 || embedder.dimension > 65536)
      fail(code, "config: " + where + ".dimension", "must be from 1 to 65536");
    embedder.model = read::string(e, "model", where, embedder.model);
    if (embedder.kind == "openai") {
      embedder.base_url = read::string(e, "base_url", where);
      if (!read::http_url(embedder.base_url))
        fail(code, "config: " + where + ".base_url", "must be an http:// or https:// URL");
      embedder.api_key = read::secret(e, where, false);
      if (!e.contains("model")) fail(code, "config: " + where + ".model", "must name the upstream's embedding model");
      if (!e.contains("dimension"))
        fail(code, "config: " + where + ".dimension", "must give the embedding model's vector length");
    }
  };
  if (const auto* embedder = read::object(root, "embedder", "")) read_embedder(*embedder, "embedder");

  if (const auto* semantic = read::object(root, "semantic_cache", "")) {
    const std::string where = "semantic_cache";
    config.semantic_cache = read::flag(*semantic, "enabled", where, config.semantic_cache);
    config.semantic_max_entries = read::count(*semantic, "max_entries", where, config.semantic_max_entries);
    config.semantic_max_entries = read::count(*semantic, "capacity", where, config.semantic_max_entries);
    if (config.semantic_max_entries == 0) fail(code, "config: semantic_cache.max_entries", "must be at least 1");
    auto& threshold = config.semantic_threshold_policy;
    const auto in_range = [&](double value, const std::string& field) {
      if (!(value > 0 && value <= 1)) fail(code, "config: " + field, "must be in (0, 1]");
      return value;
    };
    if (const auto* field = semantic->if_contains("threshold"); field && field->is_number()) {
      threshold.value = in_range(field->to_number<double>(), where + ".threshold");
      threshold.value_given = true;
    } else if (const auto* spelled = read::object(*semantic, "threshold", where)) {
      static constexpr std::array<std::string_view, 2> policies = {"static", "adaptive"};
      threshold.policy = read::choice(*spelled, "policy", where + ".threshold", threshold.policy, policies);
      if (spelled->contains("value")) {
        threshold.value = in_range(read::number(*spelled, "value", where + ".threshold", threshold.value),
                                   where + ".threshold.value");
        threshold.value_given = true;
      }
      threshold.error_bound = read::number(*spelled, "error_bound", where + ".threshold", threshold.error_bound);
      if (!(threshold.error_bound > 0 && threshold.error_bound < 1))
        fail(code, "config: semantic_cache.threshold.error_bound", "must be in (0, 1)");
      if (threshold.policy == "static" && spelled->contains("error_bound"))
        fail(code, "config: semantic_cache.threshold.error_bound", "is for the adaptive policy only");
      threshold.min_feedback = read::count(*spelled, "min_feedback", where + ".threshold", threshold.min_feedback);
      if (threshold.min_feedback == 0 || threshold.min_feedback > 1'000'000)
        fail(code, "config: semantic_cache.threshold.min_feedback", "must be from 1 to 1000000");
      if (threshold.policy == "static" && spelled->contains("min_feedback"))
        fail(code, "config: semantic_cache.threshold.min_feedback", "is for the adaptive policy only");
    } else if (field && !field->is_null()) {
      fail(code, "config: semantic_cache.threshold",
           "must be a number or {\"policy\", \"value\", \"error_bound\", \"min_feedback\"}");
    }
    config.semantic_threshold = threshold.value;
    config.semantic_eviction = read::eviction(*semantic, where);
    if (const auto* hnsw = read::object(*semantic, "hnsw", where)) {
      auto& parameters = config.semantic_hnsw;
      const auto bounded = [&](std::string_view key, std::size_t value, std::size_t low, std::size_t high) {
        const std::size_t read = read::count(*hnsw, key, "semantic_cache.hnsw", value);
        if (read < low || read > high)
          fail(code, "config: semantic_cache.hnsw." + std::string(key),
               "must be from " + std::to_string(low) + " to " + std::to_string(high));
        return read;
      };
      parameters.m = bounded("m", parameters.m, 2, 128);
      parameters.ef_construction = bounded("ef_construction", parameters.ef_construction, 1, 4096);
      parameters.ef_search = bounded("ef_search", parameters.ef_search, 1, 4096);
    }
    if (const auto* embedder = read::object(*semantic, "embedder", where)) read_embedder(*embedder, where + ".embedder");
  }
  if (const auto* snapshot = read::object(root, "snapshot", "")) {
    const std::string directory = read::string(*snapshot, "directory", "snapshot");
    if (directory.empty()) fail(code, "config: snapshot.directory", "must be a non-empty path");
    config.snapshot_directory = directory;
  }
  if (const auto* log = read::object(root, "log", "")) config.log_requests = read::flag(*log, "requests", "log", true);
  config.check();
  return config;
}

}  // namespace llmgate::inline v0
