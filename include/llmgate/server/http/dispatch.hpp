// dispatch_table: from a request's method and path to its handler, with the
// access each route needs checked on the way:
//
//   route_access::open    anyone (/healthz, /readyz);
//   route_access::admin   the admin key (401 otherwise);
//   route_access::metrics the admin key or the metrics token (401 otherwise):
//                         /metrics, which names tenants and their spend;
//   route_access::tenant  a tenant's key (401 otherwise); the tenant is
//                         handed to the handler in exchange::tenant.
//
// A path no route has gets 404 (unknown_url); a tenant route's path with
// another method gets 405 once the key is checked. (An open or admin path
// with another method gets 404, as the gateway has always answered.)
// Errors are built as OpenAI's error object and written by the route's
// error writer: OpenAI's form unless the route was added with a writer of
// its own (/v1/messages answers in Anthropic's form), which then writes
// the route's 401 and 405, and the session's 413 for a body sent to it
// (error_for).
// Lookup is a scan of a few entries comparing lengths first, then bytes:
// less than a hash of the path would cost.
//
// A handler is any callable taking exchange& and returning handler_result
// (an awaitable) or a whole http_response (a synchronous handler).
#pragma once

#include <functional>   // std::function
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_same_v, std::invoke_result_t
#include <utility>      // std::move
#include <variant>      // std::variant, std::get_if
#include <vector>       // std::vector

#include <boost/beast/http/verb.hpp>  // boost::beast::http::verb
#include <boost/json/object.hpp>       // boost::json::object (an error, for a route's writer)

#include "llmgate/server/http/access.hpp"     // access_keys
#include "llmgate/server/http/exchange.hpp"   // exchange, handler_result
#include "llmgate/server/http/responses.hpp"  // error_response, json_response

namespace llmgate::inline v0 {

enum class route_access { open, admin, metrics, tenant };

class dispatch_table {
 public:
  using handler = std::function<handler_result(exchange&)>;
  /// Writes an error, given as OpenAI's {"error": {...}} object, in a route's form.
  using error_writer = http_response (*)(http_status, const boost::json::object&);

  explicit dispatch_table(const access_keys& keys) : keys_(&keys) {}

  /// Who the table's keys say a request comes from.
  const access_keys& keys() const noexcept { return *keys_; }

  /// Adds a route; a later route for the same method and path is never
  /// reached. `write_error`: how the table writes the route's errors.
  template <class Handler>
  dispatch_table& add(boost::beast::http::verb method, std::string path, route_access access, Handler h,
                      error_writer write_error = json_response) {
    if constexpr (std::is_same_v<std::invoke_result_t<Handler&, exchange&>, http_response>)
      routes_.push_back({method, std::move(path), access, [h = std::move(h)](exchange& e) { return ready(h(e)); },
                         write_error});
    else
      routes_.push_back({method, std::move(path), access, handler(std::move(h)), write_error});
    return *this;
  }

  /// The handler's answer to the request, or the error the table answers
  /// for it. Not a coroutine: it hands back the handler's awaitable.
  handler_result operator()(exchange& e) const {
    auto found = resolve(e.request, e.tenant);
    if (auto* refused = std::get_if<http_response>(&found)) return ready(std::move(*refused));
    return std::get<const route*>(found)->call(e);
  }

  /// The 401 the table answers for a request whose route needs a key it
  /// does not carry, judged from its headers alone: the session asks before
  /// it reads a body, so that a request without a key costs no more.
  std::optional<http_response> refusal(const http_request& header) const {
    const std::string* tenant = nullptr;
    auto found = resolve(header, tenant);
    auto* refused = std::get_if<http_response>(&found);
    if (!refused || refused->result() != http_status::unauthorized) return std::nullopt;
    return std::move(*refused);
  }

  /// The response of `status` with `error` (OpenAI's error object) in the
  /// form of the route of the request `header` is the head of.
  http_response error_for(const http_request& header, http_status status, const boost::json::object& error) const {
    const std::string_view path = path_of(header);
    for (const route& r : routes_)
      if (r.path.size() == path.size() && r.path == path) return r.write_error(status, error);
    return json_response(status, error);
  }

 private:
  struct route {
    boost::beast::http::verb method;
    std::string path;
    route_access access;
    handler call;
    error_writer write_error;
  };

  static handler_result ready(http_response response) { co_return std::optional<http_response>(std::move(response)); }

  // The route for the request's method and path, with its access checked
  // (`tenant` set for a tenant route), or the error the table answers.
  std::variant<const route*, http_response> resolve(const http_request& request, const std::string*& tenant) const {
    const std::string_view path = path_of(request);
    const route* same_path = nullptr;
    for (const route& r : routes_) {
      if (r.path.size() != path.size() || r.path != path) continue;
      if (!same_path) same_path = &r;
      if (r.method != request.method()) continue;
      if (r.access == route_access::tenant && !(tenant = keys_->tenant_of(request)))
        return r.write_error(http_status::unauthorized, unauthorized());
      if (r.access == route_access::admin && !keys_->admin(request))
        return error_response(http_status::unauthorized, "This view needs the admin key.", "invalid_request_error",
                              "invalid_api_key");
      if (r.access == route_access::metrics && !keys_->metrics(request))
        return error_response(http_status::unauthorized,
                              "This view needs the admin key or the metrics token (admin.metrics_token), "
                              "sent as \"Authorization: Bearer <token>\".",
                              "invalid_request_error", "invalid_api_key");
      return &r;
    }
    if (!same_path || same_path->access != route_access::tenant)
      return error_response(http_status::not_found, "Unknown request URL: " + std::string(path), "invalid_request_error",
                            "unknown_url");
    if (!keys_->tenant_of(request)) return same_path->write_error(http_status::unauthorized, unauthorized());
    return same_path->write_error(
        http_status::method_not_allowed,
        openai_error("Method " + std::string(request.method_string()) + " is not allowed on " + std::string(path),
                     "invalid_request_error", "method_not_allowed"));
  }

  static boost::json::object unauthorized() {
    return openai_error("Incorrect API key provided. Send \"Authorization: Bearer <your key>\".",
                        "invalid_request_error", "invalid_api_key");
  }

  const access_keys* keys_;
  std::vector<route> routes_;
};

}  // namespace llmgate::inline v0
