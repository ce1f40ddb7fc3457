// The session over real sockets: a body over the limit is answered 413 and
// the rest of it read and dropped (lingering close), so that a client that
// writes its whole body before it reads, as the OpenAI SDKs do, reads the
// 413 instead of failing its write on a reset connection; and an idle
// connection is closed after the idle timeout, a busy one never.
#include <atomic>      // std::atomic
#include <chrono>      // std::chrono
#include <functional>  // std::function
#include <memory>      // std::make_shared
#include <string>      // std::string
#include <thread>      // std::thread

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

// The idle timeout of a plain TCP connection (one watchdog timer per
// session, re-armed only when it fires early): a connection that sends
// requests more often than idle_timeout stays open however long it lives,
// one that sends nothing, or leaves a request half sent, is closed about
// idle_timeout after its last request began to be read.
BOOST_AUTO_TEST_CASE(idle_connections_close_after_idle_timeout_and_busy_ones_stay_open) {
  auto config = test::demo_config();
  const access_keys keys(config);
  dispatch_table routes(keys);
  routes.add(http::verb::get, "/ping", route_access::open, [](exchange&) { return text_response("text/plain", "pong"); });
  session_options options;
  options.idle_timeout = std::chrono::milliseconds(300);
  const std::atomic<bool> stopping{false};
  net::io_context server_io;
  net::ip::tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
  std::atomic<int> ended{0};
  std::function<void()> accept_next = [&] {
    acceptor.async_accept([&](boost::system::error_code ec, net::ip::tcp::socket socket) {
      if (ec) return;
      auto s = std::make_shared<session<boost::beast::tcp_stream>>(boost::beast::tcp_stream(std::move(socket)), routes,
                                                                    options, stopping);
      net::co_spawn(server_io, s->run([&](const std::shared_ptr<session_base>&) { ++ended; }),
                    net::bind_cancellation_slot(s->slot(), net::detached));
      accept_next();
    });
  };
  accept_next();
  std::thread server([&] { server_io.run(); });

  net::io_context client_io;
  const auto connect = [&] {
    net::ip::tcp::socket socket(client_io);
    socket.connect(acceptor.local_endpoint());
    return socket;
  };
  const std::string ping = "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  // Whether the session closed `socket` within `limit` of now (polls for
  // the end of file; nothing else is sent to it).
  const auto closed_within = [](net::ip::tcp::socket& socket, std::chrono::milliseconds limit) {
    const auto started = std::chrono::steady_clock::now();
    socket.non_blocking(true);
    boost::system::error_code ec;
    while (!ec && std::chrono::steady_clock::now() - started < limit) {
      char byte;
      socket.read_some(net::buffer(&byte, 1), ec);
      if (ec == net::error::would_block) {
        ec = {};
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return ec == net::error::eof || ec == net::error::connection_reset;
  };

  // Busy: a request every 150 ms for 1.2 s (four idle timeouts), each answered.
  auto busy = connect();
  boost::beast::flat_buffer buffer;
  auto last_answer = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    net::write(busy, net::buffer(ping));
    http::response<http::string_body> response;
    http::read(busy, buffer, response);  // throws if the session closed the connection
    last_answer = std::chrono::steady_clock::now();
    BOOST_TEST(response.body() == "pong");
  }
  // Then idle: closed about idle_timeout after the next read began (just
  // before the last answer arrived).
  BOOST_TEST(closed_within(busy, std::chrono::milliseconds(3000)));
  const auto idle_for = std::chrono::steady_clock::now() - last_answer;
  BOOST_TEST((idle_for >= std::chrono::milliseconds(250)));
  BOOST_TEST((idle_for < std::chrono::milliseconds(2000)));

  // Silent from the start, and half a request: both closed.
  auto silent = connect();
  auto half = connect();
  net::write(half, net::buffer(ping.substr(0, 10)));
  BOOST_TEST(closed_within(silent, std::chrono::milliseconds(3000)));
  BOOST_TEST(closed_within(half, std::chrono::milliseconds(3000)));

  acceptor.close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ended < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(ended.load() == 3);  // every session ended, its watchdog let go
  server_io.stop();
  server.join();
}

BOOST_AUTO_TEST_SUITE_END()
