// openai_responses_wire: OpenAI's Responses API (POST /v1/responses) on the
// serving side, stateless: a request read into the chat layer's
// chat_request, and an answer written back as a response object, a stream
// of the Responses API's events, or (through the gateway's usual writer)
// OpenAI's error object.
//
// A request becomes the chat_request its chat-completions equivalent
// would: "instructions" a leading system message; "input" as a string one
// user message; input items their chat messages (a message item's
// input_text and output_text parts text parts, one plain text a string
// content; input_image an image_url part; function_call items the
// assistant's tool_calls; function_call_output items tool messages);
// max_output_tokens max_tokens; function tools OpenAI's chat tools;
// tool_choice {"type":"function","name"} chat's form; text.format
// response_format (a "text" format is the default, and says nothing);
// reasoning.effort reasoning_effort. So a question asked through any of
// the gateway's routes finds the others' answers in the caches. Other
// fields pass through as they are (temperature, top_p,
// parallel_tool_calls, user...).
//
// Stateless: the gateway keeps no response, so previous_response_id and
// conversation are refused with a 400 that says to send the turns as
// input items; store is read and reported as false; background, prompt
// templates and tools other than functions are refused by name. include,
// truncation, metadata and stream_options ask about what is not kept or
// is the default here, and are not sent on.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>               // boost::json::array
#include <boost/json/monotonic_resource.hpp>  // an arena for a body's tree
#include <boost/json/object.hpp>              // boost::json::object
#include <boost/json/value.hpp>               // boost::json::value

#include "llmgate/chat/chat.hpp"                        // chat_request, chat_response, chat_chunk
#include "llmgate/chat/request_error.hpp"               // request_error
#include "llmgate/wire/detail/json_appender.hpp"        // json_appender
#include "llmgate/wire/detail/request_path.hpp"         // request_path, required_string, set_parts_content
#include "llmgate/wire/detail/standard_parameters.hpp"  // check_integer, check_number, wrong_type, wrong_value
#include "llmgate/wire/openai_wire.hpp"                 // parse_request_json, detail::json_text, text_of, array_of, string_member

