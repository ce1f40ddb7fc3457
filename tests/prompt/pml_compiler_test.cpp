// compile_prompt: the exact messages a prompt compiles to (schema order,
// the prompt's text in place, role blocks as chat messages, union
// defaults), each module's byte and token span, where the cacheable prefix
// ends, prefix_path, the shared whole_schema, and byte-identical prefixes
// for the same imports.
#include <cstddef>      // std::size_t
#include <filesystem>   // std::filesystem::create_directories
#include <fstream>      // std::ofstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/builder.hpp"
#include "llmgate/prompt/compiler.hpp"
#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/prompt/schema_registry.hpp"
#include "llmgate/prompt/tokenizer.hpp"
#include "reading_schema.hpp"  // the librarian's schema
#include "../temporary_directory.hpp"  // temporary_directory

namespace {

using namespace llmgate;

const prompt_schema& reading() {
  static const prompt_schema schema = parse_schema(test::reading_schema_pml);
  return schema;
}

chat_request compile(std::string_view prompt_pml, const prompt_schema& schema = reading()) {
  return compile_prompt(schema, parse_prompt(prompt_pml), estimated_tokenizer{});
}

struct expected_message {
  std::string role, content;
};

void check_messages(const chat_request& request, const std::vector<expected_message>& expected) {
  BOOST_REQUIRE(request.messages.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST(request.messages[i].role == expected[i].role, "message " << i);
    BOOST_TEST(request.messages[i].content == expected[i].content, "message " << i << ": " << request.messages[i].content);
  }
}

void check_span(const module_span& span, std::string_view path, std::size_t message, std::size_t begin,
                std::size_t end, std::size_t token_begin, std::size_t token_end, bool cached = true) {
  BOOST_TEST(span.path == path);
  BOOST_TEST(span.message == message, path);
  BOOST_TEST(span.begin == begin, path);
  BOOST_TEST(span.end == end, path);
  BOOST_TEST(span.token_begin == token_begin, path);
  BOOST_TEST(span.token_end == token_end, path);
  BOOST_TEST(span.cached == cached, path);
}

// The cacheable prefix as one string: whole messages with their roles, then the part of the last.
std::string prefix_of(const chat_request& request) {
  const auto& layout = *request.layout;
  std::string prefix;
  for (std::size_t m = 0; m < layout.prefix_message; ++m)
    prefix += request.messages[m].role + ":" + request.messages[m].content + "\n";
  return prefix + request.messages[layout.prefix_message].role + ":" +
         request.messages[layout.prefix_message].content.substr(0, layout.prefix_end);
}

const char* const system_text = "You are a patient librarian who suggests books.";  // 14 estimated tokens
const char* const assistant_text = "Tell me more about what you like.";             // 9

const std::string code_schema_pml = R"(<schema name="code" version="3">
  <system>You review C++ code.</system>
  <module name="a.hpp">int a();</module>
  <module name="b.hpp">int b();</module>
  <module name="c.hpp">int c();</module>
  Review what you were given.
</schema>)";

