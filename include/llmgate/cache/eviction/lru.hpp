// lru_eviction: evicts the least recently used entry.
//
// Model: entries sit in one list from least to most recently used; an
// insert or a hit moves the entry to the back, the victim is the front.
// Every operation is O(1). Nothing expires. Good when recent requests
// predict the next ones; one scan of new requests can flush the whole cache.
#pragma once

#include <optional>  // std::optional

#include "llmgate/cache/eviction/detail/handle_list.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0 {

class lru_eviction {
 public:
  void insert(entry_handle handle, const entry_info&) { recency_.push_back(handle); }
  void touch(entry_handle handle) { recency_.move_to_back(handle); }
  void erase(entry_handle handle) noexcept { recency_.erase(handle); }
  void clear() noexcept { recency_.clear(); }

  std::optional<entry_handle> pop_victim() noexcept {
    const auto victim = recency_.front();
    if (victim) recency_.erase(*victim);
    return victim;
  }

  std::optional<entry_handle> pop_expired() const noexcept { return std::nullopt; }
  bool is_expired(entry_handle) const noexcept { return false; }

 private:
  detail::handle_list recency_;  // least recently used first
};

static_assert(EvictionPolicy<lru_eviction>);

}  // namespace llmgate::inline v0
