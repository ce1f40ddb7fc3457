// shared_tier: what a gateway asks of a cache tier that several gateway
// processes (replicas behind one load balancer) share, so that an answer
// one of them paid for is served by all. The gateway knows only this
// interface; llmgate/server/shared/redis_shared_tier.hpp is the one llmgate ships
// (Redis or Redis Cluster), handed to the gateway through
// gateway_parts::shared, so that a gateway without a "shared" section
// never links hiredis.
//
// The tier is a second level under each replica's own caches:
//   exact     a local miss asks the shared store (find_exact) before the
//             semantic cache; what a replica answers fresh is stored there
//             too (store_exact); a wrong verdict erases it (erase_exact).
//   semantic  every replica searches its own index; the tier copies each
//             local change (insert, eviction, feedback, through the cache's
//             observer) to the others and applies theirs, so that all hold
//             the same entries and learn alike.
// Nothing a client waits for may wait on the store past a short timeout:
// find_exact answers "none" at once while the store is away, and writes
// are queued (bounded; the oldest dropped first, counted).
#pragma once

#include <chrono>      // std::chrono::milliseconds
#include <cstdint>     // std::uint64_t
#include <functional>  // std::function
#include <memory>      // std::unique_ptr
#include <string>      // std::string

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/cache/exact_cache.hpp"       // exact_key
#include "llmgate/pipeline/cached_answer.hpp"  // cached_answer
#include "llmgate/server/gateway_config.hpp"   // gateway_config

namespace llmgate::inline v0 {

class gateway_caches;
class request_log;
class spending_ledger;

/// What the tier has done since it started, for /metrics and /admin/stats.
struct shared_tier_statistics {
  bool available = false;             ///< the store answers (/readyz says "degraded" otherwise)
  std::string detail = {};            ///< why not, when not (the last error)
  std::uint64_t round_trips = 0;      ///< commands answered by the store
  std::uint64_t errors = 0;           ///< commands that failed or timed out
  std::uint64_t exact_hits = 0;       ///< local misses the store answered
  std::uint64_t exact_misses = 0;     ///< local misses the store could not answer (or was away for)
  std::uint64_t queued_writes = 0;    ///< writes waiting for the store now
  std::uint64_t dropped_writes = 0;   ///< writes dropped because the queue was full
  std::uint64_t applied_changes = 0;  ///< other replicas' semantic changes applied here
  double replication_lag_ms = 0;      ///< age of the last change applied when it was applied
};

class shared_tier {
 public:
  virtual ~shared_tier() = default;

  /// The answer another replica stored for `key` (its scope, tenant and
  /// text compared, not only its hash); nullptr when none, when the store
  /// is away, or after the tier's read timeout. Never throws.
  virtual boost::asio::awaitable<cached_answer> find_exact(const exact_key& key) = 0;
  /// Queues `answer` to be stored under `key`, with the exact tier's lifetime.
  virtual void store_exact(const exact_key& key, const cached_answer& answer) = 0;
  /// Queues the removal of `key` (a wrong verdict).
  virtual void erase_exact(const exact_key& key) = 0;

  /// Begins applying the other replicas' changes (after the gateway listens).
  virtual void start() = 0;
  /// Stops applying; sends what is queued for at most `flush` first.
  virtual void stop(std::chrono::milliseconds flush) = 0;

  virtual shared_tier_statistics statistics() const = 0;
};

/// The tier as the exact cache stage's second level (ExactSecondLevel,
/// pipeline/exact_cache_stage.hpp); a null tier is no level at all.
struct shared_exact_level {
  shared_tier* tier = nullptr;

  boost::asio::awaitable<cached_answer> find(const exact_key& key) {
    if (!tier) co_return nullptr;
    co_return co_await tier->find_exact(key);
  }
  void store(const exact_key& key, const cached_answer& answer) {
    if (tier) tier->store_exact(key, answer);
  }
  void erase(const exact_key& key) {
    if (tier) tier->erase_exact(key);
  }
};

/// What a shared tier is made with: the whole config (its "shared"
/// section), the gateway's caches (whose semantic cache it observes,
/// applies changes to and may replace from a snapshot before the gateway
/// serves), the tenants' spending (which it adds up across replicas,
/// once started) and the gateway's event log.
struct shared_tier_context {
  const gateway_config& config;
  gateway_caches& caches;
  spending_ledger& spending;
  request_log& log;
};

/// Makes the tier; throws llmgate::error naming the cause when it cannot
/// be used at all (a refused login, a certificate that fails), so that
/// the gateway does not start. A store merely unreachable at start is not
/// such a cause: the tier starts away and catches up when it returns.
using shared_tier_factory = std::function<std::unique_ptr<shared_tier>(const shared_tier_context&)>;

}  // namespace llmgate::inline v0
