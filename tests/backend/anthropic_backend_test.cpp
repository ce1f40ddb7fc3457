// anthropic_backend against the in-test upstream: the request translated to
// the Messages API, whole and streamed answers with tool use, usage with
// cache reads and writes counted and priced as such, error events.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/backend/anthropic_backend.hpp"
#include "backend_fixture.hpp"

using llmgate::anthropic_backend;
using llmgate::backend_error;
using llmgate::errc;
using llmgate::token_usage;
using llmgate::test::backend_fixture;
using llmgate::test::chunk_log;
using llmgate::test::reply;
using llmgate::test::user_says;
namespace json = boost::json;

namespace {

const std::string messages_path = "/v1/messages";

struct anthropic_fixture : backend_fixture {
  anthropic_backend backend() {
    auto prices = std::make_shared<llmgate::price_table>();
    prices->set("claude-3-5-sonnet", {.input = 3, .cached_input = 0.3, .cache_write = 3.75, .output = 15});
    return anthropic_backend(client(), {.base_url = server.url(), .api_key = "sk-ant", .prices = prices});
  }
};

std::string event(std::string_view type, std::string_view data) {
  return "event: " + std::string(type) + "\ndata: " + std::string(data) + "\n\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(anthropic_backend_test)

BOOST_FIXTURE_TEST_CASE(request_is_translated_to_the_messages_api, anthropic_fixture) {
  server.on(messages_path, reply::json(json::parse(R"({"id":"msg_1","type":"message","role":"assistant",
      "model":"claude-3-5-sonnet-20241022","content":[{"type":"text","text":"Bonjour"}],
      "stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":4,
      "cache_creation_input_tokens":100,"cache_read_input_tokens":1000}})")));
  auto request = llmgate::parse_chat_request(json::parse(R"({"model":"claude-3-5-sonnet",
      "messages":[{"role":"system","content":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}]},
                  {"role":"user","content":"Hi"},
                  {"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
                  {"role":"tool","tool_call_id":"t1","content":"42"}],
      "temperature":0.5,"stop":"END","presence_penalty":1,
      "tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]})"));
  auto model = backend();
  const auto answer = run(model.complete(request));

  BOOST_TEST(answer.content == "Bonjour");
  BOOST_TEST(answer.finish_reason == "stop");
  BOOST_TEST((answer.usage == token_usage{1120, 4, 1000, 100}));
  BOOST_TEST(answer.cost_usd == (20 * 3 + 1000 * 0.3 + 100 * 3.75 + 4 * 15) / 1e6,
             boost::test_tools::tolerance(1e-12));

  const auto sent = server.received().at(0);
  BOOST_TEST(sent.header("x-api-key") == "sk-ant");
  BOOST_TEST(sent.header("anthropic-version") == "2023-06-01");
  const auto body = sent.json().as_object();
  BOOST_TEST(body.at("system").at(0).at("cache_control").at("type").as_string() == "ephemeral");
  BOOST_TEST(body.at("messages").as_array().size() == 3u);
  BOOST_TEST(body.at("messages").at(1).at("content").at(0).at("type").as_string() == "tool_use");
  BOOST_TEST(body.at("messages").at(1).at("content").at(0).at("input").at("x").as_int64() == 1);
  BOOST_TEST(body.at("messages").at(2).at("content").at(0).at("tool_use_id").as_string() == "t1");
  BOOST_TEST(body.at("max_tokens").to_number<int>() == 4096);
  BOOST_TEST(body.at("stop_sequences").at(0).as_string() == "END");
  BOOST_TEST(body.at("tools").at(0).at("input_schema").at("type").as_string() == "object");
  BOOST_TEST(!body.contains("presence_penalty"));
}

BOOST_FIXTURE_TEST_CASE(stream_events_become_chunks_with_usage_and_tool_calls, anthropic_fixture) {
  reply stream{.headers = {{"Content-Type", "text/event-stream"}}};
  stream.chunks = {
      event("message_start", R"({"type":"message_start","message":{"id":"msg_2","model":"claude-3-5-sonnet","usage":{"input_tokens":25,"cache_read_input_tokens":2000,"cache_creation_input_tokens":0,"output_tokens":1}}})"),
      event("ping", R"({"type":"ping"})"),
      event("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
      event("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}})"),
      event("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"check."}})"),
      event("content_block_stop", R"({"type":"content_block_stop","index":0})"),
      event("content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}})"),
      event("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}})"),
      event("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Oslo\"}"}})"),
      event("content_block_stop", R"({"type":"content_block_stop","index":1})"),
      event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":31}})"),
      event("message_stop", R"({"type":"message_stop"})")};
  server.on(messages_path, stream);
  auto model = backend();
  chunk_log log;
  const auto answer = run(model.stream(user_says("weather in Oslo?"), log.handler()));
  BOOST_TEST(log.text() == "Let me check.");
  BOOST_TEST(answer.content == "Let me check.");
  BOOST_TEST(answer.id == "msg_2");
  BOOST_TEST(answer.finish_reason == "tool_calls");
  BOOST_TEST((answer.usage == token_usage{2025, 31, 2000, 0}));
  const auto calls = json::parse(answer.tool_calls_json).as_array();
  BOOST_REQUIRE(calls.size() == 1u);
  BOOST_TEST(calls[0].at("id").as_string() == "toolu_1");
  BOOST_TEST(calls[0].at("function").at("arguments").as_string() == R"({"city": "Oslo"})");
  BOOST_TEST(server.received().at(0).json().at("stream").as_bool());
}

BOOST_FIXTURE_TEST_CASE(error_event_and_error_status_keep_anthropic_s_error, anthropic_fixture) {
  reply stream{.headers = {{"Content-Type", "text/event-stream"}}};
  stream.chunks = {event("error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")};
  server.enqueue(messages_path, stream);
  auto model = backend();
  chunk_log log;
  try {
    run(model.stream(user_says("x"), log.handler()));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.upstream_error().at("type").as_string() == "overloaded_error");
    BOOST_TEST(e.retryable());
  }
  server.enqueue(messages_path, reply::json(json::parse(
      R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}})"), 400));
  try {
    run(model.complete(user_says("x")));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.status() == 400u);
    BOOST_TEST(!e.retryable());
    BOOST_TEST(e.upstream_error().at("message").as_string() == "max_tokens: too large");
  }
}

BOOST_FIXTURE_TEST_CASE(stream_without_message_stop_is_a_protocol_error, anthropic_fixture) {
  reply stream{.headers = {{"Content-Type", "text/event-stream"}}};
  stream.chunks = {event("message_start", R"({"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}})")};
  server.on(messages_path, stream);
  auto model = backend();
  chunk_log log;
  try {
    run(model.stream(user_says("x"), log.handler()));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.code() == errc::upstream_protocol_error);
  }
}

BOOST_AUTO_TEST_SUITE_END()
