// openai_backend against the in-test upstream: whole and streamed answers,
// usage and cost exactly as reported, the include_usage chunk in every form
// servers send it, streams split at every byte, embeddings and models, and
// each error path as a typed backend_error.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/backend/openai_backend.hpp"
#include "backend_fixture.hpp"

using namespace std::chrono_literals;
using llmgate::backend_error;
using llmgate::chat_response;
using llmgate::errc;
using llmgate::openai_backend;
using llmgate::openai_options;
using llmgate::token_usage;
using llmgate::test::backend_fixture;
using llmgate::test::chunk_log;
using llmgate::test::reply;
using llmgate::test::user_says;
namespace json = boost::json;
namespace net = boost::asio;

namespace {

struct openai_fixture : backend_fixture {
  openai_backend backend(openai_options options = {}) {
    options.base_url = server.url("/v1");
    if (options.api_key.empty()) options.api_key = "sk-test";
    return openai_backend(client(http_options), std::move(options));
  }

  /// The error a call throws, as a backend_error.
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

  llmgate::http_client_options http_options{.first_byte_timeout = 2s, .idle_timeout = 2s};
};

const std::string chat_path = "/v1/chat/completions";

std::string usage_chunk(std::string_view choices) {
  return R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":)" +
         std::string(choices) +
         R"(,"usage":{"prompt_tokens":31,"completion_tokens":2,"total_tokens":33,)"
         R"("prompt_tokens_details":{"cached_tokens":17}}})";
}

std::string content_chunk(std::string_view text, std::string_view finish = "null") {
  return R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":")" +
         std::string(text) + R"("},"finish_reason":)" + std::string(finish) + "}]}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openai_backend_test)

BOOST_FIXTURE_TEST_CASE(complete_returns_content_usage_and_exact_cost, openai_fixture) {
  server.on(chat_path, reply::chat("Hello there", {1200, 30, 1024, 0}, "gpt-4o-mini-2024-07-18"));
  auto prices = std::make_shared<llmgate::price_table>();
  prices->set("gpt-4o-mini", {.input = 0.15, .cached_input = 0.075, .cache_write = 0.15, .output = 0.60});
  auto model = backend({.name = "primary", .prices = prices});

  auto request = user_says("Hi");
  llmgate::set_field(request.parameters, "temperature", "0.2");
  llmgate::set_field(request.parameters, "response_format", R"({"type":"json_object"})");
  const chat_response answer = run(model.complete(request));

  BOOST_TEST(answer.content == "Hello there");
  BOOST_TEST(answer.finish_reason == "stop");
  BOOST_TEST(answer.backend == "primary");
  BOOST_TEST(answer.model == "gpt-4o-mini-2024-07-18");
  BOOST_TEST(answer.usage.prompt_tokens == 1200u);
  BOOST_TEST(answer.usage.cached_prompt_tokens == 1024u);
  BOOST_TEST(answer.usage.completion_tokens == 30u);
  // 176 plain input tokens, 1024 cached ones at half price, 30 output tokens.
  BOOST_TEST(answer.cost_usd == (176 * 0.15 + 1024 * 0.075 + 30 * 0.60) / 1e6, boost::test_tools::tolerance(1e-12));

  const auto sent = server.received().at(0);
  BOOST_TEST(sent.method == "POST");
  BOOST_TEST(sent.header("Authorization") == "Bearer sk-test");
  const auto body = sent.json().as_object();
  BOOST_TEST(body.at("temperature").as_double() == 0.2);
  BOOST_TEST(body.at("response_format").at("type").as_string() == "json_object");
  BOOST_TEST(body.at("stream").as_bool() == false);
  BOOST_TEST(body.at("messages").at(0).at("content").as_string() == "Hi");
}

BOOST_FIXTURE_TEST_CASE(model_option_replaces_the_requested_model, openai_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = backend({.model = "llama-3"});
  run(model.complete(user_says("Hi", "gpt-4o")));
  BOOST_TEST(server.received().at(0).json().at("model").as_string() == "llama-3");
}

