// The gateway's three chat routes (/v1/chat/completions, /v1/messages,
// /v1/responses) end to end over real sockets, in front of an in-test
// OpenAI-compatible upstream: what every route must get right about the
// caches (an answer never served to a request with another tool policy or
// output format; only a complete, successful answer stored: never a stream
// cut short, an error or a filtered answer); and each other API's own form:
// /v1/messages (Anthropic's Message, its events, the key as x-api-key, its
// error objects, also for the gateway's 401, 405 and 413) and
// /v1/responses (a response object, the Responses events, refusals of what
// a stateless gateway cannot do), each asking the upstream in OpenAI's form
// and sharing the caches' entries with the others.
#include <algorithm>  // std::unique
#include <string>     // std::string
#include <vector>     // std::vector

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

const std::string messages_question =
    R"({"model":"test-model","max_tokens":64,"system":"Be brief.",)"
    R"("messages":[{"role":"user","content":"What is the capital of France?"}]})";

// One of the gateway's chat routes: a question (with optional extra
// members) in its form, and the text of its answers.
struct route {
  std::string name;  // its path

  // A request asking `question`, streamed or not, with `extra` members
  // (",\"tools\":...", in the route's form).
  std::string body(const std::string& question, bool stream = false, const std::string& extra = {}) const {
    const std::string streamed = stream ? R"("stream":true,)" : "";
    if (name == "/v1/messages")
      return "{" + streamed + R"("model":"test-model","max_tokens":64,"messages":[{"role":"user","content":")" +
             question + "\"}]" + extra + "}";
    if (name == "/v1/responses")
      return "{" + streamed + R"("model":"test-model","max_output_tokens":64,"input":")" + question + "\"" + extra + "}";
    return "{" + streamed + R"("model":"test-model","max_tokens":64,"messages":[{"role":"user","content":")" +
           question + "\"}]" + extra + "}";
  }

  http_reply ask(const gateway& server, const std::string& request_body) const {
    return call(server.port(), http::verb::post, name, request_body, "key-acme");
  }

  // The text of a whole answer.
  std::string text(const http_reply& reply) const {
    const json::value answer = reply.json();
    if (name == "/v1/messages") return std::string(answer.at("content").at(0).at("text").as_string());
    if (name == "/v1/responses") return std::string(answer.at("output").at(0).at("content").at(0).at("text").as_string());
    return std::string(answer.at("choices").at(0).at("message").at("content").as_string());
  }

  // Whether a whole answer is a call of the tool.
  bool calls_tool(const http_reply& reply) const {
    const json::value answer = reply.json();
    if (name == "/v1/messages") return answer.at("stop_reason") == "tool_use";
    if (name == "/v1/responses") return answer.at("output").at(0).at("type") == "function_call";
    return answer.at("choices").at(0).at("finish_reason") == "tool_calls";
  }

  // A streamed answer's tool call, assembled as the route's clients do:
  // "<call id> <name> <arguments>".
  std::string streamed_tool_call(const http_reply& reply) const {
    std::string call_id, function, arguments;
    for (const std::string& data : reply.events()) {
      if (data == "[DONE]") continue;
      const json::value event = json::parse(data);
      const auto text = [](const json::value& v) { return std::string(v.as_string()); };
      if (name == "/v1/messages") {
        if (event.at("type") == "content_block_start" && event.at("content_block").at("type") == "tool_use") {
          call_id = text(event.at("content_block").at("id"));
          function = text(event.at("content_block").at("name"));
        } else if (event.at("type") == "content_block_delta" && event.at("delta").at("type") == "input_json_delta") {
          arguments += text(event.at("delta").at("partial_json"));
        }
      } else if (name == "/v1/responses") {
        if (event.at("type") == "response.output_item.added" && event.at("item").at("type") == "function_call") {
          call_id = text(event.at("item").at("call_id"));
          function = text(event.at("item").at("name"));
        } else if (event.at("type") == "response.function_call_arguments.delta") {
          arguments += text(event.at("delta"));
        }
      } else if (!event.at("choices").as_array().empty()) {
        const auto* calls = event.at("choices").at(0).at("delta").as_object().if_contains("tool_calls");
        if (!calls) continue;
        const json::object& call = calls->at(0).as_object();
        if (const auto* id = call.if_contains("id")) call_id = text(*id);
        const json::object& called = call.at("function").as_object();
        if (const auto* named = called.if_contains("name")) function = text(*named);
        if (const auto* more = called.if_contains("arguments")) arguments += text(*more);
      }
    }
    return call_id + " " + function + " " + arguments;
  }

  // Whether a stream's body ends as the route says an answer broke off.
  bool broke_off(const http_reply& reply) const {
    const std::vector<std::string> data = reply.events();
    if (data.empty()) return false;
    if (name == "/v1/messages") return json::parse(data.back()).at("type") == "error";
    if (name == "/v1/responses") return json::parse(data.back()).at("type") == "response.failed";
    return data.back() != "[DONE]" && json::parse(data.back()).as_object().contains("error");
  }
};

