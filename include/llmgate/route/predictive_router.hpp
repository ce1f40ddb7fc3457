// predictive_router: sends a request to the model with the highest
// P(right) - cost_weight * expected cost, P from per-model correctness
// predictors (correctness_predictor.hpp) and the cost from a cost estimate
// (cost_estimate.hpp), both learned from labelled outcomes. The cost
// weight is chosen for the user's target ("match-best", "95%",
// "cost<=0.002", routing_target.hpp) on the outcomes themselves, through
// the predictors' out-of-fold probabilities: no outcome judges a
// prediction made with it.
//
//   auto routing = llmgate::predictive_routing::learn(models, outcomes);
//   auto [router, choice] = routing.for_target(llmgate::routing_target::parse("95%"));
//   llmgate::pipeline answer{llmgate::router_stage(router), llmgate::backend_stage(backend)};
//
// A decision's ranking lists every model by its P - weight * cost, with
// P as its expected_accuracy; its task is the request's task label. The
// router is immutable, so route() may run on any number of threads; it
// takes no thumbs up or down (router_stage skips them): what it knows
// comes from the outcomes it learned.
#pragma once

#include <algorithm>    // std::max, std::stable_sort
#include <cstddef>      // std::size_t
#include <memory>       // std::shared_ptr, std::make_shared
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include "llmgate/route/correctness_predictor.hpp"
#include "llmgate/route/cost_estimate.hpp"
#include "llmgate/route/router.hpp"          // routing_decision, ranked_model
#include "llmgate/route/routing_outcome.hpp"
#include "llmgate/route/routing_target.hpp"  // routing_target, choose_cost_weight, best_trade_off

namespace llmgate::inline v0 {

/// The weights worth trying on `outcomes`: cost_weight_ladder between the
/// cheapest and the dearest model's mean cost per outcome.
inline std::vector<double> cost_weight_ladder(std::span<const routing_outcome> outcomes) {
  double cheapest = 0, dearest = 0;
  const std::size_t models = outcomes.empty() ? 0 : outcomes.front().cost.size();
  for (std::size_t m = 0; m < models; ++m) {
    double mean = 0;
    for (const auto& o : outcomes) mean += o.cost[m] / static_cast<double>(outcomes.size());
    if (mean > 0 && (cheapest == 0 || mean < cheapest)) cheapest = mean;
    dearest = std::max(dearest, mean);
  }
  return cost_weight_ladder(cheapest > 0 ? cheapest : 1e-9, dearest > 0 ? dearest : 1e-9);
}

class predictive_router {
 public:
  predictive_router(std::shared_ptr<const correctness_predictor> predictor, std::shared_ptr<const cost_estimate> costs,
                    double cost_weight)
      : predictor_(std::move(predictor)), costs_(std::move(costs)), cost_weight_(cost_weight) {}

  double cost_weight() const noexcept { return cost_weight_; }

  /// The model for `request` with task label `task` (empty: none given).
  routing_decision route(std::string_view request, std::string_view task = {}) const {
    const auto p = predictor_->predict(request, task);
    const auto cost = costs_->of(request.size(), task);
    routing_decision d;
    d.policy = "predictor";
    d.task.task_type = std::string(task);
    const auto& models = predictor_->models();
    for (std::size_t m = 0; m < models.size(); ++m)
      d.ranking.push_back({m, models[m], static_cast<float>(p[m] - cost_weight_ * cost[m]), p[m]});
    std::stable_sort(d.ranking.begin(), d.ranking.end(),
                     [](const ranked_model& a, const ranked_model& b) { return a.score > b.score; });
    d.model_index = d.ranking.front().index;
    d.model = d.ranking.front().model;
    return d;
  }

  /// The chosen model's index alone, without a decision's ranking.
  std::size_t choose(std::string_view request, std::string_view task = {}) const {
    return best_trade_off(predictor_->predict(request, task), costs_->of(request.size(), task), cost_weight_);
  }

