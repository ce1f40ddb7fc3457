// verifier_model: what turns the features of a (request, stored request)
// pair into the logit of "the stored answer serves the request".
//
// Two kinds, both fitted by cache/verifier_training.hpp:
//   logistic  logit = bias + sum of weight_i * feature_i; the training
//             standardises the features and folds the scaling into the
//             weights, so nothing is scaled at inference;
//   trees     a gradient-boosted ensemble of depth-limited binary trees:
//             logit = base + sum over trees of the leaf the features reach.
//
// The trees are stored flat and complete: a tree of depth d is 2^d - 1
// splits in breadth-first order (node i's children are 2i+1 and 2i+2) and
// 2^d leaves. A node the training did not split holds the threshold +inf,
// so every pair goes left (its right side is never reached). Inference is
// then d loads and compares per tree, without branches on the data, and
// the trees of an ensemble are independent so the processor overlaps them.
// `scripts/bench verifier` measures logit() with the features before it.
//
// A feature is compared as "feature > threshold goes right"; NaN goes left.
#pragma once

#include <cmath>        // std::isfinite, std::isnan
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint32_t
#include <limits>       // std::numeric_limits
#include <span>         // std::span
#include <stdexcept>    // std::invalid_argument
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/store/snapshot_file.hpp"  // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

/// One tree node's test: features[feature] > threshold goes right.
struct tree_split {
  std::uint32_t feature = 0;
  float threshold = std::numeric_limits<float>::infinity();  ///< +inf: not split, all go left

  friend bool operator==(const tree_split&, const tree_split&) = default;
};

/// Logistic regression or a small gradient-boosted tree ensemble over pair
/// features. A default-constructed model is logistic over no features with
/// logit 0 (probability one half).
class verifier_model {
 public:
  enum class kind : std::uint8_t { logistic = 0, trees = 1 };

  /// Deepest tree load_from accepts (2^16 leaves per tree).
  static constexpr std::size_t max_depth = 16;

  verifier_model() = default;

  /// logit = bias + dot(weights, features), over weights.size() features.
  /// Throws std::invalid_argument for a weight or bias that is not finite.
  static verifier_model logistic(std::vector<float> weights, float bias) {
    verifier_model model;
    model.kind_ = kind::logistic;
    model.feature_count_ = weights.size();
    model.weights_ = std::move(weights);
    model.bias_ = bias;
    if (!model.valid()) throw std::invalid_argument("verifier_model::logistic: weights and bias must be finite");
    return model;
  }

  /// logit = base + the leaf each tree reaches. `splits` holds 2^depth - 1
  /// splits per tree and `leaves` 2^depth values per tree, tree after tree
  /// (layout in the file comment). Throws std::invalid_argument when the
  /// sizes disagree, a split names a feature at or past feature_count, or
  /// a value is not finite (thresholds may be +inf).
  static verifier_model trees(std::size_t feature_count, std::size_t depth, float base,
                              std::vector<tree_split> splits, std::vector<float> leaves) {
    verifier_model model;
    model.kind_ = kind::trees;
    model.feature_count_ = feature_count;
    model.depth_ = depth;
    model.bias_ = base;
    model.splits_ = std::move(splits);
    model.weights_ = std::move(leaves);
    if (!model.valid()) throw std::invalid_argument("verifier_model::trees: inconsistent trees");
    return model;
  }

  kind model_kind() const noexcept { return kind_; }
  std::size_t feature_count() const noexcept { return feature_count_; }

  /// Logistic: the weights. Trees: the leaves, tree after tree.
  std::span<const float> weights() const noexcept { return weights_; }
  /// Logistic: the bias. Trees: the base logit.
  float bias() const noexcept { return bias_; }
  std::span<const tree_split> splits() const noexcept { return splits_; }
  std::size_t depth() const noexcept { return depth_; }
  std::size_t tree_count() const noexcept { return depth_ == 0 ? 0 : weights_.size() >> depth_; }

  /// The logit of `features` (feature_count() values; fewer read as 0,
  /// more are ignored, so a caller's mistake cannot read out of bounds).
  float logit(std::span<const float> features) const noexcept {
    if (features.size() < feature_count_) [[unlikely]]
      return logit_of([&](std::size_t i) { return i < features.size() ? features[i] : 0.0f; });
    const float* x = features.data();
    return logit_of([x](std::size_t i) { return x[i]; });
  }

  /// 1 / (1 + e^-logit).
  float probability(std::span<const float> features) const noexcept {
    return 1.0f / (1.0f + std::exp(-logit(features)));
  }

  void save_to(store::snapshot_writer& out) const {
    out.write(static_cast<std::uint8_t>(kind_));
    out.write(static_cast<std::uint32_t>(feature_count_));
    out.write(bias_);
    if (kind_ == kind::trees) {
      out.write(static_cast<std::uint32_t>(depth_));
      out.write(static_cast<std::uint64_t>(tree_count()));
      for (const auto& s : splits_) {
        out.write(s.feature);
        out.write(s.threshold);
      }
    }
    out.write(static_cast<std::uint64_t>(weights_.size()));
    out.write_array(std::span<const float>(weights_));
  }

