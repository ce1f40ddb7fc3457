// bleu: sentence BLEU (Papineni et al., 2002) of an answer against one or
// more references, as NLTK's sentence_bleu computes it with
// SmoothingFunction().method1 (Chen and Cherry, 2014):
//   - modified n-gram precision p_n for n = 1..4: each n-gram of the
//     hypothesis counts at most as often as it occurs in the reference
//     that holds it most (clipped counts), over the hypothesis's n-grams
//     (at least 1, for a hypothesis shorter than n);
//   - smoothing: a p_n with no match at all becomes epsilon / its
//     denominator (epsilon 0.1), so one order without a match lowers the
//     score instead of zeroing it, which a short answer would suffer
//     from at sentence level;
//   - no unigram match at all: 0;
//   - brevity penalty: 1 when the hypothesis is longer than the reference
//     closest in length (the shorter one on a tie), else exp(1 - r / c),
//     and 0 for an empty hypothesis;
//   - BLEU = BP * exp(sum of w_n ln p_n), uniform weights 1/4.
// Texts are split by score_tokens() (case-folded), so "The" and "the" match.
#pragma once

#include <algorithm>    // std::lexicographical_compare, std::max, std::min
#include <cmath>        // std::exp, std::log
#include <cstddef>      // std::size_t
#include <cstdlib>      // std::abs
#include <map>          // std::map
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/eval/score/score_tokens.hpp"  // score_tokens

namespace llmgate::inline v0 {

struct bleu_options {
  /// Weight of the n-gram precision of order i + 1; uniform over 1..4 by default.
  std::vector<double> weights = {0.25, 0.25, 0.25, 0.25};
  /// Method 1's count given to an order without any match.
  double epsilon = 0.1;
};

namespace detail {

// An n-gram is a view of the words it spans, ordered word by word.
struct ngram_less {
  bool operator()(std::span<const std::string> a, std::span<const std::string> b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
};

using ngram_counts = std::map<std::span<const std::string>, std::size_t, ngram_less>;

inline ngram_counts count_ngrams(std::span<const std::string> words, std::size_t n) {
  ngram_counts counts;
  for (std::size_t i = 0; i + n <= words.size(); ++i) ++counts[words.subspan(i, n)];
  return counts;
}

}  // namespace detail

/// Clipped matches and the hypothesis's n-gram count (at least 1) of order n.
struct ngram_precision {
  std::size_t matches = 0;
  std::size_t total = 1;
};

inline ngram_precision modified_precision(std::span<const std::vector<std::string>> references,
                                          std::span<const std::string> hypothesis, std::size_t n) {
  const auto counts = detail::count_ngrams(hypothesis, n);
  std::vector<detail::ngram_counts> reference_counts;
  reference_counts.reserve(references.size());
  for (const auto& reference : references) reference_counts.push_back(detail::count_ngrams(reference, n));
  ngram_precision out;
  std::size_t total = 0;
  for (const auto& [ngram, count] : counts) {
    std::size_t most = 0;
    for (const auto& in_reference : reference_counts)
      if (const auto it = in_reference.find(ngram); it != in_reference.end()) most = std::max(most, it->second);
    out.matches += std::min(count, most);
    total += count;
  }
  out.total = std::max<std::size_t>(total, 1);
  return out;
}

/// Sentence BLEU of tokenised texts, in [0, 1]. `references` must not be empty.
inline double sentence_bleu(std::span<const std::vector<std::string>> references,
                            std::span<const std::string> hypothesis, const bleu_options& options = {}) {
  if (references.empty() || hypothesis.empty() || options.weights.empty()) return 0;
  double log_sum = 0;
  for (std::size_t i = 0; i < options.weights.size(); ++i) {
    const auto p = modified_precision(references, hypothesis, i + 1);
    if (i == 0 && p.matches == 0) return 0;
    const double numerator = p.matches == 0 ? options.epsilon : static_cast<double>(p.matches);
    log_sum += options.weights[i] * std::log(numerator / static_cast<double>(p.total));
  }
  // The reference closest in length, the shorter on a tie.
  const auto c = static_cast<long long>(hypothesis.size());
  long long r = static_cast<long long>(references.front().size());
  for (const auto& reference : references) {
    const auto length = static_cast<long long>(reference.size());
    if (std::abs(length - c) < std::abs(r - c) || (std::abs(length - c) == std::abs(r - c) && length < r)) r = length;
  }
  const double brevity = c > r ? 1.0 : std::exp(1.0 - static_cast<double>(r) / static_cast<double>(c));
  return brevity * std::exp(log_sum);
}

/// Sentence BLEU of `hypothesis` against one reference text, both split by score_tokens().
inline double sentence_bleu(std::string_view reference, std::string_view hypothesis, const bleu_options& options = {}) {
  const std::vector<std::vector<std::string>> references{score_tokens(reference)};
  return sentence_bleu(references, score_tokens(hypothesis), options);
}

}  // namespace llmgate::inline v0
