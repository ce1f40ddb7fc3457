// parse_schema and parse_prompt: the trees they make (equal to the
// builders' trees), the line and column of every kind of node, PML's
// white-space rule, src files, the XML subset's entities, comments and
// CDATA, and malformed markup refused with the exact message and position.
#include <cstddef>      // std::size_t
#include <fstream>      // std::ofstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <variant>      // std::get

#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/builder.hpp"
#include "llmgate/prompt/detail/pml_text.hpp"  // normalize_pml_text
#include "llmgate/prompt/pml_parser.hpp"
#include "reading_schema.hpp"                  // the librarian's schema
#include "../temporary_directory.hpp"          // temporary_directory

namespace {

using namespace llmgate;

// The what() of the pml_error that `parse` throws, or "no error".
template <class F>
std::string error_of(F parse) {
  try {
    parse();
  } catch (const pml_error& e) {
    return e.what();
  }
  return "no error";
}

std::string schema_error(std::string_view pml) {
  return error_of([&] { (void)parse_schema(pml); });
}
std::string prompt_error(std::string_view pml) {
  return error_of([&] { (void)parse_prompt(pml); });
}

template <class T>
const T& as(const schema_node& node) {
  return std::get<T>(node.value);
}
template <class T>
const T& as(const prompt_node& node) {
  return std::get<T>(node.value);
}

void check_at(source_position at, std::size_t line, std::size_t column) {
  BOOST_TEST(at.line == line);
  BOOST_TEST(at.column == column);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pml_parser_test)

BOOST_AUTO_TEST_CASE(a_schema_parses_to_the_tree_the_builder_makes) {
  const prompt_schema parsed = parse_schema(test::reading_schema_pml);
  BOOST_TEST((parsed == test::reading_schema_built()));
  BOOST_TEST(parsed.name == "reading");
  BOOST_TEST(parsed.version == "1");
  BOOST_REQUIRE(parsed.nodes.size() == 3u);

  const auto& system = as<schema_role>(parsed.nodes[0]);
  BOOST_TEST(system.role == "system");
  BOOST_REQUIRE(system.children.size() == 1u);
  BOOST_TEST(as<schema_text>(system.children[0]).text == "You are a patient librarian who suggests books.");

  const auto& user = as<schema_role>(parsed.nodes[1]);
  BOOST_REQUIRE(user.children.size() == 2u);
  const auto& plan = as<schema_module>(user.children[0]);
  BOOST_TEST(plan.name == "plan");
  BOOST_TEST(plan.cached);
  BOOST_REQUIRE(plan.children.size() == 4u);
  BOOST_TEST(as<schema_text>(plan.children[0]).text == "I want a reading plan for ");
  const auto& weeks = as<schema_param>(plan.children[1]);
  BOOST_TEST(weeks.name == "weeks");
  BOOST_TEST(weeks.max_tokens == 3u);
  BOOST_TEST(weeks.scaffold == "");
  BOOST_TEST(as<schema_text>(plan.children[2]).text == " weeks.");
  const auto& genre = as<schema_union>(plan.children[3]);
  BOOST_TEST(genre.scaffold == "fiction");
  BOOST_REQUIRE(genre.members.size() == 2u);
  BOOST_TEST(genre.members[1].name == "history");
  const auto& era = as<schema_union>(genre.members[1].children[1]);
  BOOST_TEST(era.scaffold == "");
  BOOST_TEST(era.members[0].name == "ancient");
  BOOST_TEST(as<schema_text>(era.members[1].children[0]).text == "The last two centuries.");
  const auto& notes = as<schema_module>(user.children[1]);
  BOOST_TEST(!notes.cached);

  // Positions: elements at their '<', text at its first visible character.
  check_at(parsed.position, 1, 1);
  check_at(system.position, 2, 3);
  check_at(as<schema_text>(system.children[0]).position, 3, 5);
  check_at(plan.position, 6, 5);
  check_at(as<schema_text>(plan.children[0]).position, 7, 7);
  check_at(weeks.position, 7, 33);
  check_at(as<schema_text>(plan.children[2]).position, 7, 63);
  check_at(genre.position, 8, 7);
  check_at(genre.members[0].position, 9, 9);
  check_at(era.position, 14, 11);
  check_at(era.members[1].position, 16, 13);
  check_at(as<schema_text>(era.members[1].children[0]).position, 16, 35);
  check_at(notes.position, 21, 5);
  check_at(as<schema_role>(parsed.nodes[2]).position, 25, 3);
}

BOOST_AUTO_TEST_CASE(the_reference_spelling_of_parameters_is_read_too) {
  const prompt_schema parsed = parse_schema(
      R"(<schema name="s"><module name="m">Go to <parameter name="city" length="10" scaffold="Paris"/>.</module></schema>)");
  const prompt_schema built =
      schema_builder("s").module("m").text("Go to ").param("city", 10, "Paris").text(".").end().build();
  BOOST_TEST((parsed == built));
  const auto& city = as<schema_param>(as<schema_module>(parsed.nodes[0]).children[1]);
  BOOST_TEST(city.max_tokens == 10u);
  BOOST_TEST(city.scaffold == "Paris");
  check_at(city.position, 1, 41);
}

BOOST_AUTO_TEST_CASE(a_prompt_parses_to_the_tree_the_builder_makes) {
  const std::string pml = R"(<prompt schema="reading" version="1">
  Before anything.
  <plan weeks="2 &amp; a half">
    <history>
      <modern/>
    </history>
    Keep it short.
  </plan>
  <user>
    What first?
  </user>
</prompt>)";
  const prompt_document parsed = parse_prompt(pml);
  const prompt_document built = prompt_builder("reading", "1")
                                    .text("Before anything.")
                                    .module("plan")
                                    .arg("weeks", "2 & a half")
                                    .module("history")
                                    .module("modern")
                                    .end()
                                    .end()
                                    .text("Keep it short.")
                                    .end()
                                    .user("What first?")
                                    .build();
  BOOST_TEST((parsed == built));
  BOOST_TEST(parsed.schema == "reading");
  BOOST_TEST(parsed.version == "1");
  BOOST_REQUIRE(parsed.nodes.size() == 3u);
  check_at(parsed.position, 1, 1);
  check_at(as<prompt_text>(parsed.nodes[0]).position, 2, 3);
  const auto& plan = as<prompt_import>(parsed.nodes[1]);
  check_at(plan.position, 3, 3);
  BOOST_REQUIRE(plan.arguments.size() == 1u);
  BOOST_TEST(plan.arguments[0].name == "weeks");
  BOOST_TEST(plan.arguments[0].value == "2 & a half");
  check_at(plan.arguments[0].position, 3, 9);
  const auto& history = as<prompt_import>(plan.children[0]);
  check_at(history.position, 4, 5);
  check_at(as<prompt_import>(history.children[0]).position, 5, 7);
  check_at(as<prompt_text>(plan.children[1]).position, 7, 5);
  const auto& user = as<prompt_role>(parsed.nodes[2]);
  BOOST_TEST(user.role == "user");
  BOOST_TEST(user.text == "What first?");
  check_at(user.position, 9, 3);
}

