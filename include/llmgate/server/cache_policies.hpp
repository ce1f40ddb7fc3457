// The gateway's cache policies, chosen at run time from the config
// (eviction lru | lfu | cost_aware, with an optional lifetime; threshold
// static | adaptive) while the caches' types stay fixed at compile time:
//
//   gateway_eviction   an EvictionPolicy holding one of lru_eviction,
//                      lfu_eviction, cost_aware_eviction, each alone or
//                      under expiring<> when ttl_seconds is set;
//   gateway_threshold  a PersistentThreshold holding static_threshold or
//                      adaptive_threshold. A snapshot written under the
//                      static policy has the bytes it had before this
//                      policy existed (a static threshold learns nothing);
//                      the adaptive policy writes a marker, then what it
//                      learned, so a file saved under the other policy is
//                      refused rather than misread;
//   cache_clock        the steady clock lifetimes are measured by, which a
//                      test may move forward instead of sleeping.
//
// Each call is one switch over a std::variant: no allocation, no lock
// beyond the chosen policy's own.
#pragma once

#include <algorithm> // std::min
#include <atomic>    // std::atomic (the clock's offset)
#include <chrono>    // std::chrono::steady_clock
#include <cstdint>   // std::uint64_t
#include <memory>    // std::shared_ptr
#include <optional>  // std::optional
#include <utility>   // std::move
#include <variant>   // std::variant, std::visit

#include "llmgate/cache/eviction/cost_aware.hpp"       // cost_aware_eviction
#include "llmgate/cache/eviction/eviction_policy.hpp"  // EvictionPolicy, entry_handle, entry_info
#include "llmgate/cache/eviction/lfu.hpp"              // lfu_eviction
#include "llmgate/cache/eviction/lru.hpp"              // lru_eviction
#include "llmgate/cache/eviction/ttl.hpp"              // expiring, SteadyClock
#include "llmgate/cache/threshold.hpp"                 // static_threshold, adaptive_threshold
#include "llmgate/error.hpp"                           // llmgate::error
#include "llmgate/server/config.hpp"                   // eviction_config, threshold_config

namespace llmgate::inline v0 {

/// Steady time plus an offset that only moves forward; copies share it.
struct cache_clock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr bool is_steady = true;

  /// A clock a test can move (advance); a default one cannot.
  static cache_clock adjustable() { return cache_clock{std::make_shared<std::atomic<rep>>(0)}; }

  time_point now() const noexcept {
    const auto t = std::chrono::steady_clock::now();
    return offset ? t + duration(offset->load(std::memory_order_relaxed)) : t;
  }
  /// Moves an adjustable clock forward by `by`.
  void advance(duration by) const {
    if (!offset) throw error(errc::invalid_request, "cache_clock: only an adjustable() clock can be moved");
    offset->fetch_add(by.count(), std::memory_order_relaxed);
  }

  std::shared_ptr<std::atomic<rep>> offset = {};
};
static_assert(SteadyClock<cache_clock>);

class gateway_eviction {
 public:
  gateway_eviction() = default;

  /// Throws llmgate::error for a policy name config.hpp does not know.
  gateway_eviction(const eviction_config& config, cache_clock clock) {
    const bool expires = config.ttl_seconds > 0;
    const auto lifetime = std::chrono::duration_cast<cache_clock::duration>(std::chrono::duration<double>(config.ttl_seconds));
    if (config.policy == "lru") {
      if (expires) policy_.emplace<expiring<lru_eviction, cache_clock>>(lifetime, ttl_refresh::never, clock);
    } else if (config.policy == "lfu") {
      if (expires) policy_.emplace<expiring<lfu_eviction, cache_clock>>(lifetime, ttl_refresh::never, clock);
      else policy_.emplace<lfu_eviction>();
    } else if (config.policy == "cost_aware") {
      if (expires) policy_.emplace<expiring<cost_aware_eviction, cache_clock>>(lifetime, ttl_refresh::never, clock);
      else policy_.emplace<cost_aware_eviction>();
    } else {
      throw error(errc::invalid_request, "eviction policy \"" + config.policy + "\" is not lru, lfu or cost_aware");
    }
  }

