// request_outcome: what a chat request did inside the gateway, as a handler
// tells it to the session (exchange::outcome) for the metrics and the log:
// whose it was, its status, and, once it reached the pipeline, the cache's
// verdict, the backend, the tokens and the money.
#pragma once

#include <chrono>       // std::chrono::nanoseconds
#include <cstdint>      // std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/chat/trace_context.hpp"        // trace_context
#include "llmgate/pipeline/request_context.hpp"  // cache_outcome

namespace llmgate::inline v0 {

struct request_outcome {
  std::string tenant;
  /// The cache's verdict; empty when the request never reached the pipeline
  /// (a 400 for its body, a 404 for its model, a 429 at the gate).
  std::optional<cache_outcome> cache = {};
  std::string backend = {};
  /// What the request came to; differs from the wire's status when a stream
  /// that had begun with 200 failed.
  unsigned status = 200;
  std::chrono::nanoseconds latency{};
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
  double cost_usd = 0;
  double saved_usd = 0;
  bool cache_controlled = false;  ///< it sent cache directives (Cache-Control) or a cache namespace
  std::string_view model = {};  ///< the model a router chose (alive while the router is); empty: not routed
  std::string route = {};       ///< the router's reasons, for the log; empty: not routed or not logged
  trace_context trace = {};     ///< the request's W3C trace, continued or begun by the gateway
};

}  // namespace llmgate::inline v0
