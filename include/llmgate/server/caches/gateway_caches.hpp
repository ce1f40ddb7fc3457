// gateway_caches: the gateway's two cache tiers, built from the config and
// loaded from the snapshot directory when it holds them; saved there on
// stop. The one place where the gateway constructs, loads and saves
// caches, and where the config's cache policies (eviction, lifetime,
// threshold, embedder) become policy objects. The semantic tier is of the
// embedder's kind (semantic_tier.hpp); for kind "openai" the embedder is
// asked for one embedding first (remote_embedder.hpp), and the gateway
// does not start without it.
//
// A snapshot that cannot be read is moved aside (renamed *.unreadable,
// with a log line) and that cache starts empty: a damaged file never
// keeps the gateway from starting. A snapshot saved under the other
// threshold policy loads with the threshold starting afresh
// (cache/configured_threshold.hpp). The embedders keep their semantic
// snapshots in files of their own: semantic.snapshot for the built-in one,
// semantic_openai_<hash>.snapshot for an HTTP one, the hash of its URL,
// model and dimension, so that vectors of one model are never compared
// with another's.
#pragma once

#include <chrono>              // std::chrono::milliseconds
#include <condition_variable>  // std::condition_variable_any (the refresher's pause)
#include <cstdio>              // std::snprintf
#include <exception>           // std::exception
#include <filesystem>          // std::filesystem
#include <memory>              // std::unique_ptr
#include <mutex>               // std::mutex, std::unique_lock
#include <stop_token>          // std::stop_token
#include <string>              // std::string
#include <string_view>         // std::string_view
#include <system_error>        // std::error_code

#include "llmgate/cache/exact_cache.hpp"              // exact_cache
#include "llmgate/cache/learned_verifier.hpp"         // learned_verifier
#include "llmgate/cache/semantic_cache.hpp"           // semantic_cache_options
#include "llmgate/detail/xxhash.hpp"                  // XXH3_64bits
#include "llmgate/embed/external_embedder.hpp"        // external_embedder
#include "llmgate/embed/hashing_embedder.hpp"         // hashing_embedder
#include "llmgate/pipeline/cached_answer.hpp"         // cached_answer
#include "llmgate/server/caches/cache_policies.hpp"   // gateway_eviction, eviction_of, threshold_of, cache_clock
#include "llmgate/server/gateway_config.hpp"          // gateway_config
#include "llmgate/server/caches/remote_embedder.hpp"  // probe_remote_embedder
#include "llmgate/server/operations/request_log.hpp"  // request_log
#include "llmgate/server/caches/semantic_tier.hpp"    // gateway_semantic_cache, gateway_hashing_cache, gateway_remote_cache

namespace llmgate::inline v0 {

using gateway_exact_cache = exact_cache<cached_answer, gateway_eviction>;

/// Loads the snapshot at `path`, when there is one, with `load(path)`
/// (which returns the entries it holds, for the log line); a file that
/// cannot be read is moved aside (renamed *.unreadable) with a log line,
/// and what it held starts empty. `what` names it in the log ("exact").
template <class Load>
void load_snapshot(const std::filesystem::path& path, std::string_view what, request_log& log, Load load) {
  if (!std::filesystem::exists(path)) return;
  try {
    const std::size_t entries = load(path);
    log.event("snapshot_loaded", {{"cache", what}, {"entries", entries}});
  } catch (const std::exception& e) {
    auto aside = path;
    aside += ".unreadable";
    std::error_code ignored;
    std::filesystem::rename(path, aside, ignored);
    log.event("snapshot_unreadable", {{"cache", what}, {"error", e.what()}, {"moved_to", aside.string()}});
  }
}

/// The log line of a snapshot saved (or not: `problem`).
inline void log_snapshot_saved(request_log& log, std::string_view what, std::error_code problem, std::size_t entries) {
  if (problem) log.event("snapshot_failed", {{"cache", what}, {"error", problem.message()}});
  else log.event("snapshot_saved", {{"cache", what}, {"entries", entries}});
}

class gateway_caches {
 public:
  /// Builds or loads both tiers. Throws llmgate::error naming the config
  /// field when the embedder cannot be used.
  gateway_caches(const gateway_config& config, cache_clock clock, request_log& log)
      : config_(config), clock_(std::move(clock)), log_(log), exact_(load_exact()), semantic_(load_semantic()) {}

