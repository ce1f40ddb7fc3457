// What the router learns from the learning queries, and how every policy
// does on the evaluated ones.
//
// Learning (nothing from the evaluated queries):
//   - the registry: each model's accuracy overall and per task type (the
//     dataset's task label, else the task type the text rules read) with
//     the number of queries each figure rests on, and a
//     price per million prompt tokens (bytes / 4) that reproduces the
//     model's mean cost per query;
//   - the local analyser's labelled examples: every learning query with its
//     task label and every model's score on it, so that the router
//     estimates each model's accuracy from the most similar queries.
// Policies on the evaluated queries: each single model; random (the
// expectation of a uniform choice per query); always the cheapest and
// always the best model on the learning queries; the oracle (per query the
// cheapest of the best-scoring models); llmgate at each preference of the
// sweep (accuracy against cost, and three profiles).
#pragma once

#include <algorithm>  // std::max, std::min, std::sort
#include <cmath>      // std::log
#include <cstddef>    // std::size_t
#include <cstdio>     // std::snprintf
#include <limits>     // std::numeric_limits
#include <map>        // std::map
#include <optional>   // std::optional
#include <string>     // std::string
#include <vector>     // std::vector

#include <llmgate/route/local_analyser.hpp>
#include <llmgate/route/model_registry.hpp>
#include <llmgate/route/preferences.hpp>
#include <llmgate/route/router.hpp>
#include <llmgate/route/text_features.hpp>

#include "dataset.hpp"
#include "settings.hpp"  // router_settings

