// PML prompts through the gateway, end to end over real sockets with an
// in-test upstream that records what it is sent: a "pml" field or a
// message that is a <prompt> document reaches the model as the compiled
// messages (and "pml" never does); the exact cache keys the compiled
// request, so a PML prompt and its plain equivalent share an entry either
// way round; a prompt that cannot be compiled is a 400 with the
// compiler's line and column that reaches no upstream; the schemas come
// from the config's files (a module's src= relative to its file) and from
// POST /admin/prompt_schemas, where a changed schema is a new version.
#include <cstdio>      // std::FILE
#include <filesystem>  // std::filesystem::create_directories
#include <fstream>     // std::ofstream
#include <memory>      // std::unique_ptr
#include <string>      // std::string
#include <vector>      // std::vector

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "../temporary_directory.hpp"
#include "demo_gateway.hpp"  // upstream_config
#include "gateway_client.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

const std::string chat_path = "/v1/chat/completions";

constexpr const char* support_schema = R"(<schema name="support" version="1">
  <system>You answer questions about llmgate.</system>
  <user>
    <module name="manual">The manual says: caches save money.</module>
    <module name="tone">Answer in a <param name="style" len="3"/> tone.</module>
    <module name="notes" src="notes/caches.txt"/>
  </user>
</schema>)";

const std::string system_text = "You answer questions about llmgate.";

// A gateway whose model "test-model" is the upstream, with the schema file
// above (its notes module read from a file beside it) and the exact cache
// alone (the semantic cache would also answer near prompts).
struct pml_fixture {
  pml_fixture() {
    std::filesystem::create_directories(directory / "schemas" / "notes");
    std::ofstream(directory / "schemas" / "support.xml") << support_schema;
    std::ofstream(directory / "schemas" / "notes" / "caches.txt") << "Exact hits cost nothing.\n";
    upstream.on(chat_path, reply::chat("Money."));
    upstream.start();
    auto config = upstream_config(upstream.url("/v1"));
    config.semantic_cache.enabled = false;
    config.prompts.schemas = {directory / "schemas" / "support.xml"};
    server = std::make_unique<gateway>(std::move(config), nullptr);
    server->start();
  }

  http_reply chat(const json::object& body) {
    json::object whole = body;
    whole["model"] = "test-model";
    return post(server->port(), chat_path, json::serialize(whole), "key-acme");
  }
  http_reply admin(boost::beast::http::verb method, std::string_view body = {}, std::string_view key = "admin-key") {
    return call(server->port(), method, "/admin/prompt_schemas", body, key);
  }

  // The messages of the last request the upstream received, as "role: content".
  std::vector<std::string> sent_messages() const {
    std::vector<std::string> out;
    const json::value sent = upstream.received().back().json();
    for (const auto& m : sent.at("messages").as_array())
      out.push_back(std::string(m.at("role").as_string()) + ": " + std::string(m.at("content").as_string()));
    return out;
  }

  temporary_directory directory;
  upstream_server upstream;
  std::unique_ptr<gateway> server;
};

json::object user(std::string_view content) { return {{"role", "user"}, {"content", content}}; }

void check_error(const http_reply& reply, unsigned status, std::string_view message, std::string_view code,
                 const json::value& param) {
  BOOST_TEST(reply.status == status);
  const json::value body = reply.json();
  const auto& error = body.at("error").as_object();
  BOOST_TEST(error.at("message").as_string() == message);
  BOOST_TEST(error.at("type").as_string() == "invalid_request_error");
  BOOST_TEST(error.at("code").as_string() == code);
  BOOST_TEST(error.at("param") == param);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_pml_test)

