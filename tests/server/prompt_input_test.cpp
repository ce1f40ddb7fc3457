// read_chat_request: a chat body's PML prompt compiled into the request
// as it is read. The "pml" field's messages come first, then the body's
// own (which may be left out); a message that is a <prompt> document is
// replaced where it stands, its layout moved past the messages before it;
// one PML prompt per request; every refusal is a request_error naming the
// field, with the compiler's line and column.
#include <memory>  // std::shared_ptr
#include <string>  // std::string
#include <vector>  // std::vector

#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/prompt/pml_parser.hpp"
#include "llmgate/server/read_chat_request.hpp"

namespace {

using namespace llmgate;

constexpr const char* support_schema = R"(<schema name="support" version="1">
  <system>You answer questions about llmgate.</system>
  <user>
    <module name="manual">The manual says: caches save money.</module>
    <module name="tone">Answer in a <param name="style" len="3"/> tone.</module>
  </user>
</schema>)";

const std::string system_text = "You answer questions about llmgate.";
const std::string manual_text = "The manual says: caches save money.";

struct registry_fixture {
  registry_fixture() { schemas.add(parse_schema(support_schema)); }

  chat_request read(const boost::json::object& body) const {
    return read_chat_request(boost::json::serialize(body), schemas);
  }

  // The request_error `body` is refused with: "param | message | code".
  std::string refusal(const boost::json::object& body) const {
    try {
      (void)read(body);
      return "accepted";
    } catch (const request_error& e) {
      return e.param() + " | " + e.what() + " | " + e.openai_code();
    }
  }

  schema_registry schemas;
};

boost::json::object user(std::string_view content) { return {{"role", "user"}, {"content", content}}; }

