// GET /metrics as Prometheus reads it: the text of a gateway that served
// chat requests (tenant names with quotes and backslashes among them), a
// stream, errors and a 413 passes `promtool check metrics` (from the Debian
// package prometheus). Where promtool is missing the suite is skipped, a
// failure under LLMGATE_REQUIRE_REAL_PARTS=1.
#include <cstdio>       // popen, pclose (POSIX)
#include <cstdlib>      // std::getenv
#include <filesystem>   // std::filesystem
#include <fstream>      // std::ofstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <sys/wait.h>   // WEXITSTATUS

#include <boost/test/unit_test.hpp>

#include "demo_gateway.hpp"
#include "gateway_client.hpp"
#include "llmgate/server/gateway.hpp"
#include "../temporary_directory.hpp"
#if __has_include("../skip_test.hpp")
#include "../skip_test.hpp"  // skip_test: CTest reports the suite as skipped
#define LLMGATE_HAS_SKIP_TEST 1
#endif

namespace {

using namespace llmgate;
using namespace llmgate::test;

// Its exit status and what it printed.
std::pair<int, std::string> run(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  for (int c; (c = std::fgetc(pipe)) != EOF;) output += static_cast<char>(c);
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), output};
}

// Through skip_test (exit status 77, CTest's "skipped") where the tree has
// it; otherwise a message, or a failure when real parts are required.
void skip(const std::string& reason) {
#ifdef LLMGATE_HAS_SKIP_TEST
  skip_test(reason);
#else
  const char* required = std::getenv("LLMGATE_REQUIRE_REAL_PARTS");
  if (required && std::string_view(required) == "1") BOOST_ERROR("LLMGATE_REQUIRE_REAL_PARTS=1: " << reason);
  else BOOST_TEST_MESSAGE("skipped: " << reason);
#endif
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_exposition_test)

BOOST_AUTO_TEST_CASE(promtool_accepts_the_metrics) {
  if (run("command -v promtool").first != 0) return skip("promtool is not installed (apt-get install prometheus)");
  auto config = demo_config();
  config.limits.max_body_bytes = 1000;
  config.tenants.push_back({"quote\"back\\slash", "key-odd"});
  gateway server(config, nullptr);
  server.start();
  const auto port = server.port();
  post(port, "/v1/chat/completions", chat_body("hello"), "key-acme");
  post(port, "/v1/chat/completions", chat_body("hello"), "key-acme");
  post(port, "/v1/chat/completions", chat_body("hello", true), "key-odd");
  post(port, "/v1/chat/completions", "{", "key-acme");
  post(port, "/v1/chat/completions", chat_body(std::string(2000, 'x')), "key-acme");
  get(port, "/nowhere");
  const auto metrics = get(port, "/metrics", "admin-key");
  BOOST_TEST_REQUIRE(metrics.status == 200u);
  BOOST_TEST(metrics.body.find("tenant=\"quote\\\"back\\\\slash\"") != std::string::npos);

  temporary_directory directory;
  const auto file = directory.path() / "metrics.txt";
  std::ofstream(file) << metrics.body;
  const auto [status, output] = run("promtool check metrics < " + file.string());
  BOOST_TEST(status == 0, output);
  BOOST_TEST(output == "", metrics.body);  // no lint either (HELP, counter names, units)
}

BOOST_AUTO_TEST_SUITE_END()
