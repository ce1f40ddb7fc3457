// client_failure: what a gateway's client sees when the model's backends
// failed: a status its SDK acts on rightly and an OpenAI error object
// that names no upstream URL, backend or internal path (those go to the
// gateway's log).
//
//   the upstream refused the request     its status (400 for a context overflow,
//   (backend_error::client_error())      code context_length_exceeded), its own
//                                         message, type, param and code: an SDK
//                                         raises its usual error and does not retry
//   429 that waiting may cure            429, with Retry-After when the upstream said
//   529 (the upstream is overloaded,     529 overloaded_error, with Retry-After when the
//   as Anthropic's API says it)          upstream said: Anthropic's SDK raises its
//                                         OverloadedError, and SDKs retry it later
//   upstream timeout                     504
//   anything else (5xx, 408, 409,        502 "The upstream model server failed: ..."
//   network, malformed answer, circuit
//   open, 401/403/404 from the upstream)
#pragma once

#include <chrono>       // std::chrono::seconds, ceil
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/beast/http/status.hpp>  // boost::beast::http::status, int_to_status
#include <boost/json/object.hpp>        // boost::json::object

#include "llmgate/backend/backend_error.hpp"      // backend_error
#include "llmgate/error.hpp"                      // errc
#include "llmgate/server/http/openai_errors.hpp"  // openai_error

namespace llmgate::inline v0 {

struct client_failure {
  boost::beast::http::status status;
  boost::json::object body;                        ///< {"error": {message, type, param, code}}
  std::optional<std::chrono::seconds> retry_after = {};  ///< for a Retry-After header
};

/// The answer to a client whose request `failure` ended.
inline client_failure client_failure_of(const backend_error& failure) {
  using boost::beast::http::status;
  const boost::json::object& upstream = failure.upstream_error();
  const auto text = [&](std::string_view key) -> std::string_view {
    const auto* field = upstream.if_contains(key);
    return field && field->is_string() ? std::string_view(field->get_string()) : std::string_view();
  };
  const std::string_view said = text("message");

  if (failure.client_error()) {
    const unsigned code = failure.client_status();
    boost::json::object error{
        {"message", !said.empty() ? std::string(said)
                                  : "The upstream model server refused the request (HTTP " + std::to_string(code) + ")."},
        {"type", !text("type").empty() ? text("type") : std::string_view("invalid_request_error")},
        {"param", nullptr},
        {"code", nullptr}};
    if (!text("param").empty()) error["param"] = text("param");
    if (!text("code").empty()) error["code"] = text("code");
    const status known = boost::beast::http::int_to_status(code);  // a 4xx Beast has no name for: 400
    return {known != status::unknown ? known : status::bad_request, boost::json::object{{"error", std::move(error)}}};
  }

  const auto kind = static_cast<errc>(failure.code().value());
  // A failure that waiting may cure: what the upstream said, and how long
  // it asked to wait.
  const auto retry_later = [&](status code, std::string_view what, std::string_view type, std::string_view error_code) {
    client_failure answer{code, openai_error(std::string(what) + (said.empty() ? "" : " It said: " + std::string(said)),
                                             type, error_code)};
    if (const auto wait = failure.retry_after()) answer.retry_after = std::chrono::ceil<std::chrono::seconds>(*wait);
    return answer;
  };
  if (failure.status() == 429 && failure.retryable())
    return retry_later(status::too_many_requests, "The upstream model server is rate limiting requests; retry later.",
                       "rate_limit_error", "rate_limit_exceeded");
  if (failure.status() == 529)
    return retry_later(static_cast<status>(529), "The upstream model server is overloaded; retry later.",
                       "overloaded_error", "upstream_overloaded");
  if (kind == errc::upstream_timeout)
    return {status::gateway_timeout,
            openai_error("The upstream model server did not answer in time.", "timeout_error", "upstream_timeout")};

  std::string reason;
  std::string_view code = "upstream_error";
  switch (kind) {
    case errc::upstream_unreachable:
      reason = "it could not be reached, or closed the connection.";
      code = "upstream_unreachable";
      break;
    case errc::upstream_protocol_error:
      reason = "its answer could not be read.";
      code = "upstream_protocol_error";
      break;
    case errc::circuit_open:
      reason = "it failed repeatedly and is not asked again for a while; retry later.";
      code = "circuit_open";
      break;
    default:
      reason = failure.status() ? "HTTP " + std::to_string(failure.status()) : std::string("it reported an error");
      reason += said.empty() ? std::string(".") : ": " + std::string(said);
  }
  return {status::bad_gateway, openai_error("The upstream model server failed: " + reason, "upstream_error", code)};
}

}  // namespace llmgate::inline v0
