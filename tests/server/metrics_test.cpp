// gateway_metrics and GET /metrics: every response the gateway writes is
// counted by status, whoever answered it; the text is Prometheus's format
// (HELP and TYPE per family, shortest numbers, a summary with _sum and
// _count); and it is shown only to the admin key or the metrics token.
// (promtool's own check of the text: metrics_exposition_test.cpp.)
#include <charconv>  // std::to_chars
#include <chrono>    // std::chrono
#include <string>    // std::string

#include <boost/test/unit_test.hpp>

#include "demo_gateway.hpp"
#include "gateway_client.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
using namespace std::chrono_literals;

std::string shortest(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_test)

BOOST_AUTO_TEST_CASE(the_text_has_help_type_sum_count_and_shortest_numbers) {
  gateway_metrics metrics;
  const std::string acme = "acme";
  request_outcome miss{.tenant = "acme", .cache = cache_outcome::miss, .backend = "demo", .status = 200,
                       .prompt_tokens = 3, .completion_tokens = 4, .cost_usd = 0.5};
  request_outcome hit{.tenant = "acme", .cache = cache_outcome::exact, .status = 200, .saved_usd = 0.25};
  request_outcome refused{.tenant = "acme", .status = 400};  // never reached the pipeline
  metrics.record({.method = "GET", .path = "/healthz", .status = 200, .latency = 1ms});
  metrics.record({.method = "POST", .path = "/v1/chat/completions", .status = 200, .tenant = &acme,
                  .latency = 2s, .outcome = &miss});
  metrics.record({.method = "POST", .path = "/v1/chat/completions", .status = 200, .tenant = &acme,
                  .latency = 1s, .outcome = &hit});
  metrics.record({.method = "POST", .path = "/v1/chat/completions", .status = 400, .tenant = &acme,
                  .latency = 1s, .outcome = &refused});
  metrics.record({.method = "POST", .path = "/v1/chat/completions", .status = 401, .latency = 1ms});
  metrics.record({.method = "GET", .path = "/nowhere", .status = 404, .latency = 1ms});

  latency_histogram chat;  // the summary's quantiles are the histogram's
  for (const auto d : {2s, 1s, 1s}) chat.record(d);
  const auto quantile = [&](double q) {
    return shortest(std::chrono::duration<double>(chat.percentile(q)).count());
  };
  const std::string expected =
      "# HELP llmgate_http_responses_total HTTP responses the gateway wrote, by status, on every route "
      "(the gateway's own 401, 404, 413 too).\n"
      "# TYPE llmgate_http_responses_total counter\n"
      "llmgate_http_responses_total{status=\"200\"} 3\n"
      "llmgate_http_responses_total{status=\"400\"} 1\n"
      "llmgate_http_responses_total{status=\"401\"} 1\n"
      "llmgate_http_responses_total{status=\"404\"} 1\n"
      "# HELP llmgate_chat_requests_total Chat completion requests answered, by tenant and cache outcome.\n"
      "# TYPE llmgate_chat_requests_total counter\n"
      "llmgate_chat_requests_total{tenant=\"acme\",cache=\"miss\"} 1\n"
      "llmgate_chat_requests_total{tenant=\"acme\",cache=\"exact\"} 1\n"
      "llmgate_chat_requests_total{tenant=\"acme\",cache=\"semantic\"} 0\n"
      "llmgate_chat_requests_total{tenant=\"acme\",cache=\"coalesced\"} 0\n"
      "# HELP llmgate_chat_errors_total Chat requests answered with an error, by tenant.\n"
      "# TYPE llmgate_chat_errors_total counter\n"
      "llmgate_chat_errors_total{tenant=\"acme\"} 1\n"
      "# HELP llmgate_cost_usd_total Money spent on model calls, in US dollars, by tenant.\n"
      "# TYPE llmgate_cost_usd_total counter\n"
      "llmgate_cost_usd_total{tenant=\"acme\"} 0.5\n"
      "# HELP llmgate_saved_usd_total Money the caches saved, in US dollars, by tenant.\n"
      "# TYPE llmgate_saved_usd_total counter\n"
      "llmgate_saved_usd_total{tenant=\"acme\"} 0.25\n"
      "# HELP llmgate_prompt_tokens_total Prompt tokens of answered requests, by tenant.\n"
      "# TYPE llmgate_prompt_tokens_total counter\n"
      "llmgate_prompt_tokens_total{tenant=\"acme\"} 3\n"
      "# HELP llmgate_completion_tokens_total Completion tokens of answered requests, by tenant.\n"
      "# TYPE llmgate_completion_tokens_total counter\n"
      "llmgate_completion_tokens_total{tenant=\"acme\"} 4\n"
      "# HELP llmgate_backend_calls_total Requests a backend answered or failed.\n"
      "# TYPE llmgate_backend_calls_total counter\n"
      "llmgate_backend_calls_total{backend=\"demo\"} 1\n"
      "# HELP llmgate_backend_errors_total Requests a backend failed.\n"
      "# TYPE llmgate_backend_errors_total counter\n"
      "llmgate_backend_errors_total{backend=\"demo\"} 0\n"
      "# HELP llmgate_request_duration_seconds Chat completion requests' time from the request read to the "
      "response written.\n"
      "# TYPE llmgate_request_duration_seconds summary\n"
      "llmgate_request_duration_seconds{quantile=\"0.5\"} " + quantile(0.5) + "\n"
      "llmgate_request_duration_seconds{quantile=\"0.9\"} " + quantile(0.9) + "\n"
      "llmgate_request_duration_seconds{quantile=\"0.99\"} " + quantile(0.99) + "\n"
      "llmgate_request_duration_seconds_sum 4\n"
      "llmgate_request_duration_seconds_count 3\n"
      "# HELP llmgate_queued_requests Chat requests waiting for a place.\n"
      "# TYPE llmgate_queued_requests gauge\n"
      "llmgate_queued_requests 2\n";
  const auto text = metrics.prometheus({{"llmgate_queued_requests", "Chat requests waiting for a place.", 2.0}});
  BOOST_TEST(text == expected);
}

