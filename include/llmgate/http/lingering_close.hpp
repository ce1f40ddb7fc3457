// lingering_close: nginx's lingering close, for a server that answered a
// request before reading all of it (a 413 for a body over the limit). The
// answer is followed by the server's FIN, then what the client still sends
// is read and thrown away until it stops, pauses too long, or has sent too
// much. Closing with its bytes unread would reset the connection, and a
// reset can destroy the answer in the client's receive buffer before the
// client reads it. The gateway's sessions and the evaluation kit's rating
// page both close this way.
#pragma once

#include <algorithm>  // std::min
#include <chrono>     // std::chrono::steady_clock, std::chrono::seconds
#include <cstdint>    // std::uint64_t
#include <vector>     // std::vector

#include <boost/asio/as_tuple.hpp>       // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/buffer.hpp>         // boost::asio::buffer
#include <boost/asio/ip/tcp.hpp>         // boost::asio::ip::tcp::socket::shutdown_send
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable
#include <boost/system/error_code.hpp>   // boost::system::error_code

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// How long in all, how long between two reads, and how many bytes the
/// rest of a request is read and discarded before the close.
struct linger_limits {
  std::chrono::steady_clock::duration time = std::chrono::seconds(5);
  std::chrono::steady_clock::duration pause = std::chrono::seconds(2);
  std::uint64_t bytes = std::uint64_t{64} << 20;
};

/// Shuts the sending side of `stream` (a boost::beast::tcp_stream, or the
/// lowest layer of one), then discards what the client sends within
/// `limits`. The caller closes the stream afterwards.
template <class TcpStream>
boost::asio::awaitable<void> lingering_close(TcpStream& stream, linger_limits limits) {
  using clock = std::chrono::steady_clock;
  boost::system::error_code ignored;
  stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  const auto until = clock::now() + limits.time;
  std::vector<char> discard(64 * 1024);
  for (std::uint64_t discarded = 0; discarded < limits.bytes;) {
    const auto now = clock::now();
    if (now >= until) break;
    stream.expires_after(std::min<clock::duration>(until - now, limits.pause));
    auto [ec, bytes] = co_await stream.async_read_some(boost::asio::buffer(discard),
                                                       boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec) break;  // the client closed (or reset), or paused too long
    discarded += bytes;
  }
}

}  // namespace llmgate::inline v0
