// libFuzzer target: whatever bytes a client sends, the gateway's request
// parsing neither crashes nor hangs. The bytes are read as an HTTP/1.1
// request the way the gateway reads one (Beast's parser, a body limit);
// a body is read as JSON and then as a chat request, an Anthropic
// Messages request, a Responses API request, an embeddings request and a
// configuration, and a chat request is taken apart the way the cache stages take it (scope,
// conversation, exact-cache text).
// Errors are expected; only crashes, leaks and sanitizer reports fail.
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint8_t
#include <exception>  // std::exception

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include "llmgate/wire/anthropic_wire.hpp"  // the Anthropic Messages form
#include "llmgate/wire/openai_responses_wire.hpp"  // the Responses API's form
#include "llmgate/wire/openai_wire.hpp"     // the OpenAI wire form
#include "llmgate/backend/embedding.hpp"
#include "llmgate/pipeline/request_scope.hpp"
#include "llmgate/server/gateway_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  const std::string_view body =
      parser.is_header_done() ? std::string_view(parser.get().body())
                              : std::string_view(reinterpret_cast<const char*>(data), size);

  boost::system::error_code json_error;
  const boost::json::value json = boost::json::parse(body, json_error);
  if (json_error) return 0;
  for (const auto parse : {+[](const boost::json::value& v) { return llmgate::parse_chat_request(v); },
                           +[](const boost::json::value& v) { return llmgate::parse_messages_request(v); },
                           +[](const boost::json::value& v) { return llmgate::parse_responses_request(v); }}) {
    try {
      const llmgate::chat_request request = parse(json);
      (void)llmgate::scope_of(request, "tenant");
      (void)llmgate::conversation_of(request);
      (void)llmgate::exact_text_of(request);
    } catch (const llmgate::error&) {
    }
  }
  try {
    (void)llmgate::parse_embedding_request(json);
  } catch (const llmgate::error&) {
  }
  try {
    (void)llmgate::gateway_config::from_json(json);
  } catch (const llmgate::error&) {
  }
  return 0;
}
