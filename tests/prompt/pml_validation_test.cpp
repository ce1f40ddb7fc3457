// PML validation: every check of a schema (finish_schema) and of a prompt
// against its schema (compile_prompt) fails with its exact message and
// the line and column of the node at fault; trees made with the builders
// get the same messages without a position.
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/builder.hpp"
#include "llmgate/prompt/compiler.hpp"
#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/prompt/schema_registry.hpp"
#include "llmgate/prompt/tokenizer.hpp"
#include "reading_schema.hpp"  // the librarian's schema

namespace {

using namespace llmgate;

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const pml_error& e) {
    return e.what();
  }
  return "no error";
}

std::string schema_error(std::string_view pml) {
  return error_of([&] { (void)parse_schema(pml); });
}

// Compiled against the librarian's schema, registered under version "1".
std::string compile_error(std::string_view prompt_pml) {
  static schema_registry registry;
  static const bool added = (registry.add(parse_schema(test::reading_schema_pml)), true);
  BOOST_TEST_REQUIRE(added);
  return error_of([&] { (void)compile_prompt(registry, prompt_pml, estimated_tokenizer{}); });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pml_validation_test)

BOOST_AUTO_TEST_CASE(schema_names_are_checked) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"<schema name=\"\"/>", "line 1, column 1: the schema needs a name"},
      {"<schema name=\"s\">\n  <module name=\"a\"/>\n  <user><module name=\"a\"/></user>\n</schema>",
       "line 3, column 9: duplicate module name \"a\" (first at line 2, column 3)"},
      // A union's members share their parent's names.
      {"<schema name=\"s\"><module name=\"m\">\n<module name=\"x\"/>\n<union><module name=\"y\"/><module name=\"x\"/></union>"
       "</module></schema>",
       "line 3, column 26: duplicate module name \"x\" (first at line 2, column 1)"},
      {"<schema name=\"s\"><union><module name=\"x\"/><module name=\"x\"/></union></schema>",
       "line 1, column 43: duplicate module name \"x\" (first at line 1, column 25)"},
      // The same name in different parents is fine; a duplicate parameter is not.
      {"<schema name=\"s\"><module name=\"m\"><param name=\"p\" len=\"1\"/>\n<param name=\"p\" len=\"2\"/></module></schema>",
       "line 2, column 1: duplicate parameter name \"p\" in module \"m\" (first at line 1, column 35)"},
      {"<schema name=\"s\"><module name=\"9lives\"/></schema>",
       "line 1, column 18: \"9lives\" is not a valid module name (a letter or '_', then letters, digits, '_', '-' and "
       "'.')"},
      {"<schema name=\"s\"><module name=\"a b\"/></schema>",
       "line 1, column 18: \"a b\" is not a valid module name (a letter or '_', then letters, digits, '_', '-' and '.')"},
      {"<schema name=\"s\"><module name=\"user\"/></schema>",
       "line 1, column 18: \"user\" cannot name a module: prompts use <user> for something else"},
      {"<schema name=\"s\"><module name=\"m\"><param name=\"a:b\" len=\"1\"/></module></schema>",
       "line 1, column 35: \"a:b\" is not a valid parameter name (a letter or '_', then letters, digits, '_', '-' and "
       "'.')"},
      {"<schema name=\"s\"><union/></schema>", "line 1, column 18: the <union> holds no <module>"},
      {"<schema name=\"s\"><union scaffold=\"z\"><module name=\"a\"/></union></schema>",
       "line 1, column 18: the union's scaffold \"z\" is not one of its members"},
  };
  for (const auto& [pml, expected] : cases) BOOST_TEST(schema_error(pml) == expected, "for " << pml);
  // Siblings of different parents may share a name.
  BOOST_TEST(schema_error("<schema name=\"s\"><module name=\"a\"><module name=\"x\"/></module>"
                          "<module name=\"b\"><module name=\"x\"/></module></schema>") == "no error");
}

