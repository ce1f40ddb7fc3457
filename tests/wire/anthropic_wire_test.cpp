// anthropic_wire: a Messages request read into the chat_request its
// chat-completions equivalent is (so both routes share cache entries),
// each translation and each refusal by the field at fault; answers written
// as Anthropic's Message, its stream events and its error objects, byte
// for byte.
#include <string>  // std::string
#include <vector>  // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/test/unit_test.hpp>

#include "llmgate/chat/request_error.hpp"
#include "llmgate/pipeline/request_scope.hpp"  // scope_of, exact_text_of
#include "llmgate/wire/anthropic_wire.hpp"
#include "llmgate/wire/openai_wire.hpp"
#include "read_request.hpp"  // field, refusal_of

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

chat_request messages_request(const char* body) { return parse_messages_request(json::parse(body)); }

std::pair<std::string, std::string> refusal(const char* body) {
  return refusal_of([](const json::value& request) { return parse_messages_request(request); }, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(anthropic_wire_test)

BOOST_AUTO_TEST_CASE(a_question_is_the_chat_request_of_its_chat_completions_equivalent) {
  const chat_request anthropic = messages_request(R"({
      "model": "m", "max_tokens": 256, "system": "Be brief.", "temperature": 0.2,
      "stop_sequences": ["END"], "metadata": {"user_id": "u-7"},
      "messages": [{"role": "user", "content": "What is the capital of France?"},
                   {"role": "assistant", "content": [{"type": "text", "text": "Paris."}]},
                   {"role": "user", "content": "And of Spain?"}]})");
  const chat_request openai = parse_chat_request(json::parse(R"({
      "model": "m", "max_tokens": 256, "temperature": 0.2, "stop": ["END"], "user": "u-7",
      "messages": [{"role": "system", "content": "Be brief."},
                   {"role": "user", "content": "What is the capital of France?"},
                   {"role": "assistant", "content": "Paris."},
                   {"role": "user", "content": "And of Spain?"}]})"));
  BOOST_TEST(anthropic.model == "m");
  BOOST_TEST(!anthropic.stream);
  BOOST_TEST_REQUIRE(anthropic.messages.size() == 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(anthropic.messages[i].role == openai.messages[i].role);
    BOOST_TEST(anthropic.messages[i].content == openai.messages[i].content);
    BOOST_TEST(anthropic.messages[i].content_json == openai.messages[i].content_json);
  }
  // What the caches compare: the scope (parameters, system prompt) and the conversation.
  BOOST_TEST((scope_of(anthropic, "acme") == scope_of(openai, "acme")));
  BOOST_TEST(exact_text_of(anthropic) == exact_text_of(openai));
  BOOST_TEST(field(anthropic, "stop") == R"(["END"])");
  BOOST_TEST(field(anthropic, "user") == R"("u-7")");
  BOOST_TEST(field(anthropic, "max_tokens") == "256");
}

BOOST_AUTO_TEST_CASE(tool_uses_results_images_and_cache_markers_are_translated) {
  const chat_request request = messages_request(R"({
      "model": "m", "max_tokens": 64, "stream": true,
      "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
      "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "Weather in "},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
            {"type": "text", "text": "this town?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"town": "Oslo"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "4 C, rain"}]},
            {"type": "text", "text": "Thanks. Umbrella?"}]}],
      "tools": [{"name": "weather", "description": "Today's weather", "input_schema": {"type": "object"}}],
      "tool_choice": {"type": "any", "disable_parallel_tool_use": true}})");
  BOOST_TEST(request.stream);
  BOOST_TEST_REQUIRE(request.messages.size() == 5u);
  const auto& system = request.messages[0];
  BOOST_TEST(system.role == "system");
  BOOST_TEST(system.content == "You are terse.");
  BOOST_TEST(system.content_json == R"([{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}])");
  const auto& question = request.messages[1];
  BOOST_TEST(question.content == "Weather in this town?");
  BOOST_TEST(question.content_json ==
             R"([{"type":"text","text":"Weather in "},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},{"type":"text","text":"this town?"}])");
  const auto& call = request.messages[2];
  BOOST_TEST(call.role == "assistant");
  BOOST_TEST(call.content == "Let me look.");
  BOOST_TEST(field(call, "tool_calls") ==
             R"([{"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}}])");
  const auto& result = request.messages[3];
  BOOST_TEST(result.role == "tool");
  BOOST_TEST(result.content == "4 C, rain");
  BOOST_TEST(field(result, "tool_call_id") == R"("toolu_1")");
  BOOST_TEST(request.messages[4].role == "user");
  BOOST_TEST(request.messages[4].content == "Thanks. Umbrella?");
  BOOST_TEST(request.messages[4].content_json.empty());
  BOOST_TEST(field(request, "tools") ==
             R"([{"type":"function","function":{"name":"weather","description":"Today's weather","parameters":{"type":"object"}}}])");
  BOOST_TEST(field(request, "tool_choice") == R"("required")");
  BOOST_TEST(field(request, "parallel_tool_calls") == "false");
}

BOOST_AUTO_TEST_CASE(tool_choice_maps_to_openais_form_and_a_turn_of_results_alone_adds_no_user_message) {
  const auto choice = [](const char* tool_choice) {
    const std::string body = std::string(R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"}],"tool_choice":)") +
                             tool_choice + "}";
    return field(parse_messages_request(json::parse(body)), "tool_choice");
  };
  BOOST_TEST(choice(R"({"type":"auto"})") == R"("auto")");
  BOOST_TEST(choice(R"({"type":"none"})") == R"("none")");
  BOOST_TEST(choice(R"({"type":"tool","name":"weather"})") == R"({"type":"function","function":{"name":"weather"}})");
  const chat_request request = messages_request(R"({"model":"m","max_tokens":8,"messages":[
      {"role":"user","content":"x"},
      {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"done"}]}]})");
  BOOST_TEST_REQUIRE(request.messages.size() == 3u);
  BOOST_TEST(request.messages[1].content_json == "null");  // a tool-calling turn, as OpenAI writes it
  BOOST_TEST(request.messages[2].role == "tool");
  BOOST_TEST(request.messages[2].content == "done");
}

