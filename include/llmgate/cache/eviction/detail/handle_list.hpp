// handle_list: a doubly linked list threaded through arrays indexed by
// entry handle, so that appending, unlinking and moving an entry to the back
// are O(1) without a node allocation per entry. LRU keeps recency in it, TTL
// keeps deadlines in it (with one lifetime for all, deadline order is the
// order of the last insert or refresh).
#pragma once

#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <vector>    // std::vector

#include "llmgate/cache/eviction/eviction_policy.hpp"

namespace llmgate::inline v0::detail {

class handle_list {
 public:
  bool contains(entry_handle handle) const noexcept {
    return handle < links_.size() && links_[handle].linked;
  }

  /// The first (oldest) handle.
  std::optional<entry_handle> front() const noexcept {
    if (head_ == none) return std::nullopt;
    return head_;
  }

  /// Appends a handle the list does not hold.
  void push_back(entry_handle handle) {
    if (handle >= links_.size()) links_.resize(std::size_t{handle} + 1);
    links_[handle] = {tail_, none, true};
    if (tail_ == none) {
      head_ = handle;
    } else {
      links_[tail_].next = handle;
    }
    tail_ = handle;
  }

  /// Unlinks a handle; does nothing when the list does not hold it.
  void erase(entry_handle handle) noexcept {
    if (!contains(handle)) return;
    auto& link = links_[handle];
    (link.prev == none ? head_ : links_[link.prev].next) = link.next;
    (link.next == none ? tail_ : links_[link.next].prev) = link.prev;
    link = {};
  }

  void move_to_back(entry_handle handle) {
    if (handle == tail_) return;
    erase(handle);
    push_back(handle);
  }

  void clear() noexcept {
    links_.clear();
    head_ = tail_ = none;
  }

 private:
  static constexpr entry_handle none = static_cast<entry_handle>(-1);

  struct link {
    entry_handle prev = none;
    entry_handle next = none;
    bool linked = false;
  };

  std::vector<link> links_;  // by handle
  entry_handle head_ = none;
  entry_handle tail_ = none;
};

}  // namespace llmgate::inline v0::detail
