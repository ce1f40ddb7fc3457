// anthropic_backend: Anthropic's Messages API (POST {base_url}/v1/messages),
// whole and streamed (SSE events message_start, content_block_start,
// content_block_delta, content_block_stop, message_delta, message_stop,
// ping, error).
//
// The OpenAI-form request is translated: system messages become the
// top-level "system" (text parts keep their cache_control breakpoints),
// tool results become tool_result blocks, assistant tool_calls become
// tool_use blocks, OpenAI tools become Anthropic tools, max_tokens (which
// Anthropic requires) defaults to options.max_tokens, stop becomes
// stop_sequences. Other OpenAI-only parameters are dropped, since the
// Messages API refuses fields it does not know.
//
// Usage: prompt_tokens = input_tokens + cache_read_input_tokens +
// cache_creation_input_tokens (Anthropic counts them apart), with
// cached_prompt_tokens and cache_write_tokens the last two; so that costs
// are priced as cached.
//
// A compiled PML prompt (request.layout set) gets cache_control
// breakpoints at the ends of its most reused modules
// (prompt/provider_hints.hpp says which): the message holding one is sent
// as text blocks cut at its breakpoints, each block that ends at one marked
// {"type":"ephemeral"}. At most options.cache_breakpoints of them, none
// whose prefix is shorter than options.cache_min_tokens (0: the model's
// documented minimum, anthropic_min_cacheable_tokens). A request that
// already carries a cache_control of its own gets none: its client chose.
#pragma once

#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // net::awaitable
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/backend/chat_assembler.hpp"
#include "llmgate/backend/detail/upstream.hpp"
#include "llmgate/backend/http_client.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/backend/sse_parser.hpp"
#include "llmgate/prompt/provider_hints.hpp"  // cache_breakpoints

