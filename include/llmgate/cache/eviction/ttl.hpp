// Lifetimes: ttl_eviction expires entries a fixed duration after they were
// inserted (or last hit, with ttl_refresh::on_hit); expiring<Policy> gives
// any other policy's entries the same lifetimes while that policy still
// picks the victims when the cache is full.
//
// Model: every entry has a deadline, now + lifetime, set on insert and, with
// refresh on hit, on every hit; it is expired once the clock reaches its
// deadline. As one lifetime serves all entries and the clock never goes
// back, deadline order is the order of the last insert or refresh, so a
// linked list keeps them sorted in O(1) per operation. ttl_eviction's
// victim, when the cache is full before anything expires, is the entry
// closest to its deadline: first in, first out without refresh, least
// recently used with it.
//
// Time comes from a Clock object (std::chrono::steady_clock by default) so
// tests can move time by hand; it must be steady, as a clock that jumps back
// would break the deadline order, and safe to call from several threads.
#pragma once

#include <chrono>    // std::chrono::steady_clock
#include <concepts>  // std::copyable, std::same_as
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <utility>   // std::move
#include <vector>    // std::vector

#include "llmgate/cache/eviction/detail/handle_list.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0 {

/// A clock read through an object (so a test's clock can carry state) that
/// never goes back.
template <class C>
concept SteadyClock = C::is_steady && std::copyable<C> && requires(const C& clock) {
  typename C::duration;
  typename C::time_point;
  { clock.now() } -> std::same_as<typename C::time_point>;
};

/// Whether a hit pushes an entry's deadline back.
enum class ttl_refresh { never, on_hit };

template <SteadyClock Clock = std::chrono::steady_clock>
class ttl_eviction {
 public:
  using duration = typename Clock::duration;

  explicit ttl_eviction(duration lifetime, ttl_refresh refresh = ttl_refresh::never,
                        Clock clock = {})
      : lifetime_(lifetime), refresh_(refresh), clock_(std::move(clock)) {}

  void insert(entry_handle handle, const entry_info&) {
    if (handle >= deadline_.size()) deadline_.resize(std::size_t{handle} + 1);
    deadline_[handle] = clock_.now() + lifetime_;
    by_deadline_.push_back(handle);
  }

  void touch(entry_handle handle) {
    if (refresh_ == ttl_refresh::never) return;
    deadline_[handle] = clock_.now() + lifetime_;
    by_deadline_.move_to_back(handle);
  }

  void erase(entry_handle handle) noexcept { by_deadline_.erase(handle); }
  void clear() noexcept {
    by_deadline_.clear();
    deadline_.clear();
  }

  std::optional<entry_handle> pop_victim() noexcept {
    const auto victim = by_deadline_.front();
    if (victim) by_deadline_.erase(*victim);
    return victim;
  }

  std::optional<entry_handle> pop_expired() {
    const auto first = by_deadline_.front();
    if (!first || !is_expired(*first)) return std::nullopt;
    by_deadline_.erase(*first);
    return first;
  }

  bool is_expired(entry_handle handle) const { return deadline_[handle] <= clock_.now(); }

 private:
  duration lifetime_;
  ttl_refresh refresh_;
  Clock clock_;
  detail::handle_list by_deadline_;                 // earliest deadline first
  std::vector<typename Clock::time_point> deadline_;  // by handle
};

static_assert(EvictionPolicy<ttl_eviction<>>);

/// Policy decides who leaves a full cache; entries also expire after
/// `lifetime`, e.g. expiring<lfu_eviction> or expiring<cost_aware_eviction>.
template <EvictionPolicy Policy, SteadyClock Clock = std::chrono::steady_clock>
class expiring {
 public:
  using duration = typename Clock::duration;

  explicit expiring(duration lifetime, ttl_refresh refresh = ttl_refresh::never, Clock clock = {},
                    Policy policy = {})
      : lifetimes_(lifetime, refresh, std::move(clock)), policy_(std::move(policy)) {}

  void insert(entry_handle handle, const entry_info& info) {
    policy_.insert(handle, info);
    lifetimes_.insert(handle, info);
  }

  void touch(entry_handle handle) {
    policy_.touch(handle);
    lifetimes_.touch(handle);
  }

  void erase(entry_handle handle) {
    policy_.erase(handle);
    lifetimes_.erase(handle);
  }

  void clear() {
    policy_.clear();
    lifetimes_.clear();
  }

  std::optional<entry_handle> pop_victim() {
    const auto victim = policy_.pop_victim();
    if (victim) lifetimes_.erase(*victim);
    return victim;
  }

  std::optional<entry_handle> pop_expired() {
    const auto expired = lifetimes_.pop_expired();
    if (expired) policy_.erase(*expired);
    return expired;
  }

  bool is_expired(entry_handle handle) const { return lifetimes_.is_expired(handle); }

 private:
  ttl_eviction<Clock> lifetimes_;
  Policy policy_;
};

}  // namespace llmgate::inline v0