BOOST_FIXTURE_TEST_CASE(stream_delivers_chunks_then_the_assembled_answer, openai_fixture) {
  server.on(chat_path, reply::chat_stream({"Once", " upon", " a time"}, {12, 3, 8, 0}));
  auto model = backend();
  chunk_log log;
  const chat_response answer = run(model.stream(user_says("story"), log.handler()));

  BOOST_TEST(log.text() == "Once upon a time");
  BOOST_TEST(log.chunks.size() == 4u);  // three pieces, then usage
  BOOST_TEST(log.chunks.at(2).finish_reason.value_or("") == "stop");
  BOOST_TEST(log.chunks.back().usage.has_value());
  BOOST_TEST(answer.content == "Once upon a time");
  BOOST_TEST(answer.id == "chatcmpl-test");
  BOOST_TEST((answer.usage == token_usage{12, 3, 8, 0}));
  const auto body = server.received().at(0).json();
  BOOST_TEST(body.at("stream").as_bool());
  BOOST_TEST(body.at("stream_options").at("include_usage").as_bool());
}

BOOST_FIXTURE_TEST_CASE(usage_chunk_is_read_with_choices_empty_null_or_not_empty, openai_fixture) {
  for (const std::string choices : {"[]", "null",
                                    R"([{"index":0,"delta":{},"finish_reason":"stop"}])"}) {
    server.enqueue(chat_path, reply::sse({content_chunk("Hi", "\"stop\""), usage_chunk(choices), "[DONE]"}));
    auto model = backend();
    chunk_log log;
    const auto answer = run(model.stream(user_says("x"), log.handler()));
    BOOST_TEST_CONTEXT("choices " << choices) {
      BOOST_TEST(answer.content == "Hi");
      BOOST_TEST(answer.usage.prompt_tokens == 31u);
      BOOST_TEST(answer.usage.cached_prompt_tokens == 17u);
      BOOST_TEST(answer.finish_reason == "stop");
    }
  }
}

BOOST_FIXTURE_TEST_CASE(stream_split_at_every_byte_reads_the_same, openai_fixture) {
  auto whole = reply::sse({content_chunk("caf\\u00e9"), content_chunk(" ok", "\"stop\""),
                           usage_chunk("[]"), "[DONE]"});
  std::string bytes;
  for (const auto& chunk : whole.chunks) bytes += chunk;
  // The same bytes with \r\n line ends, one byte per HTTP chunk.
  std::string crlf;
  for (const char c : bytes) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  reply split = whole;
  split.chunks.clear();
  for (const char c : crlf) split.chunks.emplace_back(1, c);
  server.on(chat_path, split);

  auto model = backend();
  chunk_log log;
  const auto answer = run(model.stream(user_says("x"), log.handler()));
  BOOST_TEST(answer.content == "café ok");
  BOOST_TEST(answer.usage.completion_tokens == 2u);
}

BOOST_FIXTURE_TEST_CASE(tool_calls_stream_and_assemble, openai_fixture) {
  const std::string head = R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":)";
  server.on(chat_path, reply::sse({
      head + R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]})",
      head + R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]})",
      head + R"({"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":"tool_calls"}]})",
      "[DONE]"}));
  auto model = backend();
  chunk_log log;
  const auto answer = run(model.stream(user_says("weather?"), log.handler()));
  BOOST_TEST(answer.finish_reason == "tool_calls");
  const auto calls = json::parse(answer.tool_calls_json).as_array();
  BOOST_REQUIRE(calls.size() == 1u);
  BOOST_TEST(calls[0].at("id").as_string() == "call_1");
  BOOST_TEST(calls[0].at("function").at("name").as_string() == "get_weather");
  BOOST_TEST(calls[0].at("function").at("arguments").as_string() == R"({"city":"Paris"})");
}

