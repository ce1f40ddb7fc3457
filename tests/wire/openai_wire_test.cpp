// openai_wire: every body it writes has the bytes a boost::json tree of it
// written by json_appender has (reference_wire.hpp), escapes and number
// formats included (doubles as plain decimals); what it reads keeps
// passed-through JSON as text.
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/test/unit_test.hpp>

#include "llmgate/wire/detail/json_appender.hpp"  // json_appender
#include "llmgate/wire/openai_wire.hpp"
#include "reference_wire.hpp"

namespace {

using namespace llmgate;
namespace json = boost::json;
namespace reference = llmgate::test::reference;

// A tree as the gateway writes JSON: Boost.JSON's escapes, plain decimals.
std::string serialized(const json::value& value) {
  std::string text;
  llmgate::detail::json_appender(text).value(value);
  return text;
}

const char* const requests[] = {
    R"({"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}]})",
    R"({"model":"gpt-4o","stream":true,
        "messages":[{"role":"system","content":"Be brief."},
                    {"role":"user","name":"ann","content":[{"type":"text","text":"Hi "},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"there"}]},
                    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
                    {"role":"assistant"},
                    {"role":"tool","tool_call_id":"c1","content":"42"}],
        "temperature":0.3,"top_p":1,"max_tokens":18446744073709551615,"seed":-3,"stop":["a","\u0001"],
        "tools":[{"type":"function","function":{"name":"f","parameters":{"b":1e-300,"a":[true,null]}}}],
        "response_format":{"type":"json_object"},"x_vendor_field":[1,2.5,"\u00e9"],"stream_options":null})",
    R"({"model":"m","messages":[{"role":"user","content":"Quotes \" and \\ and\nnewlines \u0007 \ud83d\ude00"}],"stream":false,
        "stream_options":{"include_usage":false,"other":1},"user":"u"})",
};

// What the OpenAI backend made of a request before it wrote bytes.
std::string wire_request_by_tree(const chat_request& request, std::string_view model, bool stream) {
  auto body = reference::to_json(request);
  if (!model.empty()) body["model"] = model;
  body["stream"] = stream;
  if (stream) {
    auto& stream_options = body["stream_options"];
    if (!stream_options.is_object()) stream_options = json::object();
    stream_options.as_object()["include_usage"] = true;
  }
  return serialized(body);
}

std::vector<chat_chunk> chunks() {
  std::vector<chat_chunk> all(6);
  all[1].content_delta = "caf\xc3\xa9 \"x\"";
  all[2].finish_reason = "stop";
  all[2].content_delta = "end";
  all[3].tool_call_deltas_json = R"([{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}])";
  all[4].usage = token_usage{100, 5, 64, 3};
  all[5] = all[3];
  all[5].content_delta = "and";
  all[5].usage = token_usage{1, 2, 0, 0};
  return all;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openai_wire_test)

BOOST_AUTO_TEST_CASE(request_body_has_the_bytes_of_the_tree) {
  for (const char* text : requests) {
    const auto sent = json::parse(text);
    const chat_request request = parse_chat_request(sent);
    BOOST_TEST(chat_request_body(request) == serialized(reference::to_json(request)), text);
    for (const std::string_view model : {std::string_view(), std::string_view("other-model")})
      for (const bool stream : {false, true})
        BOOST_TEST(chat_request_body(request, {.model = model, .stream = stream, .include_usage = stream}) ==
                       wire_request_by_tree(request, model, stream), text);
  }
}

BOOST_AUTO_TEST_CASE(passed_through_values_are_kept_as_serialised_text) {
  const chat_request request = parse_chat_request(std::string_view(requests[1]));
  BOOST_TEST(request.messages.size() == 5u);
  BOOST_TEST(request.messages[1].content == "Hi there");
  BOOST_TEST(content_text(request.messages[1]) == "Hi there");
  BOOST_TEST(request.messages[1].content_json.front() == '[');
  BOOST_TEST(find_field(request.messages[1].extra, "name")->json == R"("ann")");
  BOOST_TEST(request.messages[2].content_json == "null");
  BOOST_TEST(request.messages[3].content_json == "null");  // absent content goes on as null
  BOOST_TEST(request.messages[4].content_json.empty());
  BOOST_TEST(find_field(request.parameters, "temperature")->json == "0.3");
  BOOST_TEST(find_field(request.parameters, "max_tokens")->json == "18446744073709551615");
  BOOST_TEST(find_field(request.parameters, "model") == nullptr);
  BOOST_TEST(find_field(request.parameters, "stream") == nullptr);

  json_fields fields{{"a", "1"}};
  set_field(fields, "b", "2");
  set_field(fields, "a", "3");
  BOOST_TEST((fields == json_fields{{"a", "3"}, {"b", "2"}}));
}

