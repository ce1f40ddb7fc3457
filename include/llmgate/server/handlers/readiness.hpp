// GET /readyz: whether the gateway can answer, for load balancers and
// orchestrators (GET /healthz stays liveness: the process serves).
//
//   200 {"status": "ready", ...}     every model has a backend not known down;
//   503 {"status": "degraded", ...}  some model has none (its requests would
//                                    fail unless a cache answers them);
//   503 {"status": "draining", ...}  a drain began;
//   200 {"status": "degraded", ...}  every model has a backend, but the
//                                    shared tier (Redis) is away: every request
//                                    is still answered, from this replica's
//                                    caches and the backends, so a load
//                                    balancer should keep sending; operators
//                                    should look ("shared": {"available": false}).
//
// The body names each model with its backends and whether it is available,
// and each backend's state (backend_health.hpp): up, down or unknown, its
// last result, its failures in a row and the seconds since its last result.
// No error texts: this route needs no key, and they may name upstreams.
#pragma once

#include <atomic>  // std::atomic
#include <chrono>  // std::chrono::duration

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/server/operations/backend_health.hpp"  // backend_health, backend_state
#include "llmgate/server/gateway_config.hpp"             // gateway_config
#include "llmgate/server/http/exchange.hpp"              // exchange
#include "llmgate/server/http/responses.hpp"             // json_response
#include "llmgate/server/shared/shared_tier.hpp"         // shared_tier

namespace llmgate::inline v0 {

struct readiness_handler {
  const gateway_config* config;
  const backend_health* health;
  const std::atomic<bool>* draining;
  const shared_tier* shared = nullptr;  ///< the tier shared with other replicas, when configured

  http_response operator()(exchange&) const {
    const auto now = backend_health::clock::now();
    boost::json::array backends;
    for (const auto& r : health->reports(now)) {
      boost::json::object b{{"name", r.name}, {"state", to_string(r.state)}, {"failures", r.failures}};
      if (r.last_succeeded) b["last_result"] = *r.last_succeeded ? "ok" : "failed";
      else b["last_result"] = nullptr;
      if (r.since_last) b["seconds_since_last_result"] = std::chrono::duration<double>(*r.since_last).count();
      backends.push_back(std::move(b));
    }
    boost::json::array models;
    bool every_model = true;
    for (const auto& model : config->models) {
      bool available = false;
      boost::json::array names;
      for (const auto& name : model.backends) {
        names.push_back(boost::json::string(name));
        available = available || health->state(name, now) != backend_state::down;
      }
      every_model = every_model && available;
      models.push_back({{"name", model.name}, {"available", available}, {"backends", std::move(names)}});
    }
    const bool shared_available = !shared || shared->statistics().available;
    const char* status = *draining ? "draining" : every_model && shared_available ? "ready" : "degraded";
    boost::json::object body{{"status", status}, {"models", std::move(models)}, {"backends", std::move(backends)}};
    if (shared) body["shared"] = {{"available", shared_available}};
    return json_response(*draining || !every_model ? http_status::service_unavailable : http_status::ok,
                         std::move(body));
  }
};

}  // namespace llmgate::inline v0