BOOST_FIXTURE_TEST_CASE(error_status_keeps_the_upstream_error_object, openai_fixture) {
  server.on(chat_path, reply::openai_error(400, "invalid_request_error", "context_length_exceeded",
                                           "This model's maximum context length is 8192 tokens"));
  auto model = backend();
  const auto e = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(e.code() == errc::upstream_error);
  BOOST_TEST(e.status() == 400u);
  BOOST_TEST(!e.retryable());
  BOOST_TEST(e.upstream_error().at("code").as_string() == "context_length_exceeded");
  BOOST_TEST(e.error_object() == e.upstream_error());
  BOOST_TEST(std::string(e.what()).find("maximum context length") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(rate_limits_and_server_errors_are_retryable_quota_is_not, openai_fixture) {
  auto model = backend();
  server.enqueue(chat_path, reply::rate_limited(1500ms));
  auto limited = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(limited.status() == 429u);
  BOOST_TEST(limited.retryable());
  BOOST_TEST(limited.retry_after().value_or(0ms).count() == 1500);

  server.enqueue(chat_path, reply::openai_error(429, "insufficient_quota", "insufficient_quota", "You exceeded your quota"));
  BOOST_TEST(!failure([&] { run(model.complete(user_says("x"))); }).retryable());

  for (unsigned status : {500u, 502u, 503u}) {
    server.enqueue(chat_path, reply::openai_error(status, "server_error", "", "boom"));
    const auto e = failure([&] { run(model.complete(user_says("x"))); });
    BOOST_TEST(e.status() == status);
    BOOST_TEST(e.retryable());
  }
  server.enqueue(chat_path, {.status = 503, .headers = {{"Retry-After", "7"}}, .body = "<html>busy</html>"});
  const auto busy = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(busy.retry_after().value_or(0ms).count() == 7000);
  BOOST_TEST(busy.upstream_error().at("message").as_string() == "<html>busy</html>");
}

BOOST_FIXTURE_TEST_CASE(invalid_json_and_oversized_bodies_are_protocol_errors, openai_fixture) {
  auto model = backend();
  server.enqueue(chat_path, {.body = "{\"id\": "});
  BOOST_TEST(failure([&] { run(model.complete(user_says("x"))); }).code() == errc::upstream_protocol_error);
  server.enqueue(chat_path, reply::json(json::object{{"choices", "none"}}));
  BOOST_TEST(failure([&] { run(model.complete(user_says("x"))); }).code() == errc::upstream_protocol_error);

  http_options.max_body_bytes = 1024;
  auto small = backend();
  server.enqueue(chat_path, reply::chat(std::string(4096, 'x')));
  const auto e = failure([&] { run(small.complete(user_says("x"))); });
  BOOST_TEST(e.code() == errc::upstream_protocol_error);
  BOOST_TEST(!e.retryable());
}

BOOST_FIXTURE_TEST_CASE(malformed_and_truncated_streams_are_protocol_errors, openai_fixture) {
  auto model = backend();
  server.enqueue(chat_path, reply::sse({content_chunk("Hi"), "{not json"}));
  chunk_log log;
  BOOST_TEST(failure([&] { run(model.stream(user_says("x"), log.handler())); }).code() ==
             errc::upstream_protocol_error);
  BOOST_TEST(log.text() == "Hi");  // what came before the bad event was delivered

  server.enqueue(chat_path, reply::sse({content_chunk("Hi")}));  // no finish, no [DONE]
  BOOST_TEST(failure([&] { run(model.stream(user_says("x"), log.handler())); }).code() ==
             errc::upstream_protocol_error);

  server.enqueue(chat_path, reply::sse({content_chunk("Hi", "\"stop\"")}));  // finished, no [DONE]: fine
  BOOST_TEST(run(model.stream(user_says("x"), log.handler())).content == "Hi");

  server.enqueue(chat_path, reply::sse({R"({"error":{"message":"overloaded","type":"server_error"}})"}));
  const auto e = failure([&] { run(model.stream(user_says("x"), log.handler())); });
  BOOST_TEST(e.upstream_error().at("message").as_string() == "overloaded");
}

BOOST_FIXTURE_TEST_CASE(slow_first_byte_times_out, openai_fixture) {
  http_options.first_byte_timeout = 100ms;
  auto model = backend();
  auto slow = reply::chat("late");
  slow.first_byte_delay = 1s;
  server.on(chat_path, slow);
  const auto started = std::chrono::steady_clock::now();
  const auto e = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(e.code() == errc::upstream_timeout);
  BOOST_TEST(e.retryable());
  BOOST_TEST((std::chrono::steady_clock::now() - started < 900ms));
}

BOOST_FIXTURE_TEST_CASE(stalled_stream_times_out_when_idle, openai_fixture) {
  http_options.idle_timeout = 100ms;
  auto model = backend();
  auto slow = reply::sse({content_chunk("a"), content_chunk("b")});
  slow.chunk_delay = 500ms;  // the header comes at once, then nothing for 500 ms
  server.on(chat_path, slow);
  chunk_log log;
  BOOST_TEST(failure([&] { run(model.stream(user_says("x"), log.handler())); }).code() ==
             errc::upstream_timeout);
}

BOOST_FIXTURE_TEST_CASE(reset_mid_stream_is_reported_after_the_delivered_chunks, openai_fixture) {
  auto cut = reply::sse({content_chunk("Hel"), content_chunk("lo")});
  cut.reset_after_chunks = true;
  server.on(chat_path, cut);
  auto model = backend();
  chunk_log log;
  const auto e = failure([&] { run(model.stream(user_says("x"), log.handler())); });
  BOOST_TEST(e.code() == errc::upstream_unreachable);
  BOOST_TEST(log.text() == "Hello");
}

BOOST_FIXTURE_TEST_CASE(unreachable_server_is_a_retryable_error, openai_fixture) {
  const std::string url = server.url("/v1");
  server.stop();
  openai_backend model(client(), {.base_url = url});
  const auto e = failure([&] { run(model.complete(user_says("x"))); });
  BOOST_TEST(e.code() == errc::upstream_unreachable);
  BOOST_TEST(e.retryable());
  BOOST_TEST(e.status() == 0u);
  BOOST_TEST(e.error_object().at("code").as_string() == "upstream_unreachable");
}

BOOST_FIXTURE_TEST_CASE(connections_are_kept_alive_and_stale_ones_replaced, openai_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = backend();
  for (int i = 0; i < 5; ++i) run(model.complete(user_says("x")));
  BOOST_TEST(server.connections() == 1u);

  auto closing = reply::chat("bye");
  closing.close_silently = true;  // as a server whose keep-alive timeout passed
  server.enqueue(chat_path, closing);
  run(model.complete(user_says("x")));
  BOOST_TEST(run(model.complete(user_says("x"))).content == "ok");  // resent on a new connection
  BOOST_TEST(server.connections() == 2u);
  BOOST_TEST(server.requests(chat_path) == 7u);
}

BOOST_FIXTURE_TEST_CASE(cancellation_stops_a_stream, openai_fixture) {
  auto slow = reply::chat_stream({"a", "b", "c"});
  slow.chunk_delay = 300ms;
  server.on(chat_path, slow);
  auto model = backend();
  chunk_log log;
  net::cancellation_signal cancel;
  const auto request = user_says("x");  // outlives the coroutine, which holds a reference
  auto result = net::co_spawn(io, model.stream(request, log.handler()),
                              net::bind_cancellation_slot(cancel.slot(), net::use_future));
  net::steady_timer timer(io, 100ms);
  timer.async_wait([&](auto) { cancel.emit(net::cancellation_type::terminal); });
  io.restart();
  io.run();
  try {
    result.get();
    BOOST_FAIL("expected cancellation");
  } catch (const boost::system::system_error& e) {
    BOOST_TEST(e.code() == net::error::operation_aborted);
  }
  BOOST_TEST(log.chunks.empty());
}

BOOST_FIXTURE_TEST_CASE(embeddings_come_back_in_input_order, openai_fixture) {
  server.on("/v1/embeddings", reply::json(json::parse(R"({"object":"list","model":"text-embedding-3-small",
      "data":[{"object":"embedding","index":1,"embedding":[0.5,0.25]},
              {"object":"embedding","index":0,"embedding":[1,0]}],
      "usage":{"prompt_tokens":6,"total_tokens":6}})")));
  auto model = backend();
  const auto answer = run(model.embed({.model = "text-embedding-3-small", .input = {"first", "second"}, .parameters = {}}));
  BOOST_REQUIRE(answer.embeddings.size() == 2u);
  BOOST_TEST(answer.embeddings[0] == (std::vector<float>{1, 0}), boost::test_tools::per_element());
  BOOST_TEST(answer.embeddings[1] == (std::vector<float>{0.5f, 0.25f}), boost::test_tools::per_element());
  BOOST_TEST(answer.usage.prompt_tokens == 6u);
  BOOST_TEST(server.received().at(0).json().at("encoding_format").as_string() == "float");

  server.on("/v1/embeddings", reply::json(json::parse(R"({"data":[{"index":0,"embedding":[1]}]})")));
  BOOST_TEST(failure([&] { run(model.embed({.model = "m", .input = {"a", "b"}, .parameters = {}})); }).code() ==
             errc::upstream_protocol_error);
}

BOOST_FIXTURE_TEST_CASE(models_lists_the_server_s_ids, openai_fixture) {
  server.on("/v1/models", reply::json(json::parse(
      R"({"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"gpt-4o-mini","object":"model"}]})")));
  auto model = backend();
  BOOST_TEST(run(model.models()) == (std::vector<std::string>{"gpt-4o", "gpt-4o-mini"}),
             boost::test_tools::per_element());
  BOOST_TEST(server.received().at(0).method == "GET");
}

BOOST_AUTO_TEST_SUITE_END()
