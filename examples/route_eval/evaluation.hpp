// What the routers learn from the learning queries, and how every policy
// does on the evaluated ones.
//
// Learned from the learning queries only (learned_policies):
//   - "router", llmgate::router as the gateway runs it: the registry (each
//     model's accuracy overall and per task label, with the number of
//     queries each figure rests on, and a price per million prompt tokens,
//     bytes / 4, that reproduces the model's mean cost per query) and the
//     local analyser's labelled examples; a curve over the preference sweep;
//   - "predictor": llmgate::predictive_router, each model's calibrated
//     P(right) from the prompt and its cost expected from the prompt's
//     length and task label, the model with the highest P - lambda * cost
//     served;
//   - "cascade" (where the data records the models' answers): per task
//     label, the cascade plan with the highest mean score - lambda * mean
//     cost (llmgate::cascade_planner), replayed on the recorded answers
//     with every call's cost counted.
// The predictor and the cascade are curves over lambda (the same ladder),
// and each also has the points its lambda was chosen for on the learning
// queries alone, "match-best" and "95%" (llmgate::choose_cost_weight): the
// predictor's from its out-of-fold predictions, the cascade's from plans
// learned on 4/5 of the learning queries and replayed on the other fifth.
// The cascade's curve is a hybrid: per query, the task's cascade unless
// the predictor expects a single model to do better at that lambda.
// Reference policies: each single model; random (the expectation of a
// uniform choice); always the cheapest and always the most accurate model
// on the learning queries; the oracle (per query the cheapest of the
// best-scoring models).
#pragma once

#include <algorithm>  // std::max, std::min, std::sort, std::clamp
#include <cmath>      // std::log
#include <cstddef>    // std::size_t
#include <cstdio>     // std::snprintf
#include <limits>     // std::numeric_limits
#include <map>        // std::map
#include <optional>   // std::optional
#include <span>       // std::span
#include <string>     // std::string
#include <vector>     // std::vector

#include <llmgate/learn/cross_validation.hpp>
#include <llmgate/route/cascade_plan.hpp>
#include <llmgate/route/predictive_router.hpp>
#include <llmgate/route/local_analyser.hpp>
#include <llmgate/route/model_registry.hpp>
#include <llmgate/route/preferences.hpp>
#include <llmgate/route/router.hpp>
#include <llmgate/route/routing_target.hpp>
#include <llmgate/route/text_features.hpp>
#include <llmgate/tools/routing_outcomes.hpp>  // routing_dataset, read_routing_folder

#include "settings.hpp"  // router_settings

namespace route_eval {

/// One query with every model's outcome (tools/routing_outcomes.hpp reads them).
using query = llmgate::routing_outcome;

/// A policy's accuracy (0..1) and total cost (USD) on the evaluated queries.
struct point {
  std::string policy;
  double accuracy = 0;
  double cost = 0;
};

/// The preferences the router's sweep tries: accuracy against cost, then profiles.
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

/// The targets each learned curve has a chosen point for.
inline const std::vector<llmgate::routing_target>& chosen_targets() {
  static const std::vector<llmgate::routing_target> targets{llmgate::routing_target::parse("match-best"),
                                                            llmgate::routing_target::parse("95%")};
  return targets;
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
    for (std::size_t m = 0; m < models.size(); ++m) e.outcomes.emplace_back(models[m], q->score[m]);
    examples.push_back(std::move(e));
  }
  analyser.learn(examples);
  return llmgate::router(learn_registry(models, learning, settings.analyser.edge_words), std::move(analyser),
                         llmgate::preferences(), llmgate::weighted_score{}, settings.router);
}

