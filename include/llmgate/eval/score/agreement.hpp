// agreement: how alike two rankings of the same candidates are, for
// comparing an automatic scoring method with people's ratings. A ranking
// is a map candidate -> score, higher is better; only the candidates both
// maps hold are compared.
//   - spearman(): Spearman's rank correlation, the Pearson correlation of
//     the two lists of ranks, tied scores taking the mean of the ranks they
//     span (scipy.stats.spearmanr's definition; the 1 - 6 sum d^2 / (n (n^2 - 1))
//     shortcut is exact only without ties).
//   - bottom_k_jaccard(): the Jaccard index of the k worst candidates of
//     each ranking: whether a method finds the models people would drop.
#pragma once

#include <algorithm>  // std::min, std::sort
#include <cmath>      // std::sqrt
#include <cstddef>    // std::size_t
#include <limits>     // std::numeric_limits
#include <map>        // std::map
#include <set>        // std::set
#include <string>     // std::string
#include <utility>    // std::pair
#include <vector>     // std::vector

namespace llmgate::inline v0 {

/// A ranking: candidate -> score, higher is better.
using candidate_scores = std::map<std::string, double>;

/// The 1-based rank of each value in ascending order, tied values sharing
/// the mean of the ranks they span ({10, 20, 20, 30} -> {1, 2.5, 2.5, 4}).
inline std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t end = i;
    while (end < order.size() && values[order[end]] == values[order[i]]) ++end;
    const double mean = static_cast<double>(i + 1 + end) / 2;  // of ranks i + 1 .. end
    for (std::size_t j = i; j < end; ++j) ranks[order[j]] = mean;
    i = end;
  }
  return ranks;
}

/// Spearman's rank correlation of `a` and `b` over the candidates both
/// hold, in [-1, 1]. NaN where it is undefined: fewer than two candidates
/// in common, or every one of them tied in either ranking.
inline double spearman(const candidate_scores& a, const candidate_scores& b) {
  std::vector<double> x, y;
  for (const auto& [candidate, score] : a)
    if (const auto it = b.find(candidate); it != b.end()) {
      x.push_back(score);
      y.push_back(it->second);
    }
  const auto rx = average_ranks(x);
  const auto ry = average_ranks(y);
  const double n = static_cast<double>(rx.size());
  const double mean = (n + 1) / 2;  // of ranks 1..n, ties or not
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (rx.size() < 2 || sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

/// The k lowest-scored candidates of a ranking among `among`. Candidates
/// tied with the k-th lowest are all in (the set may then hold more than
/// k), so the result never depends on candidates' names.
inline std::set<std::string> bottom_k(const candidate_scores& ranking, const std::set<std::string>& among,
                                      std::size_t k) {
  std::vector<std::pair<double, std::string>> scored;
  for (const auto& [candidate, score] : ranking)
    if (among.contains(candidate)) scored.emplace_back(score, candidate);
  std::sort(scored.begin(), scored.end());
  std::set<std::string> out;
  if (k == 0 || scored.empty()) return out;
  const double cut = scored[std::min(k, scored.size()) - 1].first;
  for (const auto& [score, candidate] : scored)
    if (score <= cut) out.insert(candidate);
  return out;
}

/// |bottom-k of a ∩ bottom-k of b| / |their union|, over the candidates
/// both rankings hold, in [0, 1]. NaN where it is undefined: k is 0 or no
/// candidate is in both.
inline double bottom_k_jaccard(const candidate_scores& a, const candidate_scores& b, std::size_t k) {
  std::set<std::string> common;
  for (const auto& [candidate, score] : a)
    if (b.contains(candidate)) common.insert(candidate);
  const auto worst_a = bottom_k(a, common, k);
  const auto worst_b = bottom_k(b, common, k);
  std::size_t both = 0;
  for (const auto& candidate : worst_a) both += worst_b.contains(candidate) ? 1 : 0;
  const std::size_t either = worst_a.size() + worst_b.size() - both;
  if (either == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(both) / static_cast<double>(either);
}

}  // namespace llmgate::inline v0
