// Chat requests, responses and streamed chunks: the vocabulary every layer
// shares (caches, pipeline, backends, gateway). It holds text only, no JSON
// tree, so that the caches below the network side need no JSON library;
// wire/openai_wire.hpp reads and writes its OpenAI wire form.
//
// Pass-through: a request keeps every field it was sent that llmgate does
// not interpret (temperature, tools, response_format, stream_options, ...)
// in `parameters`, and every message field besides role and content (name,
// tool_calls, tool_call_id, ...) in `extra`, each as its JSON text, so that
// they reach the model server as they came. Whoever fills a json_field
// writes valid JSON: it is sent as it is. Names are unique within a list.
//
// Token counts: `prompt_tokens` counts every input token, the cached and
// cache-written ones included (OpenAI's convention; the Anthropic adapter
// adds its three input counts together), so that prompt_tokens -
// cached_prompt_tokens - cache_write_tokens is what was billed at the plain
// input price.
#pragma once

#include <algorithm>    // std::find_if
#include <cstdint>      // std::uint64_t, std::int64_t
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/chat/trace_context.hpp"  // trace_context
#include "llmgate/version.hpp"             // the inline versioned namespace

namespace llmgate::inline v0 {

struct prompt_layout;  // llmgate/prompt/prompt_layout.hpp: only a compiled PML prompt has one

/// One member of a JSON object llmgate passes on without reading: its name
/// and its value as JSON text (e.g. {"temperature", "0.2"}, {"tools", "[...]"}).
struct json_field {
  std::string name;
  std::string json;

  friend bool operator==(const json_field&, const json_field&) = default;
};

using json_fields = std::vector<json_field>;

/// The field called `name`, or nullptr.
inline const json_field* find_field(const json_fields& fields, std::string_view name) noexcept {
  const auto found = std::find_if(fields.begin(), fields.end(), [&](const json_field& f) { return f.name == name; });
  return found == fields.end() ? nullptr : &*found;
}

/// Sets the field called `name` to `json` (JSON text): in its place when
/// there is one, else at the end.
inline void set_field(json_fields& fields, std::string_view name, std::string json) {
  const auto found = std::find_if(fields.begin(), fields.end(), [&](const json_field& f) { return f.name == name; });
  if (found != fields.end()) found->json = std::move(json);
  else fields.push_back({std::string(name), std::move(json)});
}

struct chat_message {
  std::string role;               ///< system, user, assistant, tool, developer...
  std::string content;            ///< the text: the string sent, or its text parts joined
  std::string content_json = {};  ///< the content as sent when it was not a string: an array of parts, or null; empty for a string
  json_fields extra = {};         ///< name, tool_calls, tool_call_id...: passed through
};

/// The text of a message: its string content, or its text parts joined.
inline const std::string& content_text(const chat_message& message) noexcept { return message.content; }

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
  json_fields parameters = {};         ///< every other field as sent: passed through
  /// Where a compiled PML prompt's modules lie (prompt/prompt_layout.hpp);
  /// null for a plain request. Backends read it for cache hints; caches ignore it.
  std::shared_ptr<const prompt_layout> layout = {};
  /// Its W3C trace, sent upstream as traceparent and tracestate (empty:
  /// none); neither part of the body nor of any cache key.
  trace_context trace = {};
};

struct chat_response {
  std::string id;
  std::string model;                 ///< as the server reported it
  std::string content;               ///< the assistant's text ("" when it only calls tools)
  std::string finish_reason;         ///< stop, length, tool_calls, content_filter...
  std::string tool_calls_json = {};  ///< a JSON array in OpenAI's form [{id, type, function: {name, arguments}}]; empty: none
  token_usage usage = {};
  double cost_usd = 0;               ///< from the price table; 0 where the model has no price
  std::string backend = {};          ///< name() of the backend that answered
  std::int64_t created = 0;          ///< Unix seconds, as the server reported it
};

/// One piece of a streamed answer. The last content chunk carries the
/// finish_reason; usage comes once, usually in a chunk of its own.
struct chat_chunk {
  std::string content_delta;
  std::optional<std::string> finish_reason = {};
  std::optional<token_usage> usage = {};
  std::string tool_call_deltas_json = {};  ///< a JSON array in OpenAI's form [{index, id?, type?, function: {name?, arguments?}}]; empty: none
};

}  // namespace llmgate::inline v0
