// evaluation_cost: what a candidate's tokens cost, per 1K tokens (input
// and output together), and how much cheaper it is than the reference.
//   - API model: its prices per 1K input and output tokens, weighted by the
//     tokens the run sent and received:
//       (in * input_per_1k + out * output_per_1k) / (in + out);
//   - self-hosted model: the instance's price per hour over the tokens it
//     processes in an hour at the throughput measured in the run, busy
//     `utilization` of the time:
//       instance_per_hour / (tokens_per_s * 3600 * utilization) * 1000.
#pragma once

#include <cstdint>  // std::uint64_t

#include "llmgate/eval/plan/evaluation_plan.hpp"  // evaluation_price

namespace llmgate::inline v0 {

/// USD per 1K tokens of an API model; 0 when no token was counted.
inline double api_cost_per_1k_tokens(const evaluation_price& price, std::uint64_t tokens_in,
                                     std::uint64_t tokens_out) noexcept {
  const double total = static_cast<double>(tokens_in) + static_cast<double>(tokens_out);
  if (total == 0) return 0;
  return (static_cast<double>(tokens_in) * price.input_per_1k + static_cast<double>(tokens_out) * price.output_per_1k) /
         total;
}

/// USD per 1K tokens of a self-hosted model at `tokens_per_s` (input and
/// output); 0 when the throughput or the utilisation is not positive.
inline double self_hosted_cost_per_1k_tokens(const evaluation_price& price, double tokens_per_s) noexcept {
  if (!(tokens_per_s > 0) || !(price.utilization > 0)) return 0;
  return price.instance_per_hour / (tokens_per_s * 3600 * price.utilization) * 1000;
}

/// The cost per 1K tokens by the price's kind (price.self_hosted()).
inline double cost_per_1k_tokens(const evaluation_price& price, std::uint64_t tokens_in, std::uint64_t tokens_out,
                                 double tokens_per_s) noexcept {
  return price.self_hosted() ? self_hosted_cost_per_1k_tokens(price, tokens_per_s)
                             : api_cost_per_1k_tokens(price, tokens_in, tokens_out);
}

/// How many times cheaper than the reference: reference / candidate cost;
/// 0 when either is 0 (a free or unpriced model has no ratio).
inline double cost_reduction(double reference_cost_per_1k, double candidate_cost_per_1k) noexcept {
  if (!(reference_cost_per_1k > 0) || !(candidate_cost_per_1k > 0)) return 0;
  return reference_cost_per_1k / candidate_cost_per_1k;
}

}  // namespace llmgate::inline v0
