// The gateway's prompt_statistics, end to end with an in-test upstream that
// reports cached prompt tokens (usage.prompt_tokens_details.cached_tokens):
// every fresh answer to a PML prompt, whole or streamed, shares them out
// over the prompt's modules from its start; a cache hit and a plain
// request count nothing; /metrics shows the figures in valid exposition
// (promtool accepts it) and /admin/stats in JSON; and the statistics a
// backend is given in backend_setup are the gateway's, so that what it
// counts (llama.cpp slot files) shows there too. Token spans are the
// compiler's estimates: the system message is 11 tokens, "The manual says:
// caches save money." 11 and "Answer in a friendly tone." 8.
#include <cstdio>       // popen, pclose (POSIX)
#include <fstream>      // std::ofstream
#include <memory>       // std::unique_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <sys/wait.h>   // WEXITSTATUS

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "../skip_test.hpp"
#include "../temporary_directory.hpp"
#include "demo_gateway.hpp"
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
  </user>
</schema>)";

// manual spans tokens 11 to 22, tone 22 to 30 (then the question).
const std::string both = R"(<prompt schema="support"><manual/><tone style="friendly"/>What does a cache save?</prompt>)";
// manual alone: 11 to 22.
const std::string manual_only = R"(<prompt schema="support"><manual/></prompt>)";

struct metrics_fixture {
  metrics_fixture() {
    std::ofstream(directory / "support.xml") << support_schema;
    upstream.start();
    auto config = upstream_config(upstream.url("/v1"));
    config.semantic_cache.enabled = false;
    config.prompts.schemas = {directory / "support.xml"};
    server = std::make_unique<gateway>(std::move(config), nullptr);
    server->start();
  }

  http_reply ask(const std::string& pml, bool stream = false) {
    return post(server->port(), chat_path,
                json::serialize(json::object{{"model", "test-model"}, {"pml", pml}, {"stream", stream}}), "key-acme");
  }
  std::string metrics() const { return get(server->port(), "/metrics", "admin-key").body; }

  temporary_directory directory;
  upstream_server upstream;
  std::unique_ptr<gateway> server;
};

// The lines of `text` that start with `prefix`, joined by "\n".
std::string lines(const std::string& text, std::string_view prefix) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = text.find('\n', at);
    const std::string_view line(text.data() + at, (end == std::string::npos ? text.size() : end) - at);
    if (line.starts_with(prefix)) out.append(line).append("\n");
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

std::pair<int, std::string> run(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  for (int c; (c = std::fgetc(pipe)) != EOF;) output += static_cast<char>(c);
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), output};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_prompt_metrics_test)

