// gateway_config: what the gateway serves and how, read from a JSON file
// and validated before anything starts. Each section is read and checked
// beside its component (the table below); this file assembles them, and
// checks the sections against each other: every model's backends exist,
// a router has models to route over, the shared tier's caches are on.
// Every key at every level is one the gateway reads, or it is refused with
// the nearest known key ("config: semantic_cache.treshold is not a known
// key; did you mean threshold?"); every value is checked against its range
// by check(), the same code whether --check-config or the gateway's
// constructor runs it. Each message names its field once, by its JSON
// path: "config: semantic_cache.embedder.dimension must be between 1 and
// 65536, not 0".
//
//   listen, limits            http/listen_config.hpp, http/limits_config.hpp
//   backends                  backend/backend_config.hpp (shared with the evaluation kit)
//   models, prices            model_config.hpp
//   router                    routing/router_config.hpp
//   tenants, admin            http/access_config.hpp
//   exact_cache, semantic_cache, snapshot    caches/cache_config.hpp
//   shared                    shared/shared_config.hpp
//   prompt_schemas, prompt_sources           prompt_config.hpp
//   log                       operations/log_config.hpp
//
// docs/configuration.md is the file's reference: every section with its
// defaults, the valid values, and what each section does. Older spellings
// are still read: older_config_spellings.hpp rewrites them first.
#pragma once

#include <algorithm>    // std::find_if, std::any_of
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/backend/backend_config.hpp"         // backend_config, read_backends, check_backend
#include "llmgate/backend/price_table.hpp"            // price_table
#include "llmgate/config/config_error.hpp"            // config_error
#include "llmgate/config/config_reader.hpp"           // config_reader, refuse, only_known_keys
#include "llmgate/detail/name_set.hpp"                // name_set (names must not repeat)
#include "llmgate/error.hpp"                          // errc
#include "llmgate/server/caches/cache_config.hpp"     // exact_cache_config, semantic_cache_config, snapshot_config
#include "llmgate/server/http/access_config.hpp"      // tenant_config, admin_config, check_access
#include "llmgate/server/http/limits_config.hpp"      // limits_config
#include "llmgate/server/http/listen_config.hpp"      // listen_config
#include "llmgate/server/model_config.hpp"            // model_config, read_price
#include "llmgate/server/older_config_spellings.hpp"  // rewrite_older_spellings
#include "llmgate/server/operations/log_config.hpp"   // log_config
#include "llmgate/server/prompt_config.hpp"           // prompt_config
#include "llmgate/server/routing/router_config.hpp"   // router_config
#include "llmgate/server/shared/shared_config.hpp"    // shared_config

namespace llmgate::inline v0 {

struct gateway_config {
  listen_config listen = {};
  limits_config limits = {};
  std::vector<backend_config> backends;  ///< by name; models say which they use
  std::vector<model_config> models;
  std::shared_ptr<const price_table> prices = std::make_shared<price_table>();  ///< by model name
  std::optional<router_config> router = {};
  std::vector<tenant_config> tenants;
  admin_config admin = {};
  exact_cache_config exact_cache = {};
  semantic_cache_config semantic_cache = {};
  snapshot_config snapshot = {};
  std::optional<shared_config> shared = {};  ///< the tier shared with other replicas, when configured
  prompt_config prompts = {};
  log_config log = {};

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

  /// Every value against its range (each section's check) and the
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

inline void gateway_config::check(std::span<const std::string_view> kinds) const {
  using detail::refuse;
  listen.check("listen");
  limits.check("limits");

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
    model.check(where);
    if (!model_names.insert(model.name).second) refuse(where + ".name", "repeats \"" + model.name + "\"");
    detail::name_set named;
    for (const auto& name : model.backends) {
      if (!backend_names.contains(name)) refuse(where + ".backend", "names \"" + name + "\", which is not in backends");
      if (!named.insert(name).second) refuse(where + ".backend", "names \"" + name + "\" twice");
    }
    if (model.name == semantic_cache.embedder.model)
      refuse(where + ".name", "is the embedding model's name (semantic_cache.embedder.model)");
    if (const auto* price = prices ? prices->find(model.name) : nullptr) detail::check_price(*price, where + ".prices");
  }

