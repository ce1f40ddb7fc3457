// summarize: the figures a run comes to (evaluation_summary.hpp) from the
// results, scores and ratings the run store holds.
//
// What counts: only evaluation requests (warm-up, judge and latency
// schedule requests are not in these figures; the report's latency by hour
// reads the schedule's results itself).
//   - requests, errors (by kind), resent: every evaluation result;
//   - latency, TTFT, per-token latency, tokens and throughput: the ok ones
//     (a refused connection's few milliseconds are no latency of the model);
//     TTFT over those that saw a first token, per-token latency over those
//     where it can be told (request_result::per_token_ms);
//   - tokens_per_s: the input and output tokens of the ok results over the
//     time the candidate was busy, the union of their [start, start +
//     latency] intervals, so concurrent requests are not counted twice;
//   - quantiles: linear interpolation between the closest ranks
//     (Hyndman and Fan's type 7, numpy's default): 0 of no values;
//   - scores: the mean of each method's values over the candidate's
//     answers (a judge's unparsed verdict has no value and is left out);
//   - judge_parsed_fraction: of the score records of "judge:" methods on
//     the candidate's answers, those with a value;
//   - agreement (only when somebody rated): for each method with scores,
//     its ranking of the candidates (mean score) against the people's (mean
//     rating), over the candidates both rank.
#pragma once

#include <algorithm>    // std::clamp, std::max, std::sort
#include <cmath>        // std::floor
#include <cstddef>      // std::size_t
#include <map>          // std::map
#include <set>          // std::set
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include "llmgate/eval/score/agreement.hpp"            // bottom_k_jaccard, candidate_scores, spearman
#include "llmgate/eval/report/evaluation_cost.hpp"     // cost_per_1k_tokens, cost_reduction
#include "llmgate/eval/plan/evaluation_plan.hpp"       // evaluation_plan
#include "llmgate/eval/report/evaluation_summary.hpp"  // evaluation_summary, candidate_summary, method_agreement
#include "llmgate/eval/run/run_records.hpp"            // request_result, score_record, rating_record

namespace llmgate::inline v0 {

/// The p-quantile (p in [0, 1]) of `values` by linear interpolation between
/// the closest ranks: with the values sorted, position h = (n - 1) p lies
/// between x[floor h] and x[floor h + 1]. 0 for no values.
inline double quantile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double h = static_cast<double>(values.size() - 1) * std::clamp(p, 0.0, 1.0);
  const auto below = static_cast<std::size_t>(std::floor(h));
  if (below + 1 >= values.size()) return values.back();
  return values[below] + (h - static_cast<double>(below)) * (values[below + 1] - values[below]);
}

