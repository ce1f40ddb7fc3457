// request_context: what travels through a pipeline beside the request
// itself. The caller fills in who is asking and, to stream, where the
// answer's pieces go; the stages fill in what they did, for response
// headers, logs, metrics and feedback.
#pragma once

#include <chrono>       // std::chrono::seconds
#include <cstdint>      // std::int64_t
#include <functional>   // std::function
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/backend/chunk_handler.hpp"  // chunk_handler
#include "llmgate/cache/scope.hpp"      // cache_scope

namespace llmgate::inline v0 {

struct routing_decision;  // route/router.hpp: what a router stage chose, and why
class preferences;        // route/preferences.hpp: how much a user cares about each quality

/// Where an answer came from: a fresh call (miss), a cache, or another
/// identical request's call that this one waited for (coalescing_stage.hpp).
enum class cache_outcome { miss, exact, semantic, coalesced };

/// How many cache_outcome values there are, for tables indexed by them.
inline constexpr int cache_outcome_count = 4;

constexpr std::string_view to_string(cache_outcome outcome) noexcept {
  switch (outcome) {
    case cache_outcome::exact: return "exact";
    case cache_outcome::semantic: return "semantic";
    case cache_outcome::coalesced: return "coalesced";
    case cache_outcome::miss: break;
  }
  return "miss";
}

/// What a request allows the caches to do with it, as HTTP's
/// Cache-Control says it for a request (RFC 9111, section 5.2.1): the
/// default allows everything.
struct cache_directives {
  bool lookup = true;  ///< may be answered from a cache (false: no-cache, no-store)
  bool store = true;   ///< its fresh answer may be stored (false: no-store)
  /// Serve only answers younger than this (max-age); none: any age.
  std::optional<std::chrono::seconds> max_age = {};

  /// Whether an answer made at `created` (Unix seconds) may be served at `now`.
  bool fresh_enough(std::int64_t created, std::int64_t now) const noexcept {
    return !max_age || now - created < max_age->count();
  }

  friend bool operator==(const cache_directives&, const cache_directives&) = default;
};

/// Every member has a default, for designated initialisers:
/// request_context context{.tenant = "acme"};
struct request_context {
  // Set by the caller.
  std::string tenant = {};      ///< whose request: part of every cache scope
  /// A partition of the tenant's cache the client named (empty: none);
  /// part of every cache scope, so answers never cross namespaces.
  std::string cache_namespace = {};
  cache_directives cache_control = {};  ///< what the caches may do with this request
  chunk_handler on_chunk = {};  ///< set to stream: receives the answer piece by piece, cached or not
  /// A request's own preferences for a router stage (instead of the
  /// router's defaults); owned by the caller, alive while the pipeline runs.
  const preferences* route_preferences = nullptr;

  // Set by the stages.
  /// The request's cache scope, kept by the first cache stage that computes
  /// it (scope_of(request, context) in request_scope.hpp). A stage that
  /// changes the request's parameters or system prompt before a cache
  /// stage resets it; a changed model or tenant is noticed.
  std::optional<cache_scope> scope = {};
  cache_outcome cache = cache_outcome::miss;
  float similarity = 0;   ///< of the nearest stored request the semantic cache saw (0: none)
  std::string backend = {};  ///< the backend that answered; empty for a cached answer
  double saved_usd = 0;   ///< what the cached answer cost when it was computed
  /// Set by a router stage that chose the request's model: its decision.
  std::shared_ptr<const routing_decision> route = {};
  /// Set by the stages that want to hear whether the answer was right: the
  /// one that served a cached answer (a wrong one stops serving), a router
  /// stage (its feedback ledger). A stage that sets it when another stage
  /// already did calls both.
  std::function<void(bool correct)> feedback = {};

  bool streaming() const noexcept { return static_cast<bool>(on_chunk); }
};

}  // namespace llmgate::inline v0
