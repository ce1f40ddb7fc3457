// tfidf: TF-IDF cosine similarity between two texts, with the IDF fitted on
// a collection (in an evaluation: every answer of the run, the reference's
// included), computed as scikit-learn's TfidfVectorizer does by default:
//   - terms: score_tokens() (llmgate's tokenizer, case-folded), not
//     scikit-learn's regular expression, which drops one-letter words;
//   - tf: the raw count of the term in the text;
//   - idf: smooth, ln((1 + N) / (1 + df)) + 1, N documents in the
//     collection, df of them holding the term;
//   - each vector scaled to unit L2 length, so the cosine is a dot product.
// A term the collection never saw has no idf and is left out of the vector
// (scikit-learn's transform ignores it too).
#pragma once

#include <algorithm>    // std::min, std::sort, std::unique
#include <cmath>        // std::log, std::sqrt
#include <cstddef>      // std::size_t
#include <functional>   // std::less
#include <map>          // std::map
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include "llmgate/eval/score/score_tokens.hpp"  // score_tokens

namespace llmgate::inline v0 {

/// A text's TF-IDF vector: (term id, weight) pairs sorted by term id, of unit
/// length (or empty when none of its terms is in the vocabulary).
struct tfidf_vector {
  std::vector<std::pair<std::size_t, double>> terms;
};

/// Dot product of two unit vectors: their cosine, in [0, 1] (weights are
/// never negative; rounding past 1 is cut); 0 when either is empty.
inline double cosine(const tfidf_vector& a, const tfidf_vector& b) noexcept {
  double sum = 0;
  auto i = a.terms.begin();
  auto j = b.terms.begin();
  while (i != a.terms.end() && j != b.terms.end()) {
    if (i->first < j->first) {
      ++i;
    } else if (j->first < i->first) {
      ++j;
    } else {
      sum += i->second * j->second;
      ++i;
      ++j;
    }
  }
  return std::min(sum, 1.0);
}

/// The vocabulary and IDF of a collection; immutable once fitted, so it may
/// be read from many threads.
class tfidf_model {
 public:
  /// Fits the IDF on `collection`: each string is one document (a text
  /// given twice counts twice, as it does for scikit-learn).
  explicit tfidf_model(std::span<const std::string> collection) : documents_(collection.size()) {
    std::vector<std::size_t> document_frequency;
    for (const auto& document : collection) {
      std::vector<std::size_t> seen;
      for (const auto& word : score_tokens(document)) {
        const auto [it, added] = ids_.try_emplace(word, ids_.size());
        if (added) document_frequency.push_back(0);
        seen.push_back(it->second);
      }
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      for (const auto id : seen) ++document_frequency[id];
    }
    idf_.reserve(document_frequency.size());
    const double n = static_cast<double>(documents_);
    for (const auto df : document_frequency) idf_.push_back(std::log((1 + n) / (1 + static_cast<double>(df))) + 1);
  }

  std::size_t documents() const noexcept { return documents_; }
  std::size_t vocabulary_size() const noexcept { return idf_.size(); }

  /// The smooth IDF of a (case-folded) term; 0 for a term outside the vocabulary.
  double idf(std::string_view term) const {
    const auto it = ids_.find(term);
    return it == ids_.end() ? 0 : idf_[it->second];
  }

  /// The unit TF-IDF vector of `text`.
  tfidf_vector vectorize(std::string_view text) const {
    tfidf_vector out;
    for (const auto& word : score_tokens(text)) {
      const auto it = ids_.find(word);
      if (it == ids_.end()) continue;
      out.terms.emplace_back(it->second, 0.0);
    }
    std::sort(out.terms.begin(), out.terms.end());
    // Raw counts: equal ids are adjacent now; fold each run into one term.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < out.terms.size();) {
      std::size_t end = i;
      while (end < out.terms.size() && out.terms[end].first == out.terms[i].first) ++end;
      out.terms[kept++] = {out.terms[i].first, static_cast<double>(end - i) * idf_[out.terms[i].first]};
      i = end;
    }
    out.terms.resize(kept);
    double squares = 0;
    for (const auto& [id, weight] : out.terms) squares += weight * weight;
    if (squares > 0) {
      const double length = std::sqrt(squares);
      for (auto& term : out.terms) term.second /= length;
    }
    return out;
  }

  /// The cosine of the two texts' TF-IDF vectors, in [0, 1].
  double similarity(std::string_view a, std::string_view b) const { return cosine(vectorize(a), vectorize(b)); }

 private:
  std::size_t documents_ = 0;
  std::map<std::string, std::size_t, std::less<>> ids_;  // term -> id, ids in order of first sight
  std::vector<double> idf_;                              // by id
};

}  // namespace llmgate::inline v0