  gateway_exact_cache& exact() noexcept { return *exact_; }
  const gateway_exact_cache& exact() const noexcept { return *exact_; }
  gateway_semantic_cache& semantic() noexcept { return semantic_; }
  const gateway_semantic_cache& semantic() const noexcept { return semantic_; }

  /// Saves both tiers to the snapshot directory (when one is set), with a
  /// log line each.
  void save() {
    if (!config_.snapshot.directory) return;
    std::error_code ec;
    std::filesystem::create_directories(*config_.snapshot.directory, ec);
    log_snapshot_saved(log_, "exact", exact_->save(path_of("exact")), exact_->size());
    log_snapshot_saved(log_, "semantic", semantic_.save(path_of(semantic_file())), semantic_.size());
  }

  /// Replaces the semantic cache with the one `bytes` hold (what
  /// save_bytes() made on another replica; the shared tier keeps it in
  /// Redis), under this config's policies. Only before the gateway serves:
  /// the pipelines hold the cache by reference. Throws llmgate::error
  /// naming `source` when the bytes are not such a cache.
  void adopt_semantic_snapshot(std::string bytes, const std::string& source) {
    if (semantic_.hashing()) {
      auto loaded = load_bytes_as<gateway_hashing_cache>(std::move(bytes), source, [&] {
        return hashing_embedder({.dimension = config_.semantic_cache.embedder.dimension});
      });
      semantic_ = gateway_semantic_cache(std::move(loaded));
    } else {
      auto loaded = load_bytes_as<gateway_remote_cache>(std::move(bytes), source,
                                                        [&] { return external_embedder(config_.semantic_cache.embedder.dimension); });
      semantic_ = gateway_semantic_cache(std::move(loaded));
    }
    log_.event("snapshot_loaded", {{"cache", "semantic"}, {"from", source}, {"entries", semantic_.size()}});
  }

