// routing_target: what the user asks of the cost/quality trade-off, and
// the cost weight that meets it, chosen on outcomes the router's
// predictions were not fitted on (out of fold, see
// correctness_predictor.hpp). The user says what they want in their terms,
//   match-best    the accuracy of the best single model (within 0.5 points)
//   95%           that share of the best single model's accuracy
//   cost<=0.002   at most this mean cost per request (USD), as accurate as
//                 possible within it
// and the router turns it into the weight lambda of its rule "the model
// with the highest P(right) - lambda * expected cost" by trying every
// lambda on the training outcomes: of the lambdas that meet the target,
// the cheapest (for a cost cap, the most accurate); when none does, the
// most accurate (for a cost cap, the cheapest), and it says so. Of
// neighbouring lambdas with the same result, the middle one.
#pragma once

#include <charconv>      // std::from_chars
#include <cmath>         // std::pow
#include <cstddef>       // std::size_t
#include <cstdio>        // std::snprintf
#include <span>          // std::span
#include <stdexcept>     // std::invalid_argument
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::errc
#include <vector>        // std::vector

namespace llmgate::inline v0 {

struct routing_target {
  enum class kind { match_best, share_of_best, cost_cap };
  kind what = kind::match_best;
  double value = 0;  ///< share_of_best: 0..1; cost_cap: USD per request

  /// How far below the best single model "match" may fall (0.5 points).
  static constexpr double match_tolerance = 0.005;

  /// "match-best", "95%" (or "0.95"), "cost<=0.002". Throws
  /// std::invalid_argument naming the forms it takes.
  static routing_target parse(std::string_view text) {
    const auto number = [&](std::string_view digits) {
      double v = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc() || end != digits.data() + digits.size() || !(v > 0))
        throw std::invalid_argument("routing target '" + std::string(text) +
                                    "': expected match-best, a share of the best model's accuracy (95% or 0.95) "
                                    "or cost<=USD per request");
      return v;
    };
    if (text == "match-best") return {};
    if (text.starts_with("cost<=")) return {kind::cost_cap, number(text.substr(6))};
    const bool percent = text.ends_with('%');
    const double share = number(percent ? text.substr(0, text.size() - 1) : text) / (percent ? 100 : 1);
    if (share > 1) throw std::invalid_argument("routing target '" + std::string(text) + "': a share is at most 100%");
    return {kind::share_of_best, share};
  }

  /// The form parse() reads: "match-best", "95%", "cost<=0.002".
  std::string describe() const {
    char text[48] = "match-best";
    if (what == kind::share_of_best) std::snprintf(text, sizeof text, "%g%%", value * 100);
    if (what == kind::cost_cap) std::snprintf(text, sizeof text, "cost<=%g", value);
    return text;
  }
};

/// Mean accuracy and mean cost per request of a policy on some outcomes.
struct policy_result {
  double accuracy = 0;
  double cost = 0;
};

/// The index of the model with the highest probability - weight * cost.
inline std::size_t best_trade_off(std::span<const float> probability, std::span<const double> cost, double weight) {
  std::size_t best = 0;
  double best_value = probability[0] - weight * cost[0];
  for (std::size_t m = 1; m < probability.size(); ++m) {
    const double value = probability[m] - weight * cost[m];
    if (value > best_value) best = m, best_value = value;
  }
  return best;
}

/// The weights tried: 0 and a log-spaced ladder wide enough that its top
/// picks the cheapest model whatever the probabilities (1 / the smallest
/// cost gap is more than enough) and its bottom is a hair above 0.
inline std::vector<double> cost_weight_ladder(double smallest_cost, double largest_cost, std::size_t steps = 120) {
  std::vector<double> ladder{0.0};
  const double low = 1e-4 / largest_cost, high = 10.0 / smallest_cost;
  for (std::size_t i = 0; i < steps; ++i)
    ladder.push_back(low * std::pow(high / low, static_cast<double>(i) / static_cast<double>(steps - 1)));
  return ladder;
}

/// The choice of weight and what it did on the outcomes it was chosen on.
struct chosen_cost_weight {
  double weight = 0;
  policy_result result;  ///< at `weight`
  double wanted_accuracy = 0;  ///< what the target asks (0 for a cost cap)
  bool met = false;      ///< false: no weight meets the target; the most accurate was taken
};

namespace detail {

// Of the run of neighbouring weights around `weight` whose results are the
// same, the middle one: the learned predictions change a little once
// refitted on every outcome, and a weight at the edge of its run would
// then move requests the run's others keep where they are.
inline double middle_of_plateau(std::span<const double> ladder, std::span<const policy_result> results, double weight) {
  std::size_t at = 0;
  while (ladder[at] != weight) ++at;
  const auto same = [&](std::size_t i) {
    return results[i].accuracy == results[at].accuracy && results[i].cost == results[at].cost;
  };
  std::size_t first = at, last = at;
  while (first > 0 && same(first - 1)) --first;
  while (last + 1 < ladder.size() && same(last + 1)) ++last;
  return ladder[(first + last) / 2];
}

}  // namespace detail

/// The weight for `target` (file comment) among `ladder`, from `results`:
/// what the policy does with each of those weights on outcomes it was not
/// fitted on. `best_single`: the best single model's accuracy on those
/// outcomes. Throws std::invalid_argument when the sizes differ or are 0.
inline chosen_cost_weight choose_cost_weight(const routing_target& target, double best_single,
                                             std::span<const double> ladder, std::span<const policy_result> results) {
  if (ladder.size() != results.size() || ladder.empty())
    throw std::invalid_argument("choose_cost_weight: one result per weight of the ladder is needed");
  chosen_cost_weight choice;
  choice.wanted_accuracy = target.what == routing_target::kind::match_best ? best_single - routing_target::match_tolerance
                           : target.what == routing_target::kind::share_of_best ? target.value * best_single
                                                                               : 0.0;
  const bool capped = target.what == routing_target::kind::cost_cap;
  chosen_cost_weight fallback;  // the most accurate, or for a cost cap the cheapest
  bool have_fallback = false;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    const double weight = ladder[i];
    const auto& r = results[i];
    const bool meets = capped ? r.cost <= target.value : r.accuracy >= choice.wanted_accuracy;
    const bool better = capped ? r.accuracy > choice.result.accuracy : r.cost < choice.result.cost;
    if (meets && (!choice.met || better)) choice.weight = weight, choice.result = r, choice.met = true;
    const bool better_fallback = capped ? r.cost < fallback.result.cost : r.accuracy > fallback.result.accuracy;
    if (!have_fallback || better_fallback) fallback.weight = weight, fallback.result = r, have_fallback = true;
  }
  auto& chosen = choice.met ? choice : fallback;
  chosen.wanted_accuracy = choice.wanted_accuracy;
  chosen.weight = detail::middle_of_plateau(ladder, results, chosen.weight);
  return chosen;
}

}  // namespace llmgate::inline v0
