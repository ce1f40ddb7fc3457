// fair_shared_mutex: a reader-writer lock under which a waiting writer is
// not starved by a steady stream of readers. glibc's rwlock, behind
// std::shared_mutex, lets new readers in while a writer waits, so an index
// under constant search load could never add. Here a writer first takes a
// turnstile that every new reader must pass, then waits only for the
// readers already inside.
#pragma once

#include <mutex>         // std::mutex, std::lock_guard
#include <shared_mutex>  // std::shared_mutex

#include "llmgate/version.hpp"

namespace llmgate::inline v0::detail {

class fair_shared_mutex {
 public:
  void lock() {
    turnstile_.lock();
    shared_.lock();
  }
  void unlock() {
    shared_.unlock();
    turnstile_.unlock();
  }
  void lock_shared() {
    std::lock_guard pass(turnstile_);
    shared_.lock_shared();
  }
  void unlock_shared() { shared_.unlock_shared(); }

 private:
  std::mutex turnstile_;
  std::shared_mutex shared_;
};

}  // namespace llmgate::inline v0::detail
