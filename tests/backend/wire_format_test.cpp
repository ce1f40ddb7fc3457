// The wire formats without a network: chat and embedding requests read and
// written in OpenAI's form with unknown fields passed through and clear
// errors for wrong types; SSE and NDJSON parsers fed every possible split;
// stream assembly; price tables; base URLs.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/backend/chat_assembler.hpp"
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/ndjson_parser.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/backend/sse_parser.hpp"
#include "llmgate/backend/url.hpp"

using llmgate::errc;
using llmgate::sse_event;
using llmgate::sse_parser;
namespace json = boost::json;

namespace {

/// The message of the llmgate::error that `call` throws, checking its code.
template <class Call>
std::string error_message(Call call, errc expected) {
  try {
    call();
  } catch (const llmgate::error& e) {
    BOOST_TEST(e.code() == expected);
    return e.what();
  }
  BOOST_FAIL("expected an llmgate::error");
  return {};
}

std::vector<sse_event> parse_sse_in_pieces(std::string_view bytes, std::size_t first_cut,
                                           std::size_t second_cut) {
  sse_parser parser;
  std::vector<sse_event> events;
  parser.feed(bytes.substr(0, first_cut), events);
  parser.feed(bytes.substr(first_cut, second_cut - first_cut), events);
  parser.feed(bytes.substr(second_cut), events);
  return events;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wire_format_test)

BOOST_AUTO_TEST_CASE(chat_request_round_trips_with_unknown_fields) {
  const auto sent = json::parse(R"({"model":"gpt-4o","stream":true,
      "messages":[{"role":"system","content":"Be brief."},
                  {"role":"user","name":"ann","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},
                  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
                  {"role":"tool","tool_call_id":"c1","content":"42"}],
      "temperature":0.3,"tools":[{"type":"function","function":{"name":"f"}}],
      "response_format":{"type":"json_object"},"x_vendor_field":[1,2]})");
  const auto request = llmgate::parse_chat_request(sent);
  BOOST_TEST(request.model == "gpt-4o");
  BOOST_TEST(request.stream);
  BOOST_TEST(request.messages.size() == 4u);
  BOOST_TEST(llmgate::find_field(request.messages[1].extra, "name")->json == "\"ann\"");
  BOOST_TEST(request.messages[1].content == "Hi");
  BOOST_TEST(request.messages[2].content_json == "null");
  BOOST_TEST(request.parameters.size() == 4u);
  BOOST_TEST(json::parse(llmgate::chat_request_body(request)) == sent);
}

BOOST_AUTO_TEST_CASE(chat_response_and_chunks_are_written_in_openai_form) {
  llmgate::chat_response response;
  response.id = "chatcmpl-1";
  response.model = "m";
  response.content = "Hi";
  response.finish_reason = "stop";
  response.usage = {100, 5, 64, 0};
  response.cost_usd = 0.25;
  const auto object = json::parse(llmgate::completion_body(response));
  BOOST_TEST(object.at("object").as_string() == "chat.completion");
  BOOST_TEST(object.at("choices").at(0).at("message").at("content").as_string() == "Hi");
  BOOST_TEST(object.at("usage").at("total_tokens").to_number<int>() == 105);
  BOOST_TEST(object.at("usage").at("prompt_tokens_details").at("cached_tokens").to_number<int>() == 64);
  BOOST_TEST(object.at("cost").as_double() == 0.25);
  const auto read_back = llmgate::parse_chat_response(object);
  BOOST_TEST((read_back.usage == response.usage));
  BOOST_TEST(read_back.content == "Hi");

  llmgate::chat_chunk usage_only;
  usage_only.usage = response.usage;
  const auto chunk = json::parse(llmgate::chunk_body(usage_only, "chatcmpl-1", "m", 1));
  BOOST_TEST(chunk.at("choices").as_array().empty());
  BOOST_TEST(llmgate::parse_chat_chunk(chunk).usage->cached_prompt_tokens == 64u);
}

BOOST_AUTO_TEST_CASE(embedding_request_accepts_a_string_or_strings) {
  auto one = llmgate::parse_embedding_request(json::parse(R"({"model":"e","input":"hello","dimensions":256,"encoding_format":"base64"})"));
  BOOST_TEST(one.input == (std::vector<std::string>{"hello"}), boost::test_tools::per_element());
  BOOST_TEST((one.encoding == llmgate::embedding_encoding::base64));
  BOOST_TEST(one.parameters.at("dimensions").to_number<int>() == 256);
  BOOST_TEST(!one.parameters.contains("encoding_format"));
  const auto two = llmgate::parse_embedding_request(json::parse(R"({"model":"e","input":["a","b"],"encoding_format":"float"})"));
  BOOST_TEST(two.input.size() == 2u);
  BOOST_TEST((two.encoding == llmgate::embedding_encoding::float_array));
  const auto refused = [](std::string_view body, std::string_view param, std::string_view message) {
    try {
      llmgate::parse_embedding_request(json::parse(body));
      BOOST_ERROR("accepted " << body);
    } catch (const llmgate::request_error& e) {
      BOOST_TEST(e.param() == param);
      BOOST_TEST(e.what() == message);
    }
  };
  refused(R"({"input":"a"})", "model", R"(model is required: name the embedding model in the request's "model" field.)");
  refused(R"({"model":"e","input":[1,2]})", "input",
          "Invalid type for 'input': expected a string or an array of strings, but got a number instead.");
  refused(R"({"model":"e","input":[]})", "input",
          "Invalid value for 'input': expected a string or a non-empty array of strings, but got [] instead.");
  refused(R"({"model":"e"})", "input", "Missing required parameter: 'input'.");
  refused(R"({"model":"e","input":"a","encoding_format":"int8"})", "encoding_format",
          R"(Invalid value for 'encoding_format': expected "float" or "base64", but got "int8" instead.)");
}

// OpenAI's client libraries ask for base64 by default and decode it as
// little-endian float32: 1.0f is 00 00 80 3F, -2.5f is 00 00 20 C0.
BOOST_AUTO_TEST_CASE(embedding_answers_are_written_as_floats_or_base64) {
  llmgate::embedding_response response;
  response.model = "e";
  response.embeddings = {{1.0f, -2.5f}, {0.0f}};
  response.usage.prompt_tokens = 3;
  const auto base64 = llmgate::to_json(response, llmgate::embedding_encoding::base64);
  BOOST_TEST(base64.at("data").at(0).at("embedding").as_string() == "AACAPwAAIMA=");
  BOOST_TEST(base64.at("data").at(1).at("embedding").as_string() == "AAAAAA==");
  BOOST_TEST(base64.at("data").at(1).at("index").to_number<int>() == 1);
  const auto floats = llmgate::to_json(response);
  BOOST_TEST(json::serialize(floats.at("data").at(0).at("embedding")) == "[1E0,-2.5E0]");
  BOOST_TEST(floats.at("usage").at("prompt_tokens").to_number<int>() == 3);
}

BOOST_AUTO_TEST_CASE(sse_survives_every_split_and_line_ending) {
  const std::string lf = ": comment\ndata: {\"a\":1}\n\nevent: delta\ndata: line one\ndata: line two\nid: 7\n\ndata: [DONE]\n\n";
  for (const std::string& ending : {std::string("\n"), std::string("\r\n"), std::string("\r")}) {
    std::string bytes;
    for (const char c : lf) bytes += c == '\n' ? ending : std::string(1, c);
    for (std::size_t first = 0; first <= bytes.size(); ++first) {
      for (std::size_t second = first; second <= bytes.size(); second += 3) {
        const auto events = parse_sse_in_pieces(bytes, first, second);
        BOOST_REQUIRE(events.size() == 3u);
        BOOST_TEST(events[0].data == "{\"a\":1}");
        BOOST_TEST(events[1].event == "delta");
        BOOST_TEST(events[1].data == "line one\nline two");
        BOOST_TEST(events[1].id == "7");
        BOOST_TEST(events[2].data == "[DONE]");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(sse_follows_the_spec_on_edge_cases) {
  sse_parser parser;
  std::vector<sse_event> events;
  parser.feed("data\n\n", events);              // a field without a colon: empty data
  parser.feed("data:no space\n\n", events);     // no space after the colon
  parser.feed("event: only\n\n", events);       // no data: no event
  parser.feed("data: partial", events);
  BOOST_REQUIRE(events.size() == 2u);
  BOOST_TEST(events[0].data == "");
  BOOST_TEST(events[1].data == "no space");
  BOOST_TEST(parser.has_partial_event());

  sse_parser small(64);
  std::vector<sse_event> ignored;
  error_message([&] { small.feed(std::string(100, 'x'), ignored); }, errc::upstream_protocol_error);
  sse_parser many_lines(64);
  error_message([&] {
    for (int i = 0; i < 10; ++i) many_lines.feed("data: 0123456789\n", ignored);
  }, errc::upstream_protocol_error);
}

BOOST_AUTO_TEST_CASE(ndjson_reads_values_split_anywhere_and_refuses_bad_lines) {
  const std::string bytes = "{\"a\":1}\n\n{\"b\":[1,2]}\r\n{\"c\":\"x\"}\n";
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    llmgate::ndjson_parser parser;
    std::vector<json::value> values;
    parser.feed(bytes.substr(0, cut), values);
    parser.feed(bytes.substr(cut), values);
    BOOST_REQUIRE(values.size() == 3u);
    BOOST_TEST(values[2].at("c").as_string() == "x");
    BOOST_TEST(!parser.has_partial_line());
  }
  llmgate::ndjson_parser parser;
  std::vector<json::value> values;
  BOOST_TEST(error_message([&] { parser.feed("{\"a\":\n", values); }, errc::upstream_protocol_error)
                 .find("NDJSON line is not JSON") == 0u);
}

BOOST_AUTO_TEST_CASE(assembler_merges_tool_call_pieces_by_index) {
  llmgate::chat_assembler assembled;
  const auto delta = [](std::string_view calls) {
    llmgate::chat_chunk chunk;
    chunk.tool_call_deltas_json = calls;
    return chunk;
  };
  assembled.add(delta(R"([{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}},
                          {"index":1,"id":"b","type":"function","function":{"name":"g","arguments":""}}])"));
  assembled.add(delta(R"([{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"{}"}}])"));
  const auto calls = json::parse(std::move(assembled).take().tool_calls_json).as_array();
  BOOST_REQUIRE(calls.size() == 2u);
  BOOST_TEST(calls[0].at("function").at("arguments").as_string() == "{\"x\":1}");
  BOOST_TEST(calls[1].at("id").as_string() == "b");
}

BOOST_AUTO_TEST_CASE(price_table_prices_cached_tokens_as_cached_and_matches_dated_names) {
  const auto table = llmgate::price_table::from_json(json::parse(R"({
      "gpt-4o": {"input": 2.5, "cached_input": 1.25, "output": 10},
      "gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6},
      "claude-3-5-sonnet": {"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15},
      "local": {"input": 0, "output": 0}})"));
  BOOST_TEST(table.find("gpt-4o-mini-2024-07-18")->input == 0.15);
  BOOST_TEST(table.find("gpt-4o-2024-08-06")->input == 2.5);
  BOOST_TEST(!table.find("gpt-4"));
  BOOST_TEST(!table.find("gpt-4omni"));
  BOOST_TEST(table.find("local")->cache_write == 0.0);
  BOOST_TEST(table.cost("gpt-4o", {1000, 100, 600, 0}) == (400 * 2.5 + 600 * 1.25 + 100 * 10) / 1e6,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(table.cost("claude-3-5-sonnet-latest", {1200, 10, 1000, 150}) ==
                 (50 * 3 + 1000 * 0.3 + 150 * 3.75 + 10 * 15) / 1e6,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(table.cost("unknown", {1000, 1000, 0, 0}) == 0.0);
  BOOST_TEST(error_message([] { llmgate::price_table::from_json(json::parse(R"({"m":{"input":-1,"output":1}})")); },
                           errc::invalid_request).find("price of m") == 0u);
}

BOOST_AUTO_TEST_CASE(base_urls_parse_with_defaults_and_refuse_bad_ones) {
  const auto openai = llmgate::base_url::parse("https://api.openai.com/v1/");
  BOOST_TEST(openai.tls);
  BOOST_TEST(openai.host == "api.openai.com");
  BOOST_TEST(openai.port == "443");
  BOOST_TEST(openai.path == "/v1");
  BOOST_TEST(openai.host_header() == "api.openai.com");
  const auto local = llmgate::base_url::parse("http://[::1]:8080");
  BOOST_TEST(local.host == "::1");
  BOOST_TEST(local.host_header() == "[::1]:8080");
  BOOST_TEST(local.path == "");
  error_message([] { llmgate::base_url::parse("ftp://x"); }, errc::invalid_request);
  error_message([] { llmgate::base_url::parse("http://host:99999"); }, errc::invalid_request);
  error_message([] { llmgate::base_url::parse("http://:80"); }, errc::invalid_request);
}

BOOST_AUTO_TEST_SUITE_END()