BOOST_AUTO_TEST_CASE(a_body_that_is_not_json_is_a_request_error) {
  try {
    (void)parse_chat_request(std::string_view(R"({"model":"m","messages":[)"));
    BOOST_FAIL("expected a request_error");
  } catch (const request_error& e) {
    BOOST_TEST(e.code() == errc::invalid_request);
    BOOST_TEST(e.param() == "");
    BOOST_TEST(std::string(e.what()).starts_with("We could not parse the JSON body of your request: "));
  }
}

// The standard fields the gateway reads, each refused with OpenAI's
// wording and the field in param(), so that an SDK shows the client its
// own mistake instead of retrying an upstream's 400 turned into a 502.
BOOST_AUTO_TEST_CASE(standard_fields_of_a_wrong_type_or_value_are_refused_naming_the_field) {
  struct refused {
    std::string fields;  // after "model" and "messages"; or a whole body when it starts with '{'
    std::string param;
    std::string message;
  };
  const std::string hi = R"("messages":[{"role":"user","content":"hi"}])";
  const refused cases[] = {
      {"{" + hi + "}", "model", R"(model is required: name the model to answer in the request's "model" field.)"},
      {R"({"model":"",)" + hi + "}", "model", R"(model is required: name the model to answer in the request's "model" field.)"},
      {R"({"model":null,)" + hi + "}", "model", R"(model is required: name the model to answer in the request's "model" field.)"},
      {R"({"model":7,)" + hi + "}", "model", "Invalid type for 'model': expected a string, but got a number instead."},
      {R"({"model":"m"})", "messages", "Missing required parameter: 'messages'."},
      {R"({"model":"m","messages":{}})", "messages", "Invalid type for 'messages': expected an array, but got an object instead."},
      {R"({"model":"m","messages":[]})", "messages", "Invalid value for 'messages': expected a non-empty array, but got [] instead."},
      {R"({"model":"m","messages":[5]})", "messages[0]", "Invalid type for 'messages[0]': expected an object, but got a number instead."},
      {R"({"model":"m","messages":[{"role":"user","content":"a"},{"content":"b"}]})", "messages[1].role",
       "Missing required parameter: 'messages[1].role'."},
      {R"({"model":"m","messages":[{"role":1}]})", "messages[0].role",
       "Invalid type for 'messages[0].role': expected a string, but got a number instead."},
      {R"({"model":"m","messages":[{"role":"user","content":true}]})", "messages[0].content",
       "Invalid type for 'messages[0].content': expected a string, an array of content parts or null, but got a boolean instead."},
      {R"("max_tokens":"ten")", "max_tokens", "Invalid type for 'max_tokens': expected an integer, but got a string instead."},
      {R"("max_tokens":0)", "max_tokens", "Invalid value for 'max_tokens': expected an integer >= 1, but got 0 instead."},
      {R"("max_completion_tokens":2.5)", "max_completion_tokens",
       "Invalid type for 'max_completion_tokens': expected an integer, but got a number instead."},
      {R"("temperature":"hot")", "temperature", "Invalid type for 'temperature': expected a number, but got a string instead."},
      {R"("temperature":3)", "temperature", "Invalid value for 'temperature': expected a number from 0 to 2, but got 3 instead."},
      {R"("top_p":2)", "top_p", "Invalid value for 'top_p': expected a number from 0 to 1, but got 2 instead."},
      {R"("n":0)", "n", "Invalid value for 'n': expected an integer >= 1, but got 0 instead."},
      {R"("n":3)", "n", "This gateway answers with one choice: 'n' must be 1, not 3. Send n requests instead."},
      {R"("n":"2")", "n", "Invalid type for 'n': expected an integer, but got a string instead."},
      {R"("stream":"yes")", "stream", "Invalid type for 'stream': expected a boolean, but got a string instead."},
      {R"("stream_options":true)", "stream_options",
       "Invalid type for 'stream_options': expected an object, but got a boolean instead."},
      {R"("stream_options":{"include_usage":1})", "stream_options.include_usage",
       "Invalid type for 'stream_options.include_usage': expected a boolean, but got a number instead."},
      {R"("stop":5)", "stop", "Invalid type for 'stop': expected a string or an array of strings, but got a number instead."},
      {R"("stop":["a",1])", "stop", "Invalid type for 'stop': expected a string or an array of strings, but got a number instead."},
      {R"("stop":["a","b","c","d","e"])", "stop",
       R"(Invalid value for 'stop': expected an array of 1 to 4 strings, but got ["a","b","c","d","e"] instead.)"},
      {R"("seed":"x")", "seed", "Invalid type for 'seed': expected an integer, but got a string instead."},
  };
  for (const auto& c : cases) {
    const std::string body = c.fields.starts_with("{") ? c.fields : R"({"model":"m",)" + hi + "," + c.fields + "}";
    BOOST_TEST_CONTEXT(body) {
      try {
        (void)parse_chat_request(std::string_view(body));
        BOOST_ERROR("accepted");
      } catch (const request_error& e) {
        BOOST_TEST(e.param() == c.param);
        BOOST_TEST(e.what() == c.message);
      }
    }
  }
  // Null stands for the default, and the forms OpenAI takes are taken.
  for (const std::string fields :
       {R"("max_tokens":null,"temperature":null,"top_p":null,"n":null,"stream":null,"stream_options":null,"stop":null,"seed":null)",
        R"("max_tokens":12.0,"max_completion_tokens":1,"temperature":0,"top_p":0.5,"n":1,"stream":true,)"
        R"("stream_options":{"include_usage":true},"stop":"END","seed":-1)",
        R"("stop":["a","b","c","d"],"temperature":2,"top_p":1,"max_tokens":18446744073709551615)"}) {
    BOOST_TEST_CONTEXT(fields) {
      const chat_request request = parse_chat_request(std::string_view(R"({"model":"m",)" + hi + "," + fields + "}"));
      BOOST_TEST(request.model == "m");
    }
  }
}

