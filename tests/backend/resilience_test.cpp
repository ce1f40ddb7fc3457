// Retries, fallbacks and the circuit breaker against the in-test upstream:
// what is retried and what is not, how long each wait is, that nothing is
// retried or failed over once a stream reached the caller, that a request
// the upstream refused as the client's mistake (a 400, a prompt over the
// context in any server's words) is neither retried, failed over nor held
// against the backend, and how the breaker opens, rejects, probes and closes.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "llmgate/backend/any_backend.hpp"
#include "llmgate/backend/circuit_breaker.hpp"
#include "llmgate/backend/fallback.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/retry.hpp"
#include "llmgate/backend/scripted_backend.hpp"
#include "backend_fixture.hpp"

using namespace std::chrono_literals;
using llmgate::any_backend;
using llmgate::backend_error;
using llmgate::circuit_breaker_backend;
using llmgate::circuit_state;
using llmgate::errc;
using llmgate::fallback_backend;
using llmgate::openai_backend;
using llmgate::retry_policy;
using llmgate::retrying_backend;
using llmgate::test::backend_fixture;
using llmgate::test::chunk_log;
using llmgate::test::reply;
using llmgate::test::user_says;
using clock_type = std::chrono::steady_clock;

namespace {

const std::string chat_path = "/v1/chat/completions";

// Quick, deterministic waits, so that the tests measure the policy.
const retry_policy fast{.max_attempts = 3, .initial_backoff = 20ms, .multiplier = 2,
                        .max_backoff = 1s, .jitter = 0, .max_retry_after = 2s};

struct resilience_fixture : backend_fixture {
  openai_backend adapter(std::string name = "primary") {
    return openai_backend(client({.first_byte_timeout = 2s, .idle_timeout = 2s}),
                          {.name = name, .base_url = server.url("/v1")});
  }

