// A real redis-server for tests: a child process on 127.0.0.1, on a free
// port, in a directory of its own, started with the options a test needs
// (a password, an ACL user, TLS with certificates made here by the openssl
// program, replica of another server, any raw arguments such as
// --cluster-enabled yes). kill() ends it with SIGKILL, restart() starts it
// again on the same port and directory, the destructor kills it.
//
//   if (llmgate::test::skip_without_redis()) return;
//   llmgate::test::redis_server server({.password = "secret"});
//   ... server.endpoint() ...
//
// Nothing is persisted unless the arguments ask for it (--save ""), a
// replica's first sync starts at once (no diskless-sync delay, 5 s by
// default), and DEBUG is allowed from 127.0.0.1 so that tests can make the
// server sleep.
#pragma once

#include <fcntl.h>       // O_WRONLY, O_CREAT, O_APPEND (POSIX)
#include <netinet/in.h>  // sockaddr_in, htons (POSIX)
#include <signal.h>      // kill, SIGKILL (POSIX)
#include <spawn.h>       // posix_spawn, posix_spawn_file_actions_* (POSIX)
#include <sys/socket.h>  // socket, bind (POSIX)
#include <sys/wait.h>    // waitpid (POSIX)
#include <unistd.h>      // close (POSIX)

#include <arpa/inet.h>   // inet_pton (POSIX)

#include <chrono>        // std::chrono::steady_clock, milliseconds
#include <cstdlib>       // std::atexit
#include <cstdint>       // std::uint16_t
#include <filesystem>    // std::filesystem::path, exists, file_size
#include <fstream>       // std::ifstream, std::ofstream
#include <iterator>      // std::istreambuf_iterator
#include <optional>      // std::optional
#include <random>        // std::random_device, std::mt19937, uniform_int_distribution
#include <set>           // std::set: the servers running now
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <thread>        // std::this_thread::sleep_for
#include <vector>        // std::vector

#include "llmgate/redis/reply.hpp"  // redis::endpoint
#include "../skip_test.hpp"          // skip_test
#include "../temporary_directory.hpp"  // temporary_directory

extern char** environ;

namespace llmgate::test {

inline constexpr const char* redis_server_program = "/usr/bin/redis-server";
inline constexpr const char* redis_cli_program = "/usr/bin/redis-cli";
inline constexpr const char* openssl_program = "/usr/bin/openssl";

/// Whether a test must skip for want of redis-server (or, for TLS, of
/// openssl); says why through skip_test. Call first: `if (skip_without_redis()) return;`.
inline bool skip_without_redis(bool tls = false) {
  if (!std::filesystem::exists(redis_server_program) || !std::filesystem::exists(redis_cli_program)) {
    skip_test(std::string("no redis-server at ") + redis_server_program +
              " (or no redis-cli); install redis-server and redis-tools (scripts/setup does)");
    return true;
  }
  if (tls && !std::filesystem::exists(openssl_program)) {
    skip_test(std::string("no openssl program at ") + openssl_program + " to make the test certificates");
    return true;
  }
  return false;
}

namespace detail {

/// Runs `arguments` (argv[0] a path) with stdout and stderr appended to
/// `output`, and returns its pid without waiting.
inline pid_t spawn(const std::vector<std::string>& arguments, const std::filesystem::path& output) {
  std::vector<char*> argv;
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed) throw std::runtime_error("cannot start " + arguments[0]);
  return pid;
}

/// The servers running now. A test that crashes (a signal Boost.Test
/// caught) skips their destructors: they are killed when the program exits.
inline std::set<pid_t>& running_servers() {
  static std::set<pid_t>* servers = [] {
    std::atexit([] {
      for (const pid_t pid : running_servers()) ::kill(pid, SIGKILL);
    });
    return new std::set<pid_t>;  // never destroyed: still read at exit
  }();
  return *servers;
}

inline std::string read_file(const std::filesystem::path& path, std::uintmax_t from = 0) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(from));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs a program to its end; throws with its output when it fails.
inline std::string run(const std::vector<std::string>& arguments, const std::filesystem::path& output) {
  const auto from = std::filesystem::exists(output) ? std::filesystem::file_size(output) : 0;
  int status = 0;
  waitpid(spawn(arguments, output), &status, 0);
  std::string printed = read_file(output, from);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const auto& a : arguments) line += a + ' ';
    throw std::runtime_error("failed: " + line + "\n" + printed);
  }
  return printed;
}

inline bool bindable(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  const bool free = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return free;
}

/// A port free now, below the kernel's ephemeral range (so that no client
/// socket takes it between runs), whose cluster bus port (+10000) is free too.
inline std::uint16_t free_port() {
  static std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<std::uint16_t>(std::uniform_int_distribution<int>(20000, 29999)(random));
    if (bindable(port) && bindable(static_cast<std::uint16_t>(port + 10000))) return port;
  }
  throw std::runtime_error("no free port for redis-server");
}

}  // namespace detail

