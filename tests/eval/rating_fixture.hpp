// A finished run for the rating suites: answers of three candidates to a
// few prompts, recorded in an in-memory run store the way the runner
// records them, with results no one rates beside them (a failed request,
// a warm-up, the latency schedule, a judge's question).
#pragma once

#include <cstdint>  // std::int64_t
#include <string>   // std::string, std::to_string
#include <vector>   // std::vector

#include "llmgate/eval/run/run_records.hpp"  // planned_request, request_result
#include "llmgate/eval/run/run_store.hpp"    // run_store

namespace llmgate::test {

/// The candidates' names: none may appear in a page a rater sees.
inline const std::vector<std::string> rating_candidates = {"big-hosted-model", "small-local-q4", "small-local-q8"};

inline std::string rating_key(const std::string& candidate, std::int64_t prompt) {
  return "evaluation/" + candidate + "/" + std::to_string(prompt) + "/0";
}

/// What a candidate answered to a prompt: words enough to tell them apart.
inline std::string rating_answer(std::size_t candidate, std::int64_t prompt) {
  std::string text = "Answer " + std::to_string(prompt) + "." + std::to_string(candidate) + ":";
  for (std::int64_t w = 0; w <= prompt + static_cast<std::int64_t>(candidate) * 2; ++w) text += " word";
  return text;
}

/// The question shown for an answer, as the evaluate program renders it.
inline std::string rating_prompt(const planned_request& request) {
  return "Plan my day, list " + std::to_string(request.prompt) + ":\n- write, \"review\" & <ship>";
}

/// Records `prompts` answers of every candidate, plus one failed request,
/// a warm-up, a schedule request and a judge's question, in `store`.
inline std::vector<request_result> record_rating_run(run_store& store, std::int64_t prompts) {
  std::vector<request_result> results;
  for (std::int64_t p = 0; p < prompts; ++p)
    for (std::size_t c = 0; c < rating_candidates.size(); ++c) {
      request_result r;
      r.request = {.key = rating_key(rating_candidates[c], p), .kind = request_kind::evaluation,
                   .candidate = rating_candidates[c], .prompt = p, .repetition = 0};
      r.response = rating_answer(c, p);
      results.push_back(r);
    }
  request_result failed;
  failed.request = {.key = rating_key(rating_candidates[1], prompts), .kind = request_kind::evaluation,
                    .candidate = rating_candidates[1], .prompt = prompts, .repetition = 0};
  failed.error = request_failure::server_error;
  failed.http_status = 500;
  results.push_back(failed);
  for (const auto kind : {request_kind::warmup, request_kind::schedule, request_kind::judge}) {
    request_result other;
    other.request = {.key = std::string(to_string(kind)) + "/" + rating_candidates[0] + "/0", .kind = kind,
                     .candidate = rating_candidates[0], .prompt = 0, .repetition = 0};
    other.response = "not rated";
    results.push_back(other);
  }
  std::vector<planned_request> planned;
  for (const auto& r : results) planned.push_back(r.request);
  store.plan(planned);
  for (const auto& r : results) {
    store.begin(r.request.key);
    store.finish(r);
  }
  return store.results();
}

}  // namespace llmgate::test
