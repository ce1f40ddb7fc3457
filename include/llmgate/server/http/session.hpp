// session<Stream>: one client connection. Reads requests and answers them
// in order (HTTP/1.1 keep-alive), on the thread that accepted it, until
// the client or a drain closes it:
//   - a connection waits at most idle_timeout for the first byte of its
//     next request, then header_timeout for the rest of its headers, then
//     body_timeout for its body (plain TCP; a layered stream has
//     idle_timeout for the headers and body_timeout for the body);
//   - a request is judged on its headers before its body is read: framing
//     that RFC 9112 refuses (Transfer-Encoding other than a lone chunked,
//     or beside Content-Length: request smuggling behind a proxy that reads
//     it otherwise), no Host in HTTP/1.1, another HTTP version, an Expect
//     other than 100-continue, and a route's missing key are answered and
//     the connection closed; malformed headers get 400 (431: too large);
//     a client that sent "Expect: 100-continue" is told to go on;
//   - a body over max_body_bytes gets 413, then the session reads and
//     discards what the client still sends, for a bounded time and size,
//     before it closes (nginx's lingering close): a client that writes its
//     whole body before reading (the OpenAI SDKs) would otherwise see its
//     write fail on the connection's reset, never the 413; so does every
//     refusal made before the body is read;
//   - each request goes to the dispatch table; a whole response is written
//     from a buffer the session keeps (its capacity serves the next one),
//     a streamed one was written by its handler through the session
//     (response_stream);
//   - every response it writes, whoever made it, is told to on_served once
//     written (status, method, path, tenant, latency, a chat outcome): the
//     one place the metrics and the request log are fed from;
//   - while a handler runs the session is busy, and a drain lets it finish.
// Stream: boost::beast::tcp_stream, or a stream layered on one (TLS).
#pragma once

#include <algorithm>    // std::min
#include <atomic>       // std::atomic
#include <cerrno>       // errno, EAGAIN, EWOULDBLOCK, EINTR
#include <chrono>       // std::chrono::seconds, steady_clock
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <functional>   // std::function
#include <optional>     // std::optional
#include <memory>       // std::enable_shared_from_this, std::shared_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tie, std::ignore
#include <type_traits>  // std::is_same_v
#include <utility>      // std::move

#include <sys/socket.h>  // ::send, MSG_DONTWAIT, MSG_NOSIGNAL: a whole response written at once

#include <boost/asio/as_tuple.hpp>             // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/deferred.hpp>             // boost::asio::deferred: awaited without a coroutine frame
#include <boost/asio/ip/tcp.hpp>               // boost::asio::ip::tcp::socket::shutdown_send
#include <boost/asio/post.hpp>                 // boost::asio::post
#include <boost/asio/steady_timer.hpp>         // boost::asio::steady_timer (the idle watchdog)
#include <boost/asio/use_awaitable.hpp>        // boost::asio::use_awaitable
#include <boost/asio/write.hpp>                // boost::asio::async_write
#include <boost/beast/core/flat_buffer.hpp>    // boost::beast::flat_buffer
#include <boost/beast/core/string.hpp>         // boost::beast::iequals
#include <boost/beast/core/stream_traits.hpp>  // boost::beast::get_lowest_layer
#include <boost/beast/core/tcp_stream.hpp>     // boost::beast::tcp_stream
#include <boost/beast/http/error.hpp>          // boost::beast::http::error::body_limit
#include <boost/beast/http/parser.hpp>         // boost::beast::http::request_parser
#include <boost/beast/http/rfc7230.hpp>        // boost::beast::http::token_list
#include <boost/beast/http/read.hpp>           // boost::beast::http::async_read
#include <boost/beast/http/write.hpp>          // boost::beast::http::async_write
#include <boost/json/object.hpp>               // boost::json::object (the 413's error)
#include <boost/system/error_code.hpp>         // boost::system::error_code
#include <boost/system/system_error.hpp>       // boost::system::system_error

#include "llmgate/http/lingering_close.hpp"              // lingering_close, linger_limits
#include "llmgate/server/http/dispatch.hpp"              // dispatch_table
#include "llmgate/server/http/exchange.hpp"              // exchange, response_stream, request_deadline
#include "llmgate/server/http/response_bytes.hpp"        // append_response_bytes, append_header_bytes
#include "llmgate/server/http/responses.hpp"             // error_response, openai_error, path_of
#include "llmgate/server/operations/served_request.hpp"  // served_request