/// Every policy, learned from the learning queries (file comment).
class learned_policies {
 public:
  learned_policies(const std::vector<std::string>& models, std::span<const query> learning,
                   std::vector<double> ladder, const router_settings& settings)
      : models_(models.size()),
        router_(learn_router(models, pointers(learning), settings)),
        sweep_(preference_sweep()),
        routing_(llmgate::predictive_routing::learn(models, learning, settings.predictor, ladder)),
        ladder_(std::move(ladder)),
        cascades_(has_answers(learning)) {
    const auto& registry = router_.registry();
    for (std::size_t m = 0; m < models_; ++m) {
      if (*registry.card(m).blended_price() < *registry.card(cheapest_).blended_price()) cheapest_ = m;
      if (*registry.card(m).accuracy > *registry.card(best_).accuracy) best_ = m;
    }
    for (const auto& target : chosen_targets()) predictor_choice_.push_back(routing_.for_target(target).second);
    if (cascades_) learn_cascades(learning);
  }

  /// The policies' names, in the order route() writes them.
  std::vector<std::string> policy_names(const std::vector<std::string>& models) const {
    std::vector<std::string> names = models;
    for (const char* reference : {"random", "cheapest", "best", "oracle"}) names.emplace_back(reference);
    for (const auto& wanted : sweep_) names.push_back("router:" + wanted.describe());
    for (const char* family : {"predictor", "cascade"}) {
      if (std::string(family) == "cascade" && !cascades_) continue;
      for (std::size_t i = 0; i < ladder_.size(); ++i) names.push_back(family + lambda_name(i));
      for (const auto& target : chosen_targets()) names.push_back(std::string(family) + "@" + target.describe());
    }
    return names;
  }

  /// Each policy's score and cost on `q`, in policy_names() order; and
  /// the predictor's squared error summed over the models.
  void route(const query& q, std::vector<double>& score, std::vector<double>& cost, double& squared_error) const {
    score.clear();
    cost.clear();
    const auto take = [&](double s, double c) { score.push_back(s), cost.push_back(c); };
    for (std::size_t m = 0; m < models_; ++m) take(q.score[m], q.cost[m]);
    double random_score = 0, random_cost = 0;
    std::size_t oracle = 0;
    for (std::size_t m = 0; m < models_; ++m) {
      random_score += q.score[m] / static_cast<double>(models_);
      random_cost += q.cost[m] / static_cast<double>(models_);
      if (q.score[m] > q.score[oracle] || (q.score[m] == q.score[oracle] && q.cost[m] < q.cost[oracle])) oracle = m;
    }
    take(random_score, random_cost);
    take(q.score[cheapest_], q.cost[cheapest_]);
    take(q.score[best_], q.cost[best_]);
    take(q.score[oracle], q.cost[oracle]);

    const auto task = router_.analyser().analyse(q.text);
    for (const auto& wanted : sweep_) {
      const auto m = router_.choose(task, wanted).model_index;
      take(q.score[m], q.cost[m]);
    }

    const auto p = routing_.predictor().predict(q.text, q.task);
    const auto expected = routing_.costs().of(q.text.size(), q.task);
    for (const double weight : ladder_) {
      const auto m = llmgate::best_trade_off(p, expected, weight);
      take(q.score[m], q.cost[m]);
    }
    for (const auto& choice : predictor_choice_) {
      const auto m = llmgate::best_trade_off(p, expected, choice.weight);
      take(q.score[m], q.cost[m]);
    }
    squared_error = 0;
    for (std::size_t m = 0; m < models_; ++m) squared_error += (p[m] - q.score[m]) * (p[m] - q.score[m]);

    if (!cascades_) return;
    const auto normal = llmgate::normalised_answers(q);
    for (std::size_t i = 0; i < ladder_.size(); ++i) {
      const auto r = hybrid(cascade_curve_[i], p, expected, ladder_[i], q, normal);
      take(r.score, r.cost);
    }
    for (std::size_t t = 0; t < cascade_chosen_.size(); ++t) {
      const auto r = hybrid(cascade_chosen_[t], p, expected, cascade_choice_[t].weight, q, normal);
      take(r.score, r.cost);
    }
  }

  const llmgate::router& router() const noexcept { return router_; }
  const std::vector<llmgate::predictor_fit_report>& predictor_report() const noexcept { return routing_.report(); }
  const std::vector<llmgate::chosen_cost_weight>& predictor_choices() const noexcept { return predictor_choice_; }
  const std::vector<llmgate::chosen_cost_weight>& cascade_choices() const noexcept { return cascade_choice_; }