  /// Reads what save_to wrote; marks `in` corrupt (and returns a default
  /// model) when the content cannot be a model.
  static verifier_model load_from(store::snapshot_reader& in) {
    verifier_model model;
    const auto kind_byte = in.read<std::uint8_t>();
    model.feature_count_ = in.read<std::uint32_t>();
    model.bias_ = in.read<float>();
    if (kind_byte > static_cast<std::uint8_t>(kind::trees)) return corrupt(in);
    model.kind_ = static_cast<kind>(kind_byte);
    if (model.kind_ == kind::trees) {
      model.depth_ = in.read<std::uint32_t>();
      const auto trees = in.read<std::uint64_t>();
      if (model.depth_ == 0 || model.depth_ > max_depth) return corrupt(in);
      const std::uint64_t splits = trees * ((std::uint64_t{1} << model.depth_) - 1);
      if (trees > in.remaining() || splits > in.remaining() / 8) return corrupt(in);
      model.splits_.resize(static_cast<std::size_t>(splits));
      for (auto& s : model.splits_) {
        s.feature = in.read<std::uint32_t>();
        s.threshold = in.read<float>();
      }
    }
    const auto count = in.read<std::uint64_t>();
    if (count > in.remaining() / sizeof(float)) return corrupt(in);
    model.weights_.resize(static_cast<std::size_t>(count));
    in.read_array(std::span<float>(model.weights_));
    if (!model.valid()) return corrupt(in);
    return model;
  }

  /// Same kind, sizes and values, bit for bit.
  friend bool operator==(const verifier_model&, const verifier_model&) = default;

 private:
  static verifier_model corrupt(store::snapshot_reader& in) {
    in.mark_corrupt();
    return {};
  }

  bool valid() const noexcept {
    if (!std::isfinite(bias_)) return false;
    for (const float w : weights_)
      if (!std::isfinite(w)) return false;
    if (kind_ == kind::logistic) return depth_ == 0 && splits_.empty() && weights_.size() == feature_count_;
    if (depth_ == 0 || depth_ > max_depth) return false;
    const std::size_t trees = weights_.size() >> depth_;
    if (weights_.size() != trees << depth_ || splits_.size() != trees * ((std::size_t{1} << depth_) - 1))
      return false;
    for (const auto& s : splits_)
      if (s.feature >= feature_count_ || std::isnan(s.threshold) || s.threshold == -std::numeric_limits<float>::infinity())
        return false;
    return true;
  }

  template <class Feature>
  float logit_of(Feature feature) const noexcept {
    float sum = bias_;
    if (kind_ == kind::logistic) {
      for (std::size_t i = 0; i < feature_count_; ++i) sum += weights_[i] * feature(i);
      return sum;
    }
    switch (depth_) {  // a depth known at compile time unrolls the walk into registers
      case 1: return sum + leaves_reached<1>(feature);
      case 2: return sum + leaves_reached<2>(feature);
      case 3: return sum + leaves_reached<3>(feature);
      case 4: return sum + leaves_reached<4>(feature);
      case 5: return sum + leaves_reached<5>(feature);
      case 6: return sum + leaves_reached<6>(feature);
      case 7: return sum + leaves_reached<7>(feature);
      case 8: return sum + leaves_reached<8>(feature);
      default: return sum + leaves_reached<0>(feature);
    }
  }

  // The sum of the leaves the features reach, Depth being depth_ (or 0:
  // read depth_ at run time).
  template <std::size_t Depth, class Feature>
  float leaves_reached(Feature feature) const noexcept {
    const std::size_t depth = Depth ? Depth : depth_;
    const std::size_t internal = (std::size_t{1} << depth) - 1, trees = tree_count();
    const tree_split* split = splits_.data();
    const float* leaf = weights_.data();
    float sum = 0;
    // A tree is a chain of dependent loads; walking `lanes` trees in step
    // gives the processor that many independent chains to overlap.
    constexpr std::size_t lanes = 8;
    std::size_t t = 0;
    for (; t + lanes <= trees; t += lanes) {
      std::size_t node[lanes] = {};
      for (std::size_t level = 0; level < depth; ++level)
        for (std::size_t k = 0; k < lanes; ++k) {
          const tree_split& s = split[k * internal + node[k]];
          node[k] = 2 * node[k] + 1 + static_cast<std::size_t>(feature(s.feature) > s.threshold);
        }
      for (std::size_t k = 0; k < lanes; ++k) sum += leaf[k * (internal + 1) + node[k] - internal];
      split += lanes * internal;
      leaf += lanes * (internal + 1);
    }
    for (; t < trees; ++t) {
      std::size_t node = 0;
      for (std::size_t level = 0; level < depth; ++level)
        node = 2 * node + 1 + static_cast<std::size_t>(feature(split[node].feature) > split[node].threshold);
      sum += leaf[node - internal];
      split += internal;
      leaf += internal + 1;
    }
    return sum;
  }

  kind kind_ = kind::logistic;
  std::size_t feature_count_ = 0;
  std::size_t depth_ = 0;              // trees only
  float bias_ = 0;                     // logistic: bias; trees: base
  std::vector<float> weights_;         // logistic: weights; trees: leaves
  std::vector<tree_split> splits_;     // trees only
};

}  // namespace llmgate::inline v0
