// OpenAI-style error objects, as the gateway answers bad input and
// failures: {"error": {"message", "type", "param", "code"}}, so that
// OpenAI's client libraries raise their usual exceptions.
#pragma once

#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

namespace llmgate::inline v0 {

/// {"error": {...}} with OpenAI's four fields.
inline boost::json::object openai_error(std::string_view message, std::string_view type, std::string_view code,
                                        std::string_view param = {}) {
  boost::json::object error{{"message", message}, {"type", type}, {"code", code}};
  if (param.empty()) error["param"] = nullptr;
  else error["param"] = param;
  return {{"error", std::move(error)}};
}

/// The message of an {"error": {"message": ...}} object, for a dialect
/// that writes errors in another form.
inline std::string_view openai_error_message(const boost::json::object& error) {
  const auto* inner = error.if_contains("error");
  const auto* message = inner && inner->is_object() ? inner->get_object().if_contains("message") : nullptr;
  return message && message->is_string() ? std::string_view(message->get_string()) : std::string_view("error");
}

}  // namespace llmgate::inline v0
