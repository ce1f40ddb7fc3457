// The cache area: scopes, eviction policies and the exact-match cache.
#pragma once

#include "llmgate/cache/eviction/cost_aware.hpp"
#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/eviction/ttl.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/cache/scope.hpp"
