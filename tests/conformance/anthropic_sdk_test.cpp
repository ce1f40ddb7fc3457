// The gateway's /v1/messages as Anthropic's official Node client sees it:
// anthropic_sdk.mjs (beside this file) drives the gateway with the
// `@anthropic-ai/sdk` npm package (tests/node pins its version) and reports
// each check in TAP; this suite starts what it talks to and judges the
// checks one by one: the in-test OpenAI-compatible upstream
// (tests/backend/upstream_server.hpp) as test-model, and the real
// inference engine, node-llama-cpp serving stories260K. Skipped, with the
// reason, where Node, the npm packages or the model are missing (CTest
// reports it as skipped; CI, with LLMGATE_REQUIRE_REAL_PARTS=1, as failed).
#include <filesystem>  // std::filesystem::path
#include <string>      // std::string

#include <boost/json.hpp>  // the script's settings, the upstream's answers
#include <boost/test/unit_test.hpp>

#include "llmgate/server/gateway.hpp"
#include "../backend/upstream_server.hpp"
#include "../node/node_process.hpp"  // run_node, llama_harness, top_level_results
#include "../skip_test.hpp"          // skip_test
#include "sdk_upstream.hpp"          // sdk_upstream_answer

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(anthropic_sdk_test)

BOOST_AUTO_TEST_CASE(official_anthropic_client_against_the_gateway) {
  if (const auto missing = node_unavailable({"@anthropic-ai/sdk"})) return skip_test(*missing);
  if (const auto missing = llama_engine_unavailable()) return skip_test(*missing);
  const auto engine = llama_harness("anthropic_sdk_test.harness.log");
  BOOST_REQUIRE_MESSAGE(engine.base_url(), "the engine did not start, see anthropic_sdk_test.harness.log");
  upstream_server upstream;
  upstream.on("/v1/chat/completions", sdk_upstream_answer);
  upstream.start();

  gateway_config config;
  config.listen.port = 0;
  config.tenants = {{"acme", "key-acme"}};
  config.log.requests = false;
  config.limits.request_timeout_ms = 30'000;
  config.backends = {{.name = "upstream", .base_url = upstream.url("/v1"), .retries = 0},
                     {.name = "engine", .base_url = *engine.base_url(), .retries = 0}};
  config.models = {{.name = "test-model", .backends = {"upstream"}},
                   {.name = "stories260K", .backends = {"engine"}, .upstream_model = "stories260K-ctx512"}};
  config.semantic_cache.enabled = false;  // the exact tier's hit is what the script checks
  config.limits.max_body_bytes = 64 * 1024;
  const std::uint64_t config_limit = config.limits.max_body_bytes;
  gateway server(std::move(config), nullptr);
  server.start();

  const auto settings = json::serialize(json::object{{"packages", node_packages().string()},
                                                     {"gateway", "http://127.0.0.1:" + std::to_string(server.port())},
                                                     {"key", "key-acme"},
                                                     {"limit", config_limit}});
  const auto script = std::filesystem::path(LLMGATE_TESTS_DIR) / "conformance/anthropic_sdk.mjs";
  const auto run = run_node({"--test-reporter=tap", script.string(), settings});
  BOOST_TEST_MESSAGE(run.output);
  const auto results = top_level_results(run.output);
  // Every check the script holds ran: none was lost to a crash.
  BOOST_TEST(results.size() == 14u);
  for (const auto& result : results) BOOST_TEST(result.ok, "anthropic_sdk.mjs: " << result.name);
  BOOST_TEST(run.status == 0);
}

BOOST_AUTO_TEST_SUITE_END()
