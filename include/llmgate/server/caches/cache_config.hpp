// The config's cache sections, each read and checked here:
//
//   "exact_cache":    enabled, max_entries, max_bytes, eviction, ttl_seconds,
//                     coalesce (identical concurrent misses make one call)
//   "semantic_cache": the same, and threshold, hnsw, embedder, verifier
//   "snapshot":       directory (the tiers are loaded from it at start and
//                     saved there on stop: caches/gateway_caches.hpp)
//
// Each reader takes the section as server/older_config_spellings.hpp left
// it (the older spellings rewritten) and the section's JSON path for its
// messages; check() holds the ranges, for a section built in C++ too.
#pragma once

#include <cstdint>       // std::uint64_t
#include <filesystem>    // std::filesystem::path, exists, is_directory, is_regular_file
#include <optional>      // std::optional
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/cache/configured_threshold.hpp"  // threshold_kind_named (the policy names)
#include "llmgate/cache/eviction/configured.hpp"   // eviction_kind_named (the policy names)
#include "llmgate/cache/index_factory.hpp"         // default_index_factory (the hnsw defaults)
#include "llmgate/config/config_reader.hpp"        // config_reader, refuse, within, fraction, only_known_keys
#include "llmgate/version.hpp"                     // the inline versioned namespace

namespace llmgate::inline v0 {

/// Who leaves a full cache, and how long an answer may be served: a cache
/// section's "eviction": {"policy"} and its "ttl_seconds".
struct eviction_config {
  std::string policy = "lru";  ///< lru | lfu | cost_aware
  double ttl_seconds = 0;      ///< > 0: answers older than this are not served

  /// From the cache section `section` at `where`.
  static eviction_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    eviction_config e;
    if (const auto* spelled_out = read::object(section, "eviction", where)) {
      const std::string path = detail::config_path(where, "eviction");
      detail::only_known_keys(*spelled_out, path, {"policy"});
      e.policy = read::string(*spelled_out, "policy", path, e.policy);
    }
    e.ttl_seconds = read::number(section, "ttl_seconds", where, e.ttl_seconds);
    return e;
  }
  /// `where`: the cache section.
  void check(std::string_view where) const {
    if (!eviction_kind_named(policy))
      detail::refuse(detail::config_path(where, "eviction.policy"),
                     "must be one of \"lru\", \"lfu\", \"cost_aware\" (not \"" + policy + "\")");
    check_ttl(detail::config_path(where, "ttl_seconds"), ttl_seconds);
  }
  static void check_ttl(std::string_view path, double ttl_seconds) { detail::within(path, ttl_seconds, 0.0, 1e9); }
};

/// When a near neighbour is close enough: semantic_cache.threshold.
struct threshold_config {
  std::string policy = "static";  ///< static | adaptive | error_bound
  double value = 0.9;             ///< static: the threshold; adaptive: where it starts (when given)
  bool value_given = false;       ///< adaptive starts at its own default unless a value is given
  double error_bound = 0.05;      ///< adaptive: the share of served hits allowed to be wrong
  std::uint64_t min_feedback = 30;  ///< adaptive: verdicts heard before the learned threshold is used
  double bound = 0.02;            ///< error_bound: the share of served answers allowed to be wrong

