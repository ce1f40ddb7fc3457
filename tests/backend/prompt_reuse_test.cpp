// PML prompts on a real inference engine: node-llama-cpp serving
// ../shared/data/models/stories260K through scripts/llama_engine.mjs,
// which keeps llama-server's slots (id_slot, cache_prompt) and reports the
// prompt tokens the engine did not evaluate again as
// usage.prompt_tokens_details.cached_tokens. The counts here are the
// engine's: the harness's POST /tokenize gives the exact tokens each prompt
// evaluates, so every expected count is a count of engine tokens, never of
// characters. Skipped, with the reason, where Node, the packages or the
// model are missing (CTest reports it as skipped; CI, with
// LLMGATE_REQUIRE_REAL_PARTS=1, as failed).
#include <boost/test/unit_test.hpp>

#include <algorithm>  // std::mismatch
#include <cstdint>    // std::int32_t, std::uint64_t
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/asio/io_context.hpp>  // net::io_context

#include "llmgate/backend/blocking.hpp"             // run_blocking
#include "llmgate/backend/llama_cpp_tokenizer.hpp"  // the engine's tokens
#include "llmgate/backend/openai_backend.hpp"  // the chat requests
#include "llmgate/prompt/compiler.hpp"         // compile_prompt
#include "llmgate/prompt/pml_parser.hpp"       // parse_schema
#include "llmgate/prompt/schema_registry.hpp"  // schema_registry
#include "llmgate/prompt/tokenizer.hpp"        // estimated_tokenizer
#include "../node/node_process.hpp"  // llama_harness, llama_engine_unavailable
#include "../skip_test.hpp"          // skip_test

namespace {

namespace net = boost::asio;
using tokens = std::vector<std::int32_t>;

/// The engine on a port: chat through llmgate's OpenAI adapter, tokens
/// through the harness's POST /tokenize (llama_cpp_tokenizer).
class engine {
 public:
  explicit engine(const std::string& base_url)  // "http://127.0.0.1:<port>/v1"
      : tokenizer(base_url), backend_(io_.get_executor(), {.name = "engine", .base_url = base_url}) {}

  /// The tokens a chat prompt of `messages` evaluates (contents joined by
  /// newlines, after BOS: the harness's prompt).
  tokens tokenize(const std::vector<llmgate::chat_message>& messages) const {
    std::string text;
    for (std::size_t i = 0; i < messages.size(); ++i) text += (i ? "\n" : "") + messages[i].content;
    return tokenizer.tokenize(text, true);
  }

  /// The prompt tokens the engine reused answering `request` in slot `slot`
  /// (-1: the engine chooses), with `cache_prompt`.
  std::uint64_t cached(llmgate::chat_request request, int slot, bool cache_prompt = true) {
    request.model = "stories260K-ctx512";
    llmgate::set_field(request.parameters, "max_tokens", "4");
    llmgate::set_field(request.parameters, "temperature", "0");
    llmgate::set_field(request.parameters, "id_slot", std::to_string(slot));
    llmgate::set_field(request.parameters, "cache_prompt", cache_prompt ? "true" : "false");
    const auto response = llmgate::run_blocking(io_, backend_.complete(request));
    BOOST_TEST(response.usage.prompt_tokens == tokenize(request.messages).size());
    return response.usage.cached_prompt_tokens;
  }

 llmgate::llama_cpp_tokenizer tokenizer;

 private:
  net::io_context io_;
  llmgate::openai_backend backend_;
};

std::size_t common_prefix(const tokens& a, const tokens& b) {
  const auto n = std::min(a.size(), b.size());
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin()).first -
                                  a.begin());
}

llmgate::chat_request user_says(std::string text) {
  llmgate::chat_request request;
  request.messages = {{"user", std::move(text)}};
  return request;
}