  /// Re-embeds the semantic cache under new weights whenever they are
  /// due, checking a few times a second, until `stop`: on the caller's
  /// thread, so that re-embedding every stored request (scripts/bench
  /// cache times it) keeps no request waiting. Only a learning embedder (kind "hashing") needs it.
  void refresh_until(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any pause;
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      try {
        semantic_.refresh();
      } catch (const std::exception& e) {  // out of memory, say: the cache keeps its weights and tries again
        log_.event("refresh_failed", {{"error", e.what()}});
      }
      pause.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; });
    }
  }

 private:
  std::filesystem::path path_of(std::string_view cache) const {
    return *config_.snapshot.directory / (std::string(cache) + ".snapshot");
  }

  exact_cache_options exact_options() const {
    return {.max_entries = config_.exact_cache.max_entries, .max_bytes = config_.exact_cache.max_bytes};
  }
  gateway_eviction exact_eviction() const { return eviction_of(config_.exact_cache.eviction, clock_); }

  // The refresher (refresh_until), not a request, re-embeds the stored
  // requests when the embedder's weights are due.
  // A fitted verifier is asked only about neighbours that have a chance.
  semantic_cache_options semantic_options() const {
    return {.max_entries = config_.semantic_cache.max_entries,
            .max_bytes = config_.semantic_cache.max_bytes,
            .prefilter_similarity = fitted_verifier() ? learned_verifier::advised_prefilter : 0.0f,
            .refresh_in_insert = false};
  }
  bool fitted_verifier() const {
    return config_.semantic_cache.verifier != "default" && config_.semantic_cache.verifier != "none";
  }
  // Throws llmgate::error naming a weights file that cannot be read.
  learned_verifier verifier() const {
    if (config_.semantic_cache.verifier == "none") return learned_verifier({.learn = false});
    if (!fitted_verifier()) return learned_verifier();
    return learned_verifier::load(config_.semantic_cache.verifier);
  }
  bool remote() const { return config_.semantic_cache.embedder.kind == "openai"; }
  std::string semantic_file() const {
    if (!remote()) return "semantic";
    const auto& e = config_.semantic_cache.embedder;
    const std::string identity = e.base_url + '\n' + e.model + '\n' + std::to_string(e.dimension);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(identity.data(), identity.size())));
    return std::string("semantic_openai_") + hash;
  }
  configured_threshold threshold() const {
    return threshold_of(config_.semantic_cache.threshold);
  }
  gateway_eviction semantic_eviction() const { return eviction_of(config_.semantic_cache.eviction, clock_); }
  default_index_factory graphs() const { return default_index_factory{config_.semantic_cache.hnsw}; }

  // Loads a snapshot with `load`, or makes an empty cache with `make`.
  template <class Cache, class Load, class Make>
  std::unique_ptr<Cache> load_or_make(std::string_view cache, Load load, Make make) {
    std::unique_ptr<Cache> loaded;
    if (config_.snapshot.directory)
      load_snapshot(path_of(cache), cache, log_, [&](const auto& path) {
        loaded.reset(new Cache(load(path)));
        return loaded->size();
      });
    return loaded ? std::move(loaded) : std::unique_ptr<Cache>(new Cache(make()));
  }

  std::unique_ptr<gateway_exact_cache> load_exact() {
    return load_or_make<gateway_exact_cache>(
        "exact", [&](const auto& path) { return gateway_exact_cache::load(path, exact_options(), exact_eviction()); },
        [&] { return gateway_exact_cache(exact_options(), exact_eviction()); });
  }

  gateway_semantic_cache load_semantic() {
    const auto dimension = config_.semantic_cache.embedder.dimension;
    if (remote()) {
      if (config_.semantic_cache.enabled) probe_remote_embedder(config_.semantic_cache.embedder);
      return gateway_semantic_cache(load_semantic_as<gateway_remote_cache>([=] { return external_embedder(dimension); }));
    }
    return gateway_semantic_cache(
        load_semantic_as<gateway_hashing_cache>([=] { return hashing_embedder({.dimension = dimension}); }));
  }

  // `embedder()` makes the cache's embedder (a learning one cannot be copied).
  template <class Cache, class MakeEmbedder>
  std::unique_ptr<Cache> load_semantic_as(MakeEmbedder embedder) {
    // Read before any snapshot, so that a bad weights file stops the start
    // and is never taken for a bad snapshot.
    const learned_verifier verifies = verifier();
    return load_or_make<Cache>(
        semantic_file(),
        [&](const auto& path) {
          return Cache::load(path, semantic_options(), embedder(), threshold(), verifies, {}, semantic_eviction(),
                             graphs());
        },
        [&] {
          return Cache(semantic_options(), embedder(), threshold(), verifies, {}, semantic_eviction(), graphs());
        });
  }

  template <class Cache, class MakeEmbedder>
  std::unique_ptr<Cache> load_bytes_as(std::string bytes, const std::string& source, MakeEmbedder embedder) {
    return std::unique_ptr<Cache>(new Cache(Cache::load_bytes(std::move(bytes), source, semantic_options(), embedder(),
                                                              threshold(), verifier(), {}, semantic_eviction(),
                                                              graphs())));
  }

  const gateway_config& config_;
  cache_clock clock_;
  request_log& log_;
  std::unique_ptr<gateway_exact_cache> exact_;
  gateway_semantic_cache semantic_;
};

}  // namespace llmgate::inline v0
