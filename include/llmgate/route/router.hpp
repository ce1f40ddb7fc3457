// basic_router: picks the model for a request from the registry, by the
// user's preferences and the request's task.
//
//   llmgate::router route(llmgate::model_registry::load("models.json"), analyser);
//   auto choice = route.route("Write a function that merges two sorted lists");
//   log(choice.reasons());      // why this model
//   call(choice.model, ...);
//   route.feedback(choice, user_liked_it);
//
// A decision, step by step:
//   1. the task analyser gives task type, domain and complexity (and, from
//      the local analyser, how models did on similar labelled requests);
//   2. the query vector is the preference weights, leaning towards accuracy
//      for complex tasks and towards cost and latency for simple ones:
//      w_accuracy *= 1 + i (c - 0.5), w_cost and w_latency *= 1 - i (c - 0.5)
//      for complexity c and complexity_influence i;
//   3. kNN over the model vectors (each model's normalised ratings) with the
//      vector index: the `shortlist` models whose ratings agree best with the
//      weights (largest inner product), among those that pass the filters:
//      tagged for the task type and domain, long enough a context, enough
//      uptime;
//   4. each shortlisted model's accuracy for this request is estimated as
//        (p * s + e_w * e_mean + up) / (s + e_w + up + down)
//      with p its registry accuracy for the task type and domain (a figure
//      measured on few requests pulled towards its overall accuracy, see
//      model_registry::accuracy_for and overall_accuracy_weight), s the
//      prior_strength, e_w and e_mean the analyser's evidence for it, and
//      up / down the feedback votes for that task type and domain; the
//      RoutingScore ranks the models with that accuracy;
//   5. when no model passes the filters (or the score rules all out), the
//      best generalist (any model where none is marked) is chosen and the
//      decision says so in `fallback`.
//
// Thread safety: route(), choose() and feedback() may run on many threads
// at once (the analyser's analyse() must allow it, as llmgate's do).
#pragma once

#include <algorithm>    // std::stable_sort, std::sample, std::clamp, std::ranges::any_of
#include <cmath>        // std::isinf, std::ceil
#include <concepts>     // std::convertible_to
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::snprintf
#include <filesystem>   // std::filesystem::path
#include <iterator>     // std::back_inserter
#include <random>       // std::mt19937_64
#include <ranges>       // std::ranges::random_access_range
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::error_code
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // model name -> index

#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/metric.hpp"
#include "llmgate/index/vector_index.hpp"
#include "llmgate/route/feedback_ledger.hpp"
#include "llmgate/route/local_analyser.hpp"
#include "llmgate/route/model_registry.hpp"
#include "llmgate/route/preferences.hpp"
#include "llmgate/route/quality.hpp"
#include "llmgate/route/routing_score.hpp"
#include "llmgate/route/task_analyser.hpp"

namespace llmgate::inline v0 {

struct router_options {
  std::size_t shortlist = 32;          ///< models the kNN over model vectors hands to the score
  float prior_strength = 4.0f;         ///< the registry's accuracy counts as this many similar requests
  float overall_accuracy_weight = 50.0f;  ///< requests' worth of overall accuracy a measured task figure is pulled towards
  float complexity_influence = 1.0f;   ///< 0: complexity leaves the weights alone
  float minimum_uptime = 0.0f;         ///< models known to be up less than this are filtered out
};

/// A model the router considered, with what it thought of it.
struct ranked_model {
  std::size_t index;         ///< in the registry
  std::string_view model;    ///< its name (owned by the router's registry)
  float score;
  float expected_accuracy;   ///< raw 0..1
};

struct routing_decision {
  std::string_view policy = "registry";  ///< how it was chosen: "registry" (basic_router), "predictor" (predictive_router)
  std::size_t model_index = 0;
  std::string_view model;    ///< the chosen model's name (owned by the router's registry)
  std::string_view backend;  ///< its backend; empty: the default one
  bool fallback = false;     ///< no model passed the filters and the score: a generalist was chosen
  task_profile task;
  quality_vector weights{};            ///< the query vector: preferences adjusted for the task
  std::vector<ranked_model> ranking;   ///< the models considered, best first; the first is chosen

  /// One line for logs: what was chosen, why, and the runner-up.
  std::string reasons() const {
    std::string text = "chose " + std::string(model);
    if (policy == "predictor") {
      if (!ranking.empty())
        text += " by its predicted chance of answering right, " + number(ranking[0].expected_accuracy) +
                ", less the cost weight times its expected cost (score " + number(ranking[0].score) + ")";
      if (ranking.size() > 1)
        text += "; runner-up " + std::string(ranking[1].model) + " (chance " + number(ranking[1].expected_accuracy) +
                ", score " + number(ranking[1].score) + ")";
      return text;
    }
    if (!ranking.empty()) text += " (score " + number(ranking[0].score) + ", expected accuracy " +
                                  number(ranking[0].expected_accuracy) + ")";
    text += " for task '" + task.task_type + "' in domain '" + task.domain + "', complexity " +
            number(task.complexity);
    text += "; weights";
    for (std::size_t q = 0; q < quality_count; ++q)
      if (weights[q] > 0) text += " " + std::string(quality_names[q]) + "=" + number(weights[q]);
    if (fallback) text += "; fallback: no model passed the filters for this task, chose a generalist";
    if (ranking.size() > 1)
      text += "; runner-up " + std::string(ranking[1].model) + " (score " + number(ranking[1].score) + ")";
    if (!task.evidence.empty()) text += "; evidence from similar requests on " + std::to_string(task.evidence.size()) + " models";
    if (!task.fallback_reason.empty()) text += "; analyser: " + task.fallback_reason;
    return text;
  }

