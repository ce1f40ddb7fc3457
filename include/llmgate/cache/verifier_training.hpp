// Fitting a verifier_model on labelled question pairs, and measuring it.
//
//   auto pairs = read_labelled_pairs("pairs.dev.jsonl");      // tools/labelled_pairs.hpp
//   auto [fit, held_out] = split_pairs(pairs);                // no question in both parts
//   auto similarity = pair_similarity::observing(fit);        // the embedder as the cache has it
//   auto weights = fit_verifier(fit, similarity, {});         // IDF + model (best kind)
//   double auc = roc_auc(verifier_logits(weights, held_out, similarity), label_list(held_out));
//
// The split (split_pairs): a question asked twice in different words must
// not teach the model in one part and test it in the other, so questions
// are grouped into components, two questions being in one component when a
// pair joins them (directly or through others), a question being its
// normal form (normalize_text case-folded, letters and digits only: the
// replay's notion of "the same question"). A whole component goes to the
// fit part when the fixed hash (XXH3-64, seed 0) of its smallest normal
// form (byte order), read as a fraction of 2^64, falls under fit_share;
// else to the held-out part. A pair goes with its questions, in input
// order. The rule depends on the texts only, so the replay, the bench and
// the training tool draw the same split from the same file.
//
// Fitting (fit_verifier): the word IDF from the fit part's distinct texts,
// the features of every pair through pair_featurizer with the similarity
// the cache would see (pair_similarity), then
//   logistic  Newton's method on the L2-penalised log loss over the
//             standardised features (scaling folded into the weights);
//   trees     gradient boosting on the log loss (second-order leaves), trees
//             grown level by level to a fixed depth, splits found on
//             per-feature quantile histograms, rows subsampled per tree;
//   best      both fitted on the fit part less a validation slice (the same
//             component rule, salted with the seed), the one with the
//             higher validation AUC refitted on the whole fit part.
// Everything is deterministic given the options (the seed included).
//
// The pairs come from memory: tools/labelled_pairs.hpp reads them from a
// JSON-lines file (Boost.JSON), so that this header stays in the core.
#pragma once

#include <algorithm>      // std::sort, std::min, std::max, std::lower_bound
#include <chrono>         // std::chrono::steady_clock (fit time in the report)
#include <cmath>          // std::exp, std::log, std::sqrt, std::isnan
#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint8_t, std::uint32_t, std::uint64_t
#include <initializer_list>  // the two texts of a pair in one loop
#include <limits>         // std::numeric_limits
#include <memory>         // std::unique_ptr, std::make_unique
#include <numeric>        // std::iota
#include <random>         // std::mt19937_64
#include <span>           // std::span
#include <stdexcept>      // std::invalid_argument
#include <string>         // std::string, std::to_string
#include <string_view>    // std::string_view
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move, std::pair
#include <vector>         // std::vector

#include "llmgate/cache/pair_features.hpp"     // pair_featurizer, word_idf, prepared_text
#include "llmgate/cache/verifier_model.hpp"    // verifier_model, tree_split
#include "llmgate/cache/verifier_weights.hpp"  // verifier_weights
#include "llmgate/detail/xxhash.hpp"           // XXH3_64bits_withSeed
#include "llmgate/embed/hashing_embedder.hpp"  // hashing_embedder
#include "llmgate/embed/text.hpp"              // normalize_text
#include "llmgate/error.hpp"                   // llmgate::error, errc
#include "llmgate/learn/classifier_metrics.hpp"  // roc_auc
#include "llmgate/simd/kernels.hpp"            // simd::dot