  static threshold_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"policy", "value", "error_bound", "min_feedback", "bound"});
    threshold_config t;
    t.policy = read::string(section, "policy", where, t.policy);
    if (section.contains("value")) {
      t.value = read::number(section, "value", where, t.value);
      t.value_given = true;
      detail::fraction(detail::config_path(where, "value"), t.value, true);
    }
    t.error_bound = read::number(section, "error_bound", where, t.error_bound);
    t.min_feedback = read::count(section, "min_feedback", where, t.min_feedback);
    t.bound = read::number(section, "bound", where, t.bound);
    for (const std::string_view adaptive_only : {"error_bound", "min_feedback"})
      if ((t.policy == "static" || t.policy == "error_bound") && section.contains(adaptive_only))
        detail::refuse(detail::config_path(where, adaptive_only), "is for the adaptive policy only");
    if ((t.policy == "static" || t.policy == "adaptive") && section.contains("bound"))
      detail::refuse(detail::config_path(where, "bound"), "is for the error_bound policy only");
    if (t.policy == "error_bound" && section.contains("value"))
      detail::refuse(detail::config_path(where, "value"), "is not for the error_bound policy, which serves by its bound");
    return t;
  }
  void check(std::string_view where) const {
    if (!threshold_kind_named(policy))
      detail::refuse(detail::config_path(where, "policy"),
                     "must be one of \"static\", \"adaptive\", \"error_bound\" (not \"" + policy + "\")");
    detail::fraction(detail::config_path(where, "value"), value, true);
    detail::fraction(detail::config_path(where, "error_bound"), error_bound, false);
    detail::fraction(detail::config_path(where, "bound"), bound, false);
    detail::within<std::uint64_t>(detail::config_path(where, "min_feedback"), min_feedback, 1, 1'000'000);
  }
};

/// What turns text into vectors: semantic_cache.embedder.
struct embedder_config {
  std::string kind = "hashing";  ///< hashing (built in) | openai (an OpenAI-compatible /embeddings)
  std::string base_url = {};     ///< openai: the server's /v1 base (POST {base_url}/embeddings)
  std::string api_key = {};      ///< openai: from api_key_env
  std::string model = "llmgate-hashing";  ///< the name /v1/embeddings serves; openai: the upstream's model
  std::uint64_t dimension = 384;  ///< floats per vector; openai: the model's, which must be given

  static embedder_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    embedder_config e;
    e.kind = read::string(section, "kind", where, e.kind);
    if (e.kind == "openai")
      detail::only_known_keys(section, where, {"kind", "base_url", "model", "dimension", "api_key_env", "api_key"},
                              " of an openai embedder");
    else
      detail::only_known_keys(section, where, {"kind", "model", "dimension"}, " of a hashing embedder");
    e.dimension = read::count(section, "dimension", where, e.dimension);
    e.model = read::string(section, "model", where, e.model);
    if (e.kind == "openai") {
      e.base_url = read::string(section, "base_url", where);
      e.api_key = read::secret(section, where, false);
      if (!section.contains("model")) detail::refuse(detail::config_path(where, "model"), "must name the upstream's embedding model");
      if (!section.contains("dimension"))
        detail::refuse(detail::config_path(where, "dimension"), "must give the embedding model's vector length");
    }
    e.check(where);
    return e;
  }
  void check(std::string_view where) const {
    if (kind != "hashing" && kind != "openai")
      detail::refuse(detail::config_path(where, "kind"), "must be one of \"hashing\", \"openai\" (not \"" + kind + "\")");
    detail::within<std::uint64_t>(detail::config_path(where, "dimension"), dimension, 1, 65536);
    if (model.empty()) detail::refuse(detail::config_path(where, "model"), "must name the embedding model");
    if (kind == "openai") detail::check_url(detail::config_path(where, "base_url"), base_url);
  }
};

/// The exact tier: "exact_cache".
struct exact_cache_config {
  bool enabled = true;
  std::uint64_t max_entries = 100'000;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
  eviction_config eviction = {};
  /// Identical requests that miss while one of them is being answered wait
  /// for its call (pipeline/coalesced_calls.hpp).
  bool coalesce = true;

  static exact_cache_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where,
                            {"enabled", "max_entries", "max_bytes", "eviction", "ttl_seconds", "coalesce"});
    exact_cache_config exact;
    exact.enabled = read::flag(section, "enabled", where, exact.enabled);
    exact.max_entries = read::count(section, "max_entries", where, exact.max_entries);
    exact.max_bytes = read::count(section, "max_bytes", where, exact.max_bytes);
    exact.eviction = eviction_config::read(section, where);
    exact.coalesce = read::flag(section, "coalesce", where, exact.coalesce);
    return exact;
  }
  void check(std::string_view where) const {
    detail::within<std::uint64_t>(detail::config_path(where, "max_entries"), max_entries, 1, 1'000'000'000);
    detail::within<std::uint64_t>(detail::config_path(where, "max_bytes"), max_bytes, 1, std::uint64_t{1} << 40);
    eviction.check(where);
  }
};