namespace llmgate::inline v0 {

struct anthropic_options {
  std::string name = "anthropic";
  std::string base_url = "https://api.anthropic.com";
  std::string api_key = {};                  ///< sent as x-api-key
  std::string version = "2023-06-01";        ///< anthropic-version
  std::string model = {};                    ///< when set, replaces the request's model
  std::uint64_t max_tokens = 4096;           ///< when the request sets none
  std::vector<std::pair<std::string, std::string>> headers = {};  ///< e.g. anthropic-beta
  std::shared_ptr<const price_table> prices = {};
  std::size_t cache_min_tokens = 0;          ///< a breakpoint's shortest prefix; 0: the model's minimum
  std::size_t cache_breakpoints = anthropic_max_breakpoints;  ///< at most this many for a PML prompt; 0: none
};

namespace detail {

namespace json = boost::json;

/// The finish reason OpenAI would have given for Anthropic's stop_reason.
inline std::string openai_finish_reason(std::string_view stop_reason) {
  if (stop_reason == "end_turn" || stop_reason == "stop_sequence") return "stop";
  if (stop_reason == "max_tokens") return "length";
  if (stop_reason == "tool_use") return "tool_calls";
  return std::string(stop_reason);
}

/// Anthropic's usage object, in llmgate's counting (see the header comment).
inline token_usage anthropic_usage(const json::object& usage) {
  constexpr auto code = errc::upstream_protocol_error;
  token_usage result;
  result.cached_prompt_tokens = count_field(usage, "cache_read_input_tokens", "usage", code);
  result.cache_write_tokens = count_field(usage, "cache_creation_input_tokens", "usage", code);
  result.prompt_tokens = count_field(usage, "input_tokens", "usage", code) +
                         result.cached_prompt_tokens + result.cache_write_tokens;
  result.completion_tokens = count_field(usage, "output_tokens", "usage", code);
  return result;
}

/// Content as Anthropic blocks: a string becomes one text block; OpenAI
/// parts keep their text and cache_control; image_url parts become URL images.
inline json::array anthropic_blocks(const json::value& content) {
  json::array blocks;
  if (const auto* text = content.if_string()) {
    blocks.push_back(json::object{{"type", "text"}, {"text", *text}});
  } else if (const auto* parts = content.if_array()) {
    for (const auto& part : *parts) {
      const auto* object = part.if_object();
      if (!object) continue;
      const auto* type = object->if_contains("type");
      if (type && *type == "image_url") {
        const auto* image = object->if_contains("image_url");
        const auto* url = image && image->is_object() ? image->as_object().if_contains("url") : nullptr;
        if (url && url->is_string())
          blocks.push_back(json::object{{"type", "image"}, {"source", {{"type", "url"}, {"url", *url}}}});
      } else {
        blocks.push_back(*object);  // text parts, and Anthropic blocks given as they are
      }
    }
  }
  return blocks;
}

/// Whether the client placed cache_control breakpoints itself.
inline bool has_cache_control(const chat_request& request) {
  for (const auto& message : request.messages)
    if (message.content_json.find("\"cache_control\"") != std::string::npos) return true;
  const json_field* tools = find_field(request.parameters, "tools");
  return tools && tools->json.find("\"cache_control\"") != std::string::npos;
}

/// A string content cut at `marks` (byte offsets, ascending) into text
/// blocks, each block that ends at a mark carrying an ephemeral cache_control.
inline json::array marked_blocks(std::string_view text, const std::vector<std::size_t>& marks) {
  json::array blocks;
  std::size_t from = 0;
  for (const std::size_t mark : marks) {
    if (mark <= from || mark > text.size()) continue;
    blocks.push_back(json::object{{"type", "text"},
                                  {"text", text.substr(from, mark - from)},
                                  {"cache_control", {{"type", "ephemeral"}}}});
    from = mark;
  }
  if (from < text.size() || blocks.empty())
    blocks.push_back(json::object{{"type", "text"}, {"text", text.substr(from)}});
  return blocks;
}

inline json::object anthropic_request(const chat_request& request, const anthropic_options& options,
                                      bool stream) {
  json::object body;
  const std::string& model = options.model.empty() ? request.model : options.model;
  body["model"] = model;
  // Breakpoint byte offsets by message index, for a PML prompt.
  std::vector<std::vector<std::size_t>> marks;
  if (request.layout && options.cache_breakpoints > 0 && !has_cache_control(request)) {
    const std::size_t min_tokens =
        options.cache_min_tokens ? options.cache_min_tokens : anthropic_min_cacheable_tokens(model);
    marks.resize(request.messages.size());
    for (const auto& point : cache_breakpoints(*request.layout, min_tokens, options.cache_breakpoints))
      if (point.message < marks.size() && request.messages[point.message].content_json.empty())
        marks[point.message].push_back(point.byte);
  }
  const auto blocks_of = [&](std::size_t index) {
    const chat_message& message = request.messages[index];
    if (index < marks.size() && !marks[index].empty()) return marked_blocks(message.content, marks[index]);
    return anthropic_blocks(content_value(message));
  };
  json::array system;
  json::array messages;
  for (std::size_t index = 0; index < request.messages.size(); ++index) {
    const chat_message& message = request.messages[index];
    const json::object extra = to_json_object(message.extra);
    if (message.role == "system" || message.role == "developer") {
      for (auto& block : blocks_of(index)) system.push_back(std::move(block));
    } else if (message.role == "tool") {
      const auto* id = extra.if_contains("tool_call_id");
      json::object result{{"type", "tool_result"}, {"tool_use_id", id ? *id : json::value("")},
                          {"content", message.content}};
      messages.push_back(json::object{{"role", "user"}, {"content", json::array{std::move(result)}}});
    } else {
      json::array blocks = blocks_of(index);
      if (const auto* calls = extra.if_contains("tool_calls"); calls && calls->is_array()) {
        for (const auto& call : calls->as_array()) {
          const auto* object = call.if_object();
          const auto* function = object ? object->if_contains("function") : nullptr;
          if (!function || !function->is_object()) continue;
          const auto& f = function->as_object();
          json::value input = json::object();
          if (const auto* arguments = f.if_contains("arguments"); arguments && arguments->is_string()) {
            boost::system::error_code ec;
            auto parsed = json::parse(arguments->as_string(), ec);
            if (!ec) input = std::move(parsed);
          }
          blocks.push_back(json::object{{"type", "tool_use"},
                                        {"id", object->contains("id") ? object->at("id") : json::value("")},
                                        {"name", f.contains("name") ? f.at("name") : json::value("")},
                                        {"input", std::move(input)}});
        }
      }
      messages.push_back(json::object{{"role", message.role}, {"content", std::move(blocks)}});
    }
  }
  if (!system.empty()) body["system"] = std::move(system);
  body["messages"] = std::move(messages);
  const json::object parameters = to_json_object(request.parameters);
  const json::value* max_tokens = parameters.if_contains("max_tokens");
  if (!max_tokens) max_tokens = parameters.if_contains("max_completion_tokens");
  body["max_tokens"] = max_tokens && max_tokens->is_number() ? *max_tokens : json::value(options.max_tokens);
  for (const char* key : {"temperature", "top_p", "top_k", "metadata", "stop_sequences", "thinking",
                          "tool_choice"})
    if (const auto* value = parameters.if_contains(key)) body[key] = *value;
  if (const auto* stop = parameters.if_contains("stop")) {
    if (stop->is_string()) body["stop_sequences"] = json::array{*stop};
    else if (stop->is_array()) body["stop_sequences"] = *stop;
  }
  if (const auto* tools = parameters.if_contains("tools"); tools && tools->is_array()) {
    json::array converted;
    for (const auto& tool : tools->as_array()) {
      const auto* function = tool.is_object() ? tool.as_object().if_contains("function") : nullptr;
      if (!function || !function->is_object()) {
        converted.push_back(tool);  // already in Anthropic's form
        continue;
      }
      const auto& f = function->as_object();
      json::object out{{"name", f.contains("name") ? f.at("name") : json::value("")}};
      if (const auto* description = f.if_contains("description")) out["description"] = *description;
      out["input_schema"] = f.contains("parameters") ? f.at("parameters") : json::object{{"type", "object"}};
      converted.push_back(std::move(out));
    }
    body["tools"] = std::move(converted);
  }
  if (stream) body["stream"] = true;
  return body;
}

/// Anthropic's whole answer as a chat_response.
inline chat_response parse_anthropic_response(const json::value& value) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto& object = as_object(value, "message", code);
  chat_response response;
  response.id = string_field(object, "id", "message", code);
  response.model = string_field(object, "model", "message", code);
  response.finish_reason = openai_finish_reason(string_field(object, "stop_reason", "message", code));
  json::array tool_calls;
  if (const auto* blocks = array_field(object, "content", "message", code)) {
    for (const auto& item : *blocks) {
      const auto& block = as_object(item, "message.content[]", code);
      const std::string type = string_field(block, "type", "message.content[]", code);
      if (type == "text") {
        response.content += string_field(block, "text", "message.content[]", code);
      } else if (type == "tool_use") {
        const auto* input = block.if_contains("input");
        tool_calls.push_back(json::object{
            {"id", string_field(block, "id", "tool_use", code)},
            {"type", "function"},
            {"function", {{"name", string_field(block, "name", "tool_use", code)},
                          {"arguments", input ? json::serialize(*input) : "{}"}}}});
      }
    }
  }
  if (!tool_calls.empty()) response.tool_calls_json = json_text(tool_calls);
  if (const auto* usage = object_field(object, "usage", "message", code))
    response.usage = anthropic_usage(*usage);
  return response;
}

/// Reads Anthropic's stream events one at a time into OpenAI-form chunks.
class anthropic_stream_reader {
 public:
  /// The chunk `event` makes, if any; throws backend_error for an error
  /// event and llmgate::error for a malformed one.
  std::optional<chat_chunk> read(const sse_event& event, chat_response& response,
                                 std::string_view backend) {
    constexpr auto code = errc::upstream_protocol_error;
    boost::system::error_code ec;
    const auto value = json::parse(event.data, ec);
    if (ec || !value.is_object())
      throw error(code, "SSE data is not a JSON object: " + event.data.substr(0, 80));
    const auto& object = value.as_object();
    const std::string type = string_field(object, "type", "event", code);
    if (type == "message_start") {
      const auto* message = object_field(object, "message", "message_start", code);
      if (!message) return std::nullopt;
      response.id = string_field(*message, "id", "message", code);
      response.model = string_field(*message, "model", "message", code);
      if (const auto* usage = object_field(*message, "usage", "message", code))
        usage_ = anthropic_usage(*usage);
      return std::nullopt;
    }
    if (type == "content_block_start") {
      const auto* block = object_field(object, "content_block", "content_block_start", code);
      if (!block || string_field(*block, "type", "content_block", code) != "tool_use")
        return std::nullopt;
      chat_chunk chunk;
      json::array deltas;
      deltas.push_back(json::object{
          {"index", tool_calls_++},
          {"id", string_field(*block, "id", "content_block", code)},
          {"type", "function"},
          {"function", {{"name", string_field(*block, "name", "content_block", code)}, {"arguments", ""}}}});
      chunk.tool_call_deltas_json = json_text(deltas);
      return chunk;
    }
    if (type == "content_block_delta") {
      const auto* delta = object_field(object, "delta", "content_block_delta", code);
      if (!delta) return std::nullopt;
      const std::string kind = string_field(*delta, "type", "delta", code);
      chat_chunk chunk;
      if (kind == "text_delta") {
        chunk.content_delta = string_field(*delta, "text", "delta", code);
      } else if (kind == "input_json_delta" && tool_calls_ > 0) {
        json::array deltas;
        deltas.push_back(json::object{
            {"index", tool_calls_ - 1},
            {"function", {{"arguments", string_field(*delta, "partial_json", "delta", code)}}}});
        chunk.tool_call_deltas_json = json_text(deltas);
      } else {
        return std::nullopt;  // thinking and signature deltas are not part of the answer
      }
      return chunk;
    }
    if (type == "message_delta") {
      chat_chunk chunk;
      if (const auto* delta = object_field(object, "delta", "message_delta", code))
        if (const auto* reason = delta->if_contains("stop_reason"); reason && reason->is_string())
          chunk.finish_reason = openai_finish_reason(reason->as_string());
      if (const auto* usage = object_field(object, "usage", "message_delta", code)) {
        // message_delta carries the final output count; input counts came with message_start.
        const token_usage final_counts = anthropic_usage(*usage);
        usage_.completion_tokens = final_counts.completion_tokens;
        if (final_counts.prompt_tokens) {
          usage_.prompt_tokens = final_counts.prompt_tokens;
          usage_.cached_prompt_tokens = final_counts.cached_prompt_tokens;
          usage_.cache_write_tokens = final_counts.cache_write_tokens;
        }
      }
      if (!chunk.finish_reason) return std::nullopt;
      return chunk;
    }
    if (type == "message_stop") {
      stopped_ = true;
      chat_chunk chunk;
      chunk.usage = usage_;
      return chunk;
    }
    if (type == "error") {
      const auto* failure = object_field(object, "error", "error", code);
      json::object upstream = failure ? *failure : json::object{};
      const auto* kind = upstream.if_contains("type");
      const bool retryable = kind && (*kind == "overloaded_error" || *kind == "api_error") &&
                             !mark_context_overflow(upstream);
      throw backend_error(errc::upstream_error,
                          std::string(backend) + ": stream reported an error: " + json::serialize(upstream),
                          {.backend = std::string(backend), .upstream_error = std::move(upstream),
                           .retryable = retryable});
    }
    return std::nullopt;  // ping, content_block_stop, and event types yet to come
  }

