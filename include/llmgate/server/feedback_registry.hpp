// feedback_registry: remembers, for the cached answers served lately, how
// to report them right or wrong, by the response id the client received
// (POST /v1/feedback {"id": ..., "correct": false}). Bounded: the oldest
// ids are forgotten first. Only the tenant that received an answer may
// judge it.
#pragma once

#include <cstddef>     // std::size_t
#include <deque>       // std::deque
#include <functional>  // std::function
#include <mutex>       // std::mutex, std::lock_guard
#include <string>      // std::string
#include <utility>     // std::move

#include <boost/unordered/unordered_flat_map.hpp>  // id -> how to report

namespace llmgate::inline v0 {

class feedback_registry {
 public:
  explicit feedback_registry(std::size_t capacity = 100'000) : capacity_(capacity) {}

  void remember(std::string id, std::string tenant, std::function<void(bool correct)> report) {
    std::lock_guard lock(mutex_);
    if (capacity_ == 0) return;
    if (order_.size() == capacity_) {
      reports_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(id);
    reports_[std::move(id)] = {std::move(tenant), std::move(report)};
  }

  enum class outcome { recorded, unknown_id };

  /// Reports the answer `id` right or wrong, once; unknown_id when it was
  /// never served to `tenant`, was judged already, or is forgotten.
  outcome judge(const std::string& id, const std::string& tenant, bool correct) {
    std::function<void(bool)> report;
    {
      std::lock_guard lock(mutex_);
      const auto found = reports_.find(id);
      if (found == reports_.end() || found->second.tenant != tenant) return outcome::unknown_id;
      report = std::move(found->second.report);
      reports_.erase(found);  // its id stays in order_ until it ages out: harmless
    }
    report(correct);  // outside the lock: it takes the cache's
    return outcome::recorded;
  }

 private:
  struct entry {
    std::string tenant;
    std::function<void(bool)> report;
  };

  const std::size_t capacity_;
  std::mutex mutex_;
  std::deque<std::string> order_;
  boost::unordered_flat_map<std::string, entry> reports_;
};

}  // namespace llmgate::inline v0
