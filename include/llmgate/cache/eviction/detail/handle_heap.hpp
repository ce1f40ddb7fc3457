// handle_heap: a binary min-heap of entry handles that also knows where each
// handle sits, so that changing one entry's priority or removing it is
// O(log n) instead of a linear search. LFU and cost-aware eviction order
// their entries in it.
#pragma once

#include <cstddef>   // std::size_t
#include <cstdint>   // std::uint32_t
#include <optional>  // std::optional
#include <utility>   // std::move
#include <vector>    // std::vector

#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0::detail {

/// Priority: any totally ordered type; the smallest priority is on top.
template <class Priority>
class handle_heap {
 public:
  bool contains(entry_handle handle) const noexcept {
    return handle < position_.size() && position_[handle] != absent;
  }

  std::optional<entry_handle> top() const noexcept {
    if (heap_.empty()) return std::nullopt;
    return heap_.front();
  }

  /// The priority of a handle the heap holds.
  const Priority& priority(entry_handle handle) const noexcept { return priority_[handle]; }

  /// Adds a handle the heap does not hold.
  void push(entry_handle handle, Priority priority) {
    if (handle >= position_.size()) {
      position_.resize(std::size_t{handle} + 1, absent);
      priority_.resize(std::size_t{handle} + 1);
    }
    priority_[handle] = std::move(priority);
    position_[handle] = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(handle);
    sift_up(heap_.size() - 1);
  }

  /// Gives a handle the heap holds a new priority.
  void update(entry_handle handle, Priority priority) {
    priority_[handle] = std::move(priority);
    sift_up(position_[handle]);
    sift_down(position_[handle]);
  }

  /// Removes a handle; does nothing when the heap does not hold it.
  void erase(entry_handle handle) {
    if (!contains(handle)) return;
    const std::size_t at = position_[handle];
    const entry_handle moved = heap_.back();  // fills the hole, then finds its level
    heap_.pop_back();
    position_[handle] = absent;
    if (moved == handle) return;
    place(at, moved);
    sift_up(at);
    sift_down(position_[moved]);
  }

  void clear() noexcept {
    heap_.clear();
    position_.clear();
    priority_.clear();
  }

 private:
  static constexpr std::uint32_t absent = static_cast<std::uint32_t>(-1);

  bool before(std::size_t a, std::size_t b) const {
    return priority_[heap_[a]] < priority_[heap_[b]];
  }

  void place(std::size_t at, entry_handle handle) noexcept {
    heap_[at] = handle;
    position_[handle] = static_cast<std::uint32_t>(at);
  }

  void swap_places(std::size_t a, std::size_t b) noexcept {
    const entry_handle first = heap_[a];
    place(a, heap_[b]);
    place(b, first);
  }

  void sift_up(std::size_t at) {
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (!before(at, parent)) return;
      swap_places(at, parent);
      at = parent;
    }
  }

  void sift_down(std::size_t at) {
    for (;;) {
      const std::size_t left = 2 * at + 1;
      if (left >= heap_.size()) return;
      const std::size_t right = left + 1;
      const std::size_t smaller = right < heap_.size() && before(right, left) ? right : left;
      if (!before(smaller, at)) return;
      swap_places(at, smaller);
      at = smaller;
    }
  }

  std::vector<entry_handle> heap_;        // the heap itself, smallest priority first
  std::vector<std::uint32_t> position_;   // by handle: where it sits in heap_, or absent
  std::vector<Priority> priority_;        // by handle
};

}  // namespace llmgate::inline v0::detail
