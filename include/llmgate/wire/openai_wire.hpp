// openai_wire: the OpenAI chat.completions wire form of the chat vocabulary,
// the one reader and writer every part of llmgate uses: requests a client
// sends (parse_chat_request), the request body sent to OpenAI-compatible
// servers (append_chat_request_body), their answers (parse_chat_response,
// parse_chat_chunk, parse_token_usage; llama.cpp's timings.cache_n where the
// usage has no cached count), and what the gateway answers (the
// chat.completion body and the chat.completion.chunk bodies of a stream).
//
// The writers append bytes to a std::string with no JSON tree: strings
// escaped as boost::json::serialize writes them, doubles as plain decimals
// (detail/json_appender.hpp), and the passed-through JSON text (parameters,
// extra, content_json, tool_calls_json) written as it is held. The readers
// keep passed-through values in that same form, so a request read and
// written again has the same bytes.
//
// Network side: this header uses Boost.JSON; chat/chat.hpp does not.
#pragma once

#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view

#include <boost/json/array.hpp>               // boost::json::array
#include <boost/json/monotonic_resource.hpp>  // an arena on the stack for a body's parse
#include <boost/json/object.hpp>              // boost::json::object
#include <boost/json/parse.hpp>               // boost::json::parse
#include <boost/json/value.hpp>               // boost::json::value

#include "llmgate/wire/detail/json_fields.hpp"  // as_object, string_field, count_field, fail...
#include "llmgate/chat/chat.hpp"                    // the vocabulary
#include "llmgate/wire/detail/exact_json_parse.hpp"  // parse_exact
#include "llmgate/wire/detail/json_appender.hpp"    // json_appender
#include "llmgate/wire/detail/standard_parameters.hpp"  // check_standard_parameters, wrong_type
#include "llmgate/chat/request_error.hpp"           // request_error
#include "llmgate/error.hpp"                        // llmgate::error, errc

