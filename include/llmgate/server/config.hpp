// gateway_config: what the gateway serves and how, read from a JSON file
// and validated before anything starts. Every error names the field:
// "config: backends[1].base_url must be a string".
//
//   {
//     "listen":   {"address": "127.0.0.1", "port": 8080, "threads": 2},
//     "limits":   {"max_body_bytes": 1048576, "max_concurrent_requests": 256,
//                  "max_queued_requests": 1024, "request_timeout_ms": 120000},
//     "models":   ["gpt-4o-mini"],                 // what clients may ask for (404 otherwise)
//     "backends": [{"name": "primary", "kind": "openai", "base_url": "https://api.openai.com/v1",
//                   "api_key_env": "OPENAI_API_KEY", "retries": 2},
//                  {"name": "demo", "kind": "demo"}],  // in-process answers, no network
//     "fallback_order": ["primary", "demo"],      // default: the order of "backends"
//     "prices":   {"gpt-4o-mini": {"input": 0.15, "output": 0.60}},  // USD per 1M tokens
//     "tenants":  [{"name": "acme", "api_key_env": "ACME_KEY"}, {"name": "dev", "api_key": "sk-dev"}],
//     "admin":    {"api_key_env": "LLMGATE_ADMIN_KEY"},
//     "exact_cache":    {"enabled": true, "max_entries": 100000, "max_bytes": 268435456},
//     "semantic_cache": {"enabled": true, "max_entries": 100000, "threshold": 0.9,
//                        "hnsw": {"m": 32, "ef_construction": 200, "ef_search": 12}},
//     "embedder": {"kind": "hashing", "dimension": 384, "model": "llmgate-hashing"},
//     "snapshot": {"directory": "/var/lib/llmgate"},   // caches saved on shutdown, loaded on start
//     "log":      {"requests": true}
//   }
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

#include <algorithm>    // std::find_if
#include <cstdint>      // std::uint64_t
#include <cstdlib>      // std::getenv
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <map>          // std::map
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <set>          // std::set
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/backend/detail/json_fields.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/error.hpp"
#include "llmgate/cache/semantic_cache.hpp"

namespace llmgate::inline v0 {

struct backend_config {
  std::string name;
  std::string kind = "openai";  ///< "openai" (any OpenAI-compatible server) or "demo" (offline)
  std::string base_url = {};
  std::string api_key = {};     ///< from api_key_env; never logged
  std::string model = {};       ///< when set, replaces the model of every request sent
  unsigned retries = 2;         ///< retries after the first try (429, 5xx, network)
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

  std::vector<std::string> models;
  std::vector<backend_config> backends;  ///< in fallback order
  std::shared_ptr<const price_table> prices = std::make_shared<price_table>();
  std::vector<tenant_config> tenants;
  std::string admin_key = {};  ///< "" : the admin views are off

  bool exact_cache = true;
  std::uint64_t exact_max_entries = 100'000;
  std::uint64_t exact_max_bytes = std::uint64_t{256} << 20;
  bool semantic_cache = true;
  std::uint64_t semantic_max_entries = 100'000;
  double semantic_threshold = 0.9;
  hnsw_parameters semantic_hnsw = default_index_factory{}.parameters;
  std::uint64_t embedding_dimension = 384;
  std::string embedding_model = "llmgate-hashing";

  std::optional<std::filesystem::path> snapshot_directory = {};
  bool log_requests = true;

  /// Reads and validates the JSON form above. Throws llmgate::error
  /// (errc::invalid_request) naming the field and what is wrong with it.
  static gateway_config from_json(const boost::json::value& value);

  /// from_json of a file; the error also names the file.
  static gateway_config load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::io_failure, "config: cannot read '" + path.string() + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::error_code ec;
    const boost::json::value value = boost::json::parse(text, ec);
    if (ec) throw error(errc::invalid_request, "config: '" + path.string() + "' is not JSON: " + ec.message());
    return from_json(value);
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
};

}  // namespace detail

