// The OpenAI adapter against real servers, through one conformance suite:
// - a real inference engine: node-llama-cpp (llama.cpp, 1 thread) serving
//   ../shared/data/models/stories260K through tests/backend/llama_harness.mjs;
//   the npm packages are installed once into <build>/node_engine. Skipped,
//   with the reason, where node, npm, the packages or the model are missing.
// - any OpenAI-compatible server named by LLMGATE_TEST_BASE_URL (with
//   LLMGATE_TEST_API_KEY, LLMGATE_TEST_MODEL and, to check embeddings,
//   LLMGATE_TEST_EMBEDDING_MODEL), e.g. https://api.openai.com/v1.
#include <boost/test/unit_test.hpp>

#include <signal.h>  // kill

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "llmgate/backend/openai_backend.hpp"
#include "backend_fixture.hpp"

using llmgate::openai_backend;
using llmgate::openai_options;
using llmgate::test::chunk_log;
using llmgate::test::user_says;
namespace fs = std::filesystem;
namespace net = boost::asio;

namespace {

struct server_under_test {
  std::string base_url;
  std::string api_key;
  std::string model;            ///< "" for the first the server lists
  std::string embedding_model;  ///< "" to skip embeddings
  bool deterministic = false;   ///< temperature 0 gives the same text whole and streamed
};

/// What any OpenAI-compatible server must do for llmgate.
void check_conformance(const server_under_test& target) {
  net::io_context io;
  openai_backend model(io.get_executor(), {.name = "conformance", .base_url = target.base_url,
                                           .api_key = target.api_key});
  const auto run = [&](auto task) { return llmgate::run_blocking(io, std::move(task)); };

  const auto ids = run(model.models());
  BOOST_TEST_REQUIRE(!ids.empty());
  const std::string name = target.model.empty() ? ids.front() : target.model;

  auto request = user_says("Once upon a time", name);
  llmgate::set_field(request.parameters, "max_tokens", "16");
  llmgate::set_field(request.parameters, "temperature", "0");
  const auto whole = run(model.complete(request));
  BOOST_TEST(!whole.id.empty());
  BOOST_TEST(!whole.content.empty());
  BOOST_TEST(!whole.finish_reason.empty());
  BOOST_TEST(whole.usage.prompt_tokens > 0u);
  BOOST_TEST(whole.usage.completion_tokens > 0u);

  chunk_log log;
  const auto streamed = run(model.stream(request, log.handler()));
  BOOST_TEST(log.text() == streamed.content);
  BOOST_TEST(!streamed.finish_reason.empty());
  BOOST_TEST(streamed.usage.prompt_tokens == whole.usage.prompt_tokens);  // same prompt, same count
  BOOST_TEST(streamed.usage.completion_tokens > 0u);
  BOOST_TEST(log.chunks.back().usage.has_value());
  if (target.deterministic) BOOST_TEST(streamed.content == whole.content);

  llmgate::set_field(request.parameters, "max_tokens", "1");
  BOOST_TEST(run(model.complete(request)).finish_reason == "length");

  if (target.embedding_model.empty()) return;
  const auto vectors = run(model.embed({.model = target.embedding_model,
                                        .input = {"a small cat", "a small cat", "stock markets"},
                                        .parameters = {}}));
  BOOST_REQUIRE(vectors.embeddings.size() == 3u);
  const auto& a = vectors.embeddings[0];
  const auto& b = vectors.embeddings[1];
  BOOST_REQUIRE(!a.empty());
  BOOST_TEST(b.size() == a.size());
  BOOST_TEST(vectors.embeddings[2].size() == a.size());
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  BOOST_TEST(dot / std::sqrt(aa * bb) > 0.99);  // the same text embeds the same
  BOOST_TEST(vectors.usage.prompt_tokens > 0u);
}

bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " > /dev/null 2>&1").c_str()) == 0;
}

/// The running harness: started on construction, terminated on destruction.
class llama_harness {
 public:
  llama_harness(const fs::path& engine, const fs::path& model) {
    const fs::path script = fs::path(__FILE__).parent_path() / "llama_harness.mjs";
    const std::string command = "exec node '" + script.string() + "' '" + engine.string() + "' '" +
                                model.string() + "' 2> '" + (engine / "harness.log").string() + "'";
    pipe_ = popen(command.c_str(), "r");
    if (!pipe_) return;
    unsigned port = 0;
    if (std::fscanf(pipe_, "listening %u %d", &port, &pid_) == 2) port_ = static_cast<unsigned short>(port);
  }
  ~llama_harness() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    if (pipe_) pclose(pipe_);
  }
  std::optional<std::string> base_url() const {
    if (!port_) return std::nullopt;
    return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
  }

 private:
  FILE* pipe_ = nullptr;
  int pid_ = 0;
  unsigned short port_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(real_engine_test)

BOOST_AUTO_TEST_CASE(node_llama_cpp_serving_stories260K) {
  const fs::path model = fs::path(LLMGATE_SHARED_DATA_DIR) / "models/stories260K/stories260K-ctx512.gguf";
  // <build>/tests/llmgate_tests -> <build>/node_engine
  const fs::path engine = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "node_engine";
  if (!fs::exists(model)) {
    BOOST_TEST_MESSAGE("skipped: no model at " << model);
    return;
  }
  if (!on_path("node") || !on_path("npm")) {
    BOOST_TEST_MESSAGE("skipped: node or npm is not installed");
    return;
  }
  if (!fs::exists(engine / "node_modules/node-llama-cpp")) {
    BOOST_TEST_MESSAGE("installing node-llama-cpp into " << engine << " (once)");
    fs::create_directories(engine);
    const std::string install = "cd '" + engine.string() +
        "' && npm install --omit=optional --no-audit --no-fund node-llama-cpp @node-llama-cpp/linux-x64"
        " > npm.log 2>&1";
    if (std::system(install.c_str()) != 0) {
      BOOST_TEST_MESSAGE("skipped: npm install failed (offline?), see " << engine / "npm.log");
      return;
    }
  }
  llama_harness harness(engine, model);
  const auto url = harness.base_url();
  if (!url) {
    BOOST_TEST_MESSAGE("skipped: the harness did not start, see " << engine / "harness.log");
    return;
  }
  check_conformance({.base_url = *url, .api_key = "", .model = "", .embedding_model = "stories260K-ctx512",
                     .deterministic = true});
}

BOOST_AUTO_TEST_CASE(server_named_by_LLMGATE_TEST_BASE_URL) {
  const char* base_url = std::getenv("LLMGATE_TEST_BASE_URL");
  if (!base_url || !*base_url) {
    BOOST_TEST_MESSAGE("skipped: LLMGATE_TEST_BASE_URL is not set");
    return;
  }
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  check_conformance({.base_url = base_url, .api_key = variable("LLMGATE_TEST_API_KEY"),
                     .model = variable("LLMGATE_TEST_MODEL"),
                     .embedding_model = variable("LLMGATE_TEST_EMBEDDING_MODEL")});
}

BOOST_AUTO_TEST_SUITE_END()
