// POST /v1/messages end to end over real sockets, in front of an in-test
// OpenAI-compatible upstream: Anthropic's Messages form read and answered
// (whole and streamed), the upstream asked in OpenAI's form, the caches
// shared with /v1/chat/completions (gateway_routes_test checks what every
// chat route must of the caches), the key taken from x-api-key, and errors as Anthropic's error objects with
// its types.
#include <string>   // std::string
#include <utility>  // std::pair
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "llmgate/server/gateway.hpp"
#include "demo_gateway.hpp"  // upstream_config
#include "gateway_client.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;
namespace http = boost::beast::http;

const std::string chat_path = "/v1/chat/completions";

// A Messages request sent as Anthropic's SDK sends it: the key as x-api-key.
http_reply messages(const gateway& server, const std::string& body, const std::string& key = "key-acme") {
  return call(server.port(), http::verb::post, "/v1/messages", body, {},
              {{"x-api-key", key}, {"anthropic-version", "2023-06-01"}});
}

const std::string question =
    R"({"model":"test-model","max_tokens":64,"system":"Be brief.",)"
    R"("messages":[{"role":"user","content":"What is the capital of France?"}]})";

// The event names of an Anthropic stream, in order.
std::vector<std::string> event_names(const std::string& body) {
  std::vector<std::string> names;
  for (std::size_t at = 0; (at = body.find("event: ", at)) != std::string::npos; at += 7)
    names.push_back(body.substr(at + 7, body.find('\n', at) - at - 7));
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_messages_test)

BOOST_AUTO_TEST_CASE(a_question_is_answered_as_a_message_and_asked_upstream_in_openais_form) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris.", {.prompt_tokens = 30, .completion_tokens = 3, .cached_prompt_tokens = 10}));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  const http_reply reply = messages(server, question);
  BOOST_TEST_REQUIRE(reply.status == 200u);
  BOOST_TEST(reply.header("content-type") == "application/json");
  BOOST_TEST(reply.header("x-llmgate-cache") == "miss");
  const json::value message = reply.json();
  BOOST_TEST(std::string(message.at("id").as_string()).starts_with("msg_llmgate-"));
  BOOST_TEST(json::serialize(message.at("content")) == R"([{"type":"text","text":"Paris."}])");
  BOOST_TEST(message.at("type") == "message");
  BOOST_TEST(message.at("role") == "assistant");
  BOOST_TEST(message.at("model") == "test-model");
  BOOST_TEST(message.at("stop_reason") == "end_turn");
  BOOST_TEST(json::serialize(message.at("usage")) ==
             R"({"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":3})");

  BOOST_TEST_REQUIRE(upstream.requests(chat_path) == 1u);
  const json::value asked = upstream.received().front().json();
  BOOST_TEST(json::serialize(asked.at("messages")) ==
             R"([{"role":"system","content":"Be brief."},{"role":"user","content":"What is the capital of France?"}])");
  BOOST_TEST(asked.at("max_tokens") == 64);
}

BOOST_AUTO_TEST_CASE(both_routes_share_the_caches_entries) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris."));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  BOOST_TEST_REQUIRE(messages(server, question).status == 200u);
  const http_reply openai = call(server.port(), http::verb::post, chat_path,
                                 R"({"model":"test-model","max_tokens":64,"messages":[)"
                                 R"({"role":"system","content":"Be brief."},)"
                                 R"({"role":"user","content":"What is the capital of France?"}]})",
                                 "key-acme");
  BOOST_TEST_REQUIRE(openai.status == 200u);
  BOOST_TEST(openai.header("x-llmgate-cache") == "exact");
  BOOST_TEST(openai.json().at("choices").at(0).at("message").at("content") == "Paris.");
  const http_reply again = messages(server, question);
  BOOST_TEST(again.header("x-llmgate-cache") == "exact");
  BOOST_TEST(json::serialize(again.json().at("content")) == R"([{"type":"text","text":"Paris."}])");
  BOOST_TEST(upstream.requests(chat_path) == 1u);
}