 private:
  static std::vector<const query*> pointers(std::span<const query> queries) {
    std::vector<const query*> out;
    for (const auto& q : queries) out.push_back(&q);
    return out;
  }

  static bool has_answers(std::span<const query> queries) {
    for (const auto& q : queries)
      if (q.answer.size() != q.score.size()) return false;
    return true;
  }

  // The task's cascade, unless the predictor expects a single model to do
  // better at this weight for this query.
  static llmgate::cascade_replay hybrid(const llmgate::cascade_router& plans, std::span<const float> p,
                                        std::span<const double> expected, double weight, const query& q,
                                        std::span<const std::optional<std::string>> normal) {
    const auto m = llmgate::best_trade_off(p, expected, weight);
    const auto& planned = plans.plan_for(q.task);
    if (p[m] - weight * expected[m] >= planned.score - weight * planned.cost) return {q.score[m], q.cost[m], false};
    return llmgate::replay(planned.plan, q, normal);
  }

  std::string lambda_name(std::size_t i) const {
    char text[48];
    std::snprintf(text, sizeof text, ":lambda=%.4g", ladder_[i]);
    return text;
  }

  // The chosen lambdas from 5-fold replays of plans learned without the
  // fold; the curve and the chosen points from plans learned on all.
  void learn_cascades(std::span<const query> learning) {
    constexpr std::size_t folds = 5;
    const auto fold = llmgate::fold_assignment(learning.size(), folds, 1);
    std::vector<llmgate::policy_result> replayed(ladder_.size());
    std::vector<std::vector<std::optional<std::string>>> normal;
    for (const auto& q : learning) normal.push_back(llmgate::normalised_answers(q));
    for (std::size_t f = 0; f < folds; ++f) {
      std::vector<query> rest;
      for (const auto r : llmgate::rows_of_fold(fold, f, false)) rest.push_back(learning[r]);
      const llmgate::cascade_planner planner(models_, rest);
      for (std::size_t i = 0; i < ladder_.size(); ++i) {
        const auto plans = planner.plans_at(ladder_[i]);
        for (const auto r : llmgate::rows_of_fold(fold, f, true)) {
          const auto result = hybrid(plans, routing_.out_of_fold_probabilities()[r],
                                     routing_.costs().of(learning[r].text.size(), learning[r].task), ladder_[i],
                                     learning[r], normal[r]);
          replayed[i].accuracy += result.score / static_cast<double>(learning.size());
          replayed[i].cost += result.cost / static_cast<double>(learning.size());
        }
      }
    }
    const llmgate::cascade_planner planner(models_, learning);
    for (const double weight : ladder_) cascade_curve_.push_back(planner.plans_at(weight));
    for (const auto& target : chosen_targets()) {
      cascade_choice_.push_back(
          llmgate::choose_cost_weight(target, routing_.best_single_accuracy(), ladder_, replayed));
      cascade_chosen_.push_back(planner.plans_at(cascade_choice_.back().weight));
    }
  }

  std::size_t models_;
  llmgate::router router_;
  std::vector<llmgate::preferences> sweep_;
  llmgate::predictive_routing routing_;
  std::vector<double> ladder_;
  bool cascades_;
  std::size_t cheapest_ = 0, best_ = 0;
  std::vector<llmgate::chosen_cost_weight> predictor_choice_, cascade_choice_;
  std::vector<llmgate::cascade_router> cascade_curve_, cascade_chosen_;
};

/// Every policy's score and cost on every evaluated query.
struct routed_queries {
  std::vector<std::string> policies;
  std::vector<std::string> dataset;               ///< per query
  std::vector<std::vector<double>> score, cost;   ///< per query, per policy
  std::vector<double> squared_error;              ///< per query: the predictor's, summed over models
  std::size_t models = 0;

  void add(const learned_policies& learned, const std::string& dataset_name, const query& q) {
    dataset.push_back(dataset_name);
    score.emplace_back();
    cost.emplace_back();
    squared_error.emplace_back();
    learned.route(q, score.back(), cost.back(), squared_error.back());
  }
};

