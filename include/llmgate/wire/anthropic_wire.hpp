// anthropic_wire: Anthropic's Messages form (POST /v1/messages) on the
// serving side: a request read into the chat layer's chat_request, and an
// answer written back as a Message, a stream of Message events, or an
// error object. (backend/anthropic_backend.hpp translates the other way,
// for a model server that speaks Messages.)
//
// A request becomes the chat_request its chat-completions equivalent
// would: "system" a leading system message; a single text block a string
// content; tool_use blocks an assistant's tool_calls; tool_result blocks
// tool messages; images image_url parts (data: URLs for base64);
// max_tokens (required, as Anthropic requires it) max_tokens,
// stop_sequences stop, metadata.user_id user, tools OpenAI's function
// tools, tool_choice OpenAI's form (any: required; disable_parallel_tool_use:
// parallel_tool_calls false). So a question asked through either route
// finds the other's answer in the caches, which compare the chat_request.
// temperature, top_p, top_k and any other field pass through as they are.
// A tool_result's is_error is not carried: OpenAI's tool messages have no
// such flag.
//
// The answer's usage is written in Anthropic's counting: input_tokens
// excludes the cache's read and written tokens, reported apart
// (chat/chat.hpp counts them all in prompt_tokens).
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::int64_t
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::exchange
#include <vector>       // std::vector

#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/monotonic_resource.hpp>  // an arena for a body's tree
#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/parse.hpp>      // boost::json::parse (a tool call's arguments)
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/chat/chat.hpp"                     // chat_request, chat_response, chat_chunk
#include "llmgate/chat/request_error.hpp"            // request_error
#include "llmgate/wire/detail/json_appender.hpp"     // json_appender
#include "llmgate/wire/detail/request_path.hpp"      // request_path, required_string, set_parts_content
#include "llmgate/wire/detail/standard_parameters.hpp"  // missing_parameter, wrong_type, wrong_value
#include "llmgate/wire/openai_wire.hpp"              // detail::json_text, text_of, array_of, string_member, function_of

