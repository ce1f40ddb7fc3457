// What the readers of other APIs' requests (anthropic_wire.hpp,
// openai_responses_wire.hpp) share: where a value is in the request, for a
// refusal's param; a required string member; and content parts as a chat
// message's content.
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/chat/chat.hpp"                        // chat_message
#include "llmgate/wire/detail/standard_parameters.hpp"  // missing_parameter, wrong_type
#include "llmgate/wire/openai_wire.hpp"                 // text_of, json_text

namespace llmgate::inline v0::detail {

// Where a value is in the request ("messages[1].content[0]"), for a
// refusal's param: a chain of names and indexes on the stack, written out
// only when a refusal names it, so that a request read without fault
// allocates no path. Each link names its parent: keep the parent alive.
struct request_path {
  const request_path* parent = nullptr;  // null: the request itself
  std::string_view name = {};            // a member's name; empty for an element
  std::size_t index = 0;                 // an element's index

  request_path member(std::string_view member_name) const { return {this, member_name}; }
  request_path element(std::size_t i) const { return {this, {}, i}; }
  std::string text() const {
    if (!parent) return std::string(name);
    std::string out = parent->text();
    if (name.empty()) return out + "[" + std::to_string(index) + "]";
    return out.empty() ? std::string(name) : out + "." + std::string(name);
  }
};

// The string member `name` of `object` (at `where`), which must be there.
inline std::string_view required_string(const boost::json::object& object, std::string_view name,
                                        const request_path& where) {
  const auto* value = object.if_contains(name);
  if (value && value->is_string()) return value->get_string();
  const std::string param = where.member(name).text();
  if (!value || value->is_null()) missing_parameter(param);
  wrong_type(param, "a string", *value);
}

// Text and image parts (OpenAI's chat form) as a message's content: one
// plain text part as a string (as a chat-completions client sends it, so
// that both find the same cache entries), else the parts.
inline void set_parts_content(chat_message& message, const boost::json::array& parts) {
  const bool one_plain_text = parts.size() == 1 && parts[0].get_object().size() == 2 &&
                              parts[0].get_object().at("type") == "text";
  message.content = text_of(parts);
  if (!one_plain_text) message.content_json = json_text(parts);
}

}  // namespace llmgate::inline v0::detail
