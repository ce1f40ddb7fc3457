// The gateway benchmark's peers, each a program of its own that the bench
// starts as a child process on loopback and stops at the end: nginx (a
// reverse proxy, and a proxy_cache keyed on the request body) and the
// Portkey AI gateway (Node). Their configuration and pinned versions live
// beside this header: nginx.conf.in, package.json and package-lock.json
// (scripts/bench gateway installs nginx and `npm install`s Portkey into
// build/bench-node).
#pragma once

#include <fcntl.h>       // open
#include <signal.h>      // kill, SIGTERM, SIGKILL
#include <sys/prctl.h>   // prctl(PR_SET_PDEATHSIG): no peer outlives a crashed bench
#include <sys/wait.h>    // waitpid
#include <unistd.h>      // fork, execve, dup2, sysconf, geteuid

#include <chrono>        // std::chrono
#include <cstdlib>       // std::getenv, mkdtemp
#include <filesystem>    // std::filesystem
#include <fstream>       // std::ifstream, std::ofstream
#include <optional>      // std::optional: a peer that could not start
#include <sstream>       // std::ostringstream
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <thread>        // std::this_thread::sleep_for
#include <vector>        // std::vector

#include <boost/asio/connect.hpp>   // probing a port
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

extern char** environ;

namespace llmgate_bench::peers {

namespace fs = std::filesystem;

// A loopback port nothing listens on now (the kernel's choice; a peer
// binds it a moment later).
inline unsigned short free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

inline bool accepts_connections(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code error;
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, error);
  return !error;
}

// The path of `program` on PATH (or in /usr/sbin, where Debian puts nginx
// and a user's PATH may not look); empty when there is none.
inline std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::exists(program) ? program : "";
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/local/sbin";
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    const fs::path candidate = fs::path(path.substr(start, end - start)) / program;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

