// hint_fields: adding a backend's cache hints (prompt_cache_key,
// cache_prompt, id_slot...) to a request body already written in OpenAI's
// form, without a second writer: the fields go before its closing brace.
#pragma once

#include <string>  // std::string

#include "llmgate/chat/chat.hpp"                 // chat_request, json_fields, find_field
#include "llmgate/wire/detail/json_appender.hpp"  // json_appender

namespace llmgate::inline v0::detail {

/// Appends each of `fields` to `body` (a JSON object's text) unless the
/// request's parameters hold one of that name: a client's own value wins.
inline void add_hint_fields(std::string& body, const chat_request& request, const json_fields& fields) {
  if (fields.empty() || body.empty() || body.back() != '}') return;
  body.pop_back();
  json_appender json(body);
  for (const auto& field : fields) {
    if (find_field(request.parameters, field.name)) continue;
    json.raw(body.back() == '{' ? "" : ",");
    json.string(field.name);
    json.raw(":");
    json.raw(field.json);
  }
  body.push_back('}');
}

}  // namespace llmgate::inline v0::detail