/// PEM files made by make_test_certificates.
struct test_certificates {
  std::filesystem::path ca_file;           ///< the CA that signed the server's and the client's certificates
  std::filesystem::path server_cert_file;  ///< for 127.0.0.1 and localhost
  std::filesystem::path server_key_file;
  std::filesystem::path client_cert_file;  ///< for a server that asks clients for one
  std::filesystem::path client_key_file;
  std::filesystem::path wrong_ca_file;     ///< an unrelated CA: verifying with it must fail
};

/// Makes a CA, a server certificate for 127.0.0.1/localhost and a client
/// certificate signed by it, and an unrelated CA, in `directory` with the
/// openssl program. EC keys: made in milliseconds, where RSA takes seconds.
inline test_certificates make_test_certificates(const std::filesystem::path& directory) {
  const auto at = [&](const char* name) { return (directory / name).string(); };
  const auto log = directory / "openssl.log";
  const std::string openssl = openssl_program;
  const auto make_ca = [&](const char* key, const char* cert, const char* name) {
    detail::run({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", at(key), "-out", at(cert), "-days", "2", "-subj", std::string("/CN=") + name}, log);
  };
  const auto make_signed = [&](const char* key, const char* cert, const char* name, const char* extensions) {
    const auto request = at("request.csr"), extension_file = at("extensions.cnf");
    std::ofstream(extension_file) << extensions << '\n';
    detail::run({openssl, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", at(key), "-out", request, "-subj", std::string("/CN=") + name}, log);
    detail::run({openssl, "x509", "-req", "-in", request, "-CA", at("ca.crt"), "-CAkey", at("ca.key"),
                 "-CAcreateserial", "-out", at(cert), "-days", "2", "-extfile", extension_file}, log);
  };
  make_ca("ca.key", "ca.crt", "llmgate test CA");
  make_ca("wrong-ca.key", "wrong-ca.crt", "llmgate unrelated CA");
  make_signed("server.key", "server.crt", "localhost",
              "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth");
  make_signed("client.key", "client.crt", "llmgate test client", "extendedKeyUsage=clientAuth");
  return {directory / "ca.crt", directory / "server.crt", directory / "server.key",
          directory / "client.crt", directory / "client.key", directory / "wrong-ca.crt"};
}

class redis_server;

struct redis_server_options {
  std::string password = {};        ///< requirepass: the default user's password
  std::string user = {};            ///< an ACL user allowed everything ...
  std::string user_password = {};   ///< ... with this password
  bool tls = false;                 ///< TLS only (no plain port), certificates made in the directory
  bool tls_client_certificates = false;  ///< with tls: the server requires a client certificate
  std::optional<test_certificates> certificates = {};  ///< with tls: these, not new ones (servers that talk to each other)
  const redis_server* replica_of = nullptr;  ///< replicate this server (its password, user and TLS)
  std::vector<std::string> arguments = {};   ///< more, as on redis-server's command line ("--cluster-enabled", "yes")
  std::filesystem::path directory = {};      ///< working directory; empty: a temporary one of its own
};

class redis_server {
 public:
  /// Starts the server and waits until it accepts connections; throws
  /// std::runtime_error with its log when it does not within 10 s.
  explicit redis_server(redis_server_options options = {})
      : options_(std::move(options)),
        directory_(options_.directory.empty() ? own_directory_.emplace().path() : options_.directory),
        port_(detail::free_port()) {
    std::filesystem::create_directories(directory_);
    if (options_.tls) {
      // A replica verifies its master with its own CA file: the master's.
      if (options_.replica_of && options_.replica_of->options().tls && !options_.certificates)
        options_.certificates = options_.replica_of->certificates();
      certificates_ = options_.certificates ? *options_.certificates : make_test_certificates(directory_);
    }
    start();
  }

  ~redis_server() { kill(); }

  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  redis::endpoint endpoint() const { return {"127.0.0.1", port_}; }
  const std::filesystem::path& directory() const noexcept { return directory_; }
  const redis_server_options& options() const noexcept { return options_; }
  /// The certificates of a TLS server (empty paths otherwise).
  const test_certificates& certificates() const noexcept { return certificates_; }
  std::filesystem::path log_file() const { return directory_ / "redis.log"; }
  bool running() const noexcept { return pid_ > 0; }

  /// Ends the server at once (SIGKILL), as a crash would.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    detail::running_servers().erase(pid_);
    pid_ = 0;
  }

  /// Starts the server again on the same port and directory (killing it first if it runs).
  void restart() {
    kill();
    start();
  }

  /// Runs redis-cli against this server, logged in as the options say,
  /// and returns what it printed: server.cli({"SET", "k", "v"}).
  std::string cli(const std::vector<std::string>& command) const {
    std::vector<std::string> arguments = {redis_cli_program, "-h", "127.0.0.1", "-p", std::to_string(port_)};
    add_cli_login(arguments);
    arguments.insert(arguments.end(), command.begin(), command.end());
    return detail::run(arguments, directory_ / "redis-cli.log");
  }

  /// The redis-cli arguments that log in to this server: --tls ..., --user/--pass or -a.
  void add_cli_login(std::vector<std::string>& arguments) const {
    if (options_.tls) {
      arguments.insert(arguments.end(), {"--tls", "--cacert", certificates_.ca_file.string()});
      if (options_.tls_client_certificates)
        arguments.insert(arguments.end(), {"--cert", certificates_.client_cert_file.string(), "--key",
                                           certificates_.client_key_file.string()});
    }
    if (!options_.user.empty())
      arguments.insert(arguments.end(), {"--user", options_.user, "--pass", options_.user_password, "--no-auth-warning"});
    else if (!options_.password.empty())
      arguments.insert(arguments.end(), {"-a", options_.password, "--no-auth-warning"});
  }

 private:
  std::vector<std::string> command_line() const {
    const std::string port = std::to_string(port_);
    std::vector<std::string> arguments = {redis_server_program, "--bind", "127.0.0.1", "--dir", directory_.string(),
                                          "--logfile", "", "--daemonize", "no", "--save", "", "--appendonly", "no",
                                          "--enable-debug-command", "local", "--repl-diskless-sync-delay", "0"};
    if (options_.tls) {
      arguments.insert(arguments.end(), {"--port", "0", "--tls-port", port, "--tls-cert-file",
                                         certificates_.server_cert_file.string(), "--tls-key-file",
                                         certificates_.server_key_file.string(), "--tls-ca-cert-file",
                                         certificates_.ca_file.string(), "--tls-auth-clients",
                                         options_.tls_client_certificates ? "yes" : "no", "--tls-replication", "yes",
                                         "--tls-cluster", "yes"});
      if (options_.tls_client_certificates)  // for its own links to a master or cluster peers
        arguments.insert(arguments.end(), {"--tls-client-cert-file", certificates_.client_cert_file.string(),
                                           "--tls-client-key-file", certificates_.client_key_file.string()});
    } else {
      arguments.insert(arguments.end(), {"--port", port});
    }
    if (!options_.password.empty()) arguments.insert(arguments.end(), {"--requirepass", options_.password});
    if (!options_.user.empty())
      arguments.insert(arguments.end(), {"--user", options_.user, "on", ">" + options_.user_password, "~*", "&*", "+@all"});
    if (const redis_server* master = options_.replica_of) {
      arguments.insert(arguments.end(), {"--replicaof", "127.0.0.1", std::to_string(master->port())});
      const auto& login = master->options();
      if (!login.user.empty())
        arguments.insert(arguments.end(), {"--masteruser", login.user, "--masterauth", login.user_password});
      else if (!login.password.empty())
        arguments.insert(arguments.end(), {"--masterauth", login.password});
    }
    arguments.insert(arguments.end(), options_.arguments.begin(), options_.arguments.end());
    return arguments;
  }

  // Starts the child and waits until it accepts connections (a replica:
  // until it holds its master's data) by reading the part of the log it
  // writes from now on (the log grows across restarts).
  void start() {
    const auto log = log_file();
    const auto from = std::filesystem::exists(log) ? std::filesystem::file_size(log) : 0;
    pid_ = detail::spawn(command_line(), log);
    detail::running_servers().insert(pid_);
    const char* ready = options_.replica_of ? "MASTER <-> REPLICA sync: Finished with success"
                                            : "Ready to accept connections";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string printed = detail::read_file(log, from);
      if (printed.find(ready) != std::string::npos) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        detail::running_servers().erase(pid_);
        pid_ = 0;
        throw std::runtime_error("redis-server exited at start:\n" + printed);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
    throw std::runtime_error("redis-server did not get ready in 10 s:\n" + detail::read_file(log, from));
  }

  redis_server_options options_;
  std::optional<temporary_directory> own_directory_;
  std::filesystem::path directory_;
  std::uint16_t port_;
  test_certificates certificates_;
  pid_t pid_ = 0;
};

/// What redis-cli printed for `command`, without its line end: "0.75".
inline std::string redis_text(const redis_server& server, const std::vector<std::string>& command) {
  std::string printed = server.cli(command);
  while (!printed.empty() && (printed.back() == '\n' || printed.back() == '\r')) printed.pop_back();
  return printed;
}

}  // namespace llmgate::test
