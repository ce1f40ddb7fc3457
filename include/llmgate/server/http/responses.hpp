// The gateway's HTTP messages and the responses every handler builds: JSON
// bodies, plain text, and OpenAI-style error objects.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/beast/http/message.hpp>      // boost::beast::http::request, response
#include <boost/beast/http/status.hpp>       // boost::beast::http::status
#include <boost/beast/http/string_body.hpp>  // boost::beast::http::string_body
#include <boost/json/object.hpp>             // boost::json::object

#include "llmgate/wire/detail/json_appender.hpp"  // json_appender
#include "llmgate/server/http/openai_errors.hpp"  // openai_error

namespace llmgate::inline v0 {

using http_request = boost::beast::http::request<boost::beast::http::string_body>;
using http_response = boost::beast::http::response<boost::beast::http::string_body>;
using http_status = boost::beast::http::status;

/// The request's target without its query.
inline std::string_view path_of(const http_request& request) {
  const std::string_view target = request.target();
  return target.substr(0, target.find('?'));
}

inline http_response text_response(std::string_view content_type, std::string body,
                                   http_status status = http_status::ok) {
  http_response response(status, 11);
  response.set(boost::beast::http::field::content_type, content_type);
  response.body() = std::move(body);
  return response;
}

/// `body` with its doubles as plain decimals (0.0123, not 1.23E-2), as
/// every JSON the gateway writes.
inline http_response json_response(http_status status, const boost::json::object& body) {
  std::string text;
  detail::json_appender(text).value(body);
  return text_response("application/json", std::move(text), status);
}

inline http_response error_response(http_status status, std::string_view message, std::string_view type,
                                    std::string_view code, std::string_view param = {}) {
  return json_response(status, openai_error(message, type, code, param));
}

}  // namespace llmgate::inline v0
