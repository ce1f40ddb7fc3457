// The HTTP client's connection pool against an upstream that closes idle
// connections, as llama.cpp's server and uvicorn do: a burst fills the
// pool, the quiet after it outlasts the server's idle timeout, and no
// request after it fails; a request the server drops on a reused
// connection is sent again on a new one; the server's Keep-Alive timeout
// and the client's own default decide how long a connection stays pooled.
#include <boost/test/unit_test.hpp>

#include <chrono>   // std::chrono
#include <future>   // std::future
#include <memory>   // std::shared_ptr
#include <string>   // std::string
#include <thread>   // std::this_thread::sleep_for
#include <vector>   // std::vector

#include <boost/asio/co_spawn.hpp>    // net::co_spawn
#include <boost/asio/use_future.hpp>  // net::use_future

#include "llmgate/backend/detail/keep_alive.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "backend_fixture.hpp"

using namespace std::chrono_literals;
using llmgate::backend_error;
using llmgate::errc;
using llmgate::openai_backend;
using llmgate::test::backend_fixture;
using llmgate::test::reply;
using llmgate::test::user_says;
namespace net = boost::asio;

namespace {

const std::string chat_path = "/v1/chat/completions";

struct pool_fixture : backend_fixture {
  openai_backend backend() { return openai_backend(http, {.base_url = server.url("/v1")}); }

  /// `count` requests at once, all in flight before any answer: each on a
  /// connection of its own. Returns their answers' contents.
  std::vector<std::string> burst(openai_backend& model, int count) {
    const auto request = user_says("burst");
    std::vector<std::future<llmgate::chat_response>> answers;
    for (int i = 0; i < count; ++i) answers.push_back(net::co_spawn(io, model.complete(request), net::use_future));
    io.restart();
    io.run();
    std::vector<std::string> contents;
    for (auto& answer : answers) contents.push_back(answer.get().content);
    return contents;
  }

  std::string ask(openai_backend& model) { return run(model.complete(user_says("x"))).content; }

  std::shared_ptr<llmgate::http_client> http = client({.first_byte_timeout = 2s, .idle_timeout = 2s});
};

}  // namespace

BOOST_AUTO_TEST_SUITE(connection_pool_test)

BOOST_AUTO_TEST_CASE(keep_alive_header_is_read_in_any_order_and_case) {
  using llmgate::detail::parse_keep_alive;
  const auto both = parse_keep_alive("timeout=5, max=100");
  BOOST_TEST(both.timeout.value().count() == 5);
  BOOST_TEST(both.max.value() == 100u);
  const auto swapped = parse_keep_alive("max=3,timeout=2");
  BOOST_TEST(swapped.timeout.value().count() == 2);
  BOOST_TEST(swapped.max.value() == 3u);
  BOOST_TEST(parse_keep_alive(" Timeout = 7 ").timeout.value().count() == 7);
  BOOST_TEST(parse_keep_alive("timeout=\"9\"").timeout.value().count() == 9);
  for (const char* unreadable : {"", "timeout", "timeout=", "timeout=abc", "timeout=5.5", "timeout=-1", "idle=5"}) {
    BOOST_TEST(!parse_keep_alive(unreadable).timeout.has_value(), unreadable);
    BOOST_TEST(!parse_keep_alive(unreadable).max.has_value(), unreadable);
  }
}

BOOST_AUTO_TEST_CASE(a_pooled_connection_lives_a_little_less_than_the_server_keeps_it) {
  using llmgate::detail::keep_alive_hint;
  using llmgate::detail::pooled_lifetime;
  BOOST_TEST(pooled_lifetime(keep_alive_hint{.timeout = 5s}, 4000ms).count() == 4000);
  BOOST_TEST(pooled_lifetime(keep_alive_hint{.timeout = 60s}, 4000ms).count() == 59000);
  BOOST_TEST(pooled_lifetime(keep_alive_hint{.timeout = 1s}, 4000ms).count() == 500);
  BOOST_TEST(pooled_lifetime(keep_alive_hint{.timeout = 0s}, 4000ms).count() == 0);
  BOOST_TEST(pooled_lifetime(keep_alive_hint{}, 4000ms).count() == 4000);
  BOOST_TEST(pooled_lifetime(keep_alive_hint{.timeout = 5s, .max = 0}, 4000ms).count() == 0);
  BOOST_TEST(llmgate::http_client_options{}.keep_alive_timeout.count() == 4000);
}

