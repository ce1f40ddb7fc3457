// GET /metrics: the gateway's counters in Prometheus text, with the gauges
// read when asked (cache sizes, requests in flight and queued). It names
// tenants and their spend, so the dispatch table asks for the admin key or
// the metrics token (route_access::metrics).
#pragma once

#include <functional>  // std::function

#include "llmgate/server/exchange.hpp"   // exchange
#include "llmgate/server/metrics.hpp"    // gateway_metrics
#include "llmgate/server/responses.hpp"  // text_response

namespace llmgate::inline v0 {

struct metrics_handler {
  const gateway_metrics* metrics;
  std::function<gateway_metrics::gauges()> gauges;

  http_response operator()(exchange&) const {
    return text_response("text/plain; version=0.0.4", metrics->prometheus(gauges()));
  }
};

}  // namespace llmgate::inline v0