namespace llmgate::inline v0 {

namespace detail {

namespace json = boost::json;

// The blocks of a content that is not a string, each an object with a type.
inline const json::array& content_blocks(const json::value& content, const request_path& where) {
  if (!content.is_array()) wrong_type(where.text(), "a string or an array of content blocks", content);
  const json::array& blocks = content.get_array();
  if (blocks.empty()) wrong_value(where.text(), "at least one content block", content);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const request_path at = where.element(i);
    if (!blocks[i].is_object()) wrong_type(at.text(), "a content block (an object)", blocks[i]);
    required_string(blocks[i].get_object(), "type", at);
  }
  return blocks;
}

// The text of a content that is a string or blocks (a tool result's).
inline std::string content_text_of(const json::value& content, const request_path& where) {
  if (const auto* text = content.if_string()) return std::string(*text);
  return text_of(content_blocks(content, where));
}

// An image block as an OpenAI image_url part: its URL, or its base64 data
// as a data: URL.
inline json::object image_part(const json::object& block, const request_path& where) {
  const request_path source_path = where.member("source");
  const auto* source = block.if_contains("source");
  if (!source || !source->is_object()) missing_parameter(source_path.text());
  const auto& from = source->get_object();
  const std::string_view kind = required_string(from, "type", source_path);
  std::string url;
  if (kind == "url") {
    url = required_string(from, "url", source_path);
  } else if (kind == "base64") {
    url = "data:" + std::string(required_string(from, "media_type", source_path)) + ";base64," +
          std::string(required_string(from, "data", source_path));
  } else {
    wrong_value(source_path.member("type").text(), "\"base64\" or \"url\"", from.at("type"));
  }
  return {{"type", "image_url"}, {"image_url", {{"url", std::move(url)}}}};
}

// One message of the request's "messages", appended to `out` as the chat
// messages it means: tool results become tool messages (before the rest
// of the user's turn), tool uses the assistant's tool_calls.
inline void append_messages(const json::value& value, const request_path& where, std::vector<chat_message>& out) {
  if (!value.is_object()) wrong_type(where.text(), "an object", value);
  const auto& object = value.get_object();
  const std::string_view role = required_string(object, "role", where);
  if (role != "user" && role != "assistant")
    wrong_value(where.member("role").text(), "\"user\" or \"assistant\"", object.at("role"));
  const request_path content_path = where.member("content");
  const auto* content = object.if_contains("content");
  if (!content || content->is_null()) missing_parameter(content_path.text());
  chat_message message;
  message.role = role;
  if (const auto* text = content->if_string()) {  // the common case, with nothing to translate
    message.content = *text;
    out.push_back(std::move(message));
    return;
  }
  const json::array& blocks = content_blocks(*content, content_path);
  json::array parts;       // text and images
  json::array tool_calls;  // the assistant's tool_use blocks
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const request_path at = content_path.element(i);
    const auto& block = blocks[i].get_object();
    const std::string_view type = block.at("type").get_string();
    if (type == "text") {
      json::object part{{"type", "text"}, {"text", required_string(block, "text", at)}};
      if (const auto* marker = block.if_contains("cache_control")) part["cache_control"] = *marker;
      parts.push_back(std::move(part));
    } else if (type == "image") {
      parts.push_back(image_part(block, at));
    } else if (type == "tool_use" && role == "assistant") {
      const auto* input = block.if_contains("input");
      tool_calls.push_back(json::object{
          {"id", required_string(block, "id", at)},
          {"type", "function"},
          {"function", {{"name", required_string(block, "name", at)},
                        {"arguments", input ? json::serialize(*input) : std::string("{}")}}}});
    } else if (type == "tool_result" && role == "user") {
      chat_message result;
      result.role = "tool";
      const auto* result_content = block.if_contains("content");
      if (result_content && !result_content->is_null())
        result.content = content_text_of(*result_content, at.member("content"));
      result.extra.push_back({"tool_call_id", json_text(json::string(required_string(block, "tool_use_id", at)))});
      out.push_back(std::move(result));
    } else {
      wrong_value(at.member("type").text(),
                  role == "user" ? "\"text\", \"image\" or \"tool_result\"" : "\"text\" or \"tool_use\"",
                  block.at("type"));
    }
  }
  if (parts.empty() && tool_calls.empty() && !out.empty() && out.back().role == "tool") return;  // results alone
  if (!parts.empty()) set_parts_content(message, parts);
  else if (!tool_calls.empty()) message.content_json = "null";  // as OpenAI writes a tool-calling turn
  if (!tool_calls.empty()) message.extra.push_back({"tool_calls", json_text(tool_calls)});
  out.push_back(std::move(message));
}

