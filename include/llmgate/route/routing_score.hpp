// The RoutingScore concept: how the router ranks the models that passed
// its filters, and two models of it: the weighted preferences (default)
// and a cost cap in front of them.
#pragma once

#include <concepts>  // std::convertible_to
#include <cstddef>   // std::size_t
#include <limits>    // std::numeric_limits

#include "llmgate/route/model_registry.hpp"
#include "llmgate/route/quality.hpp"

namespace llmgate::inline v0 {

/// One model the router may choose, as a score sees it.
struct routing_candidate {
  std::size_t model;           ///< index in the registry
  const model_card* card;      ///< its raw metrics
  quality_vector qualities;    ///< its ratings 0..1; accuracy is the one expected for this request
  double expected_accuracy;    ///< raw, 0..1: what the router expects it to score on this request
};

/// score(candidate, weights) says how well a model fits a request under
/// the weights the router derived from preferences and task; higher is
/// better, and -infinity rules the model out.
template <class S>
concept RoutingScore = requires(const S& score, const routing_candidate& candidate, const quality_vector& weights) {
  { score(candidate, weights) } -> std::convertible_to<float>;
};

/// The weighted mean of the candidate's ratings: sum w_q * r_q / sum w_q.
struct weighted_score {
  float operator()(const routing_candidate& candidate, const quality_vector& weights) const noexcept {
    float sum = 0, total = 0;
    for (std::size_t q = 0; q < quality_count; ++q) {
      sum += weights[q] * candidate.qualities[q];
      total += weights[q];
    }
    return total > 0 ? sum / total : 0.0f;
  }
};

/// Rules out models whose blended price (USD per million tokens, see
/// model_card::blended_price) is above the cap, or unknown, so the cap is
/// a guarantee; ranks the rest by `Base`.
template <RoutingScore Base = weighted_score>
struct cost_capped_score {
  double max_price_per_million;
  Base base = {};

  float operator()(const routing_candidate& candidate, const quality_vector& weights) const {
    const auto price = candidate.card->blended_price();
    if (!price || *price > max_price_per_million) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(base(candidate, weights));
  }
};

static_assert(RoutingScore<weighted_score>);
static_assert(RoutingScore<cost_capped_score<>>);

}  // namespace llmgate::inline v0