 private:
  static std::string number(float x) {
    char text[16];
    std::snprintf(text, sizeof text, "%.3g", static_cast<double>(x));
    return text;
  }
};

/// The model chosen for a whole batch of similar requests.
struct batch_decision {
  std::size_t model_index = 0;
  std::string_view model;
  bool fallback = false;                 ///< a sampled decision fell back to a generalist
  std::vector<std::size_t> sampled;      ///< positions of the requests routed, ascending
  std::vector<std::pair<std::string_view, std::size_t>> votes;  ///< how often each model was chosen, most first
};

struct batch_options {
  double sample_share = 0.02;   ///< share of the batch routed one by one (at least one request)
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;  ///< the sample's random seed
};

template <TaskAnalyser A = local_analyser, RoutingScore S = weighted_score,
          VectorIndex I = flat_index<inner_product_metric>>
  requires std::constructible_from<I, std::size_t>
class basic_router {
 public:
  /// Throws std::invalid_argument for an empty registry.
  basic_router(model_registry registry, A analyser, preferences defaults = {}, S score = {},
               router_options options = {})
      : registry_(std::move(registry)),
        analyser_(std::move(analyser)),
        defaults_(std::move(defaults)),
        score_(std::move(score)),
        options_(options),
        models_(quality_count) {
    if (registry_.empty()) throw std::invalid_argument("router: the model registry is empty");
    for (std::size_t m = 0; m < registry_.size(); ++m) {
      if (const auto ec = models_.add(m, registry_.qualities(m))) throw error(ec, "router: indexing the models");
      index_of_.emplace(registry_.card(m).name, m);
    }
  }

  /// Routes under the default preferences.
  routing_decision route(std::string_view request) const { return route(request, defaults_); }

  /// Routes under the request's own preferences (an override of the defaults).
  routing_decision route(std::string_view request, const preferences& wanted) const {
    return choose(analyser_.analyse(request), wanted, approximate_tokens(request));
  }

  /// Steps 2 to 5 for a task analysed already (e.g. to try several
  /// preferences on one analysis). `request_tokens` 0: context not checked.
  routing_decision choose(task_profile task, const preferences& wanted, std::size_t request_tokens = 0) const {
    routing_decision d;
    d.weights = adjusted_weights(wanted.weights(), task.complexity);
    d.task = std::move(task);
    const auto evidence = evidence_by_model(d.task);
    const auto key = registry_.key_of(d.task.task_type, d.task.domain);
    const bool any_votes = feedback_.size() > 0;  // one lock, not one per model
    d.ranking.reserve(std::min(options_.shortlist, registry_.size()));

    const auto eligible = [&](vector_id m) {
      const auto& c = registry_.card(m);
      return registry_.serves(m, key) &&
             (!c.uptime || *c.uptime >= options_.minimum_uptime) &&
             (!c.context_length || request_tokens <= *c.context_length);
    };
    for (const auto& hit : models_.search(d.weights, options_.shortlist, eligible))
      rank(d, hit.id, key, evidence, any_votes);
    std::erase_if(d.ranking, [](const ranked_model& r) { return std::isinf(r.score) && r.score < 0; });

    if (d.ranking.empty()) {
      d.fallback = true;
      const bool any_marked = std::ranges::any_of(registry_.cards(), &model_card::generalist);
      for (std::size_t m = 0; m < registry_.size(); ++m)
        if (!any_marked || registry_.card(m).generalist) rank(d, m, key, evidence, any_votes);
    }
    std::stable_sort(d.ranking.begin(), d.ranking.end(),
                     [](const ranked_model& a, const ranked_model& b) { return a.score > b.score; });
    d.model_index = d.ranking.front().index;
    d.model = d.ranking.front().model;
    d.backend = registry_.card(d.model_index).backend;
    return d;
  }