namespace llmgate::inline v0 {

/// Two questions and whether they ask the same thing.
struct labelled_pair {
  std::string a, b;
  bool duplicate = false;
};

/// The pairs of a fit part and a held-out part (split_pairs).
struct pair_split {
  std::vector<labelled_pair> fit, held_out;
};

namespace detail {

// Whether each pair goes to the first part: the component rule of the file
// comment, with `salt` as the hash's seed (0 for split_pairs).
inline std::vector<bool> component_split(std::span<const labelled_pair> pairs, double first_share,
                                         std::uint64_t salt) {
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<const std::string*> forms;  // by id
  std::vector<std::uint32_t> parent;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ends(pairs.size());
  const auto id_of = [&](std::string_view text) {
    auto [at, added] = ids.try_emplace(normalize_text(text, {.case_fold = true, .letters_and_digits_only = true}),
                                       static_cast<std::uint32_t>(forms.size()));
    if (added) {
      forms.push_back(&at->first);  // unordered_map nodes do not move
      parent.push_back(at->second);
    }
    return at->second;
  };
  const auto root = [&](std::uint32_t id) {
    while (parent[id] != id) id = parent[id] = parent[parent[id]];
    return id;
  };
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    ends[i] = {id_of(pairs[i].a), id_of(pairs[i].b)};
    const auto x = root(ends[i].first), y = root(ends[i].second);
    if (x != y) parent[std::max(x, y)] = std::min(x, y);
  }
  std::vector<std::uint32_t> smallest(forms.size());  // by root: id of its smallest normal form
  std::iota(smallest.begin(), smallest.end(), 0u);
  for (std::uint32_t id = 0; id < forms.size(); ++id) {
    auto& s = smallest[root(id)];
    if (*forms[id] < *forms[s]) s = id;
  }
  std::vector<char> first(forms.size(), 2);  // by root; 2: not decided yet
  std::vector<bool> out(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto r = root(ends[i].first);
    if (first[r] == 2) {
      const auto& form = *forms[smallest[r]];
      const std::uint64_t h = XXH3_64bits_withSeed(form.data(), form.size(), salt);
      first[r] = static_cast<double>(h >> 11) * 0x1p-53 < first_share;
    }
    out[i] = first[r] == 1;
  }
  return out;
}

}  // namespace detail

/// The documented split (file comment): whole components of questions to
/// the fit part with probability fit_share, so no question is in both.
inline pair_split split_pairs(std::span<const labelled_pair> pairs, double fit_share = 0.5) {
  const auto to_fit = detail::component_split(pairs, fit_share, 0);
  pair_split split;
  for (std::size_t i = 0; i < pairs.size(); ++i) (to_fit[i] ? split.fit : split.held_out).push_back(pairs[i]);
  return split;
}

/// The similarity the semantic cache would see between two texts: the
/// cosine of their hashing_embedder vectors, the embedder having observed
/// each distinct fit text once and refreshed its IDF (as a cache does when
/// it stores those questions). Thread-safe; movable, not copyable.
class pair_similarity {
 public:
  /// An embedder with `options` that has observed the distinct texts of
  /// `pairs` (in order of first appearance) and refreshed.
  static pair_similarity observing(std::span<const labelled_pair> pairs, hashing_embedder_options options = {}) {
    pair_similarity similarity(std::move(options));
    std::unordered_map<std::string_view, bool> seen;
    for (const auto& pair : pairs)
      for (const std::string* text : {&pair.a, &pair.b})
        if (seen.try_emplace(*text, true).second) similarity.embedder_->observe(*text);
    similarity.embedder_->refresh();
    return similarity;
  }

  /// The cosine of the two texts' vectors.
  float operator()(std::string_view a, std::string_view b) const {
    thread_local std::vector<float> x, y;
    x.resize(embedder_->dimension());
    y.resize(embedder_->dimension());
    (void)embedder_->embed(a, x);  // the sizes match, the only error embed() reports
    (void)embedder_->embed(b, y);
    return simd::dot(x.data(), y.data(), x.size());
  }

  const hashing_embedder& embedder() const noexcept { return *embedder_; }

 private:
  explicit pair_similarity(hashing_embedder_options options)
      : embedder_(std::make_unique<hashing_embedder>(std::move(options))) {}

  std::unique_ptr<hashing_embedder> embedder_;
};

/// A feature matrix (row after row) with a label per row.
class labelled_features {
 public:
  labelled_features() = default;
  labelled_features(std::size_t feature_count, std::size_t rows)
      : feature_count_(feature_count), rows_(rows), values_(feature_count * rows), labels_(new bool[rows]()) {}

