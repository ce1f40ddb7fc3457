// anthropic_event_stream: a chat answer sent to the client as Anthropic's
// Messages events (wire/anthropic_wire.hpp writes them): message_start and
// a ping when the stream starts, content blocks as the chunks come,
// message_delta (stop reason and usage) and message_stop at the end, or an
// error event where the answer breaks off. Headers go out with the first
// event, as sse_stream's do; the body is framed in chunks
// (event_stream_framing.hpp).
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
#include "llmgate/wire/anthropic_wire.hpp"               // messages_stream_events

namespace llmgate::inline v0 {

class anthropic_event_stream {
 public:
  anthropic_event_stream(response_stream& out, std::string id, bool keep_alive)
      : out_(out), id_(std::move(id)), keep_alive_(keep_alive) {}

  /// Adds a header; only before start().
  void header(std::string_view name, std::string_view value) { header_.set(name, value); }

  bool started() const noexcept { return started_; }
  const std::string& id() const noexcept { return id_; }

  /// Sends the headers, message_start (naming `model`) and a ping.
  boost::asio::awaitable<void> start(std::string model) {
    started_ = true;
    detail::set_event_stream_head(header_, keep_alive_);
    co_await out_.start(header_.base());
    events_text_ = events_.start(id_, model);
    co_await send_events();
  }

  /// The chunk's text and tool-call deltas; nothing for a chunk without.
  boost::asio::awaitable<void> send(const chat_chunk& chunk) {
    events_text_ = events_.chunk(chunk);
    if (!events_text_.empty()) co_await send_events();
  }

  /// The end of an answer that came whole: its stop reason and usage.
  boost::asio::awaitable<void> finish(const chat_response& response) {
    events_text_ = events_.finish(response.finish_reason, response.usage);
    co_await send_events();
    co_await out_.write(detail::last_http_chunk);
  }

  /// An error event (Anthropic's error `type`), then the end of the body.
  boost::asio::awaitable<void> fail(std::string_view type, std::string_view message) {
    events_text_ = messages_stream_events::error(type, message);
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
  std::string id_;
  bool keep_alive_;
  bool started_ = false;
  messages_stream_events events_;
  std::string events_text_;  // the events being written
  std::string bytes_;        // their bytes, framed; reused
};

}  // namespace llmgate::inline v0