namespace llmgate::inline v0 {

namespace detail {

// A message item's content parts as chat content parts.
inline boost::json::array chat_parts(const boost::json::array& parts, const request_path& where) {
  namespace json = boost::json;
  json::array out;
  out.reserve(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const request_path at = where.element(i);
    if (!parts[i].is_object()) wrong_type(at.text(), "a content part (an object)", parts[i]);
    const auto& part = parts[i].get_object();
    const std::string_view type = required_string(part, "type", at);
    if (type == "input_text" || type == "output_text") {
      out.push_back(json::object{{"type", "text"}, {"text", required_string(part, "text", at)}});
    } else if (type == "refusal") {
      out.push_back(json::object{{"type", "text"}, {"text", required_string(part, "refusal", at)}});
    } else if (type == "input_image") {
      json::object image{{"url", required_string(part, "image_url", at)}};
      if (const auto* detail = part.if_contains("detail"); detail && !detail->is_null()) image["detail"] = *detail;
      out.push_back(json::object{{"type", "image_url"}, {"image_url", std::move(image)}});
    } else {
      wrong_value(at.member("type").text(), "\"input_text\", \"input_image\" or \"output_text\"", part.at("type"));
    }
  }
  return out;
}

// A message item as a chat message.
inline chat_message chat_message_of(const boost::json::object& item, const request_path& where) {
  const std::string_view role = required_string(item, "role", where);
  if (role != "user" && role != "assistant" && role != "system" && role != "developer")
    wrong_value(where.member("role").text(), "\"user\", \"assistant\", \"system\" or \"developer\"", item.at("role"));
  chat_message message;
  message.role = role;
  const request_path content_path = where.member("content");
  const auto* content = item.if_contains("content");
  if (!content || content->is_null()) missing_parameter(content_path.text());
  if (const auto* text = content->if_string()) message.content = *text;
  else if (const auto* parts = content->if_array()) set_parts_content(message, chat_parts(*parts, content_path));
  else wrong_type(content_path.text(), "a string or an array of content parts", *content);
  return message;
}

// The input items as chat messages: function_call items (consecutive ones
// are one turn) the tool_calls of the assistant message before them, or
// of an assistant message of their own; function_call_output items tool
// messages.
inline void append_input_items(const boost::json::array& items, const request_path& where,
                               std::vector<chat_message>& out) {
  namespace json = boost::json;
  json::array calls;  // the function calls of the turn being read
  const auto end_turn = [&] {
    if (calls.empty()) return;
    const bool after_text = !out.empty() && out.back().role == "assistant" && !find_field(out.back().extra, "tool_calls");
    if (!after_text) {
      chat_message turn;
      turn.role = "assistant";
      turn.content_json = "null";  // as OpenAI writes a tool-calling turn
      out.push_back(std::move(turn));
    }
    out.back().extra.push_back({"tool_calls", json_text(calls)});
    calls.clear();
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const request_path at = where.element(i);
    if (!items[i].is_object()) wrong_type(at.text(), "an input item (an object)", items[i]);
    const auto& item = items[i].get_object();
    const auto* type_value = item.if_contains("type");
    const std::string_view type =
        type_value && !type_value->is_null() ? required_string(item, "type", at) : std::string_view("message");
    if (type == "function_call") {
      calls.push_back(json::object{{"id", required_string(item, "call_id", at)},
                                   {"type", "function"},
                                   {"function", {{"name", required_string(item, "name", at)},
                                                 {"arguments", required_string(item, "arguments", at)}}}});
      continue;
    }
    end_turn();
    if (type == "message") {
      out.push_back(chat_message_of(item, at));
    } else if (type == "function_call_output") {
      chat_message result;
      result.role = "tool";
      const request_path output_path = at.member("output");
      const auto* output = item.if_contains("output");
      if (!output || output->is_null()) missing_parameter(output_path.text());
      if (!output->is_string() && !output->is_array())
        wrong_type(output_path.text(), "a string or an array of content parts", *output);
      result.content = text_of(*output);
      result.extra.push_back({"tool_call_id", json_text(json::string(required_string(item, "call_id", at)))});
      out.push_back(std::move(result));
    } else {
      wrong_value(at.member("type").text(), "\"message\", \"function_call\" or \"function_call_output\"",
                  item.at("type"));
    }
  }
  end_turn();
}

// The Responses API's function tools as chat tools.
inline boost::json::array chat_tools(const boost::json::value& tools, const request_path& where) {
  namespace json = boost::json;
  if (!tools.is_array()) wrong_type(where.text(), "an array", tools);
  json::array out;
  for (std::size_t i = 0; i < tools.get_array().size(); ++i) {
    const request_path at = where.element(i);
    const auto& tool = tools.get_array()[i];
    if (!tool.is_object()) wrong_type(at.text(), "an object", tool);
    const auto& object = tool.get_object();
    if (required_string(object, "type", at) != "function")
      wrong_value(at.member("type").text(), "\"function\" (the only tools this gateway serves)", object.at("type"));
    json::object function{{"name", required_string(object, "name", at)}};
    for (const std::string_view member : {"description", "parameters", "strict"})
      if (const auto* value = object.if_contains(member); value && !value->is_null()) function[member] = *value;
    out.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice in chat's form: the strings as they are, a function named
// as {"type":"function","function":{"name":...}}.
inline boost::json::value chat_tool_choice(const boost::json::value& choice) {
  if (choice == "auto" || choice == "none" || choice == "required") return choice;
  const request_path root;
  const request_path at = root.member("tool_choice");
  if (!choice.is_object()) wrong_type("tool_choice", "\"auto\", \"none\", \"required\" or an object", choice);
  const auto& object = choice.get_object();
  if (required_string(object, "type", at) != "function")
    wrong_value("tool_choice.type", "\"function\" (the only tools this gateway serves)", object.at("type"));
  return boost::json::object{{"type", "function"}, {"function", {{"name", required_string(object, "name", at)}}}};
}

// text.format as chat's response_format; null for the default, "text".
inline boost::json::value chat_response_format(const boost::json::value& format) {
  namespace json = boost::json;
  const request_path root;
  const request_path text = root.member("text");  // each link named: the next keeps a pointer to it
  const request_path at = text.member("format");
  if (!format.is_object()) wrong_type(at.text(), "an object", format);
  const auto& object = format.get_object();
  const std::string_view type = required_string(object, "type", at);
  if (type == "text") return nullptr;
  if (type == "json_object") return json::object{{"type", "json_object"}};
  if (type != "json_schema")
    wrong_value(at.member("type").text(), "\"text\", \"json_object\" or \"json_schema\"", object.at("type"));
  json::object schema{{"name", required_string(object, "name", at)}};
  for (const auto& member : object)
    if (member.key() != "type" && member.key() != "name") schema[member.key()] = member.value();
  return json::object{{"type", "json_schema"}, {"json_schema", std::move(schema)}};
}

[[noreturn]] inline void keeps_no_responses(std::string_view param) {
  throw request_error(std::string(param),
                      "This gateway keeps no responses (store is false), so '" + std::string(param) +
                          "' cannot be used: send the earlier turns as input items instead.",
                      "unsupported_parameter");
}

}  // namespace detail

/// Reads a request in the Responses API's form into the chat_request its
/// chat-completions equivalent would be. Throws request_error naming the
/// field at fault ("input[1].content[0].type", "previous_response_id").
inline chat_request parse_responses_request(const boost::json::value& value) {
  namespace json = boost::json;
  if (!value.is_object()) throw request_error("", "The request body must be a JSON object.");
  const auto& object = value.get_object();
  const detail::request_path root;
  chat_request request;
  request.model = detail::required_string(object, "model", root);
  for (const std::string_view kept : {"previous_response_id", "conversation"})
    if (const auto* v = object.if_contains(kept); v && !v->is_null()) detail::keeps_no_responses(kept);
  if (const auto* background = object.if_contains("background"); background && *background == true)
    throw request_error("background", "This gateway answers while the client waits: 'background' must be false.",
                        "unsupported_parameter");
  if (const auto* prompt = object.if_contains("prompt"); prompt && !prompt->is_null())
    throw request_error("prompt", "This gateway keeps no prompt templates: send the prompt as input.",
                        "unsupported_parameter");
  detail::check_integer(object, "max_output_tokens", 1);
  detail::check_number(object, "temperature", 0, 2, "a number from 0 to 2");
  detail::check_number(object, "top_p", 0, 1, "a number from 0 to 1");
  detail::check_boolean(object, "stream", "stream");
  detail::check_boolean(object, "store", "store");
  if (const auto* stream = object.if_contains("stream"); stream && !stream->is_null()) request.stream = stream->get_bool();

  if (const auto* instructions = object.if_contains("instructions"); instructions && !instructions->is_null()) {
    if (!instructions->is_string()) detail::wrong_type("instructions", "a string", *instructions);
    request.messages.push_back({.role = "system", .content = std::string(instructions->get_string())});
  }
  const auto* input = object.if_contains("input");
  if (!input || input->is_null()) detail::missing_parameter("input");
  if (const auto* text = input->if_string()) {
    request.messages.push_back({.role = "user", .content = std::string(*text)});
  } else if (const auto* items = input->if_array()) {
    if (items->empty()) detail::wrong_value("input", "a string or at least one input item", *input);
    request.messages.reserve(request.messages.size() + items->size());
    detail::append_input_items(*items, root.member("input"), request.messages);
  } else {
    detail::wrong_type("input", "a string or an array of input items", *input);
  }

  for (const auto& field : object) {
    const std::string_view name = field.key();
    const json::value& v = field.value();
    if (name == "model" || name == "input" || name == "instructions" || name == "stream" || name == "store" ||
        name == "previous_response_id" || name == "conversation" || name == "background" || name == "prompt" ||
        name == "include" || name == "truncation" || name == "metadata" || name == "stream_options")
      continue;
    if (name == "max_output_tokens") {
      set_field(request.parameters, "max_tokens", detail::json_text(v));
    } else if (name == "tools") {
      set_field(request.parameters, "tools", detail::json_text(detail::chat_tools(v, root.member("tools"))));
    } else if (name == "tool_choice") {
      set_field(request.parameters, "tool_choice", detail::json_text(detail::chat_tool_choice(v)));
    } else if (name == "text") {
      if (!v.is_object()) detail::wrong_type("text", "an object", v);
      if (const auto* format = v.get_object().if_contains("format"); format && !format->is_null())
        if (const json::value chat_format = detail::chat_response_format(*format); !chat_format.is_null())
          set_field(request.parameters, "response_format", detail::json_text(chat_format));
      if (const auto* verbosity = v.get_object().if_contains("verbosity"); verbosity && !verbosity->is_null())
        set_field(request.parameters, "verbosity", detail::json_text(*verbosity));
    } else if (name == "reasoning") {
      if (!v.is_object()) detail::wrong_type("reasoning", "an object", v);
      if (const auto* effort = v.get_object().if_contains("effort"); effort && !effort->is_null())
        set_field(request.parameters, "reasoning_effort", detail::json_text(*effort));
    } else {
      set_field(request.parameters, name, detail::json_text(v));  // temperature, top_p, parallel_tool_calls, user...
    }
  }
  return request;
}

/// parse_responses_request of a body's text, nested at most `max_depth`; a
/// body that is not JSON is a request_error too.
inline chat_request parse_responses_request(std::string_view body, std::size_t max_depth = default_max_json_depth) {
  unsigned char buffer[4096];  // the parsed tree lives only while the request copies what it keeps
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  return parse_responses_request(parse_request_json(body, max_depth, &arena));
}

/// A response's status for an answer's finish_reason: "incomplete" where it
/// stopped at the token limit or a filter, else "completed".
inline std::string_view responses_status(std::string_view finish_reason) {
  return finish_reason == "length" || finish_reason == "content_filter" ? "incomplete" : "completed";
}

/// What a Responses API response is at one moment: the whole answer's, or
/// a stream's as it begins (no answer yet) or fails.
struct response_snapshot {
  std::string_view id;     ///< resp_...
  std::int64_t created_at = 0;
  std::string_view model;
  std::string_view status;                    ///< in_progress, completed, incomplete, failed
  const chat_response* answer = nullptr;      ///< its output and usage; null: none yet
  std::string_view error_code = {};           ///< a failed response's
  std::string_view error_message = {};
};

namespace detail {

// The id of an answer's message item: its response's id, named as a message's.
inline std::string message_item_id(std::string_view response_id) {
  if (response_id.starts_with("resp_")) response_id.remove_prefix(5);
  return "msg_" + std::string(response_id);
}

inline void append_message_item(json_appender& json, std::string_view item_id, std::string_view status,
                                std::string_view text) {
  json.raw("{\"id\":");
  json.string(item_id);
  json.raw(",\"type\":\"message\",\"status\":");
  json.string(status);
  json.raw(",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":");
  json.string(text);
  json.raw(",\"annotations\":[]}]}");
}

// The id of a function call's item: its call id, named as an item's.
inline std::string function_call_item_id(std::string_view call_id) { return "fc_" + std::string(call_id); }

inline void append_function_call_item(json_appender& json, std::string_view call_id, std::string_view name,
                                      std::string_view arguments, std::string_view status) {
  json.raw("{\"id\":");
  json.string(function_call_item_id(call_id));
  json.raw(",\"type\":\"function_call\",\"status\":");
  json.string(status);
  json.raw(",\"call_id\":");
  json.string(call_id);
  json.raw(",\"name\":");
  json.string(name);
  json.raw(",\"arguments\":");
  json.string(arguments);
  json.raw("}");
}

// An answer's output items: its text as a message item (also when there
// is neither text nor a tool call), then a function_call item per call.
inline void append_output(json_appender& json, const chat_response& answer, std::string_view response_id) {
  json.raw("[");
  const boost::json::array calls = array_of(answer.tool_calls_json);
  bool first = true;
  if (!answer.content.empty() || calls.empty()) {
    append_message_item(json, message_item_id(response_id), "completed", answer.content);
    first = false;
  }
  for (const auto& call : calls) {
    const auto* object = call.if_object();
    if (!object) continue;
    if (!first) json.raw(",");
    first = false;
    const boost::json::object* f = function_of(*object);
    append_function_call_item(json, string_member(object, "id"), string_member(f, "name"),
                              string_member(f, "arguments"), "completed");
  }
  json.raw("]");
}

// The Responses API's usage: input_tokens counts the cached ones, also
// given apart.
inline void append_responses_usage(json_appender& json, const token_usage& usage) {
  json.raw("{\"input_tokens\":");
  json.number(usage.prompt_tokens);
  json.raw(",\"input_tokens_details\":{\"cached_tokens\":");
  json.number(usage.cached_prompt_tokens);
  json.raw("},\"output_tokens\":");
  json.number(usage.completion_tokens);
  json.raw(",\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":");
  json.number(usage.prompt_tokens + usage.completion_tokens);
  json.raw("}");
}

}  // namespace detail

/// A response object as the Responses API writes it.
inline void append_response_object(std::string& out, const response_snapshot& response) {
  detail::json_appender json(out);
  json.raw("{\"id\":");
  json.string(response.id);
  json.raw(",\"object\":\"response\",\"created_at\":");
  json.number(response.created_at);
  json.raw(",\"status\":");
  json.string(response.status);
  json.raw(",\"error\":");
  if (response.error_code.empty()) {
    json.raw("null");
  } else {
    json.raw("{\"code\":");
    json.string(response.error_code);
    json.raw(",\"message\":");
    json.string(response.error_message);
    json.raw("}");
  }
  json.raw(",\"incomplete_details\":");
  const std::string_view finish_reason = response.answer ? std::string_view(response.answer->finish_reason) : "";
  if (response.status != "incomplete") json.raw("null");
  else if (finish_reason == "length") json.raw("{\"reason\":\"max_output_tokens\"}");
  else json.raw("{\"reason\":\"content_filter\"}");
  json.raw(",\"model\":");
  json.string(response.model);
  json.raw(",\"output\":");
  if (response.answer) detail::append_output(json, *response.answer, response.id);
  else json.raw("[]");
  json.raw(",\"store\":false,\"usage\":");
  if (response.answer) detail::append_responses_usage(json, response.answer->usage);
  else json.raw("null");
  json.raw("}");
}

/// An answer as a whole response object.
inline std::string responses_response_body(const chat_response& answer, std::string_view id, std::int64_t created_at,
                                           std::string_view model) {
  std::string out;
  out.reserve(512 + answer.content.size() + answer.tool_calls_json.size());
  append_response_object(out, {.id = id,
                               .created_at = created_at,
                               .model = model,
                               .status = responses_status(answer.finish_reason),
                               .answer = &answer});
  return out;
}

/// A streamed answer as the Responses API's server-sent events, built from
/// the chat layer's chunks (the events of named_event_stream.hpp):
/// response.created and response.in_progress; per output item
/// response.output_item.added, its deltas (response.output_text.delta in
/// a content part, or response.function_call_arguments.delta) and their
/// .done events, response.output_item.done; then response.completed (or
/// response.incomplete) with the whole response, or response.failed. Each
/// event carries its sequence_number; each call returns the events' text.
class responses_stream_events {
 public:
  responses_stream_events(std::string id, std::int64_t created_at) : id_(std::move(id)), created_at_(created_at) {}

  const std::string& id() const noexcept { return id_; }
  std::int64_t created_at() const noexcept { return created_at_; }

  /// response.created and response.in_progress, naming `model`.
  std::string start(std::string_view model) {
    model_ = model;
    std::string out;
    for (const std::string_view type : {"response.created", "response.in_progress"}) {
      begin_event(out, type);
      out += ",\"response\":";
      append_response_object(out, {.id = id_, .created_at = created_at_, .model = model_, .status = "in_progress"});
      end_event(out);
    }
    return out;
  }

  /// A chunk's text and tool-call deltas (its finish_reason and usage wait
  /// for finish()).
  std::string chunk(const chat_chunk& chunk) {
    std::string out;
    if (!chunk.content_delta.empty()) {
      if (open_ != item::message) open_message(out);
      text_ += chunk.content_delta;
      begin_item_event(out, "response.output_text.delta");
      detail::json_appender json(out);
      json.raw(",\"content_index\":0,\"delta\":");
      json.string(chunk.content_delta);
      json.raw(",\"logprobs\":[]");
      end_event(out);
    }
    for (const auto& call_delta : detail::array_of(chunk.tool_call_deltas_json)) {
      const auto* call = call_delta.if_object();
      if (!call) continue;
      const auto* index = call->if_contains("index");
      const std::int64_t tool = index && index->is_int64() ? index->get_int64() : 0;
      const boost::json::object* f = detail::function_of(*call);
      if (open_ != item::function_call || tool != open_tool_) {
        open_function_call(out, detail::string_member(call, "id"), detail::string_member(f, "name"));
        open_tool_ = tool;
      }
      if (const std::string_view arguments = detail::string_member(f, "arguments"); !arguments.empty()) {
        text_ += arguments;
        begin_item_event(out, "response.function_call_arguments.delta");
        detail::json_appender json(out);
        json.raw(",\"delta\":");
        json.string(arguments);
        end_event(out);
      }
    }
    return out;
  }

  /// The end of `answer`, whose chunks came: the open item done, then
  /// response.completed (or response.incomplete) with the whole response.
  std::string finish(const chat_response& answer) {
    std::string out;
    close_item(out);
    const std::string_view status = responses_status(answer.finish_reason);
    begin_event(out, status == "completed" ? "response.completed" : "response.incomplete");
    out += ",\"response\":";
    append_response_object(
        out, {.id = id_, .created_at = created_at_, .model = model_, .status = status, .answer = &answer});
    end_event(out);
    return out;
  }

  /// A failure after the stream began: response.failed with the error's
  /// `code` and message, and nothing after it.
  std::string error(std::string_view code, std::string_view message) {
    std::string out;
    begin_event(out, "response.failed");
    out += ",\"response\":";
    append_response_object(out, {.id = id_,
                                 .created_at = created_at_,
                                 .model = model_,
                                 .status = "failed",
                                 .error_code = code,
                                 .error_message = message});
    end_event(out);
    return out;
  }

 private:
  enum class item { none, message, function_call };

  // "event: <type>\ndata: {"type":..,"sequence_number":..", to be closed by end_event.
  void begin_event(std::string& out, std::string_view type) {
    out.append("event: ").append(type).append("\ndata: {\"type\":\"").append(type);
    out.append("\",\"sequence_number\":").append(std::to_string(sequence_++));
  }
  static void end_event(std::string& out) { out.append("}\n\n"); }

  // An event about the open item: its id and output index.
  void begin_item_event(std::string& out, std::string_view type) {
    begin_event(out, type);
    detail::json_appender json(out);
    json.raw(",\"item_id\":");
    json.string(item_id_);
    json.raw(",\"output_index\":");
    json.number(static_cast<std::uint64_t>(output_index_));
  }

  // response.output_item.added or .done, with the open item as it is.
  void item_event(std::string& out, std::string_view type, std::string_view status) {
    begin_event(out, type);
    detail::json_appender json(out);
    json.raw(",\"output_index\":");
    json.number(static_cast<std::uint64_t>(output_index_));
    json.raw(",\"item\":");
    if (open_ == item::message) {
      if (status == "in_progress") {
        json.raw("{\"id\":");
        json.string(item_id_);
        json.raw(",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}");
      } else {
        detail::append_message_item(json, item_id_, status, text_);
      }
    } else {
      detail::append_function_call_item(json, call_id_, name_, text_, status);
    }
    end_event(out);
  }

  // The text's content part, added or done.
  void content_part_event(std::string& out, std::string_view type) {
    begin_item_event(out, type);
    detail::json_appender json(out);
    json.raw(",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":");
    json.string(text_);
    json.raw(",\"annotations\":[]}");
    end_event(out);
  }

  void open_message(std::string& out) {
    close_item(out);
    open_ = item::message;
    item_id_ = detail::message_item_id(id_);
    item_event(out, "response.output_item.added", "in_progress");
    content_part_event(out, "response.content_part.added");
  }

  void open_function_call(std::string& out, std::string_view call_id, std::string_view name) {
    close_item(out);
    open_ = item::function_call;
    call_id_ = call_id;
    name_ = name;
    item_id_ = detail::function_call_item_id(call_id);
    item_event(out, "response.output_item.added", "in_progress");
  }

  void close_item(std::string& out) {
    if (open_ == item::none) return;
    if (open_ == item::message) {
      begin_item_event(out, "response.output_text.done");
      detail::json_appender json(out);
      json.raw(",\"content_index\":0,\"text\":");
      json.string(text_);
      json.raw(",\"logprobs\":[]");
      end_event(out);
      content_part_event(out, "response.content_part.done");
    } else {
      begin_item_event(out, "response.function_call_arguments.done");
      detail::json_appender json(out);
      json.raw(",\"name\":");
      json.string(name_);
      json.raw(",\"arguments\":");
      json.string(text_);
      end_event(out);
    }
    item_event(out, "response.output_item.done", "completed");
    open_ = item::none;
    ++output_index_;
    text_.clear();
  }

  std::string id_;
  std::int64_t created_at_;
  std::string model_;
  std::uint64_t sequence_ = 0;
  item open_ = item::none;
  std::size_t output_index_ = 0;  // of the open item, or of the next one
  std::int64_t open_tool_ = -1;   // the chat index of the open function call
  std::string item_id_;           // the open item's
  std::string call_id_, name_;    // the open function call's
  std::string text_;              // the open item's text, or its arguments
};

}  // namespace llmgate::inline v0