std::string error_of_compile(const schema_registry& registry, std::string_view prompt_pml) {
  try {
    (void)compile_prompt(registry, prompt_pml, estimated_tokenizer{});
  } catch (const pml_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pml_compiler_test)

BOOST_AUTO_TEST_CASE(a_prompt_compiles_to_chat_messages_with_its_layout) {
  const chat_request request = compile(R"(<prompt schema="reading">
      <plan weeks="2"><history><modern/></history></plan>
      <user>What first?</user>
    </prompt>)");
  check_messages(request, {{"system", system_text},
                           {"user", "I want a reading plan for 2 weeks.\nOnly history books.\nThe last two centuries."},
                           {"assistant", assistant_text},
                           {"user", "What first?"}});
  BOOST_TEST(request.model == "");
  BOOST_TEST(!request.stream);
  BOOST_TEST(request.parameters.empty());
  BOOST_REQUIRE(request.layout);
  const prompt_layout& layout = *request.layout;
  BOOST_TEST(layout.schema == "reading");
  BOOST_TEST(layout.version == "1");
  BOOST_REQUIRE(layout.modules.size() == 3u);
  // Message 1 has 24 estimated tokens: "I want a reading plan for " 7, "2 weeks.\n" 4, "Only history books.\n" 6, the rest 7.
  check_span(layout.modules[0], "plan", 1, 0, 78, 14, 38);
  check_span(layout.modules[1], "plan/history", 1, 35, 78, 25, 38);
  check_span(layout.modules[2], "plan/history/modern", 1, 55, 78, 31, 38);
  // The prefix ends where the argument "2" starts.
  BOOST_TEST(layout.prefix_message == 1u);
  BOOST_TEST(layout.prefix_end == 26u);
  BOOST_TEST(layout.prefix_tokens == 21u);
  BOOST_TEST(layout.total_tokens == 51u);
  BOOST_TEST(layout.prefix_path == "reading@1:plan");
}

BOOST_AUTO_TEST_CASE(a_union_without_an_imported_member_includes_its_scaffold_member) {
  const chat_request request = compile(R"(<prompt schema="reading"><plan weeks="10">Make it light.</plan></prompt>)");
  check_messages(request, {{"system", system_text},
                           {"user",
                            "I want a reading plan for 10 weeks.\nStories please, the longer the better.\nMake it light."},
                           {"assistant", assistant_text}});
  const prompt_layout& layout = *request.layout;
  BOOST_REQUIRE(layout.modules.size() == 2u);
  // "I want a reading plan for 10 weeks.\n" is 11 tokens, "Stories please, the longer the better." 12.
  check_span(layout.modules[0], "plan", 1, 0, 89, 14, 42);
  check_span(layout.modules[1], "plan/fiction", 1, 36, 74, 25, 37);
  BOOST_TEST(layout.prefix_end == 26u);
  BOOST_TEST(layout.prefix_path == "reading@1:plan");
}

BOOST_AUTO_TEST_CASE(an_uncached_module_ends_the_prefix_where_it_starts) {
  const chat_request request = compile(R"(<prompt schema="reading"><notes/></prompt>)");
  check_messages(request, {{"system", system_text}, {"user", "Today is a holiday."}, {"assistant", assistant_text}});
  const prompt_layout& layout = *request.layout;
  BOOST_REQUIRE(layout.modules.size() == 1u);
  check_span(layout.modules[0], "notes", 1, 0, 19, 14, 21, false);
  BOOST_TEST(layout.prefix_message == 1u);
  BOOST_TEST(layout.prefix_end == 0u);
  BOOST_TEST(layout.prefix_tokens == 14u);
  BOOST_TEST(layout.prefix_path == "reading@1");
}

BOOST_AUTO_TEST_CASE(a_prompt_without_imports_adds_its_text_after_the_schema_messages) {
  // The user block holds only modules, none imported: no empty message.
  const chat_request request = compile(R"(<prompt schema="reading">Just chatting.<assistant>Sure.</assistant></prompt>)");
  check_messages(request,
                 {{"system", system_text}, {"assistant", assistant_text}, {"user", "Just chatting."}, {"assistant", "Sure."}});
  const prompt_layout& layout = *request.layout;
  BOOST_TEST(layout.modules.empty());
  BOOST_TEST(layout.prefix_message == 2u);
  BOOST_TEST(layout.prefix_end == 0u);
  BOOST_TEST(layout.prefix_tokens == 23u);
  BOOST_TEST(layout.total_tokens == 23u + 4u + 2u);
  BOOST_TEST(layout.prefix_path == "reading@1");
}

BOOST_AUTO_TEST_CASE(modules_come_in_schema_order_and_text_stays_by_its_import) {
  const prompt_schema code = parse_schema(code_schema_pml);
  // Text after the last import follows the module that comes last.
  const chat_request trailing = compile(R"(<prompt schema="code"><c.hpp/><a.hpp/>Is it safe?</prompt>)", code);
  check_messages(trailing, {{"system", "You review C++ code."},
                            {"user", "int a();\nint c();\nIs it safe?\nReview what you were given."}});
  BOOST_REQUIRE(trailing.layout->modules.size() == 2u);
  // "You review C++ code." is 8 estimated tokens, "int a();" 5.
  check_span(trailing.layout->modules[0], "a.hpp", 1, 0, 8, 8, 13);
  check_span(trailing.layout->modules[1], "c.hpp", 1, 9, 17, 13, 18);
  BOOST_TEST(trailing.layout->prefix_end == 17u);
  BOOST_TEST(trailing.layout->prefix_path == "code@3:a.hpp;c.hpp");

  // Text between two imports follows the first of them (c.hpp); text
  // before the first import precedes the module that comes first, text
  // after the last follows the one that comes last.
  const chat_request between =
      compile(R"(<prompt schema="code">First: <c.hpp/> and then <b.hpp/> last.</prompt>)", code);
  check_messages(between, {{"system", "You review C++ code."},
                           {"user", "First:\nint b();\nint c();\nand then\nlast.\nReview what you were given."}});
  BOOST_TEST(between.layout->prefix_message == 1u);
  BOOST_TEST(between.layout->prefix_end == 0u);
  BOOST_TEST(between.layout->prefix_path == "code@3");
}

BOOST_AUTO_TEST_CASE(the_same_imports_give_byte_identical_prefixes) {
  const prompt_schema code = parse_schema(code_schema_pml);
  // Same imports, in any order, with different text after them or none.
  const chat_request a = compile(R"(<prompt schema="code"><a.hpp/><c.hpp/>Is it safe?</prompt>)", code);
  const chat_request b = compile(R"(<prompt schema="code"><c.hpp/><a.hpp/>Is it fast?<user>Be brief.</user></prompt>)", code);
  const chat_request c = compile(R"(<prompt schema="code"><c.hpp/>Anything wrong?<a.hpp/></prompt>)", code);
  const std::string expected = "system:You review C++ code.\nuser:int a();\nint c();";
  BOOST_TEST(prefix_of(a) == expected);
  BOOST_TEST(prefix_of(b) == expected);
  BOOST_TEST(prefix_of(c) == "system:You review C++ code.\nuser:int a();\nint c();");
  BOOST_TEST(a.layout->prefix_tokens == b.layout->prefix_tokens);
  BOOST_TEST(a.layout->prefix_path == b.layout->prefix_path);

  // Same imports, different arguments: the prefix stops at the argument.
  const chat_request d = compile(R"(<prompt schema="reading"><plan weeks="2"><history><ancient/></history></plan></prompt>)");
  const chat_request e = compile(R"(<prompt schema="reading"><plan weeks="nine"><history><ancient/></history></plan>Why?</prompt>)");
  BOOST_TEST(prefix_of(d) == "system:" + std::string(system_text) + "\nuser:I want a reading plan for ");
  BOOST_TEST(prefix_of(e) == prefix_of(d));
  // And compiling again gives the same bytes.
  const chat_request again = compile(R"(<prompt schema="reading"><plan weeks="nine"><history><ancient/></history></plan>Why?</prompt>)");
  BOOST_TEST(again.messages[1].content == e.messages[1].content);
}

BOOST_AUTO_TEST_CASE(the_whole_schema_is_computed_once_and_shared) {
  const chat_request a = compile(R"(<prompt schema="reading"><notes/></prompt>)");
  const chat_request b = compile(R"(<prompt schema="reading"><plan weeks="1"/></prompt>)");
  BOOST_REQUIRE(a.layout->whole_schema);
  BOOST_TEST(a.layout->whole_schema.get() == b.layout->whole_schema.get());
  BOOST_TEST(a.layout->whole_schema.get() == reading().whole_schema.get());
  const auto& whole = *a.layout->whole_schema;
  BOOST_REQUIRE(whole.size() == 3u);
  BOOST_TEST(whole[0].role == "system");
  BOOST_TEST(whole[0].content == system_text);
  BOOST_TEST(whole[1].role == "user");
  // Every module, union members in schema order, the parameter as its scaffold (none here), each member
  // after the first with a copy of the text since the parameter or the parent's start.
  BOOST_TEST(whole[1].content ==
             "I want a reading plan for  weeks.\nStories please, the longer the better.\n weeks.\n"
             "Only history books.\nGreece and Rome.\nOnly history books.\nThe last two centuries.\nToday is a holiday.");
  BOOST_TEST(whole[2].content == assistant_text);

  const prompt_schema scaffolded =
      parse_schema(R"(<schema name="s"><module name="m">Visit <param name="city" len="5" scaffold="a city"/>.</module></schema>)");
  BOOST_TEST(scaffolded.whole_schema->at(0).content == "Visit a city.");
}

BOOST_AUTO_TEST_CASE(in_the_whole_schema_every_union_member_follows_its_own_copy_of_the_lead_in) {
  const prompt_schema profile = parse_schema(R"(<schema name="profile">
  <user>
    Profile.
    <module name="intro">A learner.</module>
    4. Pace.
    <union>
      <module name="slow">Slowly.</module>
      <module name="fast">Quickly.</module>
      <module name="mixed">Varied.</module>
    </union>
    5. Goal.
    <union>
      <module name="exam">An exam.</module>
      <module name="fun">For fun.</module>
    </union>
    <module name="goal">
      Level <param name="level" len="2"/> expected.
      <union>
        <module name="basic">Basics.</module>
        <module name="deep">Depth.
          <union>
            <module name="proofs">Proofs.</module>
            <module name="cases">Cases.</module>
          </union>
        </module>
      </union>
    </module>
    <union>
      <module name="short">Short.</module>
      <module name="long">Long.</module>
    </union>
  </user>
</schema>)");
  // The lead-in is the parent's text since its last module, union or parameter: "4. Pace.", not
  // "Profile."; " expected." after the parameter; "Depth." in the nested union; nothing for the last
  // union, which follows a module. The first member keeps the original.
  BOOST_REQUIRE(profile.whole_schema->size() == 1u);
  BOOST_TEST(profile.whole_schema->at(0).content ==
             "Profile.\nA learner.\n4. Pace.\nSlowly.\n4. Pace.\nQuickly.\n4. Pace.\nVaried.\n"
             "5. Goal.\nAn exam.\n5. Goal.\nFor fun.\n"
             "Level  expected.\nBasics.\n expected.\nDepth.\nProofs.\nDepth.\nCases.\n"
             "Short.\nLong.");
  // So whichever member a prompt picks, [lead-in][member] is one run of the whole schema; the
  // prompt itself carries no copies.
  const chat_request request =
      compile(R"(<prompt schema="profile"><intro/><fast/><fun/><goal level="B2"><deep><cases/></deep></goal></prompt>)", profile);
  check_messages(request, {{"user", "Profile.\nA learner.\n4. Pace.\nQuickly.\n5. Goal.\nFor fun.\nLevel B2 expected.\n"
                                    "Depth.\nCases."}});
  const std::string& whole = profile.whole_schema->at(0).content;
  BOOST_TEST(whole.find("\n4. Pace.\nQuickly.\n") != std::string::npos);
  BOOST_TEST(whole.find("\n5. Goal.\nFor fun.\n") != std::string::npos);
  BOOST_TEST(whole.find("\nDepth.\nCases.\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_prefix_path_longer_than_openai_allows_is_shortened_with_a_hash) {
  const prompt_schema schema = parse_schema(R"(<schema name="a-long-schema-name" version="2026.11">
    <module name="first-module-with-a-long-name">One.</module>
    <module name="second-module-with-a-long-name">Two.</module>
  </schema>)");
  const chat_request one = compile(R"(<prompt schema="a-long-schema-name"><first-module-with-a-long-name/></prompt>)", schema);
  BOOST_TEST(one.layout->prefix_path == "a-long-schema-name@2026.11:first-module-with-a-long-name");  // 56 bytes: as it is
  const chat_request both = compile(
      R"(<prompt schema="a-long-schema-name"><first-module-with-a-long-name/><second-module-with-a-long-name/></prompt>)",
      schema);
  const std::string& key = both.layout->prefix_path;
  BOOST_TEST(key.size() == 64u);
  BOOST_TEST(key.substr(0, 48) == "a-long-schema-name@2026.11:first-module-with-a-#");
  BOOST_TEST(key.find_first_not_of("0123456789abcdef", 48) == std::string::npos);
  const chat_request again = compile(
      R"(<prompt schema="a-long-schema-name"><second-module-with-a-long-name/><first-module-with-a-long-name/></prompt>)",
      schema);
  BOOST_TEST(again.layout->prefix_path == key);
}

BOOST_AUTO_TEST_CASE(role_blocks_are_chat_messages_not_template_text) {
  const prompt_schema chat = parse_schema(R"(<schema name="chat">
    <system>Be kind.</system>
    <user>Hello.</user>
    <assistant>Hi! <module name="offer">How can I help?</module></assistant>
  </schema>)");
  const chat_request request = compile(R"(<prompt schema="chat"><offer/><user>Tell me a joke.</user></prompt>)", chat);
  check_messages(request, {{"system", "Be kind."},
                           {"user", "Hello."},
                           {"assistant", "Hi!\nHow can I help?"},
                           {"user", "Tell me a joke."}});
  check_span(request.layout->modules[0], "offer", 2, 4, 19, 8, 13);
  BOOST_TEST(request.layout->prefix_message == 3u);
  BOOST_TEST(request.layout->prefix_end == 0u);
  BOOST_TEST(request.layout->prefix_path == "chat:offer");
}

BOOST_AUTO_TEST_CASE(the_registry_overload_parses_finds_and_compiles) {
  schema_registry registry;
  registry.add(parse_schema(test::reading_schema_pml));
  const chat_request request =
      compile_prompt(registry, R"(<prompt schema="reading" version="1"><notes/></prompt>)", estimated_tokenizer{});
  BOOST_TEST(request.messages[1].content == "Today is a holiday.");
  BOOST_TEST(request.layout->whole_schema.get() == registry.find("reading")->whole_schema.get());
}

BOOST_AUTO_TEST_CASE(the_estimated_tokenizer_counts_as_documented) {
  const estimated_tokenizer tokens;
  BOOST_TEST(tokens.count("") == 0u);
  BOOST_TEST(tokens.count("The cat sat.") == 4u);
  BOOST_TEST(tokens.count("internationalisation") == 5u);
  BOOST_TEST(tokens.count("  \n\t ") == 0u);
  BOOST_TEST(tokens.count("a+b") == 3u);
  BOOST_TEST(tokens.count("x1y2z") == 2u);
  BOOST_TEST(tokens.count("\xC3\xA9t\xC3\xA9") == 1u);  // "été": three letters
  BOOST_TEST(tokens.count("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99") == 2u);  // 5 characters
}

BOOST_AUTO_TEST_CASE(counting_prefixes_in_one_pass_agrees_with_counting_each_prefix) {
  const estimated_tokenizer tokens;
  const std::string_view text = "The cat sat, internationalisation \xC3\xA9t\xC3\xA9 x1y2z.";
  const std::vector<std::size_t> ends{0, 2, 3, 4, 14, 20, 35, 36, 39, text.size(), text.size() + 5};
  std::vector<std::size_t> one_by_one;
  for (const std::size_t end : ends) one_by_one.push_back(tokens.count(text.substr(0, end)));
  BOOST_TEST(tokens.count_prefixes(text, ends) == one_by_one, boost::test_tools::per_element());
  BOOST_TEST(one_by_one.back() == 13u);  // past the end counts the whole text
}

// A tokenizer with count() alone: the compiler counts each prefix apart.
struct count_only_tokenizer {
  std::size_t count(std::string_view text) const noexcept { return estimated_tokenizer{}.count(text); }
};

BOOST_AUTO_TEST_CASE(spans_are_the_same_whether_the_tokenizer_counts_prefixes_or_not) {
  static_assert(!PrefixTokenizer<count_only_tokenizer>);
  const prompt_schema schema = parse_schema(test::reading_schema_pml);
  const prompt_document prompt =
      parse_prompt(R"(<prompt schema="reading"><plan weeks="nine"><history><ancient/></history></plan>Why?</prompt>)");
  const chat_request fast = compile_prompt(schema, prompt, estimated_tokenizer{});
  const chat_request slow = compile_prompt(schema, prompt, count_only_tokenizer{});
  BOOST_TEST_REQUIRE(fast.layout->modules.size() == 3u);  // plan, history, ancient
  BOOST_TEST_REQUIRE(slow.layout->modules.size() == 3u);
  for (std::size_t i = 0; i < fast.layout->modules.size(); ++i) {
    BOOST_TEST(fast.layout->modules[i].token_begin == slow.layout->modules[i].token_begin);
    BOOST_TEST(fast.layout->modules[i].token_end == slow.layout->modules[i].token_end);
  }
  BOOST_TEST(fast.layout->prefix_tokens == slow.layout->prefix_tokens);
  BOOST_TEST(fast.layout->total_tokens == slow.layout->total_tokens);
}

BOOST_AUTO_TEST_CASE(the_readme_example_compiles_as_the_readme_says) {
  test::temporary_directory dir;
  std::filesystem::create_directories(dir / "prompts");
  std::ofstream(dir / "prompts/catalogue.txt") << "Shelf A: novels.\n";
  schema_registry schemas;
  schemas.add(parse_schema(R"(<schema name="reading" version="1">
  <system>You are a patient librarian.</system>
  <user>
    <module name="plan">
      I want a reading plan for <param name="weeks" len="3"/> weeks.
      <union scaffold="fiction">
        <module name="fiction">Stories, the longer the better.</module>
        <module name="history">Only history books.</module>
      </union>
    </module>
    <module name="catalogue" src="catalogue.txt"/>
    <module name="today" cache="false">Today is a holiday.</module>
  </user>
</schema>)",
                           dir / "prompts"));
  const chat_request request = compile_prompt(schemas, R"(<prompt schema="reading">
  <plan weeks="2"><history/></plan>
  <user>What should I read first?</user>
</prompt>)",
                                              estimated_tokenizer{});
  check_messages(request, {{"system", "You are a patient librarian."},
                           {"user", "I want a reading plan for 2 weeks.\nOnly history books."},
                           {"user", "What should I read first?"}});
  BOOST_TEST(request.layout->prefix_path == "reading@1:plan");
  BOOST_TEST(request.layout->whole_schema->at(1).content ==
             "I want a reading plan for  weeks.\nStories, the longer the better.\n weeks.\nOnly history books.\n"
             "Shelf A: novels.\nToday is a holiday.");
  BOOST_TEST(error_of_compile(schemas, "<prompt schema=\"reading\">\n  <catalogue/>\n  <plan/>\n</prompt>") ==
             "line 3, column 3: module \"plan\" needs an argument for its parameter \"weeks\"");
}

BOOST_AUTO_TEST_SUITE_END()
