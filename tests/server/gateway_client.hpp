// A small blocking HTTP client for the gateway tests: one connection per
// call, the reply's status, headers (names in lower case), body, and the
// data of its server-sent events.
#pragma once

#include <algorithm>    // std::transform
#include <cctype>       // std::tolower
#include <map>          // std::map
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

namespace llmgate::test {

struct http_reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;
  std::string body;

  boost::json::value json() const { return boost::json::parse(body); }
  std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? std::string() : found->second;
  }
  /// The data of each SSE event, in order ("[DONE]" included).
  std::vector<std::string> events() const {
    std::vector<std::string> data;
    for (std::size_t at = 0; (at = body.find("data: ", at)) != std::string::npos;) {
      const auto end = body.find("\n\n", at);
      data.push_back(body.substr(at + 6, end - at - 6));
      at = end;
    }
    return data;
  }
  /// The streamed text: every content delta joined.
  std::string streamed_text() const {
    std::string text;
    for (const auto& event : events()) {
      if (event == "[DONE]") continue;
      const auto value = boost::json::parse(event);
      const auto& choices = value.at("choices").as_array();
      if (choices.empty()) continue;
      if (const auto* content = choices[0].at("delta").as_object().if_contains("content"))
        text += content->as_string();
    }
    return text;
  }
};

inline http_reply call(unsigned short port, boost::beast::http::verb method, std::string_view target,
                       std::string_view body = {}, std::string_view key = {},
                       const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!key.empty()) request.set(http::field::authorization, "Bearer " + std::string(key));
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.prepare_payload();
  request.keep_alive(false);
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser);
  http_reply reply;
  reply.status = parser.get().result_int();
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    reply.headers[name] = std::string(field.value());
  }
  reply.body = parser.get().body();
  return reply;
}

inline http_reply post(unsigned short port, std::string_view target, std::string_view body, std::string_view key) {
  return call(port, boost::beast::http::verb::post, target, body, key);
}

inline http_reply get(unsigned short port, std::string_view target, std::string_view key = {}) {
  return call(port, boost::beast::http::verb::get, target, {}, key);
}

/// A chat body asking `question` of `model`.
inline std::string chat_body(std::string_view question, bool stream = false, std::string_view model = "test-model") {
  return boost::json::serialize(boost::json::object{
      {"model", model},
      {"stream", stream},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", question}}}}});
}

}  // namespace llmgate::test
