// The cache area: scopes, eviction policies, the exact-match cache and the
// semantic cache with its threshold, verifier, guard and key policies.
#pragma once

#include "llmgate/cache/configured_threshold.hpp"
#include "llmgate/cache/eviction/configured.hpp"
#include "llmgate/cache/eviction/cost_aware.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/eviction/ttl.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/cache/value_traits.hpp"
#include "llmgate/cache/guard.hpp"
#include "llmgate/cache/index_factory.hpp"
#include "llmgate/cache/key_policy.hpp"
#include "llmgate/cache/learned_verifier.hpp"
#include "llmgate/cache/scope.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/cache/threshold.hpp"
#include "llmgate/cache/verifier.hpp"
