// The older spellings of the gateway's config, rewritten in one pass into
// the current ones before the sections are read, so that each section's
// reader knows one spelling of each setting:
//
//   "models": ["a", "b"]            {"name": "a", "backend": <every backend,
//     and "fallback_order"           or fallback_order's>}, ...
//   top-level "embedder"            semantic_cache.embedder
//   semantic_cache.capacity         semantic_cache.max_entries
//   "threshold": 0.9                "threshold": {"value": 0.9}
//   "eviction": "lfu"               "eviction": {"policy": "lfu"}
//   eviction.ttl_seconds            the section's ttl_seconds (which wins)
//
// A value in an older spelling is checked where it was written, so that a
// refusal names what the file says ("config: embedder.dimension must be
// between 1 and 65536, not 0"); a setting given in both spellings is
// refused, naming the older.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"        // config_reader, refuse, within, fraction, only_known_keys
#include "llmgate/detail/name_set.hpp"             // name_set
#include "llmgate/server/caches/cache_config.hpp"  // embedder_config, eviction_config (checked where written)
#include "llmgate/version.hpp"                     // the inline versioned namespace

namespace llmgate::inline v0::detail {

// Models given by name, served by every backend (`backends`, in the order
// of "fallback_order" where given).
inline void rewrite_models_by_name(boost::json::object& root, std::vector<std::string> backends) {
  if (const auto* order = config_reader::array(root, "fallback_order", "")) {
    const name_set known(backends.begin(), backends.end());
    backends.clear();
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string where = "fallback_order[" + std::to_string(i) + "]";
      if (!(*order)[i].is_string()) refuse(where, "must be a backend's name");
      std::string name((*order)[i].get_string());
      if (!known.contains(name)) refuse(where, "names \"" + name + "\", which is not in backends");
      backends.push_back(std::move(name));
    }
    if (backends.empty()) refuse("fallback_order", "must name at least one backend");
  }
  root.erase("fallback_order");
  if (auto* models = root.if_contains("models"); models && models->is_array())
    for (auto& model : models->get_array())
      if (model.is_string())
        model = boost::json::object{{"name", model}, {"backend", boost::json::array(backends.begin(), backends.end())}};
}

// A cache section's "eviction": "lfu" and its eviction.ttl_seconds.
inline void rewrite_eviction(boost::json::object& section, std::string_view where) {
  const std::string path = config_path(where, "eviction");
  auto* eviction = section.if_contains("eviction");
  if (!eviction || eviction->is_null()) return;
  if (eviction->is_string()) {
    *eviction = boost::json::object{{"policy", *eviction}};
    return;
  }
  if (!eviction->is_object()) refuse(path, "must be a policy's name or {\"policy\", \"ttl_seconds\"}");
  auto& spelled_out = eviction->get_object();
  only_known_keys(spelled_out, path, {"policy", "ttl_seconds"});
  if (!spelled_out.contains("ttl_seconds")) return;
  const double ttl = config_reader::number(spelled_out, "ttl_seconds", path, 0);
  if (!section.contains("ttl_seconds")) {
    eviction_config::check_ttl(config_path(path, "ttl_seconds"), ttl);
    section["ttl_seconds"] = ttl;
  }
  spelled_out.erase("ttl_seconds");
}

// semantic_cache.capacity and a threshold given as a number.
inline void rewrite_semantic_cache(boost::json::object& section) {
  if (section.contains("capacity")) {
    if (section.contains("max_entries"))
      refuse("semantic_cache.capacity", "is another name for max_entries; give one of them");
    const auto capacity = config_reader::count(section, "capacity", "semantic_cache", 0);
    within<std::uint64_t>("semantic_cache.capacity", capacity, 1, 1'000'000'000);
    section["max_entries"] = capacity;
    section.erase("capacity");
  }
  if (auto* threshold = section.if_contains("threshold"); threshold && !threshold->is_null()) {
    if (threshold->is_number()) {
      const double value = threshold->to_number<double>();
      fraction("semantic_cache.threshold", value, true);
      *threshold = boost::json::object{{"value", value}};
    } else if (!threshold->is_object()) {
      refuse("semantic_cache.threshold", "must be a number or {\"policy\", \"value\", \"error_bound\", \"min_feedback\"}");
    }
  }
}

/// Rewrites the older spellings in the config's `root`; `backends`: the
/// names of its backends, already read.
inline void rewrite_older_spellings(boost::json::object& root, const std::vector<std::string>& backends) {
  rewrite_models_by_name(root, backends);
  if (auto* exact = root.if_contains("exact_cache"); exact && exact->is_object())
    rewrite_eviction(exact->get_object(), "exact_cache");
  auto* semantic = root.if_contains("semantic_cache");
  if (semantic && semantic->is_object()) {
    rewrite_eviction(semantic->get_object(), "semantic_cache");
    rewrite_semantic_cache(semantic->get_object());
  }
  if (const auto* embedder = config_reader::object(root, "embedder", "")) {
    if (semantic && semantic->is_object() && semantic->get_object().contains("embedder"))
      refuse("embedder", "is the older place of semantic_cache.embedder; give one of them");
    (void)embedder_config::read(*embedder, "embedder");
    boost::json::object moved = *embedder;  // a copy: root's insertion below may move its fields
    if (!semantic || semantic->is_null()) semantic = &(root["semantic_cache"] = boost::json::object{});
    if (semantic->is_object()) semantic->get_object()["embedder"] = std::move(moved);
  }
  root.erase("embedder");
}

}  // namespace llmgate::inline v0::detail
