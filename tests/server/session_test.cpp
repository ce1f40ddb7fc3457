// The session over real sockets: a body over the limit is answered 413 and
// the rest of it read and dropped (lingering close), so that a client that
// writes its whole body before it reads, as the OpenAI SDKs do, reads the
// 413 instead of failing its write on a reset connection; an idle
// connection is closed after the idle timeout, a busy one never; and a
// request is judged on its headers before its body: framing RFC 9112
// refuses (request smuggling), malformed or oversized headers, a missing
// Host, another HTTP version, an Expect, a missing key.
#include <atomic>      // std::atomic
#include <chrono>      // std::chrono
#include <functional>  // std::function
#include <memory>      // std::make_shared
#include <string>      // std::string
#include <thread>      // std::thread
#include <vector>      // std::vector

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

// What the gateway answers to `bytes` sent as they are on one connection:
// every response it writes until it closes the connection (or 5 s pass).
struct raw_replies {
  std::vector<http::response<http::string_body>> responses;
  bool closed = false;  // whether the gateway closed the connection after them
};

raw_replies exchange_bytes(unsigned short port, const std::string& bytes) {
  net::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  net::write(stream.socket(), net::buffer(bytes));
  raw_replies replies;
  boost::beast::flat_buffer buffer;
  for (;;) {
    stream.expires_after(std::chrono::seconds(5));
    http::response_parser<http::string_body> parser;
    parser.skip(false);
    boost::system::error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec) {
      replies.closed = ec == http::error::end_of_stream || ec == net::error::connection_reset;
      return replies;
    }
    replies.responses.push_back(parser.release());
  }
}

std::string test_chat_body() {
  return R"({"model":"test-model","messages":[{"role":"user","content":"Say hello."}]})";
}

std::string to_hex(std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  do hex.insert(hex.begin(), digits[n % 16]); while ((n /= 16) != 0);
  return hex;
}

