// summarize(): every figure of a run's summary on a small run worked out by
// hand (quantiles, busy time, cost and its reduction, mean scores, judge
// parse rate, human means, agreement), and the cost formulas alone.
#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include <cmath>    // std::isnan
#include <cstdint>  // std::int64_t, std::uint64_t
#include <map>      // std::map
#include <string>   // std::string, std::to_string
#include <utility>  // std::pair
#include <vector>   // std::vector

#include "llmgate/eval/report/evaluation_cost.hpp"  // api_cost_per_1k_tokens, self_hosted_cost_per_1k_tokens, cost_reduction
#include "llmgate/eval/report/summarize.hpp"        // summarize, quantile, busy_ms

using namespace llmgate;
namespace tt = boost::test_tools;

namespace {

struct result_spec {
  std::string candidate;
  std::int64_t prompt = 0, repetition = 0;
  std::int64_t started = 0;
  double latency = 0, ttft = 0;
  std::uint64_t in = 0, out = 0;
  request_failure error = request_failure::none;
  int attempts = 1;
  double overhead = 0;
  request_kind kind = request_kind::evaluation;
};

request_result make(const result_spec& s) {
  request_result r;
  r.request.key = std::string(to_string(s.kind)) + "/" + s.candidate + "/" + std::to_string(s.prompt) + "/" +
                  std::to_string(s.repetition);
  r.request.kind = s.kind;
  r.request.candidate = s.candidate;
  r.request.prompt = s.prompt;
  r.request.repetition = s.repetition;
  r.started_unix_ms = s.started;
  r.latency_ms = s.latency;
  r.ttft_ms = s.ttft;
  r.tokens_in = s.in;
  r.tokens_out = s.out;
  r.error = s.error;
  r.attempts = s.attempts;
  r.overhead_us = s.overhead;
  r.response = s.error == request_failure::none ? "an answer" : "";
  return r;
}

evaluation_plan small_plan() {
  evaluation_plan plan;
  evaluation_candidate ref{.name = "ref"};
  ref.price.input_per_1k = 0.01;
  ref.price.output_per_1k = 0.03;
  evaluation_candidate a{.name = "a"};
  a.price.instance_per_hour = 1.2;
  a.price.utilization = 0.8;
  plan.candidates = {ref, a, {.name = "b"}};
  plan.reference = "ref";
  plan.agreement_bottom_k = 1;
  return plan;
}

std::vector<request_result> small_run() {
  return {
      // ref: two overlapping requests, busy from 1000 to 1150 ms.
      make({.candidate = "ref", .prompt = 0, .started = 1000, .latency = 100, .ttft = 20, .in = 10, .out = 5, .overhead = 7}),
      make({.candidate = "ref", .prompt = 1, .started = 1050, .latency = 100, .ttft = 30, .in = 20, .out = 10, .overhead = 9}),
      // a: two ok, one timeout that was resent, one 429; then requests that do not count.
      make({.candidate = "a", .prompt = 0, .started = 2000, .latency = 200, .ttft = 50, .in = 10, .out = 11, .overhead = 10}),
      make({.candidate = "a", .prompt = 1, .started = 3000, .latency = 400, .ttft = 100, .in = 20, .out = 31, .overhead = 20}),
      make({.candidate = "a", .prompt = 0, .repetition = 1, .started = 4000, .latency = 120000,
            .error = request_failure::timeout, .attempts = 2, .overhead = 30}),
      make({.candidate = "a", .prompt = 1, .repetition = 1, .started = 5000, .latency = 3,
            .error = request_failure::rate_limited, .overhead = 40}),
      make({.candidate = "a", .prompt = 0, .started = 9000, .latency = 999, .ttft = 1, .in = 99, .out = 99,
            .kind = request_kind::schedule}),
      make({.candidate = "a", .prompt = 0, .started = 0, .latency = 999, .in = 99, .out = 99, .kind = request_kind::warmup}),
      make({.candidate = "not-in-plan", .prompt = 0, .latency = 1}),
      // b: one answer without a first-token time; no price.
      make({.candidate = "b", .prompt = 0, .started = 0, .latency = 50, .in = 5, .out = 5}),
  };
}

std::vector<score_record> small_scores() {
  return {
      {.request_key = "evaluation/a/0/0", .method = "tfidf", .value = 0.5},
      {.request_key = "evaluation/a/1/0", .method = "tfidf", .value = 0.7},
      {.request_key = "evaluation/a/0/0", .method = "bleu", .value = 0.2},
      {.request_key = "evaluation/a/0/0", .method = "judge:scorer", .value = 0.8, .detail = "good"},
      {.request_key = "evaluation/a/1/0", .method = "judge:scorer", .detail = "Score: seven"},  // unparsed
      {.request_key = "evaluation/b/0/0", .method = "tfidf", .value = 0.9},
      {.request_key = "evaluation/b/0/0", .method = "judge:scorer", .value = 0.3},
      {.request_key = "evaluation/nobody/0/0", .method = "tfidf", .value = 1.0},
      {.request_key = "schedule/a/0/0", .method = "tfidf", .value = 1.0},
  };
}

std::vector<rating_record> small_ratings() {
  return {
      {.rater = "r1", .request_key = "evaluation/ref/0/0", .score = 8},
      {.rater = "r1", .request_key = "evaluation/a/0/0", .score = 4},
      {.rater = "r2", .request_key = "evaluation/a/1/0", .score = 6},
      {.rater = "r2", .request_key = "evaluation/b/0/0", .score = 2},
      {.rater = "r2", .request_key = "evaluation/unknown/0/0", .score = 10},
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(summarize_test)

BOOST_AUTO_TEST_CASE(quantiles_interpolate_between_closest_ranks) {
  BOOST_TEST(quantile({4, 1, 3, 2}, 0.5) == 2.5);
  BOOST_TEST(quantile({1, 2, 3, 4}, 0.9) == 3.7, tt::tolerance(1e-12));  // h = 2.7
  BOOST_TEST(quantile({1, 2, 3, 4}, 0.0) == 1.0);
  BOOST_TEST(quantile({1, 2, 3, 4}, 1.0) == 4.0);
  BOOST_TEST(quantile({7}, 0.99) == 7.0);
  BOOST_TEST(quantile({}, 0.5) == 0.0);
}

BOOST_AUTO_TEST_CASE(busy_time_is_the_union_of_intervals) {
  BOOST_TEST(busy_ms({{0, 10}, {5, 20}, {30, 40}}) == 30.0);
  BOOST_TEST(busy_ms({{0, 100}, {10, 20}}) == 100.0);
  BOOST_TEST(busy_ms({{10, 20}, {20, 30}}) == 20.0);
  BOOST_TEST(busy_ms({}) == 0.0);
}

BOOST_AUTO_TEST_CASE(cost_per_1k_tokens_by_hand) {
  evaluation_price api{.input_per_1k = 0.01, .output_per_1k = 0.03};
  // 1K in at 0.01 and 0.5K out at 0.03: 0.025 USD for 1.5K tokens.
  BOOST_TEST(api_cost_per_1k_tokens(api, 1000, 500) == 0.025 / 1.5, tt::tolerance(1e-12));
  BOOST_TEST(api_cost_per_1k_tokens(api, 0, 0) == 0.0);
  evaluation_price hosted{.instance_per_hour = 1.2, .utilization = 0.8};
  // 50 tokens/s busy 80% of an hour: 144,000 tokens for 1.2 USD.
  BOOST_TEST(self_hosted_cost_per_1k_tokens(hosted, 50) == 1.0 / 120, tt::tolerance(1e-12));
  BOOST_TEST(self_hosted_cost_per_1k_tokens(hosted, 0) == 0.0);
  BOOST_TEST(cost_per_1k_tokens(hosted, 1000, 500, 50) == 1.0 / 120, tt::tolerance(1e-12));
  BOOST_TEST(cost_per_1k_tokens(api, 1000, 500, 50) == 0.025 / 1.5, tt::tolerance(1e-12));
  BOOST_TEST(cost_reduction(0.025 / 1.5, 1.0 / 120) == 2.0, tt::tolerance(1e-12));
  BOOST_TEST(cost_reduction(0.02, 0) == 0.0);
  BOOST_TEST(cost_reduction(0, 0.02) == 0.0);
}

BOOST_AUTO_TEST_CASE(every_figure_of_a_small_run) {
  const auto plan = small_plan();
  const auto results = small_run();
  const auto scores = small_scores();
  const auto ratings = small_ratings();
  const auto summary = summarize(plan, results, scores, ratings);

  BOOST_TEST(summary.reference == "ref");
  BOOST_REQUIRE(summary.candidates.size() == 3u);
  const auto& ref = summary.candidates[0];
  const auto& a = summary.candidates[1];
  const auto& b = summary.candidates[2];
  BOOST_TEST(ref.candidate == "ref");
  BOOST_TEST(a.candidate == "a");
  BOOST_TEST(b.candidate == "b");

  // ref: 45 tokens over 150 ms busy: 300/s; API price (30 * 0.01 + 15 * 0.03) / 45.
  BOOST_TEST(ref.requests == 2u);
  BOOST_TEST(ref.errors == 0u);
  BOOST_TEST(ref.errors_by_kind.empty());
  BOOST_TEST(ref.latency_p50_ms == 100.0);
  BOOST_TEST(ref.ttft_p50_ms == 25.0);
  BOOST_TEST(ref.tokens_in == 30u);
  BOOST_TEST(ref.tokens_out == 15u);
  BOOST_TEST(ref.tokens_per_s == 300.0, tt::tolerance(1e-12));
  BOOST_TEST(ref.cost_per_1k_tokens == 0.75 / 45, tt::tolerance(1e-12));
  BOOST_TEST(ref.cost_reduction == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(ref.overhead_us_p50 == 8.0);
  BOOST_TEST(ref.scores.empty());
  BOOST_TEST(ref.judge_parsed_fraction == 0.0);
  BOOST_TEST(ref.ratings == 1u);
  BOOST_TEST(ref.human_mean == 0.8);

  // a: the ok requests' latencies 200 and 400; the schedule and warm-up ones do not count.
  BOOST_TEST(a.requests == 4u);
  BOOST_TEST(a.errors == 2u);
  BOOST_TEST(a.resent == 1u);
  BOOST_TEST((a.errors_by_kind == std::map<std::string, std::size_t>{{"rate_limited", 1}, {"timeout", 1}}));
  BOOST_TEST(a.latency_p50_ms == 300.0, tt::tolerance(1e-12));
  BOOST_TEST(a.latency_p90_ms == 380.0, tt::tolerance(1e-12));
  BOOST_TEST(a.latency_p99_ms == 398.0, tt::tolerance(1e-12));
  BOOST_TEST(a.ttft_p50_ms == 75.0);
  BOOST_TEST(a.per_token_ms_p50 == 12.5, tt::tolerance(1e-12));  // (200 - 50) / 10 and (400 - 100) / 30
  BOOST_TEST(a.tokens_in == 30u);
  BOOST_TEST(a.tokens_out == 42u);
  BOOST_TEST(a.tokens_per_s == 120.0, tt::tolerance(1e-12));  // 72 tokens over 600 ms busy
  // 1.2 USD an hour at 120 tokens/s, 80% busy: 1.2 / 345.6K tokens, 1/288 USD per 1K.
  BOOST_TEST(a.cost_per_1k_tokens == 1.0 / 288, tt::tolerance(1e-12));
  BOOST_TEST(a.cost_reduction == (1.0 / 60) / (1.0 / 288), tt::tolerance(1e-12));
  BOOST_TEST(a.cost_reduction == 4.8, tt::tolerance(1e-12));
  BOOST_TEST(a.overhead_us_p50 == 25.0);  // over every evaluation request, failed ones too
  BOOST_TEST(a.scores.size() == 3u);
  BOOST_TEST(a.scores.at("tfidf") == 0.6, tt::tolerance(1e-12));
  BOOST_TEST(a.scores.at("bleu") == 0.2, tt::tolerance(1e-12));
  BOOST_TEST(a.scores.at("judge:scorer") == 0.8, tt::tolerance(1e-12));  // the unparsed verdict left out
  BOOST_TEST(a.judge_parsed_fraction == 0.5);
  BOOST_TEST(a.ratings == 2u);
  BOOST_TEST(a.human_mean == 0.5, tt::tolerance(1e-12));

  // b: no first token time, no per-token latency, no price.
  BOOST_TEST(b.requests == 1u);
  BOOST_TEST(b.ttft_p50_ms == 0.0);
  BOOST_TEST(b.per_token_ms_p50 == 0.0);
  BOOST_TEST(b.tokens_per_s == 200.0, tt::tolerance(1e-12));
  BOOST_TEST(b.cost_per_1k_tokens == 0.0);
  BOOST_TEST(b.cost_reduction == 0.0);
  BOOST_TEST(b.judge_parsed_fraction == 1.0);
  BOOST_TEST(b.human_mean == 0.2, tt::tolerance(1e-12));

  // People rank ref 0.8 > a 0.5 > b 0.2. bleu scores a alone; judge:scorer
  // ranks a over b as people do; tfidf ranks b over a.
  BOOST_REQUIRE(summary.agreement.size() == 3u);
  const auto& bleu = summary.agreement[0];
  BOOST_TEST(bleu.method == "bleu");
  BOOST_TEST(bleu.k == 1u);
  BOOST_TEST(bleu.bottom_k_jaccard == 1.0);
  BOOST_TEST(std::isnan(bleu.spearman));  // one candidate in common: undefined
  const auto& judge = summary.agreement[1];
  BOOST_TEST(judge.method == "judge:scorer");
  BOOST_TEST(judge.bottom_k_jaccard == 1.0);
  BOOST_TEST(judge.spearman == 1.0, tt::tolerance(1e-12));
  const auto& tfidf = summary.agreement[2];
  BOOST_TEST(tfidf.method == "tfidf");
  BOOST_TEST(tfidf.bottom_k_jaccard == 0.0);
  BOOST_TEST(tfidf.spearman == -1.0, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(no_agreement_without_ratings) {
  const auto plan = small_plan();
  const auto results = small_run();
  const auto scores = small_scores();
  const auto summary = summarize(plan, results, scores, {});
  BOOST_TEST(summary.agreement.empty());
  BOOST_TEST(summary.candidates[1].ratings == 0u);
  BOOST_TEST(summary.candidates[1].human_mean == 0.0);
}

BOOST_AUTO_TEST_CASE(an_empty_run) {
  const auto plan = small_plan();
  const auto summary = summarize(plan, {}, {}, {});
  BOOST_REQUIRE(summary.candidates.size() == 3u);
  for (const auto& c : summary.candidates) {
    BOOST_TEST(c.requests == 0u);
    BOOST_TEST(c.latency_p50_ms == 0.0);
    BOOST_TEST(c.tokens_per_s == 0.0);
    BOOST_TEST(c.cost_per_1k_tokens == 0.0);
    BOOST_TEST(c.cost_reduction == 0.0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
