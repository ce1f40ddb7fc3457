// write_queue: the writes a shared tier owes the store, bounded. Writers
// are the gateway's worker threads and the semantic cache's observer (which
// runs under the cache's lock), so a push never blocks on anything but this
// queue's own short lock and never fails: when the queue is full the oldest
// write is dropped and counted. The store is a cache; an old answer lost is
// a miss later, a worker kept waiting is a slow request now.
//
// One consumer (the tier's writer coroutine) takes batches to pipeline,
// then says they were sent or, when the store failed, gives them back to
// the front to try again; a batch given back counts against the bound
// again, oldest dropped first. A batch taken and not yet settled still
// counts in size(), so that "nothing queued" means "all sent".
#pragma once

#include <algorithm>  // std::min
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <deque>      // std::deque
#include <iterator>   // std::make_move_iterator
#include <mutex>      // std::mutex, std::lock_guard
#include <utility>    // std::move
#include <vector>     // std::vector

namespace llmgate::inline v0 {

template <class Write>
class write_queue {
 public:
  /// Holds at most `capacity` writes (at least one).
  explicit write_queue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  write_queue(const write_queue&) = delete;
  write_queue& operator=(const write_queue&) = delete;

  /// Appends `write`, dropping the oldest when full. Returns whether the
  /// queue was empty: only then may the consumer be waiting for a write,
  /// so only then need the caller wake it.
  bool push(Write write) {
    std::lock_guard lock(mutex_);
    const bool was_empty = writes_.empty();
    writes_.push_back(std::move(write));
    drop_beyond_capacity();
    return was_empty;
  }

  /// Takes up to `at_most` writes, oldest first; they count as taken
  /// until sent() or give_back() settles them.
  std::vector<Write> pop(std::size_t at_most) {
    std::lock_guard lock(mutex_);
    const std::size_t n = std::min(at_most, writes_.size());
    std::vector<Write> batch(std::make_move_iterator(writes_.begin()),
                             std::make_move_iterator(writes_.begin() + static_cast<std::ptrdiff_t>(n)));
    writes_.erase(writes_.begin(), writes_.begin() + static_cast<std::ptrdiff_t>(n));
    taken_ += n;
    return batch;
  }

  /// `count` taken writes reached the store.
  void sent(std::size_t count) {
    std::lock_guard lock(mutex_);
    taken_ -= std::min(count, taken_);
  }

  /// Puts taken writes that could not be sent back in front of the writes
  /// pushed since, as the oldest; what no longer fits is dropped.
  void give_back(std::vector<Write> batch) {
    std::lock_guard lock(mutex_);
    taken_ -= std::min(batch.size(), taken_);
    writes_.insert(writes_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    drop_beyond_capacity();
  }

  /// Writes owed to the store: waiting, or taken and not yet settled.
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return writes_.size() + taken_;
  }
  std::size_t capacity() const noexcept { return capacity_; }
  /// Writes dropped since the queue was made.
  std::uint64_t dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

 private:
  void drop_beyond_capacity() {
    while (writes_.size() > capacity_) {
      writes_.pop_front();
      ++dropped_;
    }
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Write> writes_;
  std::size_t taken_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace llmgate::inline v0
