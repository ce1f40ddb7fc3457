// correctness_predictor: for each model, the probability that it answers a
// request right, from what the request looks like (prompt_featurizer.hpp),
// learned from labelled outcomes (routing_outcome.hpp).
//
// Per model: logistic regression over the prompt's features (learn/), its
// penalty chosen from a small grid by the Brier score of calibrated
// out-of-fold predictions (`folds`-fold cross-validation on the outcomes),
// then refitted on all of them; the calibration (Platt scaling) is fitted
// on the chosen penalty's out-of-fold logits. fit() also hands back those
// out-of-fold probabilities, which is what a knob is chosen on
// (routing_target.hpp), and each model's Brier score against the base rate's,
// the figure that says whether the prompt tells anything about the model.
#pragma once

#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <limits>     // std::numeric_limits
#include <span>       // std::span
#include <stdexcept>  // std::invalid_argument
#include <string>     // std::string
#include <string_view>  // std::string_view
#include <utility>    // std::move
#include <vector>     // std::vector

#include "llmgate/learn/classifier_metrics.hpp"  // brier_score, base_rate_brier_score
#include "llmgate/learn/cross_validation.hpp"    // fold_assignment
#include "llmgate/learn/logistic_regression.hpp"
#include "llmgate/learn/platt_scaling.hpp"
#include "llmgate/route/prompt_featurizer.hpp"
#include "llmgate/route/routing_outcome.hpp"

namespace llmgate::inline v0 {

struct correctness_predictor_options {
  prompt_featurizer_options features;
  logistic_regression_options fitting;    ///< its l2 is replaced by the grid's choice
  /// Around what `route_eval --folds 5 --predictor-l2 ...` chooses on RouterBench and dcrouter.
  std::vector<double> l2_grid{1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1};
  std::size_t folds = 5;
  std::uint64_t seed = 0;                 ///< the folds' and the fitting's
};

/// How one model's predictor did on the outcomes it was fitted on, out of fold.
struct predictor_fit_report {
  std::string model;
  double l2 = 0;                ///< the grid's choice
  double brier = 0;             ///< calibrated out-of-fold predictions
  double base_rate_brier = 0;   ///< predicting the model's accuracy for every request
};

/// What fit() gives: the predictor, and what it learned about itself.
struct correctness_fit;

class correctness_predictor {
 public:
  /// Fits one predictor per model on `outcomes` (each with a score per
  /// model). Throws std::invalid_argument for no models, fewer outcomes
  /// than folds, or an outcome whose scores do not match the models.
  static correctness_fit fit(std::vector<std::string> model_names, std::span<const routing_outcome> outcomes,
                             const correctness_predictor_options& options = {});

  const std::vector<std::string>& models() const noexcept { return models_; }

  /// P(model m answers right) for each model, in models() order.
  std::vector<float> predict(std::string_view text, std::string_view task) const {
    const auto row = featurizer_.features(text, task);
    const std::size_t models = models_.size();
    std::vector<float> logit(bias_);
    for (std::size_t k = 0; k < row.size(); ++k) {
      const float value = row.value[k];
      const float* weight = weight_by_feature_.data() + std::size_t{row.index[k]} * models;
      for (std::size_t m = 0; m < models; ++m) logit[m] += value * weight[m];
    }
    for (std::size_t m = 0; m < models; ++m) logit[m] = static_cast<float>(calibration_[m].probability(logit[m]));
    return logit;
  }

 private:
  explicit correctness_predictor(const prompt_featurizer_options& features) : featurizer_(features) {}

