// async_mutex: a lock that coroutines on any executor, on any thread, wait
// for without blocking a thread (their handlers' executors convert to
// any_io_executor, as a coroutine's do): the llama.cpp backend's per-slot lock,
// shared by the gateway's workers (each on an io_context of its own).
// Waiters are served in arrival order; each resumes on its own executor.
// A wait is not cancellable: it ends when the lock is handed over, and a
// cancelled caller then meets its cancellation at its next operation
// (its guard unlocks).
#pragma once

#include <deque>    // std::deque
#include <mutex>    // std::mutex, std::scoped_lock
#include <utility>  // std::move, std::exchange

#include <boost/asio/any_completion_handler.hpp>  // a waiter's handler, type-erased
#include <boost/asio/any_io_executor.hpp>         // a waiter's executor
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
          waiter next{boost::asio::any_io_executor(boost::asio::get_associated_executor(handler)),
                      std::move(handler)};
          {
            std::scoped_lock guard(mutex_);
            if (locked_) {
              waiters_.push_back(std::move(next));
              return;
            }
            locked_ = true;
          }
          resume(std::move(next));
        },
        token);
  }

  /// Hands the lock to the longest waiter, or frees it. Any thread.
  void unlock() {
    waiter next;
    {
      std::scoped_lock guard(mutex_);
      if (waiters_.empty()) {
        locked_ = false;
        return;
      }
      next = std::move(waiters_.front());
      waiters_.pop_front();
    }
    resume(std::move(next));
  }

 private:
  struct waiter {
    boost::asio::any_io_executor executor;  ///< where it resumes
    boost::asio::any_completion_handler<void()> handler;
  };

  static void resume(waiter next) {
    boost::asio::post(next.executor, [handler = std::move(next.handler)]() mutable { std::move(handler)(); });
  }

  std::mutex mutex_;
  bool locked_ = false;
  std::deque<waiter> waiters_;
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