std::string chat_head(std::size_t content_length) {
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-acme\r\n"
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(content_length) + "\r\n\r\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(session_test)

BOOST_AUTO_TEST_CASE(a_client_that_uploads_before_reading_gets_the_413) {
  auto config = test::demo_config();
  config.limits.max_body_bytes = 1000;
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

BOOST_AUTO_TEST_CASE(lingering_after_a_413_lasts_at_most_its_time_limit) {
  auto config = test::demo_config();
  config.limits.max_body_bytes = 1000;
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
  // linger.time (5 s) has passed, then the connection is closed (its next
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

// Transfer-Encoding other than a lone "chunked", or beside Content-Length,
// is a 400 and a close (RFC 9112 section 6.3): a proxy in front that frames
// it otherwise would otherwise smuggle the request after it past its checks.
BOOST_AUTO_TEST_CASE(smuggling_shapes_of_transfer_encoding_get_400_and_a_close) {
  gateway server(test::demo_config(), nullptr);
  server.start();
  const std::string body = "0\r\n\r\n";
  const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (const std::string encoding : {"chunked, identity", "gzip", "xchunked", "chunked, chunked", "identity, chunked"}) {
    const auto replies = exchange_bytes(
        server.port(), "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-acme\r\n"
                       "Transfer-Encoding: " + encoding + "\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\n\r\n" + body + smuggled);
    BOOST_TEST_INFO("Transfer-Encoding: " << encoding);
    BOOST_REQUIRE(replies.responses.size() == 1u);  // the pipelined GET is never answered
    BOOST_TEST(replies.responses[0].result_int() == 400u);
    BOOST_TEST(replies.responses[0][http::field::connection] == "close");
    BOOST_TEST(replies.closed);
  }
  // The same shapes without Content-Length: only a lone "chunked" is taken.
  for (const std::string encoding : {"gzip, chunked", "chunked, identity"}) {
    const auto replies = exchange_bytes(
        server.port(), "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-acme\r\n"
                       "Transfer-Encoding: " + encoding + "\r\n\r\n" + body + smuggled);
    BOOST_TEST_INFO("Transfer-Encoding: " << encoding);
    BOOST_REQUIRE(replies.responses.size() == 1u);
    BOOST_TEST(replies.responses[0].result_int() == 400u);
    BOOST_TEST(boost::json::parse(replies.responses[0].body()).at("error").at("message").as_string() ==
               "The gateway takes \"Transfer-Encoding: chunked\" alone (RFC 9112 section 6.3).");
    BOOST_TEST(replies.closed);
  }
  // A lone chunked is read as chunks, and the connection serves the next request.
  const std::string chat = test_chat_body();
  std::string chunked = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer key-acme\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n";
  chunked += to_hex(chat.size()) + "\r\n" + chat + "\r\n0\r\n\r\n" + smuggled;
  const auto served = exchange_bytes(server.port(), chunked + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  BOOST_REQUIRE(served.responses.size() == 3u);
  BOOST_TEST(served.responses[0].result_int() == 200u);
  BOOST_TEST(served.responses[1].result_int() == 200u);
  BOOST_TEST(served.responses[2].result_int() == 200u);
}

// A request whose headers cannot be read is told why before the close:
// 431 when they are too large, 400 when malformed; and 505 for another
// HTTP version, 400 for an HTTP/1.1 request without one Host.
BOOST_AUTO_TEST_CASE(malformed_requests_are_answered_before_the_close) {
  auto config = test::demo_config();
  config.limits.max_header_bytes = 4096;
  gateway server(config, nullptr);
  server.start();
  const auto status_of = [&](const std::string& bytes) {
    const auto replies = exchange_bytes(server.port(), bytes);
    BOOST_TEST_INFO(bytes.substr(0, 60));
    BOOST_TEST(replies.closed);
    return replies.responses.size() == 1 ? replies.responses[0].result_int() : 0u;
  };
  BOOST_TEST(status_of("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(5000, 'x') + "\r\n\r\n") == 431u);
  BOOST_TEST(status_of("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\r\n\r\n") == 400u);
  BOOST_TEST(status_of("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                       "Content-Length: 6\r\n\r\nhello!") == 400u);
  BOOST_TEST(status_of("GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n") == 505u);
  BOOST_TEST(status_of("GET /healthz HTTP/1.1\r\n\r\n") == 400u);
  BOOST_TEST(status_of("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400u);
  BOOST_TEST(status_of("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\n\r\n") == 417u);
  // HTTP/1.0 needs no Host.
  const auto old = exchange_bytes(server.port(), "GET /healthz HTTP/1.0\r\n\r\n");
  BOOST_REQUIRE(old.responses.size() == 1u);
  BOOST_TEST(old.responses[0].result_int() == 200u);
}

// "Expect: 100-continue": the client is told to go on once the headers
// pass, and told 413 or 401 instead, before it sends a byte of its body.
BOOST_AUTO_TEST_CASE(expect_100_continue_is_answered_before_the_body) {
  auto config = test::demo_config();
  config.limits.max_body_bytes = 100'000;
  gateway server(config, nullptr);
  server.start();
  net::io_context io;
  const auto head = [](std::size_t length, std::string_view key) {
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + std::string(key) +
           "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " +
           std::to_string(length) + "\r\n\r\n";
  };
  const std::string chat = test_chat_body();
  {
    boost::beast::tcp_stream stream(io);
    stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    stream.expires_after(std::chrono::seconds(5));
    net::write(stream.socket(), net::buffer(head(chat.size(), "key-acme")));
    boost::beast::flat_buffer buffer;
    http::response<http::empty_body> interim;
    http::read(stream, buffer, interim);
    BOOST_TEST(interim.result_int() == 100u);
    net::write(stream.socket(), net::buffer(chat));
    http::response<http::string_body> final;
    http::read(stream, buffer, final);
    BOOST_TEST(final.result_int() == 200u);
  }
  for (const auto& [bytes, key, status] : {std::tuple{std::size_t{1} << 20, "key-acme", 413u},
                                           std::tuple{chat.size(), "not-a-key", 401u}}) {
    const auto replies = exchange_bytes(server.port(), head(bytes, key));  // and no body
    BOOST_REQUIRE(replies.responses.size() == 1u);
    BOOST_TEST(replies.responses[0].result_int() == status);
    BOOST_TEST(replies.closed);
  }
}

// A request to a route that needs a key it does not carry is refused on
// its headers: the gateway neither waits for nor reads its body.
BOOST_AUTO_TEST_CASE(a_request_without_its_key_is_refused_before_its_body_is_read) {
  gateway server(test::demo_config(), nullptr);
  server.start();
  for (const std::string authorization : {"", "Authorization: Bearer wrong\r\n"}) {
    const auto replies =
        exchange_bytes(server.port(), "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + authorization +
                                          "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n");
    BOOST_REQUIRE(replies.responses.size() == 1u);  // within exchange_bytes' 5 s: the body never comes
    BOOST_TEST(replies.responses[0].result_int() == 401u);
    BOOST_TEST(replies.closed);
  }
}

// The idle timeout of a plain TCP connection (one watchdog timer per
// session, re-armed only when it fires early): a connection that sends
// requests more often than idle_timeout stays open however long it lives,
// one that sends nothing, or leaves a request half sent, is closed about
// idle_timeout after its last request began to be read.
BOOST_AUTO_TEST_CASE(idle_connections_close_after_idle_timeout_and_busy_ones_stay_open) {
  auto config = test::demo_config();
  const access_keys keys(config.tenants, config.admin);
  dispatch_table routes(keys);
  routes.add(http::verb::get, "/ping", route_access::open, [](exchange&) { return text_response("text/plain", "pong"); });
  session_options options;
  options.idle_timeout = std::chrono::milliseconds(300);
  options.header_timeout = std::chrono::milliseconds(300);
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

// A connection that has begun a request has header_timeout for its
// headers, however long idle_timeout is; one that sends nothing has
// idle_timeout.
BOOST_AUTO_TEST_CASE(half_sent_headers_close_after_header_timeout_silent_connections_after_idle_timeout) {
  auto config = test::demo_config();
  config.limits.idle_timeout_ms = 3000;
  config.limits.header_timeout_ms = 200;
  gateway server(config, nullptr);
  server.start();
  net::io_context io;
  const auto connect = [&] {
    net::ip::tcp::socket socket(io);
    socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
    return socket;
  };
  // How long until the gateway closes `socket` (limit: 10 s).
  const auto time_to_close = [](net::ip::tcp::socket& socket) {
    const auto started = std::chrono::steady_clock::now();
    socket.non_blocking(true);
    boost::system::error_code ec;
    while (!ec && std::chrono::steady_clock::now() - started < std::chrono::seconds(10)) {
      char byte;
      socket.read_some(net::buffer(&byte, 1), ec);
      if (ec == net::error::would_block) {
        ec = {};
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return std::chrono::steady_clock::now() - started;
  };
  auto silent = connect();
  auto half = connect();
  net::write(half, net::buffer(std::string_view("POST /v1/chat/completions HTTP/1.1\r\nHost: 1")));
  const auto half_closed = time_to_close(half);
  BOOST_TEST((half_closed < std::chrono::milliseconds(1500)));  // 200 ms, and up to a quarter more, after its bytes were seen
  const auto silent_closed = half_closed + time_to_close(silent);
  BOOST_TEST((silent_closed >= std::chrono::milliseconds(2500)));
  BOOST_TEST((silent_closed < std::chrono::milliseconds(6000)));
}

BOOST_AUTO_TEST_SUITE_END()