  void insert(entry_handle handle, const entry_info& info) {
    std::visit([&](auto& p) { p.insert(handle, info); }, policy_);
  }
  void touch(entry_handle handle) {
    std::visit([&](auto& p) { p.touch(handle); }, policy_);
  }
  void erase(entry_handle handle) {
    std::visit([&](auto& p) { p.erase(handle); }, policy_);
  }
  void clear() {
    std::visit([](auto& p) { p.clear(); }, policy_);
  }
  std::optional<entry_handle> pop_victim() {
    return std::visit([](auto& p) -> std::optional<entry_handle> { return p.pop_victim(); }, policy_);
  }
  std::optional<entry_handle> pop_expired() {
    return std::visit([](auto& p) -> std::optional<entry_handle> { return p.pop_expired(); }, policy_);
  }
  bool is_expired(entry_handle handle) const {
    return std::visit([&](const auto& p) { return p.is_expired(handle); }, policy_);
  }

 private:
  std::variant<lru_eviction, lfu_eviction, cost_aware_eviction, expiring<lru_eviction, cache_clock>,
               expiring<lfu_eviction, cache_clock>, expiring<cost_aware_eviction, cache_clock>>
      policy_;
};
static_assert(EvictionPolicy<gateway_eviction>);

class gateway_threshold {
 public:
  gateway_threshold() = default;

  /// Throws llmgate::error for a policy name config.hpp does not know.
  explicit gateway_threshold(const threshold_config& config, double static_value) {
    if (config.policy == "static") {
      policy_.emplace<static_threshold>(static_threshold{static_cast<float>(static_value)});
    } else if (config.policy == "adaptive") {
      adaptive_threshold_options options;
      options.error_bound = static_cast<float>(config.error_bound);
      if (config.value_given) options.start_threshold = static_cast<float>(config.value);
      options.floor = std::min(options.floor, options.start_threshold);
      policy_.emplace<adaptive_threshold>(options);
    } else {
      throw error(errc::invalid_request, "threshold policy \"" + config.policy + "\" is not static or adaptive");
    }
  }

  threshold_decision decide(const hash128& scope, entry_handle entry, float similarity) const {
    return std::visit([&](const auto& p) { return p.decide(scope, entry, similarity); }, policy_);
  }
  void record(const hash128& scope, entry_handle entry, float similarity, bool correct) {
    std::visit([&](auto& p) { p.record(scope, entry, similarity, correct); }, policy_);
  }
  void forget(entry_handle entry) {
    std::visit([&](auto& p) { p.forget(entry); }, policy_);
  }

  void save_to(store::snapshot_writer& out) const {
    if (const auto* adaptive = std::get_if<adaptive_threshold>(&policy_)) {
      out.write(adaptive_marker);
      adaptive->save_to(out);
    }
  }
  void restore_from(store::snapshot_reader& in) {
    if (auto* adaptive = std::get_if<adaptive_threshold>(&policy_)) {
      if (in.remaining() < sizeof(std::uint64_t) || in.read<std::uint64_t>() != adaptive_marker) return in.mark_corrupt();
      adaptive->restore_from(in);
    }
  }

  /// The adaptive policy, when it is the one in force (its threshold moves with feedback).
  const adaptive_threshold* adaptive() const noexcept { return std::get_if<adaptive_threshold>(&policy_); }
  /// The static policy, when it is the one in force.
  const static_threshold* fixed() const noexcept { return std::get_if<static_threshold>(&policy_); }

 private:
  static constexpr std::uint64_t adaptive_marker = 0x6c6c6d67'61647074;  // "llmgadpt"

  // adaptive_threshold holds a mutex: the variant is built in place, never copied after.
  std::variant<static_threshold, adaptive_threshold> policy_;
};
static_assert(PersistentThreshold<gateway_threshold>);

}  // namespace llmgate::inline v0
