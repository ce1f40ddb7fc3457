// lfu_eviction: evicts the least frequently used entry; among entries hit
// equally often, the oldest (the one inserted first) leaves first, since it
// had the most time to prove itself and did not.
//
// Model: a min-heap ordered by (hits, insertion order); a hit adds one and
// sinks the entry. Insert, hit and eviction are O(log n). Nothing expires.
// Good when popularity is stable (the same questions asked all day); an
// entry that was popular once stays until its count is beaten, so pair it
// with a lifetime (expiring<lfu_eviction>) where popularity drifts.
#pragma once

#include <compare>   // operator<=>
#include <cstdint>   // std::uint64_t
#include <optional>  // std::optional

#include "llmgate/cache/eviction/detail/handle_heap.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0 {

class lfu_eviction {
 public:
  void insert(entry_handle handle, const entry_info& info) {
    order_.push(handle, {info.hits, next_age_++});
  }

  void touch(entry_handle handle) {
    auto rank = order_.priority(handle);
    ++rank.hits;
    order_.update(handle, rank);
  }

  void erase(entry_handle handle) { order_.erase(handle); }
  void clear() noexcept { order_.clear(); }

  std::optional<entry_handle> pop_victim() {
    const auto victim = order_.top();
    if (victim) order_.erase(*victim);
    return victim;
  }

  std::optional<entry_handle> pop_expired() const noexcept { return std::nullopt; }
  bool is_expired(entry_handle) const noexcept { return false; }

 private:
  struct rank {
    std::uint64_t hits = 0;
    std::uint64_t age = 0;  // insertion order: smaller is older
    friend auto operator<=>(const rank&, const rank&) = default;
  };

  detail::handle_heap<rank> order_;
  std::uint64_t next_age_ = 0;
};

static_assert(EvictionPolicy<lfu_eviction>);

}  // namespace llmgate::inline v0
