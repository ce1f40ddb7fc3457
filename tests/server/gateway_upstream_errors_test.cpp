// What a client of the gateway sees when the upstream fails or refuses,
// end to end over real sockets with in-test upstreams: an upstream's 4xx
// keeps its status and error object and is sent to no other backend, a
// context overflow is 400 context_length_exceeded in any server's words,
// other failures are 502 (429 with Retry-After) with messages that name
// no URL or backend, which go to the log instead; an answer names the
// model the client asked for, never the upstream's; a pooled backend's
// replica that is down gets nothing while it rests, and x-llmgate-backend
// and /metrics name the replica; and a burst then a quiet longer than the
// upstream's idle timeout costs no request.
#include <chrono>  // std::chrono
#include <cstdio>  // std::tmpfile, std::rewind, std::fgetc
#include <future>  // std::async
#include <memory>  // std::unique_ptr
#include <string>  // std::string
#include <thread>  // std::this_thread::sleep_for
#include <vector>  // std::vector

#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "llmgate/server/gateway.hpp"
#include "demo_gateway.hpp"  // upstream_config
#include "gateway_client.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
using namespace std::chrono_literals;
namespace json = boost::json;

const std::string chat_path = "/v1/chat/completions";

const char* const llama_overflow =
    R"({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                  "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}})";

// "test-model": primary, then spare; "solo": primary alone; "limited":
// primary without retries; "gone": a port nothing listens on.
struct errors_fixture {
  errors_fixture() {
    primary.start();
    spare.on(chat_path, reply::chat("from the spare"));
    spare.start();
    gateway_config config;
    config.listen.port = 0;
    config.listen.threads = 1;
    config.backends = {{.name = "primary", .base_url = primary.url("/v1"), .retries = 2},
                       {.name = "spare", .base_url = spare.url("/v1"), .retries = 0},
                       {.name = "primary-once", .base_url = primary.url("/v1"), .retries = 0},
                       {.name = "gone", .base_url = "http://127.0.0.1:1/v1", .retries = 0}};
    config.models = {{.name = "test-model", .backends = {"primary", "spare"}},
                     {.name = "solo", .backends = {"primary"}},
                     {.name = "limited", .backends = {"primary-once"}},
                     {.name = "gone", .backends = {"gone"}}};
    config.tenants = {{"acme", "key-acme"}};
    config.log.requests = true;
    config.limits.request_timeout_ms = 5000;
    server = std::make_unique<gateway>(std::move(config), log);
    server->start();
  }
  ~errors_fixture() {
    server.reset();
    std::fclose(log);
  }

  http_reply ask(std::string_view model, bool stream = false) {
    return post(server->port(), chat_path, chat_body("How long is a piece of string?", stream, model), "key-acme");
  }

  std::string log_text() const {
    std::fflush(log);
    std::rewind(log);
    std::string text;
    for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
    return text;
  }

  std::FILE* log = std::tmpfile();
  upstream_server primary;
  upstream_server spare;
  std::unique_ptr<gateway> server;
};

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_upstream_errors_test)