// Anthropic's tools as OpenAI's function tools.
inline json::array openai_tools(const json::value& tools, const request_path& where) {
  if (!tools.is_array()) wrong_type(where.text(), "an array", tools);
  json::array out;
  for (std::size_t i = 0; i < tools.get_array().size(); ++i) {
    const request_path at = where.element(i);
    const auto& tool = tools.get_array()[i];
    if (!tool.is_object()) wrong_type(at.text(), "an object", tool);
    const auto& object = tool.get_object();
    json::object function{{"name", required_string(object, "name", at)}};
    if (const auto* description = object.if_contains("description")) function["description"] = *description;
    const auto* schema = object.if_contains("input_schema");
    if (!schema) missing_parameter(at.member("input_schema").text());
    function["parameters"] = *schema;
    out.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

}  // namespace detail

/// Reads a request in Anthropic's Messages form into the chat_request its
/// chat-completions equivalent would be. Throws request_error naming the
/// field at fault ("max_tokens", "messages[1].content[0].type").
inline chat_request parse_messages_request(const boost::json::value& value) {
  namespace json = boost::json;
  if (!value.is_object()) throw request_error("", "The request body must be a JSON object.");
  const auto& object = value.get_object();
  const detail::request_path root;
  chat_request request;
  request.model = detail::required_string(object, "model", root);
  const auto* max_tokens = object.if_contains("max_tokens");
  if (!max_tokens || max_tokens->is_null()) detail::missing_parameter("max_tokens");
  if (!max_tokens->is_int64() && !max_tokens->is_uint64()) detail::wrong_type("max_tokens", "an integer", *max_tokens);
  if (max_tokens->to_number<double>() < 1) detail::wrong_value("max_tokens", "an integer of at least 1", *max_tokens);
  if (const auto* stream = object.if_contains("stream"); stream && !stream->is_null()) {
    if (!stream->is_bool()) detail::wrong_type("stream", "a boolean", *stream);
    request.stream = stream->get_bool();
  }

  if (const auto* system = object.if_contains("system"); system && !system->is_null()) {
    chat_message message;
    message.role = "system";
    if (const auto* text = system->if_string()) {
      message.content = *text;
    } else {
      const detail::request_path system_path = root.member("system");
      const json::array& blocks = detail::content_blocks(*system, system_path);
      for (std::size_t i = 0; i < blocks.size(); ++i)
        if (blocks[i].get_object().at("type") != "text")
          detail::wrong_value(system_path.element(i).member("type").text(), "\"text\"", blocks[i].get_object().at("type"));
      detail::set_parts_content(message, blocks);
    }
    request.messages.push_back(std::move(message));
  }
  const auto* messages = object.if_contains("messages");
  if (!messages || messages->is_null()) detail::missing_parameter("messages");
  if (!messages->is_array()) detail::wrong_type("messages", "an array", *messages);
  if (messages->get_array().empty()) detail::wrong_value("messages", "at least one message", *messages);
  const detail::request_path messages_path = root.member("messages");
  request.messages.reserve(request.messages.size() + messages->get_array().size());
  for (std::size_t i = 0; i < messages->get_array().size(); ++i)
    detail::append_messages(messages->get_array()[i], messages_path.element(i), request.messages);

  for (const auto& field : object) {
    const std::string_view name = field.key();
    const json::value& v = field.value();
    if (name == "model" || name == "messages" || name == "system" || name == "stream") continue;
    if (name == "stop_sequences") {
      if (!v.is_array()) detail::wrong_type(name, "an array of strings", v);
      set_field(request.parameters, "stop", detail::json_text(v));
    } else if (name == "metadata") {
      if (!v.is_object()) detail::wrong_type(name, "an object", v);
      if (const auto* user = v.get_object().if_contains("user_id"); user && !user->is_null())
        set_field(request.parameters, "user", detail::json_text(*user));
    } else if (name == "tools") {
      set_field(request.parameters, "tools", detail::json_text(detail::openai_tools(v, root.member("tools"))));
    } else if (name == "tool_choice") {
      if (!v.is_object()) detail::wrong_type(name, "an object", v);
      const auto& choice = v.get_object();
      const detail::request_path choice_path = root.member("tool_choice");
      const std::string_view type = detail::required_string(choice, "type", choice_path);
      json::value openai;
      if (type == "auto" || type == "none") openai = json::string(type);
      else if (type == "any") openai = "required";
      else if (type == "tool")
        openai = json::object{{"type", "function"},
                              {"function", {{"name", detail::required_string(choice, "name", choice_path)}}}};
      else detail::wrong_value("tool_choice.type", "\"auto\", \"any\", \"tool\" or \"none\"", choice.at("type"));
      set_field(request.parameters, "tool_choice", detail::json_text(openai));
      if (const auto* serial = choice.if_contains("disable_parallel_tool_use"); serial && *serial == true)
        set_field(request.parameters, "parallel_tool_calls", "false");
    } else {
      set_field(request.parameters, name, detail::json_text(v));  // max_tokens, temperature, top_p, top_k...
    }
  }
  return request;
}

/// parse_messages_request of a body's text, nested at most `max_depth`; a
/// body that is not JSON is a request_error too.
inline chat_request parse_messages_request(std::string_view body, std::size_t max_depth = default_max_json_depth) {
  unsigned char buffer[4096];  // the parsed tree lives only while the request copies what it keeps
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  return parse_messages_request(parse_request_json(body, max_depth, &arena));
}

/// Anthropic's stop_reason for a finish_reason (OpenAI's vocabulary).
inline std::string_view anthropic_stop_reason(std::string_view finish_reason) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls") return "tool_use";
  if (finish_reason == "content_filter") return "refusal";
  return "end_turn";
}