constexpr const char* story_schema = R"(<schema name="story" version="1">
  <system>You tell short stories to small children.</system>
  <user>
    <module name="setting">Once upon a time, in a little town by the sea, there lived a kind old woman. She had a garden full of red flowers and a blue door.</module>
    <module name="hero">One day a small brown dog named Max came to her door. He was hungry and cold, and he wagged his tail.</module>
    <union>
      <module name="happy">The woman gave Max some bread and a warm bed. They became best friends and played in the garden every day.</module>
      <module name="sad">The woman was not at home. Max waited by the blue door until the sun went down, and then he walked away.</module>
    </union>
  </user>
</schema>)";

}  // namespace

BOOST_AUTO_TEST_SUITE(prompt_reuse_test)

// The harness keeps llama-server's slot rules: the named slot's tokens are
// reused up to the first difference, all but the last token of a repeated
// prompt, nothing without cache_prompt, and an unnamed request goes to the
// slot holding the most of its prompt.
BOOST_AUTO_TEST_CASE(slots_reuse_what_they_hold) {
  if (const auto missing = llmgate::test::llama_engine_unavailable()) return llmgate::test::skip_test(*missing);
  const auto harness = llmgate::test::llama_harness("prompt_reuse_test.slots.log");
  BOOST_REQUIRE_MESSAGE(harness.base_url(), "the engine did not start, see prompt_reuse_test.slots.log");
  engine model(*harness.base_url());

  const auto dog = user_says("Once upon a time there was a little dog. The dog liked to play in the park.");
  const auto ball = user_says("Lily had a red ball. She threw it high into the sky and laughed.");
  const auto dog_tokens = model.tokenize(dog.messages);
  BOOST_TEST(model.cached(dog, 0) == 0u);    // a fresh slot holds nothing
  BOOST_TEST(model.cached(ball, 1) == 0u);
  BOOST_TEST(model.cached(dog, 0) == dog_tokens.size() - 1);  // the last token is evaluated again for its logits
  BOOST_TEST(model.cached(dog, 1) == common_prefix(dog_tokens, model.tokenize(ball.messages)));  // BOS only
  BOOST_TEST(model.cached(dog, 1) == dog_tokens.size() - 1);
  BOOST_TEST(model.cached(dog, 5) == dog_tokens.size() - 1);  // slot 5 of 4 is slot 1, as llama-server wraps it
  BOOST_TEST(model.cached(dog, 0, false) == 0u);               // cache_prompt: false evaluates it all
  BOOST_TEST(model.cached(dog, -1) == dog_tokens.size() - 1);  // the most similar slot: 0 or 1, both hold it
}