BOOST_AUTO_TEST_CASE(text_loses_the_layout_of_the_markup_and_keeps_its_own) {
  using detail::normalize_pml_text;
  // Between blocks: blank lines and the markup's indentation go; the
  // indentation of lines relative to each other stays.
  BOOST_TEST(normalize_pml_text("\n      def f():\n          return 1\n\n      f()\n    ", true, true) ==
             "def f():\n    return 1\n\nf()");
  // After a tag on the same line: the spaces go and the first line does not count for the dedent.
  BOOST_TEST(normalize_pml_text("  First.\n    Second.\n", true, true) == "First.\nSecond.");
  // Beside a parameter the spaces stay: "for <param/> weeks".
  BOOST_TEST(normalize_pml_text("\n    a plan for ", true, false) == "a plan for ");
  BOOST_TEST(normalize_pml_text(" weeks.\n    ", false, true) == " weeks.");
  BOOST_TEST(normalize_pml_text(" ", false, false) == " ");
  // A parameter on a line of its own keeps its line, without the indentation.
  BOOST_TEST(normalize_pml_text("Dear\n    ", true, false) == "Dear\n");
  BOOST_TEST(normalize_pml_text("\n    Dear\n    ", true, false) == "Dear\n");
  // White space only, between blocks: nothing.
  BOOST_TEST(normalize_pml_text("\n  \t \n  ", true, true) == "");
  // Blank lines inside are emptied; tabs dedent like spaces.
  BOOST_TEST(normalize_pml_text("\n\tone\n\t  \n\t\ttwo\n", true, true) == "one\n\n\ttwo");
}

