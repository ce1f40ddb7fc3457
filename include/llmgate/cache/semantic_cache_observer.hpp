// semantic_cache_observer: told of every change a semantic cache makes on
// its own (an insert, an eviction, a verdict), so that something else can
// copy it: the Redis tier (llmgate/server/shared/redis_shared_tier.hpp) sends each to the
// other gateway replicas, which apply it with the cache's *_replica calls.
// Those calls tell no observer, so a change never echoes back.
//
// Each call comes with the cache's lock held, on the thread that made the
// change: an observer queues what it needs and returns, and never calls
// the cache.
#pragma once

#include <span>         // std::span
#include <string_view>  // std::string_view

#include "llmgate/cache/scope.hpp"  // hash128

namespace llmgate::inline v0 {

struct answer_cost;

template <class Value>
class semantic_cache_observer {
 public:
  virtual ~semantic_cache_observer() = default;

  /// An entry was stored: its scope, key text, the vector it is indexed by
  /// (empty when its text could not be embedded), its answer and cost.
  virtual void inserted(const hash128& scope, std::string_view text, std::span<const float> vector,
                        const Value& answer, const answer_cost& cost) = 0;
  /// An entry left to make room or because its lifetime ended.
  virtual void evicted(const hash128& scope, std::string_view text) = 0;
  /// A verdict on an answer served for `request_text` from the entry
  /// stored for `stored_text`, at that similarity and probability.
  virtual void told(const hash128& scope, std::string_view request_text, std::string_view stored_text,
                    float similarity, float probability, bool correct) = 0;
};

}  // namespace llmgate::inline v0
