// Chat requests, responses and streamed chunks: the types every backend and
// the pipeline exchange, with their OpenAI wire form (what the gateway
// receives and what OpenAI-compatible servers answer).
//
// Pass-through: a request keeps every field it was sent that llmgate does
// not interpret (temperature, tools, response_format, stream_options, ...)
// in `parameters`, and every message field besides role and content (name,
// tool_calls, tool_call_id, ...) in `extra`, so that they reach the model
// server as they came.
//
// Token counts: `prompt_tokens` counts every input token, the cached and
// cache-written ones included (OpenAI's convention; the Anthropic adapter
// adds its three input counts together), so that prompt_tokens -
// cached_prompt_tokens - cache_write_tokens is what was billed at the plain
// input price.
#pragma once

#include <cstdint>      // std::uint64_t, std::int64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>       // boost::json::object
#include <boost/json/storage_ptr.hpp>  // boost::json::storage_ptr
#include <boost/json/value.hpp>        // boost::json::value

#include "llmgate/backend/detail/json_fields.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

struct chat_message {
  std::string role;             ///< system, user, assistant, tool, developer...
  boost::json::value content;   ///< a string, an array of parts, or null (assistant tool calls)
  boost::json::object extra{};  ///< name, tool_calls, tool_call_id...: passed through
};

struct token_usage {
  std::uint64_t prompt_tokens = 0;         ///< every input token, cached ones included
  std::uint64_t completion_tokens = 0;
  std::uint64_t cached_prompt_tokens = 0;  ///< prompt_tokens_details.cached_tokens / cache_read_input_tokens
  std::uint64_t cache_write_tokens = 0;    ///< cache_creation_input_tokens (Anthropic)

  friend bool operator==(const token_usage&, const token_usage&) = default;
};

struct chat_request {
  std::string model;                   ///< may be empty when a router picks it
  std::vector<chat_message> messages;  ///< at least one
  bool stream = false;
  boost::json::object parameters;      ///< every other field as sent: passed through
};

struct chat_response {
  std::string id;
  std::string model;                ///< as the server reported it
  std::string content;              ///< the assistant's text ("" when it only calls tools)
  std::string finish_reason;        ///< stop, length, tool_calls, content_filter...
  boost::json::array tool_calls;    ///< OpenAI form: [{id, type, function: {name, arguments}}]
  token_usage usage;
  double cost_usd = 0;              ///< from the price table; 0 where the model has no price
  std::string backend;              ///< name() of the backend that answered
  std::int64_t created = 0;         ///< Unix seconds, as the server reported it
};

/// One piece of a streamed answer. The last content chunk carries the
/// finish_reason; usage comes once, usually in a chunk of its own.
struct chat_chunk {
  std::string content_delta;
  std::optional<std::string> finish_reason;
  std::optional<token_usage> usage;
  boost::json::array tool_call_deltas;  ///< OpenAI form: [{index, id?, type?, function: {name?, arguments?}}]
};

namespace detail {

inline chat_message parse_chat_message(const boost::json::value& value, const std::string& where) {
  const auto& object = as_object(value, where, errc::invalid_request);
  chat_message message;
  const auto* role = object.if_contains("role");
  if (!role || !role->is_string()) fail(errc::invalid_request, where + ".role", "must be a string");
  message.role = std::string(role->get_string());
  if (const auto* content = object.if_contains("content")) {
    if (!content->is_string() && !content->is_array() && !content->is_null())
      fail(errc::invalid_request, where + ".content", "must be a string, an array of parts or null");
    message.content = *content;
  }
  for (const auto& field : object)
    if (field.key() != "role" && field.key() != "content") message.extra.insert(field);
  return message;
}

inline boost::json::object to_json(const chat_message& message, boost::json::storage_ptr storage) {
  boost::json::object object(storage);
  object.reserve(2 + message.extra.size());
  object["role"] = message.role;
  object["content"] = message.content;
  for (const auto& field : message.extra) object.insert(field);
  return object;
}

/// The text of a content that is a string or an array of {"type":"text"} parts.
inline std::string content_text(const boost::json::value& content) {
  if (const auto* text = content.if_string()) return std::string(*text);
  std::string joined;
  if (const auto* parts = content.if_array())
    for (const auto& part : *parts)
      if (const auto* object = part.if_object())
        if (const auto* text = object->if_contains("text"); text && text->is_string())
          joined += text->get_string();
  return joined;
}

}  // namespace detail

