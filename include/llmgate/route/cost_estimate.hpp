// cost_estimate: what each model is expected to charge for a request,
// learned from labelled outcomes (routing_outcome.hpp) with what each call
// cost: per model, a straight line in the request's bytes fitted by least
// squares to the outcomes of its task label (to all of them for a label
// with fewer than min_task_outcomes). A request's cost grows with its
// prompt, and the dearest requests weigh most in the total a router is
// asked to keep down.
#pragma once

#include <algorithm>    // std::max
#include <cstddef>      // std::size_t
#include <functional>   // std::less
#include <map>          // std::map
#include <span>         // std::span
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include "llmgate/route/routing_outcome.hpp"

namespace llmgate::inline v0 {

class cost_estimate {
 public:
  /// Throws std::invalid_argument for no outcomes or an outcome whose
  /// costs do not match the models.
  cost_estimate(std::size_t models, std::span<const routing_outcome> outcomes, std::size_t min_task_outcomes = 30)
      : models_(models) {
    if (outcomes.empty()) throw std::invalid_argument("cost_estimate: no outcomes to learn from");
    std::map<std::string, std::vector<const routing_outcome*>> by_label;
    for (const auto& o : outcomes) {
      if (o.cost.size() != models) throw std::invalid_argument("cost_estimate: an outcome's costs do not match the models");
      by_label[std::string()].push_back(&o);
      if (!o.task.empty()) by_label[o.task].push_back(&o);
    }
    for (const auto& [label, labelled] : by_label)
      if (label.empty() || labelled.size() >= min_task_outcomes) lines_.emplace(label, fit(labelled));
  }

  /// Per model, the expected cost (USD) of a request of `bytes` bytes with
  /// task label `task` (empty: none).
  std::vector<double> of(std::size_t bytes, std::string_view task) const {
    auto at = lines_.find(task);
    if (at == lines_.end()) at = lines_.find(std::string_view());
    std::vector<double> cost(models_);
    for (std::size_t m = 0; m < models_; ++m)
      cost[m] = std::max(0.0, at->second[m].first + at->second[m].second * static_cast<double>(bytes));
    return cost;
  }

 private:
  using line = std::pair<double, double>;  // intercept, slope per byte

  std::vector<line> fit(const std::vector<const routing_outcome*>& outcomes) const {
    const auto n = static_cast<double>(outcomes.size());
    double mean_bytes = 0, spread = 0;
    for (const auto* o : outcomes) mean_bytes += static_cast<double>(o->text.size()) / n;
    for (const auto* o : outcomes) {
      const double d = static_cast<double>(o->text.size()) - mean_bytes;
      spread += d * d;
    }
    std::vector<line> lines(models_);
    for (std::size_t m = 0; m < models_; ++m) {
      double mean_cost = 0, covariance = 0;
      for (const auto* o : outcomes) mean_cost += o->cost[m] / n;
      for (const auto* o : outcomes) covariance += (static_cast<double>(o->text.size()) - mean_bytes) * (o->cost[m] - mean_cost);
      const double slope = spread > 0 ? covariance / spread : 0.0;
      lines[m] = {mean_cost - slope * mean_bytes, slope};
    }
    return lines;
  }

  std::size_t models_;
  std::map<std::string, std::vector<line>, std::less<>> lines_;  // "" -> all outcomes
};

}  // namespace llmgate::inline v0