BOOST_AUTO_TEST_CASE(line_breaks_entities_comments_and_cdata) {
  const prompt_schema parsed = parse_schema(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<!-- the header -->\r\n"
      "<schema name='s'>\r\n<module name=\"m\">\r\n"
      "  a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#233;&#xe9;&#x1F600;<!-- gone -->x\r\n"
      "  <![CDATA[if (a < b && c) {}]]>\r\n"
      "</module>\r\n</schema>\r\n<!-- the end -->\n");
  const auto& m = as<schema_module>(parsed.nodes[0]);
  BOOST_REQUIRE(m.children.size() == 1u);
  BOOST_TEST(as<schema_text>(m.children[0]).text ==
             "a <b> & \"c\" 'd' \xC3\xA9\xC3\xA9\xF0\x9F\x98\x80x\nif (a < b && c) {}");
  check_at(as<schema_text>(m.children[0]).position, 5, 3);
  check_at(m.position, 4, 1);
  // Columns count characters, not bytes.
  const prompt_document prompt = parse_prompt("<prompt schema=\"s\">\xC3\xA9\xC3\xA9<m/></prompt>");
  check_at(as<prompt_import>(prompt.nodes[1]).position, 1, 22);
}

BOOST_AUTO_TEST_CASE(a_src_module_reads_its_text_from_a_file_beside_the_schema) {
  test::temporary_directory dir;
  std::filesystem::create_directories(dir / "code");
  std::ofstream(dir / "code/unit.py", std::ios::binary) << "\n\nclass Unit:\r\n    hp = 10\r\n\r\n";
  const prompt_schema parsed = parse_schema(
      "<schema name=\"code\">\n  <module name=\"unit.py\" src=\"code/unit.py\"> </module>\n"
      "  <module name=\"more\" src=\"code/unit.py\" cache=\"false\"/>\n</schema>",
      dir.path());
  const auto& unit = as<schema_module>(parsed.nodes[0]);
  BOOST_TEST(unit.src == "code/unit.py");
  BOOST_REQUIRE(unit.children.size() == 1u);
  BOOST_TEST(as<schema_text>(unit.children[0]).text == "class Unit:\n    hp = 10");
  const prompt_schema built = schema_builder("code")
                                  .module_from_file("unit.py", "code/unit.py", dir.path())
                                  .module_from_file("more", "code/unit.py", dir.path(), false)
                                  .build();
  BOOST_TEST((parsed == built));

  BOOST_TEST(error_of([&] {
               (void)parse_schema("<schema name=\"code\">\n  <module name=\"x\" src=\"nothere.py\"/></schema>", dir.path());
             }) == "line 2, column 3: cannot read the src file \"nothere.py\" (" + (dir / "nothere.py").string() + ")");
  BOOST_TEST(error_of([&] {
               (void)parse_schema("<schema name=\"code\"><module name=\"x\" src=\"code\"/></schema>", dir.path());
             }) == "line 1, column 21: cannot read the src file \"code\" (" + (dir / "code").string() + ")");
  BOOST_TEST(schema_error("<schema name=\"code\"><module name=\"x\" src=\"a.py\">text</module></schema>") ==
             "line 1, column 21: a <module> with src holds nothing else: its text is the file's");
}