  std::size_t feature_count() const noexcept { return feature_count_; }
  std::size_t rows() const noexcept { return rows_; }
  std::span<float> row(std::size_t r) noexcept { return {values_.data() + r * feature_count_, feature_count_}; }
  std::span<const float> row(std::size_t r) const noexcept {
    return {values_.data() + r * feature_count_, feature_count_};
  }
  float value(std::size_t r, std::size_t feature) const noexcept { return values_[r * feature_count_ + feature]; }
  bool& label(std::size_t r) noexcept { return labels_[r]; }
  bool label(std::size_t r) const noexcept { return labels_[r]; }
  std::span<const bool> labels() const noexcept { return {labels_.get(), rows_}; }

  /// The rows listed, in that order.
  labelled_features subset(std::span<const std::size_t> picked) const {
    labelled_features out(feature_count_, picked.size());
    for (std::size_t i = 0; i < picked.size(); ++i) {
      const auto from = row(picked[i]);
      std::copy(from.begin(), from.end(), out.row(i).begin());
      out.labels_[i] = labels_[picked[i]];
    }
    return out;
  }

 private:
  std::size_t feature_count_ = 0, rows_ = 0;
  std::vector<float> values_;
  std::unique_ptr<bool[]> labels_;
};

/// The labels of `pairs`, as roc_auc takes them (a span of bool, which a
/// std::vector<bool> cannot give).
class label_list {
 public:
  explicit label_list(std::span<const labelled_pair> pairs) : size_(pairs.size()), labels_(new bool[pairs.size()]) {
    for (std::size_t i = 0; i < size_; ++i) labels_[i] = pairs[i].duplicate;
  }
  operator std::span<const bool>() const noexcept { return {labels_.get(), size_}; }

 private:
  std::size_t size_;
  std::unique_ptr<bool[]> labels_;
};

/// The features of every pair (a as the request, b as the stored one), each
/// distinct text prepared once.
template <class Similarity>
labelled_features pair_feature_rows(const pair_featurizer& featurizer, std::span<const labelled_pair> pairs,
                                    const Similarity& similarity) {
  std::unordered_map<std::string_view, prepared_text> prepared;
  const auto of = [&](const std::string& text) -> const prepared_text& {
    auto at = prepared.find(text);
    if (at == prepared.end()) at = prepared.emplace(text, featurizer.prepare(text)).first;
    return at->second;
  };
  labelled_features rows(pair_featurizer::feature_count, pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    featurizer.features(of(pairs[i].a), of(pairs[i].b), similarity(pairs[i].a, pairs[i].b),
                        std::span<float, pair_featurizer::feature_count>(rows.row(i).data(),
                                                                         pair_featurizer::feature_count));
    rows.label(i) = pairs[i].duplicate;
  }
  return rows;
}

/// Logistic regression's fitting.
struct logistic_options {
  double l2 = 1.0;                ///< penalty on the squared weights of standardised features (not the bias)
  std::size_t max_iterations = 50;
  double tolerance = 1e-7;        ///< stops when no weight moves more than this
};

