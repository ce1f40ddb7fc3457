// The operator's views and controls (the dispatch table checks the admin key):
//   GET  /admin/stats           the metrics' JSON with what `more` adds (caches,
//                               admission, PML statistics and schemas)
//   GET  /dashboard             the page that reads /admin/stats
//   POST /admin/prompt_schemas  registers the PML schema document of the body
//   GET  /admin/prompt_schemas  lists the schemas: name and version
//
// A schema posted with the name and version of a registered one is taken
// again when its text is the same (nothing changes) and refused with 409
// otherwise: a changed schema is a new version, so that no request is ever
// compiled against modules that changed under its version. A request that
// names no version gets the newest registered. A posted schema's src=
// paths are read on the gateway's machine, relative to its working
// directory.
#pragma once

#include <functional>  // std::function
#include <string>      // std::string

#include <boost/beast/http/verb.hpp>  // boost::beast::http::verb
#include <boost/json/array.hpp>       // boost::json::array
#include <boost/json/object.hpp>      // boost::json::object

#include "llmgate/prompt/pml_error.hpp"        // pml_error
#include "llmgate/prompt/pml_parser.hpp"       // parse_schema
#include "llmgate/prompt/schema_registry.hpp"  // schema_registry
#include "llmgate/server/dashboard.hpp"        // dashboard_html
#include "llmgate/server/exchange.hpp"         // exchange
#include "llmgate/server/metrics.hpp"          // gateway_metrics
#include "llmgate/server/responses.hpp"        // json_response, text_response, error_response

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

/// The registered schemas: [{"object": "prompt_schema", "name", "version"}].
inline boost::json::array prompt_schema_list(const schema_registry& schemas) {
  boost::json::array data;
  for (const auto& [name, version] : schemas.list())
    data.push_back({{"object", "prompt_schema"}, {"name", name}, {"version", version}});
  return data;
}

/// GET /admin/prompt_schemas: {"object": "list", "data": prompt_schema_list};
/// POST: registers the body's schema, answering {"object":
/// "prompt_schema", "name", "version"}.
struct prompt_schemas_handler {
  schema_registry* schemas;

  http_response operator()(exchange& e) const {
    if (e.request.method() == boost::beast::http::verb::get)
      return json_response(http_status::ok, {{"object", "list"}, {"data", prompt_schema_list(*schemas)}});
    prompt_schema schema;
    try {
      schema = parse_schema(e.request.body());
    } catch (const pml_error& problem) {
      return error_response(http_status::bad_request, std::string("Invalid PML schema: ") + problem.what(),
                            "invalid_request_error", "invalid_pml");
    }
    boost::json::object added{{"object", "prompt_schema"}, {"name", schema.name}, {"version", schema.version}};
    try {
      schemas->add(std::move(schema));
    } catch (const pml_error& problem) {
      return error_response(http_status::conflict, std::string("The schema cannot be registered: ") + problem.what(),
                            "invalid_request_error", "schema_version_exists");
    }
    return json_response(http_status::ok, added);
  }
};

}  // namespace llmgate::inline v0