namespace llmgate::inline v0 {

struct session_options {
  std::uint64_t max_body_bytes = 1 << 20;
  std::uint32_t max_header_bytes = 16 * 1024;  ///< the request line and headers (431 above it)
  /// How long a connection waits for the first byte of a request.
  std::chrono::steady_clock::duration idle_timeout = std::chrono::seconds(60);
  /// How long a request's headers may take from their first byte (plain
  /// TCP: checked every quarter of it, so up to a quarter more).
  std::chrono::steady_clock::duration header_timeout = std::chrono::seconds(10);
  /// How long a request's body may take once its headers are in.
  std::chrono::steady_clock::duration body_timeout = std::chrono::seconds(60);
  /// The error (OpenAI's error object) of the 413 answering a body over
  /// max_body_bytes, written in its route's form; the session closes after it.
  boost::json::object too_large = openai_error("The request body is too large.", "invalid_request_error",
                                               "request_too_large");
  /// After a 413: how long, and how much of, the rest of the body is read
  /// and discarded before the close (http/lingering_close.hpp).
  linger_limits linger = {};
  /// Told of every response written (and of one the client left before).
  std::function<void(const served_request&)> on_served = {};
};

/// What the listener needs of a session to drain it, whatever its stream.
class session_base {
 public:
  virtual ~session_base() = default;
  /// Closes the connection (from any thread), unless it is answering a
  /// request and `busy_too` is false.
  virtual void close(bool busy_too) = 0;
};

template <class Stream>
class session final : public session_base,
                      public response_stream,
                      public std::enable_shared_from_this<session<Stream>> {
 public:
  session(Stream stream, const dispatch_table& routes, const session_options& options, const std::atomic<bool>& stopping)
      : stream_(std::move(stream)), routes_(routes), options_(options), stopping_(stopping),
        deadline_(request_deadline::make(stream_.get_executor())), watchdog_(stream_.get_executor()) {}

  /// The request timeout's slot: bind the coroutine of run() to it.
  boost::asio::cancellation_slot slot() { return deadline_->slot(); }

  /// Serves the connection until it closes; `done` is called at the end
  /// (the listener forgets the session there).
  template <class Done>
  boost::asio::awaitable<void> run(Done done) {
    namespace http = boost::beast::http;
    auto self = this->shared_from_this();  // alive until the end, even when the listener lets go
    auto& lowest = boost::beast::get_lowest_layer(stream_);
    try {
      while (!stopping_) {
        http::request_parser<http::string_body> parser;
        parser.header_limit(options_.max_header_bytes);
        parser.body_limit(options_.max_body_bytes);
        before_read(read_phase::header);
        boost::system::error_code ec;
        std::tie(ec, std::ignore) = co_await read_header(parser);
        after_read();
        if (ec) {  // a Content-Length over max_body_bytes is refused with the headers
          auto refusal = ec == http::error::body_limit ? std::optional(too_large(parser.get())) : malformed(ec);
          if (refusal) co_await refuse(std::move(*refusal), parser.get());
          break;
        }
        const http_request& request = parser.get();
        auto refusal = framing_refusal(request);
        // A request without the key its route needs is refused before its
        // body is read, unless the body is here already (then it costs
        // nothing more, and the dispatch table refuses it all the same).
        const bool body_here = parser.content_length() && buffer_.size() >= *parser.content_length();
        if (!refusal && !parser.is_done() && !body_here) refusal = routes_.refusal(request);
        if (!refusal && !parser.is_done() && continue_expected(request)) {
          if (parser.content_length().value_or(0) > options_.max_body_bytes) {
            refusal = too_large(request);
          } else {
            constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
            co_await boost::asio::async_write(stream_, boost::asio::buffer(go_on.data(), go_on.size()),
                                              boost::asio::use_awaitable);
          }
        }
        if (!refusal && !parser.is_done()) {
          before_read(read_phase::body);
          std::tie(ec, std::ignore) = co_await read_body(parser);
          after_read();
          if (ec == http::error::body_limit) refusal = too_large(request);
          else if (ec) break;
        }
        if (refusal) {
          co_await refuse(std::move(*refusal), request);
          break;
        }
        busy_ = true;
        exchange e{.request = request, .out = *this, .deadline = *deadline_,
                   .keep_alive = request.keep_alive() && !stopping_};
        streamed_ = false;
        streamed_status_ = 0;
        const auto started = clock::now();
        served_request served{.method = request.method_string(), .path = path_of(request)};
        bool open = true;  // whether the connection serves another request
        try {
          std::optional<http_response> response;
          try {
            response = co_await routes_(e);
          } catch (const boost::system::system_error&) {
            throw;  // the connection's own failure (the client went away): below
          } catch (const std::exception& failure) {
            // A handler that failed answers 500, unless part of its answer went out already.
            if (streamed_) throw;
            response = error_response(http_status::internal_server_error,
                                      std::string("The gateway failed: ") + failure.what(), "server_error",
                                      "internal_error");
          }
          if (response) {
            response->keep_alive(request.keep_alive() && !stopping_);
            response->prepare_payload();
            served.status = response->result_int();
            wire_.clear();
            append_response_bytes(*response, wire_);
            co_await send(wire_);
            if (wire_.capacity() > max_kept_wire_bytes) std::string().swap(wire_);  // a dashboard page, say
            open = response->keep_alive();
          } else {
            served.status = streamed_status_;
            served.streamed = true;
            open = e.keep_alive;
          }
        } catch (const std::exception&) {
          // The client went away mid-answer, or a handler failed mid-stream:
          // nothing more can be told to it; the record says so.
          served.aborted = true;
          if (served.status == 0) served.status = streamed_ ? streamed_status_ : client_closed_request;
          open = false;
        }
        served.tenant = e.tenant;
        if (e.outcome) served.outcome = &*e.outcome;
        observe(served, started);
        if (!open) break;
        busy_ = false;
      }
    } catch (const std::exception&) {
      // The client went away mid-answer: nothing left to tell it.
    }
    watchdog_.cancel();  // its wait holds the session: let go now, not at the next deadline
    deadline_->stop();   // and the request timeout's holds its deadline
    read_deadline_ = clock::time_point::max();
    boost::system::error_code ignored;
    lowest.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    done(self);
  }

  void close(bool busy_too) override {
    boost::asio::post(stream_.get_executor(), [self = this->shared_from_this(), busy_too] {
      if (busy_too || !self->busy_) boost::beast::get_lowest_layer(self->stream_).socket().close();
    });
  }

  boost::asio::awaitable<void> start(const boost::beast::http::response_header<>& head) override {
    streamed_ = true;
    streamed_status_ = head.result_int();
    wire_.clear();
    append_header_bytes(head, wire_);
    co_await send(wire_);
  }

  boost::asio::awaitable<void> write(std::string_view bytes) override { return send(bytes); }

 private:
  // Writes all of `bytes`: on plain TCP as much as the socket takes at
  // once without suspending, then the rest by an asynchronous write.
  boost::asio::awaitable<void> send(std::string_view bytes) {
    if constexpr (plain_tcp) {
      const std::size_t sent = send_now(bytes);
      if (sent < bytes.size())
        co_await boost::asio::async_write(boost::beast::get_lowest_layer(stream_).socket(),
                                          boost::asio::buffer(bytes.data() + sent, bytes.size() - sent),
                                          boost::asio::deferred);
    } else {
      co_await boost::asio::async_write(stream_, boost::asio::buffer(bytes.data(), bytes.size()),
                                        boost::asio::use_awaitable);
    }
  }

  using clock = std::chrono::steady_clock;
  // A plain TCP connection is read and written on its socket directly
  // (with the watchdog below for the idle timeout); a layered stream (TLS)
  // through the stream, with its own timeout.
  static constexpr bool plain_tcp = std::is_same_v<Stream, boost::beast::tcp_stream>;

  enum class read_phase { header, body };

  // Reads the request's headers, or the rest of it, under its timeout:
  // before_read(), then co_await read_header() or read_body(), then
  // after_read(). On plain TCP
  // the read is the socket's own, awaited as a deferred operation under
  // the watchdog: no timer armed and cancelled per read, and no coroutine
  // frame for it.
  void before_read(read_phase phase) {
    if constexpr (plain_tcp)
      watch(phase);
    else
      boost::beast::get_lowest_layer(stream_).expires_after(phase == read_phase::header ? options_.idle_timeout
                                                                                         : options_.body_timeout);
  }
  template <class Parser>
  auto read_header(Parser& parser) {
    namespace http = boost::beast::http;
    if constexpr (plain_tcp)
      return http::async_read_header(boost::beast::get_lowest_layer(stream_).socket(), buffer_, parser,
                                     boost::asio::as_tuple(boost::asio::deferred));
    else
      return http::async_read_header(stream_, buffer_, parser, boost::asio::as_tuple(boost::asio::use_awaitable));
  }
  template <class Parser>
  auto read_body(Parser& parser) {
    namespace http = boost::beast::http;
    if constexpr (plain_tcp)
      return http::async_read(boost::beast::get_lowest_layer(stream_).socket(), buffer_, parser,
                              boost::asio::as_tuple(boost::asio::deferred));
    else
      return http::async_read(stream_, buffer_, parser, boost::asio::as_tuple(boost::asio::use_awaitable));
  }
  void after_read() {
    if constexpr (plain_tcp)
      read_deadline_ = clock::time_point::max();
    else
      boost::beast::get_lowest_layer(stream_).expires_never();  // the request timeout applies while it is answered
  }

  // The answer to a request whose headers could not be read: 431 for too
  // large, 505 for another HTTP version, 400 for malformed, nothing for a
  // connection that closed or timed out.
  static std::optional<http_response> malformed(const boost::system::error_code& ec) {
    namespace http = boost::beast::http;
    if (ec == http::error::header_limit)
      return error_response(http_status::request_header_fields_too_large,
                            "The request's headers are larger than the gateway accepts.", "invalid_request_error",
                            "request_header_fields_too_large");
    if (ec.category() != boost::system::error_code(http::error::end_of_stream).category() ||
        ec == http::error::end_of_stream || ec == http::error::partial_message)
      return std::nullopt;
    if (ec == http::error::bad_version) return version_not_supported();  // "HTTP/2.0", say
    return bad_request("The request is not valid HTTP/1.1: " + ec.message() + ".");
  }

  static http_response bad_request(const std::string& message, http_status status = http_status::bad_request) {
    return error_response(status, message, "invalid_request_error", "bad_request");
  }
  static http_response version_not_supported() {
    return bad_request("The gateway speaks HTTP/1.0 and HTTP/1.1.", http_status::http_version_not_supported);
  }

  // The answer RFC 9112 asks for a request whose framing or version the
  // gateway does not take, judged on its headers.
  static std::optional<http_response> framing_refusal(const http_request& request) {
    namespace http = boost::beast::http;
    if (request.version() != 11 && request.version() != 10) return version_not_supported();
    if (request.version() == 11 && request.count(http::field::host) != 1)
      return bad_request("An HTTP/1.1 request carries exactly one Host header (RFC 9112 section 3.2).");
    if (request.count(http::field::transfer_encoding) > 0) {
      if (request.count(http::field::content_length) > 0)
        return bad_request("A request carries Transfer-Encoding or Content-Length, not both (RFC 9112 section 6.3).");
      // Every coding in every Transfer-Encoding line: chunked alone is taken.
      std::size_t codings = 0;
      bool chunked_only = true;
      const auto [first, last] = request.equal_range(http::field::transfer_encoding);
      for (auto field = first; field != last; ++field) {
        for (const auto coding : http::token_list(field->value())) {
          ++codings;
          chunked_only = chunked_only && boost::beast::iequals(coding, "chunked");
        }
      }
      if (codings != 1 || !chunked_only)
        return bad_request("The gateway takes \"Transfer-Encoding: chunked\" alone (RFC 9112 section 6.3).");
    }
    if (request.count(http::field::expect) > 0 && !continue_expected(request))
      return bad_request("The gateway meets no expectation but 100-continue.", http_status::expectation_failed);
    return std::nullopt;
  }

  http_response too_large(const http_request& header) const {
    return routes_.error_for(header, http_status::payload_too_large, options_.too_large);
  }

  static bool continue_expected(const http_request& request) {
    return request.count(boost::beast::http::field::expect) == 1 &&
           boost::beast::iequals(request[boost::beast::http::field::expect], "100-continue");
  }

  // Writes `response` to a request that is not served (its headers were
  // enough to refuse it, or its body is too large), then closes the way
  // nginx does: what the client still sends is read and dropped first.
  boost::asio::awaitable<void> refuse(http_response response, const http_request& request) {
    namespace http = boost::beast::http;
    const auto started = clock::now();
    response.keep_alive(false);
    response.prepare_payload();
    auto [failed, written] =
        co_await http::async_write(stream_, response, boost::asio::as_tuple(boost::asio::use_awaitable));
    observe({.method = request.method_string(), .path = path_of(request), .status = response.result_int(),
             .tenant = routes_.keys().tenant_of(request), .aborted = !!failed},
            started);
    if (!failed) co_await lingering_close(boost::beast::get_lowest_layer(stream_), options_.linger);
  }


  // Writes what the socket takes now, without waiting: a response most
  // often goes out whole in this one send, with no asynchronous operation
  // to start, complete and resume from. Returns the bytes written; the
  // caller awaits the rest. Throws boost::system::system_error when the
  // connection failed (as the awaited write would).
  std::size_t send_now(std::string_view bytes) {
    const int socket = boost::beast::get_lowest_layer(stream_).socket().native_handle();
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const auto n = ::send(socket, bytes.data() + sent, bytes.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n >= 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      throw boost::system::system_error(boost::system::error_code(errno, boost::system::system_category()),
                                        "send");
    }
    return sent;
  }

  // The read timeouts of a plain TCP connection, on one timer per session,
  // re-armed only when it fires early (the deadline moved on since it was
  // set), so a busy connection arms and cancels no timer per request. A
  // header read with no byte of its request yet may wait until idle_until_;
  // the timer looks every quarter of header_timeout for the first bytes (in
  // buffer_, where an incomplete header stays), and from then the headers
  // have header_timeout. A body read has body_timeout.
  void watch(read_phase phase) {
    const auto now = clock::now();
    if (phase == read_phase::header && buffer_.size() == 0) {
      idle_until_ = now + options_.idle_timeout;
      read_deadline_ = std::min(idle_until_, now + options_.header_timeout / 4);
    } else {
      idle_until_ = clock::time_point::min();
      read_deadline_ = now + (phase == read_phase::header ? options_.header_timeout : options_.body_timeout);
    }
    if (watching_) return;
    watching_ = true;
    watchdog_.expires_at(read_deadline_);
    watchdog_.async_wait([self = this->shared_from_this()](const boost::system::error_code& ec) { self->on_watchdog(ec); });
  }
  void on_watchdog(const boost::system::error_code& ec) {
    watching_ = false;
    if (ec || read_deadline_ == clock::time_point::max()) return;  // cancelled, or answering: the next read re-arms
    const auto now = clock::now();
    if (now >= read_deadline_ && idle_until_ != clock::time_point::min()) {
      if (buffer_.size() > 0) {  // the first bytes came: the headers' own time starts
        idle_until_ = clock::time_point::min();
        read_deadline_ = now + options_.header_timeout;
      } else if (now < idle_until_) {
        read_deadline_ = std::min(idle_until_, now + options_.header_timeout / 4);
      }
    }
    if (now >= read_deadline_) {
      boost::system::error_code ignored;
      boost::beast::get_lowest_layer(stream_).socket().close(ignored);  // the read ends with an error: the session ends
      return;
    }
    watching_ = true;
    watchdog_.expires_at(read_deadline_);
    watchdog_.async_wait([self = this->shared_from_this()](const boost::system::error_code& e) { self->on_watchdog(e); });
  }
  static constexpr std::size_t max_kept_wire_bytes = 64 * 1024;
  static constexpr unsigned client_closed_request = 499;

  void observe(served_request served, clock::time_point started) const {
    if (!options_.on_served) return;
    served.latency = clock::now() - started;
    options_.on_served(served);
  }

  Stream stream_;
  const dispatch_table& routes_;
  const session_options& options_;
  const std::atomic<bool>& stopping_;
  std::shared_ptr<request_deadline> deadline_;
  bool busy_ = false;  // while a request is being answered
  bool streamed_ = false;  // whether the request being answered started a response of its own
  unsigned streamed_status_ = 0;  // the status it started with
  std::string wire_;   // the bytes of the response being written; its capacity is kept for the next
  boost::asio::steady_timer watchdog_;  // the idle timeout (plain TCP)
  clock::time_point read_deadline_ = clock::time_point::max();  // max: not reading a request
  clock::time_point idle_until_ = clock::time_point::min();     // min: the request's first bytes are in
  boost::beast::flat_buffer buffer_;  // what was read of the connection and not yet parsed
  bool watching_ = false;  // whether the watchdog waits
};

}  // namespace llmgate::inline v0
