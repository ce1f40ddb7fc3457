// http_client's coroutines (backend/http_client.hpp describes the client).
// Included by http_client.hpp itself, unless the program compiles them once
// with LLMGATE_SEPARATE_COMPILATION (llmgate/src.hpp).
#pragma once

#include "llmgate/backend/http_client.hpp"

namespace llmgate::inline v0 {

LLMGATE_DECL net::awaitable<http_response> http_client::send_streaming(const base_url& url, http_request request,
                                                                    body_handler on_body) {
  co_return co_await exchange(url, std::move(request), &on_body);
}

LLMGATE_DECL net::awaitable<http_response> http_client::exchange(const base_url& url, http_request request,
                                                               const body_handler* on_body) {
  std::string host = url.host_header();
  request.set(http::field::host, host);
  if (request.find(http::field::user_agent) == request.end())
    request.set(http::field::user_agent, "llmgate");
  request.keep_alive(true);
  request.prepare_payload();
  const std::string origin = (url.tls ? "https://" : "http://") + std::move(host);  // url.origin()
  for (bool fresh = false;; fresh = true) {
    std::unique_ptr<connection> link = fresh ? nullptr : take(origin);
    const bool was_reused = link != nullptr;
    const clock::time_point idle_since = was_reused ? link->idle_since : clock::time_point();
    std::string_view phase = "connecting";
    try {
      if (!link) link = co_await connect(url);
      // Not std::visit: a lambda's type in the frame of a function that is
      // not inline (LLMGATE_SEPARATE_COMPILATION) draws GCC's
      // -Wsubobject-linkage. Two statements, not `?:`, for GCC 12
      // (docs/development.md).
      exchanged done;
      if (auto* tls = std::get_if<tls_stream>(&link->stream))
        done = co_await exchange_on(*tls, *link, request, on_body, phase);
      else
        done = co_await exchange_on(std::get<beast::tcp_stream>(link->stream), *link, request, on_body, phase);
      if (done.keep_alive && link->buffer.size() == 0) give_back(origin, std::move(link), done.response);
      co_return std::move(done.response);
    } catch (const boost::system::system_error& failure) {
      const auto code = failure.code();
      if (code == net::error::operation_aborted) throw;  // cancelled by the caller
      // end_of_stream: closed before the first byte of a response; a reset
      // or broken pipe while sending, or a reset while waiting for the
      // response (the request reached a socket the server had closed, whose
      // kernel answered with a reset): the server had closed its end.
      // exchange_on moves past `awaiting` once a byte of the response came.
      const bool reset = code == net::error::connection_reset || code == net::error::broken_pipe;
      const bool stale = was_reused && (phase == sending || phase == awaiting) &&
                         (code == http::error::end_of_stream || reset);
      if (!stale) throw error(classify(code), describe(request, url, phase, code));
      // Those that waited as long are as likely closed: a new connection.
      drop_idle(origin, idle_since);
      ++stale_resends_;
    }
  }
}

template <class Stream>
net::awaitable<http_client::exchanged> http_client::exchange_on(Stream& stream, connection& link,
                                                               const http_request& request,
                                                               const body_handler* on_body, std::string_view& phase) {
  auto& tcp = beast::get_lowest_layer(stream);
  phase = sending;
  if (request.chunked()) {  // Beast writes the chunks
    tcp.expires_after(options_.first_byte_timeout);
    co_await http::async_write(stream, request, net::use_awaitable);
  } else {
    // The bytes Beast's serializer writes for a message that is not
    // chunked: the head, then the body as it is.
    render_head(request, link.head);
    const std::array<net::const_buffer, 2> wire{net::buffer(link.head), net::buffer(request.body())};
    std::size_t written = 0;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      // A request usually fits in the socket's send buffer: on plain TCP
      // it is written now (the socket is non-blocking), with no timer and
      // no trip through the scheduler. What does not fit goes on below,
      // asynchronously, under the first-byte timeout.
      boost::system::error_code code;
      written = tcp.socket().write_some(wire, code);
      if (code && code != net::error::would_block && code != net::error::try_again)
        throw boost::system::system_error(code);
    }
    tcp.expires_after(options_.first_byte_timeout);
    if (written < link.head.size() + request.body().size()) {
      beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(wire);
      rest.consume(written);
      co_await net::async_write(stream, rest, net::use_awaitable);
    }
  }