const std::vector<route> routes = {{"/v1/chat/completions"}, {"/v1/messages"}, {"/v1/responses"}};

// A question for each route, on topics far apart, so that none is a
// semantic hit for another.
const std::vector<std::string> unrelated_questions = {"How do bees make honey?", "Who wrote Hamlet?",
                                                      "At what temperature does water boil?"};

// The weather tool in each route's form, and tool_choice `choice` ("auto"
// or "none").
std::string tool_policy(const route& r, const std::string& choice) {
  if (r.name == "/v1/messages")
    return R"(,"tools":[{"name":"weather","input_schema":{"type":"object"}}],"tool_choice":{"type":")" + choice + "\"}";
  if (r.name == "/v1/responses")
    return R"(,"tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}],"tool_choice":")" + choice +
           "\"";
  return R"(,"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}],"tool_choice":")" +
         choice + "\"";
}

// A JSON output format in each route's form.
std::string json_format(const route& r) {
  if (r.name == "/v1/responses") return R"(,"text":{"format":{"type":"json_object"}})";
  if (r.name == "/v1/messages") return R"(,"response_format":{"type":"json_object"})";  // passed through as it is
  return R"(,"response_format":{"type":"json_object"})";
}

// The event names of a stream of named events (Anthropic's, the Responses API's), in order.
std::vector<std::string> event_names(const std::string& body) {
  std::vector<std::string> names;
  for (std::size_t at = 0; (at = body.find("event: ", at)) != std::string::npos; at += 7)
    names.push_back(body.substr(at + 7, body.find('\n', at) - at - 7));
  return names;
}