  /// Routes a sample of a batch of similar requests one by one and picks
  /// the model chosen most often (ties: the higher summed score) for all of
  /// them. Throws std::invalid_argument for an empty batch.
  template <std::ranges::random_access_range R>
    requires std::convertible_to<std::ranges::range_reference_t<const R&>, std::string_view>
  batch_decision route_batch(const R& requests, const preferences& wanted, batch_options options = {}) const {
    const auto size = static_cast<std::size_t>(std::ranges::size(requests));
    if (size == 0) throw std::invalid_argument("router: route_batch needs at least one request");
    const auto wanted_count = static_cast<std::size_t>(std::ceil(options.sample_share * static_cast<double>(size)));
    batch_decision b;
    std::vector<std::size_t> positions(size);
    for (std::size_t i = 0; i < size; ++i) positions[i] = i;
    std::mt19937_64 random(options.seed);
    std::sample(positions.begin(), positions.end(), std::back_inserter(b.sampled),
                std::clamp<std::size_t>(wanted_count, 1, size), random);

    std::vector<std::size_t> chosen(registry_.size(), 0);
    std::vector<float> score_sum(registry_.size(), 0.0f);
    for (const auto position : b.sampled) {
      const auto d = route(std::string_view(std::ranges::begin(requests)[position]), wanted);
      ++chosen[d.model_index];
      score_sum[d.model_index] += d.ranking.front().score;
      b.fallback = b.fallback || d.fallback;
    }
    std::size_t best = 0;
    for (std::size_t m = 0; m < registry_.size(); ++m) {
      if (chosen[m] > chosen[best] || (chosen[m] == chosen[best] && score_sum[m] > score_sum[best])) best = m;
      if (chosen[m] > 0) b.votes.emplace_back(registry_.card(m).name, chosen[m]);
    }
    std::stable_sort(b.votes.begin(), b.votes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    b.model_index = best;
    b.model = registry_.card(best).name;
    return b;
  }

  /// A user's thumbs up or down on the answer of the model `decision` chose.
  void feedback(const routing_decision& decision, bool thumbs_up) {
    feedback_.record(decision.model, decision.task.task_type, decision.task.domain, thumbs_up);
  }

  const feedback_ledger& ledger() const noexcept { return feedback_; }

  /// Saves the feedback atomically (see feedback_ledger).
  [[nodiscard]] std::error_code save_feedback(const std::filesystem::path& path) const { return feedback_.save(path); }

  /// Replaces the feedback with a saved one. Throws llmgate::error naming
  /// the file and the cause when it cannot be read or is damaged.
  void load_feedback(const std::filesystem::path& path) { feedback_ = feedback_ledger::load(path); }

  const model_registry& registry() const noexcept { return registry_; }
  const A& analyser() const noexcept { return analyser_; }
  A& analyser() noexcept { return analyser_; }
  const preferences& default_preferences() const noexcept { return defaults_; }
  const router_options& options() const noexcept { return options_; }

 private:
  // The analyser's evidence by registry index: {weight, mean score}.
  std::vector<std::pair<float, float>> evidence_by_model(const task_profile& task) const {
    std::vector<std::pair<float, float>> evidence(task.evidence.empty() ? 0 : registry_.size(), {0.0f, 0.0f});
    for (const auto& e : task.evidence)
      if (const auto found = index_of_.find(e.model); found != index_of_.end())
        evidence[found->second] = {e.weight, e.mean_score};
    return evidence;
  }

  quality_vector adjusted_weights(quality_vector w, float complexity) const noexcept {
    const float lean = options_.complexity_influence * (complexity - 0.5f);
    w[index_of(quality::accuracy)] *= std::max(0.0f, 1.0f + lean);
    w[index_of(quality::cost)] *= std::max(0.0f, 1.0f - lean);
    w[index_of(quality::latency)] *= std::max(0.0f, 1.0f - lean);
    return w;
  }

  void rank(routing_decision& d, std::size_t m, const model_registry::task_key& key,
            const std::vector<std::pair<float, float>>& evidence, bool any_votes) const {
    const auto& c = registry_.card(m);
    const double prior = registry_.accuracy_for(m, key, options_.overall_accuracy_weight);
    const auto votes = any_votes ? feedback_.votes(c.name, d.task.task_type, d.task.domain) : feedback_votes{};
    const auto [evidence_weight, evidence_mean] = evidence.empty() ? std::pair{0.0f, 0.0f} : evidence[m];
    const double s = options_.prior_strength;
    const double expected = (prior * s + evidence_weight * evidence_mean + static_cast<double>(votes.up)) /
                            (s + evidence_weight + static_cast<double>(votes.up + votes.down));
    routing_candidate candidate{m, &c, registry_.qualities(m), expected};
    candidate.qualities[index_of(quality::accuracy)] = registry_.normalised_accuracy(expected);
    d.ranking.push_back({m, c.name, static_cast<float>(score_(candidate, d.weights)), static_cast<float>(expected)});
  }

  // About four bytes a token in English text and code.
  static std::size_t approximate_tokens(std::string_view text) noexcept { return text.size() / 4 + 1; }

  model_registry registry_;
  A analyser_;
  preferences defaults_;
  S score_;
  router_options options_;
  I models_;  // one vector per model: its normalised ratings
  boost::unordered_flat_map<std::string_view, std::size_t> index_of_;  // names owned by registry_
  feedback_ledger feedback_;
};

using router = basic_router<>;

}  // namespace llmgate::inline v0
