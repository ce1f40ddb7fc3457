// cost_aware_eviction: keeps what was expensive to compute, per byte it
// occupies, weighted by how often it is asked for: GreedyDual-Size-Frequency
// (Cherkasova, 1998).
//
// Model: each entry has the priority
//     H = L + frequency * cost / bytes
// where frequency counts the insert and every hit, cost is what the answer
// cost to produce (entry_info::cost: tokens, money or time) and bytes what
// it holds. The victim is the entry of smallest H (ties: the oldest first).
// L, the inflation clock, starts at 0 and rises to the H of each victim, so
// an entry's priority is fixed when it is last inserted or hit while new and
// refreshed entries start higher: entries that stop being asked for age out
// even when they were expensive. O(log n) per operation. Nothing expires.
#pragma once

#include <algorithm>  // std::max
#include <compare>    // operator<=>
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <optional>   // std::optional
#include <vector>     // std::vector

#include "llmgate/cache/eviction/detail/handle_heap.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0 {

class cost_aware_eviction {
 public:
  void insert(entry_handle handle, const entry_info& info) {
    if (handle >= value_.size()) value_.resize(std::size_t{handle} + 1);
    // A negative or NaN cost counts as free; an empty entry as one byte.
    const double cost = info.cost > 0 ? info.cost : 0.0;
    value_[handle] = {cost / static_cast<double>(std::max<std::size_t>(info.bytes, 1)),
                      info.hits + 1};
    order_.push(handle, {priority_of(handle), next_age_++});
  }

  void touch(entry_handle handle) {
    ++value_[handle].frequency;
    order_.update(handle, {priority_of(handle), order_.priority(handle).age});
  }

  void erase(entry_handle handle) { order_.erase(handle); }

  void clear() noexcept {
    order_.clear();
    value_.clear();
    inflation_ = 0;
  }

  std::optional<entry_handle> pop_victim() {
    const auto victim = order_.top();
    if (!victim) return victim;
    inflation_ = order_.priority(*victim).priority;
    order_.erase(*victim);
    return victim;
  }

  std::optional<entry_handle> pop_expired() const noexcept { return std::nullopt; }
  bool is_expired(entry_handle) const noexcept { return false; }

  /// L, the priority of the last victim; exposed for tests and reports.
  double inflation() const noexcept { return inflation_; }

 private:
  struct worth {
    double cost_per_byte = 0;
    std::uint64_t frequency = 1;
  };

  struct rank {
    double priority = 0;
    std::uint64_t age = 0;  // insertion order: among equal priorities the oldest leaves first
    friend auto operator<=>(const rank&, const rank&) = default;
  };

  double priority_of(entry_handle handle) const noexcept {
    const auto& w = value_[handle];
    return inflation_ + static_cast<double>(w.frequency) * w.cost_per_byte;
  }

  detail::handle_heap<rank> order_;
  std::vector<worth> value_;  // by handle
  double inflation_ = 0;      // L
  std::uint64_t next_age_ = 0;
};

static_assert(EvictionPolicy<cost_aware_eviction>);

}  // namespace llmgate::inline v0
