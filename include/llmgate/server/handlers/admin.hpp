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
// paths are read on the gateway's machine, inside the directory the config
// names for them (prompt_sources.admin_directory), and nowhere when it names
// none (prompt/schema_sources.hpp).
//
// The admin views are neither cached nor framed by other pages; the
// dashboard runs only its own script and style (a Content-Security-Policy
// naming their digests) and sends no Referer, whose URL holds the key.
#pragma once

#include <array>        // std::array
#include <functional>   // std::function
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/beast/http/verb.hpp>  // boost::beast::http::verb
#include <boost/json/array.hpp>       // boost::json::array
#include <boost/json/object.hpp>      // boost::json::object

#include "llmgate/prompt/pml_error.hpp"             // pml_error
#include "llmgate/prompt/pml_parser.hpp"            // parse_schema
#include "llmgate/prompt/schema_registry.hpp"       // schema_registry
#include "llmgate/prompt/schema_sources.hpp"        // schema_sources
#include "llmgate/server/operations/dashboard.hpp"  // dashboard_html
#include "llmgate/server/http/exchange.hpp"         // exchange
#include "llmgate/server/operations/metrics.hpp"    // gateway_metrics
#include "llmgate/server/http/responses.hpp"        // json_response, text_response, error_response

#include <openssl/evp.h>  // EVP_EncodeBlock (a digest in base64)
#include <openssl/sha.h>  // SHA256

namespace llmgate::inline v0 {

namespace detail {

// Headers every admin view carries: not stored by caches, not framed, not sniffed.
inline void admin_view_headers(http_response& response) {
  namespace http = boost::beast::http;
  response.set(http::field::cache_control, "no-store");
  response.set("X-Frame-Options", "DENY");
  response.set("X-Content-Type-Options", "nosniff");
}

// "'sha256-<base64>'" of the text between `open` and the `</` that follows it in `page`.
inline std::string csp_digest_of(std::string_view page, std::string_view open) {
  const auto begin = page.find(open) + open.size();
  const std::string_view inline_text = page.substr(begin, page.find("</", begin) - begin);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest;
  SHA256(reinterpret_cast<const unsigned char*>(inline_text.data()), inline_text.size(), digest.data());
  std::array<unsigned char, 4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1> base64;
  const int length = EVP_EncodeBlock(base64.data(), digest.data(), static_cast<int>(digest.size()));
  return "'sha256-" + std::string(reinterpret_cast<const char*>(base64.data()), static_cast<std::size_t>(length)) + "'";
}

}  // namespace detail

struct stats_handler {
  const gateway_metrics* metrics;
  std::function<void(boost::json::object&)> more;  ///< adds the figures the metrics do not hold

  http_response operator()(exchange&) const {
    boost::json::object stats = metrics->stats();
    if (more) more(stats);
    auto response = json_response(http_status::ok, stats);
    detail::admin_view_headers(response);
    return response;
  }
};

struct dashboard_handler {
  http_response operator()(exchange&) const {
    static const std::string policy = "default-src 'none'; script-src " +
                                      detail::csp_digest_of(dashboard_html, "<script>") + "; style-src " +
                                      detail::csp_digest_of(dashboard_html, "<style>") +
                                      "; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
    auto response = text_response("text/html; charset=utf-8", std::string(dashboard_html));
    detail::admin_view_headers(response);
    response.set("Content-Security-Policy", policy);
    response.set("Referrer-Policy", "no-referrer");
    return response;
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
  schema_sources sources;  ///< where a posted schema's src= files may be read from

  http_response operator()(exchange& e) const {
    if (e.request.method() == boost::beast::http::verb::get)
      return json_response(http_status::ok, {{"object", "list"}, {"data", prompt_schema_list(*schemas)}});
    prompt_schema schema;
    try {
      schema = parse_schema(e.request.body(), sources);
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
