// Reading HTTP/1.1 messages off a socket, for the benchmarks' own load
// generators and servers (gateway_bench.cpp, shared_bench.cpp): no parser
// of Beast in the timed loop, only what a Content-Length message needs.
#pragma once

#include <cctype>       // std::tolower
#include <cstddef>      // std::size_t
#include <cstdlib>      // std::strtoull
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>     // boost::asio::awaitable
#include <boost/asio/buffer.hpp>        // boost::asio::buffer
#include <boost/asio/ip/tcp.hpp>        // boost::asio::ip::tcp
#include <boost/asio/use_awaitable.hpp> // boost::asio::use_awaitable

namespace llmgate_bench {

// What a connection has read and not yet consumed, and the buffer reads
// go into (kept, so that a read does not clear 16 KiB of it first).
struct read_buffer {
  std::string in;
  std::vector<char> chunk = std::vector<char>(16 * 1024);
};

// Reads more bytes from `socket` onto the end of `buffer.in`.
inline boost::asio::awaitable<void> read_more(boost::asio::ip::tcp::socket& socket, read_buffer& buffer) {
  const std::size_t n =
      co_await socket.async_read_some(boost::asio::buffer(buffer.chunk), boost::asio::use_awaitable);
  buffer.in.append(buffer.chunk.data(), n);
}

// Reads until `buffer.in` (what was read before, then more from `socket`)
// starts with a whole HTTP/1.1 message with a Content-Length body (or
// none); returns that message's length. Throws on a closed connection.
inline boost::asio::awaitable<std::size_t> whole_message(boost::asio::ip::tcp::socket& socket, read_buffer& buffer) {
  std::string& in = buffer.in;
  std::size_t head;
  while ((head = in.find("\r\n\r\n")) == std::string::npos) co_await read_more(socket, buffer);
  std::size_t length = 0;
  for (std::size_t line = in.find("\r\n"); line < head; line = in.find("\r\n", line + 2)) {
    constexpr std::string_view name = "content-length:";
    if (head - line - 2 < name.size()) continue;
    bool same = true;
    for (std::size_t k = 0; k < name.size() && same; ++k)
      same = std::tolower(static_cast<unsigned char>(in[line + 2 + k])) == name[k];
    if (same) length = std::strtoull(in.c_str() + line + 2 + name.size(), nullptr, 10);
  }
  const std::size_t total = head + 4 + length;
  while (in.size() < total) co_await read_more(socket, buffer);
  co_return total;
}

}  // namespace llmgate_bench
