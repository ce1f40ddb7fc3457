// Provider cache hints for compiled PML prompts, as the in-test upstream
// receives them: OpenAI's prompt_cache_key (the body byte for byte), and
// Anthropic's cache_control breakpoints (which module ends, the cap of
// four, the model's minimum length, nested and uncached modules, the
// client's own breakpoints). Plain requests are sent as before. The
// layouts are built by hand, as the PML compiler would leave them.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/backend/anthropic_backend.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/prompt/provider_hints.hpp"
#include "backend_fixture.hpp"

using llmgate::cache_breakpoint;
using llmgate::chat_request;
using llmgate::module_span;
using llmgate::prompt_layout;
using llmgate::test::backend_fixture;
using llmgate::test::reply;
namespace json = boost::json;

namespace {

const std::string chat_path = "/v1/chat/completions";
const std::string messages_path = "/v1/messages";

// System text of five 4-byte modules a..e (module i spans bytes [4i, 4i+4)),
// then a user question outside the prefix.
const std::string system_text = "AAAABBBBCCCCDDDDEEEE";

module_span span(std::string path, std::size_t message, std::size_t begin, std::size_t end,
                 std::size_t token_begin, std::size_t token_end, bool cached = true) {
  return {.path = std::move(path), .message = message, .begin = begin, .end = end,
          .token_begin = token_begin, .token_end = token_end, .cached = cached};
}

// Modules end at tokens 1100, 1500, 2100, 2600 and 3000; the cacheable
// prefix is the whole system message.
std::shared_ptr<prompt_layout> five_modules() {
  auto layout = std::make_shared<prompt_layout>();
  layout->schema = "doc";
  layout->version = "2";
  layout->modules = {span("a", 0, 0, 4, 0, 1100), span("b", 0, 4, 8, 1100, 1500), span("c", 0, 8, 12, 1500, 2100),
                     span("d", 0, 12, 16, 2100, 2600), span("e", 0, 16, 20, 2600, 3000)};
  layout->prefix_message = 0;
  layout->prefix_end = 20;
  layout->prefix_tokens = 3000;
  layout->total_tokens = 3010;
  layout->prefix_path = "doc/2/a/b/c/d/e";
  return layout;
}

chat_request pml_request(std::shared_ptr<const prompt_layout> layout, std::string model = "claude-sonnet-4") {
  chat_request request;
  request.model = std::move(model);
  request.messages = {{.role = "system", .content = system_text}, {.role = "user", .content = "Why?"}};
  request.layout = std::move(layout);
  return request;
}

json::value text_block(std::string_view text, bool marked) {
  json::object block{{"type", "text"}, {"text", text}};
  if (marked) block["cache_control"] = {{"type", "ephemeral"}};
  return block;
}

const reply anthropic_answer = reply::json(json::parse(R"({"id":"msg_1","type":"message","role":"assistant",
    "model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
    "usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":3000}})"));