BOOST_AUTO_TEST_CASE(a_stream_is_answered_as_anthropics_events) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat_stream({"Par", "is."}, {.prompt_tokens = 12, .completion_tokens = 2}));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  std::string body = question;
  body.insert(1, R"("stream":true,)");
  const http_reply reply = messages(server, body);
  BOOST_TEST_REQUIRE(reply.status == 200u);
  BOOST_TEST(reply.header("content-type") == "text/event-stream");
  const std::vector<std::string> expected = {"message_start",       "ping",          "content_block_start",
                                             "content_block_delta", "content_block_delta", "content_block_stop",
                                             "message_delta",       "message_stop"};
  BOOST_TEST(event_names(reply.body) == expected, boost::test_tools::per_element());
  const std::vector<std::string> data = reply.events();
  BOOST_TEST_REQUIRE(data.size() == expected.size());
  BOOST_TEST(data[3] == R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Par"}})");
  BOOST_TEST(data[4] == R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"is."}})");
  BOOST_TEST(data[6] ==
             R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
             R"("usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}})");
  // The stream's answer was stored whole: the repeat is a hit, streamed alike.
  const http_reply repeat = messages(server, body);
  BOOST_TEST(repeat.header("x-llmgate-cache") == "exact");
  BOOST_TEST(event_names(repeat.body).back() == "message_stop");
  BOOST_TEST(upstream.requests(chat_path) == 1u);
}

BOOST_AUTO_TEST_CASE(errors_are_anthropics_error_objects) {
  upstream_server upstream;
  upstream.on(chat_path, reply::openai_error(500, "server_error", "internal", "upstream broke"));
  upstream.start();
  auto config = upstream_config(upstream.url("/v1"));
  config.limits.max_body_bytes = 4096;
  gateway server(std::move(config));
  server.start();

  const http_reply no_max = messages(server, R"({"model":"test-model","messages":[{"role":"user","content":"x"}]})");
  BOOST_TEST(no_max.status == 400u);
  BOOST_TEST(no_max.body ==
             R"({"type":"error","error":{"type":"invalid_request_error","message":"Missing required parameter: 'max_tokens'."}})");
  const http_reply unknown = messages(server, R"({"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]})");
  BOOST_TEST(unknown.status == 404u);
  BOOST_TEST(unknown.body ==
             R"({"type":"error","error":{"type":"not_found_error","message":"The model `nope` does not exist or you do not have access to it."}})");
  const http_reply failed = messages(server, question);
  BOOST_TEST(failed.status >= 500u);
  BOOST_TEST(failed.json().at("type") == "error");
  BOOST_TEST(failed.json().at("error").at("type") == "api_error");
  // The gateway's own refusals, before the handler, are in Anthropic's form too.
  const http_reply no_key = messages(server, question, "wrong-key");
  BOOST_TEST(no_key.status == 401u);
  BOOST_TEST(no_key.json().at("error").at("type") == "authentication_error");
  const std::string long_question = std::string(8192, 'x');
  const http_reply too_large = messages(server, R"({"model":"test-model","max_tokens":5,"messages":[{"role":"user","content":")" +
                                                    long_question + R"("}]})");
  BOOST_TEST(too_large.status == 413u);
  BOOST_TEST(too_large.body ==
             R"({"type":"error","error":{"type":"request_too_large","message":"The request body is larger than 4096 bytes."}})");
  const http_reply wrong_method = call(server.port(), http::verb::get, "/v1/messages", {}, "key-acme");
  BOOST_TEST(wrong_method.status == 405u);
  BOOST_TEST(wrong_method.json().at("error").at("type") == "invalid_request_error");
  BOOST_TEST(wrong_method.json().at("type") == "error");
  // Chat completions' refusals stay OpenAI's.
  BOOST_TEST(call(server.port(), http::verb::post, chat_path, question, "wrong-key").json().at("error").at("code") ==
             "invalid_api_key");
}

BOOST_AUTO_TEST_SUITE_END()
