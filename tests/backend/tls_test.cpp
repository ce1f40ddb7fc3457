// TLS against a real TLS server on 127.0.0.1: peer verification is on by
// default, trusts the CA it is given, checks the host name and can be
// turned off. The server's certificates are made at test time by the
// openssl command (skipped, with the reason, where it is missing).
#include <boost/test/unit_test.hpp>

#include <cstdlib>     // std::system
#include <filesystem>  // std::filesystem::path
#include <string>      // std::string
#include <thread>      // std::thread

#include <boost/asio/co_spawn.hpp>     // net::co_spawn
#include <boost/asio/detached.hpp>     // net::detached
#include <boost/asio/io_context.hpp>   // net::io_context
#include <boost/asio/ip/tcp.hpp>       // tcp::acceptor
#include <boost/asio/ssl/context.hpp>  // ssl::context
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "../temporary_directory.hpp"
#include "backend_fixture.hpp"
#include "llmgate/backend/openai_backend.hpp"

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using namespace llmgate;

/// A self-signed certificate for `host` (its only subject alternative
/// name), written as <name>.crt and <name>.key; false when openssl failed.
bool make_certificate(const fs::path& folder, const std::string& name, const std::string& host) {
  const std::string base = (folder / name).string();
  const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=" + host +
                              " -addext subjectAltName=DNS:" + host + " -keyout '" + base +
                              ".key' -out '" + base + ".crt' > '" + base + ".log' 2>&1";
  return std::system(command.c_str()) == 0;
}

/// An HTTPS server that answers every request with one chat completion.
class tls_upstream {
 public:
  tls_upstream(const fs::path& certificate, const fs::path& key) : tls_(net::ssl::context::tls_server) {
    tls_.use_certificate_chain_file(certificate.string());
    tls_.use_private_key_file(key.string(), net::ssl::context::pem);
    acceptor_.open(net::ip::tcp::v4());
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    net::co_spawn(io_, accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~tls_upstream() {
    io_.stop();
    thread_.join();
  }

  /// https://<host>:<port>/v1, for a host name that resolves to 127.0.0.1.
  std::string url(const std::string& host) const {
    return "https://" + host + ":" + std::to_string(acceptor_.local_endpoint().port()) + "/v1";
  }

 private:
  net::awaitable<void> accept() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(net::use_awaitable);
      net::co_spawn(io_, serve(std::move(socket)), net::detached);
    }
  }

  net::awaitable<void> serve(net::ip::tcp::socket socket) {
    try {
      beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), tls_);
      co_await stream.async_handshake(net::ssl::stream_base::server, net::use_awaitable);
      beast::flat_buffer buffer;
      http::request<http::string_body> request;
      co_await http::async_read(stream, buffer, request, net::use_awaitable);
      http::response<http::string_body> response{http::status::ok, 11};
      response.set(http::field::content_type, "application/json");
      response.body() = R"({"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,)"
                        R"("message":{"role":"assistant","content":"over TLS"},"finish_reason":"stop"}],)"
                        R"("usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})";
      response.keep_alive(false);
      response.prepare_payload();
      co_await http::async_write(stream, response, net::use_awaitable);
    } catch (const std::exception&) {
      // A client that refused the certificate hangs up mid-handshake.
    }
  }

  net::io_context io_;
  net::ssl::context tls_;
  net::ip::tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

/// Sends one request through an OpenAI adapter with `options`.
chat_response ask(const std::string& url, http_client_options options) {
  net::io_context io;
  openai_backend backend(std::make_shared<http_client>(io.get_executor(), std::move(options)),
                         {.name = "tls", .base_url = url});
  return run_blocking(io, backend.complete(test::user_says("hello")));
}

/// The error code of what `ask` threw, or none when it did not throw.
std::error_code failure_of(const std::string& url, http_client_options options) {
  try {
    ask(url, std::move(options));
  } catch (const error& failure) {
    BOOST_TEST_MESSAGE("refused as expected: " << failure.what());
    return failure.code();
  }
  return {};
}

struct tls_fixture {
  tls_fixture() {
    ready = make_certificate(folder.path(), "localhost", "localhost") &&
            make_certificate(folder.path(), "elsewhere", "elsewhere.example");
    if (!ready) BOOST_TEST_MESSAGE("skipped: the openssl command could not make a certificate");
  }
  fs::path crt(const std::string& name) const { return folder.path() / (name + ".crt"); }
  fs::path key(const std::string& name) const { return folder.path() / (name + ".key"); }

  test::temporary_directory folder;
  bool ready = false;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tls_test, tls_fixture)

BOOST_AUTO_TEST_CASE(trusted_certificate_for_the_host_is_accepted) {
  if (!ready) return;
  tls_upstream server(crt("localhost"), key("localhost"));
  const auto response = ask(server.url("localhost"), {.ca_file = crt("localhost").string()});
  BOOST_TEST(response.content == "over TLS");
  BOOST_TEST(response.usage.prompt_tokens == 3u);
}

BOOST_AUTO_TEST_CASE(verification_is_on_by_default) {
  if (!ready) return;
  // The system's trust store does not know the test's self-signed CA.
  tls_upstream server(crt("localhost"), key("localhost"));
  BOOST_TEST(failure_of(server.url("localhost"), {}) == errc::upstream_unreachable);
}

BOOST_AUTO_TEST_CASE(certificate_for_another_host_is_refused) {
  if (!ready) return;
  // Trusted chain, wrong name: the host name check alone must refuse it.
  tls_upstream server(crt("elsewhere"), key("elsewhere"));
  BOOST_TEST(failure_of(server.url("localhost"), {.ca_file = crt("elsewhere").string()}) ==
             errc::upstream_unreachable);
}

BOOST_AUTO_TEST_CASE(verification_can_be_turned_off) {
  if (!ready) return;
  tls_upstream server(crt("elsewhere"), key("elsewhere"));
  const auto response = ask(server.url("localhost"), {.verify_peer = false});
  BOOST_TEST(response.content == "over TLS");
}

BOOST_AUTO_TEST_SUITE_END()
