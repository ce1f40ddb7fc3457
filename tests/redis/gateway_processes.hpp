// gateway_processes: the gateway program (examples/gateway.cpp, whose path
// the build passes as LLMGATE_GATEWAY_PROGRAM) run as child processes, the
// way replicas run behind a load balancer: each with a JSON config of its
// own written to a file, on a port picked here (a child's port 0 could not
// be read back), its stdout and stderr kept in a log file. A test or a
// benchmark starts them, waits for /healthz, kills (SIGKILL), terminates
// (SIGTERM) or restarts one, and reads /readyz and /metrics.
//
// All stand in front of one model server in the caller's process,
// replica_upstream, and are asked test_question(n) and test_paraphrase(n).
//
//   llmgate::test::replica_upstream upstream;
//   llmgate::test::gateway_process a(LLMGATE_GATEWAY_PROGRAM, dir.path(), "a",
//       replica_config(upstream.url(), tenants,
//                      shared_section({.endpoints = {redis.endpoint()}, .replica = "a"})));
//   a.start();
//   BOOST_TEST_REQUIRE(a.wait_until_healthy(std::chrono::seconds(20)), a.log());
//   ... post(a.port(), "/v1/chat/completions", ...) ...
//   a.kill();  a.restart();
//
// POSIX only (posix_spawn, kill, waitpid), as tests/eval/kill_resume_test.cpp.
#pragma once

#include <fcntl.h>     // O_WRONLY, O_CREAT, O_APPEND (POSIX)
#include <signal.h>    // kill, SIGKILL, SIGTERM (POSIX)
#include <spawn.h>     // posix_spawn, posix_spawn_file_actions_* (POSIX)
#include <sys/wait.h>  // waitpid, WNOHANG (POSIX)

#include <algorithm>    // std::min
#include <cerrno>       // errno, EINTR
#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ofstream, std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <mutex>        // std::mutex, std::lock_guard (replica_upstream)
#include <optional>     // std::optional
#include <random>       // std::mt19937, std::random_device (free_port, test_question)
#include <set>          // std::set (free_port, replica_upstream)
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string, std::stod
#include <string_view>  // std::string_view
#include <thread>       // std::this_thread::sleep_for
#include <vector>       // std::vector

#include <boost/asio/io_context.hpp>  // the sockets of free_port
#include <boost/asio/ip/tcp.hpp>      // tcp::acceptor
#include <boost/json.hpp>             // the config written, /readyz read

#include "../backend/upstream_server.hpp"  // upstream_server (replica_upstream)
#include "../server/gateway_client.hpp"    // get, http_reply
#include "llmgate/wire/openai_wire.hpp"    // parse_chat_request, content_text
#include "llmgate/redis/reply.hpp"         // redis::endpoint

extern char** environ;

namespace llmgate::test {

/// A port on 127.0.0.1 that nothing is bound to now, below the kernel's
/// range of ports for outgoing connections (32768 and up) and apart from
/// redis_server's (20000 to 39999, cluster bus ports included), so that
/// no other socket takes it while a replica is down between a kill and
/// its restart, and never one it gave before (gateways not started yet
/// are not bound to theirs). Another program could still take it; on a
/// test machine's loopback that race is not met. One thread at a time.
inline unsigned short free_port() {
  static std::mt19937 draw(std::random_device{}());
  static std::set<unsigned short> given;
  boost::asio::io_context io;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<unsigned short>(std::uniform_int_distribution<int>(10000, 19999)(draw));
    if (given.contains(port)) continue;
    boost::asio::ip::tcp::acceptor acceptor(io);
    boost::system::error_code failed;
    acceptor.open(boost::asio::ip::tcp::v4(), failed);
    if (!failed) acceptor.bind({boost::asio::ip::make_address("127.0.0.1"), port}, failed);
    if (failed) continue;
    given.insert(port);
    return port;
  }
  throw std::runtime_error("no free port for a gateway between 10000 and 19999");
}

/// A tenant of the replicas' configs: its name and its API key.
struct tenant_key {
  std::string name, key;
};

/// The admin key of every config replica_config writes (/metrics, /admin/stats).
inline constexpr std::string_view replica_admin_key = "admin-replicas";

