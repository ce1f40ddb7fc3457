// The operator's views (the dispatch table checks the admin key):
//   GET /admin/stats   the metrics' JSON with what `more` adds (caches, admission)
//   GET /dashboard     the page that reads /admin/stats
#pragma once

#include <functional>  // std::function
#include <string>      // std::string

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/server/dashboard.hpp"  // dashboard_html
#include "llmgate/server/exchange.hpp"   // exchange
#include "llmgate/server/metrics.hpp"    // gateway_metrics
#include "llmgate/server/responses.hpp"  // json_response, text_response

namespace llmgate::inline v0 {

struct stats_handler {
  const gateway_metrics* metrics;
  std::function<void(boost::json::object&)> more;  ///< adds the figures the metrics do not hold

  http_response operator()(exchange&) const {
    boost::json::object stats = metrics->stats();
    if (more) more(stats);
    return json_response(http_status::ok, stats);
  }
};

struct dashboard_handler {
  http_response operator()(exchange&) const {
    return text_response("text/html; charset=utf-8", std::string(dashboard_html));
  }
};

}  // namespace llmgate::inline v0