  if (router) {
    router->check("router");
    for (std::size_t i = 0; i < router->aliases.size(); ++i)
      if (model_names.contains(router->aliases[i]))
        refuse("router.aliases[" + std::to_string(i) + "]",
               "is \"" + router->aliases[i] + "\", a model of its own; an alias must name no model");
    const bool any_routing = std::any_of(models.begin(), models.end(), [](const auto& m) { return !m.routing.empty(); });
    if (router->mode == "registry" && !router->registry && !any_routing)
      refuse("router", "has no models to route over: give models \"routing\" metrics or router.registry");
  }

  detail::check_access(tenants, admin, "tenants");
  exact_cache.check("exact_cache");
  semantic_cache.check("semantic_cache");
  prompts.check();
  if (shared) {
    shared->check("shared");
    const bool spending = std::any_of(tenants.begin(), tenants.end(), [](const auto& t) { return t.limits.any(); });
    if (!shared->exact && !shared->semantic && !spending)
      refuse("shared", "shares nothing: exact and semantic are both false and no tenant has spending limits");
    if (shared->exact && !exact_cache.enabled)
      refuse("shared.exact", "needs exact_cache.enabled (the shared tier is its second level)");
    if (shared->semantic && !semantic_cache.enabled) refuse("shared.semantic", "needs semantic_cache.enabled");
  }
  snapshot.check("snapshot");
}

inline gateway_config gateway_config::from_json(const boost::json::value& value,
                                                std::span<const std::string_view> kinds) {
  using read = detail::config_reader;
  using detail::refuse;
  gateway_config config;
  boost::json::object root = read::object_at(value, "the file");
  detail::only_known_keys(root, "", {"listen", "limits", "backends", "models", "router", "tenants", "admin",
                                     "exact_cache", "semantic_cache", "snapshot", "log", "fallback_order", "prices",
                                     "embedder", "prompt_schemas", "prompt_sources", "shared"});
  if (const auto* listen = read::object(root, "listen", "")) config.listen = listen_config::read(*listen, "listen");
  if (const auto* limits = read::object(root, "limits", "")) config.limits = limits_config::read(*limits, "limits");

  const auto* models = read::array(root, "models", "");
  if (!models || models->empty()) refuse("models", "must list the models clients may ask for");
  const auto* backends = read::array(root, "backends", "");
  if (!backends || backends->empty()) refuse("backends", "must list at least one backend");
  config.backends = detail::read_backends(*backends, "backends", kinds);
  std::vector<std::string> backend_names;
  for (const auto& b : config.backends) backend_names.push_back(b.name);
  detail::rewrite_older_spellings(root, backend_names);

  auto prices = std::make_shared<price_table>();
  if (const auto* table = read::object(root, "prices", ""))
    for (const auto& [model, price] : *table)
      prices->set(std::string(model), detail::read_price(price, detail::config_path("prices", model)));
  const auto& model_entries = root.at("models").get_array();
  for (std::size_t i = 0; i < model_entries.size(); ++i)
    config.models.push_back(model_config::read(model_entries[i], "models[" + std::to_string(i) + "]", *prices));
  // Upstreams report the model they ran: price it as the model asked for.
  for (const auto& model : config.models)
    if (!model.upstream_model.empty() && !prices->find(model.upstream_model))
      if (const auto* price = prices->find(model.name)) prices->set(model.upstream_model, *price);
  config.prices = std::move(prices);

  if (const auto* router = read::object(root, "router", "")) config.router = router_config::read(*router, "router");
  const auto* tenants = read::array(root, "tenants", "");
  if (!tenants || tenants->empty()) refuse("tenants", "must list at least one tenant with its key");
  config.tenants = tenant_config::read_list(*tenants, "tenants");
  if (const auto* admin = read::object(root, "admin", "")) config.admin = admin_config::read(*admin, "admin");
  if (const auto* exact = read::object(root, "exact_cache", ""))
    config.exact_cache = exact_cache_config::read(*exact, "exact_cache");
  if (const auto* semantic = read::object(root, "semantic_cache", ""))
    config.semantic_cache = semantic_cache_config::read(*semantic, "semantic_cache");
  if (const auto* snapshot = read::object(root, "snapshot", "")) config.snapshot = snapshot_config::read(*snapshot, "snapshot");
  if (const auto* shared = read::object(root, "shared", "")) config.shared = shared_config::read(*shared, "shared");
  config.prompts = prompt_config::read(root);
  if (const auto* log = read::object(root, "log", "")) config.log = log_config::read(*log, "log");
  config.check(kinds);
  return config;
}

}  // namespace llmgate::inline v0