namespace detail {

// Anthropic's usage members, without braces: input_tokens apart from the
// cache's read and written tokens.
inline void append_anthropic_usage(json_appender& json, const token_usage& usage) {
  const std::uint64_t cached = usage.cached_prompt_tokens + usage.cache_write_tokens;
  json.raw("\"input_tokens\":");
  json.number(usage.prompt_tokens > cached ? usage.prompt_tokens - cached : std::uint64_t{0});
  json.raw(",\"cache_creation_input_tokens\":");
  json.number(usage.cache_write_tokens);
  json.raw(",\"cache_read_input_tokens\":");
  json.number(usage.cached_prompt_tokens);
  json.raw(",\"output_tokens\":");
  json.number(usage.completion_tokens);
}

// A tool call of OpenAI's form as a tool_use block; its arguments, JSON
// text, as the block's input (an empty object where they are not JSON).
inline void append_tool_use(json_appender& json, const boost::json::object& call) {
  const boost::json::object* f = function_of(call);
  boost::system::error_code ec;
  boost::json::value input = boost::json::parse(string_member(f, "arguments"), ec);
  if (ec || !input.is_object()) input = boost::json::object();
  json.raw("{\"type\":\"tool_use\",\"id\":");
  json.string(string_member(&call, "id"));
  json.raw(",\"name\":");
  json.string(string_member(f, "name"));
  json.raw(",\"input\":");
  json.value(input);
  json.raw("}");
}

}  // namespace detail

