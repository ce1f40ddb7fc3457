// feedback_registry: remembers, for the cached answers served lately, how
// to report them right or wrong, by the number in the response id the
// client received (POST /v1/feedback {"id": ..., "correct": false}).
// Bounded: answers are numbered in the order they are served, and a ring
// of `capacity` slots indexed by number forgets the oldest first, with no
// allocation per answer beyond what the report itself holds. Only the
// tenant that received an answer may judge it.
#pragma once

#include <algorithm>   // std::min, std::max
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint64_t
#include <functional>  // std::function
#include <mutex>       // std::mutex, std::lock_guard
#include <string>      // std::string
#include <utility>     // std::move
#include <vector>      // std::vector

namespace llmgate::inline v0 {

class feedback_registry {
 public:
  explicit feedback_registry(std::size_t capacity = 100'000) : capacity_(capacity) {}

  /// Remembers how to report answer `number` (numbers start at 1 and grow;
  /// one `capacity` below the newest remembered is forgotten).
  void remember(std::uint64_t number, std::string tenant, std::function<void(bool correct)> report) {
    if (capacity_ == 0 || number == 0) return;
    std::lock_guard lock(mutex_);
    const std::size_t index = number % capacity_;
    if (index >= slots_.size()) slots_.resize(std::min(capacity_, std::max(index + 1, 2 * slots_.size())));
    entry& slot = slots_[index];
    if (slot.number > number) return;  // a newer answer has the slot: this one is as good as forgotten
    slot = {number, std::move(tenant), std::move(report)};
  }

  enum class outcome { recorded, unknown_id };

  /// Reports answer `number` right or wrong, once; unknown_id when it was
  /// never served to `tenant`, was judged already, or is forgotten.
  outcome judge(std::uint64_t number, const std::string& tenant, bool correct) {
    std::function<void(bool)> report;
    {
      std::lock_guard lock(mutex_);
      const std::size_t index = capacity_ == 0 ? 0 : number % capacity_;
      if (number == 0 || index >= slots_.size()) return outcome::unknown_id;
      entry& slot = slots_[index];
      if (slot.number != number || !slot.report || slot.tenant != tenant) return outcome::unknown_id;
      report = std::move(slot.report);
      slot.report = nullptr;
    }
    report(correct);  // outside the lock: it takes the cache's
    return outcome::recorded;
  }

 private:
  struct entry {
    std::uint64_t number = 0;  // 0: never used
    std::string tenant;
    std::function<void(bool)> report;
  };

  const std::size_t capacity_;
  std::mutex mutex_;
  std::vector<entry> slots_;  // grows to capacity_ as numbers come
};

}  // namespace llmgate::inline v0