// src= names a file inside the schema's source directory and nowhere
// else: a path out of it is refused by its spelling (the file system is not
// asked), a link out of it reads as a missing file, a file over max_bytes
// is refused, and without a directory there is no src at all.
BOOST_AUTO_TEST_CASE(a_src_file_is_read_only_inside_its_directory_and_up_to_its_size) {
  test::temporary_directory dir;
  std::filesystem::create_directories(dir / "schemas" / "parts");
  std::ofstream(dir / "schemas" / "parts" / "a.txt") << "inside";
  std::ofstream(dir / "outside.txt") << "outside";
  std::filesystem::create_symlink(dir / "outside.txt", dir / "schemas" / "out.txt");
  std::filesystem::create_symlink(dir / "schemas" / "parts" / "a.txt", dir / "schemas" / "in.txt");
  const schema_sources sources{.directory = dir / "schemas", .max_bytes = 6};
  const auto parsed_text = [&](const std::string& src) {
    const auto schema = parse_schema("<schema name=\"s\"><module name=\"m\" src=\"" + src + "\"/></schema>", sources);
    return as<schema_text>(as<schema_module>(schema.nodes[0]).children.at(0)).text;
  };
  const auto refusal = [&](const std::string& src, const schema_sources& from) {
    return error_of([&] { (void)parse_schema("<schema name=\"s\"><module name=\"m\" src=\"" + src + "\"/></schema>", from); });
  };
  BOOST_TEST(parsed_text("parts/a.txt") == "inside");
  BOOST_TEST(parsed_text("./parts/../parts/a.txt") == "inside");
  BOOST_TEST(parsed_text("in.txt") == "inside");  // a link that stays inside
  for (const std::string outside : {"../outside.txt", "/etc/passwd", "parts/../../outside.txt", "//etc/hostname", ""})
    BOOST_TEST(refusal(outside, sources) == "line 1, column 18: the src file \"" + outside +
                                                "\" is outside the directory of this schema's src files");
  for (const std::string unreadable : {"out.txt", "missing.txt", "parts"})
    BOOST_TEST(refusal(unreadable, sources) == "line 1, column 18: cannot read the src file \"" + unreadable + "\" (" +
                                                   (dir / "schemas" / unreadable).string() + ")");
  std::ofstream(dir / "schemas" / "parts" / "b.txt") << "1234567";
  BOOST_TEST(refusal("parts/b.txt", sources) ==
             "line 1, column 18: the src file \"parts/b.txt\" is larger than the 6 bytes allowed");
  BOOST_TEST(refusal("parts/a.txt", schema_sources{}) ==
             "line 1, column 18: src=\"parts/a.txt\" cannot be used here: no directory is configured for this "
             "schema's src files");
}

