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

}  // namespace llmgate::inline v0
