// cascade_plan: ask two models at once; when their answers agree
// (short_answer.hpp), serve that answer; otherwise ask a third and serve
// its. Cheap models that agree are right far more often than either alone,
// so most requests never reach the dear model; the price is two calls
// where one might have done.
//
// cascade_planner learns which plan to use for each task label from
// recorded outcomes (routing_outcome.hpp, with every model's answer): it
// tallies every plan (every single model, every pair with every third) on
// the outcomes of each label with at least min_task_outcomes of them, and
// on all of them for the rest; plans_at(weight) then takes, per label, the
// plan with the highest mean score - weight * mean cost, the same
// trade-off as the predictor's (routing_target.hpp chooses the weight).
// The plans tried grow as the cube of the models: meant for the handful
// of models a cascade is built from, not a registry of hundreds.
#pragma once

#include <cstddef>      // std::size_t
#include <functional>   // std::less
#include <map>          // std::map
#include <optional>     // std::optional
#include <span>         // std::span
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/route/routing_outcome.hpp"
#include "llmgate/route/short_answer.hpp"

namespace llmgate::inline v0 {

struct cascade_plan {
  std::size_t first = 0, second = 0;  ///< asked together; first == second: one model, no cascade
  std::size_t escalate_to = 0;        ///< asked when the two disagree

  bool single() const noexcept { return first == second; }
  friend bool operator==(const cascade_plan&, const cascade_plan&) = default;
};

/// What a plan did on one recorded request.
struct cascade_replay {
  double score = 0;     ///< of the answer served
  double cost = 0;      ///< of every call made
  bool escalated = false;
};

/// The normal form of each model's recorded answer (short_answer.hpp);
/// all std::nullopt when the outcome has no answers.
inline std::vector<std::optional<std::string>> normalised_answers(const routing_outcome& outcome) {
  std::vector<std::optional<std::string>> normal(outcome.score.size());
  if (outcome.answer.size() == normal.size())
    for (std::size_t m = 0; m < normal.size(); ++m) normal[m] = normalised_short_answer(outcome.answer[m]);
  return normal;
}

/// `plan` on `outcome`, from its costs and its answers' normal forms
/// (normalised_answers). A pair agrees when both have the same normal
/// form; free text or a missing answer counts as a disagreement.
inline cascade_replay replay(const cascade_plan& plan, const routing_outcome& outcome,
                             std::span<const std::optional<std::string>> normal) {
  if (plan.single()) return {outcome.score[plan.first], outcome.cost[plan.first], false};
  const double pair_cost = outcome.cost[plan.first] + outcome.cost[plan.second];
  if (normal[plan.first] && normal[plan.first] == normal[plan.second])
    return {outcome.score[plan.first], pair_cost, false};
  return {outcome.score[plan.escalate_to], pair_cost + outcome.cost[plan.escalate_to], true};
}

/// Every plan over `models` models: singles first, then pairs with a third.
inline std::vector<cascade_plan> every_cascade_plan(std::size_t models) {
  std::vector<cascade_plan> plans;
  for (std::size_t m = 0; m < models; ++m) plans.push_back({m, m, m});
  for (std::size_t a = 0; a < models; ++a)
    for (std::size_t b = a + 1; b < models; ++b)
      for (std::size_t e = 0; e < models; ++e)
        if (e != a && e != b) plans.push_back({a, b, e});
  return plans;
}

/// A plan with its mean score and mean cost per request where it was learned.
struct planned_cascade {
  cascade_plan plan;
  double score = 0;
  double cost = 0;
};

/// The plan for each task label (file comment).
class cascade_router {
 public:
  cascade_router(std::map<std::string, planned_cascade, std::less<>> by_task, planned_cascade otherwise)
      : by_task_(std::move(by_task)), otherwise_(otherwise) {}

  const planned_cascade& plan_for(std::string_view task) const {
    const auto at = by_task_.find(task);
    return at == by_task_.end() ? otherwise_ : at->second;
  }

 private:
  std::map<std::string, planned_cascade, std::less<>> by_task_;
  planned_cascade otherwise_;
};

class cascade_planner {
 public:
  /// Tallies every plan over `models` models on `outcomes` (file comment).
  /// Throws std::invalid_argument for no outcomes or an outcome whose
  /// scores or costs do not match the models.
  cascade_planner(std::size_t models, std::span<const routing_outcome> outcomes, std::size_t min_task_outcomes = 30)
      : plans_(every_cascade_plan(models)) {
    if (outcomes.empty()) throw std::invalid_argument("cascade_planner: no outcomes to learn from");
    std::map<std::string, std::size_t> per_task;
    for (const auto& o : outcomes) {
      if (o.score.size() != models || o.cost.size() != models)
        throw std::invalid_argument("cascade_planner: an outcome's scores or costs do not match the models");
      ++per_task[o.task];
    }
    for (const auto& o : outcomes) {
      tally(all_, o);
      if (!o.task.empty() && per_task[o.task] >= min_task_outcomes) tally(by_task_[o.task], o);
    }
  }

  const std::vector<cascade_plan>& plans() const noexcept { return plans_; }

  /// Per task label, the plan with the highest mean score - weight * mean cost.
  cascade_router plans_at(double weight) const {
    std::map<std::string, planned_cascade, std::less<>> chosen;
    for (const auto& [task, t] : by_task_) chosen.emplace(task, best(t, weight));
    return cascade_router(std::move(chosen), best(all_, weight));
  }

 private:
  struct totals {
    std::vector<double> score, cost;  // per plan, summed
    double outcomes = 0;
  };

  void tally(totals& t, const routing_outcome& o) const {
    t.score.resize(plans_.size());
    t.cost.resize(plans_.size());
    const auto normal = normalised_answers(o);
    for (std::size_t p = 0; p < plans_.size(); ++p) {
      const auto r = replay(plans_[p], o, normal);
      t.score[p] += r.score;
      t.cost[p] += r.cost;
    }
    t.outcomes += 1;
  }

  planned_cascade best(const totals& t, double weight) const {
    std::size_t chosen = 0;
    for (std::size_t p = 1; p < plans_.size(); ++p)
      if (t.score[p] - weight * t.cost[p] > t.score[chosen] - weight * t.cost[chosen]) chosen = p;
    return {plans_[chosen], t.score[chosen] / t.outcomes, t.cost[chosen] / t.outcomes};
  }

  std::vector<cascade_plan> plans_;
  totals all_;
  std::map<std::string, totals, std::less<>> by_task_;
};

}  // namespace llmgate::inline v0
