// The OpenAI wire form as llmgate wrote it before the chat vocabulary held
// JSON text: a boost::json tree per body, serialised. Tests hold the byte
// writers of wire/openai_wire.hpp to these bytes.
#pragma once

#include <cstdint>      // std::int64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/chat/chat.hpp"  // the vocabulary

namespace llmgate::test::reference {

inline boost::json::value parse_or_null(std::string_view text) {
  return text.empty() ? boost::json::value() : boost::json::parse(text);
}

inline boost::json::array array_or_empty(std::string_view text) {
  return text.empty() ? boost::json::array() : boost::json::parse(text).as_array();
}

inline boost::json::object to_json(const token_usage& usage) {
  boost::json::object details;
  details["cached_tokens"] = usage.cached_prompt_tokens;
  if (usage.cache_write_tokens) details["cache_write_tokens"] = usage.cache_write_tokens;
  return boost::json::object({{"prompt_tokens", usage.prompt_tokens},
                              {"completion_tokens", usage.completion_tokens},
                              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
                              {"prompt_tokens_details", std::move(details)}});
}

inline boost::json::object to_json(const chat_message& message) {
  boost::json::object object;
  object["role"] = message.role;
  object["content"] = message.content_json.empty() ? boost::json::value(message.content)
                                                   : boost::json::parse(message.content_json);
  for (const auto& field : message.extra) object.emplace(field.name, boost::json::parse(field.json));
  return object;
}

inline boost::json::object to_json(const chat_request& request) {
  boost::json::object object;
  object["model"] = request.model;
  boost::json::array messages;
  for (const auto& message : request.messages) messages.push_back(to_json(message));
  object["messages"] = std::move(messages);
  object["stream"] = request.stream;
  for (const auto& field : request.parameters) object.emplace(field.name, boost::json::parse(field.json));
  return object;
}

inline boost::json::object to_json(const chat_response& response) {
  const auto tool_calls = array_or_empty(response.tool_calls_json);
  boost::json::object message({{"role", "assistant"}});
  if (response.content.empty() && !tool_calls.empty()) message["content"] = nullptr;
  else message["content"] = response.content;
  if (!tool_calls.empty()) message["tool_calls"] = tool_calls;
  boost::json::object choice({{"index", 0}, {"message", std::move(message)}});
  if (response.finish_reason.empty()) choice["finish_reason"] = nullptr;
  else choice["finish_reason"] = response.finish_reason;
  boost::json::array choices;
  choices.emplace_back(std::move(choice));
  boost::json::object object({{"id", response.id},
                              {"object", "chat.completion"},
                              {"created", response.created},
                              {"model", response.model},
                              {"choices", std::move(choices)},
                              {"usage", to_json(response.usage)}});
  if (response.cost_usd > 0) object["cost"] = response.cost_usd;
  return object;
}

inline boost::json::object to_json(const chat_chunk& chunk, std::string_view id, std::string_view model,
                                   std::int64_t created) {
  const auto deltas = array_or_empty(chunk.tool_call_deltas_json);
  boost::json::object object{{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", model}};
  const bool usage_only = chunk.usage && chunk.content_delta.empty() && !chunk.finish_reason && deltas.empty();
  boost::json::array choices;
  if (!usage_only) {
    boost::json::object delta;
    if (!chunk.content_delta.empty()) delta["content"] = chunk.content_delta;
    if (!deltas.empty()) delta["tool_calls"] = deltas;
    boost::json::object choice{{"index", 0}, {"delta", std::move(delta)}};
    if (chunk.finish_reason) choice["finish_reason"] = *chunk.finish_reason;
    else choice["finish_reason"] = nullptr;
    choices.push_back(std::move(choice));
  }
  object["choices"] = std::move(choices);
  if (chunk.usage) object["usage"] = to_json(*chunk.usage);
  return object;
}

/// Responses that exercise the writers: escapes, control bytes and UTF-8
/// in the text, cached and cache-write usage, tool calls with and without
/// text, and an empty response.
inline std::vector<chat_response> sample_responses() {
  chat_response plain;
  plain.id = "upstream-id";
  plain.model = "gpt-4o-mini";
  plain.content = "Quotes \" and \\ and\nnewlines, \x01 control, unicode \xc3\xa9 \xf0\x9f\x98\x80";
  plain.finish_reason = "stop";
  plain.usage = {.prompt_tokens = 12, .completion_tokens = 34, .cached_prompt_tokens = 5};
  plain.cost_usd = 1.2345678901234567e-05;
  plain.created = 1700000000;
  chat_response tools = plain;
  tools.content.clear();
  tools.finish_reason.clear();
  tools.usage.cache_write_tokens = 7;
  tools.cost_usd = 0;
  tools.tool_calls_json = R"([{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}])";
  chat_response both = tools;
  both.content = "Let me look.";
  return {plain, tools, both, chat_response{}};
}

}  // namespace llmgate::test::reference
