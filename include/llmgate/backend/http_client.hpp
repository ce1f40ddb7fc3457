// http_client: the HTTP/1.1 client every adapter speaks through, on
// Boost.Beast and Asio C++20 coroutines.
//
// - Keep-alive: after a complete response that allows it, the connection
//   goes back to a pool per origin (scheme, host, port) and the next request
//   to that origin reuses it (the one returned last first). A pooled
//   connection lives a little less than the server's "Keep-Alive: timeout=N"
//   says, else options.keep_alive_timeout, which is shorter than the common
//   servers' own idle timeouts; one the server already closed is dropped when
//   taken. A stale connection never costs a request: when a request on a
//   reused connection fails before any byte of its response (end of stream,
//   reset, broken pipe: the server closed it as the request went out), the
//   pool's connections idle as long or longer are dropped too, and the
//   request is sent once more on a new connection. That resend is not a
//   retry in retry.hpp's sense: the request never reached a live server.
// - TLS through OpenSSL, verifying the server's certificate chain and host
//   name by default (the system's trust store, or options.ca_file).
// - Timeouts: connect (TCP connect and TLS handshake), first byte (from
//   sending the request to the end of the response header) and idle (the
//   longest wait for the next piece of the body). Name resolution has the
//   system resolver's own timeouts.
// - Cancellation: Asio's per-operation cancellation of the awaiting
//   coroutine cancels the exchange (the connection is then dropped); it
//   surfaces as boost::system::system_error(operation_aborted), untouched.
// - Chunked and Content-Length bodies alike; a body arriving in pieces can
//   be handed to the caller piece by piece (send_streaming) for SSE/NDJSON.
// - No proxies: requests go straight to the origin.
//
// Failures throw llmgate::error with errc::upstream_unreachable (resolve,
// connect, TLS, connection lost), upstream_timeout, or
// upstream_protocol_error (malformed HTTP, a body over max_body_bytes);
// the message names the request and what it was doing.
//
// Thread safety: one client may serve coroutines on many threads; the pool
// has a lock, each exchange owns its connection.
#pragma once

#include <array>        // std::array
#include <atomic>       // std::atomic
#include <cerrno>       // errno, EAGAIN
#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <functional>   // std::function
#include <limits>       // std::numeric_limits
#include <memory>       // std::unique_ptr, std::make_unique
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_same_v
#include <unordered_map>  // origin -> idle connections
#include <utility>      // std::move
#include <variant>      // std::variant, std::visit
#include <vector>       // std::vector, std::erase_if

#include <boost/asio/as_tuple.hpp>       // net::as_tuple: errors as values where some are expected
#include <boost/asio/awaitable.hpp>      // net::awaitable
#include <boost/asio/ip/tcp.hpp>         // tcp::resolver, tcp::no_delay
#include <boost/asio/ssl/context.hpp>    // ssl::context
#include <boost/asio/ssl/host_name_verification.hpp>  // certificate host name check
#include <boost/asio/this_coro.hpp>      // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>  // net::use_awaitable
#include <boost/asio/write.hpp>          // net::async_write
#include <boost/beast/core/buffers_suffix.hpp>  // beast::buffers_suffix: what a write left
#include <boost/beast/core/flat_buffer.hpp>  // beast::flat_buffer
#include <boost/beast/core/tcp_stream.hpp>   // beast::tcp_stream: a socket with timeouts
#include <boost/beast/http.hpp>          // http::request, response, parser, async_read/write
#include <boost/beast/ssl/ssl_stream.hpp>    // beast::ssl_stream
#include <boost/system/system_error.hpp> // boost::system::system_error

#include <sys/socket.h>  // recv, MSG_PEEK, MSG_DONTWAIT: still_open's peek

#include "llmgate/backend/detail/keep_alive.hpp"  // parse_keep_alive, pooled_lifetime
#include "llmgate/backend/url.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using http_request = http::request<http::string_body>;
using http_response = http::response<http::string_body>;

/// Receives each piece of a streamed response body as it arrives.
using body_handler = std::function<net::awaitable<void>(std::string_view)>;

