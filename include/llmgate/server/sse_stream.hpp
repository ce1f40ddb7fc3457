// sse_stream: a chat answer sent to the client as OpenAI's server-sent
// events, over HTTP/1.1 chunked transfer: the role chunk first, then each
// content chunk as it comes, the usage chunk, and data: [DONE]. Headers go
// out with the first event, so that they can say what the pipeline did
// before it (cache outcome, backend). Each event's bytes are written into
// one buffer the stream keeps, by the OpenAI wire writers (no JSON tree).
//
// Arguments to coroutines are named objects, never temporaries: GCC 12
// destroys some temporaries of a co_await expression too early.
#pragma once

#include <cstdint>      // std::int64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/buffer.hpp>         // boost::asio::buffer
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable
#include <boost/asio/write.hpp>          // boost::asio::async_write
#include <boost/beast/core/tcp_stream.hpp>  // boost::beast::tcp_stream
#include <boost/beast/http.hpp>          // response, empty_body, make_chunk
#include <boost/json/object.hpp>         // boost::json::object
#include <boost/json/serialize.hpp>      // boost::json::serialize

#include "llmgate/chat/openai_wire.hpp"  // append_chunk_body, append_role_chunk_body, append_usage_chunk_body

namespace llmgate::inline v0 {

class sse_stream {
 public:
  sse_stream(boost::beast::tcp_stream& stream, std::string id, std::string model, std::int64_t created,
             bool keep_alive)
      : stream_(stream), id_(std::move(id)), model_(std::move(model)), created_(created), keep_alive_(keep_alive) {}

  /// Adds a header; only before start().
  void header(std::string_view name, std::string_view value) { header_.set(name, value); }

  bool started() const noexcept { return started_; }

  /// Sends the headers and the role chunk. The fixed headers are set only
  /// now: the gateway makes an sse_stream for every chat request, most of
  /// which never stream.
  boost::asio::awaitable<void> start() {
    namespace http = boost::beast::http;
    started_ = true;
    header_.result(http::status::ok);
    header_.version(11);
    header_.set(http::field::content_type, "text/event-stream");
    header_.set(http::field::cache_control, "no-cache");
    header_.keep_alive(keep_alive_);
    header_.chunked(true);
    http::response_serializer<http::empty_body> serializer(header_);
    co_await http::async_write_header(stream_, serializer, boost::asio::use_awaitable);
    append_role_chunk_body(begin_event(), id_, model_, created_);
    co_await send_event();
  }

  boost::asio::awaitable<void> send(const chat_chunk& chunk) {
    append_chunk_body(begin_event(), chunk, id_, model_, created_);
    co_await send_event();
  }

  /// The last chunk: the answer's usage with what it cost and, for a
  /// cached answer, what it saved.
  boost::asio::awaitable<void> send_usage(const token_usage& usage, double cost_usd,
                                          std::optional<double> saved_usd) {
    append_usage_chunk_body(begin_event(), usage, cost_usd, saved_usd, id_, model_, created_);
    co_await send_event();
  }

  /// An event of the gateway's own (an error).
  boost::asio::awaitable<void> send(const boost::json::object& object) {
    begin_event() += boost::json::serialize(object);
    co_await send_event();
  }

  /// data: [DONE], then the end of the chunked body.
  boost::asio::awaitable<void> finish() {
    namespace http = boost::beast::http;
    begin_event() += "[DONE]";
    co_await send_event();
    auto last = http::make_chunk_last();
    co_await boost::asio::async_write(stream_, last, boost::asio::use_awaitable);
  }

  /// An error event, then the end of the body without data: [DONE], so
  /// the client knows the answer broke off.
  boost::asio::awaitable<void> fail(const boost::json::object& error) {
    namespace http = boost::beast::http;
    co_await send(error);
    auto last = http::make_chunk_last();
    co_await boost::asio::async_write(stream_, last, boost::asio::use_awaitable);
  }

  const std::string& id() const noexcept { return id_; }
  const std::string& model() const noexcept { return model_; }
  std::int64_t created() const noexcept { return created_; }

 private:
  // The event buffer, emptied and holding "data: "; the event's data goes after it.
  std::string& begin_event() {
    event_.assign("data: ");
    return event_;
  }

  // Sends the event in the buffer as one HTTP chunk.
  boost::asio::awaitable<void> send_event() {
    namespace http = boost::beast::http;
    event_.append("\n\n");
    auto chunk = http::make_chunk(boost::asio::buffer(event_));
    co_await boost::asio::async_write(stream_, chunk, boost::asio::use_awaitable);
  }

  boost::beast::tcp_stream& stream_;
  boost::beast::http::response<boost::beast::http::empty_body> header_;
  std::string id_;
  std::string model_;
  std::int64_t created_;
  bool keep_alive_;
  bool started_ = false;
  std::string event_;  // the event being sent, kept for the next one's bytes
};

}  // namespace llmgate::inline v0