/// An answer as Anthropic's Message object: a text block (when there is
/// text), then a tool_use block per tool call.
inline std::string messages_response_body(const chat_response& response, std::string_view id, std::string_view model) {
  std::string out;
  detail::json_appender json(out);
  json.raw("{\"id\":");
  json.string(id);
  json.raw(",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
  json.string(model);
  json.raw(",\"content\":[");
  bool first = true;
  if (!response.content.empty()) {
    json.raw("{\"type\":\"text\",\"text\":");
    json.string(response.content);
    json.raw("}");
    first = false;
  }
  for (const auto& call : detail::array_of(response.tool_calls_json)) {
    if (!call.is_object()) continue;
    if (!std::exchange(first, false)) json.raw(",");
    detail::append_tool_use(json, call.get_object());
  }
  json.raw("],\"stop_reason\":");
  json.string(anthropic_stop_reason(response.finish_reason));
  json.raw(",\"stop_sequence\":null,\"usage\":{");
  detail::append_anthropic_usage(json, response.usage);
  json.raw("}}");
  return out;
}

/// Anthropic's error type for an HTTP status.
inline std::string_view anthropic_error_type(unsigned status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/// Anthropic's error object: {"type":"error","error":{"type":..,"message":..}}.
inline std::string messages_error_body(std::string_view type, std::string_view message) {
  std::string out;
  detail::json_appender json(out);
  json.raw("{\"type\":\"error\",\"error\":{\"type\":");
  json.string(type);
  json.raw(",\"message\":");
  json.string(message);
  json.raw("}}");
  return out;
}

/// A streamed answer as Anthropic's server-sent events, built from the
/// chat layer's chunks (the events of named_event_stream.hpp): message_start (and a ping), then per content block
/// content_block_start, its deltas (text_delta, or input_json_delta for a
/// tool call's arguments) and content_block_stop, then message_delta with
/// the stop reason and usage, and message_stop. Each call returns the
/// events' text to send.
class messages_stream_events {
 public:
  explicit messages_stream_events(std::string id) : id_(std::move(id)) {}

  /// The message's id.
  const std::string& id() const noexcept { return id_; }

  /// message_start (naming `model`) and a ping.
  std::string start(std::string_view model) {
    std::string out;
    begin_event(out, "message_start");
    detail::json_appender json(out);
    json.raw("{\"type\":\"message_start\",\"message\":{\"id\":");
    json.string(id_);
    json.raw(",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    json.string(model);
    json.raw(",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{");
    detail::append_anthropic_usage(json, {});
    json.raw("}}}");
    end_event(out);
    begin_event(out, "ping");
    out += "{\"type\":\"ping\"}";
    end_event(out);
    return out;
  }

  /// A chunk's text and tool-call deltas (its finish_reason and usage wait
  /// for finish()).
  std::string chunk(const chat_chunk& chunk) {
    std::string out;
    if (!chunk.content_delta.empty()) {
      if (open_ != block::text) open_block(out, block::text, "{\"type\":\"text\",\"text\":\"\"}");
      delta(out, "text_delta", "text", chunk.content_delta);
    }
    for (const auto& call_delta : detail::array_of(chunk.tool_call_deltas_json)) {
      const auto* call = call_delta.if_object();
      if (!call) continue;
      const auto* index = call->if_contains("index");
      const std::int64_t tool = index && index->is_int64() ? index->get_int64() : 0;
      const boost::json::object* f = detail::function_of(*call);
      if (open_ != block::tool || tool != open_tool_) {
        std::string start;
        detail::json_appender json(start);
        json.raw("{\"type\":\"tool_use\",\"id\":");
        json.string(detail::string_member(call, "id"));
        json.raw(",\"name\":");
        json.string(detail::string_member(f, "name"));
        json.raw(",\"input\":{}}");
        open_block(out, block::tool, start);
        open_tool_ = tool;
      }
      if (const std::string_view arguments = detail::string_member(f, "arguments"); !arguments.empty())
        delta(out, "input_json_delta", "partial_json", arguments);
    }
    return out;
  }

  /// The end of `response`, whose chunks came: the open block stopped,
  /// the stop reason and usage, message_stop.
  std::string finish(const chat_response& response) {
    std::string out;
    close_block(out);
    begin_event(out, "message_delta");
    detail::json_appender json(out);
    json.raw("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
    json.string(anthropic_stop_reason(response.finish_reason));
    json.raw(",\"stop_sequence\":null},\"usage\":{");
    detail::append_anthropic_usage(json, response.usage);
    json.raw("}}");
    end_event(out);
    begin_event(out, "message_stop");
    out += "{\"type\":\"message_stop\"}";
    end_event(out);
    return out;
  }

  /// A failure after the stream began: an error event, and nothing after it.
  static std::string error(std::string_view type, std::string_view message) {
    std::string out;
    begin_event(out, "error");
    out += messages_error_body(type, message);
    end_event(out);
    return out;
  }

 private:
  enum class block { none, text, tool };

  static void begin_event(std::string& out, std::string_view name) {
    out.append("event: ").append(name).append("\ndata: ");
  }
  static void end_event(std::string& out) { out.append("\n\n"); }

  void open_block(std::string& out, block kind, std::string_view content_block) {
    close_block(out);
    begin_event(out, "content_block_start");
    out.append("{\"type\":\"content_block_start\",\"index\":").append(std::to_string(index_));
    out.append(",\"content_block\":").append(content_block).append("}");
    end_event(out);
    open_ = kind;
  }
  void close_block(std::string& out) {
    if (open_ == block::none) return;
    begin_event(out, "content_block_stop");
    out.append("{\"type\":\"content_block_stop\",\"index\":").append(std::to_string(index_)).append("}");
    end_event(out);
    open_ = block::none;
    ++index_;
  }
  void delta(std::string& out, std::string_view type, std::string_view member_name, std::string_view text) {
    begin_event(out, "content_block_delta");
    detail::json_appender json(out);
    json.raw("{\"type\":\"content_block_delta\",\"index\":");
    json.number(static_cast<std::uint64_t>(index_));
    json.raw(",\"delta\":{\"type\":");
    json.string(type);
    json.raw(",\"");
    json.raw(member_name);
    json.raw("\":");
    json.string(text);
    json.raw("}}");
    end_event(out);
  }

  std::string id_;
  block open_ = block::none;
  std::size_t index_ = 0;        // of the open block, or of the next one
  std::int64_t open_tool_ = -1;  // the OpenAI index of the open tool_use block
};

}  // namespace llmgate::inline v0