namespace llmgate::inline v0 {

namespace detail {

/// The text of a content that is a string or an array of {"type":"text"} parts.
inline std::string text_of(const boost::json::value& content) {
  if (const auto* text = content.if_string()) return std::string(*text);
  std::string joined;
  if (const auto* parts = content.if_array())
    for (const auto& part : *parts)
      if (const auto* object = part.if_object())
        if (const auto* text = object->if_contains("text"); text && text->is_string())
          joined += text->get_string();
  return joined;
}

/// `value` as JSON text, as json_appender writes it (scalars with no
/// serializer, doubles as plain decimals).
inline std::string json_text(const boost::json::value& value) {
  std::string text;
  json_appender(text).value(value);
  return text;
}

/// JSON text llmgate holds (a json_field, content_json, tool_calls_json)
/// as a value, with the numbers it was written from (parse_exact); null
/// where the text is not JSON. `storage`: as for boost::json::parse.
inline boost::json::value parse_json_text(std::string_view text, boost::json::storage_ptr storage = {}) {
  boost::json::error_code ec;
  return parse_exact(text, ec, std::move(storage));
}

/// Fields as a JSON object, for adapters that rebuild a request in
/// another form (Anthropic, Ollama).
inline boost::json::object to_json_object(const json_fields& fields, boost::json::storage_ptr storage = {}) {
  boost::json::object object(storage);
  object.reserve(fields.size());
  for (const auto& field : fields) object.emplace(field.name, parse_json_text(field.json, storage));
  return object;
}

/// A message's content as a JSON value: its string, or its content_json.
inline boost::json::value content_value(const chat_message& message, boost::json::storage_ptr storage = {}) {
  if (message.content_json.empty()) return boost::json::value(boost::json::string_view(message.content), storage);
  return parse_json_text(message.content_json, std::move(storage));
}

/// The elements of a JSON array held as text (tool_calls_json,
/// tool_call_deltas_json); empty where there is none or it is not an array.
inline boost::json::array array_of(std::string_view text) {
  if (text.empty()) return {};
  auto value = parse_json_text(text);
  if (auto* array = value.if_array()) return std::move(*array);
  return {};
}

/// The string member `name` of `object`; empty where either is missing or
/// the member is not a string.
inline std::string_view string_member(const boost::json::object* object, std::string_view name) {
  const auto* value = object ? object->if_contains(name) : nullptr;
  return value && value->is_string() ? std::string_view(value->get_string()) : std::string_view();
}

/// The "function" object of a tool call or tool-call delta of OpenAI's
/// form; null where it has none.
inline const boost::json::object* function_of(const boost::json::object& call) {
  const auto* function = call.if_contains("function");
  return function ? function->if_object() : nullptr;
}

inline chat_message parse_chat_message(const boost::json::value& value, const std::string& where) {
  if (!value.is_object()) wrong_type(where, "an object", value);
  const auto& object = value.get_object();
  chat_message message;
  const auto* role = object.if_contains("role");
  if (!role || role->is_null()) missing_parameter(where + ".role");
  if (!role->is_string()) wrong_type(where + ".role", "a string", *role);
  message.role = std::string(role->get_string());
  const auto* content = object.if_contains("content");
  if (content && !content->is_string() && !content->is_array() && !content->is_null())
    wrong_type(where + ".content", "a string, an array of content parts or null", *content);
  if (content && content->is_string()) {
    message.content = std::string(content->get_string());
  } else if (content && content->is_array()) {
    message.content = text_of(*content);
    message.content_json = json_text(*content);
  } else {
    message.content_json = "null";  // null, or no content at all: sent on as null
  }
  if (object.size() > 2) message.extra.reserve(object.size() - 2);
  for (const auto& field : object)
    if (field.key() != "role" && field.key() != "content")
      message.extra.push_back({std::string(field.key()), json_text(field.value())});
  return message;
}

// The members of OpenAI's usage object, without its braces.
inline void append_usage_members(json_appender& json, const token_usage& usage) {
  json.raw("\"prompt_tokens\":");
  json.number(usage.prompt_tokens);
  json.raw(",\"completion_tokens\":");
  json.number(usage.completion_tokens);
  json.raw(",\"total_tokens\":");
  json.number(usage.prompt_tokens + usage.completion_tokens);
  json.raw(",\"prompt_tokens_details\":{\"cached_tokens\":");
  json.number(usage.cached_prompt_tokens);
  if (usage.cache_write_tokens) {
    json.raw(",\"cache_write_tokens\":");
    json.number(usage.cache_write_tokens);
  }
  json.raw("}");
}

// The gateway's usage object: OpenAI's, with what the answer cost and,
// for a cached answer, what it saved.
inline void append_priced_usage(json_appender& json, const token_usage& usage, double cost_usd,
                                std::optional<double> saved_usd) {
  json.raw("{");
  append_usage_members(json, usage);
  json.raw(",\"cost_usd\":");
  json.number(cost_usd);
  if (saved_usd) {
    json.raw(",\"saved_usd\":");
    json.number(*saved_usd);
  }
  json.raw("}");
}

// {"id":..,"object":"chat.completion.chunk","created":..,"model":..,"choices":
inline void append_chunk_head(json_appender& json, std::string_view id, std::string_view model,
                              std::int64_t created) {
  json.raw("{\"id\":");
  json.string(id);
  json.raw(",\"object\":\"chat.completion.chunk\",\"created\":");
  json.number(created);
  json.raw(",\"model\":");
  json.string(model);
  json.raw(",\"choices\":");
}

// The chat.completion body; usage priced (the gateway's form) when
// `priced`, else OpenAI's usage and a top-level "cost".
inline void append_completion(json_appender& json, const chat_response& response, std::string_view id,
                              std::int64_t created, bool priced, std::optional<double> saved_usd) {
  json.raw("{\"id\":");
  json.string(id);
  json.raw(",\"object\":\"chat.completion\",\"created\":");
  json.number(created);
  json.raw(",\"model\":");
  json.string(response.model);
  json.raw(",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
  if (response.content.empty() && !response.tool_calls_json.empty()) json.raw("null");
  else json.string(response.content);
  if (!response.tool_calls_json.empty()) {
    json.raw(",\"tool_calls\":");
    json.raw(response.tool_calls_json);
  }
  json.raw("},\"finish_reason\":");
  if (response.finish_reason.empty()) json.raw("null");
  else json.string(response.finish_reason);
  json.raw("}],\"usage\":");
  if (priced) {
    append_priced_usage(json, response.usage, response.cost_usd, saved_usd);
  } else {
    json.raw("{");
    append_usage_members(json, response.usage);
    json.raw("}");
  }
  if (response.cost_usd > 0) {
    json.raw(",\"cost\":");
    json.number(response.cost_usd);
  }
  json.raw("}");
}

}  // namespace detail

/// Reads a request in OpenAI's chat.completions form. Throws request_error
/// naming the field at fault (its param()) when the request is not an
/// object, model or messages is missing, or a standard field has a wrong
/// type or value (detail/standard_parameters.hpp).
inline chat_request parse_chat_request(const boost::json::value& value) {
  if (!value.is_object()) throw request_error("", "The request body must be a JSON object.");
  const auto& object = value.get_object();
  detail::check_standard_parameters(object);
  chat_request request;
  request.model = std::string(object.at("model").get_string());
  if (const auto* stream = object.if_contains("stream"); stream && !stream->is_null()) request.stream = stream->get_bool();
  const auto& messages = object.at("messages").get_array();
  request.messages.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i)
    request.messages.push_back(detail::parse_chat_message(messages[i], "messages[" + std::to_string(i) + "]"));
  const std::size_t named = 1 + object.contains("model") + object.contains("stream");  // and messages
  if (object.size() > named) request.parameters.reserve(object.size() - named);
  for (const auto& field : object)
    if (field.key() != "model" && field.key() != "messages" && field.key() != "stream")
      request.parameters.push_back({std::string(field.key()), detail::json_text(field.value())});
  return request;
}

/// How deep a request's JSON may nest by default: real tool schemas (JSON
/// Schema inside function parameters) go deeper than Boost.JSON's 32.
inline constexpr std::size_t default_max_json_depth = 64;

/// A request's JSON parse options: nested at most `max_depth`.
inline boost::json::parse_options request_json_options(std::size_t max_depth = default_max_json_depth) {
  boost::json::parse_options options;
  options.max_depth = max_depth;
  return options;
}

/// A request body's JSON, nested at most `max_depth`, in `storage`; a body
/// that is not JSON is a request_error.
inline boost::json::value parse_request_json(std::string_view body, std::size_t max_depth,
                                             boost::json::storage_ptr storage = {}) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec, std::move(storage), request_json_options(max_depth));
  if (ec) throw request_error("", "We could not parse the JSON body of your request: " + ec.message() + ".", "invalid_json");
  return value;
}

