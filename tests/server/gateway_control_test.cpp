// What a client controls of the gateway's caching, and what it saves, end
// to end over real sockets in front of an in-test upstream: identical
// concurrent misses answered by one upstream call (whole and streamed,
// never across tenants, a failure reaching every waiter alike), each
// Cache-Control directive and the cache namespace (as headers and as body
// fields, echoed in the response), and the W3C traceparent continued
// upstream and into the log.
#include <chrono>      // std::chrono
#include <cstdio>      // std::tmpfile
#include <functional>  // std::function
#include <future>      // std::async
#include <map>         // std::map
#include <set>         // std::set
#include <sstream>     // std::istringstream
#include <string>   // std::string
#include <thread>   // std::this_thread::sleep_for
#include <utility>  // std::pair
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "llmgate/pipeline/cached_answer.hpp"  // unix_seconds_now
#include "llmgate/pipeline/request_scope.hpp"  // scope_of, exact_text_of
#include "llmgate/server/gateway.hpp"
#include "demo_gateway.hpp"  // upstream_config, contents
#include "gateway_client.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
using namespace std::chrono_literals;
namespace json = boost::json;
namespace http = boost::beast::http;

const std::string chat_path = "/v1/chat/completions";
using header_list = std::vector<std::pair<std::string, std::string>>;

http_reply ask(const gateway& server, const std::string& body, const header_list& headers = {},
               const std::string& key = "key-acme") {
  return call(server.port(), http::verb::post, chat_path, body, key, headers);
}

std::string content_of(const http_reply& reply) {
  return std::string(reply.json().at("choices").at(0).at("message").at("content").as_string());
}