// The last hour, minute by minute: each outcome in its minute's bucket, a
// bucket taken over when its minute comes round an hour later, and the
// minutes with nothing at zero.
BOOST_AUTO_TEST_CASE(the_timeline_holds_the_last_hour_minute_by_minute) {
  minute_timeline timeline;
  const std::int64_t now = 29'000'000;  // Unix minutes
  timeline.record({.tenant = "a", .cache = cache_outcome::miss, .cost_usd = 0.5}, now - 61);  // gone by now's hour
  timeline.record({.tenant = "a", .cache = cache_outcome::miss, .cost_usd = 0.25}, now - 1);
  timeline.record({.tenant = "a", .cache = cache_outcome::exact, .saved_usd = 0.25}, now - 1);
  timeline.record({.tenant = "a", .cache = cache_outcome::coalesced, .saved_usd = 0.25}, now);
  timeline.record({.tenant = "a", .status = 429}, now);
  const auto minutes = timeline.json(now);
  BOOST_TEST_REQUIRE(minutes.size() == 60u);
  BOOST_TEST(minutes.front().at("minute").to_number<std::int64_t>() == (now - 59) * 60);
  BOOST_TEST(minutes.back().at("minute").to_number<std::int64_t>() == now * 60);
  const auto& before = minutes[58].as_object();
  BOOST_TEST(before.at("hits").to_number<int>() == 1);
  BOOST_TEST(before.at("misses").to_number<int>() == 1);
  BOOST_TEST(before.at("cost_usd").to_number<double>() == 0.25);
  BOOST_TEST(before.at("saved_usd").to_number<double>() == 0.25);
  const auto& last = minutes[59].as_object();
  BOOST_TEST(last.at("hits").to_number<int>() == 1);
  BOOST_TEST(last.at("errors").to_number<int>() == 1);
  BOOST_TEST(last.at("misses").to_number<int>() == 0);
  // now - 61 had now - 1's bucket, which now - 1 took over: nothing older is left.
  for (std::size_t i = 0; i < 58; ++i) BOOST_TEST(minutes[i].at("misses").to_number<int>() == 0);
}

