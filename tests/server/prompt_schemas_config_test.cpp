// The config's "prompt_schemas": a list of PML schema files, strict like
// every key of the config, each read and validated at start
// (load_prompt_schemas, which the gateway's constructor and --check-config
// run) with a message naming the entry, the file and the line and column;
// a module's src= is read relative to its schema's file.
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <string>      // std::string
#include <utility>     // std::pair
#include <vector>      // std::vector

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/compiler.hpp"
#include "llmgate/server/gateway_config.hpp"
#include "llmgate/server/prompt_schemas.hpp"
#include "../temporary_directory.hpp"
#include "config_text.hpp"

namespace {

using namespace llmgate;
using llmgate::test::refusal;
using llmgate::test::with;
constexpr const char* minimal = llmgate::test::minimal_config;

// The message load_prompt_schemas refuses `files` with ("" when it takes them).
std::string load_refusal(const std::vector<std::filesystem::path>& files, schema_registry& registry) {
  gateway_config config;
  config.prompts.schemas = files;
  try {
    load_prompt_schemas(config.prompts, registry);
    return {};
  } catch (const config_error& e) {
    return e.what();
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(prompt_schemas_config_test)

BOOST_AUTO_TEST_CASE(the_key_is_a_list_of_files_refused_by_name) {
  const auto config = gateway_config::from_json(boost::json::parse(with("prompt_schemas", R"(["a.xml", "dir/b.xml"])")));
  BOOST_TEST(config.prompts.schemas == (std::vector<std::filesystem::path>{"a.xml", "dir/b.xml"}),
             boost::test_tools::per_element());
  BOOST_TEST(gateway_config::from_json(boost::json::parse(minimal)).prompts.schemas.empty());
  BOOST_TEST(gateway_config::from_json(boost::json::parse(with("prompt_schemas", "null"))).prompts.schemas.empty());

  BOOST_TEST(refusal(with("prompt_schemas", R"("a.xml")")) == "config: prompt_schemas must be a list of PML schema files");
  BOOST_TEST(refusal(with("prompt_schemas", "[1]")) == "config: prompt_schemas[0] must be a string");
  BOOST_TEST(refusal(with("prompt_schemas", R"(["a.xml", ""])")) == "config: prompt_schemas[1] must be a non-empty path");
  BOOST_TEST(refusal(with("prompt_schema", "[]")) == "config: prompt_schema is not a known key; did you mean prompt_schemas?");

  gateway_config built = gateway_config::from_json(boost::json::parse(minimal));
  built.prompts.schemas = {"a.xml", ""};
  BOOST_CHECK_EXCEPTION(built.check(), config_error, [](const config_error& e) {
    return std::string(e.what()) == "config: prompt_schemas[1] must be a non-empty path";
  });
}

BOOST_AUTO_TEST_CASE(each_file_is_read_at_start_with_its_src_beside_it) {
  test::temporary_directory directory;
  std::filesystem::create_directories(directory / "schemas" / "docs");
  const auto faq = directory / "schemas" / "faq.xml";
  std::ofstream(faq) << "<schema name=\"faq\" version=\"1\">\n  <module name=\"doc\" src=\"docs/doc.txt\"/>\n</schema>";
  std::ofstream(directory / "schemas" / "docs" / "doc.txt") << "Read the manual.";
  const auto faq_changed = directory / "faq_changed.xml";
  std::ofstream(faq_changed) << R"(<schema name="faq" version="1"><module name="doc">Changed.</module></schema>)";
  const auto broken = directory / "broken.xml";
  std::ofstream(broken) << "<schema name=\"b\">\n<module name=\"a\">x</modul>\n</schema>";
  const auto no_src = directory / "no_src.xml";
  std::ofstream(no_src) << "<schema name=\"s\">\n  <module name=\"x\" src=\"missing.txt\"/>\n</schema>";

  schema_registry registry;
  BOOST_TEST(load_refusal({faq}, registry) == "");
  BOOST_TEST((registry.list() == std::vector<std::pair<std::string, std::string>>{{"faq", "1"}}));
  const auto compiled = compile_prompt(registry, R"(<prompt schema="faq"><doc/></prompt>)", estimated_tokenizer{});
  BOOST_TEST(compiled.messages.at(0).content == "Read the manual.");

  schema_registry other;
  BOOST_TEST(load_refusal({directory / "absent.xml"}, other) ==
             "config: prompt_schemas[0] cannot read '" + (directory / "absent.xml").string() + "'");
  BOOST_TEST(load_refusal({faq, broken}, other) ==
             "config: prompt_schemas[1] cannot be used: '" + broken.string() +
                 "', line 2, column 19: </modul> does not close <module> (opened at line 2, column 1)");
  BOOST_TEST(load_refusal({no_src}, other) ==
             "config: prompt_schemas[0] cannot be used: '" + no_src.string() +
                 "', line 2, column 3: cannot read the src file \"missing.txt\" (" +
                 (directory.path() / "missing.txt").string() + ")");
  schema_registry third;
  BOOST_TEST(load_refusal({faq, faq_changed}, third) ==
             "config: prompt_schemas[1] cannot be used: '" + faq_changed.string() +
                 "', line 1, column 1: schema \"faq\" version \"1\" is already registered with other content: give "
                 "the change a new version");
}

BOOST_AUTO_TEST_SUITE_END()