  bool stopped() const noexcept { return stopped_; }

 private:
  token_usage usage_;
  std::size_t tool_calls_ = 0;
  bool stopped_ = false;
};

}  // namespace detail

class anthropic_backend {
 public:
  anthropic_backend(std::shared_ptr<http_client> client, anthropic_options options)
      : options_(std::move(options)),
        upstream_(std::move(client), options_.name, options_.base_url, request_headers(options_)) {}

  anthropic_backend(net::any_io_executor executor, anthropic_options options)
      : anthropic_backend(std::make_shared<http_client>(std::move(executor)), std::move(options)) {}

  std::string_view name() const noexcept { return options_.name; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    chat_response response = co_await upstream_.post(
        "/v1/messages", detail::anthropic_request(request, options_, false),
        [](const boost::json::value& answer) { return detail::parse_anthropic_response(answer); }, &request.trace);
    co_return finish(std::move(response), request);
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    sse_parser parser;
    std::vector<sse_event> events;
    detail::anthropic_stream_reader reader;
    chat_assembler assembled;
    co_await upstream_.post_streaming(
        "/v1/messages", boost::json::serialize(detail::anthropic_request(request, options_, true)),
        [&](std::string_view bytes) -> net::awaitable<void> {
          events.clear();
          parser.feed(bytes, events);
          for (const auto& event : events) {
            if (reader.stopped()) break;
            if (auto chunk = reader.read(event, assembled.response(), options_.name)) {
              assembled.add(*chunk);
              co_await on_chunk(*chunk);
            }
          }
        }, &request.trace);
    if (!reader.stopped())
      throw backend_error(errc::upstream_protocol_error,
                          options_.name + ": stream ended before message_stop",
                          {.backend = options_.name});
    co_return finish(std::move(assembled).take(), request);
  }

 private:
  static std::vector<std::pair<std::string, std::string>> request_headers(const anthropic_options& options) {
    auto headers = options.headers;
    headers.emplace_back("anthropic-version", options.version);
    if (!options.api_key.empty()) headers.emplace_back("x-api-key", options.api_key);
    return headers;
  }

  chat_response finish(chat_response response, const chat_request& request) const {
    detail::finish_response(response, request, options_.name, options_.model, options_.prices.get());
    return response;
  }

  anthropic_options options_;
  detail::upstream upstream_;
};

static_assert(Backend<anthropic_backend>);

}  // namespace llmgate::inline v0
