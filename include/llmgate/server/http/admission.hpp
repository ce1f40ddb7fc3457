// admission_gate: at most N requests are worked on at once, at most Q more
// wait their turn in arrival order, and the rest are turned away at once
// (the gateway answers them 429 with Retry-After) rather than piling up
// until every client times out.
#pragma once

#include <chrono>   // std::chrono::steady_clock
#include <cstddef>  // std::size_t
#include <deque>    // std::deque
#include <memory>   // std::shared_ptr, std::make_shared
#include <mutex>    // std::mutex, std::lock_guard
#include <utility>  // std::exchange, std::move

#include <boost/asio/as_tuple.hpp>       // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/post.hpp>           // boost::asio::post
#include <boost/asio/steady_timer.hpp>   // boost::asio::steady_timer
#include <boost/asio/this_coro.hpp>      // boost::asio::this_coro::executor
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable

namespace llmgate::inline v0 {

class admission_gate {
 public:
  admission_gate(std::size_t max_active, std::size_t max_queued) : max_active_(max_active), max_queued_(max_queued) {}

  /// A place among the active requests, given back when destroyed.
  class ticket {
   public:
    explicit ticket(admission_gate* gate) noexcept : gate_(gate) {}
    ticket(ticket&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    ticket& operator=(ticket&&) = delete;
    ~ticket() {
      if (gate_) gate_->leave();
    }
    explicit operator bool() const noexcept { return gate_ != nullptr; }
    void swap(ticket& other) noexcept { std::swap(gate_, other.gate_); }

   private:
    admission_gate* gate_;
  };

  /// A ticket when a place is free now, else an empty one (the caller may
  /// then wait with enter()). Not a coroutine: the common case, a free
  /// place, costs no coroutine frame.
  ticket try_enter() {
    std::lock_guard lock(mutex_);
    if (active_ >= max_active_) return ticket(nullptr);
    ++active_;
    return ticket(this);
  }

  /// A ticket at once, or after waiting at most `patience` in the queue;
  /// an empty ticket when the queue is full or the wait ran out.
  boost::asio::awaitable<ticket> enter(std::chrono::steady_clock::duration patience) {
    const auto executor = co_await boost::asio::this_coro::executor;  // does not suspend
    std::shared_ptr<waiter> me;
    {
      std::lock_guard lock(mutex_);
      if (active_ < max_active_) {
        ++active_;
        co_return ticket(this);
      }
      if (queue_.size() >= max_queued_) co_return ticket(nullptr);
      me = std::make_shared<waiter>(executor);
      me->timer.expires_after(patience);
      queue_.push_back(me);
    }
    co_await me->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    std::lock_guard lock(mutex_);
    if (me->granted) co_return ticket(this);  // leave() handed its place over
    std::erase(queue_, me);
    co_return ticket(nullptr);
  }

  std::size_t active() const {
    std::lock_guard lock(mutex_);
    return active_;
  }
  std::size_t queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

 private:
  struct waiter {
    explicit waiter(boost::asio::any_io_executor executor) : timer(std::move(executor)) {}
    boost::asio::steady_timer timer;
    bool granted = false;  // under the gate's mutex
  };

  // The place passes to the longest waiter, or is freed.
  void leave() {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) {
      --active_;
      return;
    }
    auto next = std::move(queue_.front());
    queue_.pop_front();
    next->granted = true;
    // Woken on its own executor: a timer is not safe to touch from another thread.
    boost::asio::post(next->timer.get_executor(), [next] { next->timer.cancel(); });
  }

  const std::size_t max_active_;
  const std::size_t max_queued_;
  mutable std::mutex mutex_;
  std::size_t active_ = 0;
  std::deque<std::shared_ptr<waiter>> queue_;
};

}  // namespace llmgate::inline v0