BOOST_AUTO_TEST_CASE(mistakes_are_refused_by_the_field_at_fault) {
  using result = std::pair<std::string, std::string>;
  BOOST_TEST((refusal(R"({"model":"m","messages":[{"role":"user","content":"x"}]})") ==
              result{"max_tokens", "Missing required parameter: 'max_tokens'."}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]})") ==
              result{"max_tokens", "Invalid value for 'max_tokens': expected an integer of at least 1, but got 0 instead."}));
  BOOST_TEST((refusal(R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}]})") ==
              result{"model", "Missing required parameter: 'model'."}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":5,"messages":[]})") ==
              result{"messages", "Invalid value for 'messages': expected at least one message, but got [] instead."}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]})") ==
              result{"messages[0].role",
                     R"(Invalid value for 'messages[0].role': expected "user" or "assistant", but got "system" instead.)"}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f"}]}]})") ==
              result{"messages[0].content[0].type",
                     R"(Invalid value for 'messages[0].content[0].type': expected "text", "image" or "tool_result", but got "tool_use" instead.)"}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text"}]}]})") ==
              result{"messages[0].content[0].text", "Missing required parameter: 'messages[0].content[0].text'."}));
  BOOST_TEST((refusal(R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"all"}})") ==
              result{"tool_choice.type",
                     R"(Invalid value for 'tool_choice.type': expected "auto", "any", "tool" or "none", but got "all" instead.)"}));
  BOOST_TEST((refusal(R"([1])") == result{"", "The request body must be a JSON object."}));
}

BOOST_AUTO_TEST_CASE(an_answer_is_written_as_a_message_in_anthropics_counting) {
  chat_response answer{.id = "chatcmpl-1", .model = "upstream-m", .content = "Paris.", .finish_reason = "stop"};
  answer.usage = {.prompt_tokens = 120, .completion_tokens = 3, .cached_prompt_tokens = 100, .cache_write_tokens = 4};
  BOOST_TEST(messages_response_body(answer, "msg_01", "m") ==
             R"({"id":"msg_01","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Paris."}],)"
             R"("stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":16,"cache_creation_input_tokens":4,)"
             R"("cache_read_input_tokens":100,"output_tokens":3}})");
  chat_response call{.content = "", .finish_reason = "tool_calls",
                     .tool_calls_json = R"([{"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}}])"};
  BOOST_TEST(messages_response_body(call, "msg_02", "m") ==
             R"({"id":"msg_02","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1",)"
             R"("name":"weather","input":{"town":"Oslo"}}],"stop_reason":"tool_use","stop_sequence":null,)"
             R"("usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}})");
  BOOST_TEST(anthropic_stop_reason("length") == "max_tokens");
  BOOST_TEST(anthropic_stop_reason("content_filter") == "refusal");
}

BOOST_AUTO_TEST_CASE(a_stream_is_written_as_anthropics_events) {
  messages_stream_events events("msg_03");
  std::string stream = events.start("m");
  stream += events.chunk({.content_delta = "Let me "});
  stream += events.chunk({.content_delta = "look."});
  stream += events.chunk({.content_delta = "",
                          .tool_call_deltas_json = R"([{"index":0,"id":"toolu_1","type":"function","function":{"name":"weather","arguments":""}}])"});
  stream += events.chunk({.content_delta = "", .tool_call_deltas_json = R"([{"index":0,"function":{"arguments":"{\"town\":"}}])"});
  stream += events.chunk({.content_delta = "", .tool_call_deltas_json = R"([{"index":0,"function":{"arguments":"\"Oslo\"}"}}])"});
  stream += events.finish({.finish_reason = "tool_calls", .usage = {.prompt_tokens = 20, .completion_tokens = 9}});
  const std::string usage_zero = R"("usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0})";
  BOOST_TEST(stream ==
             "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_03\",\"type\":\"message\","
             "\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null," + usage_zero + "}}\n\n"
             "event: ping\ndata: {\"type\":\"ping\"}\n\n"
             "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n"
             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"look.\"}}\n\n"
             "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
             "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"weather\",\"input\":{}}}\n\n"
             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"town\\\":\"}}\n\n"
             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Oslo\\\"}\"}}\n\n"
             "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
             "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
             "\"usage\":{\"input_tokens\":20,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":9}}\n\n"
             "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
}

BOOST_AUTO_TEST_CASE(errors_are_anthropics_objects_with_its_types) {
  BOOST_TEST(messages_error_body("invalid_request_error", "max_tokens: Field required") ==
             R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}})");
  BOOST_TEST(messages_stream_events::error("overloaded_error", "Overloaded") ==
             "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
  BOOST_TEST(anthropic_error_type(400) == "invalid_request_error");
  BOOST_TEST(anthropic_error_type(401) == "authentication_error");
  BOOST_TEST(anthropic_error_type(403) == "permission_error");
  BOOST_TEST(anthropic_error_type(404) == "not_found_error");
  BOOST_TEST(anthropic_error_type(413) == "request_too_large");
  BOOST_TEST(anthropic_error_type(429) == "rate_limit_error");
  BOOST_TEST(anthropic_error_type(504) == "api_error");
  BOOST_TEST(anthropic_error_type(529) == "overloaded_error");
}

BOOST_AUTO_TEST_SUITE_END()
