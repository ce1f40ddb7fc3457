// classifier_metrics: how good a classifier's scores are on labelled rows.
//   roc_auc      ranking: the chance that a random positive scores above a
//                random negative (ties count half);
//   brier_score  calibration and sharpness together: the mean squared gap
//                between a predicted probability and the outcome (0..1);
//                against the Brier score of always predicting the base
//                rate, it says what the features bring.
#pragma once

#include <algorithm>  // std::sort
#include <cstddef>    // std::size_t
#include <limits>     // std::numeric_limits
#include <numeric>    // std::iota
#include <span>       // std::span
#include <vector>     // std::vector

namespace llmgate::inline v0 {

/// The chance that a random positive scores above a random negative, ties
/// counting half (the Mann-Whitney U over average ranks). NaN when the
/// labels are all one class or the sizes differ.
inline double roc_auc(std::span<const float> scores, std::span<const bool> labels) {
  if (scores.size() != labels.size()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return scores[x] < scores[y]; });
  double positive_rank_sum = 0, positives = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double average_rank = static_cast<double>(i + 1 + j) / 2.0;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (labels[order[k]]) positive_rank_sum += average_rank, positives += 1;
    i = j;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

/// The mean of (probability - outcome)^2; outcomes may be fractional
/// (a score of 0.5 is half right). NaN when the sizes differ or are 0.
inline double brier_score(std::span<const float> probabilities, std::span<const float> outcomes) {
  if (probabilities.size() != outcomes.size() || probabilities.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    const double gap = static_cast<double>(probabilities[i]) - static_cast<double>(outcomes[i]);
    sum += gap * gap;
  }
  return sum / static_cast<double>(probabilities.size());
}

/// The Brier score of predicting the outcomes' own mean for every row: what
/// a predictor that knows only the base rate scores. NaN when empty.
inline double base_rate_brier_score(std::span<const float> outcomes) {
  if (outcomes.empty()) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0;
  for (const float o : outcomes) mean += o;
  mean /= static_cast<double>(outcomes.size());
  double sum = 0;
  for (const float o : outcomes) sum += (o - mean) * (o - mean);
  return sum / static_cast<double>(outcomes.size());
}

}  // namespace llmgate::inline v0
