// ollama_backend: Ollama's native API.
//
//   POST {base_url}/api/chat    complete() and stream() (NDJSON: one JSON
//                               object per line, the last with "done": true)
//   POST {base_url}/api/embed   embed()
//
// The OpenAI-form request is translated: content parts are joined into
// text (image parts are not sent), tool calls carry their arguments as
// JSON objects, and generation parameters move under "options"
// (max_tokens -> num_predict; temperature, top_p, top_k, seed, stop as
// they are); response_format {"type": "json_object"} becomes "format":
// "json", a json_schema its schema. Usage: prompt_eval_count and
// eval_count. Ollama has no prompt cache accounting: cached tokens are 0.
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
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/http_client.hpp"
#include "llmgate/backend/ndjson_parser.hpp"
#include "llmgate/backend/price_table.hpp"

namespace llmgate::inline v0 {

struct ollama_options {
  std::string name = "ollama";
  std::string base_url = "http://127.0.0.1:11434";
  std::string model = {};  ///< when set, replaces the request's model
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::shared_ptr<const price_table> prices = {};  ///< self-hosted models may still carry a price
};

namespace detail {

namespace json = boost::json;

inline json::object ollama_request(const chat_request& request, const ollama_options& options,
                                   bool stream) {
  json::array messages;
  for (const auto& message : request.messages) {
    json::object out{{"role", message.role}, {"content", message.content}};
    const auto* tool_calls = find_field(message.extra, "tool_calls");
    if (const json::value calls = tool_calls ? parse_json_text(tool_calls->json) : json::value(); calls.is_array()) {
      json::array converted;
      for (const auto& call : calls.as_array()) {
        const auto* function = call.is_object() ? call.as_object().if_contains("function") : nullptr;
        if (!function || !function->is_object()) continue;
        json::object f = function->as_object();
        if (const auto* arguments = f.if_contains("arguments"); arguments && arguments->is_string()) {
          boost::system::error_code ec;
          auto parsed = json::parse(arguments->as_string(), ec);
          f["arguments"] = ec ? json::value(json::object()) : std::move(parsed);
        }
        converted.push_back(json::object{{"function", std::move(f)}});
      }
      out["tool_calls"] = std::move(converted);
    }
    messages.push_back(std::move(out));
  }
  json::object body{{"model", options.model.empty() ? request.model : options.model},
                    {"messages", std::move(messages)},
                    {"stream", stream}};
  json::object generation;
  const json::object parameters = to_json_object(request.parameters);
  for (const char* key : {"temperature", "top_p", "top_k", "seed", "stop"})
    if (const auto* value = parameters.if_contains(key)) generation[key] = *value;
  if (const auto* max_tokens = parameters.if_contains("max_tokens")) generation["num_predict"] = *max_tokens;
  if (const auto* options_given = parameters.if_contains("options"); options_given && options_given->is_object())
    for (const auto& field : options_given->as_object()) generation.insert(field);
  if (!generation.empty()) body["options"] = std::move(generation);
  if (const auto* tools = parameters.if_contains("tools")) body["tools"] = *tools;
  if (const auto* format = parameters.if_contains("response_format"); format && format->is_object()) {
    const auto& f = format->as_object();
    if (f.contains("type") && f.at("type") == "json_object") body["format"] = "json";
    else if (const auto* schema = f.if_contains("json_schema"); schema && schema->is_object() &&
                                                                schema->as_object().contains("schema"))
      body["format"] = schema->as_object().at("schema");
  }
  if (const auto* keep_alive = parameters.if_contains("keep_alive")) body["keep_alive"] = *keep_alive;
  return body;
}

/// One object of Ollama's /api/chat answer (the whole one, or a stream
/// line); `tool_calls` is how many tool calls the answer holds so far.
inline chat_chunk parse_ollama_chunk(const json::value& value, chat_response& response, std::size_t tool_calls,
                                     std::string_view backend) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto& object = as_object(value, "ollama line", code);
  if (const auto* failure = object.if_contains("error")) {  // a failure reported inside the stream
    json::object upstream{{"message", *failure}};
    mark_context_overflow(upstream);
    throw backend_error(errc::upstream_error, std::string(backend) + ": " + json::serialize(*failure),
                        {.backend = std::string(backend), .upstream_error = std::move(upstream)});
  }
  if (response.model.empty()) response.model = string_field(object, "model", "ollama line", code);
  chat_chunk chunk;
  if (const auto* message = object_field(object, "message", "ollama line", code)) {
    chunk.content_delta = string_field(*message, "content", "message", code);
    if (const auto* calls = array_field(*message, "tool_calls", "message", code)) {
      json::array deltas;
      for (const auto& call : *calls) {
        const auto* function = call.is_object() ? call.as_object().if_contains("function") : nullptr;
        if (!function || !function->is_object()) continue;
        const auto& f = function->as_object();
        const auto* arguments = f.if_contains("arguments");
        const std::size_t index = tool_calls + deltas.size();
        deltas.push_back(json::object{
            {"index", index},
            {"id", "call_" + std::to_string(index)},
            {"type", "function"},
            {"function", {{"name", f.contains("name") ? f.at("name") : json::value("")},
                          {"arguments", arguments ? json::serialize(*arguments) : "{}"}}}});
      }
      if (!deltas.empty()) chunk.tool_call_deltas_json = json_text(deltas);
    }
  }
  const auto* done = object.if_contains("done");
  if (done && done->is_bool() && done->as_bool()) {
    std::string reason = string_field(object, "done_reason", "ollama line", code);
    if (!chunk.tool_call_deltas_json.empty() || tool_calls > 0) reason = "tool_calls";
    chunk.finish_reason = reason.empty() ? "stop" : reason;
    chunk.usage = token_usage{.prompt_tokens = count_field(object, "prompt_eval_count", "ollama line", code),
                              .completion_tokens = count_field(object, "eval_count", "ollama line", code)};
  }
  return chunk;
}

}  // namespace detail