// An upstream answer that calls the weather tool.
reply tool_call_reply() {
  return reply::json(json::parse(R"({"id":"c","object":"chat.completion","created":1700000000,"model":"test-model",
      "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
      "tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}}]}}],
      "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_routes_test)

BOOST_AUTO_TEST_CASE(an_answer_is_never_served_to_a_request_with_another_tool_policy_or_output_format) {
  // The upstream calls the tool unless tool_choice is "none"; it answers
  // JSON where asked for it.
  upstream_server upstream;
  upstream.on(chat_path, [](const received_request& request) {
    const json::object asked = request.json().as_object();
    if (asked.contains("response_format")) return reply::chat(R"({"sky":"sunny"})");
    const auto* choice = asked.if_contains("tool_choice");
    if (choice && *choice == "none") return reply::chat("Without tools: sunny.");
    if (choice) return tool_call_reply();
    return reply::chat("Plain: sunny.");
  });
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  for (const route& r : routes) {
    BOOST_TEST_CONTEXT(r.name) {
      // Only the first route's requests reach the upstream; through the
      // others, each policy finds its own answer, never another's.
      const http_reply with_tools = r.ask(server, r.body("Weather?", false, tool_policy(r, "auto")));
      const http_reply without = r.ask(server, r.body("Weather?", false, tool_policy(r, "none")));
      const http_reply plain = r.ask(server, r.body("Weather?"));
      const http_reply as_json = r.ask(server, r.body("Weather?", false, json_format(r)));
      BOOST_TEST(r.calls_tool(with_tools));
      BOOST_TEST(!r.calls_tool(without));
      BOOST_TEST(r.text(without) == "Without tools: sunny.");
      BOOST_TEST(r.text(plain) == "Plain: sunny.");
      BOOST_TEST(r.text(as_json) == R"({"sky":"sunny"})");
      const std::string expected_cache = &r == &routes.front() ? "miss" : "exact";
      for (const http_reply* reply : {&with_tools, &without, &plain, &as_json})
        BOOST_TEST(reply->header("x-llmgate-cache") == expected_cache);
    }
  }
  BOOST_TEST(upstream.requests(chat_path) == 4u);
}

BOOST_AUTO_TEST_CASE(a_streamed_tool_call_is_replayed_from_the_cache_in_the_same_shape) {
  // The upstream streams the call's arguments in two pieces.
  upstream_server upstream;
  std::vector<std::string> data;
  for (const char* deltas :
       {R"([{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":""}}])",
        R"([{"index":0,"function":{"arguments":"{\"town\":"}}])", R"([{"index":0,"function":{"arguments":"\"Oslo\"}"}}])"}) {
    llmgate::chat_chunk chunk;
    chunk.tool_call_deltas_json = deltas;
    data.push_back(llmgate::chunk_body(chunk, "chatcmpl-test", "test-model", 1700000000));
  }
  llmgate::chat_chunk end;
  end.finish_reason = "tool_calls";
  end.usage = llmgate::token_usage{10, 5, 0, 0};
  data.push_back(llmgate::chunk_body(end, "chatcmpl-test", "test-model", 1700000000));
  data.push_back("[DONE]");
  upstream.on(chat_path, reply::sse(data));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  for (std::size_t i = 0; i < routes.size(); ++i) {
    const route& r = routes[i];
    BOOST_TEST_CONTEXT(r.name) {
      const std::string body = r.body(unrelated_questions[i], true, tool_policy(r, "auto"));
      const http_reply fresh = r.ask(server, body);
      const http_reply replayed = r.ask(server, body);
      BOOST_TEST(fresh.header("x-llmgate-cache") == "miss");
      BOOST_TEST(replayed.header("x-llmgate-cache") == "exact");
      BOOST_TEST(r.streamed_tool_call(fresh) == R"(call_1 weather {"town":"Oslo"})");
      BOOST_TEST(r.streamed_tool_call(replayed) == R"(call_1 weather {"town":"Oslo"})");
      // The same events, but for how many pieces the arguments came in.
      std::vector<std::string> fresh_names = event_names(fresh.body), replayed_names = event_names(replayed.body);
      fresh_names.erase(std::unique(fresh_names.begin(), fresh_names.end()), fresh_names.end());
      replayed_names.erase(std::unique(replayed_names.begin(), replayed_names.end()), replayed_names.end());
      BOOST_TEST(replayed_names == fresh_names, boost::test_tools::per_element());
    }
  }
  BOOST_TEST(upstream.requests(chat_path) == 3u);
}

BOOST_AUTO_TEST_CASE(a_stream_cut_short_is_never_stored) {
  upstream_server upstream;
  llmgate::chat_chunk first;
  first.content_delta = "The ";
  reply cut = reply::sse({llmgate::chunk_body(first, "chatcmpl-test", "test-model", 1700000000)});
  cut.reset_after_chunks = true;  // the upstream's connection breaks before the answer ends
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  for (std::size_t i = 0; i < routes.size(); ++i) {
    const route& r = routes[i];
    BOOST_TEST_CONTEXT(r.name) {
      const std::string& question = unrelated_questions[i];
      const std::size_t before = upstream.requests(chat_path);
      upstream.enqueue(chat_path, cut);
      const http_reply broken = r.ask(server, r.body(question, true));
      BOOST_TEST(broken.status == 200u);  // the stream had begun
      BOOST_TEST(r.broke_off(broken));
      upstream.enqueue(chat_path, reply::chat_stream({"The ", "answer."}));
      const http_reply whole = r.ask(server, r.body(question, true));
      BOOST_TEST(whole.header("x-llmgate-cache") == "miss");  // nothing of the broken answer was kept
      BOOST_TEST(!r.broke_off(whole));
      BOOST_TEST(upstream.requests(chat_path) == before + 2);
      const http_reply repeat = r.ask(server, r.body(question, true));
      BOOST_TEST(repeat.header("x-llmgate-cache") == "exact");  // the whole one was
      BOOST_TEST(upstream.requests(chat_path) == before + 2);
    }
  }
}

