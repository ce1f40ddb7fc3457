// openai_responses_wire: a Responses API request read into the chat_request
// its chat-completions equivalent is (so the routes share cache entries),
// each translation and each refusal by the field at fault; answers written
// as the Responses API's response object and stream events, byte for byte.
#include <string>   // std::string
#include <utility>  // std::pair

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/test/unit_test.hpp>

#include "llmgate/chat/request_error.hpp"
#include "llmgate/pipeline/request_scope.hpp"  // scope_of, exact_text_of
#include "llmgate/wire/openai_responses_wire.hpp"
#include "llmgate/wire/openai_wire.hpp"
#include "read_request.hpp"  // field, refusal_of

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

chat_request responses_request(const char* body) { return parse_responses_request(json::parse(body)); }

std::pair<std::string, std::string> refusal(const char* body) {
  return refusal_of([](const json::value& request) { return parse_responses_request(request); }, body);
}

// The same cache scope and exact-cache text: the caches take one for the other.
void same_for_the_caches(const chat_request& a, const chat_request& b) {
  BOOST_TEST((scope_of(a, "acme") == scope_of(b, "acme")));
  BOOST_TEST(exact_text_of(a) == exact_text_of(b));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openai_responses_wire_test)

BOOST_AUTO_TEST_CASE(a_question_is_the_chat_request_of_its_chat_completions_equivalent) {
  const chat_request responses = responses_request(R"({
      "model": "m", "instructions": "Be brief.", "input": "What is the capital of France?",
      "max_output_tokens": 256, "temperature": 0.2, "store": false, "metadata": {"run": "7"},
      "include": ["message.output_text.logprobs"], "truncation": "disabled", "text": {"format": {"type": "text"}}})");
  const chat_request openai = parse_chat_request(json::parse(R"({
      "model": "m", "max_tokens": 256, "temperature": 0.2,
      "messages": [{"role": "system", "content": "Be brief."},
                   {"role": "user", "content": "What is the capital of France?"}]})"));
  BOOST_TEST(responses.model == "m");
  BOOST_TEST(!responses.stream);
  BOOST_TEST_REQUIRE(responses.messages.size() == 2u);
  BOOST_TEST(responses.messages[0].role == "system");
  BOOST_TEST(responses.messages[1].content == "What is the capital of France?");
  BOOST_TEST(responses.messages[1].content_json.empty());
  same_for_the_caches(responses, openai);
  BOOST_TEST(field(responses, "max_tokens") == "256");
  BOOST_TEST(field(responses, "temperature") == "0.2");
  // What is not kept or is the default here is not sent on.
  BOOST_TEST(responses.parameters.size() == 2u);
}

BOOST_AUTO_TEST_CASE(input_items_become_the_conversation_they_mean) {
  const chat_request responses = responses_request(R"({"model": "m", "stream": true, "input": [
      {"role": "user", "content": [{"type": "input_text", "text": "Weather in "},
                                   {"type": "input_image", "image_url": "https://example.com/oslo.png", "detail": "low"},
                                   {"type": "input_text", "text": "this town?"}]},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
      {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"town\":\"Oslo\"}"},
      {"type": "function_call", "call_id": "call_2", "name": "clock", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "4 C, rain"},
      {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "09:00"}]},
      {"type": "function_call", "call_id": "call_3", "name": "umbrella", "arguments": "{}"},
      {"role": "user", "content": [{"type": "input_text", "text": "Thanks."}]}]})");
  BOOST_TEST(responses.stream);
  BOOST_TEST_REQUIRE(responses.messages.size() == 6u);
  const auto& question = responses.messages[0];
  BOOST_TEST(question.role == "user");
  BOOST_TEST(question.content == "Weather in this town?");
  BOOST_TEST(question.content_json ==
             R"([{"type":"text","text":"Weather in "},{"type":"image_url","image_url":{"url":"https://example.com/oslo.png","detail":"low"}},{"type":"text","text":"this town?"}])");
  const auto& calls = responses.messages[1];  // the assistant's text and the two calls after it: one turn
  BOOST_TEST(calls.role == "assistant");
  BOOST_TEST(calls.content == "Let me look.");
  BOOST_TEST(calls.content_json.empty());
  BOOST_TEST(field(calls, "tool_calls") ==
             R"([{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}},)"
             R"({"id":"call_2","type":"function","function":{"name":"clock","arguments":"{}"}}])");
  BOOST_TEST(responses.messages[2].role == "tool");
  BOOST_TEST(responses.messages[2].content == "4 C, rain");
  BOOST_TEST(field(responses.messages[2], "tool_call_id") == R"("call_1")");
  BOOST_TEST(responses.messages[3].content == "09:00");
  const auto& alone = responses.messages[4];  // a call after tool results: a turn of its own
  BOOST_TEST(alone.role == "assistant");
  BOOST_TEST(alone.content_json == "null");
  BOOST_TEST(field(alone, "tool_calls") ==
             R"([{"id":"call_3","type":"function","function":{"name":"umbrella","arguments":"{}"}}])");
  BOOST_TEST(responses.messages[5].content == "Thanks.");
  BOOST_TEST(responses.messages[5].content_json.empty());  // one plain text part: a string, as chat clients send it

  const chat_request openai = parse_chat_request(json::parse(R"({"model": "m", "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Weather in "},
                                   {"type": "image_url", "image_url": {"url": "https://example.com/oslo.png", "detail": "low"}},
                                   {"type": "text", "text": "this town?"}]},
      {"role": "assistant", "content": "Let me look.", "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"town\":\"Oslo\"}"}},
          {"id": "call_2", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "4 C, rain"},
      {"role": "tool", "tool_call_id": "call_2", "content": "09:00"},
      {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_3", "type": "function", "function": {"name": "umbrella", "arguments": "{}"}}]},
      {"role": "user", "content": "Thanks."}]})"));
  same_for_the_caches(responses, openai);
}

