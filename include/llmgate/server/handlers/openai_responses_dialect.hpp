// openai_responses_dialect: the chat handler's wire form for POST
// /v1/responses (OpenAI's Responses API, stateless): the body read into the
// chat_request its chat-completions equivalent is
// (wire/openai_responses_wire.hpp; so the routes share the caches'
// entries), errors as OpenAI's error object, a whole answer as a response
// object, a stream as the Responses API's events (responses_stream_events,
// sent by http/named_event_stream.hpp), a failure after the stream began
// as response.failed. What an answer cost or saved is told by the
// x-llmgate-* headers only: the Responses API's usage has no field for it.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/json/object.hpp>     // boost::json::object

#include "llmgate/chat/chat.hpp"                        // chat_request, chat_response
#include "llmgate/prompt/schema_registry.hpp"           // schema_registry
#include "llmgate/server/http/exchange.hpp"             // response_stream
#include "llmgate/server/http/named_event_stream.hpp"   // named_event_stream
#include "llmgate/server/http/openai_errors.hpp"        // openai_error_message
#include "llmgate/server/http/responses.hpp"            // json_response, text_response, http_response
#include "llmgate/server/response_ids.hpp"              // response_ids
#include "llmgate/wire/openai_responses_wire.hpp"       // parse_responses_request, responses_response_body

namespace llmgate::inline v0 {

struct openai_responses_dialect {
  using stream = named_event_stream<responses_stream_events>;

  static stream open_stream(response_stream& out, const response_ids& ids, std::uint64_t number, std::int64_t created,
                            bool keep_alive) {
    return stream(out, responses_stream_events(ids.response_id(number), created), keep_alive);
  }

  static chat_request read(std::string_view body, const schema_registry&, std::size_t max_depth) {
    return parse_responses_request(body, max_depth);
  }

  static http_response error(http_status status, const boost::json::object& error) {
    return json_response(status, error);
  }

  static std::string body(const chat_response& response, const stream& s, std::optional<double>) {
    return responses_response_body(response, s.id(), s.events().created_at(), response.model);
  }

  static boost::asio::awaitable<void> end(stream& s, const chat_request&, const chat_response& response,
                                          std::optional<double>) {
    return s.finish(response);
  }

  /// response.failed, with the code the Responses API gives such a failure.
  static boost::asio::awaitable<void> fail(stream& s, http_status status, const boost::json::object& error) {
    const std::string_view code = status == http_status::too_many_requests ? "rate_limit_exceeded" : "server_error";
    return s.fail(code, openai_error_message(error));
  }
};

}  // namespace llmgate::inline v0
