// configured_eviction: an EvictionPolicy chosen at run time, for caches
// whose policy comes from a configuration file (the gateway's
// "eviction": {"policy": "lru" | "lfu" | "cost_aware"}, "ttl_seconds").
//
// Model: it holds exactly one of the compile-time policies and forwards
// every call to it, so it behaves as that policy does, victim for victim:
//   lru        -> lru_eviction
//   lfu        -> lfu_eviction
//   cost_aware -> cost_aware_eviction
// and, with a lifetime, the same policy wrapped as expiring<Policy> wraps
// it (entries also expire `ttl` after insert, or after their last hit with
// ttl_refresh::on_hit, while the policy still picks the victims of a full
// cache). The choice is a std::variant: one indirect branch per call, no
// allocation, copyable as EvictionPolicy asks.
//
//   configured_eviction lru;                                        // "lru", no lifetime
//   auto kind = eviction_kind_named("lfu");                         // nullopt for an unknown name
//   configured_eviction lfu_hour(*kind, std::chrono::seconds(3600));
#pragma once

#include <chrono>       // std::chrono::steady_clock, std::chrono::seconds
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <variant>      // std::variant, std::visit

#include "llmgate/cache/eviction/cost_aware.hpp"       // cost_aware_eviction
#include "llmgate/cache/eviction/eviction_policy.hpp"  // EvictionPolicy, entry_handle, entry_info
#include "llmgate/cache/eviction/lfu.hpp"              // lfu_eviction
#include "llmgate/cache/eviction/lru.hpp"              // lru_eviction
#include "llmgate/cache/eviction/ttl.hpp"              // expiring, ttl_refresh, SteadyClock

namespace llmgate::inline v0 {

/// The eviction policies a configuration can name.
enum class eviction_kind { lru, lfu, cost_aware };

/// The kind a configuration names ("lru", "lfu", "cost_aware"); nullopt
/// for any other name, so that the caller can say which field is wrong.
constexpr std::optional<eviction_kind> eviction_kind_named(std::string_view name) noexcept {
  if (name == "lru") return eviction_kind::lru;
  if (name == "lfu") return eviction_kind::lfu;
  if (name == "cost_aware") return eviction_kind::cost_aware;
  return std::nullopt;
}

/// The name eviction_kind_named() reads back.
constexpr std::string_view eviction_kind_name(eviction_kind kind) noexcept {
  switch (kind) {
    case eviction_kind::lru: return "lru";
    case eviction_kind::lfu: return "lfu";
    case eviction_kind::cost_aware: return "cost_aware";
  }
  return "lru";
}

template <SteadyClock Clock = std::chrono::steady_clock>
class basic_configured_eviction {
 public:
  using duration = typename Clock::duration;

  /// `kind`'s policy; with a `ttl`, its entries also expire that long after
  /// insert (or after their last hit, with ttl_refresh::on_hit). Throws
  /// std::invalid_argument for a ttl that is not positive.
  explicit basic_configured_eviction(eviction_kind kind = eviction_kind::lru,
                                     std::optional<duration> ttl = std::nullopt,
                                     ttl_refresh refresh = ttl_refresh::never, Clock clock = {})
      : kind_(kind), ttl_(ttl), policy_(make(kind, ttl, refresh, std::move(clock))) {}

  eviction_kind kind() const noexcept { return kind_; }
  std::optional<duration> ttl() const noexcept { return ttl_; }

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
    return std::visit([&](const auto& p) -> bool { return p.is_expired(handle); }, policy_);
  }

 private:
  using policy_variant =
      std::variant<lru_eviction, lfu_eviction, cost_aware_eviction, expiring<lru_eviction, Clock>,
                   expiring<lfu_eviction, Clock>, expiring<cost_aware_eviction, Clock>>;

  static policy_variant make(eviction_kind kind, std::optional<duration> ttl, ttl_refresh refresh, Clock clock) {
    if (ttl && *ttl <= duration::zero())
      throw std::invalid_argument("configured_eviction: a ttl must be positive");
    const auto expiring_after = [&]<class Policy>(Policy) -> policy_variant {
      if (!ttl) return Policy{};
      return expiring<Policy, Clock>(*ttl, refresh, std::move(clock));
    };
    switch (kind) {
      case eviction_kind::lfu: return expiring_after(lfu_eviction{});
      case eviction_kind::cost_aware: return expiring_after(cost_aware_eviction{});
      case eviction_kind::lru: break;
    }
    return expiring_after(lru_eviction{});
  }

  eviction_kind kind_;
  std::optional<duration> ttl_;
  policy_variant policy_;
};

/// configured_eviction on the steady clock.
using configured_eviction = basic_configured_eviction<>;

static_assert(EvictionPolicy<configured_eviction>);

}  // namespace llmgate::inline v0
