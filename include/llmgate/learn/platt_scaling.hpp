// platt_scaling: turns a model's logits into calibrated probabilities,
// P = sigmoid(slope * logit + intercept), the two numbers fitted on logits
// the model gave rows it was not fitted on (out-of-fold, see
// learn/cross_validation.hpp). A regularised model's logits are shrunk
// towards zero, and probabilities read off them directly are too timid;
// the router weighs probabilities against money, so they must mean what
// they say. Fitting is Newton's method on the log loss, with Platt's
// targets (positives (n+ + 1) / (n+ + 2), negatives 1 / (n- + 2)) so that
// a separable set does not push the slope to infinity.
#pragma once

#include <algorithm>  // std::max
#include <cmath>      // std::abs, std::log1p, std::exp
#include <cstddef>    // std::size_t
#include <span>       // std::span
#include <stdexcept>  // std::invalid_argument

#include "llmgate/learn/logistic_regression.hpp"  // sigmoid

namespace llmgate::inline v0 {

struct platt_scaling {
  double slope = 1;
  double intercept = 0;

  double probability(double logit) const noexcept { return sigmoid(slope * logit + intercept); }

  /// Fits on `logits` with `outcomes` in 0..1 (fractional outcomes split
  /// between the two targets). Throws std::invalid_argument when the sizes
  /// differ; an empty set gives the identity.
  static platt_scaling fit(std::span<const float> logits, std::span<const float> outcomes) {
    if (logits.size() != outcomes.size()) throw std::invalid_argument("platt_scaling::fit: one outcome per logit");
    double positives = 0;
    for (const float o : outcomes) positives += o;
    const double negatives = static_cast<double>(outcomes.size()) - positives;
    const double high = (positives + 1) / (positives + 2), low = 1 / (negatives + 2);
    platt_scaling s;
    if (logits.empty()) return s;
    const auto loss_at = [&](double a, double b) {
      double loss = 0;
      for (std::size_t i = 0; i < logits.size(); ++i) {
        const double t = outcomes[i] * high + (1 - outcomes[i]) * low, z = a * logits[i] + b;
        // -t log sigmoid(z) - (1 - t) log(1 - sigmoid(z)), stably
        loss += (z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z))) + (1 - t) * z;
      }
      return loss;
    };
    double loss = loss_at(s.slope, s.intercept);
    for (int iteration = 0; iteration < 100; ++iteration) {
      double ga = 0, gb = 0, haa = 1e-12, hab = 0, hbb = 1e-12;
      for (std::size_t i = 0; i < logits.size(); ++i) {
        const double t = outcomes[i] * high + (1 - outcomes[i]) * low;
        const double p = s.probability(logits[i]), g = p - t, h = std::max(p * (1 - p), 1e-12);
        ga += g * logits[i];
        gb += g;
        haa += h * logits[i] * logits[i];
        hab += h * logits[i];
        hbb += h;
      }
      const double determinant = haa * hbb - hab * hab;
      if (determinant <= 0) break;
      const double da = (hbb * ga - hab * gb) / determinant, db = (haa * gb - hab * ga) / determinant;
      double step = 1, trial_loss = loss;
      for (int halving = 0; halving < 30; ++halving, step /= 2) {
        trial_loss = loss_at(s.slope - step * da, s.intercept - step * db);
        if (trial_loss <= loss) break;
      }
      if (trial_loss > loss) break;
      s.slope -= step * da;
      s.intercept -= step * db;
      const bool settled = std::abs(step * da) < 1e-10 && std::abs(step * db) < 1e-10;
      loss = trial_loss;
      if (settled) break;
    }
    return s;
  }
};

}  // namespace llmgate::inline v0
