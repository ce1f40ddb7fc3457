// local_engine: a GGUF candidate served for the length of a run by the
// local llama.cpp engine (node-llama-cpp through scripts/llama_engine.mjs,
// which scripts/setup installs into build/node), on a loopback port, and
// stopped at the end.
#pragma once

#include <signal.h>  // kill, SIGTERM (POSIX)

#include <cstdint>     // std::uint64_t
#include <cstdio>      // popen, pclose, fscanf (POSIX)
#include <filesystem>  // std::filesystem::path
#include <fstream>     // std::ifstream
#include <stdexcept>   // std::runtime_error
#include <string>      // std::string

class local_engine {
 public:
  /// Starts the engine on `model`; its log goes to `log`; `slot_context`
  /// (tokens per slot) is the script's own default when empty. Throws when
  /// it does not come up.
  local_engine(const std::filesystem::path& script, const std::filesystem::path& node_packages,
               const std::filesystem::path& model, const std::filesystem::path& log,
               const std::string& slot_context = {}) {
    const std::string command = "exec node " + quoted(script.string()) + " " + quoted(node_packages.string()) + " " +
                                quoted(model.string()) + (slot_context.empty() ? "" : " " + quoted(slot_context)) +
                                " 2> " + quoted(log.string());
    pipe_ = popen(command.c_str(), "r");
    unsigned port = 0;
    if (!pipe_ || std::fscanf(pipe_, "listening %u %d", &port, &pid_) != 2 || port == 0)
      throw std::runtime_error("the local llama.cpp engine did not start on " + model.string() + " (its log: " +
                               log.string() + "; scripts/setup installs node-llama-cpp into build/node)");
    base_url_ = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  }
  local_engine(const local_engine&) = delete;
  local_engine& operator=(const local_engine&) = delete;
  ~local_engine() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    if (pipe_) pclose(pipe_);
  }

  /// "http://127.0.0.1:<port>/v1": an OpenAI-compatible server.
  const std::string& base_url() const { return base_url_; }

  /// The engine's resident memory now, from /proc; 0 where it cannot be read.
  std::uint64_t resident_bytes() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  107264 kB"
    return 0;
  }

 private:
  static std::string quoted(const std::string& text) {
    std::string out = "'";
    for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }

  FILE* pipe_ = nullptr;
  int pid_ = 0;
  std::string base_url_;
};
