// sse_stream: a chat answer sent to the client as OpenAI's server-sent
// events, over HTTP/1.1 chunked transfer: the role chunk first, then each
// content chunk as it comes, the usage chunk when the client asked for it
// (stream_options.include_usage), and data: [DONE]. Headers go
// out with the first event, so that they can say what the pipeline did
// before it (cache outcome, backend). Each event's bytes are written by
// the OpenAI wire writers (no JSON tree). The head and then the bytes go to
// a response_stream (the connection's session, or a test's buffer), the
// body framed in chunks (event_stream_framing.hpp).
//
// Arguments to coroutines are named objects, never temporaries: GCC 12
// destroys some temporaries of a co_await expression too early.
#pragma once

#include <cstdint>      // std::int64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>         // boost::asio::awaitable
#include <boost/beast/http/empty_body.hpp>  // boost::beast::http::empty_body
#include <boost/beast/http/message.hpp>     // boost::beast::http::response
#include <boost/json/object.hpp>            // boost::json::object (an error event)
#include <boost/json/serialize.hpp>         // boost::json::serialize

#include "llmgate/wire/openai_wire.hpp"      // append_chunk_body, append_role_chunk_body, append_usage_chunk_body
#include "llmgate/server/http/event_stream_framing.hpp"  // set_event_stream_head, append_http_chunk
#include "llmgate/server/http/exchange.hpp"              // response_stream

namespace llmgate::inline v0 {

class sse_stream {
 public:
  sse_stream(response_stream& out, std::string id, std::int64_t created, bool keep_alive)
      : out_(out), id_(std::move(id)), created_(created), keep_alive_(keep_alive) {}

  /// Adds a header; only before start().
  void header(std::string_view name, std::string_view value) { header_.set(name, value); }

  bool started() const noexcept { return started_; }

  /// Sends the headers and the role chunk; every chunk names `model`, the
  /// request's model as the pipeline left it (the one the router chose
  /// for "auto"). The fixed headers are set only now: the gateway makes
  /// an sse_stream for every chat request, most of which never stream.
  boost::asio::awaitable<void> start(std::string model) {
    model_ = std::move(model);
    started_ = true;
    detail::set_event_stream_head(header_, keep_alive_);
    co_await out_.start(header_.base());
    append_role_chunk_body(begin_event(), id_, model_, created_);
    co_await send_event();
  }

  boost::asio::awaitable<void> send(const chat_chunk& chunk) {
    append_chunk_body(begin_event(), chunk, id_, model_, created_);
    co_await send_event();
  }

  /// The usage chunk (empty choices): the answer's usage with what it
  /// cost and, for a cached answer, what it saved.
  boost::asio::awaitable<void> send_usage(const token_usage& usage, double cost_usd, std::optional<double> saved_usd) {
    append_usage_chunk_body(begin_event(), usage, cost_usd, saved_usd, id_, model_, created_);
    co_await send_event();
  }

  /// data: [DONE], then the end of the chunked body.
  boost::asio::awaitable<void> finish() {
    begin_event() += "[DONE]";
    co_await send_event();
    co_await out_.write(detail::last_http_chunk);
  }

  /// An error event, then the end of the body without data: [DONE], so
  /// the client knows the answer broke off.
  boost::asio::awaitable<void> fail(const boost::json::object& error) {
    begin_event() += boost::json::serialize(error);
    co_await send_event();
    co_await out_.write(detail::last_http_chunk);
  }

  const std::string& id() const noexcept { return id_; }
  const std::string& model() const noexcept { return model_; }
  std::int64_t created() const noexcept { return created_; }

 private:
  // The event's buffer, emptied; the event's data is appended to it.
  std::string& begin_event() {
    event_.clear();
    return event_;
  }

  // The event in event_ as one chunk of the body. Not a coroutine: the
  // bytes live in bytes_ until the write completes, which the caller
  // awaits at once.
  boost::asio::awaitable<void> send_event() {
    bytes_.clear();
    detail::append_http_chunk(bytes_, {"data: ", event_, "\n\n"});
    return out_.write(bytes_);
  }

  response_stream& out_;
  boost::beast::http::response<boost::beast::http::empty_body> header_;
  std::string id_;
  std::string model_;
  std::int64_t created_;
  bool keep_alive_;
  bool started_ = false;
  std::string event_;  // the data of the event being written; reused
  std::string bytes_;  // the bytes being written; reused
};

}  // namespace llmgate::inline v0
