// A gateway with a stage of its own: e-mail addresses are redacted from
// every message before anything is cached or sent upstream. The stage is
// a template argument of basic_gateway, so it runs first in every
// worker's pipeline, before the router, the caches and the backends; the
// listener, sessions and handlers are the gateway's own.
//
//   custom_gateway --config FILE     serve FILE's configuration until SIGINT or SIGTERM
//   custom_gateway [BASE_URL]        a demonstration: a gateway in front of the
//                                    OpenAI-compatible BASE_URL (default
//                                    $LLMGATE_UPSTREAM; none: the offline demo
//                                    backend) asked twice, with two addresses
//
// In the demonstration the second request differs from the first only in
// its address; redacted, they are the same request, and the exact cache
// answers it.
#include <cctype>       // std::isalnum
#include <cstdio>       // std::printf, std::fprintf
#include <cstdlib>      // std::getenv
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/connect.hpp>  // the demonstration's client
#include <boost/beast/core.hpp>    // tcp_stream, flat_buffer
#include <boost/beast/http.hpp>    // request, response, read, write
#include <boost/json.hpp>          // the demonstration's bodies

#include <llmgate/server/gateway.hpp>

namespace {

bool local_part_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}
bool domain_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'; }

// `text` with every name@domain.tld replaced by "[email]".
std::string redact_emails(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  for (std::size_t at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    std::size_t begin = at, end = at + 1;
    while (begin > copied && local_part_char(text[begin - 1])) --begin;
    while (end < text.size() && domain_char(text[end])) ++end;
    while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == '-')) --end;  // a sentence's full stop
    const std::string_view domain = text.substr(at + 1, end - at - 1);
    if (begin == at || domain.find('.') == std::string_view::npos) continue;
    out.append(text.substr(copied, begin - copied)).append("[email]");
    copied = end;
    at = end - 1;
  }
  return out.append(text.substr(copied));
}

// Every string inside a JSON value, redacted in place.
void redact_strings(boost::json::value& value) {
  if (auto* text = value.if_string()) *text = redact_emails(*text);
  else if (auto* array = value.if_array())
    for (auto& element : *array) redact_strings(element);
  else if (auto* object = value.if_object())
    for (auto& member : *object) redact_strings(member.value());
}

// JSON text (a content's parts, a tool call) with its strings redacted:
// read and written again, so that no escape sequence is cut in two.
std::string redacted_json(const std::string& json) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(json, ec);
  if (ec) return json;  // llmgate keeps only JSON it read; nothing else can be here
  redact_strings(value);
  return boost::json::serialize(value);
}

// The stage: a Stage (llmgate/pipeline/stage.hpp) that changes the
// request and passes it on.
struct redact_emails_stage {
  template <class Next>
  boost::asio::awaitable<llmgate::chat_response> handle(llmgate::chat_request& request,
                                                        llmgate::request_context& context, Next& next) {
    // Each message's text, its parts as sent when the content was not a
    // string, and its other fields (a tool call's arguments, a name).
    for (auto& message : request.messages) {
      message.content = redact_emails(message.content);
      if (!message.content_json.empty()) message.content_json = redacted_json(message.content_json);
      for (auto& field : message.extra) field.json = redacted_json(field.json);
    }
    co_return co_await next(request, context);
  }
};

using redacting_gateway = llmgate::basic_gateway<redact_emails_stage>;

// One chat request to the gateway: the cache outcome and the answer.
std::pair<std::string, std::string> ask(unsigned short port, std::string_view question) {
  namespace http = boost::beast::http;
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> request(http::verb::post, "/v1/chat/completions", 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer sk-llmgate-demo");
  request.set(http::field::content_type, "application/json");
  request.body() = boost::json::serialize(boost::json::object{
      {"model", "llama3.2"},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", question}}}}});
  request.prepare_payload();
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  const auto body = boost::json::parse(response.body());
  return {std::string(response["x-llmgate-cache"]),
          std::string(body.at("choices").at(0).at("message").at("content").as_string())};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--config") {
    try {
      redacting_gateway gateway(llmgate::gateway_config::load(argv[2]), stderr, redact_emails_stage{});
      gateway.run();
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "custom_gateway: %s\n", e.what());
      return 1;
    }
  }

  const char* url = argc > 1 ? argv[1] : std::getenv("LLMGATE_UPSTREAM");
  llmgate::gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 1;
  config.log.requests = false;
  if (url && *url) config.backends = {{.name = "upstream", .base_url = url, .retries = 0}};
  else config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "llama3.2", .backends = {config.backends[0].name}}};
  config.tenants = {{"demo", "sk-llmgate-demo"}};
  redacting_gateway gateway(config, nullptr, redact_emails_stage{});
  gateway.start();
  for (const char* question : {"Write a polite reply to jane.doe@example.com about the invoice.",
                               "Write a polite reply to bob@example.org about the invoice."}) {
    const auto [cache, answer] = ask(gateway.port(), question);
    std::printf("%-8s %s\n", cache.c_str(), answer.c_str());
  }
  gateway.stop();
}