BOOST_AUTO_TEST_CASE(tools_tool_choice_output_format_and_reasoning_take_chats_form) {
  const chat_request request = responses_request(R"({"model": "m", "input": "x",
      "tools": [{"type": "function", "name": "weather", "description": "Today's weather",
                 "parameters": {"type": "object"}, "strict": true}],
      "tool_choice": {"type": "function", "name": "weather"}, "parallel_tool_calls": false,
      "text": {"format": {"type": "json_schema", "name": "forecast", "schema": {"type": "object"}, "strict": true},
               "verbosity": "low"},
      "reasoning": {"effort": "low", "summary": "auto"}, "user": "u-7"})");
  BOOST_TEST(field(request, "tools") ==
             R"([{"type":"function","function":{"name":"weather","description":"Today's weather","parameters":{"type":"object"},"strict":true}}])");
  BOOST_TEST(field(request, "tool_choice") == R"({"type":"function","function":{"name":"weather"}})");
  BOOST_TEST(field(request, "parallel_tool_calls") == "false");
  BOOST_TEST(field(request, "response_format") ==
             R"({"type":"json_schema","json_schema":{"name":"forecast","schema":{"type":"object"},"strict":true}})");
  BOOST_TEST(field(request, "verbosity") == R"("low")");
  BOOST_TEST(field(request, "reasoning_effort") == R"("low")");
  BOOST_TEST(field(request, "user") == R"("u-7")");
  const auto choice = [](const char* tool_choice) {
    const std::string body = std::string(R"({"model":"m","input":"x","tool_choice":)") + tool_choice + "}";
    return field(parse_responses_request(json::parse(body)), "tool_choice");
  };
  BOOST_TEST(choice(R"("none")") == R"("none")");
  BOOST_TEST(choice(R"("required")") == R"("required")");
  BOOST_TEST(field(responses_request(R"({"model":"m","input":"x","text":{"format":{"type":"json_object"}}})"),
                   "response_format") == R"({"type":"json_object"})");
}