/// Reads a request in OpenAI's chat.completions form. Throws llmgate::error
/// (errc::invalid_request) naming the field, e.g. "messages[1].role must be
/// a string", when messages is missing or empty or a field has a wrong type.
inline chat_request parse_chat_request(const boost::json::value& value) {
  using detail::fail;
  const auto& object = detail::as_object(value, "request", errc::invalid_request);
  chat_request request;
  request.model = detail::string_field(object, "model", "request", errc::invalid_request);
  if (const auto* stream = object.if_contains("stream"); stream && !stream->is_null()) {
    if (!stream->is_bool()) fail(errc::invalid_request, "request.stream", "must be a boolean");
    request.stream = stream->get_bool();
  }
  const auto* messages = object.if_contains("messages");
  if (!messages || !messages->is_array() || messages->get_array().empty())
    fail(errc::invalid_request, "request.messages", "must be a non-empty array");
  for (std::size_t i = 0; i < messages->get_array().size(); ++i)
    request.messages.push_back(detail::parse_chat_message(
        messages->get_array()[i], "messages[" + std::to_string(i) + "]"));
  for (const auto& field : object)
    if (field.key() != "model" && field.key() != "messages" && field.key() != "stream")
      request.parameters.insert(field);
  return request;
}

/// The request in OpenAI's wire form: model, messages, stream, then every
/// passed-through parameter. `storage` lets a caller that only serialises
/// the result build it in an arena (boost::json::monotonic_resource).
inline boost::json::object to_json(const chat_request& request, boost::json::storage_ptr storage = {}) {
  boost::json::object object(storage);
  object.reserve(3 + request.parameters.size());
  object["model"] = request.model;
  boost::json::array messages(storage);
  messages.reserve(request.messages.size());
  for (const auto& message : request.messages) messages.push_back(detail::to_json(message, storage));
  object["messages"] = std::move(messages);
  object["stream"] = request.stream;
  for (const auto& field : request.parameters) object.insert(field);
  return object;
}

/// OpenAI's usage object. cache_write_tokens has no OpenAI field; it is
/// written as prompt_tokens_details.cache_write_tokens when not zero.
/// `storage`: as for to_json(chat_request).
inline boost::json::object to_json(const token_usage& usage, boost::json::storage_ptr storage = {}) {
  boost::json::object details(storage);
  details["cached_tokens"] = usage.cached_prompt_tokens;
  if (usage.cache_write_tokens) details["cache_write_tokens"] = usage.cache_write_tokens;
  return boost::json::object({{"prompt_tokens", usage.prompt_tokens},
                              {"completion_tokens", usage.completion_tokens},
                              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
                              {"prompt_tokens_details", std::move(details)}},
                             storage);
}

/// Reads OpenAI's usage object; counts absent are 0. `code` is the error
/// a wrong type raises (the caller knows whether a client or a server sent it).
inline token_usage parse_token_usage(const boost::json::object& usage,
                                     errc code = errc::upstream_protocol_error) {
  token_usage result;
  result.prompt_tokens = detail::count_field(usage, "prompt_tokens", "usage", code);
  result.completion_tokens = detail::count_field(usage, "completion_tokens", "usage", code);
  if (const auto* details = detail::object_field(usage, "prompt_tokens_details", "usage", code)) {
    result.cached_prompt_tokens =
        detail::count_field(*details, "cached_tokens", "usage.prompt_tokens_details", code);
    result.cache_write_tokens =
        detail::count_field(*details, "cache_write_tokens", "usage.prompt_tokens_details", code);
  }
  return result;
}

/// The response in OpenAI's chat.completion form, with one choice. When the
/// price table knew the model, a top-level "cost" field holds cost_usd (an
/// llmgate extension that OpenAI clients ignore). `storage`: as for
/// to_json(chat_request).
inline boost::json::object to_json(const chat_response& response, boost::json::storage_ptr storage = {}) {
  boost::json::object message({{"role", "assistant"}}, storage);
  if (response.content.empty() && !response.tool_calls.empty()) message["content"] = nullptr;
  else message["content"] = response.content;
  if (!response.tool_calls.empty()) message["tool_calls"] = response.tool_calls;
  boost::json::object choice({{"index", 0}, {"message", std::move(message)}}, storage);
  if (response.finish_reason.empty()) choice["finish_reason"] = nullptr;
  else choice["finish_reason"] = response.finish_reason;
  boost::json::array choices(storage);
  choices.emplace_back(std::move(choice));
  boost::json::object object({{"id", response.id},
                              {"object", "chat.completion"},
                              {"created", response.created},
                              {"model", response.model},
                              {"choices", std::move(choices)},
                              {"usage", to_json(response.usage, storage)}},
                             storage);
  if (response.cost_usd > 0) object["cost"] = response.cost_usd;
  return object;
}

