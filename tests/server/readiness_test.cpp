// GET /readyz: each backend's state as its calls left it, and 503
// "degraded" while some model has no backend that is not down; /healthz
// stays liveness. backend_health's own rules: failures in a row make a
// backend down, a success makes it up, a caller's 400 is no failure, and
// down lasts down_for without news.
#include <chrono>  // std::chrono
#include <string>  // std::string

#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "demo_gateway.hpp"  // upstream_config
#include "gateway_client.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
using namespace std::chrono_literals;

const boost::json::object& backend_in(const boost::json::value& readiness, std::string_view name) {
  for (const auto& b : readiness.at("backends").as_array())
    if (b.at("name").as_string() == name) return b.as_object();
  throw std::runtime_error("no backend " + std::string(name));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(readiness_test)

BOOST_AUTO_TEST_CASE(backend_health_counts_failures_in_a_row_and_forgets_after_down_for) {
  backend_health health({"a", "b"}, {.failures_to_down = 2, .down_for = 30s});
  const auto now = backend_health::clock::now();
  BOOST_TEST((health.state("a", now) == backend_state::unknown));
  health.failed("a");
  BOOST_TEST((health.state("a") == backend_state::up));  // one failure: not yet down
  health.failed("a");
  BOOST_TEST((health.state("a") == backend_state::down));
  BOOST_TEST((health.state("a", backend_health::clock::now() + 31s) == backend_state::unknown));
  health.succeeded("a");
  BOOST_TEST((health.state("a") == backend_state::up));
  const auto reports = health.reports();
  BOOST_TEST_REQUIRE(reports.size() == 2u);
  BOOST_TEST(reports[0].name == "a");
  BOOST_TEST(reports[0].failures == 0u);
  BOOST_TEST(*reports[0].last_succeeded);
  BOOST_TEST(!reports[1].last_succeeded.has_value());
}

BOOST_AUTO_TEST_CASE(readyz_says_degraded_while_a_model_has_no_backend) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions",
              reply::openai_error(503, "server_error", "overloaded", "The engine is overloaded."));
  upstream.start();
  auto config = upstream_config(upstream.url("/v1"));
  config.backends.push_back({.name = "demo", .kind = "demo"});
  config.models.push_back({.name = "demo-model", .backends = {"demo"}});
  gateway server(config, nullptr);
  server.start();
  const auto port = server.port();

  const auto fresh = get(port, "/readyz");
  BOOST_TEST(fresh.status == 200u);
  BOOST_TEST(fresh.json().at("status").as_string() == "ready");
  BOOST_TEST(backend_in(fresh.json(), "upstream").at("state").as_string() == "unknown");
  BOOST_TEST(backend_in(fresh.json(), "upstream").at("last_result").is_null());

  // A 400 for the caller's own input says nothing of the upstream's health.
  upstream.on("/v1/chat/completions", reply::openai_error(400, "invalid_request_error", "bad", "Bad."));
  post(port, "/v1/chat/completions", chat_body("q"), "key-acme");
  BOOST_TEST(backend_in(get(port, "/readyz").json(), "upstream").at("state").as_string() == "unknown");

  upstream.on("/v1/chat/completions",
              reply::openai_error(503, "server_error", "overloaded", "The engine is overloaded."));
  for (int i = 0; i < 3; ++i) BOOST_TEST(post(port, "/v1/chat/completions", chat_body("q"), "key-acme").status >= 500u);
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body("q", false, "demo-model"), "key-acme").status == 200u);
  const auto down = get(port, "/readyz");
  BOOST_TEST(down.status == 503u);
  const auto body = down.json();
  BOOST_TEST(body.at("status").as_string() == "degraded");
  BOOST_TEST(body.at("models").at(0).at("name").as_string() == "test-model");
  BOOST_TEST(!body.at("models").at(0).at("available").as_bool());
  BOOST_TEST(body.at("models").at(1).at("available").as_bool());
  BOOST_TEST(backend_in(body, "upstream").at("state").as_string() == "down");
  BOOST_TEST(backend_in(body, "upstream").at("last_result").as_string() == "failed");
  BOOST_TEST(backend_in(body, "upstream").at("failures").as_int64() == 3);
  BOOST_TEST(backend_in(body, "demo").at("state").as_string() == "up");
  BOOST_TEST(down.body.find("overloaded") == std::string::npos);  // no upstream texts on an open route
  BOOST_TEST(get(port, "/healthz").status == 200u);  // alive all the same

  upstream.on("/v1/chat/completions", reply::chat("back"));
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body("q2"), "key-acme").status == 200u);
  const auto back = get(port, "/readyz");
  BOOST_TEST(back.status == 200u);
  BOOST_TEST(back.json().at("status").as_string() == "ready");
  BOOST_TEST(backend_in(back.json(), "upstream").at("state").as_string() == "up");
}

BOOST_AUTO_TEST_SUITE_END()
