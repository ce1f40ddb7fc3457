// The gateway's cache policies, chosen at run time from the config while
// the caches' types stay fixed at compile time: the core's configured
// policies (cache/eviction/configured.hpp, cache/configured_threshold.hpp)
// on cache_clock, the steady clock lifetimes are measured by, which a test
// may move forward instead of sleeping.
#pragma once

#include <algorithm>  // std::min
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // std::uint32_t
#include <optional>   // std::optional

#include "llmgate/cache/configured_threshold.hpp"  // configured_threshold
#include "llmgate/cache/eviction/configured.hpp"   // basic_configured_eviction, eviction_kind_named
#include "llmgate/cache/eviction/ttl.hpp"          // SteadyClock
#include "llmgate/detail/adjustable_clock.hpp"     // detail::adjustable_clock
#include "llmgate/config/config_error.hpp"         // config_error
#include "llmgate/server/caches/cache_config.hpp"  // eviction_config, threshold_config

namespace llmgate::inline v0 {

/// Steady time, which a test may move forward (detail::adjustable_clock).
using cache_clock = detail::adjustable_clock<std::chrono::steady_clock>;
static_assert(SteadyClock<cache_clock>);

using gateway_eviction = basic_configured_eviction<cache_clock>;

/// The eviction policy a config section names. gateway_config::check has
/// refused any other name by the same eviction_kind_named; the throw only
/// guards a config that skipped it.
inline gateway_eviction eviction_of(const eviction_config& config, cache_clock clock) {
  const auto kind = eviction_kind_named(config.policy);
  if (!kind) throw config_error("config: eviction policy \"" + config.policy + "\" is not lru, lfu or cost_aware");
  std::optional<cache_clock::duration> lifetime;
  if (config.ttl_seconds > 0)
    lifetime = std::chrono::duration_cast<cache_clock::duration>(std::chrono::duration<double>(config.ttl_seconds));
  return gateway_eviction(*kind, lifetime, ttl_refresh::never, std::move(clock));
}

/// The threshold policy a config section names (checked as eviction_of's is).
inline configured_threshold threshold_of(const threshold_config& config) {
  const auto kind = threshold_kind_named(config.policy);
  if (!kind)
    throw config_error("config: threshold policy \"" + config.policy + "\" is not static, adaptive or error_bound");
  if (*kind == threshold_kind::fixed) return configured_threshold::fixed(static_cast<float>(config.value));
  if (*kind == threshold_kind::error_bound)
    return configured_threshold::error_bounded({.bound = static_cast<float>(config.bound)});
  adaptive_threshold_options options;
  options.error_bound = static_cast<float>(config.error_bound);
  options.min_feedback = static_cast<std::uint32_t>(config.min_feedback);
  if (config.value_given) options.start_threshold = static_cast<float>(config.value);
  options.floor = std::min(options.floor, options.start_threshold);
  return configured_threshold::adaptive(options);
}

}  // namespace llmgate::inline v0
