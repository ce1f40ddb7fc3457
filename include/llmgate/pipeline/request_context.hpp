// request_context: what travels through a pipeline beside the request
// itself. The caller fills in who is asking and, to stream, where the
// answer's pieces go; the stages fill in what they did, for response
// headers, logs, metrics and feedback.
#pragma once

#include <functional>   // std::function
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/chat/chunk_handler.hpp"  // chunk_handler
#include "llmgate/cache/scope.hpp"      // cache_scope

namespace llmgate::inline v0 {

/// Where an answer came from.
enum class cache_outcome { miss, exact, semantic };

constexpr std::string_view to_string(cache_outcome outcome) noexcept {
  switch (outcome) {
    case cache_outcome::exact: return "exact";
    case cache_outcome::semantic: return "semantic";
    case cache_outcome::miss: break;
  }
  return "miss";
}

/// Every member has a default, for designated initialisers:
/// request_context context{.tenant = "acme"};
struct request_context {
  // Set by the caller.
  std::string tenant = {};      ///< whose request: part of every cache scope
  chunk_handler on_chunk = {};  ///< set to stream: receives the answer piece by piece, cached or not

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
  /// Set by the stage that served a cached answer: tells it whether the
  /// answer was right (a wrong one stops serving).
  std::function<void(bool correct)> feedback = {};

  bool streaming() const noexcept { return static_cast<bool>(on_chunk); }
};

}  // namespace llmgate::inline v0
