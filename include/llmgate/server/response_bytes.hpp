// append_response_bytes: a whole HTTP/1.1 response (status line, fields,
// body) as the bytes one write sends. The gateway writes every whole
// response this way into a buffer its connection keeps: Beast's serializer
// walks a view over the fields and the body piece by piece
// (buffers_cat_view), several percent of a cached answer's processor time
// in the gateway benchmark's profile.
#pragma once

#include <charconv>     // std::to_chars
#include <string>       // std::string

#include <boost/beast/http/message.hpp>      // boost::beast::http::response
#include <boost/beast/http/string_body.hpp>  // boost::beast::http::string_body

#include "llmgate/chat/openai_wire.hpp"  // append_completion_body, which the gateway writes bodies with

namespace llmgate::inline v0 {

/// Appends `response` to `out` as it goes on the wire. Content-Length and
/// Connection are whatever the fields say: call prepare_payload() and
/// keep_alive() first.
inline void append_response_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response,
                                  std::string& out) {
  char status[4];
  const auto end = std::to_chars(status, status + sizeof status, response.result_int()).ptr;
  out.append(response.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  out.append(status, end);
  out.push_back(' ');
  out.append(response.reason());
  out.append("\r\n");
  for (const auto& field : response) {
    out.append(field.name_string());
    out.append(": ");
    out.append(field.value());
    out.append("\r\n");
  }
  out.append("\r\n");
  out.append(response.body());
}

}  // namespace llmgate::inline v0
