// schema_registry: schemas by name and version, the newest for a prompt
// that names none, a change refused unless it is a new version, and a
// prompt naming an old version still compiled against that version's
// modules.
#include <string>   // std::string
#include <utility>  // std::pair
#include <variant>  // std::get
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/compiler.hpp"
#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/prompt/schema_registry.hpp"
#include "llmgate/prompt/tokenizer.hpp"

namespace {

using namespace llmgate;

prompt_schema greeting(const std::string& version, const std::string& text) {
  return parse_schema("<schema name=\"greeting\"" + (version.empty() ? std::string() : " version=\"" + version + "\"") +
                      ">\n<module name=\"hello\">" + text + "</module></schema>");
}

std::string compiled(const schema_registry& registry, const std::string& prompt) {
  return compile_prompt(registry, prompt, estimated_tokenizer{}).messages.at(0).content;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(schema_registry_test)

BOOST_AUTO_TEST_CASE(schemas_are_found_by_name_and_version) {
  schema_registry registry;
  BOOST_TEST(!registry.find("greeting"));
  registry.add(greeting("1", "Hello."));
  registry.add(greeting("2", "Hello there."));
  registry.add(parse_schema("<schema name=\"another\"><module name=\"x\">x</module></schema>"));
  BOOST_TEST(registry.find("greeting")->version == "2");
  BOOST_TEST(registry.find("greeting", "1")->version == "1");
  BOOST_TEST(!registry.find("greeting", "3"));
  BOOST_TEST(!registry.find("greet"));
  BOOST_TEST(registry.find("another")->version == "");
  const std::vector<std::pair<std::string, std::string>> expected = {{"another", ""}, {"greeting", "1"}, {"greeting", "2"}};
  BOOST_TEST((registry.list() == expected));
}

BOOST_AUTO_TEST_CASE(a_changed_schema_must_be_a_new_version) {
  schema_registry registry;
  registry.add(greeting("1", "Hello."));
  registry.add(greeting("1", "Hello."));  // the same again: nothing changes
  BOOST_TEST(registry.list().size() == 1u);
  try {
    registry.add(greeting("1", "Hi."));
    BOOST_FAIL("no error");
  } catch (const pml_error& e) {
    BOOST_TEST(std::string(e.what()) ==
               "line 1, column 1: schema \"greeting\" version \"1\" is already registered with other content: give "
               "the change a new version");
  }
  registry.add(greeting("", "Hello."));
  try {
    registry.add(greeting("", "Hi."));
    BOOST_FAIL("no error");
  } catch (const pml_error& e) {
    BOOST_TEST(e.message() ==
               "schema \"greeting\" (no version) is already registered with other content: give the change a new version");
  }
  BOOST_TEST(registry.find("greeting", "1")->nodes == greeting("1", "Hello.").nodes);
}

BOOST_AUTO_TEST_CASE(a_new_version_never_serves_the_old_modules_and_the_old_one_stays) {
  schema_registry registry;
  registry.add(greeting("1", "Hello."));
  BOOST_TEST(compiled(registry, "<prompt schema=\"greeting\"><hello/></prompt>") == "Hello.");
  registry.add(greeting("2", "Good morning."));
  BOOST_TEST(compiled(registry, "<prompt schema=\"greeting\"><hello/></prompt>") == "Good morning.");
  BOOST_TEST(compiled(registry, "<prompt schema=\"greeting\" version=\"2\"><hello/></prompt>") == "Good morning.");
  BOOST_TEST(compiled(registry, "<prompt schema=\"greeting\" version=\"1\"><hello/></prompt>") == "Hello.");
  const auto layout = compile_prompt(registry, "<prompt schema=\"greeting\"><hello/></prompt>", estimated_tokenizer{}).layout;
  BOOST_TEST(layout->version == "2");
  BOOST_TEST(layout->whole_schema->at(0).content == "Good morning.");
}

BOOST_AUTO_TEST_CASE(add_recomputes_the_whole_schema_of_a_tree_changed_by_hand) {
  prompt_schema schema = greeting("1", "Hello.");
  std::get<schema_text>(std::get<schema_module>(schema.nodes[0].value).children[0].value).text = "Changed.";
  schema_registry registry;
  registry.add(schema);
  BOOST_TEST(registry.find("greeting")->whole_schema->at(0).content == "Changed.");
  // And checks it.
  prompt_schema broken = greeting("2", "Hello.");
  std::get<schema_module>(broken.nodes[0].value).name = "user";
  try {
    registry.add(broken);
    BOOST_FAIL("no error");
  } catch (const pml_error& e) {
    BOOST_TEST(std::string(e.what()) == "line 2, column 1: \"user\" cannot name a module: prompts use <user> for something else");
  }
}

BOOST_AUTO_TEST_SUITE_END()