/// Four made-up words, the same for the same n: topics far apart from
/// one another for the embedder.
inline std::string test_topic(std::size_t n) {
  static constexpr const char* syllables[] = {"ka", "mo", "ru", "ve", "li", "to", "sa", "ne",
                                              "pi", "du", "zo", "ga", "fe", "bi", "xu", "ha"};
  std::mt19937 draw(static_cast<unsigned>(n * 7919 + 1));
  std::string text;
  for (int word = 0; word < 4; ++word) {
    if (word) text += ' ';
    for (int s = 0; s < 3; ++s) text += syllables[draw() % 16];
  }
  return text;
}
/// A question of its own for each n ...
inline std::string test_question(std::size_t n) { return "What is the capital of " + test_topic(n) + "?"; }
/// ... and for each a paraphrase that the hashing embedder puts at 0.98 of
/// it (replica_config's threshold is 0.9), with no number or negation for
/// the semantic cache's guard to veto on. Its one more word is a common
/// one: once the embedder has learned IDF weights from traffic full of
/// these questions, a rare one ("capital city of") falls to 0.80.
inline std::string test_paraphrase(std::size_t n) { return "what is the capital of the " + test_topic(n); }

/// The model server of the replicas: answers "Answer #<n> to: <question>",
/// n counting its answers, so that a served answer names the request that
/// paid for it; refuses with a 400 (which a gateway never caches) what it
/// is told to. A probe of a replica that does not hold an answer yet is
/// then a 400, never a fresh answer that the next probe would hit.
class replica_upstream {
 public:
  replica_upstream() {
    server_.on("/v1/chat/completions", [this](const received_request& request) {
      const std::string asked = llmgate::content_text(llmgate::parse_chat_request(request.json()).messages.back());
      std::lock_guard lock(mutex_);
      if (refused_.contains(asked))
        return reply::openai_error(400, "invalid_request_error", "refused", "refused: " + asked);
      return reply::chat("Answer #" + std::to_string(++answers_) + " to: " + asked);
    });
    server_.start();
  }

  /// The base URL of an "openai" backend.
  std::string url() const { return server_.url("/v1"); }

  /// From now on, `asked` gets a 400. Any thread.
  void refuse(const std::string& asked) {
    std::lock_guard lock(mutex_);
    refused_.insert(asked);
  }
  /// Answers given so far (refusals not counted).
  std::size_t answers() const {
    std::lock_guard lock(mutex_);
    return answers_;
  }

 private:
  upstream_server server_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> refused_;
  std::size_t answers_ = 0;
};

/// The "shared" section of a replica's config (server/gateway_config.hpp).
struct shared_options {
  std::vector<redis::endpoint> endpoints;
  std::string replica;        ///< its name among the replicas
  std::string password = {};
  std::string ca_file = {};   ///< non-empty: TLS, the server verified with this CA, as "localhost"
  unsigned snapshot_interval_s = 60;
};

inline boost::json::object shared_section(const shared_options& o) {
  boost::json::array endpoints;
  for (const auto& e : o.endpoints) endpoints.push_back(boost::json::string(e.host + ":" + std::to_string(e.port)));
  boost::json::object redis{{"endpoints", std::move(endpoints)}, {"password", o.password}};
  if (!o.ca_file.empty()) redis["tls"] = {{"ca_file", o.ca_file}, {"server_name", "localhost"}, {"verify", true}};
  return {{"redis", std::move(redis)}, {"prefix", "llmgate"}, {"replica", o.replica},
          {"snapshot_interval_s", o.snapshot_interval_s}};
}

/// A gateway config as the program reads it: one OpenAI-compatible backend
/// "upstream" at `upstream_url` serving model "test-model", the tenants,
/// both cache tiers with the hashing embedder (threshold 0.9), no request
/// log, and `shared` as its "shared" section when given (none: a gateway
/// of its own). The port is the process's to fill in.
inline boost::json::object replica_config(const std::string& upstream_url, const std::vector<tenant_key>& tenants,
                                          std::optional<boost::json::object> shared = std::nullopt) {
  boost::json::array tenant_list;
  for (const auto& tenant : tenants) tenant_list.push_back({{"name", tenant.name}, {"api_key", tenant.key}});
  boost::json::object config{
      {"listen", {{"address", "127.0.0.1"}, {"port", 0}, {"threads", 2}}},
      {"limits", {{"request_timeout_ms", 10000}}},
      {"backends", boost::json::array{{{"name", "upstream"}, {"kind", "openai"}, {"base_url", upstream_url},
                                       {"retries", 0}}}},
      {"models", boost::json::array{{{"name", "test-model"}, {"backend", "upstream"}}}},
      {"tenants", std::move(tenant_list)},
      {"admin", {{"api_key", replica_admin_key}}},
      {"exact_cache", {{"enabled", true}}},
      {"semantic_cache", {{"enabled", true}, {"threshold", {{"policy", "static"}, {"value", 0.9}}}}},
      {"log", {{"requests", false}}}};
  if (shared) config["shared"] = std::move(*shared);
  return config;
}