/// Logistic regression on `data` (see the file comment).
inline verifier_model fit_logistic(const labelled_features& data, const logistic_options& options = {}) {
  const std::size_t n = data.rows(), f = data.feature_count(), p = f + 1;  // p: with the bias (last)
  std::vector<double> mean(f, 0.0), scale(f, 1.0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < f; ++j) mean[j] += data.value(r, j);
  for (auto& m : mean) m /= std::max<double>(1.0, static_cast<double>(n));
  std::vector<double> variance(f, 0.0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < f; ++j) variance[j] += (data.value(r, j) - mean[j]) * (data.value(r, j) - mean[j]);
  for (std::size_t j = 0; j < f; ++j) {
    const double sd = n ? std::sqrt(variance[j] / static_cast<double>(n)) : 0.0;
    scale[j] = sd > 1e-12 ? sd : 1.0;  // a constant feature gets weight 0 by the penalty
  }
  std::vector<double> z(p);
  const auto standardised = [&](std::size_t r) {
    for (std::size_t j = 0; j < f; ++j) z[j] = (data.value(r, j) - mean[j]) / scale[j];
    z[f] = 1.0;
  };
  const auto loss_at = [&](const std::vector<double>& beta) {
    double loss = 0;
    for (std::size_t r = 0; r < n; ++r) {
      standardised(r);
      double t = 0;
      for (std::size_t j = 0; j < p; ++j) t += beta[j] * z[j];
      const double m = data.label(r) ? -t : t;  // log(1 + e^m)
      loss += m > 0 ? m + std::log1p(std::exp(-m)) : std::log1p(std::exp(m));
    }
    for (std::size_t j = 0; j < f; ++j) loss += 0.5 * options.l2 * beta[j] * beta[j];
    return loss;
  };

  std::vector<double> beta(p, 0.0), gradient(p), hessian(p * p), step(p), trial(p);
  double loss = loss_at(beta);
  for (std::size_t iteration = 0; iteration < options.max_iterations; ++iteration) {
    std::fill(gradient.begin(), gradient.end(), 0.0);
    std::fill(hessian.begin(), hessian.end(), 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      standardised(r);
      double t = 0;
      for (std::size_t j = 0; j < p; ++j) t += beta[j] * z[j];
      const double probability = 1.0 / (1.0 + std::exp(-t));
      const double g = probability - (data.label(r) ? 1.0 : 0.0), h = probability * (1.0 - probability);
      for (std::size_t j = 0; j < p; ++j) {
        gradient[j] += g * z[j];
        for (std::size_t k = 0; k <= j; ++k) hessian[j * p + k] += h * z[j] * z[k];
      }
    }
    for (std::size_t j = 0; j < f; ++j) {
      gradient[j] += options.l2 * beta[j];
      hessian[j * p + j] += options.l2;
    }
    hessian[f * p + f] += 1e-9;  // keeps the bias's pivot positive on a one-class set
    // Cholesky of the lower triangle, then the two triangular solves.
    for (std::size_t j = 0; j < p; ++j) {
      double d = hessian[j * p + j];
      for (std::size_t k = 0; k < j; ++k) d -= hessian[j * p + k] * hessian[j * p + k];
      d = std::sqrt(std::max(d, 1e-12));
      hessian[j * p + j] = d;
      for (std::size_t i = j + 1; i < p; ++i) {
        double s = hessian[i * p + j];
        for (std::size_t k = 0; k < j; ++k) s -= hessian[i * p + k] * hessian[j * p + k];
        hessian[i * p + j] = s / d;
      }
    }
    for (std::size_t i = 0; i < p; ++i) {
      double s = gradient[i];
      for (std::size_t k = 0; k < i; ++k) s -= hessian[i * p + k] * step[k];
      step[i] = s / hessian[i * p + i];
    }
    for (std::size_t i = p; i-- > 0;) {
      double s = step[i];
      for (std::size_t k = i + 1; k < p; ++k) s -= hessian[k * p + i] * step[k];
      step[i] = s / hessian[i * p + i];
    }
    // Halves the step until the loss does not grow (Newton's full step can
    // overshoot far from the optimum).
    double scale_step = 1.0, trial_loss = loss;
    for (int halving = 0; halving < 30; ++halving, scale_step /= 2) {
      for (std::size_t j = 0; j < p; ++j) trial[j] = beta[j] - scale_step * step[j];
      trial_loss = loss_at(trial);
      if (trial_loss <= loss) break;
    }
    if (trial_loss > loss) break;
    double moved = 0;
    for (std::size_t j = 0; j < p; ++j) moved = std::max(moved, std::abs(trial[j] - beta[j]));
    beta = trial;
    loss = trial_loss;
    if (moved < options.tolerance) break;
  }

  std::vector<float> weights(f);
  double bias = beta[f];
  for (std::size_t j = 0; j < f; ++j) {
    weights[j] = static_cast<float>(beta[j] / scale[j]);
    bias -= beta[j] * mean[j] / scale[j];
  }
  return verifier_model::logistic(std::move(weights), static_cast<float>(bias));
}

