// named_event_stream: a chat answer sent to the client as server-sent
// events that carry their names ("event: message_start"), as Anthropic's
// Messages API and OpenAI's Responses API stream. What the events say is
// Events' (wire/anthropic_wire.hpp's messages_stream_events,
// wire/openai_responses_wire.hpp's responses_stream_events); this sends
// them: headers with the first events, as sse_stream's go, then each
// call's events as one chunk of the body (event_stream_framing.hpp).
//
// Events provides id(), start(model), chunk(chat_chunk), finish(chat_response)
// and error(type, message), each returning the events' text.
//
// Arguments to coroutines are named objects, never temporaries: GCC 12
// destroys some temporaries of a co_await expression too early.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>         // boost::asio::awaitable
#include <boost/beast/http/empty_body.hpp>  // boost::beast::http::empty_body
#include <boost/beast/http/message.hpp>     // boost::beast::http::response

#include "llmgate/chat/chat.hpp"                         // chat_chunk, chat_response
#include "llmgate/server/http/event_stream_framing.hpp"  // set_event_stream_head, append_http_chunk
#include "llmgate/server/http/exchange.hpp"              // response_stream

namespace llmgate::inline v0 {

template <class Events>
class named_event_stream {
 public:
  named_event_stream(response_stream& out, Events events, bool keep_alive)
      : out_(out), events_(std::move(events)), keep_alive_(keep_alive) {}

  /// Adds a header; only before start().
  void header(std::string_view name, std::string_view value) { header_.set(name, value); }

  bool started() const noexcept { return started_; }
  const Events& events() const noexcept { return events_; }
  const std::string& id() const noexcept { return events_.id(); }

  /// Sends the headers and the opening events, naming `model`.
  boost::asio::awaitable<void> start(std::string model) {
    started_ = true;
    detail::set_event_stream_head(header_, keep_alive_);
    co_await out_.start(header_.base());
    events_text_ = events_.start(model);
    co_await send_events();
  }

  /// The chunk's text and tool-call deltas; nothing for a chunk without.
  boost::asio::awaitable<void> send(const chat_chunk& chunk) {
    events_text_ = events_.chunk(chunk);
    if (!events_text_.empty()) co_await send_events();
  }

  /// The closing events of an answer that came whole, then the end of the body.
  boost::asio::awaitable<void> finish(const chat_response& response) {
    events_text_ = events_.finish(response);
    co_await send_events();
    co_await out_.write(detail::last_http_chunk);
  }

  /// An error event (of error `type`), then the end of the body.
  boost::asio::awaitable<void> fail(std::string_view type, std::string_view message) {
    events_text_ = events_.error(type, message);
    co_await send_events();
    co_await out_.write(detail::last_http_chunk);
  }

 private:
  // events_text_ as one chunk of the body. Not a coroutine: the bytes live
  // in bytes_ until the write completes, which the caller awaits at once.
  boost::asio::awaitable<void> send_events() {
    bytes_.clear();
    detail::append_http_chunk(bytes_, {events_text_});
    return out_.write(bytes_);
  }

  response_stream& out_;
  boost::beast::http::response<boost::beast::http::empty_body> header_;
  Events events_;
  bool keep_alive_;
  bool started_ = false;
  std::string events_text_;  // the events being written
  std::string bytes_;        // their bytes, framed; reused
};

}  // namespace llmgate::inline v0
