// append_response_bytes: a whole HTTP/1.1 response (status line, fields,
// body) as the bytes one write sends. The gateway writes every whole
// response this way into a buffer its connection keeps: Beast's serializer
// walks a view over the fields and the body piece by piece
// (buffers_cat_view), several percent of a cached answer's processor time
// in the gateway benchmark's profile.
#pragma once

#include <charconv>     // std::to_chars
#include <cstdint>      // std::int64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/beast/http/message.hpp>      // boost::beast::http::response
#include <boost/beast/http/string_body.hpp>  // boost::beast::http::string_body

#include "llmgate/backend/chat.hpp"
#include "llmgate/detail/json_appender.hpp"

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

/// Appends the chat.completion body of `response` to `out`: the same
/// members, in the same order, as boost::json::serialize of
/// to_json(response) with id and created replaced by the given ones and
/// usage extended with cost_usd and, when given, saved_usd. Written
/// directly: building the JSON tree and serialising it was 6% of a cached
/// answer's processor time in the gateway benchmark.
inline void append_completion_body(std::string& out, const chat_response& response, std::string_view id,
                                   std::int64_t created, std::optional<double> saved_usd) {
  detail::json_appender json(out);
  json.raw("{\"id\":");
  json.string(id);
  json.raw(",\"object\":\"chat.completion\",\"created\":");
  json.number(created);
  json.raw(",\"model\":");
  json.string(response.model);
  json.raw(",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
  if (response.content.empty() && !response.tool_calls.empty()) json.raw("null");
  else json.string(response.content);
  if (!response.tool_calls.empty()) {
    json.raw(",\"tool_calls\":");
    json.value(response.tool_calls);
  }
  json.raw("},\"finish_reason\":");
  if (response.finish_reason.empty()) json.raw("null");
  else json.string(response.finish_reason);
  const token_usage& usage = response.usage;
  json.raw("}],\"usage\":{\"prompt_tokens\":");
  json.number(usage.prompt_tokens);
  json.raw(",\"completion_tokens\":");
  json.number(usage.completion_tokens);
  json.raw(",\"total_tokens\":");
  json.number(usage.prompt_tokens + usage.completion_tokens);
  json.raw(",\"prompt_tokens_details\":{\"cached_tokens\":");
  json.number(usage.cached_prompt_tokens);
  if (usage.cache_write_tokens) {
    json.raw(",\"cache_write_tokens\":");
    json.number(usage.cache_write_tokens);
  }
  json.raw("},\"cost_usd\":");
  json.number(response.cost_usd);
  if (saved_usd) {
    json.raw(",\"saved_usd\":");
    json.number(*saved_usd);
  }
  json.raw("}");
  if (response.cost_usd > 0) {
    json.raw(",\"cost\":");
    json.number(response.cost_usd);
  }
  json.raw("}");
}

}  // namespace llmgate::inline v0