/// The deepest trees fit_trees grows: a level's histograms take 2^level x
/// features x bins x 16 bytes (10: about 40 MiB for 40 features).
inline constexpr std::size_t max_fit_depth = 10;

/// The tree ensemble's fitting.
struct tree_options {
  // The defaults keep logit() to a few hundred nanoseconds at the AUC of
  // larger ensembles on QQP (scripts/bench verifier --trees N --depth D --rate R).
  std::size_t trees = 60;
  std::size_t depth = 6;            ///< 1 .. max_fit_depth
  double rate = 0.15;               ///< learning rate (shrinkage of each tree's leaves)
  double l2 = 1.0;                  ///< penalty on leaf values (the Hessian's added weight)
  double min_child_weight = 1.0;    ///< least Hessian sum on each side of a split
  std::size_t bins = 64;            ///< quantile bins per feature, 2 .. 256
  double subsample = 0.8;           ///< share of rows each tree sees
  std::uint64_t seed = 1;
};

namespace detail {

// Per feature, the thresholds a split may use: values at the quantiles of
// the feature, each once, below its largest value (a split there would
// leave one side empty).
inline std::vector<std::vector<float>> quantile_edges(const labelled_features& data, std::size_t bins) {
  std::vector<std::vector<float>> edges(data.feature_count());
  std::vector<float> column(data.rows());
  for (std::size_t j = 0; j < data.feature_count(); ++j) {
    column.clear();
    for (std::size_t r = 0; r < data.rows(); ++r)
      if (!std::isnan(data.value(r, j))) column.push_back(data.value(r, j));
    if (column.empty()) continue;
    std::sort(column.begin(), column.end());
    auto& e = edges[j];
    for (std::size_t k = 1; k < bins; ++k) {
      const float v = column[k * column.size() / bins];
      if (v < column.back() && (e.empty() || v > e.back())) e.push_back(v);
    }
    if (e.empty() && column.front() < column.back()) e.push_back(column.front());
  }
  return edges;
}

}  // namespace detail

