// listener: the gateway's threads and its listening socket. Each worker is
// a thread with an io_context of its own; connections are handed to the
// workers in turn, and a connection is served on the worker that accepted
// it from start to end (so a relayed request never changes threads, and
// what a worker owns, such as its upstream connection pool, needs no lock).
//
// It holds at most max_connections open, and at most
// max_connections_per_address from one client address: past either, a new
// connection is told 503 and closed at once, before anything of it is
// read. When the process is out of file descriptors (EMFILE, ENFILE) or
// memory for sockets, accepting pauses, 10 ms at first and twice as long
// after each failure in a row up to a second, rather than spinning on an
// error that the next try would meet again.
//
// stop() drains: no new connections, idle connections close, requests in
// flight get up to the drain time to finish, then every connection closes
// and the threads end.
#pragma once

#include <algorithm>    // std::max, std::min
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono
#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <map>          // std::map
#include <memory>       // std::shared_ptr, std::unique_ptr
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread, std::this_thread::sleep_for
#include <vector>       // std::vector

#include <sys/socket.h>  // ::send, MSG_DONTWAIT, MSG_NOSIGNAL: the 503 of a connection over the limits

#include <boost/asio/as_tuple.hpp>             // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>             // boost::asio::co_spawn
#include <boost/asio/detached.hpp>             // boost::asio::detached
#include <boost/asio/executor_work_guard.hpp>  // boost::asio::executor_work_guard
#include <boost/asio/io_context.hpp>           // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>               // boost::asio::ip::tcp
#include <boost/asio/post.hpp>                 // boost::asio::post
#include <boost/asio/steady_timer.hpp>         // boost::asio::steady_timer (accept's pause)
#include <boost/asio/use_awaitable.hpp>        // boost::asio::use_awaitable

#include "llmgate/server/http/session.hpp"  // session_base

namespace llmgate::inline v0 {

struct connection_limits {
  std::size_t max_connections = 10'000;
  std::size_t max_connections_per_address = 1'000;
};

class listener {
  using tcp = boost::asio::ip::tcp;

 public:
  /// Starts nothing yet: the workers' io_contexts exist, so that what a
  /// worker owns can be built on its executor before start().
  explicit listener(unsigned threads, connection_limits limits = {}) : limits_(limits) {
    for (unsigned i = 0; i < std::max(threads, 1u); ++i) workers_.push_back(std::make_unique<worker>());
    acceptor_.emplace(workers_.front()->io);
  }

  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() { stop(std::chrono::milliseconds(0)); }

  std::size_t workers() const noexcept { return workers_.size(); }
  boost::asio::io_context& io(std::size_t worker) noexcept { return workers_[worker]->io; }

  /// What serves an accepted connection: given the socket and its
  /// worker's number, a session (which it must remember() with the
  /// socket's remote address) and the coroutine that serves it (which must
  /// call forget(session) when it ends).
  using accept_handler = std::function<void(tcp::socket, std::size_t worker)>;

  /// Binds, listens and runs the workers. Throws
  /// boost::system::system_error when the address cannot be bound.
  void start(const std::string& address, unsigned short port, accept_handler on_accept) {
    on_accept_ = std::move(on_accept);
    const tcp::endpoint endpoint(boost::asio::ip::make_address(address), port);
    acceptor_->open(endpoint.protocol());
    acceptor_->set_option(tcp::acceptor::reuse_address(true));
    acceptor_->bind(endpoint);
    acceptor_->listen();
    boost::asio::co_spawn(acceptor_->get_executor(), accept_connections(), boost::asio::detached);
    for (auto& w : workers_) w->thread = std::thread([&io = w->io] { io.run(); });
  }

  bool running() const noexcept { return workers_.front()->thread.joinable(); }
  const std::atomic<bool>& stopping() const noexcept { return stopping_; }

  /// The port it listens on (the system's pick when asked for 0).
  unsigned short port() const { return acceptor_->local_endpoint().port(); }

