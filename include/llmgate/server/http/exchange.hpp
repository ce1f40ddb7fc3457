// exchange: what a handler is given for one request, so that it is a
// function of the request that a test can call without a socket:
//
//   request     the parsed HTTP request;
//   tenant      whose key it carries (routes that need a tenant key);
//   out         where a handler that streams its response (SSE) sends
//               its status and fields, then its body's bytes: the
//               connection, or a test's buffer;
//   deadline    the request timeout, which cancels what the handler
//               waits for when it expires;
//   keep_alive  whether the connection stays open after this response
//               (the client asked for it and the gateway is not draining);
//   outcome     what a chat request did (tenant, cache, backend, cost),
//               filled by its handler for the session's observer.
//
// A handler answers with a whole response, which the session writes, or
// with nothing once it wrote (streamed) its own through `out`.
#pragma once

#include <chrono>       // std::chrono::milliseconds
#include <cstdint>      // std::uint64_t
#include <memory>       // std::enable_shared_from_this, std::shared_ptr
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::exchange

#include <boost/asio/any_io_executor.hpp>      // boost::asio::any_io_executor
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/cancellation_signal.hpp>  // boost::asio::cancellation_signal
#include <boost/asio/steady_timer.hpp>         // boost::asio::steady_timer
#include <boost/beast/http/message.hpp>        // boost::beast::http::response_header

#include "llmgate/server/request_outcome.hpp"  // request_outcome
#include "llmgate/server/http/responses.hpp"   // http_request, http_response

namespace llmgate::inline v0 {

/// Where a streamed response goes: its head once, then its body's bytes.
class response_stream {
 public:
  /// Sends the status line and fields; the status is the response's in
  /// the session's record.
  virtual boost::asio::awaitable<void> start(const boost::beast::http::response_header<>& head) = 0;
  /// Writes all of `bytes` of the body (after start()); they must stay
  /// alive until it completes.
  virtual boost::asio::awaitable<void> write(std::string_view bytes) = 0;

 protected:
  ~response_stream() = default;
};

/// A connection's request timeout. While armed, its expiry emits a
/// terminal cancellation on slot(), to which the session binds the
/// coroutine that serves the connection: whatever the handler awaits is
/// cancelled, and the handler ends by throwing. Cheaper than a second
/// coroutine racing a timer. Held by shared_ptr: a late expiry finds it alive.
///
/// One timer wait at a time, re-armed only when it fires before the
/// deadline of the request being answered (a later request's, as the
/// deadline moves on): a connection answering many short requests arms
/// and cancels no timer per request, only reads the clock. Not thread-safe:
/// arm, disarm and the expiry run on the connection's executor.
class request_deadline : public std::enable_shared_from_this<request_deadline> {
  using clock = std::chrono::steady_clock;

 public:
  static std::shared_ptr<request_deadline> make(const boost::asio::any_io_executor& executor) {
    return std::shared_ptr<request_deadline>(new request_deadline(executor));
  }

  boost::asio::cancellation_slot slot() noexcept { return cancel_.slot(); }

  void arm(std::chrono::milliseconds timeout) {
    answering_ = true;
    deadline_ = clock::now() + timeout;
    // A wait that ends after the new deadline (a longer timeout before)
    // is moved; an earlier one re-arms itself when it fires.
    if (!waiting_ || waiting_until_ > deadline_) wait_until(deadline_);
  }

  /// Disarms; true when the deadline passed (the handler was cancelled).
  bool disarm() {
    answering_ = false;
    return std::exchange(timed_out_, false);
  }

  /// Cancels the pending wait, which holds this object (and keeps its
  /// io_context from running out of work): when its connection ends. A
  /// later arm() waits again.
  void stop() {
    answering_ = false;
    waiting_ = false;
    timer_.cancel();
  }

 private:
  explicit request_deadline(const boost::asio::any_io_executor& executor) : timer_(executor) {}

  void wait_until(clock::time_point when) {
    waiting_ = true;
    waiting_until_ = when;
    timer_.expires_at(when);  // cancels a wait that was pending: its handler sees operation_aborted
    timer_.async_wait([self = shared_from_this(), when](const boost::system::error_code& ec) {
      if (ec) return;  // moved (a newer wait is pending) or stopped
      self->expired(when);
    });
  }

  void expired(clock::time_point when) {
    if (when != waiting_until_) return;  // a late completion of a wait since replaced
    waiting_ = false;
    if (!answering_) return;  // nothing to time out; the next arm() waits again
    if (clock::now() < deadline_) {
      wait_until(deadline_);  // armed again since this wait began: wait for its deadline
      return;
    }
    timed_out_ = true;
    cancel_.emit(boost::asio::cancellation_type::terminal);
  }

  boost::asio::steady_timer timer_;
  boost::asio::cancellation_signal cancel_;
  clock::time_point deadline_{};       // of the request being answered
  clock::time_point waiting_until_{};  // when the pending wait ends
  bool waiting_ = false;               // whether a wait is pending
  bool answering_ = false;             // whether a request is being answered
  bool timed_out_ = false;
};

struct exchange {
  const http_request& request;
  response_stream& out;
  request_deadline& deadline;
  bool keep_alive = true;
  const std::string* tenant = nullptr;  ///< set by the dispatch table for routes that need a tenant key
  std::optional<request_outcome> outcome = {};  ///< set by a handler that answers chat requests
};

using handler_result = boost::asio::awaitable<std::optional<http_response>>;

}  // namespace llmgate::inline v0
