// Running Node from a test: where scripts/setup installed the npm packages
// of tests/node (build/node, or LLMGATE_NODE_DIR in the environment), why
// Node cannot run here, a script run to its end, and a script serving on a
// port until the test is done with it, such as the real inference engine.
#pragma once

#include <signal.h>  // kill, SIGTERM (POSIX)
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS (POSIX)

#include <cstdio>       // popen, pclose, fgets, fscanf (POSIX)
#include <cstdlib>      // std::getenv
#include <filesystem>   // std::filesystem::path
#include <optional>     // std::optional
#include <sstream>      // std::istringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

namespace llmgate::test {

namespace fs = std::filesystem;

/// The folder holding node_modules with tests/node's packages.
inline fs::path node_packages() {
  const char* given = std::getenv("LLMGATE_NODE_DIR");
  return given && *given ? fs::path(given) : fs::path(LLMGATE_NODE_DIR);
}

/// `text` as one word for /bin/sh.
inline std::string shell_quoted(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The major version of the node on PATH ("v20.20.2": 20); 0 where there is none.
inline int node_major_version() {
  FILE* pipe = popen("node --version 2> /dev/null", "r");
  if (!pipe) return 0;
  int major = 0;
  if (std::fscanf(pipe, "v%d", &major) != 1) major = 0;
  pclose(pipe);
  return major;
}

/// Why Node cannot run `packages` here, or nothing when it can. Node is
/// "node" from PATH: scripts/test puts the one scripts/node_env.sh picks
/// first; node-llama-cpp needs 20 or newer (node_env.sh's minimum too).
inline std::optional<std::string> node_unavailable(const std::vector<std::string>& packages) {
  const int major = node_major_version();
  if (major == 0) return "node is not installed (scripts/setup installs it)";
  if (major < 20)
    return "node on PATH is v" + std::to_string(major) +
           ", older than 20 (scripts/setup installs Node 20 into build/node-runtime where the machine's is older, "
           "and scripts/test puts it first on PATH: see scripts/node_env.sh)";
  for (const auto& package : packages)
    if (!fs::exists(node_packages() / "node_modules" / package / "package.json"))
      return "the npm package " + package + " is not in " + (node_packages() / "node_modules").string() +
             " (scripts/setup installs it)";
  return std::nullopt;
}

/// What a script printed (stdout and stderr) and its exit status.
struct node_result {
  int status = -1;
  std::string output;
};

/// Runs `node <arguments>` to its end.
inline node_result run_node(const std::vector<std::string>& arguments) {
  std::string command = "node";
  for (const auto& argument : arguments) command += " " + shell_quoted(argument);
  node_result result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// A Node server: `node <script> <arguments>` printing "listening <port> <pid>"
/// once ready, its stderr in `log`. Terminated on destruction.
/// TAP's top-level results ("ok 3 - name", "not ok 4 - name") of a run of
/// `node --test-reporter=tap`.
struct tap_result {
  bool ok;
  std::string name;
};
inline std::vector<tap_result> top_level_results(const std::string& output) {
  std::vector<tap_result> results;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const bool ok = line.starts_with("ok ");
    if (!ok && !line.starts_with("not ok ")) continue;
    const auto dash = line.find(" - ");
    results.push_back({ok, dash == std::string::npos ? line : line.substr(dash + 3)});
  }
  return results;
}

class node_server {
 public:
  node_server(const fs::path& script, const std::vector<std::string>& arguments, const fs::path& log) {
    std::string command = "exec node " + shell_quoted(script.string());
    for (const auto& argument : arguments) command += " " + shell_quoted(argument);
    pipe_ = popen((command + " 2> " + shell_quoted(log.string())).c_str(), "r");
    if (!pipe_) return;
    unsigned port = 0;
    if (std::fscanf(pipe_, "listening %u %d", &port, &pid_) == 2) port_ = static_cast<unsigned short>(port);
  }
  node_server(const node_server&) = delete;
  node_server& operator=(const node_server&) = delete;
  ~node_server() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    if (pipe_) pclose(pipe_);
  }

  /// "http://127.0.0.1:<port>/v1", or nothing when the server did not start.
  std::optional<std::string> base_url() const {
    if (!port_) return std::nullopt;
    return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
  }

 private:
  FILE* pipe_ = nullptr;
  int pid_ = 0;
  unsigned short port_ = 0;
};

/// The real inference engine: node-llama-cpp serving stories260K
/// (../shared/data/models) through scripts/llama_engine.mjs.
inline fs::path stories260K_model() {
  return fs::path(LLMGATE_SHARED_DATA_DIR) / "models/stories260K/stories260K-ctx512.gguf";
}

/// Why the engine cannot run here, or nothing when it can.
inline std::optional<std::string> llama_engine_unavailable() {
  if (!fs::exists(stories260K_model())) return "no model at " + stories260K_model().string();
  return node_unavailable({"node-llama-cpp", "@node-llama-cpp/linux-x64"});
}

/// The engine, started; its stderr in `log`.
inline node_server llama_harness(const fs::path& log) {
  const fs::path script = fs::path(LLMGATE_TESTS_DIR) / "../scripts/llama_engine.mjs";
  return node_server(script, {(node_packages()).string(), stories260K_model().string()}, log);
}

}  // namespace llmgate::test
