// What a chat request is cached by: its scope (tenant, model, the
// generation parameters that change the answer, system prompt), the part
// of the conversation that key policies compare, and the text the exact
// cache compares. The cache stages and the gateway share these, so that
// an answer stored by one is found by the other.
#pragma once

#include <algorithm>    // std::sort, std::find_if
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/container/small_vector.hpp>  // members sorted without a heap allocation
#include <boost/json/monotonic_resource.hpp>  // an arena on the stack for passed-through values
#include <boost/json/value.hpp>               // boost::json::value

#include "llmgate/cache/scope.hpp"                // cache_scope, generation_parameters
#include "llmgate/chat/chat.hpp"                  // chat_request, chat_message
#include "llmgate/wire/detail/json_appender.hpp"  // json_appender
#include "llmgate/wire/detail/exact_json_parse.hpp"  // detail::parse_exact
#include "llmgate/pipeline/request_context.hpp"   // request_context

namespace llmgate::inline v0 {

namespace detail {

// Writes JSON canonically onto the end of a string: object members sorted
// by name at every depth, scalars and names as json_appender writes them
// (doubles as plain decimals), with no string per value (the exact cache writes a request
// this way on every lookup).
class canonical_json_writer {
 public:
  explicit canonical_json_writer(std::string& out) noexcept : json_(out) {}

  void value(const boost::json::value& value) {
    if (const auto* object = value.if_object()) {
      boost::container::small_vector<const boost::json::key_value_pair*, 8> members;
      for (const auto& member : *object) members.push_back(&member);
      std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
      json_.raw("{");
      for (const auto* member : members) {
        if (member != members.front()) json_.raw(",");
        name(member->key());
        this->value(member->value());
      }
      json_.raw("}");
    } else if (const auto* array = value.if_array()) {
      json_.raw("[");
      for (const auto& element : *array) {
        if (&element != array->begin()) json_.raw(",");
        this->value(element);
      }
      json_.raw("]");
    } else {
      json_.value(value);
    }
  }

  /// `text` as a JSON string.
  void string(std::string_view text) { json_.string(text); }

  /// JSON text (a passed-through field), canonically. `memory` holds its
  /// parse; text that is not JSON is written as it is.
  void text(std::string_view json, boost::json::memory_resource& memory) {
    boost::json::error_code ec;
    const auto parsed = parse_exact(json, ec, &memory);
    if (ec) json_.raw(json);
    else value(parsed);
  }

  /// An object member's name and the colon after it.
  void name(std::string_view text) {
    json_.string(text);
    json_.raw(":");
  }