// A directory of its own under $TMPDIR (or /tmp), removed with everything
// in it at the end.
class temporary_directory {
 public:
  explicit temporary_directory(const std::string& name) {
    std::string pattern = (fs::path(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") / (name + ".XXXXXX"));
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory like " + pattern);
    path_ = pattern;
  }
  ~temporary_directory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A program run as a child of the bench, its stdout and stderr in `log`;
// stopped (SIGTERM, then SIGKILL after 5 s) when this is destroyed, and
// killed by the kernel if the bench dies first.
class child_process {
 public:
  child_process(std::vector<std::string> argv, const fs::path& directory, const fs::path& log,
                std::vector<std::string> extra_environment = {})
      : log_(log) {
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    std::vector<std::string> environment_text = std::move(extra_environment);
    for (char** variable = environ; *variable; ++variable) environment_text.emplace_back(*variable);
    std::vector<char*> environment;
    for (auto& variable : environment_text) environment.push_back(variable.data());
    environment.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {  // only async-signal-safe calls from here to execve
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out >= 0) {
        ::dup2(out, 1);
        ::dup2(out, 2);
        ::close(out);
      }
      if (::chdir(directory.c_str()) != 0) ::_exit(127);
      ::execve(args[0], args.data(), environment.data());
      ::_exit(127);
    }
  }
  ~child_process() { stop(); }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  bool running() {
    if (pid_ <= 0) return false;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
    return pid_ > 0;
  }
  void stop() {
    if (!running()) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 500 && running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // The last lines of what it wrote, to say why it did not start.
  std::string log_tail(std::size_t bytes = 2000) const {
    std::ifstream in(log_);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    return all.size() > bytes ? all.substr(all.size() - bytes) : all;
  }
  // Waits until it accepts connections on every one of `ports`.
  bool wait_listening(const std::vector<unsigned short>& ports, double seconds = 30) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (!running()) return false;
      bool all = true;
      for (const unsigned short port : ports) all = all && accepts_connections(port);
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // Seconds of processor time this process and its children (nginx's
  // workers) have used so far, from /proc (in clock ticks, 10 ms): what the
  // peer costs the machine beside the bench's own process.
  double cpu_seconds() const {
    if (pid_ <= 0) return 0;
    long ticks = 0;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string text;
      std::getline(stat, text);
      const std::size_t close = text.rfind(')');  // the command name may hold spaces
      if (close == std::string::npos) continue;
      std::istringstream fields(text.substr(close + 2));
      std::string state;
      long ppid = 0, skip = 0, utime = 0, stime = 0;
      fields >> state >> ppid;
      for (int field = 5; field <= 13; ++field) fields >> skip;
      fields >> utime >> stime;
      if (std::stol(name) == pid_ || ppid == pid_) ticks += utime + stime;
    }
    return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

 private:
  pid_t pid_ = -1;
  fs::path log_;
};

inline std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void replace_all(std::string& text, const std::string& name, const std::string& value) {
  for (std::size_t at; (at = text.find(name)) != std::string::npos;) text.replace(at, name.size(), value);
}

// nginx from `binary` with the configuration of `config_template`
// (nginx.conf.in) for an upstream on `upstream_port`: `workers` worker
// processes, a proxy on proxy_port() and a proxy_cache on cache_port(), its
// files (configuration, cache, temporary bodies, error log) in a directory
// of its own.
class nginx {
 public:
  nginx(const std::string& binary, const fs::path& config_template, unsigned short upstream_port, unsigned workers)
      : directory_("llmgate-bench-nginx"), proxy_port_(free_port()), cache_port_(free_port()) {
    std::string config = read_text(config_template);
    // Started as root, nginx would run its workers as nobody, who cannot
    // write the cache into a directory of root's.
    replace_all(config, "@USER@", ::geteuid() == 0 ? "user root;" : "");
    replace_all(config, "@WORKERS@", std::to_string(workers));
    replace_all(config, "@PREFIX@", directory_.path().string());
    replace_all(config, "@UPSTREAM_PORT@", std::to_string(upstream_port));
    replace_all(config, "@PROXY_PORT@", std::to_string(proxy_port_));
    replace_all(config, "@CACHE_PORT@", std::to_string(cache_port_));
    std::ofstream(directory_.path() / "nginx.conf") << config;
    const std::string prefix = directory_.path().string() + "/";
    process_.emplace(std::vector<std::string>{binary, "-p", prefix, "-c", prefix + "nginx.conf", "-e",
                                              prefix + "error.log"},
                     directory_.path(), directory_.path() / "nginx.out");
    if (!process_->wait_listening({proxy_port_, cache_port_}))
      throw std::runtime_error("nginx did not start: " + process_->log_tail() + read_error_log());
  }
  unsigned short proxy_port() const { return proxy_port_; }
  unsigned short cache_port() const { return cache_port_; }
  double cpu_seconds() const { return process_->cpu_seconds(); }
  pid_t pid() const { return process_->pid(); }
  std::string read_error_log() const {
    std::error_code ignored;
    return fs::exists(directory_.path() / "error.log", ignored) ? read_text(directory_.path() / "error.log") : "";
  }

 private:
  temporary_directory directory_;
  unsigned short proxy_port_, cache_port_;
  std::optional<child_process> process_;
};

// The Portkey AI gateway: `node <start_server> --port=N --headless` from
// its npm package (bench/peers/package.json pins the version), with
// NODE_ENV=production as its docs advise for a server (no UI, no log
// stream). It routes a request by its headers: request_headers() gives the
// ones that send it to the upstream on `upstream_port` as an OpenAI
// provider at a custom host.
class portkey {
 public:
  portkey(const std::string& node, const fs::path& start_server, unsigned short upstream_port)
      : directory_("llmgate-bench-portkey"), port_(free_port()), upstream_port_(upstream_port) {
    if (!fs::exists(start_server)) throw std::runtime_error("no " + start_server.string());
    process_.emplace(std::vector<std::string>{node, start_server.string(), "--port=" + std::to_string(port_),
                                              "--headless"},
                     start_server.parent_path(), directory_.path() / "portkey.out",
                     std::vector<std::string>{"NODE_ENV=production"});
    if (!process_->wait_listening({port_})) throw std::runtime_error("Portkey did not start: " + process_->log_tail());
  }
  unsigned short port() const { return port_; }
  double cpu_seconds() const { return process_->cpu_seconds(); }
  pid_t pid() const { return process_->pid(); }
  std::string request_headers() const {
    return "x-portkey-provider: openai\r\nx-portkey-custom-host: http://127.0.0.1:" + std::to_string(upstream_port_) +
           "/v1\r\n";
  }
  std::string log_tail() const { return process_->log_tail(); }

 private:
  temporary_directory directory_;
  unsigned short port_, upstream_port_;
  std::optional<child_process> process_;
};

}  // namespace llmgate_bench::peers
