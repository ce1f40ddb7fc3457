// evaluation_summary: the figures a run comes to, per candidate and per
// scoring method, from what the run store holds (summarize(), below).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t
#include <map>      // std::map
#include <string>   // std::string
#include <vector>   // std::vector

namespace llmgate::inline v0 {

struct candidate_summary {
  std::string candidate;
  std::size_t requests = 0;  ///< evaluation requests recorded (errors included)
  std::size_t errors = 0;
  std::size_t resent = 0;    ///< in flight when a run was killed, and sent again
  std::map<std::string, std::size_t> errors_by_kind;  ///< to_string(request_failure) -> count
  double latency_p50_ms = 0, latency_p90_ms = 0, latency_p99_ms = 0;
  double ttft_p50_ms = 0;
  double per_token_ms_p50 = 0;
  std::uint64_t tokens_in = 0, tokens_out = 0;
  double tokens_per_s = 0;           ///< input and output tokens per second while the candidate was busy
  double cost_per_1k_tokens = 0;     ///< USD
  double cost_reduction = 0;         ///< the reference's cost per 1K tokens / this one's; 0 when either is 0
  std::map<std::string, double> scores;  ///< method -> mean score in [0, 1] over the scored answers
  double judge_parsed_fraction = 0;  ///< judge verdicts parsed / asked, over every judge method; 0 when none asked
  double human_mean = 0;             ///< mean rating / 10; 0 when nobody rated
  std::size_t ratings = 0;
  double overhead_us_p50 = 0;        ///< the kit's own time per request
};

/// How well one automatic method ranks the candidates as people do.
struct method_agreement {
  std::string method;
  std::size_t k = 0;           ///< bottom-k
  double bottom_k_jaccard = 0; ///< |bottom-k by method ∩ bottom-k by people| / |union|
  double spearman = 0;         ///< Spearman's rank correlation of the two rankings
};

struct evaluation_summary {
  std::string reference;
  std::vector<candidate_summary> candidates;  ///< in the plan's order
  std::vector<method_agreement> agreement;    ///< empty when nobody rated
};

}  // namespace llmgate::inline v0