BOOST_AUTO_TEST_CASE(built_schemas_get_the_same_checks_without_a_position) {
  BOOST_TEST(error_of([] { (void)schema_builder("s").module("a").end().user().module("a").end().end().build(); }) ==
             "duplicate module name \"a\"");
  BOOST_TEST(error_of([] { (void)schema_builder("s").param("p", 1).build(); }) ==
             "<param> is allowed only inside a <module>");
  BOOST_TEST(error_of([] { (void)schema_builder("s").module("m").user().end().end().build(); }) ==
             "<user> is allowed only at the top of a schema");
  BOOST_TEST(error_of([] { (void)schema_builder("s").union_().text("x"); }) ==
             "a <union> holds only modules, not text");
  BOOST_TEST(error_of([] { (void)schema_builder("s").module("m").build(); }) == "build() with a <module> still open");
  BOOST_TEST(error_of([] { (void)schema_builder("s").end(); }) == "end() with no element open");
  BOOST_TEST(error_of([] { (void)prompt_builder("s").module("m").user("x"); }) ==
             "<user> is allowed only at the top of a prompt");
  BOOST_TEST(error_of([] { (void)prompt_builder("s").arg("a", "b"); }) == "arg() with no import open");
  BOOST_TEST(error_of([] { (void)prompt_builder("s").module("m").build(); }) ==
             "build() with the import of \"m\" still open");
  const prompt_schema built = test::reading_schema_built();
  BOOST_TEST(error_of([&] {
               (void)compile_prompt(built, prompt_builder("reading").module("plan").arg("weeks", "1").arg("weeks", "2").end().build(),
                                    estimated_tokenizer{});
             }) == "the argument weeks is given twice");
  BOOST_TEST(error_of([&] {
               (void)compile_prompt(built, prompt_builder("reading").module("plan").end().build(), estimated_tokenizer{});
             }) == "module \"plan\" needs an argument for its parameter \"weeks\"");
}

BOOST_AUTO_TEST_CASE(prompts_are_checked_against_their_schema) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"<prompt schema=\"novels\"><plan/></prompt>", "line 1, column 1: unknown schema \"novels\""},
      {"\n<prompt schema=\"reading\" version=\"2\"><plan/></prompt>",
       "line 2, column 1: unknown schema \"reading\" version \"2\""},
      {"<prompt schema=\"reading\">\n  <plans weeks=\"1\"/>\n</prompt>",
       "line 2, column 3: unknown module \"plans\" in schema \"reading\""},
      {"<prompt schema=\"reading\"><plan weeks=\"1\"><ancient/></plan></prompt>",
       "line 1, column 42: unknown module \"ancient\" in module \"plan\""},
      {"<prompt schema=\"reading\"><notes/>\n<notes/></prompt>",
       "line 2, column 1: module \"notes\" is imported twice (first at line 1, column 26)"},
      {"<prompt schema=\"reading\"><plan weeks=\"1\"><fiction/><history/></plan></prompt>",
       "line 1, column 52: \"fiction\" and \"history\" are members of one union: import at most one"},
      {"<prompt schema=\"reading\"><plan weeks=\"1\"><history><modern/><ancient/></history></plan></prompt>",
       "line 1, column 60: \"modern\" and \"ancient\" are members of one union: import at most one"},
      {"<prompt schema=\"reading\"><plan weeks=\"1\" days=\"3\"/></prompt>",
       "line 1, column 42: module \"plan\" has no parameter \"days\""},
      {"<prompt schema=\"reading\"><notes tone=\"calm\"/></prompt>",
       "line 1, column 33: module \"notes\" has no parameter \"tone\""},
      {"<prompt schema=\"reading\">\n  <plan/>\n</prompt>",
       "line 2, column 3: module \"plan\" needs an argument for its parameter \"weeks\""},
      // len="3": "twenty-six" is twenty(2) -(1) six(1) = 4 estimated tokens.
      {"<prompt schema=\"reading\"><plan weeks=\"twenty-six\"/></prompt>",
       "line 1, column 32: the argument weeks is 4 tokens long; its parameter allows 3"},
      {"<prompt schema=\"reading\"><plan weeks=\"1\"><user>x</user></plan></prompt>",
       "line 1, column 42: <user> is allowed only at the top of a prompt"},
  };
  for (const auto& [pml, expected] : cases) BOOST_TEST(compile_error(pml) == expected, "for " << pml);
  // At the limit is fine: "ten-ish" is 3.
  BOOST_TEST(compile_error("<prompt schema=\"reading\"><plan weeks=\"ten-ish\"/></prompt>") == "no error");
}

BOOST_AUTO_TEST_CASE(a_prompt_compiled_against_another_schema_is_refused) {
  const prompt_schema reading = parse_schema(test::reading_schema_pml);
  BOOST_TEST(error_of([&] {
               (void)compile_prompt(reading, parse_prompt("<prompt schema=\"novels\"/>"), estimated_tokenizer{});
             }) == "line 1, column 1: the prompt is for schema \"novels\", not \"reading\"");
  BOOST_TEST(error_of([&] {
               (void)compile_prompt(reading, parse_prompt("<prompt schema=\"reading\" version=\"0\"/>"),
                                    estimated_tokenizer{});
             }) == "line 1, column 1: the prompt is for version \"0\" of schema \"reading\", not \"1\"");
  const prompt_schema empty = parse_schema("<schema name=\"e\"><module name=\"m\">x</module></schema>");
  BOOST_TEST(error_of([&] {
               (void)compile_prompt(empty, parse_prompt("<prompt schema=\"e\"/>"), estimated_tokenizer{});
             }) == "line 1, column 1: the prompt compiles to no text");
}

BOOST_AUTO_TEST_SUITE_END()