/// A gradient-boosted tree ensemble on `data` (see the file comment).
/// Throws std::invalid_argument for a depth or bin count out of range.
inline verifier_model fit_trees(const labelled_features& data, const tree_options& options = {}) {
  if (options.depth == 0 || options.depth > max_fit_depth || options.bins < 2 || options.bins > 256)
    throw std::invalid_argument("fit_trees: depth must be 1 to 10 and bins 2 to 256");
  const std::size_t n = data.rows(), f = data.feature_count(), depth = options.depth;
  const std::size_t internal = (std::size_t{1} << depth) - 1, leaves = internal + 1;

  // Each value as its bin: the number of edges below it (NaN: bin 0, as
  // inference sends NaN left). "value > edges[b]" is then "bin > b".
  const auto edges = detail::quantile_edges(data, options.bins);
  std::vector<std::uint8_t> bin(n * f);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < f; ++j) {
      const float v = data.value(r, j);
      bin[r * f + j] = std::isnan(v) ? 0
          : static_cast<std::uint8_t>(std::lower_bound(edges[j].begin(), edges[j].end(), v) - edges[j].begin());
    }

  double positives = 0;
  for (std::size_t r = 0; r < n; ++r) positives += data.label(r);
  const double prior = (positives + 0.5) / (static_cast<double>(n) + 1.0);
  const float base = static_cast<float>(std::log(prior / (1.0 - prior)));

  std::vector<double> logit(n, base), g(n), h(n);
  std::vector<char> sampled(n);
  std::vector<std::uint32_t> node(n);
  std::vector<tree_split> splits;
  std::vector<float> leaf_values;
  splits.reserve(options.trees * internal);
  leaf_values.reserve(options.trees * leaves);
  std::vector<double> histogram;  // [node][feature][bin][g, h]
  std::vector<std::uint32_t> split_bin(internal);
  std::mt19937_64 random(options.seed);
  const double lambda = options.l2;
  const auto score = [lambda](double gs, double hs) { return gs * gs / (hs + lambda); };

  for (std::size_t t = 0; t < options.trees; ++t) {
    for (std::size_t r = 0; r < n; ++r) {
      const double probability = 1.0 / (1.0 + std::exp(-logit[r]));
      g[r] = probability - (data.label(r) ? 1.0 : 0.0);
      h[r] = std::max(probability * (1.0 - probability), 1e-16);
      sampled[r] = static_cast<double>(random() >> 11) * 0x1p-53 < options.subsample;
      node[r] = 0;
    }
    const std::size_t first_split = splits.size();
    splits.resize(first_split + internal);
    for (std::size_t level = 0; level < depth; ++level) {
      const std::size_t nodes = std::size_t{1} << level, offset = nodes - 1;
      histogram.assign(nodes * f * options.bins * 2, 0.0);
      for (std::size_t r = 0; r < n; ++r) {
        if (!sampled[r]) continue;
        double* at = histogram.data() + node[r] * f * options.bins * 2;
        const std::uint8_t* b = bin.data() + r * f;
        for (std::size_t j = 0; j < f; ++j) {
          at[(j * options.bins + b[j]) * 2] += g[r];
          at[(j * options.bins + b[j]) * 2 + 1] += h[r];
        }
      }
      for (std::size_t k = 0; k < nodes; ++k) {
        const double* at = histogram.data() + k * f * options.bins * 2;
        double total_g = 0, total_h = 0;
        for (std::size_t b = 0; b < options.bins; ++b) total_g += at[b * 2], total_h += at[b * 2 + 1];
        double best_gain = 0;
        tree_split best{};
        std::uint32_t best_bin = std::numeric_limits<std::uint32_t>::max();
        for (std::size_t j = 0; j < f; ++j) {
          double left_g = 0, left_h = 0;
          for (std::size_t b = 0; b < edges[j].size(); ++b) {
            left_g += at[(j * options.bins + b) * 2];
            left_h += at[(j * options.bins + b) * 2 + 1];
            const double right_g = total_g - left_g, right_h = total_h - left_h;
            if (left_h < options.min_child_weight || right_h < options.min_child_weight) continue;
            const double gain = score(left_g, left_h) + score(right_g, right_h) - score(total_g, total_h);
            if (gain > best_gain + 1e-12) {
              best_gain = gain;
              best = {static_cast<std::uint32_t>(j), edges[j][b]};
              best_bin = static_cast<std::uint32_t>(b);
            }
          }
        }
        splits[first_split + offset + k] = best;
        split_bin[offset + k] = best_bin;
      }
      for (std::size_t r = 0; r < n; ++r) {
        const std::size_t at = offset + node[r];
        const auto& s = splits[first_split + at];
        const bool right = split_bin[at] != std::numeric_limits<std::uint32_t>::max() &&
                           bin[r * f + s.feature] > split_bin[at];
        node[r] = static_cast<std::uint32_t>(2 * node[r] + right);
      }
    }
    std::vector<double> leaf_g(leaves, 0.0), leaf_h(leaves, 0.0);
    for (std::size_t r = 0; r < n; ++r)
      if (sampled[r]) leaf_g[node[r]] += g[r], leaf_h[node[r]] += h[r];
    for (std::size_t k = 0; k < leaves; ++k)
      leaf_values.push_back(static_cast<float>(-options.rate * leaf_g[k] / (leaf_h[k] + lambda)));
    const float* values = leaf_values.data() + leaf_values.size() - leaves;
    for (std::size_t r = 0; r < n; ++r) logit[r] += values[node[r]];
  }
  return verifier_model::trees(f, depth, base, std::move(splits), std::move(leaf_values));
}

/// Which model fit_verifier makes.
enum class verifier_fit_kind { logistic, trees, best };

struct verifier_fit_options {
  verifier_fit_kind kind = verifier_fit_kind::best;
  logistic_options logistic = {};
  tree_options trees = {};
  double validation_share = 0.2;  ///< best: the fit part's share (by components) that chooses the kind
  std::uint64_t seed = 1;         ///< the validation slice's salt (the trees have their own)
  std::string source;             ///< what the pairs are, for the weights' fitted_on line
};