BOOST_AUTO_TEST_CASE(errors_and_filtered_answers_are_never_stored) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("The answer."));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  llmgate::chat_response filtered;
  filtered.id = "chatcmpl-test";
  filtered.model = "test-model";
  filtered.content = "The";
  filtered.finish_reason = "content_filter";
  filtered.created = 1700000000;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const route& r = routes[i];
    BOOST_TEST_CONTEXT(r.name) {
      const std::string& question = unrelated_questions[i];
      const std::size_t before = upstream.requests(chat_path);
      upstream.enqueue(chat_path, reply::openai_error(500, "server_error", "internal", "upstream broke"));
      const http_reply failed = r.ask(server, r.body(question));
      BOOST_TEST(failed.status == 502u);
      BOOST_TEST(failed.json().at("error").at("type") == (r.name == "/v1/messages" ? "api_error" : "upstream_error"));
      upstream.enqueue(chat_path, reply::json(json::parse(llmgate::completion_body(filtered))));
      const http_reply cut_by_filter = r.ask(server, r.body(question));
      BOOST_TEST(cut_by_filter.status == 200u);
      BOOST_TEST(cut_by_filter.header("x-llmgate-cache") == "miss");
      const http_reply answered = r.ask(server, r.body(question));
      BOOST_TEST(answered.header("x-llmgate-cache") == "miss");  // neither the error nor the filtered answer was kept
      BOOST_TEST(r.text(answered) == "The answer.");
      BOOST_TEST(r.ask(server, r.body(question)).header("x-llmgate-cache") == "exact");
      BOOST_TEST(upstream.requests(chat_path) == before + 3);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_question_is_answered_as_a_message_and_asked_upstream_in_openais_form) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris.", {.prompt_tokens = 30, .completion_tokens = 3, .cached_prompt_tokens = 10}));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  const http_reply reply = messages(server, messages_question);
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

BOOST_AUTO_TEST_CASE(a_question_through_messages_shares_the_entries_of_chat_completions) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris."));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();

  BOOST_TEST_REQUIRE(messages(server, messages_question).status == 200u);
  const http_reply openai = call(server.port(), http::verb::post, chat_path,
                                 R"({"model":"test-model","max_tokens":64,"messages":[)"
                                 R"({"role":"system","content":"Be brief."},)"
                                 R"({"role":"user","content":"What is the capital of France?"}]})",
                                 "key-acme");
  BOOST_TEST_REQUIRE(openai.status == 200u);
  BOOST_TEST(openai.header("x-llmgate-cache") == "exact");
  BOOST_TEST(openai.json().at("choices").at(0).at("message").at("content") == "Paris.");
  const http_reply again = messages(server, messages_question);
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

  std::string body = messages_question;
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

BOOST_AUTO_TEST_CASE(messages_errors_are_anthropics_error_objects) {
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
  const http_reply failed = messages(server, messages_question);
  BOOST_TEST(failed.status >= 500u);
  BOOST_TEST(failed.json().at("type") == "error");
  BOOST_TEST(failed.json().at("error").at("type") == "api_error");
  // The gateway's own refusals, before the handler, are in Anthropic's form too.
  const http_reply no_key = messages(server, messages_question, "wrong-key");
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
  BOOST_TEST(call(server.port(), http::verb::post, chat_path, messages_question, "wrong-key").json().at("error").at("code") ==
             "invalid_api_key");
}