struct http_client_options {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds first_byte_timeout{120'000};  ///< models may think long before answering
  std::chrono::milliseconds idle_timeout{60'000};         ///< between two pieces of a body
  std::size_t max_body_bytes = std::size_t{64} << 20;     ///< for bodies read whole (not streamed)
  std::size_t max_idle_connections_per_origin = 32;
  /// A pooled connection idle longer than this is closed, not reused,
  /// unless the server's Keep-Alive header named its own timeout. Below the
  /// 5 s after which llama.cpp's server and uvicorn (vLLM) close theirs.
  std::chrono::milliseconds keep_alive_timeout{4'000};
  bool verify_peer = true;                                ///< TLS certificate and host name checks
  std::string ca_file = {};  ///< PEM file of trusted CAs; "" for the system's trust store
};

class http_client {
 public:
  using executor_type = net::any_io_executor;

  /// Connections are made on `executor`, which must outlive the client.
  /// Throws boost::system::system_error when options.ca_file cannot be read.
  explicit http_client(executor_type executor, http_client_options options = {})
      : executor_(std::move(executor)),
        options_(std::move(options)),
        tls_context_(net::ssl::context::tls_client) {
    if (options_.verify_peer) {
      tls_context_.set_verify_mode(net::ssl::verify_peer);
      if (options_.ca_file.empty()) tls_context_.set_default_verify_paths();
      else tls_context_.load_verify_file(options_.ca_file);
    } else {
      tls_context_.set_verify_mode(net::ssl::verify_none);
    }
  }

  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  const http_client_options& options() const noexcept { return options_; }
  const executor_type& get_executor() const noexcept { return executor_; }

  /// Sends `request` to `url`'s origin (the target is the request's) and
  /// reads the whole response, up to options().max_body_bytes.
  net::awaitable<http_response> send(const base_url& url, http_request request) {
    return exchange(url, std::move(request), nullptr);
  }

  /// As send, but a 2xx body goes to `on_body` piece by piece as it arrives
  /// and the returned response has an empty body. Other statuses are read
  /// whole, as send does, for their error objects. An exception from
  /// on_body ends the exchange, drops the connection and propagates.
  net::awaitable<http_response> send_streaming(const base_url& url, http_request request, body_handler on_body);

  /// Connections opened so far (a measure of keep-alive reuse).
  std::uint64_t connections_opened() const noexcept { return connections_opened_.load(); }

  /// Requests sent again on a new connection because the reused one had
  /// been closed by the server as they went out.
  std::uint64_t stale_resends() const noexcept { return stale_resends_.load(); }

  /// Connections waiting in the pool for their next request.
  std::size_t idle_connections() const {
    std::lock_guard lock(mutex_);
    std::size_t count = 0;
    for (const auto& [origin, connections] : idle_) count += connections.size();
    return count;
  }

 private:
  using clock = std::chrono::steady_clock;
  using tls_stream = beast::ssl_stream<beast::tcp_stream>;

  struct connection {
    explicit connection(beast::tcp_stream tcp) : stream(std::move(tcp)) {}
    connection(beast::tcp_stream tcp, net::ssl::context& context)
        : stream(std::in_place_type<tls_stream>, std::move(tcp), context) {}
    std::variant<beast::tcp_stream, tls_stream> stream;
    beast::flat_buffer buffer;  ///< bytes read past a message stay with their connection
    std::string head;           ///< the head of the request being sent, rendered
    clock::time_point idle_since;
    clock::time_point reusable_until;  ///< past this the server may have closed it
  };

  /// What one exchange on a connection gave.
  struct exchanged {
    http_response response;
    bool keep_alive = false;  ///< the connection may carry the next request
  };

  /// What an exchange was doing when it failed: for the error message and
  /// to tell a stale pooled connection from a failed request.
  static constexpr std::string_view sending = "sending the request";
  static constexpr std::string_view awaiting = "waiting for the response";

  // The coroutines, defined in impl/http_client.hpp: they instantiate
  // Beast's reads and writes over both stream types, the heaviest code a
  // user's file compiles, so a program can compile them once
  // (LLMGATE_SEPARATE_COMPILATION, llmgate/src.hpp).
  net::awaitable<http_response> exchange(const base_url& url, http_request request, const body_handler* on_body);
  template <class Stream>
  net::awaitable<exchanged> exchange_on(Stream& stream, connection& link, const http_request& request,
                                        const body_handler* on_body, std::string_view& phase);
  // The body of a 2xx answer to a streaming request, piece by piece to
  // `on_body`. A coroutine of its own: its buffer is not in the frame of
  // every exchange.
  template <class Stream>
  net::awaitable<exchanged> stream_body(Stream& stream, connection& link, http::response_parser<http::empty_body>& head,
                                        const body_handler& on_body);
  net::awaitable<std::unique_ptr<connection>> connect(const base_url& url);

  // The start line and header fields of `request` as Beast writes them.
  static void render_head(const http_request& request, std::string& out) {
    out.clear();
    const auto method = request.method_string();
    const auto target = request.target();
    out.append(method.data(), method.size()).append(1, ' ').append(target.data(), target.size());
    const unsigned version = request.version();
    const char line_end[] = {' ', 'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10), '.',
                             static_cast<char>('0' + version % 10), '\r', '\n'};
    out.append(line_end, sizeof line_end);
    for (const auto& field : request) {
      const auto name = field.name_string();
      const auto value = field.value();
      out.append(name.data(), name.size()).append(": ", 2).append(value.data(), value.size()).append("\r\n", 2);
    }
    out.append("\r\n", 2);
  }

  std::unique_ptr<connection> take(const std::string& origin) {
    std::lock_guard lock(mutex_);
    const auto found = idle_.find(origin);
    if (found == idle_.end()) return nullptr;
    auto& connections = found->second;
    const auto now = clock::now();
    while (!connections.empty()) {
      auto link = std::move(connections.back());
      connections.pop_back();
      if (now < link->reusable_until && still_open(*link)) return link;
    }
    return nullptr;
  }

  // Pools `link` for as long as the server's keep-alive allows.
  void give_back(const std::string& origin, std::unique_ptr<connection> link, const http_response& response) {
    const auto lifetime = detail::pooled_lifetime(
        detail::parse_keep_alive(response[http::field::keep_alive]), options_.keep_alive_timeout);
    if (lifetime <= std::chrono::milliseconds(0)) return;
    link->idle_since = clock::now();
    link->reusable_until = link->idle_since + lifetime;
    std::lock_guard lock(mutex_);
    auto& connections = idle_[origin];
    if (connections.size() < options_.max_idle_connections_per_origin)
      connections.push_back(std::move(link));
  }

  // Drops the pooled connections of `origin` idle since `since` or longer.
  void drop_idle(const std::string& origin, clock::time_point since) {
    std::lock_guard lock(mutex_);
    const auto found = idle_.find(origin);
    if (found == idle_.end()) return;
    std::erase_if(found->second, [&](const std::unique_ptr<connection>& link) { return link->idle_since <= since; });
  }

  // Whether an idle connection's server has not closed it: nothing to read
  // (a peek that would block). End of stream is a close; bytes on an idle
  // connection (a TLS close_notify, say) mean it is not to be trusted either.
  static bool still_open(connection& link) {
    auto& socket = std::visit([](auto& stream) -> net::ip::tcp::socket& {
      return beast::get_lowest_layer(stream).socket();
    }, link.stream);
    // One non-blocking peek: no change of the socket's blocking mode, which
    // Asio would have to set again (two more system calls) for the next
    // asynchronous operation.
    char byte;
    const auto received = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  static errc classify(const boost::system::error_code& code) {
    if (code == beast::error::timeout) return errc::upstream_timeout;
    // Beast's HTTP errors are malformed messages, but for those that say the
    // connection ended early.
    if (code.category() == http::make_error_code(http::error::body_limit).category() &&
        code != http::error::end_of_stream && code != http::error::partial_message)
      return errc::upstream_protocol_error;
    return errc::upstream_unreachable;
  }

  static std::string describe(const http_request& request, const base_url& url,
                              std::string_view phase, const boost::system::error_code& code) {
    std::string text(request.method_string());
    text += ' ';
    text += url.origin();
    text += request.target();
    text += ": ";
    text += phase;
    text += ": ";
    text += code.message();
    return text;
  }

  executor_type executor_;
  http_client_options options_;
  net::ssl::context tls_context_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<connection>>> idle_;
  std::atomic<std::uint64_t> connections_opened_{0};
  std::atomic<std::uint64_t> stale_resends_{0};
};

}  // namespace llmgate::inline v0

#include "llmgate/detail/separate_compilation.hpp"
#ifndef LLMGATE_SEPARATE_COMPILATION
#include "llmgate/backend/impl/http_client.hpp"
#endif
