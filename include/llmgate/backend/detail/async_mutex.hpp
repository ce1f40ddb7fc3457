// async_mutex: a lock that coroutines on any executor, on any thread, wait
// for without blocking a thread: the llama.cpp backend's per-slot lock,
// shared by the gateway's workers (each on an io_context of its own).
// Waiters are served in arrival order; each resumes on its own executor.
// A wait is not cancellable: it ends when the lock is handed over, and a
// cancelled caller then meets its cancellation at its next operation
// (its guard unlocks).
#pragma once

#include <deque>    // std::deque
#include <memory>   // std::unique_ptr, std::make_unique
#include <mutex>    // std::mutex, std::scoped_lock
#include <utility>  // std::move, std::exchange

#include <boost/asio/associated_executor.hpp>     // the executor a waiter resumes on
#include <boost/asio/async_result.hpp>            // async_initiate
#include <boost/asio/post.hpp>                    // post

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

class async_mutex {
 public:
  async_mutex() = default;
  async_mutex(const async_mutex&) = delete;
  async_mutex& operator=(const async_mutex&) = delete;

  /// Completes (with no value) once the caller holds the lock.
  template <class CompletionToken>
  auto async_lock(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void()>(
        [this](auto handler) {
          auto next = std::make_unique<waiting<decltype(handler)>>(std::move(handler));
          {
            std::scoped_lock guard(mutex_);
            if (locked_) {
              waiters_.push_back(std::move(next));
              return;
            }
            locked_ = true;
          }
          next->resume();
        },
        token);
  }

  /// Hands the lock to the longest waiter, or frees it. Any thread.
  void unlock() {
    std::unique_ptr<waiter> next;
    {
      std::scoped_lock guard(mutex_);
      if (waiters_.empty()) {
        locked_ = false;
        return;
      }
      next = std::move(waiters_.front());
      waiters_.pop_front();
    }
    next->resume();
  }

 private:
  // A waiter's handler, type-erased (Boost 1.81's any_completion_handler
  // recurses without end when one is copied from an lvalue).
  struct waiter {
    virtual ~waiter() = default;
    virtual void resume() = 0;  ///< posts the handler to its own executor
  };

  template <class Handler>
  struct waiting final : waiter {
    explicit waiting(Handler h) : handler(std::move(h)) {}
    void resume() override {
      const auto executor = boost::asio::get_associated_executor(handler);
      boost::asio::post(executor, std::move(handler));
    }
    Handler handler;
  };

  std::mutex mutex_;
  bool locked_ = false;
  std::deque<std::unique_ptr<waiter>> waiters_;
};

/// Holds an async_mutex until it is destroyed (or released).
class async_lock_guard {
 public:
  async_lock_guard() = default;
  explicit async_lock_guard(async_mutex& mutex) noexcept : mutex_(&mutex) {}
  async_lock_guard(async_lock_guard&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
  async_lock_guard& operator=(async_lock_guard&& other) noexcept {
    if (this != &other) {
      release();
      mutex_ = std::exchange(other.mutex_, nullptr);
    }
    return *this;
  }
  ~async_lock_guard() { release(); }

  void release() noexcept {
    if (auto* mutex = std::exchange(mutex_, nullptr)) mutex->unlock();
  }

 private:
  async_mutex* mutex_ = nullptr;
};

}  // namespace llmgate::inline v0::detail