// Two PML prompts sharing the schema's text and two modules, then parting
// at a union: the second reuses in the engine every token up to where they
// part, which covers the shared modules' tokens; its plain equivalent in a
// fresh slot reuses nothing.
BOOST_AUTO_TEST_CASE(prompts_sharing_modules_reuse_their_tokens_in_the_engine) {
  if (const auto missing = llmgate::test::llama_engine_unavailable()) return llmgate::test::skip_test(*missing);
  const auto harness = llmgate::test::llama_harness("prompt_reuse_test.modules.log");
  BOOST_REQUIRE_MESSAGE(harness.base_url(), "the engine did not start, see prompt_reuse_test.modules.log");
  engine model(*harness.base_url());

  llmgate::schema_registry registry;
  registry.add(llmgate::parse_schema(story_schema));
  const llmgate::estimated_tokenizer estimate;
  const auto happy = llmgate::compile_prompt(
      registry, R"(<prompt schema="story"><setting/><hero/><happy/>Tell the story to the end.</prompt>)", estimate);
  const auto sad = llmgate::compile_prompt(
      registry, R"(<prompt schema="story"><setting/><hero/><sad/>Tell the story to the end.</prompt>)", estimate);
  BOOST_REQUIRE(happy.layout);
  BOOST_REQUIRE(sad.layout);

  // The engine's tokens of the text through the end of <hero/>, the last
  // shared module, and of both whole prompts.
  const auto& hero = sad.layout->modules.at(1);
  BOOST_REQUIRE(hero.path == "hero");
  std::vector<llmgate::chat_message> through_hero(sad.messages.begin(),
                                                  sad.messages.begin() + static_cast<std::ptrdiff_t>(hero.message) + 1);
  through_hero.back().content.resize(hero.end);
  const auto shared_modules = model.tokenize(through_hero).size();
  const auto happy_tokens = model.tokenize(happy.messages);
  const auto sad_tokens = model.tokenize(sad.messages);
  const auto shared = common_prefix(happy_tokens, sad_tokens);
  BOOST_TEST(shared >= shared_modules);
  BOOST_TEST(shared < sad_tokens.size());

  BOOST_TEST(model.cached(happy, 0) == 0u);
  BOOST_TEST(model.cached(sad, 0) == shared);  // exactly the engine's common prefix

  // The same messages without the layout are the same tokens to the engine.
  auto plain = sad;
  plain.layout = nullptr;
  BOOST_TEST(model.cached(plain, 0) == sad_tokens.size() - 1);
  BOOST_TEST(model.cached(plain, 2) == 0u);          // a fresh slot holds nothing
  BOOST_TEST(model.cached(sad, 0, false) == 0u);     // no reuse asked, none done
}

// Compiled with the engine's own tokenizer, a parameter's len and the
// modules' token spans are the engine's counts, not the estimate's.
BOOST_AUTO_TEST_CASE(the_engine_tokenizer_counts_what_the_compiler_checks) {
  if (const auto missing = llmgate::test::llama_engine_unavailable()) return llmgate::test::skip_test(*missing);
  const auto harness = llmgate::test::llama_harness("prompt_reuse_test.tokenizer.log");
  BOOST_REQUIRE_MESSAGE(harness.base_url(), "the engine did not start, see prompt_reuse_test.tokenizer.log");
  const llmgate::llama_cpp_tokenizer tokenizer(*harness.base_url());

  llmgate::schema_registry registry;
  registry.add(llmgate::parse_schema(R"(<schema name="pet"><user>
    <module name="intro">Once upon a time there was a little dog.</module>
    <module name="named">His name was <param name="name" len="3"/>.</module>
  </user></schema>)"));
  const std::string pml = R"(<prompt schema="pet"><intro/><named name="Maximilian"/></prompt>)";
  const std::size_t engine_count = tokenizer.tokenize("Maximilian").size();
  BOOST_TEST_REQUIRE(engine_count > 3u);  // stories260K's 512-token vocabulary splits the name
  BOOST_TEST(llmgate::estimated_tokenizer{}.count("Maximilian") == 3u);  // the estimate lets it pass

  BOOST_CHECK_NO_THROW(llmgate::compile_prompt(registry, pml, llmgate::estimated_tokenizer{}));
  try {
    llmgate::compile_prompt(registry, pml, tokenizer);
    BOOST_ERROR("an argument longer than its len in the engine's tokens was accepted");
  } catch (const llmgate::pml_error& e) {
    BOOST_TEST(std::string(e.what()) == "line 1, column 37: the argument name is " + std::to_string(engine_count) +
                                            " tokens long; its parameter allows 3");
  }

  const auto compiled = llmgate::compile_prompt(
      registry, R"(<prompt schema="pet"><intro/><named name="Max"/></prompt>)", tokenizer);
  const auto& named = compiled.layout->modules.at(1);
  BOOST_REQUIRE(named.path == "named");
  const std::string& text = compiled.messages.at(named.message).content;
  BOOST_TEST(named.token_begin == tokenizer.count(text.substr(0, named.begin)));
  BOOST_TEST(named.token_end == tokenizer.count(text.substr(0, named.end)));
}

BOOST_AUTO_TEST_SUITE_END()