  std::vector<std::string> models_;
  prompt_featurizer featurizer_;
  // Feature after feature, every model's weight for it: a request's few
  // hundred features each add to all the models' logits in one sweep.
  std::vector<float> weight_by_feature_;
  std::vector<float> bias_;  // per model
  std::vector<platt_scaling> calibration_;
};

struct correctness_fit {
  correctness_predictor predictor;
  std::vector<std::vector<float>> out_of_fold;  ///< per outcome, per model: calibrated, from a fit without it
  std::vector<predictor_fit_report> report;     ///< per model
};

inline correctness_fit correctness_predictor::fit(std::vector<std::string> model_names,
                                                   std::span<const routing_outcome> outcomes,
                                                   const correctness_predictor_options& options) {
  if (model_names.empty()) throw std::invalid_argument("correctness_predictor: no models to predict for");
  if (outcomes.size() < options.folds || options.l2_grid.empty())
    throw std::invalid_argument("correctness_predictor: needs at least one outcome per fold and an l2 grid");
  for (const auto& o : outcomes)
    if (o.score.size() != model_names.size())
      throw std::invalid_argument("correctness_predictor: an outcome's scores do not match the models");

  correctness_predictor predictor(options.features);
  const std::size_t models = model_names.size();
  predictor.models_ = std::move(model_names);
  std::vector<std::string> texts;
  for (const auto& o : outcomes) texts.push_back(o.text);
  predictor.featurizer_.learn(texts);
  std::vector<feature_row> rows;
  rows.reserve(outcomes.size());
  for (const auto& o : outcomes) rows.push_back(predictor.featurizer_.features(o.text, o.task));
  const std::size_t dimension = predictor.featurizer_.dimension(), n = outcomes.size();
  predictor.weight_by_feature_.assign(dimension * models, 0.0f);
  const auto fold = fold_assignment(n, options.folds, options.seed);
  std::vector<std::vector<std::size_t>> learned_in, held_out_in;  // per fold
  for (std::size_t f = 0; f < options.folds; ++f) {
    learned_in.push_back(rows_of_fold(fold, f, false));
    held_out_in.push_back(rows_of_fold(fold, f, true));
  }

  correctness_fit result{std::move(predictor), std::vector<std::vector<float>>(n), {}};
  auto& fitted = result.predictor;
  for (std::size_t m = 0; m < models; ++m) {
    std::vector<float> outcome(n);
    for (std::size_t r = 0; r < n; ++r) outcome[r] = outcomes[r].score[m];
    predictor_fit_report best{fitted.models_[m], 0, std::numeric_limits<double>::infinity(),
                              base_rate_brier_score(outcome)};
    std::vector<float> best_logits;
    for (const double l2 : options.l2_grid) {
      auto fitting = options.fitting;
      fitting.l2 = l2;
      fitting.seed = options.seed;
      std::vector<float> logits(n);
      for (std::size_t f = 0; f < options.folds; ++f) {
        const auto model = logistic_regression::fit(rows, outcome, learned_in[f], dimension, fitting);
        for (const auto r : held_out_in[f]) logits[r] = static_cast<float>(model.logit(rows[r]));
      }
      const auto calibration = platt_scaling::fit(logits, outcome);
      std::vector<float> probabilities(n);
      for (std::size_t r = 0; r < n; ++r) probabilities[r] = static_cast<float>(calibration.probability(logits[r]));
      const double brier = brier_score(probabilities, outcome);
      if (brier < best.brier) {
        best.l2 = l2;
        best.brier = brier;
        best_logits = std::move(logits);
      }
    }
    auto fitting = options.fitting;
    fitting.l2 = best.l2;
    fitting.seed = options.seed;
    const auto regression = logistic_regression::fit(rows, outcome, dimension, fitting);
    for (std::size_t j = 0; j < dimension; ++j) fitted.weight_by_feature_[j * models + m] = regression.weights()[j];
    fitted.bias_.push_back(regression.bias());
    fitted.calibration_.push_back(platt_scaling::fit(best_logits, outcome));
    for (std::size_t r = 0; r < n; ++r)
      result.out_of_fold[r].push_back(static_cast<float>(fitted.calibration_.back().probability(best_logits[r])));
    result.report.push_back(std::move(best));
  }
  return result;
}

}  // namespace llmgate::inline v0