// A tag may hold many attributes: duplicates are found by hash, not by a
// search per attribute, and the last of 125,000 is named by its column.
BOOST_AUTO_TEST_CASE(a_duplicate_among_many_attributes_is_named_where_it_is) {
  std::string tag = "<prompt schema=\"s\"><m";
  for (int i = 0; i < 125'000; ++i) tag += " a" + std::to_string(i) + "=''";
  const std::size_t column = tag.size() + 2;
  tag += " a7=''/></prompt>";
  BOOST_TEST(error_of([&] { (void)parse_prompt(tag); }) ==
             "line 1, column " + std::to_string(column) + ": duplicate attribute a7");
  tag.replace(tag.size() - std::string_view(" a7=''/></prompt>").size(), 3, " b7");
  const prompt_document prompt = parse_prompt(tag);
  BOOST_TEST(as<prompt_import>(prompt.nodes.at(0)).arguments.size() == 125'001u);
}

BOOST_AUTO_TEST_CASE(malformed_markup_is_refused_with_its_line_and_column) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"", "line 1, column 1: the document has no root element"},
      {"  \n <!-- only a comment -->", "line 2, column 25: the document has no root element"},
      {"hello", "line 1, column 1: text is not allowed outside the root element"},
      {"<schema name=\"s\">", "line 1, column 1: <schema> is never closed"},
      {"<schema name=\"s\">\n  <module name=\"m\">\n</schema>",
       "line 3, column 1: </schema> does not close <module> (opened at line 2, column 3)"},
      {"<schema name=\"s\"></schema>\n<schema name=\"t\"/>",
       "line 2, column 1: nothing but comments may follow the root element"},
      {"<schema name=\"s\">a < b</schema>",
       "line 1, column 21: expected an element name after '<' (write &lt; for a literal '<')"},
      {"<schema name=\"s\">fish & chips</schema>",
       "line 1, column 23: '&' must start an entity such as &amp; (write &amp; for a literal '&')"},
      {"<schema name=\"s\">&nbsp;</schema>",
       "line 1, column 18: unknown entity &nbsp; (PML knows &lt; &gt; &amp; &quot; &apos; and &#N;)"},
      {"<schema name=\"s\">&#0;</schema>", "line 1, column 18: &#0; is not a valid character reference"},
      {"<schema name=\"s\">&#xD800;</schema>", "line 1, column 18: &#xD800; is not a valid character reference"},
      {"<schema name=\"s\">&#x110000;</schema>", "line 1, column 18: &#x110000; is not a valid character reference"},
      {"<schema name=\"s\">&#12a;</schema>", "line 1, column 18: &#12a; is not a valid character reference"},
      {"<schema name=s></schema>", "line 1, column 14: the value of name must be in quotes"},
      {"<schema name=\"s\" name=\"t\"></schema>", "line 1, column 18: duplicate attribute name"},
      {"<schema name=\"s\"version=\"1\"></schema>",
       "line 1, column 17: expected white space, '>' or '/>' in the tag <schema"},
      {"<schema name></schema>", "line 1, column 13: expected '=' after the attribute name name"},
      {"<schema name=\"a<b\"></schema>", "line 1, column 16: '<' is not allowed in an attribute value (write &lt;)"},
      {"<schema name=\"s/>", "line 1, column 14: the value of name is never closed with \""},
      {"<schema name=\"s\"", "line 1, column 1: the tag <schema is never closed with '>'"},
      {"<schema name=\"s\"><!-- a -- b --></schema>", "line 1, column 25: \"--\" is not allowed inside a comment"},
      {"<schema name=\"s\"><!-- open</schema>", "line 1, column 18: the comment is never closed with -->"},
      {"<schema name=\"s\"><![CDATA[open</schema>", "line 1, column 18: the CDATA section is never closed with ]]>"},
      {"<!DOCTYPE schema><schema name=\"s\"/>",
       "line 1, column 1: declarations (<!DOCTYPE ...>) are not supported"},
      {"<schema name=\"s\"><?php echo ?></schema>",
       "line 1, column 18: processing instructions (<?...?>) are not supported"},
      {"<schema name=\"s\">\n\ta\x01</schema>", "line 2, column 3: control character U+0001 is not allowed"},
      {"<schema name=\"s\"><1module/></schema>",
       "line 1, column 19: expected an element name after '<' (write &lt; for a literal '<')"},
      {"<schema name=\"s\"></ schema>", "line 1, column 20: expected an element name after '</'"},
      {"<?xml version=\"1.0\"<schema/>", "line 1, column 1: the <?xml declaration is never closed with ?>"},
  };
  for (const auto& [pml, expected] : cases) BOOST_TEST(schema_error(pml) == expected, "for " << pml);

  std::string deep;
  for (int i = 0; i < 101; ++i) deep += "<a>";
  BOOST_TEST(prompt_error("<prompt schema=\"s\">" + deep) == "line 1, column 317: elements are nested more than 100 deep");
}