// The gateway (two workers, so that waiters meet across threads) in
// front of `upstream`, with tenants acme and globex; the log in `log`.
gateway_config two_tenants(const upstream_server& upstream) {
  auto config = upstream_config(upstream.url("/v1"));
  config.listen.threads = 2;
  config.tenants = {{"acme", "key-acme"}, {"globex", "key-globex"}};
  return config;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// Waits until the gateway's calls in flight have `waiting` requests.
bool waiting_for_calls(const gateway& server, std::uint64_t waiting) {
  for (int tries = 0; tries < 10'000; ++tries) {  // ten seconds at most: a broken run fails, not hangs
    const auto stats = get(server.port(), "/admin/stats", "admin-key").json();
    if (stats.at("coalescing").at("waiting").to_number<std::uint64_t>() == waiting) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// Sends `clients` identical requests at once, each from its own thread.
std::vector<http_reply> burst(const gateway& server, int clients, const std::string& body,
                              const std::function<std::string(int)>& key_of = [](int) { return "key-acme"; }) {
  std::vector<std::future<http_reply>> replies;
  for (int i = 0; i < clients; ++i)
    replies.push_back(std::async(std::launch::async, [&, i] { return ask(server, body, {}, key_of(i)); }));
  std::vector<http_reply> out;
  for (auto& reply : replies) out.push_back(reply.get());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_control_test)

BOOST_AUTO_TEST_CASE(fifty_identical_concurrent_misses_make_one_upstream_call) {
  upstream_server upstream;
  auto held = reply::chat("the one answer", {10, 5, 0, 0});
  held.hold = "burst";
  upstream.enqueue(chat_path, held);
  upstream.start();
  gateway server(two_tenants(upstream), nullptr);
  server.start();

  auto replies = std::async(std::launch::async, [&] { return burst(server, 50, chat_body("popular prompt")); });
  BOOST_TEST_REQUIRE(waiting_for_calls(server, 49));  // and one making the call
  upstream.release("burst");
  std::map<std::string, int> by_cache;
  for (const auto& reply : replies.get()) {
    BOOST_TEST(reply.status == 200u);
    BOOST_TEST(content_of(reply) == "the one answer");
    ++by_cache[reply.header("x-llmgate-cache")];
  }
  BOOST_TEST(upstream.requests(chat_path) == 1u);
  BOOST_TEST(by_cache["miss"] == 1);
  BOOST_TEST(by_cache["coalesced"] == 49);
  const auto metrics = get(server.port(), "/metrics", "admin-key").body;
  BOOST_TEST(metrics.find("llmgate_chat_requests_total{tenant=\"acme\",cache=\"coalesced\"} 49") != std::string::npos);
  const auto stats = get(server.port(), "/admin/stats", "admin-key").json();
  BOOST_TEST(stats.at("coalescing").at("coalesced").to_number<int>() == 49);
  BOOST_TEST(stats.at("total").at("coalesced").to_number<int>() == 49);
  BOOST_TEST(stats.at("total").at("calls_saved").to_number<int>() == 49);
  // The answer is stored once: the next request is an exact hit.
  BOOST_TEST(ask(server, chat_body("popular prompt")).header("x-llmgate-cache") == "exact");
}

BOOST_AUTO_TEST_CASE(fifty_streams_each_get_the_whole_stream) {
  upstream_server upstream;
  auto held = reply::chat_stream({"one ", "two ", "three"});
  held.hold = "burst";
  upstream.enqueue(chat_path, held);
  upstream.start();
  gateway server(two_tenants(upstream), nullptr);
  server.start();

  auto replies = std::async(std::launch::async, [&] { return burst(server, 50, chat_body("count", true)); });
  BOOST_TEST_REQUIRE(waiting_for_calls(server, 49));
  upstream.release("burst");
  for (const auto& reply : replies.get()) {
    BOOST_TEST(reply.status == 200u);
    BOOST_TEST(reply.streamed_text() == "one two three");
    BOOST_TEST(reply.events().back() == "[DONE]");
  }
  BOOST_TEST(upstream.requests(chat_path) == 1u);
}

BOOST_AUTO_TEST_CASE(different_tenants_are_never_coalesced) {
  upstream_server upstream;
  for (const char* name : {"acme", "globex"}) {
    auto held = reply::chat(std::string("for ") + name);
    held.hold = "burst";
    upstream.enqueue(chat_path, held);
  }
  upstream.start();
  gateway server(two_tenants(upstream), nullptr);
  server.start();

  auto replies = std::async(std::launch::async, [&] {
    return burst(server, 10, chat_body("same words"), [](int i) { return i % 2 ? "key-globex" : "key-acme"; });
  });
  BOOST_TEST_REQUIRE(waiting_for_calls(server, 8));  // and one making each tenant's call
  upstream.release("burst");
  std::map<std::string, std::set<std::string>> answers_by_key;
  const auto all = replies.get();
  for (int i = 0; i < 10; ++i) answers_by_key[i % 2 ? "globex" : "acme"].insert(content_of(all[i]));
  BOOST_TEST(upstream.requests(chat_path) == 2u);
  BOOST_TEST(answers_by_key["acme"].size() == 1u);  // one call each, each tenant's own answer
  BOOST_TEST(answers_by_key["globex"].size() == 1u);
  BOOST_TEST(*answers_by_key["acme"].begin() != *answers_by_key["globex"].begin());
}

BOOST_AUTO_TEST_CASE(an_upstream_failure_reaches_every_waiter_alike_and_is_not_stored) {
  upstream_server upstream;
  auto failing = reply::openai_error(500, "server_error", "internal", "the model crashed");
  failing.hold = "burst";
  upstream.enqueue(chat_path, failing);
  upstream.on(chat_path, reply::chat("recovered"));
  upstream.start();
  gateway server(two_tenants(upstream), nullptr);
  server.start();

  auto replies = std::async(std::launch::async, [&] { return burst(server, 20, chat_body("fragile")); });
  BOOST_TEST_REQUIRE(waiting_for_calls(server, 19));
  upstream.release("burst");
  const auto all = replies.get();
  for (const auto& reply : all) {
    BOOST_TEST(reply.status == all.front().status);
    BOOST_TEST(reply.json() == all.front().json());
  }
  BOOST_TEST(all.front().status == 502u);
  BOOST_TEST(upstream.requests(chat_path) == 1u);
  const auto next = ask(server, chat_body("fragile"));
  BOOST_TEST(content_of(next) == "recovered");
  BOOST_TEST(next.header("x-llmgate-cache") == "miss");
}

BOOST_AUTO_TEST_CASE(coalescing_can_be_switched_off) {
  upstream_server upstream;
  upstream.on(chat_path, [](const received_request&) {
    auto slow = reply::chat("each its own");
    slow.first_byte_delay = 200ms;  // all four in flight at once
    return slow;
  });
  upstream.start();
  auto config = two_tenants(upstream);
  config.exact_cache.coalesce = false;
  gateway server(config, nullptr);
  server.start();
  for (const auto& reply : burst(server, 4, chat_body("the same"))) BOOST_TEST(reply.header("x-llmgate-cache") == "miss");
  BOOST_TEST(upstream.requests(chat_path) == 4u);
}

BOOST_AUTO_TEST_CASE(no_cache_asks_upstream_and_stores_the_fresh_answer) {
  upstream_server upstream;
  upstream.enqueue(chat_path, reply::chat("first"));
  upstream.enqueue(chat_path, reply::chat("second"));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")), nullptr);
  server.start();
  BOOST_TEST(content_of(ask(server, chat_body("q"))) == "first");
  const auto fresh = ask(server, chat_body("q"), {{"Cache-Control", "no-cache"}});
  BOOST_TEST(content_of(fresh) == "second");
  BOOST_TEST(fresh.header("x-llmgate-cache") == "miss");
  BOOST_TEST(fresh.header("x-llmgate-cache-control") == "no-cache");
  const auto later = ask(server, chat_body("q"));
  BOOST_TEST(content_of(later) == "second");  // the fresh answer replaced the stored one
  BOOST_TEST(later.header("x-llmgate-cache") == "exact");
  BOOST_TEST(later.header("x-llmgate-cache-control") == "");
  BOOST_TEST(upstream.requests(chat_path) == 2u);
}

BOOST_AUTO_TEST_CASE(no_store_neither_serves_nor_stores) {
  upstream_server upstream;
  upstream.enqueue(chat_path, reply::chat("stored"));
  upstream.enqueue(chat_path, reply::chat("private one"));
  upstream.enqueue(chat_path, reply::chat("private two"));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")), nullptr);
  server.start();
  BOOST_TEST(content_of(ask(server, chat_body("q"))) == "stored");
  const auto one = ask(server, chat_body("q"), {{"Cache-Control", "no-store"}});
  BOOST_TEST(content_of(one) == "private one");
  BOOST_TEST(one.header("x-llmgate-cache-control") == "no-store");
  // As a body field, for clients that cannot set headers; not sent upstream.
  json::object body = json::parse(chat_body("fresh question")).as_object();
  body["llmgate_cache_control"] = "NO-STORE";
  BOOST_TEST(content_of(ask(server, json::serialize(body))) == "private two");
  BOOST_TEST(!upstream.received().back().json().as_object().contains("llmgate_cache_control"));
  BOOST_TEST(content_of(ask(server, chat_body("q"))) == "stored");  // the stored answer is still there
  upstream.on(chat_path, reply::chat("asked again"));
  const auto again = ask(server, chat_body("fresh question"));  // the no-store answer was not kept
  BOOST_TEST(again.header("x-llmgate-cache") == "miss");
  BOOST_TEST(upstream.requests(chat_path) == 4u);
}

BOOST_AUTO_TEST_CASE(max_age_serves_only_answers_younger_than_it) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("new"));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")), nullptr);
  server.start();
  // An answer stored 100 seconds ago, under the key the request below has.
  chat_request request{.model = "test-model", .messages = {{.role = "user", .content = "q"}}};
  auto old = std::make_shared<chat_response>(chat_response{.id = "x", .model = "test-model", .content = "old",
                                                            .finish_reason = "stop"});
  old->created = unix_seconds_now() - 100;
  server.exact().insert(server.exact().make_key(scope_of(request, "acme"), exact_text_of(request)), old);

  const auto young_enough = ask(server, chat_body("q"), {{"Cache-Control", "max-age=200"}});
  BOOST_TEST(content_of(young_enough) == "old");
  BOOST_TEST(young_enough.header("x-llmgate-cache") == "exact");
  BOOST_TEST(young_enough.header("x-llmgate-cache-control") == "max-age=200");
  const auto too_old = ask(server, chat_body("q"), {{"Cache-Control", "max-age=60"}});
  BOOST_TEST(content_of(too_old) == "new");
  BOOST_TEST(too_old.header("x-llmgate-cache") == "miss");
  BOOST_TEST(content_of(ask(server, chat_body("q"), {{"Cache-Control", "max-age=60"}})) == "new");  // stored now
  // A semantic neighbour is held to max-age as well.
  BOOST_TEST(ask(server, chat_body("What is the capital of France?")).header("x-llmgate-cache") == "miss");
  BOOST_TEST(ask(server, chat_body("what is the capital city of France")).header("x-llmgate-cache") == "semantic");
  const auto near_now = ask(server, chat_body("what is the capital city of France?"), {{"Cache-Control", "max-age=0"}});
  BOOST_TEST(near_now.header("x-llmgate-cache") == "miss");
  BOOST_TEST(upstream.requests(chat_path) == 3u);
}

BOOST_AUTO_TEST_CASE(a_namespace_partitions_the_tenants_cache) {
  upstream_server upstream;
  upstream.enqueue(chat_path, reply::chat("for team a"));
  upstream.enqueue(chat_path, reply::chat("for team b"));
  upstream.enqueue(chat_path, reply::chat("for no team"));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")), nullptr);
  server.start();
  const auto a = ask(server, chat_body("q"), {{"x-llmgate-cache-namespace", "team-a"}});
  BOOST_TEST(a.header("x-llmgate-cache-namespace") == "team-a");
  json::object body = json::parse(chat_body("q")).as_object();
  body["llmgate_cache_namespace"] = "team-b";
  BOOST_TEST(content_of(ask(server, json::serialize(body))) == "for team b");
  BOOST_TEST(!upstream.received().back().json().as_object().contains("llmgate_cache_namespace"));
  BOOST_TEST(content_of(ask(server, chat_body("q"))) == "for no team");
  const auto a_again = ask(server, chat_body("q"), {{"x-llmgate-cache-namespace", "team-a"}});
  BOOST_TEST(content_of(a_again) == "for team a");
  BOOST_TEST(a_again.header("x-llmgate-cache") == "exact");
  BOOST_TEST(upstream.requests(chat_path) == 3u);
}

BOOST_AUTO_TEST_CASE(unreadable_cache_settings_are_refused_by_name) {
  upstream_server upstream;
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")), nullptr);
  server.start();
  const auto refused = [&](const http_reply& reply, const std::string& param) {
    BOOST_TEST(reply.status == 400u);
    BOOST_TEST(reply.json().at("error").at("param").as_string() == param);
  };
  refused(ask(server, chat_body("q"), {{"Cache-Control", "max-age=soon"}}), "cache-control");
  refused(ask(server, chat_body("q"), {{"Cache-Control", "max-age=-1"}}), "cache-control");
  json::object body = json::parse(chat_body("q")).as_object();
  body["llmgate_cache_control"] = 60;
  refused(ask(server, json::serialize(body)), "llmgate_cache_control");
  refused(ask(server, chat_body("q"), {{"x-llmgate-cache-namespace", std::string(129, 'n')}}),
          "x-llmgate-cache-namespace");
  // Directives a cache of answers has no use for are ignored, as HTTP caches do.
  upstream.on(chat_path, reply::chat("ok"));
  BOOST_TEST(ask(server, chat_body("q"), {{"Cache-Control", "no-transform, stale-if-error=5"}}).status == 200u);
  BOOST_TEST(upstream.requests(chat_path) == 1u);
}

BOOST_AUTO_TEST_CASE(a_traceparent_is_continued_upstream_and_logged) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("traced"));
  upstream.start();
  std::FILE* log = std::tmpfile();
  auto config = upstream_config(upstream.url("/v1"));
  config.log.requests = true;
  gateway server(config, log);
  server.start();
  const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  BOOST_TEST(ask(server, chat_body("q"), {{"traceparent", "00-" + trace_id + "-00f067aa0ba902b7-01"},
                                          {"tracestate", "vendor=opaque"}})
                 .status == 200u);
  const auto sent = upstream.received().back();
  const std::string traceparent = sent.header("traceparent");
  BOOST_TEST_REQUIRE(traceparent.size() == 55u);
  BOOST_TEST(traceparent.substr(0, 36) == "00-" + trace_id + "-");
  const std::string gateway_span = traceparent.substr(36, 16);
  BOOST_TEST(gateway_span != "00f067aa0ba902b7");
  BOOST_TEST(traceparent.substr(52) == "-01");
  BOOST_TEST(sent.header("tracestate") == "vendor=opaque");

  // A malformed one (upper-case hex) begins a new trace.
  BOOST_TEST(ask(server, chat_body("other"), {{"traceparent", "00-" + std::string(32, 'A') + "-00f067aa0ba902b7-01"}})
                 .status == 200u);
  const std::string begun = upstream.received().back().header("traceparent");
  BOOST_TEST_REQUIRE(begun.size() == 55u);
  BOOST_TEST(begun.substr(3, 32) != std::string(32, 'A'));
  BOOST_TEST(begun.substr(52) == "-00");

  server.stop();
  std::vector<json::object> lines;
  for (const auto& line : split_lines(contents(log))) {
    const auto value = json::parse(line).as_object();
    if (value.contains("path") && value.at("path") == "/v1/chat/completions") lines.push_back(value);
  }
  BOOST_TEST_REQUIRE(lines.size() == 2u);
  BOOST_TEST(lines[0].at("trace_id").as_string() == trace_id);
  BOOST_TEST(lines[0].at("span_id").as_string() == gateway_span);
  BOOST_TEST(lines[0].at("parent_span_id").as_string() == "00f067aa0ba902b7");
  BOOST_TEST(lines[1].at("trace_id").as_string() == begun.substr(3, 32));
  BOOST_TEST(!lines[1].contains("parent_span_id"));
}

BOOST_AUTO_TEST_SUITE_END()