inline gateway_config gateway_config::from_json(const boost::json::value& value) {
  using read = detail::config_reader;
  using detail::fail;
  constexpr auto code = read::code;
  gateway_config config;
  const auto& root = read::object_at(value, "the file");

  static const std::set<std::string_view> sections = {"listen", "limits", "models", "backends",
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
  for (std::size_t i = 0; i < models->size(); ++i) {
    if (!(*models)[i].is_string()) fail(code, "config: models[" + std::to_string(i) + "]", "must be a string");
    config.models.emplace_back((*models)[i].get_string());
  }

  const auto* backends = read::array(root, "backends", "");
  if (!backends || backends->empty()) fail(code, "config: backends", "must list at least one backend");
  std::vector<backend_config> listed;
  for (std::size_t i = 0; i < backends->size(); ++i) {
    const std::string where = "backends[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*backends)[i], where);
    backend_config backend;
    backend.name = read::string(entry, "name", where);
    if (backend.name.empty()) fail(code, "config: " + where + ".name", "must be a non-empty string");
    backend.kind = read::string(entry, "kind", where, backend.kind);
    if (backend.kind != "openai" && backend.kind != "demo")
      fail(code, "config: " + where + ".kind", "must be \"openai\" or \"demo\"");
    backend.base_url = read::string(entry, "base_url", where);
    if (backend.kind == "openai" && backend.base_url.rfind("http://", 0) != 0 &&
        backend.base_url.rfind("https://", 0) != 0)
      fail(code, "config: " + where + ".base_url", "must be an http:// or https:// URL");
    backend.api_key = read::secret(entry, where, false);
    backend.model = read::string(entry, "model", where);
    backend.retries = static_cast<unsigned>(read::count(entry, "retries", where, backend.retries));
    for (const auto& other : listed)
      if (other.name == backend.name) fail(code, "config: " + where + ".name", "repeats \"" + backend.name + "\"");
    listed.push_back(std::move(backend));
  }
  if (const auto* order = read::array(root, "fallback_order", "")) {
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string where = "config: fallback_order[" + std::to_string(i) + "]";
      if (!(*order)[i].is_string()) fail(code, where, "must be a backend's name");
      const std::string_view name = (*order)[i].get_string();
      auto found = std::find_if(listed.begin(), listed.end(), [&](const auto& b) { return b.name == name; });
      if (found == listed.end()) fail(code, where, "names \"" + std::string(name) + "\", which is not in backends");
      config.backends.push_back(*found);
    }
    if (config.backends.empty()) fail(code, "config: fallback_order", "must name at least one backend");
  } else {
    config.backends = std::move(listed);
  }

  if (const auto* prices = root.if_contains("prices"))
    config.prices = std::make_shared<price_table>(price_table::from_json(*prices));

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
  if (const auto* admin = read::object(root, "admin", "")) config.admin_key = read::secret(*admin, "admin", true);

  if (const auto* exact = read::object(root, "exact_cache", "")) {
    config.exact_cache = read::flag(*exact, "enabled", "exact_cache", config.exact_cache);
    config.exact_max_entries = read::count(*exact, "max_entries", "exact_cache", config.exact_max_entries);
    config.exact_max_bytes = read::count(*exact, "max_bytes", "exact_cache", config.exact_max_bytes);
  }
  if (const auto* semantic = read::object(root, "semantic_cache", "")) {
    config.semantic_cache = read::flag(*semantic, "enabled", "semantic_cache", config.semantic_cache);
    config.semantic_max_entries = read::count(*semantic, "max_entries", "semantic_cache", config.semantic_max_entries);
    config.semantic_threshold = read::number(*semantic, "threshold", "semantic_cache", config.semantic_threshold);
    if (!(config.semantic_threshold > 0 && config.semantic_threshold <= 1))
      fail(code, "config: semantic_cache.threshold", "must be in (0, 1]");
    if (const auto* hnsw = read::object(*semantic, "hnsw", "semantic_cache")) {
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
  }
  if (const auto* embedder = read::object(root, "embedder", "")) {
    if (read::string(*embedder, "kind", "embedder", "hashing") != "hashing")
      fail(code, "config: embedder.kind", "must be \"hashing\" (the embedder built in)");
    config.embedding_dimension = read::count(*embedder, "dimension", "embedder", config.embedding_dimension);
    config.embedding_model = read::string(*embedder, "model", "embedder", config.embedding_model);
  }
  if (const auto* snapshot = read::object(root, "snapshot", "")) {
    const std::string directory = read::string(*snapshot, "directory", "snapshot");
    if (directory.empty()) fail(code, "config: snapshot.directory", "must be a non-empty path");
    config.snapshot_directory = directory;
  }
  if (const auto* log = read::object(root, "log", "")) config.log_requests = read::flag(*log, "requests", "log", true);
  return config;
}

}  // namespace llmgate::inline v0
