// openai_backend: any server that speaks OpenAI's HTTP API: OpenAI, Azure
// OpenAI, vLLM, llama.cpp's server, Ollama's /v1, LM Studio...
//
//   POST {base_url}/chat/completions   complete() and stream() (SSE)
//   POST {base_url}/embeddings         embed()
//   GET  {base_url}/models             models()
//
// base_url includes the version, as OpenAI's SDKs take it:
// "https://api.openai.com/v1", "http://127.0.0.1:8080/v1". Azure OpenAI:
// base_url ".../openai/deployments/<name>", query "?api-version=...", and
// the key in headers as {"api-key", key} instead of api_key.
//
// Streaming asks for the usage chunk (stream_options.include_usage), so a
// streamed answer is costed as exactly as a whole one; servers that send it
// with choices null, empty or not empty are all read. A stream that ends
// before "data: [DONE]" and before any finish_reason was cut short: that
// is an upstream_protocol_error.
//
// A compiled PML prompt (request.layout set) is sent with prompt_cache_key
// = its layout's prefix_path (prompt/provider_hints.hpp), unless the
// client set one or options.prompt_cache_key is off (servers that refuse
// fields they do not know); plain requests are sent as they came. An
// adapter built on this one (llama_cpp_backend) passes hints of its own
// through the overloads that take `hints`.
#pragma once

#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // net::awaitable
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize, for error messages

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/wire/detail/chat_response_reader.hpp"  // read_chat_response: an answer without a tree
#include "llmgate/backend/chat_assembler.hpp"
#include "llmgate/backend/detail/upstream.hpp"
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/http_client.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/backend/sse_parser.hpp"
#include "llmgate/backend/detail/hint_fields.hpp"  // add_hint_fields
#include "llmgate/prompt/provider_hints.hpp"        // openai_prompt_cache_key

namespace llmgate::inline v0 {

struct openai_options {
  std::string name = "openai";                         ///< how errors and responses name it
  std::string base_url = "https://api.openai.com/v1";
  std::string api_key = {};                            ///< sent as "Authorization: Bearer <key>"
  std::string model = {};                              ///< when set, replaces the request's model
  std::string query = {};                              ///< appended to every path, e.g. "?api-version=..."
  std::vector<std::pair<std::string, std::string>> headers = {};  ///< sent with every request
  std::shared_ptr<const price_table> prices = {};      ///< prices responses; none: cost 0
  bool prompt_cache_key = true;                        ///< send a PML prompt's prompt_cache_key
};

class openai_backend {
 public:
  /// Shares `client` (and its connection pool) with other backends.
  openai_backend(std::shared_ptr<http_client> client, openai_options options)
      : options_(std::move(options)),
        upstream_(std::move(client), options_.name, options_.base_url, request_headers(options_)),
        completions_path_(path("/chat/completions")) {}

  /// Makes a client of its own on `executor`.
  openai_backend(net::any_io_executor executor, openai_options options)
      : openai_backend(std::make_shared<http_client>(std::move(executor)), std::move(options)) {}

  std::string_view name() const noexcept { return options_.name; }

  net::awaitable<chat_response> complete(const chat_request& request) { return complete(request, {}); }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    return stream(request, std::move(on_chunk), {});
  }

  /// complete() with `hints` added to the body (each one the client did
  /// not set itself).
  net::awaitable<chat_response> complete(const chat_request& request, json_fields hints);

  /// stream() with `hints` added to the body, as complete() adds them.
  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk, json_fields hints);

  net::awaitable<embedding_response> embed(const embedding_request& request);

  /// The ids of the models the server offers (GET /models).
  net::awaitable<std::vector<std::string>> models();

 private:
  static std::vector<std::pair<std::string, std::string>> request_headers(const openai_options& options) {
    auto headers = options.headers;
    if (!options.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + options.api_key);
    return headers;
  }

  std::string path(std::string_view api) const { return std::string(api) + options_.query; }

  // Reads an embeddings answer that must hold `count` vectors. (The
  // decoders are named types and functions, not lambdas, for the reason
  // impl/openai_backend.hpp gives.)
  struct embeddings_reader {
    std::size_t count;
    embedding_response operator()(const boost::json::value& answer) const {
      return parse_embedding_response(answer, count);
    }
  };

  static std::vector<std::string> read_model_ids(const boost::json::value& answer) {
    constexpr auto code = errc::upstream_protocol_error;
    const auto& object = detail::as_object(answer, "models", code);
    std::vector<std::string> ids;
    if (const auto* data = detail::array_field(object, "data", "models", code))
      for (const auto& model : *data)
        ids.push_back(detail::string_field(detail::as_object(model, "models.data[]", code), "id",
                                           "models.data[]", code));
    return ids;
  }

  // A chat.completion answer: read from its text where it has the common
  // form, else from its tree, which gives what parse_chat_response gives.
  static chat_response read_chat_answer(std::string_view answer) {
    chat_response response;
    if (!detail::read_chat_response(answer, response))
      response = detail::decode_json_answer(answer, [](const boost::json::value& tree) { return parse_chat_response(tree); });
    return response;
  }

  // The request as sent: the configured model, a stream asks for its usage
  // chunk, and a PML prompt carries its hints.
  std::string wire_request(const chat_request& request, bool stream, json_fields& hints) const {
    std::string body = chat_request_body(request, {.model = options_.model, .stream = stream, .include_usage = stream});
    if (!request.layout) return body;
    if (options_.prompt_cache_key) {
      if (const std::string key = openai_prompt_cache_key(request); !key.empty()) {
        std::string quoted;
        detail::json_appender(quoted).string(key);
        hints.insert(hints.begin(), {"prompt_cache_key", std::move(quoted)});
      }
    }
    detail::add_hint_fields(body, request, hints);
    return body;
  }

  boost::json::value parse_event(std::string_view data) const {
    boost::system::error_code code;
    auto value = boost::json::parse(data, code);
    if (code || !value.is_object())
      throw error(errc::upstream_protocol_error,
                  "SSE data is not a JSON object: " + std::string(data.substr(0, 80)));
    // Some servers report a failure inside the stream instead of a status.
    if (const auto* failure = value.as_object().if_contains("error"); failure && failure->is_object()) {
      boost::json::object upstream = failure->as_object();
      detail::mark_context_overflow(upstream);
      throw backend_error(errc::upstream_error,
                          options_.name + ": stream reported an error: " + boost::json::serialize(*failure),
                          {.backend = options_.name, .upstream_error = std::move(upstream)});
    }
    return value;
  }

  static void remember_identity(const boost::json::object& chunk, chat_response& response) {
    if (response.id.empty())
      response.id = detail::string_field(chunk, "id", "chunk", errc::upstream_protocol_error);
    if (response.model.empty())
      response.model = detail::string_field(chunk, "model", "chunk", errc::upstream_protocol_error);
    if (const auto* created = chunk.if_contains("created"); created && created->is_int64())
      response.created = created->get_int64();
  }

  chat_response finish(chat_response response, const chat_request& request) const {
    detail::finish_response(response, request, options_.name, options_.model, options_.prices.get());
    return response;
  }

  openai_options options_;
  detail::upstream upstream_;
  std::string completions_path_;  ///< "/chat/completions" and the query
};

static_assert(Backend<openai_backend>);
static_assert(EmbeddingBackend<openai_backend>);

}  // namespace llmgate::inline v0

#include "llmgate/detail/separate_compilation.hpp"
#ifndef LLMGATE_SEPARATE_COMPILATION
#include "llmgate/backend/impl/openai_backend.hpp"
#endif
