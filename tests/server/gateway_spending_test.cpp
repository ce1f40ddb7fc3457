// Tenants' spending limits end to end over real sockets, on the offline
// demo backend (its usage and price are fixed: 20 prompt and 20 completion
// tokens for a short question, $0.000015) and a stopped spending clock, so
// that every figure is exact: the budget's 429 at its edge and its reset,
// the rate limits' 429s, what a cached answer is charged (nothing), the
// figures in /admin/stats, /metrics and the dashboard, and spending across
// a restart.
#include <chrono>   // std::chrono
#include <string>   // std::string
#include <utility>  // std::pair
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "../temporary_directory.hpp"
#include "llmgate/prompt/tokenizer.hpp"  // estimated_tokenizer
#include "llmgate/server/gateway.hpp"
#include "demo_gateway.hpp"  // demo_config
#include "gateway_client.hpp"
#include "headless_browser.hpp"  // rendered_dom, shows

namespace {

using namespace llmgate;
using namespace llmgate::test;
using namespace std::chrono;
using namespace std::chrono_literals;
namespace http = boost::beast::http;

// What the demo backend charges for a question of fewer than four characters.
constexpr double demo_cost = (0.15 * 20 + 0.60 * 20) / 1e6;

http_reply ask(const gateway& server, const std::string& question, const std::string& key = "key-acme") {
  return call(server.port(), http::verb::post, "/v1/chat/completions", chat_body(question), key);
}

gateway_config limited(spending_limits acme) {
  auto config = demo_config();
  config.tenants = {{"acme", "key-acme", std::move(acme)}, {"globex", "key-globex"}};
  return config;
}

spending_limits budget(double usd, std::string_view period) {
  return {.budget_usd = usd, .budget_period = spending_period::parse(period)};
}

wall_clock stopped(sys_seconds t) { return wall_clock::stopped_at(time_point_cast<system_clock::duration>(t)); }

gateway_parts parts(const wall_clock& clock) { return {.log = nullptr, .spending_clock = clock}; }

boost::json::value limit_stats(const gateway& server, std::string_view limit) {
  const auto stats = get(server.port(), "/admin/stats", "admin-key").json();
  return stats.at("spending").at("tenants").at(0).at("limits").at(limit);
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_spending_test)

BOOST_AUTO_TEST_CASE(a_budget_refuses_the_request_after_the_one_that_crossed_it_until_the_period_ends) {
  const auto clock = stopped(sys_days(2026y / November / 29) + 23h + 58min + 20s);
  gateway server(limited(budget(0.00004, "day")), parts(clock));
  server.start();
  for (const char* question : {"q1", "q2", "q3"})  // $0.000045: the third crosses the budget and is served
    BOOST_TEST_REQUIRE(ask(server, question).status == 200u);

  for (const char* question : {"q4", "q1"}) {  // a question the cache holds is refused too: limits come first
    const auto refused = ask(server, question);
    BOOST_TEST(refused.status == 429u);
    BOOST_TEST(refused.header("retry-after") == "100");
    BOOST_TEST(refused.header("x-llmgate-limit") == "budget");
    const auto error = refused.json().at("error");
    BOOST_TEST(error.at("type").as_string() == "insufficient_quota");
    BOOST_TEST(error.at("code").as_string() == "budget_exceeded");
    BOOST_TEST(error.at("message").as_string() ==
               "Tenant `acme` has spent $0.000045 of its budget of $0.00004 per day; the budget resets at "
               "2026-11-30T00:00:00Z.");
  }
  BOOST_TEST(ask(server, "q4", "key-globex").status == 200u);  // another tenant's spending is its own

  const auto budget_stats = limit_stats(server, "budget");
  BOOST_TEST(budget_stats.at("limit").to_number<double>() == 0.00004);
  BOOST_TEST(budget_stats.at("used").to_number<double>() == demo_cost + demo_cost + demo_cost);
  BOOST_TEST(budget_stats.at("period").as_string() == "day");
  BOOST_TEST(budget_stats.at("refusals").to_number<int>() == 2);
  const std::string metrics = get(server.port(), "/metrics", "admin-key").body;
  BOOST_TEST(has_line(metrics, "llmgate_tenant_limit{tenant=\"acme\",limit=\"budget\"} 4e-05"));
  BOOST_TEST(has_line(metrics, "llmgate_tenant_limit_refusals_total{tenant=\"acme\",limit=\"budget\"} 2"));
  BOOST_TEST(has_line(metrics, "# TYPE llmgate_tenant_limit_used gauge"));

  clock.advance(100s);  // midnight: the day's budget is whole again
  BOOST_TEST(ask(server, "q5").status == 200u);
  BOOST_TEST(limit_stats(server, "budget").at("used").to_number<double>() == demo_cost);
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_input_limit_is_refused_by_its_estimate) {
  const auto clock = stopped(sys_days(2026y / November / 29) + 10h);
  gateway server(limited({.input_tokens_per_minute = 30}), parts(clock));
  server.start();
  BOOST_TEST_REQUIRE(ask(server, "q1").status == 200u);  // 20 prompt tokens, as the call counted them
  BOOST_TEST(limit_stats(server, "input_tokens_per_minute").at("used").to_number<double>() == 20.0);

  const std::string question = "How many tokens does this rather longer question take, all told?";
  const auto estimate = estimated_tokenizer{}.count(question);
  BOOST_TEST_REQUIRE(estimate > 10u);  // more than the 10 left, less than the limit
  BOOST_TEST_REQUIRE(estimate <= 30u);
  auto refused = ask(server, question);
  BOOST_TEST(refused.status == 429u);
  BOOST_TEST(refused.header("x-llmgate-limit") == "input_tokens_per_minute");
  BOOST_TEST(refused.json().at("error").at("type").as_string() == "rate_limit_error");
  BOOST_TEST(refused.json().at("error").at("code").as_string() == "rate_limit_exceeded");
  BOOST_TEST(refused.json().at("error").at("message").as_string() ==
             "Tenant `acme` is at its limit of 30 input tokens per minute: 20 used in the last minute and this "
             "request's prompt is about " + std::to_string(estimate) + " more.");

  // A prompt larger than the limit itself can never pass: no Retry-After.
  const std::string longer(200, 'x');
  refused = ask(server, longer);
  BOOST_TEST(refused.status == 429u);
  BOOST_TEST(refused.header("retry-after") == "");
  BOOST_TEST(refused.json().at("error").at("message").as_string() ==
             "This request's prompt is about " + std::to_string(estimated_tokenizer{}.count(longer)) +
                 " input tokens, more than acme's limit of 30 input tokens per minute: it cannot pass as it is.");
}

BOOST_AUTO_TEST_CASE(the_minute_slides_and_a_cached_answer_costs_no_tokens) {
  const auto minute = sys_days(2026y / November / 29) + 10h;
  const auto clock = stopped(minute);
  gateway server(limited({.requests_per_minute = 5, .output_tokens_per_minute = 50}), parts(clock));
  server.start();
  BOOST_TEST_REQUIRE(ask(server, "q1").status == 200u);
  BOOST_TEST_REQUIRE(ask(server, "q1").status == 200u);  // an exact hit: a request, but no tokens
  BOOST_TEST(limit_stats(server, "output_tokens_per_minute").at("used").to_number<double>() == 20.0);
  BOOST_TEST(limit_stats(server, "requests_per_minute").at("used").to_number<double>() == 2.0);

  clock.advance(60s);  // the last minute counts in full at this one's start
  BOOST_TEST_REQUIRE(ask(server, "q2").status == 200u);  // 20 + 20 output tokens
  BOOST_TEST_REQUIRE(ask(server, "q3").status == 200u);  // 20 + 40 = 60: crossed
  const auto refused = ask(server, "q4");
  BOOST_TEST(refused.status == 429u);
  BOOST_TEST(refused.header("x-llmgate-limit") == "output_tokens_per_minute");
  // 40 in this minute and the last minute's 20 fading: under 50 once 20 * (1 - s/60) < 10, past 30 s.
  BOOST_TEST(refused.header("retry-after") == "31");
  BOOST_TEST(refused.json().at("error").at("message").as_string() ==
             "Tenant `acme` is at its limit of 50 output tokens per minute: 60 used in the last minute.");
  BOOST_TEST(limit_stats(server, "requests_per_minute").at("used").to_number<double>() == 4.0);  // q4 not counted

  clock.advance(31s);
  BOOST_TEST(ask(server, "q4").status == 200u);
}

BOOST_AUTO_TEST_CASE(spending_survives_a_restart_through_the_snapshot_directory) {
  temporary_directory directory;
  const auto clock = stopped(sys_days(2026y / November / 29) + 12h);
  auto config = limited(budget(0.00004, "month"));
  config.snapshot.directory = directory.path();
  {
    gateway server(config, parts(clock));
    server.start();
    BOOST_TEST_REQUIRE(ask(server, "q1").status == 200u);
    BOOST_TEST_REQUIRE(ask(server, "q2").status == 200u);
  }  // stopped: spending saved
  BOOST_TEST(std::filesystem::exists(directory / "spending.snapshot"));
  gateway server(config, parts(clock));
  server.start();
  BOOST_TEST(limit_stats(server, "budget").at("used").to_number<double>() == demo_cost + demo_cost);
  BOOST_TEST(ask(server, "q3").status == 200u);
  BOOST_TEST(ask(server, "q4").status == 429u);
}

// The dashboard in headless Chromium (skipped, saying so, without it):
// each limit's row with money to its significant digits, and the request
// that sent Cache-Control counted.
BOOST_AUTO_TEST_CASE(the_dashboard_shows_each_limit_and_the_cache_controlled_requests) {
  const auto clock = stopped(sys_days(2026y / November / 29) + 12h + 30s);
  auto acme = budget(0.00004, "day");
  acme.requests_per_minute = 10;
  gateway server(limited(acme), parts(clock));
  server.start();
  BOOST_TEST_REQUIRE(ask(server, "q1").status == 200u);
  BOOST_TEST_REQUIRE(call(server.port(), http::verb::post, "/v1/chat/completions", chat_body("q1"), "key-acme",
                          {{"Cache-Control", "no-store"}}).status == 200u);  // asks the model again

  const auto dom = rendered_dom("http://127.0.0.1:" + std::to_string(server.port()) + "/dashboard?key=admin-key");
  if (!dom) {
    BOOST_TEST_MESSAGE("skipped: no Chromium at /usr/bin/chromium (scripts/setup chromium installs it)");
    return;
  }
  BOOST_TEST(shows(*dom, "cache-controlled", "1"));
  BOOST_TEST(shows(*dom, "usd-spent", "$0.00003"));
  BOOST_TEST(dom->find("<tr data-limit=\"acme/budget\"><td>acme</td><td>budget</td><td>$0.00003</td>"
                       "<td>$0.00004</td><td>$0.00001</td><td>2026-11-30T00:00:00Z</td><td>0</td></tr>") !=
             std::string::npos);
  BOOST_TEST(dom->find("<tr data-limit=\"acme/requests_per_minute\"><td>acme</td><td>requests_per_minute</td>"
                       "<td>2</td><td>10</td><td>8</td><td>2026-11-29T12:01:00Z</td><td>0</td></tr>") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