BOOST_AUTO_TEST_CASE(a_question_through_responses_is_answered_as_a_response_and_shares_the_caches_entries) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris.", {.prompt_tokens = 30, .completion_tokens = 3, .cached_prompt_tokens = 10}));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();
  const route responses{"/v1/responses"};
  const std::string question =
      R"({"model":"test-model","instructions":"Be brief.","input":"What is the capital of France?","max_output_tokens":64})";

  const http_reply reply = responses.ask(server, question);
  BOOST_TEST_REQUIRE(reply.status == 200u);
  BOOST_TEST(reply.header("x-llmgate-cache") == "miss");
  const json::value response = reply.json();
  const std::string id(response.at("id").as_string());
  BOOST_TEST(id.starts_with("resp_llmgate-"));
  BOOST_TEST(response.at("object") == "response");
  BOOST_TEST(response.at("status") == "completed");
  BOOST_TEST(response.at("model") == "test-model");
  BOOST_TEST(json::serialize(response.at("output")) ==
             R"([{"id":"msg_)" + id.substr(5) +
                 R"(","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Paris.","annotations":[]}]}])");
  BOOST_TEST(json::serialize(response.at("usage")) ==
             R"({"input_tokens":30,"input_tokens_details":{"cached_tokens":10},"output_tokens":3,)"
             R"("output_tokens_details":{"reasoning_tokens":0},"total_tokens":33})");
  const json::value asked = upstream.received().front().json();
  BOOST_TEST(json::serialize(asked.at("messages")) ==
             R"([{"role":"system","content":"Be brief."},{"role":"user","content":"What is the capital of France?"}])");
  BOOST_TEST(asked.at("max_tokens") == 64);

  // The same question through the other two routes is an exact hit.
  const http_reply chat = call(server.port(), http::verb::post, chat_path,
                               R"({"model":"test-model","max_tokens":64,"messages":[)"
                               R"({"role":"system","content":"Be brief."},)"
                               R"({"role":"user","content":"What is the capital of France?"}]})",
                               "key-acme");
  BOOST_TEST(chat.header("x-llmgate-cache") == "exact");
  const http_reply message = call(server.port(), http::verb::post, "/v1/messages",
                                  R"({"model":"test-model","max_tokens":64,"system":"Be brief.",)"
                                  R"("messages":[{"role":"user","content":"What is the capital of France?"}]})",
                                  "key-acme");
  BOOST_TEST(message.header("x-llmgate-cache") == "exact");
  BOOST_TEST(upstream.requests(chat_path) == 1u);

  // Streamed, from the cache: the Responses events, the text as it was.
  std::string streamed = question;
  streamed.insert(1, R"("stream":true,)");
  const http_reply stream = responses.ask(server, streamed);
  BOOST_TEST(stream.header("content-type") == "text/event-stream");
  BOOST_TEST(stream.header("x-llmgate-cache") == "exact");
  const std::vector<std::string> expected = {
      "response.created",         "response.in_progress",      "response.output_item.added",
      "response.content_part.added", "response.output_text.delta", "response.output_text.done",
      "response.content_part.done",  "response.output_item.done",  "response.completed"};
  BOOST_TEST(event_names(stream.body) == expected, boost::test_tools::per_element());
  const json::value completed = json::parse(stream.events().back());
  BOOST_TEST(completed.at("response").at("output").at(0).at("content").at(0).at("text") == "Paris.");
  BOOST_TEST(completed.at("sequence_number") == 8);
  BOOST_TEST(upstream.requests(chat_path) == 1u);
}

BOOST_AUTO_TEST_CASE(responses_errors_are_openai_error_objects_naming_the_field) {
  upstream_server upstream;
  upstream.on(chat_path, reply::chat("Paris."));
  upstream.start();
  gateway server(upstream_config(upstream.url("/v1")));
  server.start();
  const route responses{"/v1/responses"};

  const http_reply chained =
      responses.ask(server, R"({"model":"test-model","input":"And Spain?","previous_response_id":"resp_1"})");
  BOOST_TEST(chained.status == 400u);
  const json::value error = chained.json().at("error");
  BOOST_TEST(error.at("param") == "previous_response_id");
  BOOST_TEST(error.at("code") == "unsupported_parameter");
  BOOST_TEST(error.at("type") == "invalid_request_error");
  const http_reply unknown = responses.ask(server, R"({"model":"nope","input":"x"})");
  BOOST_TEST(unknown.status == 404u);
  BOOST_TEST(unknown.json().at("error").at("code") == "model_not_found");
  BOOST_TEST(responses.ask(server, R"({"model":"test-model"})").json().at("error").at("param") == "input");
  BOOST_TEST(call(server.port(), http::verb::post, "/v1/responses", R"({"model":"test-model","input":"x"})", "wrong-key")
                 .status == 401u);
  BOOST_TEST(upstream.requests(chat_path) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