/// One gateway program as a child process, on a port of its own that it
/// keeps across restarts.
class gateway_process {
 public:
  /// Writes `config` (its listen.port replaced by the port picked) to
  /// <directory>/<name>.json; the process's output goes to <name>.log there.
  gateway_process(std::string program, const std::filesystem::path& directory, std::string name,
                  boost::json::object config)
      : program_(std::move(program)),
        name_(std::move(name)),
        config_file_(directory / (name_ + ".json")),
        log_file_(directory / (name_ + ".log")),
        port_(free_port()) {
    config.at("listen").as_object()["port"] = port_;
    std::ofstream(config_file_) << boost::json::serialize(config);
  }
  gateway_process(const gateway_process&) = delete;
  gateway_process& operator=(const gateway_process&) = delete;
  ~gateway_process() { kill(); }

  const std::string& name() const noexcept { return name_; }
  unsigned short port() const noexcept { return port_; }
  const std::filesystem::path& config_file() const noexcept { return config_file_; }

  /// Starts the program; returns at once (wait_until_healthy waits).
  /// Throws std::runtime_error when it cannot be spawned.
  void start() {
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    std::vector<std::string> arguments = {program_, "--config", config_file_.string()};
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    const int failed = posix_spawn(&pid_, program_.c_str(), &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    if (failed != 0) {
      pid_ = 0;
      throw std::runtime_error("cannot start " + program_ + " (error " + std::to_string(failed) + ")");
    }
  }

  /// Polls GET /healthz until it answers 200; false when the process
  /// ended first or `limit` passed.
  bool wait_until_healthy(std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (!running()) return false;
      try {
        if (get(port_, "/healthz").status == 200) return true;
      } catch (const std::exception&) {
        // not listening yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  /// Whether the process has not ended (reaps it when it has).
  bool running() {
    if (pid_ == 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) return true;
    pid_ = 0;
    last_status_ = status;
    return false;
  }

  /// Waits up to `limit` for the process to end by itself; its exit code
  /// as a shell tells it (128 + the signal's number when a signal ended
  /// it); nothing when it still runs.
  std::optional<int> wait_for_exit(std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (running() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (running()) return std::nullopt;
    return last_exit_code();
  }

  /// SIGKILL: gone at once, nothing drained or flushed. Reaped before it returns.
  void kill() { end(SIGKILL); }

  /// SIGTERM: the gateway drains and stops; returns its exit code as
  /// wait_for_exit does (0: a clean stop), -1 when it was not running.
  int terminate() {
    if (!running()) return -1;
    end(SIGTERM);
    return last_exit_code();
  }

  /// Kills it when it runs, starts it again on the same port with the
  /// same config, and waits until it is healthy (false: it was not within `limit`).
  bool restart(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    kill();
    start();
    return wait_until_healthy(limit);
  }

  /// Everything the process wrote to stdout and stderr, every start's.
  std::string log() const {
    std::ifstream in(log_file_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  /// GET /readyz's "status": "ready", "degraded" or "draining"; "" when it
  /// does not answer.
  std::string readiness() const {
    try {
      const auto reply = get(port_, "/readyz");
      return std::string(reply.json().at("status").as_string());
    } catch (const std::exception&) {
      return {};
    }
  }

  /// GET /metrics (with the admin key): Prometheus text.
  std::string metrics() const { return get(port_, "/metrics", replica_admin_key).body; }

  /// GET /admin/stats (with the admin key).
  boost::json::value stats() const { return get(port_, "/admin/stats", replica_admin_key).json(); }

 private:
  void end(int signal_number) {
    if (pid_ == 0) return;
    ::kill(pid_, signal_number);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
    last_status_ = status;
  }

  int last_exit_code() const {
    if (!last_status_) return -1;
    return WIFEXITED(*last_status_) ? WEXITSTATUS(*last_status_) : 128 + WTERMSIG(*last_status_);
  }

  std::string program_;
  std::string name_;
  std::filesystem::path config_file_, log_file_;
  unsigned short port_;
  pid_t pid_ = 0;
  std::optional<int> last_status_;  // waitpid's status of the last run that ended
};

/// The value of a Prometheus sample in `text`: the line that starts with
/// `series` (a name, with its labels when it has any, as written:
/// `llmgate_http_responses_total{status="200"}`) and a space; nothing when
/// no line does.
inline std::optional<double> metric_value(std::string_view text, std::string_view series) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ') {
      const std::string value(line.substr(series.size() + 1));
      return std::stod(value);
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace llmgate::test