/// parse_chat_request of a body's text, nested at most `max_depth`; a body
/// that is not JSON is a request_error too.
inline chat_request parse_chat_request(std::string_view body, std::size_t max_depth = default_max_json_depth) {
  unsigned char buffer[4096];  // the parsed tree lives only while the request copies what it keeps
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  return parse_chat_request(parse_request_json(body, max_depth, &arena));
}

/// Whether the client asked for a stream's usage chunk
/// (stream_options.include_usage).
inline bool usage_chunk_asked(const chat_request& request) {
  const json_field* options = find_field(request.parameters, "stream_options");
  if (!options) return false;
  const boost::json::value value = detail::parse_json_text(options->json);
  const auto* object = value.if_object();
  const auto* include = object ? object->if_contains("include_usage") : nullptr;
  return include && include->is_bool() && include->get_bool();
}

/// What a request body sent upstream changes from the request.
struct request_body_options {
  std::string_view model = {};      ///< replaces request.model when not empty
  std::optional<bool> stream = {};  ///< replaces request.stream when set
  bool include_usage = false;       ///< sets stream_options.include_usage to true (a stream's usage chunk)
};

/// Appends the request in OpenAI's wire form: model, messages (role,
/// content, then each extra field), stream, then every passed-through
/// parameter; a field named like one written before it is left out.
inline void append_chat_request_body(std::string& out, const chat_request& request,
                                     const request_body_options& options = {}) {
  detail::json_appender json(out);
  json.raw("{\"model\":");
  json.string(options.model.empty() ? std::string_view(request.model) : options.model);
  json.raw(",\"messages\":[");
  for (const auto& message : request.messages) {
    if (&message != &request.messages.front()) json.raw(",");
    json.raw("{\"role\":");
    json.string(message.role);
    json.raw(",\"content\":");
    if (message.content_json.empty()) json.string(message.content);
    else json.raw(message.content_json);
    for (const auto& field : message.extra) {
      if (field.name == "role" || field.name == "content") continue;
      json.raw(",");
      json.string(field.name);
      json.raw(":");
      json.raw(field.json);
    }
    json.raw("}");
  }
  json.raw("],\"stream\":");
  json.raw(options.stream.value_or(request.stream) ? "true" : "false");
  bool usage_asked = false;
  for (const auto& field : request.parameters) {
    if (field.name == "model" || field.name == "messages" || field.name == "stream") continue;
    json.raw(",");
    json.string(field.name);
    json.raw(":");
    if (options.include_usage && field.name == "stream_options") {
      usage_asked = true;
      auto stream_options = detail::parse_json_text(field.json);
      if (!stream_options.is_object()) stream_options = boost::json::object();
      stream_options.get_object()["include_usage"] = true;
      json.value(stream_options);
    } else {
      json.raw(field.json);
    }
  }
  if (options.include_usage && !usage_asked) json.raw(",\"stream_options\":{\"include_usage\":true}");
  json.raw("}");
}