BOOST_AUTO_TEST_CASE(mistakes_and_what_a_stateless_gateway_cannot_do_are_refused_by_field) {
  using result = std::pair<std::string, std::string>;
  const std::string no_state = "' cannot be used: send the earlier turns as input items instead.";
  BOOST_TEST((refusal(R"({"model":"m","input":"x","previous_response_id":"resp_1"})") ==
              result{"previous_response_id",
                     "This gateway keeps no responses (store is false), so 'previous_response_id" + no_state}));
  BOOST_TEST((refusal(R"({"model":"m","input":"x","conversation":"conv_1"})") ==
              result{"conversation", "This gateway keeps no responses (store is false), so 'conversation" + no_state}));
  BOOST_TEST((refusal(R"({"model":"m","input":"x","background":true})") ==
              result{"background", "This gateway answers while the client waits: 'background' must be false."}));
  BOOST_TEST((refusal(R"({"model":"m"})") == result{"input", "Missing required parameter: 'input'."}));
  BOOST_TEST((refusal(R"({"input":"x"})") == result{"model", "Missing required parameter: 'model'."}));
  BOOST_TEST((refusal(R"({"model":"m","input":[]})") ==
              result{"input", "Invalid value for 'input': expected a string or at least one input item, but got [] instead."}));
  BOOST_TEST((refusal(R"({"model":"m","input":[{"type":"reasoning","summary":[]}]})") ==
              result{"input[0].type",
                     R"(Invalid value for 'input[0].type': expected "message", "function_call" or "function_call_output", but got "reasoning" instead.)"}));
  BOOST_TEST((refusal(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})") ==
              result{"input[0].content[0].type",
                     R"(Invalid value for 'input[0].content[0].type': expected "input_text", "input_image" or "output_text", but got "input_file" instead.)"}));
  BOOST_TEST((refusal(R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]})") ==
              result{"input[0].arguments", "Missing required parameter: 'input[0].arguments'."}));
  BOOST_TEST((refusal(R"({"model":"m","input":"x","tools":[{"type":"web_search"}]})") ==
              result{"tools[0].type",
                     R"(Invalid value for 'tools[0].type': expected "function" (the only tools this gateway serves), but got "web_search" instead.)"}));
  BOOST_TEST((refusal(R"({"model":"m","input":"x","max_output_tokens":0})") ==
              result{"max_output_tokens", "Invalid value for 'max_output_tokens': expected an integer >= 1, but got 0 instead."}));
  BOOST_TEST((refusal(R"({"model":"m","input":"x","text":{"format":{"type":"xml"}}})") ==
              result{"text.format.type",
                     R"(Invalid value for 'text.format.type': expected "text", "json_object" or "json_schema", but got "xml" instead.)"}));
}

BOOST_AUTO_TEST_CASE(an_answer_is_written_as_a_response_object) {
  chat_response answer{.id = "chatcmpl-1", .model = "upstream-m", .content = "Paris.", .finish_reason = "stop"};
  answer.usage = {.prompt_tokens = 120, .completion_tokens = 3, .cached_prompt_tokens = 100};
  const std::string usage =
      R"("usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":3,)"
      R"("output_tokens_details":{"reasoning_tokens":0},"total_tokens":123})";
  BOOST_TEST(responses_response_body(answer, "resp_01", 1700000000, "m") ==
             R"({"id":"resp_01","object":"response","created_at":1700000000,"status":"completed","error":null,)"
             R"("incomplete_details":null,"model":"m","output":[{"id":"msg_01","type":"message","status":"completed",)"
             R"("role":"assistant","content":[{"type":"output_text","text":"Paris.","annotations":[]}]}],"store":false,)" +
                 usage + "}");
  chat_response call{.content = "", .finish_reason = "tool_calls",
                     .tool_calls_json = R"([{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}}])"};
  BOOST_TEST(responses_response_body(call, "resp_02", 1700000000, "m") ==
             R"({"id":"resp_02","object":"response","created_at":1700000000,"status":"completed","error":null,)"
             R"("incomplete_details":null,"model":"m","output":[{"id":"fc_call_1","type":"function_call","status":"completed",)"
             R"("call_id":"call_1","name":"weather","arguments":"{\"town\":\"Oslo\"}"}],"store":false,"usage":{"input_tokens":0,)"
             R"("input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}})");
  const chat_response cut{.content = "Par", .finish_reason = "length"};
  const json::value incomplete = json::parse(responses_response_body(cut, "resp_03", 1700000000, "m"));
  BOOST_TEST(incomplete.at("status") == "incomplete");
  BOOST_TEST(json::serialize(incomplete.at("incomplete_details")) == R"({"reason":"max_output_tokens"})");
  BOOST_TEST(responses_status("content_filter") == "incomplete");
}

