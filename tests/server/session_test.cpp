// The session over real sockets: a body over the limit is answered 413 and
// the rest of it read and dropped (lingering close), so that a client that
// writes its whole body before it reads, as the OpenAI SDKs do, reads the
// 413 instead of failing its write on a reset connection.
#include <chrono>   // std::chrono
#include <string>   // std::string
#include <thread>   // std::thread

#include <boost/test/unit_test.hpp>

#include "demo_gateway.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
namespace net = boost::asio;
namespace http = boost::beast::http;

struct raw_exchange {
  boost::system::error_code write_error;
  std::size_t written = 0;
  boost::system::error_code read_error;
  http::response<http::string_body> response;
};

// Sends `head` and `body_bytes` bytes of body in one write on one thread
// while this one reads the answer, as a client that uploads before it
// reads would.
raw_exchange send_raw(unsigned short port, const std::string& head, std::size_t body_bytes) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  raw_exchange result;
  std::string request = head + std::string(body_bytes, 'x');
  std::thread writer([&] { result.written = net::write(socket, net::buffer(request), result.write_error); });
  boost::beast::flat_buffer buffer;
  http::read(socket, buffer, result.response, result.read_error);
  writer.join();
  return result;
}

std::string chat_head(std::size_t content_length) {
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-acme\r\n"
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(content_length) + "\r\n\r\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(session_test)

BOOST_AUTO_TEST_CASE(a_client_that_uploads_before_reading_gets_the_413) {
  auto config = test::demo_config();
  config.max_body_bytes = 1000;
  gateway server(config, nullptr);
  server.start();
  for (const std::size_t body : {std::size_t{2} << 20, std::size_t{8} << 20}) {
    const auto result = send_raw(server.port(), chat_head(body), body);
    BOOST_TEST(result.write_error.message() == boost::system::error_code().message());
    BOOST_TEST(result.written == chat_head(body).size() + body);
    BOOST_TEST(result.read_error.message() == boost::system::error_code().message());
    BOOST_TEST(result.response.result_int() == 413u);
    const auto error = boost::json::parse(result.response.body()).at("error");
    BOOST_TEST(error.at("message").as_string() == "The request body is larger than 1000 bytes.");
    BOOST_TEST(error.at("type").as_string() == "invalid_request_error");
    BOOST_TEST(error.at("code").as_string() == "request_too_large");
    BOOST_TEST(error.at("param").is_null());
    BOOST_TEST(result.response[http::field::connection] == "close");
  }
}

BOOST_AUTO_TEST_CASE(lingering_after_a_413_lasts_at_most_linger_time) {
  auto config = test::demo_config();
  config.max_body_bytes = 1000;
  gateway server(config, nullptr);
  server.start();
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
  const auto started = std::chrono::steady_clock::now();
  net::write(socket, net::buffer(chat_head(std::size_t{1} << 30)));
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  BOOST_TEST(response.result_int() == 413u);
  char byte;
  boost::system::error_code closed;
  socket.read_some(net::buffer(&byte, 1), closed);  // the gateway's FIN came right after the 413
  BOOST_TEST((closed == net::error::eof));
  // A client that trickles its body on and on: read and dropped until
  // linger_time (5 s) has passed, then the connection is closed (its next
  // writes fail on the reset).
  const std::string piece(16 * 1024, 'x');
  boost::system::error_code written;
  while (!written && std::chrono::steady_clock::now() - started < std::chrono::seconds(20)) {
    net::write(socket, net::buffer(piece), written);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  BOOST_TEST(!!written);
  BOOST_TEST((elapsed > std::chrono::milliseconds(4900)));
  BOOST_TEST((elapsed < std::chrono::seconds(8)));
}

BOOST_AUTO_TEST_SUITE_END()