/// The semantic tier: "semantic_cache".
struct semantic_cache_config {
  bool enabled = true;
  std::uint64_t max_entries = 100'000;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;  ///< stored requests, answers and vectors
  threshold_config threshold = {};
  eviction_config eviction = {};
  hnsw_parameters hnsw = default_index_factory{}.parameters;
  embedder_config embedder = {};
  std::string verifier = "default";  ///< "default", "none" or a weights file

  static semantic_cache_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"enabled", "max_entries", "max_bytes", "threshold", "eviction",
                                             "ttl_seconds", "embedder", "hnsw", "verifier"});
    semantic_cache_config semantic;
    semantic.enabled = read::flag(section, "enabled", where, semantic.enabled);
    semantic.max_entries = read::count(section, "max_entries", where, semantic.max_entries);
    semantic.max_bytes = read::count(section, "max_bytes", where, semantic.max_bytes);
    if (const auto* threshold = read::object(section, "threshold", where))
      semantic.threshold = threshold_config::read(*threshold, detail::config_path(where, "threshold"));
    semantic.eviction = eviction_config::read(section, where);
    if (const auto* hnsw = read::object(section, "hnsw", where)) {
      const std::string path = detail::config_path(where, "hnsw");
      detail::only_known_keys(*hnsw, path, {"m", "ef_construction", "ef_search"});
      auto& parameters = semantic.hnsw;
      parameters.m = read::count(*hnsw, "m", path, parameters.m);
      parameters.ef_construction = read::count(*hnsw, "ef_construction", path, parameters.ef_construction);
      parameters.ef_search = read::count(*hnsw, "ef_search", path, parameters.ef_search);
    }
    if (const auto* embedder = read::object(section, "embedder", where))
      semantic.embedder = embedder_config::read(*embedder, detail::config_path(where, "embedder"));
    semantic.verifier = read::string(section, "verifier", where, semantic.verifier);
    return semantic;
  }
  void check(std::string_view where) const {
    const auto path = [&](std::string_view key) { return detail::config_path(where, key); };
    detail::within<std::uint64_t>(path("max_entries"), max_entries, 1, 1'000'000'000);
    detail::within<std::uint64_t>(path("max_bytes"), max_bytes, 1, std::uint64_t{1} << 40);
    threshold.check(path("threshold"));
    eviction.check(where);
    detail::within<std::size_t>(path("hnsw.m"), hnsw.m, 2, 128);
    detail::within<std::size_t>(path("hnsw.ef_construction"), hnsw.ef_construction, 1, 4096);
    detail::within<std::size_t>(path("hnsw.ef_search"), hnsw.ef_search, 1, 4096);
    embedder.check(path("embedder"));
    if (verifier.empty())
      detail::refuse(path("verifier"), "must be \"default\", \"none\" or a weights file");
    else if (verifier != "default" && verifier != "none" && !std::filesystem::is_regular_file(verifier))
      detail::refuse(path("verifier"), "names no weights file at '" + verifier + "' (nor is it \"default\" or \"none\")");
  }
};

/// Where the tiers are kept between runs: "snapshot".
struct snapshot_config {
  std::optional<std::filesystem::path> directory = {};  ///< none: the caches start empty and are not saved

  static snapshot_config read(const boost::json::object& section, std::string_view where) {
    detail::only_known_keys(section, where, {"directory"});
    snapshot_config snapshot;
    const std::string directory = detail::config_reader::string(section, "directory", where);
    if (directory.empty()) detail::refuse(detail::config_path(where, "directory"), "must be a non-empty path");
    snapshot.directory = directory;
    return snapshot;
  }
  void check(std::string_view where) const {
    if (!directory) return;
    const std::string path = detail::config_path(where, "directory");
    if (directory->empty()) detail::refuse(path, "must be a non-empty path");
    std::error_code ec;
    if (std::filesystem::exists(*directory, ec) && !std::filesystem::is_directory(*directory, ec))
      detail::refuse(path, "names \"" + directory->string() + "\", which is not a directory");
  }
};

}  // namespace llmgate::inline v0
