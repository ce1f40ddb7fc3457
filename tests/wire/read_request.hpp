// What the suites of the other APIs' readers (anthropic_wire_test,
// openai_responses_wire_test) ask of a request they read: the JSON text of
// a field, and the refusal a body gets.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair

#include <boost/json/parse.hpp>  // boost::json::parse

#include "llmgate/chat/chat.hpp"           // chat_request, chat_message, find_field
#include "llmgate/chat/request_error.hpp"  // request_error

namespace llmgate::test {

/// A field's JSON text, or "(absent)".
inline std::string field(const json_fields& fields, std::string_view name) {
  const json_field* found = find_field(fields, name);
  return found ? found->json : "(absent)";
}
inline std::string field(const chat_request& request, std::string_view name) { return field(request.parameters, name); }
inline std::string field(const chat_message& message, std::string_view name) { return field(message.extra, name); }

/// The param() and message of the request_error `read` refuses `body` with;
/// {"", "accepted"} where it reads it.
template <class Read>
std::pair<std::string, std::string> refusal_of(Read read, const char* body) {
  try {
    read(boost::json::parse(body));
  } catch (const request_error& e) {
    return {e.param(), e.what()};
  }
  return {"", "accepted"};
}

}  // namespace llmgate::test
