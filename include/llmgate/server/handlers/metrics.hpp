// GET /metrics: the gateway's counters in Prometheus text, with the gauges
// read when asked (cache sizes, requests in flight and queued) and the PML
// modules' reuse (the gateway's prompt_statistics). It names
// tenants and their spend, so the dispatch table asks for the admin key or
// the metrics token (route_access::metrics).
#pragma once

#include <functional>  // std::function

#include "llmgate/prompt/prompt_statistics.hpp"   // prompt_statistics
#include "llmgate/server/http/exchange.hpp"       // exchange
#include "llmgate/server/operations/metrics.hpp"  // gateway_metrics
#include "llmgate/server/http/responses.hpp"      // text_response

namespace llmgate::inline v0 {

struct metrics_handler {
  const gateway_metrics* metrics;
  std::function<gateway_metrics::gauges()> gauges;
  const prompt_statistics* prompts = nullptr;  ///< the PML families; none when null

  http_response operator()(exchange&) const {
    return text_response("text/plain; version=0.0.4", metrics->prometheus(gauges(), prompts));
  }
};

}  // namespace llmgate::inline v0