BOOST_AUTO_TEST_CASE(a_summary_with_no_observation_says_nan) {
  const auto text = gateway_metrics().prometheus({});
  BOOST_TEST(text.find("llmgate_request_duration_seconds{quantile=\"0.9\"} NaN\n"
                       "llmgate_request_duration_seconds{quantile=\"0.99\"} NaN\n"
                       "llmgate_request_duration_seconds_sum 0\n"
                       "llmgate_request_duration_seconds_count 0\n") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(every_status_the_gateway_writes_is_counted) {
  auto config = demo_config();
  config.limits.max_body_bytes = 1000;
  config.admin.metrics_token = "scraper-token";
  gateway server(config, nullptr);
  server.start();
  const auto port = server.port();
  namespace http = boost::beast::http;
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body("hello"), "key-acme").status == 200u);
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body("hello"), "key-nobody").status == 401u);
  BOOST_TEST(post(port, "/v1/chat/completions", "{not json", "key-acme").status == 400u);
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body("hello", false, "other"), "key-acme").status == 404u);
  BOOST_TEST(get(port, "/nowhere", "key-acme").status == 404u);
  BOOST_TEST(get(port, "/v1/chat/completions", "key-acme").status == 405u);
  BOOST_TEST(post(port, "/v1/chat/completions", chat_body(std::string(2000, 'x')), "key-acme").status == 413u);
  BOOST_TEST(get(port, "/metrics").status == 401u);
  BOOST_TEST(get(port, "/metrics", "key-acme").status == 401u);  // a tenant's key is not enough
  BOOST_TEST(get(port, "/metrics", "admin-key").status == 200u);
  const auto metrics = get(port, "/metrics", "scraper-token");
  BOOST_TEST(metrics.status == 200u);
  BOOST_TEST(metrics.header("content-type") == "text/plain; version=0.0.4");
  const std::string expected =
      "# TYPE llmgate_http_responses_total counter\n"
      "llmgate_http_responses_total{status=\"200\"} 2\n"  // the chat answer and the admin's /metrics
      "llmgate_http_responses_total{status=\"400\"} 1\n"
      "llmgate_http_responses_total{status=\"401\"} 3\n"
      "llmgate_http_responses_total{status=\"404\"} 2\n"
      "llmgate_http_responses_total{status=\"405\"} 1\n"
      "llmgate_http_responses_total{status=\"413\"} 1\n"
      "# HELP";
  BOOST_TEST(metrics.body.find(expected) != std::string::npos, metrics.body);
  // The chat requests that had a tenant: one answered, two refused before the pipeline.
  BOOST_TEST(metrics.body.find("llmgate_chat_errors_total{tenant=\"acme\"} 2\n") != std::string::npos);
  BOOST_TEST(metrics.body.find("llmgate_chat_requests_total{tenant=\"acme\",cache=\"miss\"} 1\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_metrics_token_comes_from_the_admin_section) {
  const auto config = gateway_config::from_json(boost::json::parse(R"({
    "models": ["m"], "backends": [{"name": "demo", "kind": "demo"}], "tenants": [{"name": "acme", "api_key": "k"}],
    "admin": {"api_key": "admin-key", "metrics_token": "scraper-token"}})"));
  BOOST_TEST(config.admin.metrics_token == "scraper-token");
  BOOST_TEST(config.admin.api_key == "admin-key");
  const access_keys keys(config.tenants, config.admin);
  const auto asking = [&](std::string_view authorization) {
    http_request request(boost::beast::http::verb::get, "/metrics", 11);
    request.set(boost::beast::http::field::authorization, authorization);
    return keys.metrics(request);
  };
  BOOST_TEST(asking("Bearer scraper-token"));
  BOOST_TEST(asking("Bearer admin-key"));
  BOOST_TEST(!asking("Bearer scraper"));
  BOOST_TEST(!asking(""));
  BOOST_TEST(!keys.admin([] {  // the token opens /metrics only
    http_request request(boost::beast::http::verb::get, "/admin/stats", 11);
    request.set(boost::beast::http::field::authorization, "Bearer scraper-token");
    return request;
  }()));
}

BOOST_AUTO_TEST_SUITE_END()