// The case: after a burst and a quiet longer than the server's idle
// timeout, every pooled connection is closed; none may cost a request.
BOOST_FIXTURE_TEST_CASE(quiet_past_the_servers_idle_timeout_costs_no_request, pool_fixture) {
  server.close_idle_after(1s);
  server.on(chat_path, reply::chat("ok"));
  auto model = backend();
  BOOST_TEST(burst(model, 4) == std::vector<std::string>(4, "ok"));
  BOOST_TEST(server.connections() == 4u);
  BOOST_TEST(http->idle_connections() == 4u);

  std::this_thread::sleep_for(1300ms);  // the server closed all four
  for (int i = 0; i < 4; ++i) BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 5u);  // one new connection, then reused
  BOOST_TEST(server.requests(chat_path) == 8u);
  BOOST_TEST(http->idle_connections() == 1u);

  // And again, concurrently this time: each request on a connection of its own.
  std::this_thread::sleep_for(1300ms);
  BOOST_TEST(burst(model, 3) == std::vector<std::string>(3, "ok"));
  BOOST_TEST(server.connections() == 8u);
  BOOST_TEST(server.requests(chat_path) == 11u);
}

// The race no check before sending can see: the server closes the
// connection as the request arrives. The request goes again on a new
// connection, not on the pool's next (as old) one, and is no retry: the
// backend has no retries at all.
BOOST_FIXTURE_TEST_CASE(a_request_dropped_on_a_reused_connection_is_sent_on_a_new_one, pool_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = backend();
  BOOST_TEST(burst(model, 4) == std::vector<std::string>(4, "ok"));
  BOOST_TEST(http->idle_connections() == 4u);

  server.enqueue(chat_path, reply{.drop = true});
  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(http->stale_resends() == 1u);
  BOOST_TEST(server.connections() == 5u);
  BOOST_TEST(server.requests(chat_path) == 6u);  // the burst, the dropped one, the resent one
  BOOST_TEST(http->idle_connections() == 1u);    // the three as old were dropped; the new one pooled

  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 5u);
  BOOST_TEST(http->stale_resends() == 1u);
}

// Only once: a new connection that fails too is the request's failure.
BOOST_FIXTURE_TEST_CASE(a_new_connection_is_not_resent, pool_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = backend();
  BOOST_TEST(ask(model) == "ok");
  server.enqueue(chat_path, reply{.drop = true});
  server.enqueue(chat_path, reply{.drop = true});
  try {
    ask(model);
    BOOST_FAIL("expected a backend_error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.code() == errc::upstream_unreachable);
  }
  BOOST_TEST(http->stale_resends() == 1u);
  BOOST_TEST(server.connections() == 2u);
  BOOST_TEST(server.requests(chat_path) == 3u);
  BOOST_TEST(http->idle_connections() == 0u);
}

BOOST_FIXTURE_TEST_CASE(the_servers_keep_alive_timeout_is_honoured, pool_fixture) {
  auto short_lived = reply::chat("ok");
  short_lived.headers.emplace_back("Keep-Alive", "timeout=1");  // pooled for 500 ms
  server.on(chat_path, short_lived);
  auto model = backend();
  BOOST_TEST(ask(model) == "ok");
  std::this_thread::sleep_for(700ms);  // past it, though the server would still take it
  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 2u);
  BOOST_TEST(ask(model) == "ok");  // within it: reused
  BOOST_TEST(server.connections() == 2u);
  BOOST_TEST(http->stale_resends() == 0u);
}

BOOST_FIXTURE_TEST_CASE(the_servers_keep_alive_timeout_outranks_the_clients_default, pool_fixture) {
  http = client({.first_byte_timeout = 2s, .idle_timeout = 2s, .keep_alive_timeout = 300ms});
  auto model = backend();
  server.on(chat_path, reply::chat("ok"));  // no Keep-Alive header: the client's 300 ms
  BOOST_TEST(ask(model) == "ok");
  std::this_thread::sleep_for(500ms);
  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 2u);

  auto longer = reply::chat("ok");
  longer.headers.emplace_back("Keep-Alive", "timeout=2, max=50");  // pooled for 1 s
  server.on(chat_path, longer);
  BOOST_TEST(ask(model) == "ok");  // reuses the second connection, and pools it for 1 s
  BOOST_TEST(server.connections() == 2u);
  std::this_thread::sleep_for(500ms);
  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 2u);
  std::this_thread::sleep_for(1200ms);
  BOOST_TEST(ask(model) == "ok");
  BOOST_TEST(server.connections() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()
