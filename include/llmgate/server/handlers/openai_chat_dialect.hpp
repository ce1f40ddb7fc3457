// openai_chat_dialect: the chat handler's wire form for POST
// /v1/chat/completions (OpenAI's): the body read with its PML compiled
// (server/read_chat_request.hpp), errors as OpenAI's error object, a whole
// answer as a chat.completion, a stream as OpenAI's server-sent events
// (http/sse_stream.hpp) ending with the usage chunk where the request asked
// for it (stream_options.include_usage) and data: [DONE].
//
// A dialect is what chat_handler (handlers/chat.hpp) is given to speak one
// API's form; anthropic_messages_dialect.hpp and
// openai_responses_dialect.hpp are the others. The handler's errors are
// built as OpenAI's error object, which each dialect writes in its own
// form.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/json/object.hpp>     // boost::json::object

#include "llmgate/chat/chat.hpp"                  // chat_request, chat_response
#include "llmgate/prompt/schema_registry.hpp"     // schema_registry
#include "llmgate/prompt/tokenizer.hpp"           // estimated_tokenizer
#include "llmgate/server/http/exchange.hpp"       // response_stream
#include "llmgate/server/http/responses.hpp"      // json_response, http_response
#include "llmgate/server/http/sse_stream.hpp"     // sse_stream
#include "llmgate/server/read_chat_request.hpp"   // read_chat_request
#include "llmgate/server/response_ids.hpp"        // response_ids
#include "llmgate/wire/openai_wire.hpp"           // append_completion_body, usage_chunk_asked

namespace llmgate::inline v0 {

struct openai_chat_dialect {
  using stream = sse_stream;

  /// The stream of answer `number` (made for every request; it starts
  /// only if the request streams).
  static stream open_stream(response_stream& out, const response_ids& ids, std::uint64_t number, std::int64_t created,
                            bool keep_alive) {
    return stream(out, ids.id(number), created, keep_alive);
  }

  /// The request in a body; throws request_error naming the field at fault.
  static chat_request read(std::string_view body, const schema_registry& schemas, std::size_t max_depth) {
    return read_chat_request(body, schemas, estimated_tokenizer{}, max_depth);
  }

  /// An error response: `error` is OpenAI's {"error": {...}} object.
  static http_response error(http_status status, const boost::json::object& error) {
    return json_response(status, error);
  }

  /// A whole answer's body; `saved_usd` set for a cached answer.
  static std::string body(const chat_response& response, const stream& s, std::optional<double> saved_usd) {
    std::string body;
    body.reserve(384 + response.content.size() + response.model.size());
    append_completion_body(body, response, s.id(), s.created(), saved_usd);
    return body;
  }

  /// The end of a stream that went well.
  static boost::asio::awaitable<void> end(stream& s, const chat_request& request, const chat_response& response,
                                          std::optional<double> saved_usd) {
    if (usage_chunk_asked(request)) co_await s.send_usage(response.usage, response.cost_usd, saved_usd);
    co_await s.finish();
  }

  /// A failure after the stream began: an error event, no [DONE].
  static boost::asio::awaitable<void> fail(stream& s, http_status, const boost::json::object& error) {
    return s.fail(error);
  }
};

}  // namespace llmgate::inline v0