BOOST_FIXTURE_TEST_CASE(fresh_answers_share_the_cached_tokens_over_the_modules, metrics_fixture) {
  // Before any PML prompt: the families, and the slot counters at 0.
  const std::string before = metrics();
  BOOST_TEST(lines(before, "llmgate_prompt_") ==
             "llmgate_prompt_slot_files_total{event=\"saved\"} 0\n"
             "llmgate_prompt_slot_files_total{event=\"restored\"} 0\n"
             "llmgate_prompt_slot_files_total{event=\"fallback\"} 0\n");
  BOOST_TEST(lines(before, "# TYPE llmgate_prompt_") ==
             "# TYPE llmgate_prompt_tokens_total counter\n"
             "# TYPE llmgate_prompt_module_tokens_total counter\n"
             "# TYPE llmgate_prompt_module_imports_total counter\n"
             "# TYPE llmgate_prompt_schema_tokens_total counter\n"
             "# TYPE llmgate_prompt_schema_prompts_total counter\n"
             "# TYPE llmgate_prompt_slot_files_total counter\n");

  // 20 of 40 prompt tokens cached: all of the system message, 9 of manual's 11.
  upstream.enqueue(chat_path, reply::chat("Money.", {40, 5, 20, 0}));
  BOOST_TEST(ask(both).status == 200u);
  // Streamed: 22 of 30 cached, the system message and all of manual.
  upstream.enqueue(chat_path, reply::chat_stream({"Mo", "ney."}, {30, 5, 22, 0}));
  const auto streamed = ask(manual_only, true);
  BOOST_TEST(streamed.streamed_text() == "Money.");
  // An exact hit and a plain request count nothing.
  BOOST_TEST(ask(both).header("x-llmgate-cache") == "exact");
  upstream.enqueue(chat_path, reply::chat("Plain.", {50, 5, 50, 0}));
  BOOST_TEST(post(server->port(), chat_path, chat_body("Hello"), "key-acme").status == 200u);
  BOOST_TEST(upstream.requests(chat_path) == 3u);

  const std::string after = metrics();
  BOOST_TEST(lines(after, "llmgate_prompt_module_") ==
             "llmgate_prompt_module_tokens_total{schema=\"support\",version=\"1\",module=\"manual\",kind=\"reused\"} 20\n"
             "llmgate_prompt_module_tokens_total{schema=\"support\",version=\"1\",module=\"manual\",kind=\"computed\"} 2\n"
             "llmgate_prompt_module_tokens_total{schema=\"support\",version=\"1\",module=\"tone\",kind=\"reused\"} 0\n"
             "llmgate_prompt_module_tokens_total{schema=\"support\",version=\"1\",module=\"tone\",kind=\"computed\"} 8\n"
             "llmgate_prompt_module_imports_total{schema=\"support\",version=\"1\",module=\"manual\"} 2\n"
             "llmgate_prompt_module_imports_total{schema=\"support\",version=\"1\",module=\"tone\"} 1\n");
  BOOST_TEST(lines(after, "llmgate_prompt_schema_") ==
             "llmgate_prompt_schema_tokens_total{schema=\"support\",version=\"1\",kind=\"reused\"} 42\n"
             "llmgate_prompt_schema_tokens_total{schema=\"support\",version=\"1\",kind=\"computed\"} 28\n"
             "llmgate_prompt_schema_prompts_total{schema=\"support\",version=\"1\"} 2\n");

  const auto stats = get(server->port(), "/admin/stats", "admin-key").json().at("prompts");
  BOOST_TEST(stats == json::parse(R"({
      "schemas": [{"schema": "support", "version": "1", "prompts": 2, "reused_tokens": 42, "computed_tokens": 28}],
      "modules": [{"schema": "support", "version": "1", "module": "manual", "prompts": 2, "reused_tokens": 20, "computed_tokens": 2},
                  {"schema": "support", "version": "1", "module": "tone", "prompts": 1, "reused_tokens": 0, "computed_tokens": 8}],
      "slot_files": {"saved": 0, "restored": 0, "fallbacks": 0, "last_fallback": ""},
      "registered": [{"object": "prompt_schema", "name": "support", "version": "1"}]})"));

  if (run("command -v promtool").first != 0) return skip_test("promtool is not installed (apt-get install prometheus)");
  const auto file = directory / "metrics.txt";
  std::ofstream(file) << after;
  const auto [status, output] = run("promtool check metrics < " + file.string());
  BOOST_TEST(status == 0, output);
  BOOST_TEST(output == "", after);  // no lint either
}

BOOST_AUTO_TEST_CASE(a_backend_is_given_the_gateways_statistics) {
  // A backend kind that counts slot files as llama.cpp's would: a fake,
  // since no llama-server runs here; what is tested is where its counts go.
  prompt_statistics* given = nullptr;
  gateway_parts parts{.log = nullptr};
  parts.backends.add("slotted", [&given](const backend_config& b, const backend_setup& setup) {
    given = setup.prompt_statistics.get();
    setup.prompt_statistics->slot_saved();
    setup.prompt_statistics->slot_fallback("the server has no --slot-save-path");
    return any_backend(make_demo_backend(b.name));
  });
  auto config = demo_config();
  config.backends = {{.name = "local", .kind = "slotted"}};
  config.models = {{.name = "test-model", .backends = {"local"}}};
  gateway server(config, std::move(parts));
  server.start();
  BOOST_TEST(given == &server.prompt_stats());
  BOOST_TEST(lines(get(server.port(), "/metrics", "admin-key").body, "llmgate_prompt_slot_files_total") ==
             "llmgate_prompt_slot_files_total{event=\"saved\"} 1\n"
             "llmgate_prompt_slot_files_total{event=\"restored\"} 0\n"
             "llmgate_prompt_slot_files_total{event=\"fallback\"} 1\n");
  BOOST_TEST(get(server.port(), "/admin/stats", "admin-key").json().at("prompts").at("slot_files") ==
             json::parse(R"({"saved": 1, "restored": 0, "fallbacks": 1,
                             "last_fallback": "the server has no --slot-save-path"})"));
}

BOOST_AUTO_TEST_SUITE_END()