BOOST_AUTO_TEST_CASE(what_a_schema_may_hold_is_checked_where_it_is_written) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"<prompt schema=\"s\"/>", "line 1, column 1: a schema's root element must be <schema>, not <prompt>"},
      {"<schema version=\"1\"/>", "line 1, column 1: <schema> needs a name attribute"},
      {"<schema name=\"s\" owner=\"me\"/>", "line 1, column 18: unknown attribute owner on <schema>"},
      {"<schema name=\"s\">\n  <modul name=\"m\"/>\n</schema>",
       "line 2, column 3: unknown element <modul> in a schema (it holds <module>, <union>, <param>, <system>, <user> "
       "and <assistant>)"},
      {"<schema name=\"s\"><module/></schema>", "line 1, column 18: <module> needs a name attribute"},
      {"<schema name=\"s\"><module name=\"m\" cache=\"no\"/></schema>",
       "line 1, column 35: cache must be \"true\" or \"false\", not \"no\""},
      {"<schema name=\"s\"><module name=\"m\" id=\"1\"/></schema>",
       "line 1, column 35: unknown attribute id on <module>"},
      {"<schema name=\"s\"><param name=\"p\" len=\"1\"/></schema>",
       "line 1, column 18: <param> is allowed only inside a <module>"},
      {"<schema name=\"s\"><user><parameter name=\"p\" length=\"1\"/></user></schema>",
       "line 1, column 24: <parameter> is allowed only inside a <module>"},
      {"<schema name=\"s\"><module name=\"m\"><param len=\"1\"/></module></schema>",
       "line 1, column 35: <param> needs a name attribute"},
      {"<schema name=\"s\"><module name=\"m\"><param name=\"p\"/></module></schema>",
       "line 1, column 35: <param name=\"p\"> needs len, the longest argument in tokens"},
      {"<schema name=\"s\"><module name=\"m\"><param name=\"p\" len=\"many\"/></module></schema>",
       "line 1, column 51: len must be a number of tokens, not \"many\""},
      {"<schema name=\"s\"><module name=\"m\"><parameter name=\"p\" length=\"-1\"/></module></schema>",
       "line 1, column 55: length must be a number of tokens, not \"-1\""},
      {"<schema name=\"s\"><module name=\"m\"><param name=\"p\" len=\"1\" length=\"2\"/></module></schema>",
       "line 1, column 59: give len or length, not both"},
      {"<schema name=\"s\"><module name=\"m\"><param name=\"p\" len=\"1\">x</param></module></schema>",
       "line 1, column 35: <param> holds nothing; close it with />"},
      {"<schema name=\"s\"><union>\n  stray\n  <module name=\"a\"/></union></schema>",
       "line 2, column 3: text is not allowed in a <union>, only <module>"},
      {"<schema name=\"s\"><union><system/></union></schema>",
       "line 1, column 25: a <union> holds only <module> elements, not <system>"},
      {"<schema name=\"s\"><union name=\"u\"/></schema>", "line 1, column 25: unknown attribute name on <union>"},
      {"<schema name=\"s\"><user><system/></user></schema>",
       "line 1, column 24: <system> is allowed only at the top of a schema"},
      {"<schema name=\"s\"><module name=\"m\"><assistant/></module></schema>",
       "line 1, column 35: <assistant> is allowed only at the top of a schema"},
      {"<schema name=\"s\"><user role=\"x\"/></schema>", "line 1, column 24: unknown attribute role on <user>"},
  };
  for (const auto& [pml, expected] : cases) BOOST_TEST(schema_error(pml) == expected, "for " << pml);
}

BOOST_AUTO_TEST_CASE(what_a_prompt_may_hold_is_checked_where_it_is_written) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"<schema name=\"s\"/>", "line 1, column 1: a prompt's root element must be <prompt>, not <schema>"},
      {"<prompt/>", "line 1, column 1: <prompt> needs a schema attribute"},
      {"<prompt schema=\"s\" model=\"m\"/>", "line 1, column 20: unknown attribute model on <prompt>"},
      {"<prompt schema=\"s\"><plan><user>hi</user></plan></prompt>",
       "line 1, column 26: <user> is allowed only at the top of a prompt"},
      {"<prompt schema=\"s\"><user>hi <plan/></user></prompt>",
       "line 1, column 29: <user> in a prompt holds text only, not <plan>"},
      {"<prompt schema=\"s\">\n  <system>  </system></prompt>", "line 2, column 3: <system> holds no text"},
      {"<prompt schema=\"s\"><assistant kind=\"x\">hi</assistant></prompt>",
       "line 1, column 31: unknown attribute kind on <assistant>"},
  };
  for (const auto& [pml, expected] : cases) BOOST_TEST(prompt_error(pml) == expected, "for " << pml);
}

BOOST_AUTO_TEST_CASE(a_pml_error_names_its_position_and_code) {
  try {
    (void)parse_prompt("<prompt schema=\"s\">\n  <a></b>\n</prompt>");
    BOOST_FAIL("no error");
  } catch (const pml_error& e) {
    BOOST_TEST(e.line() == 2u);
    BOOST_TEST(e.column() == 6u);
    BOOST_TEST(e.message() == "</b> does not close <a> (opened at line 2, column 3)");
    BOOST_TEST(std::string(e.what()) == "line 2, column 6: </b> does not close <a> (opened at line 2, column 3)");
    BOOST_TEST((e.code() == make_error_code(errc::invalid_request)));
  }
}

BOOST_AUTO_TEST_SUITE_END()
