// append_response_bytes: a whole HTTP/1.1 response (status line, fields,
// body) as the bytes one write sends. The gateway writes every whole
// response this way into a buffer its connection keeps: Beast's serializer
// walks a view over the fields and the body piece by piece
// (buffers_cat_view), a visible share of a cached answer's processor time
// in the gateway benchmark's profile (scripts/bench gateway).
#pragma once

#include <charconv>     // std::to_chars
#include <string>       // std::string

#include <boost/beast/http/message.hpp>      // boost::beast::http::response
#include <boost/beast/http/string_body.hpp>  // boost::beast::http::string_body

namespace llmgate::inline v0 {

/// Appends the status line and fields of `header` to `out` as they go on
/// the wire, with the blank line that ends them.
template <class Fields>
void append_header_bytes(const boost::beast::http::header<false, Fields>& header, std::string& out) {
  char status[4];
  const auto end = std::to_chars(status, status + sizeof status, header.result_int()).ptr;
  out.append(header.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  out.append(status, end);
  out.push_back(' ');
  out.append(header.reason());
  out.append("\r\n");
  for (const auto& field : header) {
    out.append(field.name_string());
    out.append(": ");
    out.append(field.value());
    out.append("\r\n");
  }
  out.append("\r\n");
}

/// Appends `response` to `out` as it goes on the wire. Content-Length and
/// Connection are whatever the fields say: call prepare_payload() and
/// keep_alive() first.
inline void append_response_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response,
                                  std::string& out) {
  append_header_bytes(response.base(), out);
  out.append(response.body());
}

}  // namespace llmgate::inline v0