class ollama_backend {
 public:
  ollama_backend(std::shared_ptr<http_client> client, ollama_options options)
      : options_(std::move(options)),
        upstream_(std::move(client), options_.name, options_.base_url, options_.headers) {}

  ollama_backend(net::any_io_executor executor, ollama_options options)
      : ollama_backend(std::make_shared<http_client>(std::move(executor)), std::move(options)) {}

  std::string_view name() const noexcept { return options_.name; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    chat_response response = co_await upstream_.post(
        "/api/chat", detail::ollama_request(request, options_, false),
        [this](const boost::json::value& answer) {
          chat_assembler assembled;
          assembled.add(detail::parse_ollama_chunk(answer, assembled.response(), 0, options_.name));
          return std::move(assembled).take();
        }, &request.trace);
    detail::finish_response(response, request, options_.name, options_.model, options_.prices.get());
    co_return response;
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    ndjson_parser parser;
    std::vector<boost::json::value> lines;
    chat_assembler assembled;
    bool done = false;
    co_await upstream_.post_streaming(
        "/api/chat", boost::json::serialize(detail::ollama_request(request, options_, true)),
        [&](std::string_view bytes) -> net::awaitable<void> {
          lines.clear();
          parser.feed(bytes, lines);
          for (const auto& line : lines) {
            if (done) break;
            const chat_chunk chunk = detail::parse_ollama_chunk(line, assembled.response(),
                                                                assembled.tool_call_count(), options_.name);
            done = chunk.finish_reason.has_value();
            assembled.add(chunk);
            if (!chunk.content_delta.empty() || !chunk.tool_call_deltas_json.empty() || done)
              co_await on_chunk(chunk);
          }
        }, &request.trace);
    if (!done)
      throw backend_error(errc::upstream_protocol_error,
                          options_.name + ": stream ended before \"done\": true",
                          {.backend = options_.name});
    chat_response response = std::move(assembled).take();
    detail::finish_response(response, request, options_.name, options_.model, options_.prices.get());
    co_return response;
  }

  net::awaitable<embedding_response> embed(const embedding_request& request) {
    boost::json::array input;
    for (const auto& text : request.input) input.emplace_back(text);
    boost::json::object body{{"model", options_.model.empty() ? request.model : options_.model},
                             {"input", std::move(input)}};
    for (const auto& field : request.parameters) body.insert(field);
    const std::size_t count = request.input.size();
    embedding_response response = co_await upstream_.post(
        "/api/embed", body, [count](const boost::json::value& answer) {
          constexpr auto code = errc::upstream_protocol_error;
          const auto& object = detail::as_object(answer, "embed", code);
          embedding_response out;
          out.model = detail::string_field(object, "model", "embed", code);
          const auto* vectors = detail::array_field(object, "embeddings", "embed", code);
          if (!vectors || vectors->size() != count)
            detail::fail(code, "embed.embeddings", "must hold one vector per input");
          for (const auto& vector : *vectors)
            out.embeddings.push_back(detail::parse_vector(vector, "embed.embeddings[]"));
          out.usage.prompt_tokens = detail::count_field(object, "prompt_eval_count", "embed", code);
          return out;
        });
    response.backend = options_.name;
    if (response.model.empty()) response.model = body.at("model").as_string();
    if (options_.prices) response.cost_usd = options_.prices->cost(response.model, response.usage);
    co_return response;
  }

 private:
  ollama_options options_;
  detail::upstream upstream_;
};

static_assert(Backend<ollama_backend>);
static_assert(EmbeddingBackend<ollama_backend>);

}  // namespace llmgate::inline v0