  /// Keeps `s`, a connection from `address`, until forget(s): a drain
  /// closes it, and it counts against the connection limits.
  void remember(const std::shared_ptr<session_base>& s, const boost::asio::ip::address& address) {
    std::lock_guard lock(mutex_);
    if (sessions_.emplace(s, address).second) ++per_address_[address];
  }
  void forget(const std::shared_ptr<session_base>& s) {
    std::lock_guard lock(mutex_);
    const auto found = sessions_.find(s);
    if (found == sessions_.end()) return;
    if (const auto count = per_address_.find(found->second); count != per_address_.end() && --count->second == 0)
      per_address_.erase(count);
    sessions_.erase(found);
  }

  /// Drains and stops (see the top of this file). Idempotent; false when
  /// it was not running or another call stopped it.
  bool stop(std::chrono::milliseconds drain) {
    if (!running() || stopping_.exchange(true)) return false;
    boost::asio::post(acceptor_->get_executor(), [this] { acceptor_->close(); });
    close_sessions(/*busy_too=*/false);
    const auto deadline = std::chrono::steady_clock::now() + drain;
    while (open_sessions() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    close_sessions(/*busy_too=*/true);
    while (open_sessions() > 0 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto& w : workers_) w->io.stop();
    for (auto& w : workers_) w->thread.join();
    return true;
  }

 private:
  struct worker {
    boost::asio::io_context io{1};  // run by this worker's thread alone
    // Keeps run() going while the worker has no connection yet; stop() ends it.
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> running{io.get_executor()};
    std::thread thread;
  };

  // Hands the connections to the workers in turn.
  boost::asio::awaitable<void> accept_connections() {
    boost::asio::steady_timer pause(acceptor_->get_executor());
    auto pause_for = first_pause;
    for (std::size_t next = 0;; ++next) {
      const std::size_t w = next % workers_.size();
      auto [ec, socket] =
          co_await acceptor_->async_accept(workers_[w]->io, boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) {
        if (!acceptor_->is_open()) co_return;
        if (out_of_resources(ec)) {
          pause.expires_after(pause_for);
          co_await pause.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
          pause_for = std::min(pause_for * 2, longest_pause);
        }
        continue;  // e.g. a connection reset before it was accepted: the next accept may work
      }
      pause_for = first_pause;
      const auto address = socket.remote_endpoint(ec).address();
      if (ec || !admits(address)) {
        turn_away(socket);
        continue;
      }
      // Answers go out at once, not held back to coalesce with bytes that never come.
      socket.set_option(tcp::no_delay(true), ec);
      on_accept_(std::move(socket), w);
    }
  }

  static constexpr std::chrono::milliseconds first_pause{10};
  static constexpr std::chrono::milliseconds longest_pause{1000};

  static bool out_of_resources(const boost::system::error_code& ec) {
    return ec == boost::asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
           ec == boost::asio::error::no_buffer_space || ec == boost::asio::error::no_memory;
  }

  // Whether a connection from `address` stays within the limits.
  bool admits(const boost::asio::ip::address& address) {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= limits_.max_connections) return false;
    const auto count = per_address_.find(address);
    return count == per_address_.end() || count->second < limits_.max_connections_per_address;
  }

  // A 503 sent if the socket takes it now, then the close: nothing of the
  // connection is read, and nothing waits on it.
  template <class Socket>
  static void turn_away(Socket& socket) {
    static constexpr std::string_view body =
        R"({"error":{"message":"The gateway is at its limit of connections; retry shortly.","type":"rate_limit_error",)"
        R"("param":null,"code":"connection_limit"}})";
    static const std::string response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                        "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                                        std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
    [[maybe_unused]] const auto sent =
        ::send(socket.native_handle(), response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    socket.close(ignored);
  }

  std::size_t open_sessions() {
    std::lock_guard lock(mutex_);
    return sessions_.size();
  }

  void close_sessions(bool busy_too) {
    std::lock_guard lock(mutex_);
    for (const auto& [s, address] : sessions_) s->close(busy_too);
  }

  connection_limits limits_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::optional<tcp::acceptor> acceptor_;  // on the first worker's io_context
  accept_handler on_accept_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::shared_ptr<session_base>, boost::asio::ip::address> sessions_;  // to its client's address
  std::map<boost::asio::ip::address, std::size_t> per_address_;                // open connections from each
};

}  // namespace llmgate::inline v0
