// logistic_regression: P(outcome | features) = sigmoid(bias + w . x) over
// feature rows (learn/feature_row.hpp), for many features and few rows:
// the router's per-model predictors read a hashed text vector of a few
// hundred dimensions. (The cache's verifier, a few dozen dense features,
// is fitted by Newton's method in cache/verifier_training.hpp.)
//
// Fitting minimises the mean log loss plus l2 / 2 * |w|^2 by stochastic
// gradient descent with AdaGrad's per-feature step sizes, a fixed number
// of passes over the rows in an order drawn from the seed: deterministic
// given the rows and the options. Outcomes may be fractional (a score of
// 0.5 counts as half right, as the log loss allows). The features should
// share a scale (a unit-length text vector, 0/1 indicators): nothing is
// standardised.
#pragma once

#include <cmath>      // std::exp, std::sqrt, std::isfinite
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <numeric>    // std::iota
#include <random>     // std::mt19937_64
#include <span>       // std::span
#include <stdexcept>  // std::invalid_argument
#include <utility>    // std::move, std::swap
#include <vector>     // std::vector

#include "llmgate/learn/feature_row.hpp"

namespace llmgate::inline v0 {

struct logistic_regression_options {
  double l2 = 1e-3;            ///< penalty on the squared weights (not the bias), per row's mean loss
  std::size_t passes = 20;     ///< over all rows
  double learning_rate = 0.5;  ///< AdaGrad's base step
  std::uint64_t seed = 0;      ///< the order of the rows in each pass
};

inline double sigmoid(double logit) noexcept { return 1.0 / (1.0 + std::exp(-logit)); }

class logistic_regression {
 public:
  /// Over no features: logit 0 for every row.
  logistic_regression() = default;

  /// Throws std::invalid_argument for a weight or bias that is not finite.
  logistic_regression(std::vector<float> weights, float bias) : weights_(std::move(weights)), bias_(bias) {
    bool finite = std::isfinite(bias_);
    for (const float w : weights_) finite = finite && std::isfinite(w);
    if (!finite) throw std::invalid_argument("logistic_regression: weights and bias must be finite");
  }

  /// Fits on `rows` with `outcomes` in 0..1 (see the file comment); every
  /// index of every row below `dimension`. Throws std::invalid_argument
  /// when the sizes differ or an index is out of range.
  static logistic_regression fit(std::span<const feature_row> rows, std::span<const float> outcomes,
                                 std::size_t dimension, const logistic_regression_options& options = {}) {
    std::vector<std::size_t> all(rows.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    return fit(rows, outcomes, all, dimension, options);
  }

  /// Fits on the rows listed in `picked` (in that order) alone, so that
  /// cross-validation fits on its folds without copying rows.
  static logistic_regression fit(std::span<const feature_row> rows, std::span<const float> outcomes,
                                 std::span<const std::size_t> picked, std::size_t dimension,
                                 const logistic_regression_options& options = {}) {
    if (rows.size() != outcomes.size())
      throw std::invalid_argument("logistic_regression::fit: one outcome per row is needed");
    for (const auto r : picked) {
      if (r >= rows.size()) throw std::invalid_argument("logistic_regression::fit: a picked row is out of range");
      for (const auto i : rows[r].index)
        if (i >= dimension) throw std::invalid_argument("logistic_regression::fit: a feature index is out of range");
    }
    std::vector<double> w(dimension, 0.0), squared_gradients(dimension, 0.0);
    double bias = 0, bias_squared_gradients = 0;
    std::vector<std::size_t> order(picked.begin(), picked.end());
    std::mt19937_64 random(options.seed);
    constexpr double epsilon = 1e-8;
    for (std::size_t pass = 0; pass < options.passes; ++pass) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random() % i]);  // Fisher-Yates
      for (const std::size_t r : order) {
        const auto& row = rows[r];
        double logit = bias;
        for (std::size_t k = 0; k < row.size(); ++k) logit += w[row.index[k]] * row.value[k];
        const double error = sigmoid(logit) - outcomes[r];
        for (std::size_t k = 0; k < row.size(); ++k) {
          const auto j = row.index[k];
          const double gradient = error * row.value[k] + options.l2 * w[j];
          squared_gradients[j] += gradient * gradient;
          w[j] -= options.learning_rate * gradient / (std::sqrt(squared_gradients[j]) + epsilon);
        }
        bias_squared_gradients += error * error;
        bias -= options.learning_rate * error / (std::sqrt(bias_squared_gradients) + epsilon);
      }
    }
    return logistic_regression(std::vector<float>(w.begin(), w.end()), static_cast<float>(bias));
  }

  std::size_t dimension() const noexcept { return weights_.size(); }
  std::span<const float> weights() const noexcept { return weights_; }
  float bias() const noexcept { return bias_; }

  double logit(const feature_row& row) const noexcept { return bias_ + row.dot(weights_); }
  double probability(const feature_row& row) const noexcept { return sigmoid(logit(row)); }

 private:
  std::vector<float> weights_;
  float bias_ = 0;
};

}  // namespace llmgate::inline v0
