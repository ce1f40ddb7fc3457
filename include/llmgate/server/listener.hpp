// listener: the gateway's threads and its listening socket. Each worker is
// a thread with an io_context of its own; connections are handed to the
// workers in turn, and a connection is served on the worker that accepted
// it from start to end (so a relayed request never changes threads, and
// what a worker owns, such as its upstream connection pool, needs no lock).
//
// stop() drains: no new connections, idle connections close, requests in
// flight get up to the drain time to finish, then every connection closes
// and the threads end.
#pragma once

#include <algorithm>    // std::max
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono
#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <memory>       // std::shared_ptr, std::unique_ptr
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <set>          // std::set
#include <string>       // std::string
#include <thread>       // std::thread, std::this_thread::sleep_for
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>             // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>             // boost::asio::co_spawn
#include <boost/asio/detached.hpp>             // boost::asio::detached
#include <boost/asio/executor_work_guard.hpp>  // boost::asio::executor_work_guard
#include <boost/asio/io_context.hpp>           // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>               // boost::asio::ip::tcp
#include <boost/asio/post.hpp>                 // boost::asio::post
#include <boost/asio/use_awaitable.hpp>        // boost::asio::use_awaitable

#include "llmgate/server/session.hpp"  // session_base

namespace llmgate::inline v0 {

class listener {
  using tcp = boost::asio::ip::tcp;

 public:
  /// Starts nothing yet: the workers' io_contexts exist, so that what a
  /// worker owns can be built on its executor before start().
  explicit listener(unsigned threads) {
    for (unsigned i = 0; i < std::max(threads, 1u); ++i) workers_.push_back(std::make_unique<worker>());
    acceptor_.emplace(workers_.front()->io);
  }

  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() { stop(std::chrono::milliseconds(0)); }

  std::size_t workers() const noexcept { return workers_.size(); }
  boost::asio::io_context& io(std::size_t worker) noexcept { return workers_[worker]->io; }

  /// What serves an accepted connection: given the socket and its
  /// worker's number, a session and the coroutine that serves it (which
  /// must call forget(session) when it ends).
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

  /// Keeps `s` until forget(s): a drain closes it.
  void remember(const std::shared_ptr<session_base>& s) {
    std::lock_guard lock(mutex_);
    sessions_.insert(s);
  }
  void forget(const std::shared_ptr<session_base>& s) {
    std::lock_guard lock(mutex_);
    sessions_.erase(s);
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
    for (std::size_t next = 0;; ++next) {
      const std::size_t w = next % workers_.size();
      auto [ec, socket] =
          co_await acceptor_->async_accept(workers_[w]->io, boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) {
        if (!acceptor_->is_open()) co_return;
        continue;  // e.g. too many open files: the next accept may work
      }
      // Answers go out at once, not held back to coalesce with bytes that never come.
      socket.set_option(tcp::no_delay(true), ec);
      on_accept_(std::move(socket), w);
    }
  }

  std::size_t open_sessions() {
    std::lock_guard lock(mutex_);
    return sessions_.size();
  }

  void close_sessions(bool busy_too) {
    std::lock_guard lock(mutex_);
    for (const auto& s : sessions_) s->close(busy_too);
  }

  std::vector<std::unique_ptr<worker>> workers_;
  std::optional<tcp::acceptor> acceptor_;  // on the first worker's io_context
  accept_handler on_accept_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::set<std::shared_ptr<session_base>> sessions_;
};

}  // namespace llmgate::inline v0