/// What fit_verifier measured. The AUCs are on the validation slice and
/// NaN unless the kind was chosen (verifier_fit_kind::best).
struct verifier_fit_report {
  double auc_logistic = std::numeric_limits<double>::quiet_NaN();
  double auc_trees = std::numeric_limits<double>::quiet_NaN();
  verifier_model::kind chosen = verifier_model::kind::logistic;
  std::size_t pairs = 0;             ///< fitted on, in the end
  std::size_t validation_pairs = 0;  ///< of those, the slice that chose the kind
  double seconds = 0;                ///< the whole fit, features included
};

/// Fits the IDF and a model on `pairs` (see the file comment).
template <class Similarity>
verifier_weights fit_verifier(std::span<const labelled_pair> pairs, const Similarity& similarity,
                              const verifier_fit_options& options, verifier_fit_report* report = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> texts;
  {
    std::unordered_map<std::string_view, bool> seen;
    for (const auto& pair : pairs)
      for (const std::string* text : {&pair.a, &pair.b})
        if (seen.try_emplace(*text, true).second) texts.push_back(*text);
  }
  verifier_weights weights;
  weights.idf = word_idf::fit(texts);
  const pair_featurizer featurizer(weights.idf);
  const auto rows = pair_feature_rows(featurizer, pairs, similarity);

  verifier_fit_report measured;
  measured.pairs = pairs.size();
  auto kind = options.kind;
  if (kind == verifier_fit_kind::best) {
    const auto to_train = detail::component_split(pairs, 1.0 - options.validation_share, options.seed);
    std::vector<std::size_t> train, validation;
    for (std::size_t i = 0; i < pairs.size(); ++i) (to_train[i] ? train : validation).push_back(i);
    const auto train_rows = rows.subset(train), validation_rows = rows.subset(validation);
    const auto auc_of = [&](const verifier_model& model) {
      std::vector<float> logits(validation_rows.rows());
      for (std::size_t r = 0; r < logits.size(); ++r) logits[r] = model.logit(validation_rows.row(r));
      return roc_auc(logits, validation_rows.labels());
    };
    measured.validation_pairs = validation.size();
    measured.auc_logistic = auc_of(fit_logistic(train_rows, options.logistic));
    measured.auc_trees = auc_of(fit_trees(train_rows, options.trees));
    // Ties, and a slice too small to tell (NaN), go to the cheaper logistic.
    kind = measured.auc_trees > measured.auc_logistic ? verifier_fit_kind::trees : verifier_fit_kind::logistic;
  }
  std::string description;
  if (kind == verifier_fit_kind::trees) {
    weights.model = fit_trees(rows, options.trees);
    description = "trees (" + std::to_string(options.trees.trees) + " of depth " +
                  std::to_string(options.trees.depth) + ")";
  } else {
    weights.model = fit_logistic(rows, options.logistic);
    description = "logistic";
  }
  measured.chosen = weights.model.model_kind();
  weights.fitted_on = (options.source.empty() ? std::string() : options.source + ": ") + std::to_string(pairs.size()) +
                      " labelled pairs, " + description + ", pair feature set " +
                      std::to_string(pair_featurizer::feature_set_version);
  measured.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report) *report = measured;
  return weights;
}

/// The logit of each pair (a as the request, b as the stored one) under
/// `weights`, with the features as the cache would compute them.
template <class Similarity>
std::vector<float> verifier_logits(const verifier_weights& weights, std::span<const labelled_pair> pairs,
                                   const Similarity& similarity) {
  const pair_featurizer featurizer(weights.idf);
  const auto rows = pair_feature_rows(featurizer, pairs, similarity);
  std::vector<float> logits(rows.rows());
  for (std::size_t r = 0; r < logits.size(); ++r) logits[r] = weights.model.logit(rows.row(r));
  return logits;
}

/// The similarity of each pair alone, the baseline a verifier must beat.
template <class Similarity>
std::vector<float> similarities(std::span<const labelled_pair> pairs, const Similarity& similarity) {
  std::vector<float> out(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) out[i] = similarity(pairs[i].a, pairs[i].b);
  return out;
}

}  // namespace llmgate::inline v0
