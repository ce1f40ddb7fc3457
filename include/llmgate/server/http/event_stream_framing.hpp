// event_stream_framing: what the gateway's server-sent-event streams
// share, whatever their events (OpenAI's chat completions' in sse_stream.hpp,
// named events in named_event_stream.hpp): the head (200, text/event-stream, no-cache,
// chunked transfer) and the body's chunks, framed as Beast's make_chunk
// and make_chunk_last frame them: "<hex size>\r\n<data>\r\n" and "0\r\n\r\n".
#pragma once

#include <cstddef>           // std::size_t
#include <cstdio>            // std::snprintf
#include <initializer_list>  // std::initializer_list
#include <string>            // std::string
#include <string_view>       // std::string_view

#include <boost/beast/http/empty_body.hpp>  // boost::beast::http::empty_body
#include <boost/beast/http/message.hpp>     // boost::beast::http::response

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

/// The head of an event stream, set when the stream starts (most chat
/// requests never stream, so not before).
inline void set_event_stream_head(boost::beast::http::response<boost::beast::http::empty_body>& head, bool keep_alive) {
  namespace http = boost::beast::http;
  head.result(http::status::ok);
  head.version(11);
  head.set(http::field::content_type, "text/event-stream");
  head.set(http::field::cache_control, "no-cache");
  head.keep_alive(keep_alive);
  head.chunked(true);
}

/// One chunk of the body holding `pieces` one after the other, appended to `out`.
inline void append_http_chunk(std::string& out, std::initializer_list<std::string_view> pieces) {
  std::size_t size = 0;
  for (const std::string_view piece : pieces) size += piece.size();
  char hex[20];
  const int digits = std::snprintf(hex, sizeof hex, "%zx", size);
  out.append(hex, static_cast<std::size_t>(digits)).append("\r\n");
  for (const std::string_view piece : pieces) out.append(piece);
  out.append("\r\n");
}

/// The chunk that ends the body.
inline constexpr std::string_view last_http_chunk = "0\r\n\r\n";

}  // namespace llmgate::inline v0::detail