BOOST_AUTO_TEST_CASE(a_stream_is_written_as_the_responses_apis_events) {
  responses_stream_events events("resp_04", 1700000000);
  std::string stream = events.start("m");
  stream += events.chunk({.content_delta = "Let me "});
  stream += events.chunk({.content_delta = "look."});
  stream += events.chunk({.content_delta = "",
                          .tool_call_deltas_json = R"([{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":""}}])"});
  stream += events.chunk({.content_delta = "", .tool_call_deltas_json = R"([{"index":0,"function":{"arguments":"{\"town\":"}}])"});
  stream += events.chunk({.content_delta = "", .tool_call_deltas_json = R"([{"index":0,"function":{"arguments":"\"Oslo\"}"}}])"});
  const chat_response answer{.content = "Let me look.", .finish_reason = "tool_calls",
                             .tool_calls_json = R"([{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}}])",
                             .usage = {.prompt_tokens = 20, .completion_tokens = 9}};
  stream += events.finish(answer);
  const std::string in_progress =
      R"({"id":"resp_04","object":"response","created_at":1700000000,"status":"in_progress","error":null,)"
      R"("incomplete_details":null,"model":"m","output":[],"store":false,"usage":null})";
  const std::string message_done =
      R"({"id":"msg_04","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me look.","annotations":[]}]})";
  const std::string call_done =
      R"({"id":"fc_call_1","type":"function_call","status":"completed","call_id":"call_1","name":"weather","arguments":"{\"town\":\"Oslo\"}"})";
  const std::string expected =
      "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":" + in_progress + "}\n\n"
      "event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"sequence_number\":1,\"response\":" + in_progress + "}\n\n"
      "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":2,\"output_index\":0,"
      "\"item\":{\"id\":\"msg_04\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n"
      "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":3,\"item_id\":\"msg_04\","
      "\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}}\n\n"
      "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_04\","
      "\"output_index\":0,\"content_index\":0,\"delta\":\"Let me \",\"logprobs\":[]}\n\n"
      "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":5,\"item_id\":\"msg_04\","
      "\"output_index\":0,\"content_index\":0,\"delta\":\"look.\",\"logprobs\":[]}\n\n"
      "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"sequence_number\":6,\"item_id\":\"msg_04\","
      "\"output_index\":0,\"content_index\":0,\"text\":\"Let me look.\",\"logprobs\":[]}\n\n"
      "event: response.content_part.done\ndata: {\"type\":\"response.content_part.done\",\"sequence_number\":7,\"item_id\":\"msg_04\","
      "\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"Let me look.\",\"annotations\":[]}}\n\n"
      "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":8,\"output_index\":0,"
      "\"item\":" + message_done + "}\n\n"
      "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":9,\"output_index\":1,"
      "\"item\":{\"id\":\"fc_call_1\",\"type\":\"function_call\",\"status\":\"in_progress\",\"call_id\":\"call_1\",\"name\":\"weather\",\"arguments\":\"\"}}\n\n"
      "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":10,"
      "\"item_id\":\"fc_call_1\",\"output_index\":1,\"delta\":\"{\\\"town\\\":\"}\n\n"
      "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":11,"
      "\"item_id\":\"fc_call_1\",\"output_index\":1,\"delta\":\"\\\"Oslo\\\"}\"}\n\n"
      "event: response.function_call_arguments.done\ndata: {\"type\":\"response.function_call_arguments.done\",\"sequence_number\":12,"
      "\"item_id\":\"fc_call_1\",\"output_index\":1,\"name\":\"weather\",\"arguments\":\"{\\\"town\\\":\\\"Oslo\\\"}\"}\n\n"
      "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":13,\"output_index\":1,"
      "\"item\":" + call_done + "}\n\n"
      "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":14,\"response\":"
      "{\"id\":\"resp_04\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"completed\",\"error\":null,"
      "\"incomplete_details\":null,\"model\":\"m\",\"output\":[" + message_done + "," + call_done + "],\"store\":false,"
      "\"usage\":{\"input_tokens\":20,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":9,"
      "\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":29}}}\n\n";
  BOOST_TEST(stream == expected);
}

BOOST_AUTO_TEST_CASE(a_stream_that_breaks_off_ends_with_response_failed) {
  responses_stream_events events("resp_05", 1700000000);
  events.start("m");
  events.chunk({.content_delta = "Par"});
  BOOST_TEST(events.error("server_error", "upstream broke") ==
             "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":5,\"response\":"
             "{\"id\":\"resp_05\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"failed\","
             "\"error\":{\"code\":\"server_error\",\"message\":\"upstream broke\"},\"incomplete_details\":null,"
             "\"model\":\"m\",\"output\":[],\"store\":false,\"usage\":null}}\n\n");
}

BOOST_AUTO_TEST_SUITE_END()