/// append_chat_request_body into a new string.
inline std::string chat_request_body(const chat_request& request, const request_body_options& options = {}) {
  std::string body;
  body.reserve(256);
  append_chat_request_body(body, request, options);
  return body;
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

/// llama.cpp's server reports the prompt tokens it reused from its cache
/// as `timings.cache_n` beside the usage, and its older releases put no
/// prompt_tokens_details in the usage: where `usage` has none, a
/// timings.cache_n of the answer or chunk `message` is the cached count.
inline void read_cached_from_timings(const boost::json::object& message, const boost::json::object& usage,
                                     token_usage& counts, errc code = errc::upstream_protocol_error) {
  if (const auto* details = usage.if_contains("prompt_tokens_details"); details && !details->is_null()) return;
  // A server's own extension: read where it has llama.cpp's form, else left alone.
  const auto* timings = message.if_contains("timings");
  if (!timings || !timings->is_object()) return;
  if (const auto* cache_n = timings->get_object().if_contains("cache_n"); cache_n && cache_n->is_number())
    counts.cached_prompt_tokens = detail::count_field(timings->get_object(), "cache_n", "timings", code);
}

/// Appends OpenAI's usage object. cache_write_tokens has no OpenAI field;
/// it is written as prompt_tokens_details.cache_write_tokens when not zero.
inline void append_token_usage(std::string& out, const token_usage& usage) {
  detail::json_appender json(out);
  json.raw("{");
  detail::append_usage_members(json, usage);
  json.raw("}");
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
    if (const auto* content = message->if_contains("content")) response.content = detail::text_of(*content);
    if (const auto* calls = detail::array_field(*message, "tool_calls", "message", code); calls && !calls->empty())
      response.tool_calls_json = detail::json_text(*calls);
  }
  if (const auto* usage = detail::object_field(object, "usage", "response", code)) {
    response.usage = parse_token_usage(*usage, code);
    read_cached_from_timings(object, *usage, response.usage, code);
  }
  return response;
}

/// Appends the response in OpenAI's chat.completion form, with one choice,
/// as a model server answers. When the price table knew the model, a
/// top-level "cost" field holds cost_usd (an llmgate extension that OpenAI
/// clients ignore).
inline void append_completion_body(std::string& out, const chat_response& response) {
  detail::json_appender json(out);
  detail::append_completion(json, response, response.id, response.created, false, std::nullopt);
}

