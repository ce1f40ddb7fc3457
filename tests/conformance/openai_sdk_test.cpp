// The gateway as the official OpenAI Node client sees it (chat
// completions, embeddings and the Responses API): openai_sdk.mjs (beside
// this file) drives two gateways with the `openai` npm package (tests/node,
// pinned to a 6.x release) and reports each check in TAP; this suite starts
// what it talks to and judges the checks one by one:
// - the in-test upstream (tests/backend/upstream_server.hpp) as test-model,
//   answering as sdk_upstream.hpp says;
// - the same upstream behind a relay that closes connections idle for a
//   second, as llama-server and uvicorn close idle keep-alive connections
//   (stale-model);
// - the real inference engine, node-llama-cpp serving stories260K
//   (stories260K);
// - a gateway that admits one request at a time, for the 429.
// Skipped, with the reason, where Node, the npm packages or the model are
// missing (CTest reports it as skipped; CI, with
// LLMGATE_REQUIRE_REAL_PARTS=1, as failed).
#include <chrono>   // std::chrono
#include <memory>   // std::make_shared, std::make_unique
#include <string>   // std::string
#include <thread>   // std::thread
#include <vector>   // std::vector

#include <boost/asio/as_tuple.hpp>  // waits and reads that end as values
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>           // the script's settings
#include <boost/test/unit_test.hpp>

#include "llmgate/server/gateway.hpp"
#include "../backend/upstream_server.hpp"
#include "../node/node_process.hpp"  // run_node, llama_harness, top_level_results
#include "../skip_test.hpp"          // skip_test
#include "sdk_upstream.hpp"          // sdk_upstream_answer

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace net = boost::asio;
namespace json = boost::json;
using net::ip::tcp;

/// Relays TCP connections to 127.0.0.1:`target` and closes both sides of
/// one once no byte went either way for `idle`: the upstream closing an idle
/// keep-alive connection, whatever the gateway's pool thinks of it.
class idle_closing_relay {
 public:
  idle_closing_relay(unsigned short target, std::chrono::milliseconds idle) : target_(target), idle_(idle) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    net::co_spawn(io_, accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~idle_closing_relay() {
    io_.stop();
    thread_.join();
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + std::string(path);
  }

 private:
  struct link {
    link(tcp::socket from_client, net::io_context& io)
        : client(std::move(from_client)), server(io), timer(io) {}
    tcp::socket client;
    tcp::socket server;
    net::steady_timer timer;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    void close() {
      boost::system::error_code ignored;
      client.close(ignored);
      server.close(ignored);
      timer.cancel();
    }
  };

  net::awaitable<void> accept() {
    for (;;) {
      auto [error, socket] = co_await acceptor_.async_accept(net::as_tuple(net::use_awaitable));
      if (error) co_return;
      auto l = std::make_shared<link>(std::move(socket), io_);
      auto [failed] = co_await l->server.async_connect({net::ip::make_address("127.0.0.1"), target_},
                                                       net::as_tuple(net::use_awaitable));
      if (failed) {
        l->close();
        continue;
      }
      net::co_spawn(io_, pump(l, l->client, l->server), net::detached);
      net::co_spawn(io_, pump(l, l->server, l->client), net::detached);
      net::co_spawn(io_, watch(l), net::detached);
    }
  }

  // One thread runs the relay: `last` needs no lock.
  net::awaitable<void> pump(std::shared_ptr<link> l, tcp::socket& from, tcp::socket& to) {
    char buffer[16384];
    for (;;) {
      auto [read_error, n] = co_await from.async_read_some(net::buffer(buffer), net::as_tuple(net::use_awaitable));
      if (read_error) break;
      l->last = std::chrono::steady_clock::now();
      auto [write_error, written] =
          co_await net::async_write(to, net::buffer(buffer, n), net::as_tuple(net::use_awaitable));
      if (write_error) break;
    }
    l->close();
  }

  net::awaitable<void> watch(std::shared_ptr<link> l) {
    while (l->client.is_open()) {
      l->timer.expires_at(l->last + idle_);
      co_await l->timer.async_wait(net::as_tuple(net::use_awaitable));
      if (l->client.is_open() && std::chrono::steady_clock::now() >= l->last + idle_) l->close();
    }
  }

  unsigned short target_;
  std::chrono::milliseconds idle_;
  net::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

gateway_config base_config() {
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 2;
  config.tenants = {{"acme", "key-acme"}};
  config.log.requests = false;
  config.limits.request_timeout_ms = 30'000;
  return config;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openai_sdk_test)

BOOST_AUTO_TEST_CASE(official_node_client_against_the_gateway) {
  if (const auto missing = node_unavailable({"openai"})) return skip_test(*missing);
  if (const auto missing = llama_engine_unavailable()) return skip_test(*missing);
  const auto engine = llama_harness("openai_sdk_test.harness.log");
  BOOST_REQUIRE_MESSAGE(engine.base_url(), "the engine did not start, see openai_sdk_test.harness.log");

  upstream_server upstream;
  upstream.on("/v1/chat/completions", sdk_upstream_answer);
  upstream.start();
  idle_closing_relay relay(upstream.port(), std::chrono::seconds(1));

  auto config = base_config();
  config.backends = {{.name = "upstream", .base_url = upstream.url("/v1"), .retries = 0},
                     {.name = "stale", .base_url = relay.url("/v1"), .retries = 0},
                     {.name = "engine", .base_url = *engine.base_url(), .retries = 0}};
  config.models = {{.name = "test-model", .backends = {"upstream"}},
                   {.name = "stale-model", .backends = {"stale"}},
                   {.name = "stories260K", .backends = {"engine"}, .upstream_model = "stories260K-ctx512"}};
  // Every question reaches the upstream: the semantic tier would serve the
  // burst's near-identical questions from the cache.
  config.semantic_cache.enabled = false;
  gateway wide(std::move(config), nullptr);
  wide.start();

  // One request at a time, none queued: a second concurrent one is refused.
  upstream_server slow;
  slow.on("/v1/chat/completions", [](const received_request& request) {
    auto out = sdk_upstream_answer(request);
    out.first_byte_delay = std::chrono::milliseconds(1000);
    return out;
  });
  slow.start();
  auto narrow_config = base_config();
  narrow_config.backends = {{.name = "slow", .base_url = slow.url("/v1"), .retries = 0}};
  narrow_config.models = {{.name = "test-model", .backends = {"slow"}}};
  narrow_config.limits.max_concurrent_requests = 1;
  narrow_config.limits.max_queued_requests = 0;
  gateway narrow(std::move(narrow_config), nullptr);
  narrow.start();

  const auto settings = json::serialize(json::object{
      {"packages", node_packages().string()},
      {"gateway", "http://127.0.0.1:" + std::to_string(wide.port()) + "/v1"},
      {"narrow", "http://127.0.0.1:" + std::to_string(narrow.port()) + "/v1"},
      {"key", "key-acme"}});
  const auto script = std::filesystem::path(LLMGATE_TESTS_DIR) / "conformance/openai_sdk.mjs";
  const auto run = run_node({"--test-reporter=tap", script.string(), settings});
  BOOST_TEST_MESSAGE(run.output);

  const auto results = top_level_results(run.output);
  // Every check the script holds ran: none was lost to a crash.
  BOOST_TEST(results.size() == 25u);
  for (const auto& result : results) BOOST_TEST(result.ok, "openai_sdk.mjs: " << result.name);
  BOOST_TEST(run.status == 0);
}

BOOST_AUTO_TEST_SUITE_END()