BOOST_FIXTURE_TEST_CASE(a_pml_prompt_reaches_the_model_compiled, pml_fixture) {
  const auto reply = chat({{"pml", R"(<prompt schema="support"><tone style="friendly"/><manual/>What is saved?</prompt>)"},
                           {"temperature", 0}});
  BOOST_TEST(reply.status == 200u);
  BOOST_TEST(reply.json().at("choices").at(0).at("message").at("content").as_string() == "Money.");
  BOOST_TEST(reply.header("x-llmgate-cache") == "miss");
  // Schema order (manual before tone), the prompt's own text after the imports.
  BOOST_TEST(sent_messages() ==
                 (std::vector<std::string>{"system: " + system_text,
                                           "user: The manual says: caches save money.\nAnswer in a friendly tone.\n"
                                           "What is saved?"}),
             boost::test_tools::per_element());
  const auto sent = upstream.received().back().json().as_object();
  BOOST_TEST(!sent.contains("pml"));
  BOOST_TEST(sent.at("temperature") == json::value(0));

  // The request's messages after the compiled ones; a module read from its src file.
  chat({{"pml", R"(<prompt schema="support"><notes/></prompt>)"}, {"messages", {user("And misses?")}}});
  BOOST_TEST(sent_messages() == (std::vector<std::string>{"system: " + system_text, "user: Exact hits cost nothing.",
                                                          "user: And misses?"}),
             boost::test_tools::per_element());

  // A message that is a prompt, where it stands.
  chat({{"messages", {json::object{{"role", "system"}, {"content", "Be brief."}},
                      user(R"(<prompt schema="support" version="1"><manual/></prompt>)")}}});
  BOOST_TEST(sent_messages() == (std::vector<std::string>{"system: Be brief.", "system: " + system_text,
                                                          "user: The manual says: caches save money."}),
             boost::test_tools::per_element());
  BOOST_TEST(upstream.requests(chat_path) == 3u);
}

