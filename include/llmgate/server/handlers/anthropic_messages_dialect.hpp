// anthropic_messages_dialect: the chat handler's wire form for POST
// /v1/messages (Anthropic's Messages API): the body read into the
// chat_request its chat-completions equivalent is (wire/anthropic_wire.hpp;
// so both routes share the caches' entries), errors as Anthropic's error
// object with its type for the status (invalid_request_error,
// authentication_error, not_found_error, rate_limit_error, api_error,
// overloaded_error...), a whole answer as a Message, a stream as
// Anthropic's events (messages_stream_events, sent by
// http/named_event_stream.hpp). A PML prompt is
// not read here: Messages requests carry none. What an answer cost or
// saved is told by the x-llmgate-* headers only: Anthropic's usage has no
// field for it.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/json/object.hpp>     // boost::json::object

#include "llmgate/chat/chat.hpp"                             // chat_request, chat_response
#include "llmgate/prompt/schema_registry.hpp"                // schema_registry
#include "llmgate/server/http/named_event_stream.hpp"        // named_event_stream
#include "llmgate/server/http/exchange.hpp"                  // response_stream
#include "llmgate/server/http/openai_errors.hpp"             // openai_error_message
#include "llmgate/server/http/responses.hpp"                 // text_response, http_response
#include "llmgate/server/response_ids.hpp"                   // response_ids
#include "llmgate/wire/anthropic_wire.hpp"                   // parse_messages_request, messages_response_body

namespace llmgate::inline v0 {

struct anthropic_messages_dialect {
  using stream = named_event_stream<messages_stream_events>;

  static stream open_stream(response_stream& out, const response_ids& ids, std::uint64_t number, std::int64_t,
                            bool keep_alive) {
    return stream(out, messages_stream_events(ids.message_id(number)), keep_alive);
  }

  static chat_request read(std::string_view body, const schema_registry&, std::size_t max_depth) {
    return parse_messages_request(body, max_depth);
  }

  /// OpenAI's error object `error` in Anthropic's form.
  static http_response error(http_status status, const boost::json::object& error) {
    return text_response("application/json",
                         messages_error_body(anthropic_error_type(static_cast<unsigned>(status)),
                                             openai_error_message(error)),
                         status);
  }

  static std::string body(const chat_response& response, const stream& s, std::optional<double>) {
    return messages_response_body(response, s.id(), response.model);
  }

  static boost::asio::awaitable<void> end(stream& s, const chat_request&, const chat_response& response,
                                          std::optional<double>) {
    return s.finish(response);
  }

  static boost::asio::awaitable<void> fail(stream& s, http_status status, const boost::json::object& error) {
    return s.fail(anthropic_error_type(static_cast<unsigned>(status)), openai_error_message(error));
  }
};

}  // namespace llmgate::inline v0
