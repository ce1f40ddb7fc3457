// GET /healthz: liveness: 200 {"status": "ok"} while serving, 503
// {"status": "draining"} once a drain began (load balancers stop sending).
// It says nothing of the backends: GET /readyz does (readiness.hpp).
#pragma once

#include <atomic>  // std::atomic

#include "llmgate/server/http/exchange.hpp"   // exchange
#include "llmgate/server/http/responses.hpp"  // json_response

namespace llmgate::inline v0 {

struct health_handler {
  const std::atomic<bool>* draining;

  http_response operator()(exchange&) const {
    return *draining ? json_response(http_status::service_unavailable, {{"status", "draining"}})
                     : json_response(http_status::ok, {{"status", "ok"}});
  }
};

}  // namespace llmgate::inline v0