/// Reads an OpenAI chat.completion answer (the first choice). Throws
/// llmgate::error(errc::upstream_protocol_error) when a field has a wrong
/// type or there is no choice.
inline chat_response parse_chat_response(const boost::json::value& value) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto& object = detail::as_object(value, "response", code);
  chat_response response;
  response.id = detail::string_field(object, "id", "response", code);
  response.model = detail::string_field(object, "model", "response", code);
  if (const auto* created = object.if_contains("created"); created && created->is_int64())
    response.created = created->get_int64();
  const auto* choices = detail::array_field(object, "choices", "response", code);
  if (!choices || choices->empty()) detail::fail(code, "response.choices", "must hold a choice");
  const auto& choice = detail::as_object(choices->front(), "response.choices[0]", code);
  response.finish_reason = detail::string_field(choice, "finish_reason", "response.choices[0]", code);
  if (const auto* message = detail::object_field(choice, "message", "response.choices[0]", code)) {
    if (const auto* content = message->if_contains("content"))
      response.content = detail::content_text(*content);
    if (const auto* calls = detail::array_field(*message, "tool_calls", "message", code))
      response.tool_calls = *calls;
  }
  if (const auto* usage = detail::object_field(object, "usage", "response", code))
    response.usage = parse_token_usage(*usage, code);
  return response;
}

/// One chat.completion.chunk in OpenAI's streaming form. A chunk with usage
/// and no delta is written as the include_usage chunk (empty choices).
inline boost::json::object to_json(const chat_chunk& chunk, std::string_view id,
                                   std::string_view model, std::int64_t created) {
  boost::json::object object{{"id", id},
                             {"object", "chat.completion.chunk"},
                             {"created", created},
                             {"model", model}};
  const bool usage_only = chunk.usage && chunk.content_delta.empty() &&
                          !chunk.finish_reason && chunk.tool_call_deltas.empty();
  boost::json::array choices;
  if (!usage_only) {
    boost::json::object delta;
    if (!chunk.content_delta.empty()) delta["content"] = chunk.content_delta;
    if (!chunk.tool_call_deltas.empty()) delta["tool_calls"] = chunk.tool_call_deltas;
    boost::json::object choice{{"index", 0}, {"delta", std::move(delta)}};
    if (chunk.finish_reason) choice["finish_reason"] = *chunk.finish_reason;
    else choice["finish_reason"] = nullptr;
    choices.push_back(std::move(choice));
  }
  object["choices"] = std::move(choices);
  if (chunk.usage) object["usage"] = to_json(*chunk.usage);
  return object;
}

/// Reads one chat.completion.chunk (the first choice's delta). The usage
/// chunk of stream_options.include_usage is read whether its choices are
/// empty, null or, as some servers send them, non-empty. Throws
/// llmgate::error(errc::upstream_protocol_error) on wrong types.
inline chat_chunk parse_chat_chunk(const boost::json::value& value) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto& object = detail::as_object(value, "chunk", code);
  chat_chunk chunk;
  const auto* choices = detail::array_field(object, "choices", "chunk", code);
  if (choices && !choices->empty()) {
    const auto& choice = detail::as_object(choices->front(), "chunk.choices[0]", code);
    if (const auto* reason = choice.if_contains("finish_reason"); reason && !reason->is_null())
      chunk.finish_reason = detail::string_field(choice, "finish_reason", "chunk.choices[0]", code);
    if (const auto* delta = detail::object_field(choice, "delta", "chunk.choices[0]", code)) {
      if (const auto* content = delta->if_contains("content"))
        chunk.content_delta = detail::content_text(*content);
      if (const auto* calls = detail::array_field(*delta, "tool_calls", "delta", code))
        chunk.tool_call_deltas = *calls;
    }
  }
  if (const auto* usage = detail::object_field(object, "usage", "chunk", code))
    chunk.usage = parse_token_usage(*usage, code);
  return chunk;
}

}  // namespace llmgate::inline v0