namespace route_eval {

/// A policy's accuracy (0..1) and total cost (USD) on the evaluated queries.
struct point {
  std::string policy;
  double accuracy = 0;
  double cost = 0;
};

struct dataset_result {
  std::string name;
  std::size_t learned_from = 0;
  std::size_t evaluated = 0;
  std::vector<point> singles;  ///< one per model, in the dataset's order
  point random, cheapest, best, oracle;
  std::vector<point> llmgate;  ///< the sweep, in sweep order
  point best_single;           ///< the single model most accurate on the evaluated queries
  std::optional<double> cost_to_match;  ///< cheapest llmgate point within 0.5 points of best_single
  double normalised_auc = 0;   ///< area_under_curve of the sweep over the oracle accuracy's across the range
};

/// The preferences the sweep tries: accuracy against cost, then profiles.
inline std::vector<llmgate::preferences> preference_sweep() {
  std::vector<llmgate::preferences> sweep;
  // Finer near accuracy=1, where a little weight on cost already moves
  // the dearest models' queries to cheaper ones.
  for (const double cost : {0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8,
                            0.9, 1.0}) {
    char spec[64];
    if (cost == 0.0) std::snprintf(spec, sizeof spec, "accuracy=1");
    else if (cost == 1.0) std::snprintf(spec, sizeof spec, "cost=1");
    else std::snprintf(spec, sizeof spec, "accuracy=%g,cost=%g", 1.0 - cost, cost);
    sweep.push_back(llmgate::preferences::parse(spec));
  }
  for (const char* profile : {"accuracy-first", "balanced", "cost-effective"})
    sweep.push_back(llmgate::preferences::profile(profile));
  return sweep;
}

/// The label a query's task goes by: its own, else the text rules' as the
/// local analyser reads them (its edges, see local_analyser.hpp).
inline std::string task_label(const query& q, std::size_t edge_words) {
  return q.task.empty() ? std::string(llmgate::read_request_features(q.text, edge_words).task_type) : q.task;
}

/// The registry learned from `learning` (see the top of this file).
inline llmgate::model_registry learn_registry(const std::vector<std::string>& models,
                                              const std::vector<const query*>& learning, std::size_t edge_words) {
  std::vector<llmgate::model_card> cards(models.size());
  double tokens = 0;
  for (const auto* q : learning) tokens += static_cast<double>(q->text.size()) / 4.0;
  for (std::size_t m = 0; m < models.size(); ++m) {
    double score = 0, cost = 0;
    std::map<std::string, std::pair<double, double>> by_task;  // sum, count
    for (const auto* q : learning) {
      score += q->score[m];
      cost += q->cost[m];
      auto& [sum, count] = by_task[task_label(*q, edge_words)];
      sum += q->score[m];
      count += 1;
    }
    auto& c = cards[m];
    c.name = models[m];
    c.accuracy = score / static_cast<double>(learning.size());
    for (const auto& [task, sum_count] : by_task) {
      c.task_accuracy.emplace(task, sum_count.first / sum_count.second);
      c.task_samples.emplace(task, sum_count.second);
    }
    c.input_cost_per_million = c.output_cost_per_million = cost / tokens * 1e6;
  }
  return llmgate::model_registry(std::move(cards));
}

inline llmgate::router learn_router(const std::vector<std::string>& models, const std::vector<const query*>& learning,
                                    const router_settings& settings) {
  llmgate::local_analyser analyser(settings.analyser, llmgate::hashing_embedder(settings.embedder));
  std::vector<llmgate::labelled_example> examples;
  examples.reserve(learning.size());
  for (const auto* q : learning) {
    llmgate::labelled_example e{q->text, q->task, {}, {}, {}};
    for (std::size_t m = 0; m < models.size(); ++m) e.outcomes.emplace_back(models[m], static_cast<float>(q->score[m]));
    examples.push_back(std::move(e));
  }
  analyser.learn(examples);
  return llmgate::router(learn_registry(models, learning, settings.analyser.edge_words), std::move(analyser), llmgate::preferences(),
                         llmgate::weighted_score{}, settings.router);
}

/// Area under accuracy over log cost, between the cheapest and the dearest
/// single model's cost, of the best accuracy a policy reaches at each cost
/// (0 below its cheapest point).
inline double area_under_curve(const std::vector<point>& points, double lo, double hi) {
  std::vector<point> sorted = points;
  std::sort(sorted.begin(), sorted.end(), [](const point& a, const point& b) { return a.cost < b.cost; });
  double area = 0, best = 0, from = std::log(lo);
  for (const auto& p : sorted) {
    const double at = std::log(std::clamp(p.cost, lo, hi));
    area += best * (at - from);
    from = std::max(from, at);
    best = std::max(best, p.accuracy);
  }
  return area + best * (std::log(hi) - from);
}

/// Every policy on `evaluated`, routed by `router` learned without them.
inline dataset_result evaluate(const std::string& name, const std::vector<std::string>& models,
                               const std::vector<const query*>& learning, const std::vector<const query*>& evaluated,
                               const llmgate::router& router, const std::vector<llmgate::preferences>& sweep) {
  dataset_result r;
  r.name = name;
  r.learned_from = learning.size();
  r.evaluated = evaluated.size();
  const double n = static_cast<double>(evaluated.size());

  for (std::size_t m = 0; m < models.size(); ++m) {
    point p{models[m]};
    for (const auto* q : evaluated) {
      p.accuracy += q->score[m] / n;
      p.cost += q->cost[m];
    }
    r.singles.push_back(p);
  }
  r.best_single = r.singles.front();
  for (const auto& p : r.singles)
    if (p.accuracy > r.best_single.accuracy || (p.accuracy == r.best_single.accuracy && p.cost < r.best_single.cost))
      r.best_single = p;

  // Cheapest and best as the learning queries show them.
  std::size_t cheapest = 0, best = 0;
  const auto& registry = router.registry();
  for (std::size_t m = 0; m < models.size(); ++m) {
    if (*registry.card(m).blended_price() < *registry.card(cheapest).blended_price()) cheapest = m;
    if (*registry.card(m).accuracy > *registry.card(best).accuracy) best = m;
  }
  r.cheapest = {"cheapest", r.singles[cheapest].accuracy, r.singles[cheapest].cost};
  r.best = {"best", r.singles[best].accuracy, r.singles[best].cost};

  r.random = {"random"};
  r.oracle = {"oracle"};
  for (const auto* q : evaluated) {
    std::size_t pick = 0;
    for (std::size_t m = 0; m < models.size(); ++m) {
      r.random.accuracy += q->score[m] / static_cast<double>(models.size()) / n;
      r.random.cost += q->cost[m] / static_cast<double>(models.size());
      if (q->score[m] > q->score[pick] || (q->score[m] == q->score[pick] && q->cost[m] < q->cost[pick])) pick = m;
    }
    r.oracle.accuracy += q->score[pick] / n;
    r.oracle.cost += q->cost[pick];
  }

  for (const auto& wanted : sweep) r.llmgate.push_back({"llmgate:" + wanted.describe()});
  for (const auto* q : evaluated) {
    const auto task = router.analyser().analyse(q->text);
    for (std::size_t s = 0; s < sweep.size(); ++s) {
      const auto m = router.choose(task, sweep[s]).model_index;
      r.llmgate[s].accuracy += q->score[m] / n;
      r.llmgate[s].cost += q->cost[m];
    }
  }

  for (const auto& p : r.llmgate)
    if (p.accuracy >= r.best_single.accuracy - 0.005 && (!r.cost_to_match || p.cost < *r.cost_to_match))
      r.cost_to_match = p.cost;

  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& p : r.singles) {
    lo = std::min(lo, p.cost);
    hi = std::max(hi, p.cost);
  }
  // Normalised by the oracle's accuracy over the whole range: the ceiling.
  if (lo > 0 && hi > lo) r.normalised_auc = area_under_curve(r.llmgate, lo, hi) / (r.oracle.accuracy * std::log(hi / lo));
  return r;
}

}  // namespace route_eval
