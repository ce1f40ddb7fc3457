// The peer of openai_pipeline.cpp (scripts/bench compile): what a user
// writes without llmgate to ask an OpenAI-compatible server one question,
// over HTTP or HTTPS, with Boost.Beast, Asio's coroutines and Boost.JSON,
// no cache: the floor of the network side's compile cost.
#include <cstdio>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

namespace net = boost::asio;
namespace http = boost::beast::http;

template <class Stream>
net::awaitable<std::string> ask(Stream& stream, const std::string& host, const std::string& question) {
  http::request<http::string_body> request(http::verb::post, "/v1/chat/completions", 11);
  request.set(http::field::host, host);
  request.set(http::field::content_type, "application/json");
  request.body() = boost::json::serialize(boost::json::object{
      {"model", "llama3.2"}, {"messages", boost::json::array{{{"role", "user"}, {"content", question}}}}});
  request.prepare_payload();
  co_await http::async_write(stream, request, net::use_awaitable);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  co_await http::async_read(stream, buffer, response, net::use_awaitable);
  const auto reply = boost::json::parse(response.body());
  co_return std::string(reply.at("choices").at(0).at("message").at("content").as_string());
}

net::awaitable<std::string> run(bool tls, std::string host, std::string port, std::string question) {
  auto executor = co_await net::this_coro::executor;
  net::ip::tcp::resolver resolver(executor);
  const auto endpoints = co_await resolver.async_resolve(host, port, net::use_awaitable);
  if (tls) {
    net::ssl::context context(net::ssl::context::tls_client);
    context.set_default_verify_paths();
    boost::beast::ssl_stream<boost::beast::tcp_stream> stream(executor, context);
    co_await boost::beast::get_lowest_layer(stream).async_connect(endpoints, net::use_awaitable);
    co_await stream.async_handshake(net::ssl::stream_base::client, net::use_awaitable);
    co_return co_await ask(stream, host, question);
  }
  boost::beast::tcp_stream stream(executor);
  co_await stream.async_connect(endpoints, net::use_awaitable);
  co_return co_await ask(stream, host, question);
}

int main() {
  net::io_context io;
  auto answer = net::co_spawn(io, run(false, "127.0.0.1", "11434", "What is a cache?"), net::use_future);
  io.run();
  std::puts(answer.get().c_str());
}
