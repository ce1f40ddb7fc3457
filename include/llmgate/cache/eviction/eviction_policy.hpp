// The EvictionPolicy concept: which entry leaves a full cache, and which
// entries have outlived their time.
//
// A policy never sees keys or values. The cache owns its entries and names
// each by a small integer handle (an index into its own storage, reused
// after the entry leaves), and tells the policy what happens to it: inserted,
// hit, erased. The policy answers two questions: who leaves next when room
// is needed (pop_victim), and who has expired (pop_expired, is_expired). So
// the same policies serve the exact cache, whose entries live in a table,
// and the semantic cache, whose entries live in an index slot.
#pragma once

#include <concepts>  // std::copyable, std::same_as
#include <cstddef>   // std::size_t
#include <cstdint>   // std::uint32_t, std::uint64_t
#include <optional>  // std::optional

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

/// A cache's name for one of its entries: dense from 0, reused after erase.
using entry_handle = std::uint32_t;

/// What the cache knows about an entry when it hands it to the policy.
struct entry_info {
  std::size_t bytes = 1;    ///< memory the entry holds (its key text and value)
  double cost = 1.0;        ///< what computing it cost: tokens, money or time, in the caller's unit
  std::uint64_t hits = 0;   ///< hits it already had (non-zero when restored from a snapshot)
};

/// What a cache needs from an eviction policy. Preconditions, which the
/// cache keeps: insert only a handle the policy does not hold; touch only
/// one it holds. erase of a handle it does not hold does nothing.
/// - insert(h, info): h entered the cache;
/// - touch(h): h was hit;
/// - erase(h): h left for a reason of the cache's own (replaced, erased, expired elsewhere);
/// - pop_victim(): the entry to evict next, removed from the policy; empty when it holds none;
/// - pop_expired(): an entry past its lifetime, removed from the policy; empty when none is;
/// - is_expired(h): whether h, which it holds, is past its lifetime;
/// - clear(): forget every entry.
/// Policies are copied, one per cache shard; each copy is used under its shard's lock.
template <class P>
concept EvictionPolicy = std::copyable<P> && requires(P& policy, const P& view, entry_handle handle,
                                                      const entry_info& info) {
  policy.insert(handle, info);
  policy.touch(handle);
  policy.erase(handle);
  policy.clear();
  { policy.pop_victim() } -> std::same_as<std::optional<entry_handle>>;
  { policy.pop_expired() } -> std::same_as<std::optional<entry_handle>>;
  { view.is_expired(handle) } -> std::same_as<bool>;
};

}  // namespace llmgate::inline v0