BOOST_AUTO_TEST_CASE(the_usage_chunk_is_asked_for_with_stream_options_include_usage) {
  const auto asked = [](std::string_view fields) {
    const std::string body =
        R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true)" + std::string(fields) + "}";
    return usage_chunk_asked(parse_chat_request(std::string_view(body)));
  };
  BOOST_TEST(!asked(""));
  BOOST_TEST(!asked(R"(,"stream_options":null)"));
  BOOST_TEST(!asked(R"(,"stream_options":{})"));
  BOOST_TEST(!asked(R"(,"stream_options":{"include_usage":false})"));
  BOOST_TEST(asked(R"(,"stream_options":{"include_usage":true})"));
}

BOOST_AUTO_TEST_CASE(completion_body_has_the_bytes_of_the_tree) {
  for (const auto& response : reference::sample_responses()) {
    BOOST_TEST(completion_body(response) == serialized(reference::to_json(response)));
    const auto read_back = parse_chat_response(json::parse(completion_body(response)));
    BOOST_TEST(read_back.content == response.content);
    BOOST_TEST(read_back.tool_calls_json == response.tool_calls_json);
    BOOST_TEST((read_back.usage == response.usage));
  }
}

BOOST_AUTO_TEST_CASE(chunk_bodies_have_the_bytes_of_the_tree) {
  for (const auto& chunk : chunks()) {
    BOOST_TEST(chunk_body(chunk, "chatcmpl-\"1\"", "m\xc3\xa9", -5) ==
               serialized(reference::to_json(chunk, "chatcmpl-\"1\"", "m\xc3\xa9", -5)));
    const auto read_back = parse_chat_chunk(json::parse(chunk_body(chunk, "i", "m", 1)));
    BOOST_TEST(read_back.content_delta == chunk.content_delta);
    BOOST_TEST(read_back.tool_call_deltas_json == chunk.tool_call_deltas_json);
    BOOST_TEST((read_back.usage == chunk.usage));
  }

  // The gateway's first and last chunks of a stream.
  auto role = reference::to_json(chat_chunk{}, "id", "m", 7);
  role["choices"].as_array()[0].as_object()["delta"] = json::object{{"role", "assistant"}, {"content", ""}};
  std::string written;
  append_role_chunk_body(written, "id", "m", 7);
  BOOST_TEST(written == serialized(role));
  for (const std::optional<double> saved : {std::optional<double>(), std::optional<double>(2.5e-7)}) {
    const token_usage usage{10, 5, 4, 1};
    auto last = reference::to_json(chat_chunk{}, "id", "m", 7);
    last["choices"] = json::array();  // OpenAI's usage chunk has no choice
    auto usage_json = reference::to_json(usage);
    usage_json["cost_usd"] = 0.125;
    if (saved) usage_json["saved_usd"] = *saved;
    last["usage"] = std::move(usage_json);
    written.clear();
    append_usage_chunk_body(written, usage, 0.125, saved, "id", "m", 7);
    BOOST_TEST(written == serialized(last));
  }
}

BOOST_AUTO_TEST_SUITE_END()