 private:
  json_appender json_;
};

}  // namespace detail

/// `value` as JSON text in which equal values always read the same: object
/// members sorted by name, at every depth.
inline std::string canonical_json(const boost::json::value& value) {
  std::string out;
  detail::canonical_json_writer(out).value(value);
  return out;
}

/// Whether a message belongs to the system prompt.
inline bool is_system_message(const chat_message& message) noexcept {
  return message.role == "system" || message.role == "developer";
}

/// The messages after the leading system prompt: what key policies compare.
inline std::span<const chat_message> conversation_of(const chat_request& request) noexcept {
  const auto first = std::find_if(request.messages.begin(), request.messages.end(),
                                  [](const chat_message& m) { return !is_system_message(m); });
  return {first, request.messages.end()};
}

/// The generation parameters of a request, as a cache scope compares them.
/// Fields that never change the answer (how it is delivered, who asked,
/// what the provider stores) are left out.
inline generation_parameters generation_parameters_of(const chat_request& request) {
  static constexpr std::string_view answer_neutral[] = {"stream_options", "user", "metadata", "store",
                                                        "service_tier", "prompt_cache_key"};
  generation_parameters parameters;
  unsigned char buffer[2048];  // the parsed values live only while this reads them
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  for (const auto& [name, json] : request.parameters) {
    if (std::find(std::begin(answer_neutral), std::end(answer_neutral), name) != std::end(answer_neutral))
      continue;
    boost::json::error_code ec;
    const auto number = detail::parse_number(json);  // most settings are numbers: no parser for them
    const boost::json::value value = number ? *number : detail::parse_exact(json, ec, &arena);
    if (ec) {  // not JSON (a field set by hand, or a number Boost.JSON wrote as Infinity): compared as written
      parameters.other[name] = json;
      continue;
    }
    if ((name == "temperature" || name == "top_p") && value.is_number()) {
      (name == "temperature" ? parameters.temperature : parameters.top_p) = value.to_number<double>();
    } else if ((name == "max_tokens" || name == "max_completion_tokens") && value.is_uint64()) {
      parameters.max_tokens = value.get_uint64();
    } else if ((name == "max_tokens" || name == "max_completion_tokens") && value.is_int64() &&
               value.get_int64() >= 0) {
      parameters.max_tokens = static_cast<std::uint64_t>(value.get_int64());
    } else if (name == "seed" && value.is_int64()) {
      parameters.seed = value.get_int64();
    } else if (name == "stop" && value.is_string()) {
      parameters.stop.emplace_back(value.get_string());
    } else if (name == "stop" && value.is_array() &&
               std::all_of(value.get_array().begin(), value.get_array().end(),
                           [](const boost::json::value& v) { return v.is_string(); })) {
      for (const auto& sequence : value.get_array()) parameters.stop.emplace_back(sequence.get_string());
    } else if (name == "tools") {
      parameters.tools = canonical_json(value);
    } else if (name == "response_format") {
      parameters.response_format = canonical_json(value);
    } else {
      parameters.other[std::string(name)] = canonical_json(value);
    }
  }
  return parameters;
}

/// The leading system messages' text, one message per line.
inline std::string system_prompt_of(const chat_request& request) {
  std::string prompt;
  for (const auto& message : request.messages) {
    if (!is_system_message(message)) break;
    if (!prompt.empty()) prompt += '\n';
    prompt += content_text(message);
  }
  return prompt;
}

/// The scope a request's answer is cached in: never shared across tenants,
/// models, answer-changing parameters, system prompts or cache namespaces.
inline cache_scope scope_of(const chat_request& request, std::string tenant, std::string cache_namespace = {}) {
  return cache_scope({.tenant = std::move(tenant),
                      .model = request.model,
                      .parameters = generation_parameters_of(request).canonical(),
                      .system_prompt = system_prompt_of(request),
                      .cache_namespace = std::move(cache_namespace)});
}

/// The request's scope as the context keeps it for the cache stages, so
/// that the second does not compute it again; computed anew when the model,
/// tenant or namespace changed since (a router_stage between them picks the
/// model).
inline const cache_scope& scope_of(const chat_request& request, request_context& context) {
  if (!context.scope || context.scope->model() != request.model || context.scope->tenant() != context.tenant ||
      context.scope->cache_namespace() != context.cache_namespace)
    context.scope.emplace(scope_of(request, context.tenant, context.cache_namespace));
  return *context.scope;
}

/// What the exact cache compares: the conversation after the system prompt
/// as canonical JSON (roles, contents, tool calls), so that no content can
/// forge another message's boundary. The same text as canonical_json of
/// the messages in their wire form, written without building them.
inline std::string exact_text_of(const chat_request& request) {
  std::string out;
  std::size_t expected = 2;  // room for the usual case, so that the string grows once
  for (const auto& message : conversation_of(request))
    expected += 32 + message.role.size() + message.content.size() + message.content_json.size();
  out.reserve(expected);
  detail::canonical_json_writer writer(out);
  unsigned char buffer[1024];  // parses of passed-through fields, only where a message has them
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  out += '[';
  for (const auto& message : conversation_of(request)) {
    if (out.size() > 1) out += ',';
    // The members a message has on the wire: role, content, and the extra
    // fields not named like those two. json null: role (message.role) and
    // content when it is a string (message.content).
    struct member {
      std::string_view name;
      const std::string* json;
    };
    const std::string* content = message.content_json.empty() ? nullptr : &message.content_json;
    boost::container::small_vector<member, 8> members{{"role", nullptr}, {"content", content}};
    for (const auto& field : message.extra)
      if (field.name != "role" && field.name != "content") members.push_back({field.name, &field.json});
    std::sort(members.begin(), members.end(), [](const member& a, const member& b) { return a.name < b.name; });
    out += '{';
    for (const member& m : members) {
      if (&m != &members.front()) out += ',';
      writer.name(m.name);
      if (m.json) writer.text(*m.json, arena);
      else writer.string(m.name == "role" ? message.role : message.content);
    }
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace llmgate::inline v0
