// gateway_semantic_cache: the gateway's semantic cache, whose type depends
// on the config's embedder kind:
//
//   "hashing"  gateway_hashing_cache: the built-in learning embedder,
//              embedded on the io thread (it waits on nothing), its new
//              weights applied by the gateway's refresher thread, saved in
//              the snapshot with the entries;
//   "openai"   gateway_remote_cache: external_embedder{dimension}; every
//              vector comes from the worker's async_http_embedder
//              (remote_embedder.hpp), awaited with nothing held, and is
//              stored with its entry, so a snapshot needs nothing else.
//
// Everything that reads the cache (stats, /metrics, snapshots, the
// adaptive threshold) goes through this class; what differs per kind is
// reached through visit(), hashing() or remote(). The pipeline holds one
// gateway_semantic_stage: one_of_stage over the two semantic_cache_stage
// types, a variant switch per request.
#pragma once

#include <cstddef>       // std::size_t
#include <filesystem>    // std::filesystem::path
#include <memory>        // std::unique_ptr
#include <optional>      // std::optional
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <variant>       // std::variant, std::visit, std::get_if

#include "llmgate/cache/configured_threshold.hpp"     // configured_threshold
#include "llmgate/cache/learned_verifier.hpp"         // learned_verifier
#include "llmgate/cache/semantic_cache.hpp"           // basic_semantic_cache, semantic_cache_statistics
#include "llmgate/embed/external_embedder.hpp"        // external_embedder
#include "llmgate/embed/hashing_embedder.hpp"         // hashing_embedder
#include "llmgate/pipeline/cached_answer.hpp"         // cached_answer
#include "llmgate/pipeline/one_of_stage.hpp"          // one_of_stage
#include "llmgate/pipeline/semantic_cache_stage.hpp"  // semantic_cache_stage
#include "llmgate/server/caches/cache_policies.hpp"   // gateway_eviction
#include "llmgate/server/caches/remote_embedder.hpp"  // gateway_remote_embedder

namespace llmgate::inline v0 {

using gateway_hashing_cache = basic_semantic_cache<cached_answer, hashing_embedder, default_index_factory,
                                                   gateway_eviction, configured_threshold, learned_verifier>;
using gateway_remote_cache = basic_semantic_cache<cached_answer, external_embedder, default_index_factory,
                                                  gateway_eviction, configured_threshold, learned_verifier>;

/// The semantic cache stage of a gateway's pipeline, for either kind.
using gateway_semantic_stage = one_of_stage<semantic_cache_stage<gateway_hashing_cache>,
                                            semantic_cache_stage<gateway_remote_cache, gateway_remote_embedder>>;

class gateway_semantic_cache {
 public:
  explicit gateway_semantic_cache(std::unique_ptr<gateway_hashing_cache> cache) : cache_(std::move(cache)) {}
  explicit gateway_semantic_cache(std::unique_ptr<gateway_remote_cache> cache) : cache_(std::move(cache)) {}

  /// The cache of kind "hashing", or nullptr.
  gateway_hashing_cache* hashing() noexcept { return get<gateway_hashing_cache>(); }
  const gateway_hashing_cache* hashing() const noexcept { return get<gateway_hashing_cache>(); }
  /// The cache of kind "openai", or nullptr.
  gateway_remote_cache* remote() noexcept { return get<gateway_remote_cache>(); }
  const gateway_remote_cache* remote() const noexcept { return get<gateway_remote_cache>(); }

  /// f(cache) with the cache of whichever kind it is.
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit([&](auto& cache) -> decltype(auto) { return f(*cache); }, cache_);
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit([&](const auto& cache) -> decltype(auto) { return f(std::as_const(*cache)); }, cache_);
  }

  std::size_t size() const {
    return visit([](const auto& cache) { return cache.size(); });
  }
  semantic_cache_statistics statistics() const {
    return visit([](const auto& cache) { return cache.statistics(); });
  }
  const configured_threshold& threshold_policy() const {
    return visit([](const auto& cache) -> const configured_threshold& { return cache.threshold_policy(); });
  }
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    return visit([&](const auto& cache) { return cache.save(path); });
  }

  /// Tells `observer` of every change the cache makes on its own (the
  /// shared tier); nullptr: no one.
  void observe(semantic_cache_observer<cached_answer>* observer) {
    visit([&](auto& cache) { cache.observe(observer); });
  }

  /// Whether its embedder learns, so that a refresher thread has work.
  bool learns() const noexcept { return hashing() != nullptr; }
  /// Applies the embedder's new weights when they are due (hashing only).
  bool refresh() {
    return visit([](auto& cache) { return cache.refresh(); });
  }

  /// The pipeline stage over this cache: the hashing cache embeds with
  /// its own embedder; the remote one awaits `remote_embedder`, which
  /// must then be given.
  gateway_semantic_stage stage(const std::optional<gateway_remote_embedder>& remote_embedder) {
    if (auto* own = hashing()) return gateway_semantic_stage(semantic_cache_stage(*own));
    return gateway_semantic_stage(semantic_cache_stage(*remote(), remote_embedder.value()));
  }

 private:
  template <class Cache>
  Cache* get() const noexcept {
    const auto* held = std::get_if<std::unique_ptr<Cache>>(&cache_);
    return held ? held->get() : nullptr;
  }

  std::variant<std::unique_ptr<gateway_hashing_cache>, std::unique_ptr<gateway_remote_cache>> cache_;
};

}  // namespace llmgate::inline v0
