// ollama_backend against the in-test upstream: /api/chat whole and as
// NDJSON split anywhere, eval counts as usage, options and format
// translated, tool calls, errors inside the stream, /api/embed.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <boost/json/parse.hpp>

#include "llmgate/backend/ollama_backend.hpp"
#include "backend_fixture.hpp"

using llmgate::backend_error;
using llmgate::errc;
using llmgate::ollama_backend;
using llmgate::token_usage;
using llmgate::test::backend_fixture;
using llmgate::test::chunk_log;
using llmgate::test::reply;
using llmgate::test::user_says;
namespace json = boost::json;

namespace {

struct ollama_fixture : backend_fixture {
  ollama_backend backend() { return ollama_backend(client(), {.base_url = server.url()}); }
};

json::value line(std::string_view text) { return json::parse(text); }

}  // namespace

BOOST_AUTO_TEST_SUITE(ollama_backend_test)

BOOST_FIXTURE_TEST_CASE(chat_translates_options_and_reads_eval_counts, ollama_fixture) {
  server.on("/api/chat", reply::json(line(R"({"model":"llama3.2","created_at":"2024-01-01T00:00:00Z",
      "message":{"role":"assistant","content":"Hi!"},"done":true,"done_reason":"stop",
      "prompt_eval_count":26,"eval_count":3})")));
  auto request = user_says("Hello", "llama3.2");
  llmgate::set_field(request.parameters, "max_tokens", "64");
  llmgate::set_field(request.parameters, "temperature", "0");
  llmgate::set_field(request.parameters, "response_format", R"({"type":"json_object"})");
  auto model = backend();
  const auto answer = run(model.complete(request));
  BOOST_TEST(answer.content == "Hi!");
  BOOST_TEST(answer.finish_reason == "stop");
  BOOST_TEST((answer.usage == token_usage{26, 3, 0, 0}));
  const auto body = server.received().at(0).json().as_object();
  BOOST_TEST(body.at("options").at("num_predict").as_int64() == 64);
  BOOST_TEST(body.at("format").as_string() == "json");
  BOOST_TEST(body.at("stream").as_bool() == false);
}

BOOST_FIXTURE_TEST_CASE(ndjson_stream_split_anywhere_reads_the_same, ollama_fixture) {
  auto whole = reply::ndjson({
      line(R"({"model":"llama3.2","message":{"role":"assistant","content":"The"},"done":false})"),
      line(R"({"model":"llama3.2","message":{"role":"assistant","content":" sky"},"done":false})"),
      line(R"({"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":2})")});
  std::string bytes;
  for (const auto& chunk : whole.chunks) bytes += chunk;
  for (const std::size_t piece : {1u, 7u, 64u}) {
    reply split = whole;
    split.chunks.clear();
    for (std::size_t i = 0; i < bytes.size(); i += piece) split.chunks.push_back(bytes.substr(i, piece));
    server.enqueue("/api/chat", split);
    auto model = backend();
    chunk_log log;
    const auto answer = run(model.stream(user_says("x"), log.handler()));
    BOOST_TEST(log.text() == "The sky");
    BOOST_TEST(answer.content == "The sky");
    BOOST_TEST(answer.usage.prompt_tokens == 9u);
    BOOST_TEST(log.chunks.back().usage.has_value());
  }
}

BOOST_FIXTURE_TEST_CASE(tool_calls_come_back_in_openai_form, ollama_fixture) {
  server.on("/api/chat", reply::json(line(R"({"model":"m","message":{"role":"assistant","content":"",
      "tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]},"done":true,
      "done_reason":"stop","prompt_eval_count":5,"eval_count":7})")));
  auto model = backend();
  const auto answer = run(model.complete(user_says("x")));
  BOOST_TEST(answer.finish_reason == "tool_calls");
  const auto calls = json::parse(answer.tool_calls_json).as_array();
  BOOST_REQUIRE(calls.size() == 1u);
  BOOST_TEST(calls[0].at("function").at("arguments").as_string() == R"({"city":"Oslo"})");
}

BOOST_FIXTURE_TEST_CASE(errors_in_status_and_stream_and_malformed_lines, ollama_fixture) {
  auto model = backend();
  server.enqueue("/api/chat", reply::json(line(R"({"error":"model 'nope' not found"})"), 404));
  try {
    run(model.complete(user_says("x")));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.status() == 404u);
    BOOST_TEST(e.upstream_error().at("message").as_string() == "model 'nope' not found");
  }
  server.enqueue("/api/chat", reply::ndjson({line(R"({"model":"m","message":{"content":"a"},"done":false})"),
                                             line(R"({"error":"out of memory"})")}));
  chunk_log log;
  try {
    run(model.stream(user_says("x"), log.handler()));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.upstream_error().at("message").as_string() == "out of memory");
  }
  reply broken{.headers = {{"Content-Type", "application/x-ndjson"}}, .chunks = {"{\"model\": tru\n"}};
  server.enqueue("/api/chat", broken);
  try {
    run(model.stream(user_says("x"), log.handler()));
    BOOST_FAIL("expected an error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.code() == errc::upstream_protocol_error);
  }
}

BOOST_FIXTURE_TEST_CASE(embed_reads_one_vector_per_input, ollama_fixture) {
  server.on("/api/embed", reply::json(line(
      R"({"model":"all-minilm","embeddings":[[0.1,0.2],[0.3,0.4]],"prompt_eval_count":4})")));
  auto model = backend();
  const auto answer = run(model.embed({.model = "all-minilm", .input = {"a", "b"}, .parameters = {}}));
  BOOST_REQUIRE(answer.embeddings.size() == 2u);
  BOOST_TEST(answer.embeddings[1][1] == 0.4f);
  BOOST_TEST(answer.usage.prompt_tokens == 4u);
  BOOST_TEST(server.received().at(0).json().at("input").as_array().size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