BOOST_FIXTURE_TEST_CASE(a_pml_prompt_and_its_plain_equivalent_share_the_exact_cache, pml_fixture) {
  const json::object pml{{"pml", R"(<prompt schema="support"><manual/></prompt>)"}, {"messages", {user("What is saved?")}}};
  const json::object plain{
      {"messages", {json::object{{"role", "system"}, {"content", system_text}},
                    user("The manual says: caches save money."), user("What is saved?")}}};
  BOOST_TEST(chat(pml).header("x-llmgate-cache") == "miss");
  const auto hit = chat(plain);
  BOOST_TEST(hit.status == 200u);
  BOOST_TEST(hit.header("x-llmgate-cache") == "exact");
  BOOST_TEST(hit.json().at("choices").at(0).at("message").at("content").as_string() == "Money.");
  BOOST_TEST(upstream.requests(chat_path) == 1u);

  // The other way round: plain first, then the prompt in a message.
  const json::object plain_tone{
      {"messages", {json::object{{"role", "system"}, {"content", system_text}}, user("Answer in a dry tone.")}}};
  BOOST_TEST(chat(plain_tone).header("x-llmgate-cache") == "miss");
  BOOST_TEST(chat({{"messages", {user(R"(<prompt schema="support"><tone style="dry"/></prompt>)")}}})
                 .header("x-llmgate-cache") == "exact");
  BOOST_TEST(upstream.requests(chat_path) == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_prompt_that_cannot_be_compiled_is_a_400_with_line_and_column, pml_fixture) {
  check_error(chat({{"pml", R"(<prompt schema="nope"><manual/></prompt>)"}}), 400,
              R"(Invalid PML prompt in 'pml': line 1, column 1: unknown schema "nope")", "invalid_pml", "pml");
  check_error(chat({{"pml", R"(<prompt schema="support"><manuel/></prompt>)"}}), 400,
              R"(Invalid PML prompt in 'pml': line 1, column 26: unknown module "manuel" in schema "support")",
              "invalid_pml", "pml");
  check_error(chat({{"pml", R"(<prompt schema="support" version="9"><manual/></prompt>)"}}), 400,
              R"(Invalid PML prompt in 'pml': line 1, column 1: unknown schema "support" version "9")", "invalid_pml",
              "pml");
  check_error(chat({{"pml", R"(<prompt schema="support"><tone/></prompt>)"}}), 400,
              R"(Invalid PML prompt in 'pml': line 1, column 26: module "tone" needs an argument for its parameter "style")",
              "invalid_pml", "pml");
  check_error(chat({{"pml", R"(<prompt schema="support"><tone style="very very very very friendly"/></prompt>)"}}), 400,
              "Invalid PML prompt in 'pml': line 1, column 32: the argument style is 6 tokens long; its parameter allows 3",
              "invalid_pml", "pml");
  check_error(chat({{"messages", {user("Hello"), user("<prompt schema=\"support\">\n  <manual>\n</prompt>")}}}), 400,
              "Invalid PML prompt in 'messages[1].content': line 3, column 1: </prompt> does not close <manual> "
              "(opened at line 2, column 3)",
              "invalid_pml", "messages[1].content");
  check_error(chat({{"pml", true}}), 400, "Invalid type for 'pml': expected a string, but got a boolean instead.",
              "invalid_request", "pml");
  BOOST_TEST(upstream.requests(chat_path) == 0u);
}

BOOST_FIXTURE_TEST_CASE(schemas_are_registered_by_the_admin_and_a_change_is_a_new_version, pml_fixture) {
  namespace http = boost::beast::http;
  const std::string faq_1 = R"(<schema name="faq" version="1"><module name="answer">Say yes.</module></schema>)";
  const std::string faq_1_changed = R"(<schema name="faq" version="1"><module name="answer">Say no.</module></schema>)";
  const std::string faq_2 = R"(<schema name="faq" version="2"><module name="answer">Say no.</module></schema>)";

  BOOST_TEST(admin(http::verb::post, faq_1, "").status == 401u);
  BOOST_TEST(admin(http::verb::post, faq_1, "key-acme").status == 401u);
  BOOST_TEST(admin(http::verb::get, {}, "key-acme").status == 401u);

  const auto added = admin(http::verb::post, faq_1);
  BOOST_TEST(added.status == 200u);
  BOOST_TEST(added.json() == json::parse(R"({"object":"prompt_schema","name":"faq","version":"1"})"));
  BOOST_TEST(admin(http::verb::post, faq_1).status == 200u);  // the same again: nothing changes
  check_error(admin(http::verb::post, faq_1_changed), 409,
              "The schema cannot be registered: line 1, column 1: schema \"faq\" version \"1\" is already registered "
              "with other content: give the change a new version",
              "schema_version_exists", nullptr);
  check_error(admin(http::verb::post, "<schema name=\"faq\" version=\"3\">\n<module name=\"a\">x</modul>\n</schema>"),
              400,
              "Invalid PML schema: line 2, column 19: </modul> does not close <module> (opened at line 2, column 1)",
              "invalid_pml", nullptr);

  chat({{"pml", R"(<prompt schema="faq"><answer/></prompt>)"}});
  BOOST_TEST(sent_messages() == std::vector<std::string>{"user: Say yes."}, boost::test_tools::per_element());
  BOOST_TEST(admin(http::verb::post, faq_2).status == 200u);
  chat({{"pml", R"(<prompt schema="faq"><answer/></prompt>)"}});  // the newest version
  BOOST_TEST(sent_messages() == std::vector<std::string>{"user: Say no."}, boost::test_tools::per_element());
  BOOST_TEST(chat({{"pml", R"(<prompt schema="faq" version="1"><answer/></prompt>)"}}).header("x-llmgate-cache") ==
             "exact");  // version 1's text, answered before

  const auto listed = admin(http::verb::get);
  BOOST_TEST(listed.status == 200u);
  BOOST_TEST(listed.json() == json::parse(R"({"object":"list","data":[
      {"object":"prompt_schema","name":"faq","version":"1"},
      {"object":"prompt_schema","name":"faq","version":"2"},
      {"object":"prompt_schema","name":"support","version":"1"}]})"));
  const auto stats = get(server->port(), "/admin/stats", "admin-key");
  BOOST_TEST(stats.json().at("prompts").at("registered") == listed.json().at("data"));
}

BOOST_AUTO_TEST_CASE(a_gateway_does_not_start_with_a_schema_file_it_cannot_use) {
  temporary_directory directory;
  const auto broken = directory / "broken.xml";
  std::ofstream(broken) << R"(<schema name="b"><module name="a">x</module><module name="a">y</module></schema>)";
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 1;
  config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "test-model", .backends = {"demo"}}};
  config.tenants = {{"acme", "key-acme"}};
  config.prompts.schemas = {broken};
  BOOST_CHECK_EXCEPTION(gateway(config, nullptr), config_error, [&](const config_error& e) {
    BOOST_TEST(e.what() == "config: prompt_schemas[0] cannot be used: '" + broken.string() +
                               "', line 1, column 45: duplicate module name \"a\" (first at line 1, column 18)");
    return true;
  });
}

BOOST_AUTO_TEST_SUITE_END()