 private:
  std::shared_ptr<const correctness_predictor> predictor_;
  std::shared_ptr<const cost_estimate> costs_;
  double cost_weight_;
};

/// What learn() learned: the predictors, the cost estimate, and what every
/// weight of the ladder did on the outcomes out of fold, from which a
/// router for any target is made without fitting again.
class predictive_routing {
 public:
  /// `ladder`: the weights tried (empty: cost_weight_ladder(outcomes)).
  /// Throws std::invalid_argument as correctness_predictor::fit and
  /// cost_estimate do.
  static predictive_routing learn(std::vector<std::string> models, std::span<const routing_outcome> outcomes,
                                  const correctness_predictor_options& options = {}, std::vector<double> ladder = {}) {
    const std::size_t count = models.size();
    auto fit = correctness_predictor::fit(std::move(models), outcomes, options);
    predictive_routing r(std::make_shared<const correctness_predictor>(std::move(fit.predictor)),
                         std::make_shared<const cost_estimate>(count, outcomes), std::move(fit.report));
    r.out_of_fold_probabilities_ = std::move(fit.out_of_fold);
    const auto n = static_cast<double>(outcomes.size());
    for (std::size_t m = 0; m < count; ++m) {
      double score = 0;
      for (const auto& o : outcomes) score += o.score[m] / n;
      r.best_single_ = std::max(r.best_single_, score);
    }
    r.ladder_ = ladder.empty() ? cost_weight_ladder(outcomes) : std::move(ladder);
    r.out_of_fold_.resize(r.ladder_.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const auto cost = r.costs_->of(outcomes[i].text.size(), outcomes[i].task);
      for (std::size_t w = 0; w < r.ladder_.size(); ++w) {
        const auto m = best_trade_off(r.out_of_fold_probabilities_[i], cost, r.ladder_[w]);
        r.out_of_fold_[w].accuracy += outcomes[i].score[m] / n;
        r.out_of_fold_[w].cost += outcomes[i].cost[m] / n;
      }
    }
    return r;
  }

  /// The router with the weight chosen for `target`, and that choice.
  std::pair<predictive_router, chosen_cost_weight> for_target(const routing_target& target) const {
    const auto choice = choose_cost_weight(target, best_single_, ladder_, out_of_fold_);
    return {at_weight(choice.weight), choice};
  }

  predictive_router at_weight(double cost_weight) const { return predictive_router(predictor_, costs_, cost_weight); }

  const std::vector<double>& ladder() const noexcept { return ladder_; }
  /// Per weight of the ladder, accuracy and mean cost out of fold.
  const std::vector<policy_result>& out_of_fold() const noexcept { return out_of_fold_; }
  /// Per outcome learned from, per model: P(right) from predictors fitted without it.
  const std::vector<std::vector<float>>& out_of_fold_probabilities() const noexcept { return out_of_fold_probabilities_; }
  double best_single_accuracy() const noexcept { return best_single_; }
  const std::vector<predictor_fit_report>& report() const noexcept { return report_; }
  const correctness_predictor& predictor() const noexcept { return *predictor_; }
  const cost_estimate& costs() const noexcept { return *costs_; }

 private:
  predictive_routing(std::shared_ptr<const correctness_predictor> predictor, std::shared_ptr<const cost_estimate> costs,
                     std::vector<predictor_fit_report> report)
      : predictor_(std::move(predictor)), costs_(std::move(costs)), report_(std::move(report)) {}

  std::shared_ptr<const correctness_predictor> predictor_;
  std::shared_ptr<const cost_estimate> costs_;
  std::vector<predictor_fit_report> report_;
  std::vector<double> ladder_;
  std::vector<policy_result> out_of_fold_;
  std::vector<std::vector<float>> out_of_fold_probabilities_;
  double best_single_ = 0;
};

}  // namespace llmgate::inline v0