/// The chat.completion body the gateway answers with: as above, under the
/// gateway's `id` and `created`, with usage extended by cost_usd and, when
/// given, saved_usd.
inline void append_completion_body(std::string& out, const chat_response& response, std::string_view id,
                                   std::int64_t created, std::optional<double> saved_usd) {
  detail::json_appender json(out);
  detail::append_completion(json, response, id, created, true, saved_usd);
}

/// append_completion_body(out, response) into a new string.
inline std::string completion_body(const chat_response& response) {
  std::string body;
  append_completion_body(body, response);
  return body;
}

/// Appends one chat.completion.chunk in OpenAI's streaming form. A chunk
/// with usage and nothing else is written as the include_usage chunk
/// (empty choices).
inline void append_chunk_body(std::string& out, const chat_chunk& chunk, std::string_view id,
                              std::string_view model, std::int64_t created) {
  detail::json_appender json(out);
  detail::append_chunk_head(json, id, model, created);
  const bool usage_only = chunk.usage && chunk.content_delta.empty() && !chunk.finish_reason &&
                          chunk.tool_call_deltas_json.empty();
  if (usage_only) {
    json.raw("[]");
  } else {
    json.raw("[{\"index\":0,\"delta\":{");
    if (!chunk.content_delta.empty()) {
      json.raw("\"content\":");
      json.string(chunk.content_delta);
    }
    if (!chunk.tool_call_deltas_json.empty()) {
      json.raw(chunk.content_delta.empty() ? "\"tool_calls\":" : ",\"tool_calls\":");
      json.raw(chunk.tool_call_deltas_json);
    }
    json.raw("},\"finish_reason\":");
    if (chunk.finish_reason) json.string(*chunk.finish_reason);
    else json.raw("null");
    json.raw("}]");
  }
  if (chunk.usage) {
    json.raw(",\"usage\":{");
    detail::append_usage_members(json, *chunk.usage);
    json.raw("}");
  }
  json.raw("}");
}

/// append_chunk_body into a new string.
inline std::string chunk_body(const chat_chunk& chunk, std::string_view id, std::string_view model,
                              std::int64_t created) {
  std::string body;
  append_chunk_body(body, chunk, id, model, created);
  return body;
}

/// Appends the first chunk of a stream the gateway sends: the assistant's
/// role, with empty content.
inline void append_role_chunk_body(std::string& out, std::string_view id, std::string_view model,
                                   std::int64_t created) {
  detail::json_appender json(out);
  detail::append_chunk_head(json, id, model, created);
  json.raw("[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}");
}

/// Appends the usage chunk of a stream the gateway sends (asked for with
/// stream_options.include_usage): empty choices, as OpenAI sends it, and
/// the usage as in the gateway's chat.completion body (cost_usd and, when
/// given, saved_usd).
inline void append_usage_chunk_body(std::string& out, const token_usage& usage, double cost_usd,
                                    std::optional<double> saved_usd, std::string_view id,
                                    std::string_view model, std::int64_t created) {
  detail::json_appender json(out);
  detail::append_chunk_head(json, id, model, created);
  json.raw("[],\"usage\":");
  detail::append_priced_usage(json, usage, cost_usd, saved_usd);
  json.raw("}");
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
      if (const auto* content = delta->if_contains("content")) chunk.content_delta = detail::text_of(*content);
      if (const auto* calls = detail::array_field(*delta, "tool_calls", "delta", code); calls && !calls->empty())
        chunk.tool_call_deltas_json = detail::json_text(*calls);
    }
  }
  if (const auto* usage = detail::object_field(object, "usage", "chunk", code)) {
    chunk.usage = parse_token_usage(*usage, code);
    read_cached_from_timings(object, *usage, *chunk.usage, code);
  }
  return chunk;
}

}  // namespace llmgate::inline v0