  template <class Call>
  backend_error failure(Call call) {
    try {
      call();
    } catch (const backend_error& e) {
      return e;
    }
    BOOST_FAIL("expected a backend_error");
    throw;
  }
};

double milliseconds_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(resilience_test)

BOOST_AUTO_TEST_CASE(backoff_grows_is_capped_and_jittered_within_bounds) {
  const backend_error server_error(errc::upstream_error, "boom", {.status = 500, .retryable = true});
  const retry_policy policy{.max_attempts = 10, .initial_backoff = 100ms, .multiplier = 2,
                            .max_backoff = 1s, .jitter = 0.5};
  BOOST_TEST(policy.delay(1, server_error, 0.0)->count() == 100);
  BOOST_TEST(policy.delay(3, server_error, 0.0)->count() == 400);
  BOOST_TEST(policy.delay(8, server_error, 0.0)->count() == 1000);  // capped
  BOOST_TEST(policy.delay(3, server_error, 0.999)->count() >= 200);  // jitter takes at most half
  BOOST_TEST(!policy.delay(10, server_error, 0.0));                   // attempts used up

  const backend_error asked(errc::upstream_error, "slow down",
                            {.status = 429, .retryable = true, .retry_after = 1500ms});
  BOOST_TEST(policy.delay(1, asked, 0.7)->count() == 1500);  // exactly what the server asked
  const backend_error too_long(errc::upstream_error, "later",
                               {.status = 429, .retryable = true, .retry_after = 5min});
  BOOST_TEST(!policy.delay(1, too_long, 0.0));
  const backend_error bad_input(errc::upstream_error, "bad", {.status = 400});
  BOOST_TEST(!policy.delay(1, bad_input, 0.0));
}

BOOST_AUTO_TEST_CASE(retry_delays_are_read_from_every_header_providers_send) {
  using llmgate::detail::retry_delay;
  const auto now = std::chrono::system_clock::from_time_t(1714564800);  // 2024-05-01T12:00:00Z
  const auto delay = [&](std::vector<std::pair<std::string, std::string>> headers) {
    llmgate::http::fields fields;
    for (const auto& [name, value] : headers) fields.set(name, value);
    const auto found = retry_delay(fields, now);
    return found ? found->count() : -1;
  };
  BOOST_TEST(delay({{"retry-after-ms", "1250"}, {"Retry-After", "9"}}) == 1250);
  BOOST_TEST(delay({{"Retry-After", "3"}}) == 3000);
  BOOST_TEST(delay({{"Retry-After", "Wed, 01 May 2024 12:00:30 GMT"}}) == 30000);
  BOOST_TEST(delay({{"Retry-After", "Wed, 01 May 2024 11:00:00 GMT"}}) == 0);  // already past
  BOOST_TEST(delay({{"x-ratelimit-remaining-tokens", "0"}, {"x-ratelimit-reset-tokens", "6m0s"}}) == 360000);
  BOOST_TEST(delay({{"x-ratelimit-remaining-requests", "0"}, {"x-ratelimit-reset-requests", "1.5s"}}) == 1500);
  BOOST_TEST(delay({{"x-ratelimit-remaining-requests", "5"}, {"x-ratelimit-reset-requests", "20ms"}}) == -1);
  BOOST_TEST(delay({{"anthropic-ratelimit-requests-remaining", "0"},
                    {"anthropic-ratelimit-requests-reset", "2024-05-01T12:00:05Z"}}) == 5000);
  BOOST_TEST(delay({{"Retry-After", "soon"}}) == -1);
}

BOOST_FIXTURE_TEST_CASE(rate_limit_is_retried_after_the_time_the_server_asked, resilience_fixture) {
  server.on(chat_path, reply::chat("finally"));
  server.enqueue(chat_path, reply::rate_limited(300ms));
  retrying_backend model(adapter(), fast);
  const auto started = clock_type::now();
  BOOST_TEST(run(model.complete(user_says("x"))).content == "finally");
  BOOST_TEST(milliseconds_since(started) >= 300);
  BOOST_TEST(server.requests(chat_path) == 2u);
}

BOOST_FIXTURE_TEST_CASE(retry_after_in_seconds_and_rate_limit_reset_headers_are_honoured, resilience_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto seconds = reply::openai_error(429, "requests", "rate_limit_exceeded", "slow down");
  seconds.headers.emplace_back("Retry-After", "1");
  server.enqueue(chat_path, seconds);
  auto reset = reply::openai_error(429, "tokens", "rate_limit_exceeded", "slow down");
  reset.headers = {{"x-ratelimit-remaining-requests", "12"}, {"x-ratelimit-reset-requests", "9s"},
                   {"x-ratelimit-remaining-tokens", "0"}, {"x-ratelimit-reset-tokens", "250ms"}};
  server.enqueue(chat_path, reset);
  retrying_backend model(adapter(), fast);
  const auto started = clock_type::now();
  BOOST_TEST(run(model.complete(user_says("x"))).content == "ok");
  BOOST_TEST(milliseconds_since(started) >= 1250);
  BOOST_TEST(milliseconds_since(started) < 5000);  // not the 9 s of the limit that was not hit
  BOOST_TEST(server.requests(chat_path) == 3u);
}

BOOST_FIXTURE_TEST_CASE(server_errors_are_retried_until_attempts_run_out, resilience_fixture) {
  server.on(chat_path, reply::openai_error(503, "server_error", "", "overloaded"));
  retrying_backend model(adapter(), fast);
  const auto started = clock_type::now();
  const auto e = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(e.status() == 503u);
  BOOST_TEST(server.requests(chat_path) == 3u);
  BOOST_TEST(milliseconds_since(started) >= 20 + 40);  // two backoffs
}

BOOST_FIXTURE_TEST_CASE(quota_and_input_errors_are_not_retried, resilience_fixture) {
  retrying_backend model(adapter(), fast);
  server.enqueue(chat_path, reply::openai_error(429, "insufficient_quota", "insufficient_quota", "quota"));
  BOOST_TEST(failure([&] { run(model.complete(user_says("x"))); }).status() == 429u);
  BOOST_TEST(server.requests(chat_path) == 1u);
  server.enqueue(chat_path, reply::openai_error(400, "invalid_request_error", "", "bad"));
  BOOST_TEST(failure([&] { run(model.complete(user_says("x"))); }).status() == 400u);
  BOOST_TEST(server.requests(chat_path) == 2u);
  server.enqueue(chat_path, reply::openai_error(401, "invalid_api_key", "invalid_api_key", "key"));
  BOOST_TEST(failure([&] { run(model.complete(user_says("x"))); }).status() == 401u);
  BOOST_TEST(server.requests(chat_path) == 3u);
}

BOOST_FIXTURE_TEST_CASE(a_stream_that_failed_before_its_first_chunk_is_retried, resilience_fixture) {
  server.on(chat_path, reply::chat_stream({"a", "b"}));
  server.enqueue(chat_path, reply::openai_error(500, "server_error", "", "boom"));
  // A comment, then a reset before any event.
  reply cut{.headers = {{"Content-Type", "text/event-stream"}}, .chunks = {": warming up\n\n"}};
  cut.reset_after_chunks = true;
  server.enqueue(chat_path, cut);
  retrying_backend model(adapter(), fast);
  chunk_log log;
  BOOST_TEST(run(model.stream(user_says("x"), log.handler())).content == "ab");
  BOOST_TEST(log.text() == "ab");
  BOOST_TEST(server.requests(chat_path) == 3u);
}

BOOST_FIXTURE_TEST_CASE(nothing_is_retried_or_failed_over_after_the_first_chunk, resilience_fixture) {
  auto cut = reply::chat_stream({"Hel", "lo", "!"});
  cut.chunks.resize(2);  // two pieces, then the connection is reset
  cut.reset_after_chunks = true;
  server.on(chat_path, cut);
  auto second = llmgate::scripted_backend::echo("second");
  fallback_backend<any_backend> model({retrying_backend(adapter(), fast), second});
  chunk_log log;
  const auto e = failure([&] { run(model.stream(user_says("x"), log.handler())); });
  BOOST_TEST(e.code() == errc::upstream_unreachable);
  BOOST_TEST(log.text() == "Hello");
  BOOST_TEST(server.requests(chat_path) == 1u);
  BOOST_TEST(second.calls() == 0u);
}

BOOST_FIXTURE_TEST_CASE(fallback_moves_to_the_next_backend_in_order, resilience_fixture) {
  server.on(chat_path, reply::openai_error(429, "insufficient_quota", "insufficient_quota", "quota"));
  auto second = llmgate::scripted_backend::echo("second");
  auto third = llmgate::scripted_backend::echo("third");
  fallback_backend<any_backend> model({adapter(), second, third});
  const auto answer = run(model.complete(user_says("hello")));
  BOOST_TEST(answer.backend == "second");
  BOOST_TEST(answer.content == "echo: hello");
  BOOST_TEST(third.calls() == 0u);

  chunk_log log;
  BOOST_TEST(run(model.stream(user_says("streamed"), log.handler())).backend == "second");
  BOOST_TEST(log.text() == "echo: streamed");
}

BOOST_FIXTURE_TEST_CASE(when_every_backend_fails_the_last_error_is_thrown, resilience_fixture) {
  server.on(chat_path, reply::openai_error(500, "server_error", "", "first is down"));
  auto down = llmgate::scripted_backend("down", [](const llmgate::chat_request&) -> llmgate::chat_response {
    throw backend_error(errc::upstream_unreachable, "down: connection refused",
                        {.backend = "down", .retryable = true});
  });
  fallback_backend<any_backend> model({adapter(), down});
  const auto e = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(e.backend() == "down");
  BOOST_TEST(server.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(breaker_opens_rejects_fast_probes_and_closes, resilience_fixture) {
  server.on(chat_path, reply::openai_error(503, "server_error", "", "down"));
  circuit_breaker_backend model(adapter(), {.failure_threshold = 3, .open_for = 200ms});
  for (int i = 0; i < 3; ++i) failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST((model.state() == circuit_state::open));

  const auto rejected = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(rejected.code() == errc::circuit_open);
  BOOST_TEST(rejected.retryable());
  BOOST_TEST(server.requests(chat_path) == 3u);  // the open circuit sent nothing

  std::this_thread::sleep_for(250ms);
  failure([&] { run(model.complete(user_says("x"))); });  // the probe fails: open again
  BOOST_TEST(server.requests(chat_path) == 4u);
  BOOST_TEST((model.state() == circuit_state::open));

  server.on(chat_path, reply::chat("back"));
  std::this_thread::sleep_for(250ms);
  BOOST_TEST(run(model.complete(user_says("x"))).content == "back");  // the probe succeeds
  BOOST_TEST((model.state() == circuit_state::closed));
}

BOOST_FIXTURE_TEST_CASE(input_errors_do_not_open_the_breaker, resilience_fixture) {
  server.on(chat_path, reply::openai_error(400, "invalid_request_error", "", "bad"));
  circuit_breaker_backend model(adapter(), {.failure_threshold = 2, .open_for = 10s});
  for (int i = 0; i < 5; ++i) failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST((model.state() == circuit_state::closed));
  BOOST_TEST(server.requests(chat_path) == 5u);
}

BOOST_FIXTURE_TEST_CASE(an_open_breaker_sends_a_fallback_list_on_at_once, resilience_fixture) {
  server.on(chat_path, reply::openai_error(500, "server_error", "", "down"));
  circuit_breaker_backend primary(adapter(), {.failure_threshold = 1, .open_for = 10s});
  fallback_backend<any_backend> model({primary, llmgate::scripted_backend::echo("spare")});
  for (int i = 0; i < 4; ++i) BOOST_TEST(run(model.complete(user_says("x"))).backend == "spare");
  BOOST_TEST(server.requests(chat_path) == 1u);
}

// A client's mistake fails the same way anywhere: no retry, no next backend.
BOOST_FIXTURE_TEST_CASE(client_errors_are_neither_retried_nor_failed_over, resilience_fixture) {
  for (const unsigned status : {400u, 413u, 422u}) {
    server.on(chat_path, reply::openai_error(status, "invalid_request_error", "", "max_tokens must be an integer"));
    auto second = llmgate::scripted_backend::echo("second");
    fallback_backend<any_backend> model({retrying_backend(adapter(), fast), second});
    const std::size_t before = server.requests(chat_path);
    const auto e = failure([&] { run(model.complete(user_says("x"))); });
    BOOST_TEST(e.status() == status);
    BOOST_TEST(e.client_error());
    BOOST_TEST(e.client_status() == status);
    BOOST_TEST(e.backend() == "primary");
    chunk_log log;
    BOOST_TEST(failure([&] { run(model.stream(user_says("x"), log.handler())); }).status() == status);
    BOOST_TEST(server.requests(chat_path) - before == 2u);  // one each, no retry
    BOOST_TEST(second.calls() == 0u);
  }
}

// 401, 403 and 404 are about the gateway's key and model name at that
// upstream, not the request: the next backend may serve it.
BOOST_FIXTURE_TEST_CASE(credential_and_model_errors_fail_over_without_retries, resilience_fixture) {
  for (const unsigned status : {401u, 403u, 404u}) {
    server.on(chat_path, reply::openai_error(status, "invalid_request_error", "", "no"));
    auto second = llmgate::scripted_backend::echo("second");
    fallback_backend<any_backend> model({retrying_backend(adapter(), fast), second});
    const std::size_t before = server.requests(chat_path);
    BOOST_TEST(run(model.complete(user_says("x"))).backend == "second");
    BOOST_TEST(server.requests(chat_path) - before == 1u);
    BOOST_TEST(second.calls() == 1u);
  }
}

BOOST_FIXTURE_TEST_CASE(context_overflow_is_recognised_in_every_servers_words, resilience_fixture) {
  const std::vector<reply> overflows = {
      // llama.cpp's server
      reply::json(boost::json::parse(R"({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}})"), 400),
      // OpenAI
      reply::openai_error(400, "invalid_request_error", "context_length_exceeded", "Input too long."),
      // vLLM, its error object at the top
      reply::json(boost::json::parse(R"({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", "type": "BadRequestError", "param": null, "code": 400})"), 400),
      // Anthropic's words, under a 5xx that would otherwise be retried
      reply::json(boost::json::parse(R"({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 215000 tokens > 200000 maximum"}})"), 500),
      // Ollama
      reply::json(boost::json::parse(R"({"error": "input length exceeds the context length"})"), 400)};
  for (const auto& overflow : overflows) {
    server.on(chat_path, overflow);
    auto second = llmgate::scripted_backend::echo("second");
    fallback_backend<any_backend> model({retrying_backend(adapter(), fast), second});
    const std::size_t before = server.requests(chat_path);
    const auto e = failure([&] { run(model.complete(user_says("x"))); });
    BOOST_TEST(e.context_overflow());
    BOOST_TEST(e.client_error());
    BOOST_TEST(!e.retryable());
    BOOST_TEST(e.client_status() == 400u);
    BOOST_TEST(e.upstream_error().at("code").as_string() == "context_length_exceeded");
    BOOST_TEST(e.upstream_error().at("type").as_string() == "invalid_request_error");
    BOOST_TEST(server.requests(chat_path) - before == 1u);
    BOOST_TEST(second.calls() == 0u);
  }
  server.on(chat_path, reply::openai_error(400, "invalid_request_error", "", "temperature must be a number"));
  const auto other = failure([&] { run(adapter().complete(user_says("x"))); });
  BOOST_TEST(!other.context_overflow());
  BOOST_TEST(other.upstream_error().at("code").as_string() == "");  // as the upstream sent it
  BOOST_TEST(other.client_status() == 400u);
}

// Reported inside a stream (status 0): still the client's, not the backend's health.
BOOST_FIXTURE_TEST_CASE(a_context_overflow_in_a_stream_does_not_open_the_breaker, resilience_fixture) {
  server.on(chat_path, reply::sse({R"({"error": {"message": "the request exceeds the available context size", "type": "exceed_context_size_error"}})"}));
  circuit_breaker_backend model(adapter(), {.failure_threshold = 2, .open_for = 10s});
  for (int i = 0; i < 4; ++i) {
    chunk_log log;
    const auto e = failure([&] { run(model.stream(user_says("x"), log.handler())); });
    BOOST_TEST(e.status() == 0u);
    BOOST_TEST(e.context_overflow());
  }
  BOOST_TEST((model.state() == circuit_state::closed));
  BOOST_TEST(server.requests(chat_path) == 4u);
}

BOOST_AUTO_TEST_SUITE_END()