BOOST_FIXTURE_TEST_CASE(an_upstream_4xx_keeps_its_status_and_goes_to_no_other_backend, errors_fixture) {
  primary.on(chat_path, reply::json(json::parse(R"({"error": {"message": "max_tokens must be an integer",
      "type": "invalid_request_error", "param": "max_tokens", "code": "invalid_type"}})"), 400));
  for (const bool stream : {false, true}) {
    const auto reply = ask("test-model", stream);
    BOOST_TEST(reply.status == 400u);
    BOOST_TEST(reply.header("content-type") == "application/json");
    const auto error = reply.json().at("error").as_object();
    BOOST_TEST(error.at("message").as_string() == "max_tokens must be an integer");
    BOOST_TEST(error.at("type").as_string() == "invalid_request_error");
    BOOST_TEST(error.at("param").as_string() == "max_tokens");
    BOOST_TEST(error.at("code").as_string() == "invalid_type");
    BOOST_TEST(error.size() == 4u);
  }
  BOOST_TEST(primary.requests(chat_path) == 2u);  // no retry
  BOOST_TEST(spare.requests(chat_path) == 0u);    // no fail-over

  primary.on(chat_path, reply::json(json::parse(R"({"detail": [{"msg": "field required"}]})"), 422));
  const auto unprocessable = ask("test-model");
  BOOST_TEST(unprocessable.status == 422u);
  BOOST_TEST(unprocessable.json().at("error").at("type").as_string() == "invalid_request_error");
  BOOST_TEST(unprocessable.json().at("error").at("code").is_null());
  BOOST_TEST(spare.requests(chat_path) == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_context_overflow_is_400_context_length_exceeded, errors_fixture) {
  primary.on(chat_path, reply::json(json::parse(llama_overflow), 400));
  for (const bool stream : {false, true}) {
    const auto reply = ask("test-model", stream);
    BOOST_TEST(reply.status == 400u);
    const auto error = reply.json().at("error").as_object();
    BOOST_TEST(error.at("code").as_string() == "context_length_exceeded");
    BOOST_TEST(error.at("type").as_string() == "invalid_request_error");
    BOOST_TEST(error.at("message").as_string() == "the request exceeds the available context size, try increasing it");
    BOOST_TEST(error.at("param").is_null());
  }
  // The same under a 500, which would otherwise have been retried.
  primary.on(chat_path, reply::json(json::parse(R"({"error": {"message": "prompt is too long: 215000 tokens > 200000 maximum"}})"), 500));
  BOOST_TEST(ask("test-model").status == 400u);
  BOOST_TEST(primary.requests(chat_path) == 3u);
  BOOST_TEST(spare.requests(chat_path) == 0u);
}

BOOST_FIXTURE_TEST_CASE(other_failures_are_502_naming_no_url_or_backend, errors_fixture) {
  primary.on(chat_path, reply::openai_error(500, "server_error", "", "model crashed"));
  const auto crashed = ask("limited");
  BOOST_TEST(crashed.status == 502u);
  BOOST_TEST(crashed.json().at("error").at("message").as_string() == "The upstream model server failed: HTTP 500: model crashed");
  BOOST_TEST(crashed.json().at("error").at("code").as_string() == "upstream_error");

  const auto gone = ask("gone");
  BOOST_TEST(gone.status == 502u);
  BOOST_TEST(gone.json().at("error").at("message").as_string() ==
             "The upstream model server failed: it could not be reached, or closed the connection.");
  BOOST_TEST(gone.json().at("error").at("code").as_string() == "upstream_unreachable");
  for (const auto* reply : {&crashed, &gone}) {
    BOOST_TEST(!contains(reply->body, "127.0.0.1"));
    BOOST_TEST(!contains(reply->body, "http"));
    BOOST_TEST(!contains(reply->body, "primary"));
    BOOST_TEST(!contains(reply->body, "gone:"));
  }
  // 502 after the retries, and the spare answers where there is one.
  BOOST_TEST(ask("solo").status == 502u);
  BOOST_TEST(primary.requests(chat_path) == 1u + 3u);
  const auto spared = ask("test-model");
  BOOST_TEST(spared.status == 200u);
  BOOST_TEST(spared.header("x-llmgate-backend") == "spare");

  // The details are in the log: the backend, and the URL of the one that could not be reached.
  const std::string log = log_text();
  BOOST_TEST(contains(log, R"("event":"backend_failure")"));
  BOOST_TEST(contains(log, R"("backend":"primary-once")"));
  BOOST_TEST(contains(log, "gone: POST http://127.0.0.1:1/v1/chat/completions"));
}

BOOST_FIXTURE_TEST_CASE(a_rate_limited_upstream_is_429_with_retry_after, errors_fixture) {
  primary.on(chat_path, reply::rate_limited(2500ms));
  const auto reply = ask("limited");
  BOOST_TEST(reply.status == 429u);
  BOOST_TEST(reply.header("retry-after") == "3");
  BOOST_TEST(reply.json().at("error").at("code").as_string() == "rate_limit_exceeded");
  BOOST_TEST(reply.json().at("error").at("type").as_string() == "rate_limit_error");
  BOOST_TEST(primary.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_stream_that_fails_midway_ends_with_the_same_error_object, errors_fixture) {
  llmgate::chat_chunk first;
  first.content_delta = "Forty";
  primary.on(chat_path, reply::sse({llmgate::chunk_body(first, "chatcmpl-1", "m", 1700000000),
                                    R"({"error": {"message": "the request exceeds the available context size", "type": "exceed_context_size_error"}})"}));
  const auto reply = ask("test-model", true);
  BOOST_TEST(reply.status == 200u);
  const auto events = reply.events();
  BOOST_REQUIRE(!events.empty());
  BOOST_TEST(events.back() != "[DONE]");
  const auto error = json::parse(events.back()).at("error").as_object();
  BOOST_TEST(error.at("code").as_string() == "context_length_exceeded");
  BOOST_TEST(error.at("message").as_string() == "the request exceeds the available context size");
  BOOST_TEST(!contains(reply.body, "primary"));
  BOOST_TEST(spare.requests(chat_path) == 0u);
}

BOOST_FIXTURE_TEST_CASE(an_answer_names_the_model_asked_for_not_the_upstreams, errors_fixture) {
  const std::string path_model = "/models/llama-3.2-1b-instruct-q4_k_m.gguf";  // what llama.cpp's server says
  primary.on(chat_path, [&](const received_request& request) {
    return request.json().at("stream").as_bool() ? reply::chat_stream({"Forty", "-two"}, {10, 5, 0, 0}, path_model)
                                                 : reply::chat("Forty-two", {10, 5, 0, 0}, path_model);
  });
  const auto whole = ask("solo");
  BOOST_TEST(whole.status == 200u);
  BOOST_TEST(whole.json().at("model").as_string() == "solo");
  BOOST_TEST(!contains(whole.body, "gguf"));

  const auto streamed = post(server->port(), chat_path, chat_body("Another question", true, "solo"), "key-acme");
  BOOST_TEST(streamed.streamed_text() == "Forty-two");
  for (const auto& event : streamed.events())
    if (event != "[DONE]") BOOST_TEST(json::parse(event).at("model").as_string() == "solo");
  BOOST_TEST(!contains(streamed.body, "gguf"));
  BOOST_TEST(ask("solo").json().at("model").as_string() == "solo");  // an exact hit, as stored
}

// The issue's case through the gateway: a burst of misses fills the pool,
// the upstream closes its idle connections, and the next requests all succeed.
BOOST_AUTO_TEST_CASE(a_pooled_replica_that_is_down_gets_nothing_while_it_rests) {
  upstream_server replica;
  replica.on(chat_path, reply::chat("from the replica"));
  replica.start();
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 2;  // two workers' pools share one replica_pool
  backend_config pool{.name = "pool", .retries = 0};
  pool.replicas = {{.name = "pool#0", .base_url = "http://127.0.0.1:1/v1"}, {.name = "pool#1", .base_url = replica.url("/v1")}};
  pool.balance.policy = "round_robin";
  config.backends = {pool};
  config.models = {{.name = "test-model", .backends = {"pool"}}};
  config.tenants = {{"acme", "key-acme"}};
  config.admin.api_key = "admin-key";
  gateway server(std::move(config));
  server.start();
  for (int i = 0; i < 3; ++i) {
    const auto answer = post(server.port(), chat_path, chat_body("Question " + std::to_string(i)), "key-acme");
    BOOST_TEST(answer.status == 200u);
    BOOST_TEST(answer.json().at("choices").at(0).at("message").at("content").as_string() == "from the replica");
    // The first request tried pool#0 (nothing listens there) and moved on.
    BOOST_TEST(answer.header("x-llmgate-backend") == "pool#1; round_robin");
  }
  BOOST_TEST(replica.requests(chat_path) == 3u);
  const auto metrics = get(server.port(), "/metrics", "admin-key").body;
  for (const char* line : {"llmgate_pool_replica_up{pool=\"pool\",replica=\"pool#0\"} 0\n",
                           "llmgate_pool_replica_up{pool=\"pool\",replica=\"pool#1\"} 1\n",
                           "llmgate_pool_replica_requests_total{pool=\"pool\",replica=\"pool#0\"} 1\n",
                           "llmgate_pool_replica_failures_total{pool=\"pool\",replica=\"pool#0\"} 1\n",
                           "llmgate_pool_replica_requests_total{pool=\"pool\",replica=\"pool#1\"} 3\n",
                           "llmgate_backend_calls_total{backend=\"pool#1\"} 3\n"})
    BOOST_TEST(metrics.find(line) != std::string::npos, line);
  const auto stats = get(server.port(), "/admin/stats", "admin-key").json();
  const auto& replicas = stats.at("pools").at("pool").as_array();
  BOOST_TEST(replicas.size() == 2u);
  BOOST_TEST(replicas.at(1).at("requests").to_number<std::uint64_t>() == 3u);  // parsed: an int64
  BOOST_TEST(replicas.at(0).at("up").as_bool() == false);
}

BOOST_AUTO_TEST_CASE(a_burst_then_quiet_past_the_upstreams_idle_timeout_costs_no_request) {
  upstream_server upstream;
  upstream.close_idle_after(1s);
  upstream.on(chat_path, [](const received_request&) {
    auto slow = reply::chat("ok");
    slow.first_byte_delay = 100ms;  // all four in flight at once
    return slow;
  });
  upstream.start();
  auto config = upstream_config(upstream.url("/v1"));
  config.semantic_cache.enabled = false;  // four different questions, each a miss
  gateway server(config, nullptr);
  server.start();
  const auto ask = [&](int i) {
    return post(server.port(), chat_path, chat_body("question " + std::to_string(i)), "key-acme");
  };
  std::vector<std::future<http_reply>> burst;
  for (int i = 0; i < 4; ++i) burst.push_back(std::async(std::launch::async, ask, i));
  for (auto& reply : burst) BOOST_TEST(reply.get().status == 200u);
  BOOST_TEST(upstream.connections() == 4u);

  std::this_thread::sleep_for(1300ms);
  for (int i = 4; i < 8; ++i) BOOST_TEST(ask(i).status == 200u);
  BOOST_TEST(upstream.connections() == 5u);
  BOOST_TEST(upstream.requests(chat_path) == 8u);
}

BOOST_AUTO_TEST_SUITE_END()