struct hints_fixture : backend_fixture {
  llmgate::openai_backend openai(llmgate::openai_options options = {}) {
    options.base_url = server.url("/v1");
    return llmgate::openai_backend(client(), std::move(options));
  }
  llmgate::anthropic_backend anthropic(llmgate::anthropic_options options = {}) {
    options.base_url = server.url();
    return llmgate::anthropic_backend(client(), std::move(options));
  }
  // The Anthropic body's "system" after sending `request`.
  json::value system_sent(llmgate::anthropic_backend model, const chat_request& request) {
    server.on(messages_path, anthropic_answer);
    run(model.complete(request));
    return server.received().back().json().at("system");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(provider_hints_test)

BOOST_FIXTURE_TEST_CASE(openai_gets_the_prefix_path_as_prompt_cache_key, hints_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = openai();
  run(model.complete(pml_request(five_modules(), "gpt-4o")));
  BOOST_TEST(server.received().at(0).body ==
             R"({"model":"gpt-4o","messages":[{"role":"system","content":"AAAABBBBCCCCDDDDEEEE"},)"
             R"({"role":"user","content":"Why?"}],"stream":false,"prompt_cache_key":"doc/2/a/b/c/d/e"})");

  // Streamed: after the usage request, the key.
  server.on(chat_path, reply::chat_stream({"ok"}));
  llmgate::test::chunk_log log;
  run(model.stream(pml_request(five_modules(), "gpt-4o"), log.handler()));
  BOOST_TEST(server.received().at(1).body ==
             R"({"model":"gpt-4o","messages":[{"role":"system","content":"AAAABBBBCCCCDDDDEEEE"},)"
             R"({"role":"user","content":"Why?"}],"stream":true,"stream_options":{"include_usage":true},)"
             R"("prompt_cache_key":"doc/2/a/b/c/d/e"})");
}

BOOST_FIXTURE_TEST_CASE(openai_plain_requests_and_the_clients_own_key_are_left_alone, hints_fixture) {
  server.on(chat_path, reply::chat("ok"));
  auto model = openai();
  auto plain = pml_request(nullptr, "gpt-4o");
  run(model.complete(plain));
  BOOST_TEST(server.received().at(0).body ==
             R"({"model":"gpt-4o","messages":[{"role":"system","content":"AAAABBBBCCCCDDDDEEEE"},)"
             R"({"role":"user","content":"Why?"}],"stream":false})");

  auto own = pml_request(five_modules(), "gpt-4o");
  llmgate::set_field(own.parameters, "prompt_cache_key", R"("mine")");
  run(model.complete(own));
  BOOST_TEST(server.received().at(1).body ==
             R"({"model":"gpt-4o","messages":[{"role":"system","content":"AAAABBBBCCCCDDDDEEEE"},)"
             R"({"role":"user","content":"Why?"}],"stream":false,"prompt_cache_key":"mine"})");

  auto off = openai({.prompt_cache_key = false});
  run(off.complete(pml_request(five_modules(), "gpt-4o")));
  BOOST_TEST(server.received().at(2).body == server.received().at(0).body);
}

BOOST_AUTO_TEST_CASE(breakpoints_take_the_prefix_end_then_the_earliest_module_ends_at_most_four) {
  const auto layout = five_modules();
  // e ends where the prefix ends: one breakpoint there; then a, b, c (d, 2600, is left out by the cap).
  const std::vector<cache_breakpoint> expected{{0, 4, 1100}, {0, 8, 1500}, {0, 12, 2100}, {0, 20, 3000}};
  BOOST_TEST((llmgate::cache_breakpoints(*layout, 1024) == expected));
  const std::vector<cache_breakpoint> two{{0, 4, 1100}, {0, 20, 3000}};
  BOOST_TEST((llmgate::cache_breakpoints(*layout, 1024, 2) == two));
  BOOST_TEST(llmgate::cache_breakpoints(*layout, 1024, 0).empty());
  // Nothing reaches the minimum: none at all.
  BOOST_TEST(llmgate::cache_breakpoints(*layout, 3001).empty());
  BOOST_TEST(llmgate::anthropic_min_cacheable_tokens("claude-3-5-haiku-20241022") == 2048u);
  BOOST_TEST(llmgate::anthropic_min_cacheable_tokens("claude-sonnet-4-20250514") == 1024u);
}

BOOST_AUTO_TEST_CASE(breakpoints_skip_uncached_modules_and_ends_past_the_prefix_and_follow_nesting) {
  prompt_layout layout;
  // parent [0,12) holding child [4,8); an uncached module [12,16); the
  // prefix ends at 16, in message 0; a module after it in message 1.
  layout.modules = {span("parent", 0, 0, 12, 0, 2000), span("parent/child", 0, 4, 8, 1000, 1500),
                    span("volatile", 0, 12, 16, 2000, 2500, false), span("late", 1, 0, 3, 2600, 4000)};
  layout.prefix_message = 0;
  layout.prefix_end = 16;
  layout.prefix_tokens = 2500;
  const std::vector<cache_breakpoint> expected{{0, 8, 1500}, {0, 12, 2000}, {0, 16, 2500}};
  BOOST_TEST((llmgate::cache_breakpoints(layout, 1024) == expected));
}

BOOST_FIXTURE_TEST_CASE(anthropic_cuts_the_system_message_into_blocks_marked_at_the_breakpoints, hints_fixture) {
  const json::value expected = json::array{text_block("AAAA", true), text_block("BBBB", true),
                                           text_block("CCCC", true), text_block("DDDDEEEE", true)};
  BOOST_TEST(system_sent(anthropic(), pml_request(five_modules())) == expected);
  // The user's question, after the prefix, is one unmarked block as before.
  BOOST_TEST(server.received().back().json().at("messages") ==
             json::parse(R"([{"role":"user","content":[{"type":"text","text":"Why?"}]}])"));
}

BOOST_FIXTURE_TEST_CASE(anthropic_puts_none_below_the_models_minimum, hints_fixture) {
  // Haiku caches from 2048 tokens: a (1100) and b (1500) are too short.
  const json::value haiku = json::array{text_block("AAAABBBBCCCC", true), text_block("DDDD", true),
                                        text_block("EEEE", true)};
  BOOST_TEST(system_sent(anthropic(), pml_request(five_modules(), "claude-3-5-haiku-20241022")) == haiku);
  // The option replaces the model's minimum.
  const json::value long_only = json::array{text_block("AAAABBBBCCCCDDDD", true), text_block("EEEE", true)};
  BOOST_TEST(system_sent(anthropic({.cache_min_tokens = 2500}), pml_request(five_modules())) == long_only);
  // A prompt shorter than the minimum is sent as a plain one is.
  const json::value plain = json::array{text_block(system_text, false)};
  BOOST_TEST(system_sent(anthropic({.cache_min_tokens = 5000}), pml_request(five_modules())) == plain);
  BOOST_TEST(system_sent(anthropic({.cache_breakpoints = 0}), pml_request(five_modules())) == plain);
  BOOST_TEST(system_sent(anthropic(), pml_request(nullptr)) == plain);
}

BOOST_FIXTURE_TEST_CASE(anthropic_marks_breakpoints_in_user_messages_too, hints_fixture) {
  auto layout = std::make_shared<prompt_layout>();
  layout->modules = {span("intro", 0, 0, 20, 0, 1200), span("doc", 1, 0, 6, 1210, 2400)};
  layout->prefix_message = 1;
  layout->prefix_end = 6;
  layout->prefix_tokens = 2400;
  auto request = pml_request(layout);
  request.messages[1].content = "LEMMASWhy?";
  const json::value system = json::array{text_block(system_text, true)};
  BOOST_TEST(system_sent(anthropic(), request) == system);
  const json::value messages = json::array{
      json::object{{"role", "user"}, {"content", json::array{text_block("LEMMAS", true), text_block("Why?", false)}}}};
  BOOST_TEST(server.received().back().json().at("messages") == messages);
}

BOOST_FIXTURE_TEST_CASE(anthropic_leaves_a_clients_own_breakpoints_alone, hints_fixture) {
  auto request = pml_request(five_modules());
  request.messages[0].content_json = R"([{"type":"text","text":")" + system_text +
                                     R"(","cache_control":{"type":"ephemeral"}}])";
  const json::value own = json::parse(R"([{"type":"text","text":")" + system_text +
                                      R"(","cache_control":{"type":"ephemeral"}}])");
  BOOST_TEST(system_sent(anthropic(), request) == own);
}

BOOST_AUTO_TEST_SUITE_END()