/// A learned family's curve, and its points chosen on the learning queries.
struct family_result {
  std::string name;             ///< "router", "predictor", "cascade"
  std::vector<point> curve;
  std::vector<point> chosen;    ///< per chosen_targets(); empty for the router
  std::optional<double> cost_to_match;  ///< cheapest curve point within 0.5 points of best_single (picked on the evaluated set)
  double normalised_auc = 0;    ///< area_under_curve over the oracle's accuracy across the range
};

struct dataset_result {
  std::string name;
  std::size_t learned_from = 0;
  std::size_t evaluated = 0;
  std::vector<point> singles;  ///< one per model, in the dataset's order
  point random, cheapest, best, oracle;
  std::vector<family_result> families;
  point best_single;           ///< the single model most accurate on the evaluated queries
  double brier = 0;            ///< the predictor's, over every model and query
  double base_rate_brier = 0;  ///< predicting each model's accuracy on the evaluated queries for every query
};

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

/// The figures of the queries of `routed` from dataset `name` (every
/// query when `name` is the format's: the pooled figures).
inline dataset_result summarise(const std::string& name, bool pooled, const routed_queries& routed,
                                std::size_t learned_from, std::span<const query* const> evaluated_queries) {
  dataset_result r;
  r.name = name;
  r.learned_from = learned_from;
  const auto& policies = routed.policies;
  std::vector<point> points(policies.size());
  for (std::size_t p = 0; p < policies.size(); ++p) points[p].policy = policies[p];
  std::vector<double> model_sum(routed.models, 0.0);
  std::vector<const query*> mine;
  double squared_error = 0;
  for (std::size_t i = 0; i < routed.dataset.size(); ++i) {
    if (!pooled && routed.dataset[i] != name) continue;
    ++r.evaluated;
    mine.push_back(evaluated_queries[i]);
    squared_error += routed.squared_error[i];
    for (std::size_t p = 0; p < policies.size(); ++p) {
      points[p].accuracy += routed.score[i][p];
      points[p].cost += routed.cost[i][p];
    }
  }
  const double n = static_cast<double>(r.evaluated);
  for (auto& p : points) p.accuracy /= n;
  r.brier = squared_error / n / static_cast<double>(routed.models);
  for (std::size_t m = 0; m < routed.models; ++m) {
    std::vector<float> outcomes;
    for (const auto* q : mine) outcomes.push_back(q->score[m]);
    r.base_rate_brier += llmgate::base_rate_brier_score(outcomes) / static_cast<double>(routed.models);
  }

  std::size_t p = 0;
  for (; p < routed.models; ++p) r.singles.push_back(points[p]);
  r.random = points[p++];
  r.cheapest = points[p++];
  r.best = points[p++];
  r.oracle = points[p++];
  r.best_single = r.singles.front();
  for (const auto& s : r.singles)
    if (s.accuracy > r.best_single.accuracy || (s.accuracy == r.best_single.accuracy && s.cost < r.best_single.cost))
      r.best_single = s;
  for (; p < points.size(); ++p) {
    const auto& policy = points[p].policy;
    const auto family = policy.substr(0, policy.find_first_of(":@"));
    if (r.families.empty() || r.families.back().name != family) {
      r.families.emplace_back();
      r.families.back().name = family;
    }
    auto& f = r.families.back();
    (policy[family.size()] == '@' ? f.chosen : f.curve).push_back(points[p]);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& s : r.singles) lo = std::min(lo, s.cost), hi = std::max(hi, s.cost);
  for (auto& f : r.families) {
    for (const auto& c : f.curve)
      if (c.accuracy >= r.best_single.accuracy - llmgate::routing_target::match_tolerance &&
          (!f.cost_to_match || c.cost < *f.cost_to_match))
        f.cost_to_match = c.cost;
    // Normalised by the oracle's accuracy over the whole range: the ceiling.
    if (lo > 0 && hi > lo) f.normalised_auc = area_under_curve(f.curve, lo, hi) / (r.oracle.accuracy * std::log(hi / lo));
  }
  return r;
}

}  // namespace route_eval