  phase = awaiting;
  http::response_parser<http::empty_body> head;
  head.header_limit(64 * 1024);
  head.body_limit(std::numeric_limits<std::uint64_t>::max());
  const auto [header_code, header_bytes] =
      co_await http::async_read_header(stream, link.buffer, head, net::as_tuple(net::use_awaitable));
  if (header_code) {
    if (head.got_some()) phase = "reading the response header";  // the server did answer
    throw boost::system::system_error(header_code);
  }

  phase = "reading the response body";
  const unsigned status = head.get().result_int();
  if (on_body && status >= 200 && status < 300) co_return co_await stream_body(stream, link, head, *on_body);
  http::response_parser<http::string_body> parser(std::move(head));
  // The header was read without a limit (a stream may be long); a
  // Content-Length beyond the limit is refused here, a chunked body while read.
  parser.body_limit(options_.max_body_bytes);
  if (parser.content_length().value_or(0) > options_.max_body_bytes)
    throw boost::system::system_error(http::error::body_limit);
  // A small answer usually came whole with its header: parse it from the
  // buffer at once rather than through another asynchronous read.
  parser.eager(true);
  boost::system::error_code code;
  link.buffer.consume(parser.put(link.buffer.data(), code));
  if (code && code != http::error::need_more) throw boost::system::system_error(code);
  while (!parser.is_done()) {
    tcp.expires_after(options_.idle_timeout);
    co_await http::async_read_some(stream, link.buffer, parser, net::use_awaitable);
  }
  tcp.expires_never();
  const bool keep_alive = parser.keep_alive();
  co_return exchanged{parser.release(), keep_alive};
}

template <class Stream>
net::awaitable<http_client::exchanged> http_client::stream_body(Stream& stream, connection& link,
                                                               http::response_parser<http::empty_body>& head,
                                                               const body_handler& on_body) {
  auto& tcp = beast::get_lowest_layer(stream);
  http::response_parser<http::buffer_body> parser(std::move(head));  // bounded by the consumer
  char piece[16 * 1024];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof piece;
    tcp.expires_after(options_.idle_timeout);
    auto [code, bytes] = co_await http::async_read_some(stream, link.buffer, parser,
                                                        net::as_tuple(net::use_awaitable));
    if (code && code != http::error::need_buffer) throw boost::system::system_error(code);
    const std::size_t received = sizeof piece - parser.get().body().size;
    if (received) co_await on_body(std::string_view(piece, received));
  }
  tcp.expires_never();
  http_response response;
  response.base() = parser.get().base();
  co_return exchanged{std::move(response), parser.keep_alive()};
}

LLMGATE_DECL net::awaitable<std::unique_ptr<http_client::connection>> http_client::connect(const base_url& url) {
  net::ip::tcp::resolver resolver(executor_);
  const auto endpoints = co_await resolver.async_resolve(url.host, url.port, net::use_awaitable);
  beast::tcp_stream tcp(executor_);
  tcp.expires_after(options_.connect_timeout);
  co_await tcp.async_connect(endpoints, net::use_awaitable);
  tcp.socket().set_option(net::ip::tcp::no_delay(true));  // requests are small; send at once
  tcp.socket().non_blocking(true);  // exchange_on writes a request at once where it can
  ++connections_opened_;
  if (!url.tls) {
    tcp.expires_never();
    co_return std::make_unique<connection>(std::move(tcp));
  }
  auto link = std::make_unique<connection>(std::move(tcp), tls_context_);
  auto& stream = std::get<tls_stream>(link->stream);
  // Server Name Indication: hosts sharing an address pick their certificate by name.
  SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str());
  if (options_.verify_peer) stream.set_verify_callback(net::ssl::host_name_verification(url.host));
  co_await stream.async_handshake(net::ssl::stream_base::client, net::use_awaitable);
  beast::get_lowest_layer(stream).expires_never();
  co_return link;
}

}  // namespace llmgate::inline v0
