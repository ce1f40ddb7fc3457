// top_k: keeps the k closest of a stream of (id, distance) pairs in a
// bounded max-heap, as every exact scan needs.
#pragma once

#include <algorithm>  // std::push_heap, std::pop_heap, std::sort
#include <cstddef>    // std::size_t
#include <limits>     // std::numeric_limits
#include <vector>     // std::vector

#include "llmgate/index/metric.hpp"
#include "llmgate/index/vector_index.hpp"

namespace llmgate::inline v0 {

class top_k {
 public:
  explicit top_k(std::size_t k) : k_(k) { heap_.reserve(k); }

  /// Whether a candidate at `distance` would enter; lets callers skip work.
  bool admits(float distance) const noexcept {
    return heap_.size() < k_ || distance < heap_.front().distance;
  }

  void push(vector_id id, float distance) {
    if (!admits(distance)) return;
    if (heap_.size() == k_) {
      std::pop_heap(heap_.begin(), heap_.end(), farther_first);
      heap_.pop_back();
    }
    heap_.push_back({id, distance, 0.0f});
    std::push_heap(heap_.begin(), heap_.end(), farther_first);
  }

  /// The kept pairs, closest first, ties by id, with the metric's similarity.
  template <Metric M>
  std::vector<search_hit> sorted_hits() && {
    std::sort(heap_.begin(), heap_.end(), farther_first);
    for (auto& hit : heap_) hit.similarity = M::similarity(hit.distance);
    return std::move(heap_);
  }

 private:
  // Orders hits so that the farthest (then the largest id) is "greatest".
  static bool farther_first(const search_hit& a, const search_hit& b) noexcept {
    return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
  }

  std::size_t k_;
  std::vector<search_hit> heap_;
};

}  // namespace llmgate::inline v0