std::vector<std::string> roles_and_texts(const chat_request& request) {
  std::vector<std::string> out;
  for (const auto& m : request.messages) out.push_back(m.role + ": " + m.content);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(prompt_input_test)

BOOST_FIXTURE_TEST_CASE(the_pml_field_comes_first_and_messages_may_be_left_out, registry_fixture) {
  const auto alone = read({{"model", "m"}, {"pml", R"(<prompt schema="support"><manual/></prompt>)"}});
  BOOST_TEST(roles_and_texts(alone) == (std::vector<std::string>{"system: " + system_text, "user: " + manual_text}),
             boost::test_tools::per_element());
  BOOST_TEST(alone.parameters.empty());  // "pml" is not passed on
  BOOST_REQUIRE(alone.layout);
  BOOST_TEST(alone.layout->schema == "support");
  BOOST_TEST(alone.layout->modules.size() == 1u);
  BOOST_TEST(alone.layout->modules[0].path == "manual");
  BOOST_TEST(alone.layout->modules[0].message == 1u);
  BOOST_TEST(alone.layout->modules[0].token_begin == 11u);  // the system message's 11 estimated tokens
  BOOST_TEST(alone.layout->modules[0].token_end == 22u);
  BOOST_TEST(alone.layout->total_tokens == 22u);

  for (const auto* empty : {"null", "[]"}) {
    auto body = boost::json::object{{"model", "m"}, {"pml", R"(<prompt schema="support"><manual/></prompt>)"}};
    body["messages"] = boost::json::parse(empty);
    BOOST_TEST(read(body).messages.size() == 2u);
  }

  // "What does a cache save?" is 7 estimated tokens: counted in the total only.
  const auto with_question = read({{"model", "m"},
                                   {"pml", R"(<prompt schema="support"><manual/></prompt>)"},
                                   {"messages", {user("What does a cache save?")}},
                                   {"temperature", 0}});
  BOOST_TEST(roles_and_texts(with_question) ==
                 (std::vector<std::string>{"system: " + system_text, "user: " + manual_text,
                                           "user: What does a cache save?"}),
             boost::test_tools::per_element());
  BOOST_TEST(with_question.parameters.size() == 1u);
  BOOST_TEST(with_question.parameters[0].name == "temperature");
  BOOST_TEST(with_question.layout->modules[0].message == 1u);
  BOOST_TEST(with_question.layout->modules[0].token_begin == 11u);
  BOOST_TEST(with_question.layout->total_tokens == 29u);
}

BOOST_FIXTURE_TEST_CASE(a_message_that_is_a_prompt_is_replaced_where_it_stands, registry_fixture) {
  const auto request = read({{"model", "m"},
                             {"messages",
                              {boost::json::object{{"role", "system"}, {"content", "Be brief."}},
                               user("\n  <prompt schema=\"support\"><tone style=\"warm\"/></prompt>"),
                               boost::json::object{{"role", "assistant"}, {"content", "Ask away."}}}}});
  BOOST_TEST(roles_and_texts(request) ==
                 (std::vector<std::string>{"system: Be brief.", "system: " + system_text,
                                           "user: Answer in a warm tone.", "assistant: Ask away."}),
             boost::test_tools::per_element());
  // Moved past "Be brief." (4 estimated tokens) and its message.
  BOOST_REQUIRE(request.layout);
  const auto& tone = request.layout->modules.at(0);
  BOOST_TEST(tone.path == "tone");
  BOOST_TEST(tone.message == 2u);
  BOOST_TEST(tone.begin == 0u);
  BOOST_TEST(tone.token_begin == 4u + 11u);
  BOOST_TEST(tone.token_end == 4u + 11u + 7u);
  BOOST_TEST(request.layout->prefix_message == 2u);
  BOOST_TEST(request.layout->total_tokens == 4u + 11u + 7u + 3u);  // "Ask away." is 3

  // Text that only mentions a prompt is left alone.
  for (const auto* text : {"<prompts are XML>", "Explain <prompt schema=\"x\">", "<promptly/>"}) {
    const auto plain = read({{"model", "m"}, {"messages", {user(text)}}});
    BOOST_TEST(plain.messages.at(0).content == text);
    BOOST_TEST(!plain.layout);
  }
}

BOOST_FIXTURE_TEST_CASE(refusals_name_the_field_with_line_and_column, registry_fixture) {
  const auto pml = [&](std::string_view text) { return refusal({{"model", "m"}, {"pml", text}}); };
  BOOST_TEST(pml(R"(<prompt schema="nope"><manual/></prompt>)") ==
             R"(pml | Invalid PML prompt in 'pml': line 1, column 1: unknown schema "nope" | invalid_pml)");
  BOOST_TEST(pml(R"(<prompt schema="support"><manuel/></prompt>)") ==
             R"(pml | Invalid PML prompt in 'pml': line 1, column 26: unknown module "manuel" in schema "support" | invalid_pml)");
  BOOST_TEST(pml(R"(<prompt schema="support"><tone/></prompt>)") ==
             R"(pml | Invalid PML prompt in 'pml': line 1, column 26: module "tone" needs an argument for its parameter "style" | invalid_pml)");
  BOOST_TEST(pml(R"(<prompt schema="support"><tone styel="x"/></prompt>)") ==
             R"(pml | Invalid PML prompt in 'pml': line 1, column 32: module "tone" has no parameter "styel" | invalid_pml)");
  BOOST_TEST(pml(R"(<prompt schema="support"><tone style="very very very very friendly"/></prompt>)") ==
             R"(pml | Invalid PML prompt in 'pml': line 1, column 32: the argument style is 6 tokens long; its parameter allows 3 | invalid_pml)");
  BOOST_TEST(pml("<prompt schema=\"support\">\n  <manual>\n</prompt>") ==
             R"(pml | Invalid PML prompt in 'pml': line 3, column 1: </prompt> does not close <manual> (opened at line 2, column 3) | invalid_pml)");

  BOOST_TEST(refusal({{"model", "m"}, {"pml", 7}}) ==
             "pml | Invalid type for 'pml': expected a string, but got a number instead. | invalid_request");
  BOOST_TEST(refusal({{"pml", R"(<prompt schema="support"><manual/></prompt>)"}}) ==
             "model | model is required: name the model to answer in the request's \"model\" field. | invalid_request");
  BOOST_TEST(refusal({{"model", "m"}, {"pml", nullptr}}) ==
             "messages | Missing required parameter: 'messages'. | invalid_request");

  BOOST_TEST(refusal({{"model", "m"},
                      {"messages", {user("Hi"), user(R"(<prompt schema="support"><manuel/></prompt>)")}}}) ==
             R"(messages[1].content | Invalid PML prompt in 'messages[1].content': line 1, column 26: unknown module "manuel" in schema "support" | invalid_pml)");
  BOOST_TEST(refusal({{"model", "m"},
                      {"pml", R"(<prompt schema="support"><manual/></prompt>)"},
                      {"messages", {user(R"(<prompt schema="support"><manual/></prompt>)")}}}) ==
             "messages[0].content | A request carries one PML prompt: 'messages[0].content' is a <prompt> document "
             "and so is 'pml'. Send the other messages as text. | invalid_pml");
  BOOST_TEST(refusal({{"model", "m"},
                      {"messages", {user(R"(<prompt schema="support"><manual/></prompt>)"),
                                    user(R"(<prompt schema="support"><manual/></prompt>)")}}}) ==
             "messages[1].content | A request carries one PML prompt: 'messages[1].content' and "
             "'messages[0].content' are both <prompt> documents. | invalid_pml");
}

BOOST_AUTO_TEST_SUITE_END()