/// The length in milliseconds of the union of [start, end] intervals.
inline double busy_ms(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  bool open = false;
  double start = 0, end = 0;
  for (const auto& [s, e] : intervals) {
    if (open && s <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += end - start;
    start = s;
    end = e;
    open = true;
  }
  if (open) total += end - start;
  return total;
}

namespace detail {

inline double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

}  // namespace detail

/// Every figure of evaluation_summary for the plan's candidates, in the
/// plan's order. Score records and ratings are matched to candidates through
/// their request keys; those of keys no evaluation result has are ignored.
inline evaluation_summary summarize(const evaluation_plan& plan, std::span<const request_result> results,
                                    std::span<const score_record> scores, std::span<const rating_record> ratings) {
  evaluation_summary out;
  out.reference = plan.reference;

  std::map<std::string_view, std::size_t> index;  // candidate -> position in out.candidates
  for (const auto& c : plan.candidates) {
    index.emplace(c.name, out.candidates.size());
    candidate_summary summary;
    summary.candidate = c.name;
    out.candidates.push_back(std::move(summary));
  }

  // Per candidate: what the figures are computed from.
  struct gathered {
    std::vector<double> latency, ttft, per_token, overhead;
    std::vector<std::pair<double, double>> busy;
    std::map<std::string, std::vector<double>> scores;
    std::size_t judge_records = 0, judge_parsed = 0;
    std::vector<double> ratings;
  };
  std::vector<gathered> data(out.candidates.size());
  std::map<std::string_view, std::size_t> owner;  // evaluation request key -> candidate position

  for (const auto& r : results) {
    if (r.request.kind != request_kind::evaluation) continue;
    const auto it = index.find(r.request.candidate);
    if (it == index.end()) continue;
    auto& c = out.candidates[it->second];
    auto& d = data[it->second];
    owner.emplace(r.request.key, it->second);
    ++c.requests;
    if (r.attempts > 1) ++c.resent;
    d.overhead.push_back(r.overhead_us);
    if (!r.ok()) {
      ++c.errors;
      ++c.errors_by_kind[std::string(to_string(r.error))];
      continue;
    }
    d.latency.push_back(r.latency_ms);
    if (r.ttft_ms > 0) d.ttft.push_back(r.ttft_ms);
    if (const double t = r.per_token_ms(); t > 0) d.per_token.push_back(t);
    c.tokens_in += r.tokens_in;
    c.tokens_out += r.tokens_out;
    const auto start = static_cast<double>(r.started_unix_ms);
    d.busy.emplace_back(start, start + r.latency_ms);
  }

  for (const auto& s : scores) {
    const auto it = owner.find(s.request_key);
    if (it == owner.end()) continue;
    auto& d = data[it->second];
    const bool judge = std::string_view(s.method).starts_with("judge:");
    if (judge) ++d.judge_records;
    if (!s.value) continue;
    if (judge) ++d.judge_parsed;
    d.scores[s.method].push_back(*s.value);
  }

  for (const auto& r : ratings)
    if (const auto it = owner.find(r.request_key); it != owner.end())
      data[it->second].ratings.push_back(static_cast<double>(r.score) / 10);

  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    auto& c = out.candidates[i];
    const auto& d = data[i];
    c.latency_p50_ms = quantile(d.latency, 0.5);
    c.latency_p90_ms = quantile(d.latency, 0.9);
    c.latency_p99_ms = quantile(d.latency, 0.99);
    c.ttft_p50_ms = quantile(d.ttft, 0.5);
    c.per_token_ms_p50 = quantile(d.per_token, 0.5);
    c.overhead_us_p50 = quantile(d.overhead, 0.5);
    const double busy = busy_ms(d.busy);
    if (busy > 0) c.tokens_per_s = static_cast<double>(c.tokens_in + c.tokens_out) / (busy / 1000);
    c.cost_per_1k_tokens = cost_per_1k_tokens(plan.candidates[i].price, c.tokens_in, c.tokens_out, c.tokens_per_s);
    for (const auto& [method, values] : d.scores) c.scores[method] = detail::mean_of(values);
    if (d.judge_records > 0)
      c.judge_parsed_fraction = static_cast<double>(d.judge_parsed) / static_cast<double>(d.judge_records);
    c.ratings = d.ratings.size();
    c.human_mean = detail::mean_of(d.ratings);
  }

  if (const auto reference = index.find(plan.reference); reference != index.end())
    for (auto& c : out.candidates)
      c.cost_reduction = cost_reduction(out.candidates[reference->second].cost_per_1k_tokens, c.cost_per_1k_tokens);

  // Agreement with people, when they rated: each method's ranking of the
  // candidates against theirs.
  candidate_scores people;
  std::set<std::string> methods;
  for (const auto& c : out.candidates) {
    if (c.ratings > 0) people[c.candidate] = c.human_mean;
    for (const auto& [method, mean] : c.scores) methods.insert(method);
  }
  if (!people.empty())
    for (const auto& method : methods) {
      candidate_scores ranking;
      for (const auto& c : out.candidates)
        if (const auto it = c.scores.find(method); it != c.scores.end()) ranking[c.candidate] = it->second;
      out.agreement.push_back({.method = method,
                               .k = plan.agreement_bottom_k,
                               .bottom_k_jaccard = bottom_k_jaccard(ranking, people, plan.agreement_bottom_k),
                               .spearman = spearman(ranking, people)});
    }
  return out;
}

}  // namespace llmgate::inline v0
