// cross_validation: which fold each row is held out in, so that every row
// gets a prediction from a model that never saw it ("out of fold"). Those
// predictions are what calibration is fitted on and what a knob (the
// router's cost weight) is chosen on: honest figures without a held-out
// set, the training data used once each way.
#pragma once

#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <numeric>    // std::iota
#include <random>     // std::mt19937_64
#include <stdexcept>  // std::invalid_argument
#include <utility>    // std::swap
#include <vector>     // std::vector

namespace llmgate::inline v0 {

/// The fold (0 .. folds - 1) of each of `rows` rows: a seeded shuffle dealt
/// round-robin, so fold sizes differ by at most one and a sorted file does
/// not put one kind of row in one fold. Throws std::invalid_argument for
/// fewer than 2 folds.
inline std::vector<std::size_t> fold_assignment(std::size_t rows, std::size_t folds, std::uint64_t seed = 0) {
  if (folds < 2) throw std::invalid_argument("fold_assignment: cross-validation needs at least 2 folds");
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 random(seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random() % i]);  // Fisher-Yates
  std::vector<std::size_t> fold(rows);
  for (std::size_t k = 0; k < rows; ++k) fold[order[k]] = k % folds;
  return fold;
}

/// The rows in fold `f` (held out) or not in it (learned from).
inline std::vector<std::size_t> rows_of_fold(const std::vector<std::size_t>& fold, std::size_t f, bool held_out) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < fold.size(); ++r)
    if ((fold[r] == f) == held_out) rows.push_back(r);
  return rows;
}

}  // namespace llmgate::inline v0
