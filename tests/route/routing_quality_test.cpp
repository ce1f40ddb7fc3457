// What the router's quality rests on: short answers compared in their
// normal forms, the agreement cascade on a scripted pair (agreeing,
// disagreeing, failing), cascade plans chosen per task by the cost weight,
// the cost weight chosen for a target on a hand-computed fixture, and the
// correctness predictors' calibration on held-out requests. The requests
// are synthetic (two kinds of question with their own words) so that the
// truth behind the outcomes is known.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmgate/route/cascade_plan.hpp"
#include "llmgate/route/correctness_predictor.hpp"
#include "llmgate/route/predictive_router.hpp"
#include "llmgate/route/routing_target.hpp"
#include "llmgate/route/short_answer.hpp"

using namespace llmgate;

namespace {

// The normal form, "free text" where there is none (printable in a failure).
std::string normal(const char* answer) { return normalised_short_answer(answer).value_or("free text"); }

routing_outcome outcome(std::string task, std::vector<float> score, std::vector<double> cost,
                        std::vector<std::string> answer) {
  return {"a question", std::move(task), std::move(score), std::move(cost), std::move(answer)};
}

// Requests of two kinds, coding and geography, each with words of its own
// drawn from a seeded generator; `right[kind][m]` is model m's chance of
// answering a request of that kind right, and its outcome is drawn from it.
std::vector<routing_outcome> synthetic_requests(std::size_t count, std::uint64_t seed,
                                                const std::vector<std::vector<double>>& right) {
  static const std::vector<std::vector<std::string>> words{
      {"write", "function", "python", "sort", "list", "return", "loop", "string", "array", "recursion", "class"},
      {"capital", "river", "country", "mountain", "border", "ocean", "city", "population", "continent", "island"}};
  std::mt19937_64 random(seed);
  std::vector<routing_outcome> requests;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t kind = i % 2;
    routing_outcome r;
    for (int w = 0; w < 8; ++w) r.text += words[kind][random() % words[kind].size()] + " ";
    for (const double chance : right[kind]) {
      r.score.push_back(static_cast<double>(random() % 1000) < chance * 1000 ? 1.0f : 0.0f);
      r.cost.push_back(0);
    }
    requests.push_back(std::move(r));
  }
  return requests;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(routing_quality_test)

BOOST_AUTO_TEST_CASE(short_answers_compare_as_choices_numbers_and_verdicts) {
  for (const char* choice_b : {"B", "(B)", "B)", " B.\n", "Answer: B", "B) house", "B\nbecause the _ is bigger"})
    BOOST_TEST(normal(choice_b) == "choice:B", choice_b);
  for (const char* sentence : {"A cat sat", "I do not know", "Okay,", "A.B"}) BOOST_TEST(normal(sentence) == "free text", sentence);
  BOOST_TEST(normal("1,200") == "number:1200");
  BOOST_TEST(normal("$1200") == "number:1200");
  BOOST_TEST(normal("1200.0") == "number:1200");
  BOOST_TEST(normal("-3.5") == "number:-3.5");
  BOOST_TEST(normal("Yes.") == "verdict:yes");
  BOOST_TEST(normal("false") == "verdict:no");
  BOOST_TEST(short_answers_agree("B", "(B)"));
  BOOST_TEST(!short_answers_agree("B", "C"));
  BOOST_TEST(!short_answers_agree("Paris is the capital of France.", "Paris is the capital of France."));
  BOOST_TEST(!short_answers_agree("", ""));
}

// Models 0 and 1 cost 1 and 2 a call and are asked together; model 2
// costs 10 and is asked when they disagree.
BOOST_AUTO_TEST_CASE(a_cascade_serves_an_agreeing_pair_and_escalates_otherwise) {
  const cascade_plan plan{0, 1, 2};
  const std::vector<double> cost{1, 2, 10};
  const auto run = [&](const routing_outcome& o) { return replay(plan, o, normalised_answers(o)); };

  const auto agreed = run(outcome("quiz", {1, 1, 0}, cost, {"B", "(B)", "C"}));
  BOOST_TEST(agreed.score == 1.0);
  BOOST_TEST(agreed.cost == 3.0);
  BOOST_TEST(!agreed.escalated);

  const auto disagreed = run(outcome("quiz", {1, 0, 1}, cost, {"A", "B", "A"}));
  BOOST_TEST(disagreed.score == 1.0);
  BOOST_TEST(disagreed.cost == 13.0);
  BOOST_TEST(disagreed.escalated);

  // Model 1's call failed: no answer, so nothing to agree with.
  const auto failed = run(outcome("quiz", {0, 0, 1}, cost, {"A", "", "D"}));
  BOOST_TEST(failed.score == 1.0);
  BOOST_TEST(failed.cost == 13.0);
  BOOST_TEST(failed.escalated);

  // No answers recorded at all: always escalated.
  const auto unrecorded = run(outcome("quiz", {1, 1, 0}, cost, {}));
  BOOST_TEST(unrecorded.escalated);
  BOOST_TEST(unrecorded.score == 0.0);

  const cascade_plan single{2, 2, 2};
  BOOST_TEST(single.single());
  const auto alone = replay(single, outcome("quiz", {0, 0, 1}, cost, {"A", "A", "D"}), std::vector<std::optional<std::string>>(3));
  BOOST_TEST(alone.score == 1.0);
  BOOST_TEST(alone.cost == 10.0);
}

// Task "quiz", 30 outcomes: models 0 and 1 (cost 1 each) agree and are
// right on 24; on the other 6 they disagree and each is right on 3; model
// 2 (cost 10) is always right. Per plan, summed over the 30:
//   model 2 alone        score 30, cost 300
//   0 + 1, else 2        score 30, cost 30 * 2 + 6 * 10 = 120
//   model 0 (or 1) alone score 27, cost 30
// so the pair wins for weights between 0 and 1/30 (30 - 120 w > 27 - 30 w),
// and a single cheap model above. Task "rare" has 5 outcomes, too few for
// a plan of its own: it gets the plan of all 35.
BOOST_AUTO_TEST_CASE(the_planner_chooses_per_task_the_plan_the_cost_weight_prefers) {
  std::vector<routing_outcome> outcomes;
  for (int i = 0; i < 24; ++i) outcomes.push_back(outcome("quiz", {1, 1, 1}, {1, 1, 10}, {"C", "C", "C"}));
  for (int i = 0; i < 6; ++i)
    outcomes.push_back(outcome("quiz", {i < 3 ? 1.0f : 0.0f, i < 3 ? 0.0f : 1.0f, 1}, {1, 1, 10}, {"A", "B", "A"}));
  for (int i = 0; i < 5; ++i) outcomes.push_back(outcome("rare", {0, 0, 1}, {1, 1, 10}, {"A", "B", "C"}));
  const cascade_planner planner(3, outcomes);
  BOOST_TEST(planner.plans().size() == 3u + 3u);  // 3 singles, 3 pairs with the third

  const auto cheap_weight = planner.plans_at(0.01);
  const auto& quiz = cheap_weight.plan_for("quiz");
  BOOST_TEST((quiz.plan == cascade_plan{0, 1, 2}));
  BOOST_TEST(quiz.score == 1.0);
  BOOST_TEST(quiz.cost == 4.0);  // 120 / 30
  BOOST_TEST((planner.plans_at(0.05).plan_for("quiz").plan == cascade_plan{0, 0, 0}));
  BOOST_TEST((planner.plans_at(0.0).plan_for("quiz").plan == cascade_plan{2, 2, 2}));  // ties go to the first plan

  // All 35: the pair scores 30 + 5 at cost 120 + 5 * 12 = 180; model 2 alone 35 at 350.
  const auto& rare = cheap_weight.plan_for("rare");
  BOOST_TEST((rare.plan == cascade_plan{0, 1, 2}));
  BOOST_TEST(rare.cost == 180.0 / 35, boost::test_tools::tolerance(1e-12));
  BOOST_TEST((&cheap_weight.plan_for("never seen") == &rare));
  BOOST_CHECK_THROW(cascade_planner(3, std::vector<routing_outcome>{}), std::invalid_argument);
  BOOST_CHECK_THROW(cascade_planner(2, outcomes), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(routing_targets_parse_and_print_in_the_users_terms) {
  BOOST_TEST((routing_target::parse("match-best").what == routing_target::kind::match_best));
  const auto share = routing_target::parse("95%");
  BOOST_TEST((share.what == routing_target::kind::share_of_best));
  BOOST_TEST(share.value == 0.95);
  BOOST_TEST(routing_target::parse("0.9").value == 0.9);
  const auto cap = routing_target::parse("cost<=0.002");
  BOOST_TEST((cap.what == routing_target::kind::cost_cap));
  BOOST_TEST(cap.value == 0.002);
  for (const char* text : {"match-best", "95%", "cost<=0.002"}) BOOST_TEST(routing_target::parse(text).describe() == text);
  for (const char* bad : {"best", "120%", "cost<=", "cost<=-1", "0", "95 %"})
    BOOST_CHECK_THROW(routing_target::parse(bad), std::invalid_argument);
}

// Four weights and what each did out of fold; the best single model is 0.90 right.
BOOST_AUTO_TEST_CASE(the_cost_weight_chosen_for_a_target_is_the_hand_computed_one) {
  const std::vector<double> ladder{0, 0.5, 1, 2};
  const std::vector<policy_result> results{{0.90, 10}, {0.89, 6}, {0.86, 3}, {0.80, 1}};
  // match: at least 0.895, only weight 0
  const auto match = choose_cost_weight(routing_target::parse("match-best"), 0.90, ladder, results);
  BOOST_TEST(match.met);
  BOOST_TEST(match.weight == 0.0);
  BOOST_TEST(match.wanted_accuracy == 0.895, boost::test_tools::tolerance(1e-12));
  // 95%: at least 0.855; weights 0, 0.5 and 1 do, 1 is the cheapest
  const auto share = choose_cost_weight(routing_target::parse("95%"), 0.90, ladder, results);
  BOOST_TEST(share.met);
  BOOST_TEST(share.weight == 1.0);
  BOOST_TEST(share.result.cost == 3.0);
  // at most $2: only weight 2
  const auto capped = choose_cost_weight(routing_target::parse("cost<=2"), 0.90, ladder, results);
  BOOST_TEST(capped.met);
  BOOST_TEST(capped.weight == 2.0);
  // 99% (0.891) is out of reach but for weight 0; 100% of 0.95 is out of reach: the most accurate, not met
  const auto unreachable = choose_cost_weight(routing_target::parse("100%"), 0.95, ladder, results);
  BOOST_TEST(!unreachable.met);
  BOOST_TEST(unreachable.weight == 0.0);
  // at most $0.5: out of reach, the cheapest, not met
  const auto too_tight = choose_cost_weight(routing_target::parse("cost<=0.5"), 0.90, ladder, results);
  BOOST_TEST(!too_tight.met);
  BOOST_TEST(too_tight.weight == 2.0);
  BOOST_CHECK_THROW(choose_cost_weight(routing_target{}, 0.9, ladder, std::vector<policy_result>(3)),
                    std::invalid_argument);
  // Weights 1, 2 and 3 do the same: the middle one is taken, not the edge.
  const std::vector<double> plateau{0, 1, 2, 3, 4};
  const std::vector<policy_result> same{{0.9, 10}, {0.9, 5}, {0.9, 5}, {0.9, 5}, {0.7, 1}};
  BOOST_TEST(choose_cost_weight(routing_target::parse("match-best"), 0.9, plateau, same).weight == 2.0);
  BOOST_TEST(best_trade_off(std::vector<float>{0.9f, 0.8f}, std::vector<double>{10, 1}, 0.0) == 0u);
  BOOST_TEST(best_trade_off(std::vector<float>{0.9f, 0.8f}, std::vector<double>{10, 1}, 0.02) == 1u);  // 0.7 < 0.78
}

// Model "coder" is right on 90% of coding requests and 30% of geography
// ones, "atlas" on 20% and 85%, "steady" on 60% of both. Learned from
// 1,000 requests, the predictions on 1,000 new ones are calibrated: in
// bins of predicted probability a tenth wide, the count-weighted mean gap
// between predicted and observed rates (the expected calibration error)
// is at most 0.05 and no bin of 150 or more is off by 0.12; and the
// predictors of the models whose skill depends on the request beat their
// base rate's Brier score out of fold.
BOOST_AUTO_TEST_CASE(predicted_probabilities_are_calibrated_on_new_requests) {
  const std::vector<std::vector<double>> right{{0.9, 0.2, 0.6}, {0.3, 0.85, 0.6}};
  const auto learning = synthetic_requests(1000, 1, right);
  const auto fit = correctness_predictor::fit({"coder", "atlas", "steady"}, learning, {.folds = 5});
  BOOST_TEST(fit.out_of_fold.size() == 1000u);
  BOOST_TEST(fit.out_of_fold[0].size() == 3u);
  for (std::size_t m = 0; m < 2; ++m) BOOST_TEST(fit.report[m].brier < fit.report[m].base_rate_brier - 0.05, fit.report[m].model);
  const auto coding = fit.predictor.predict("write python function sort list return loop array", "");
  BOOST_TEST(coding[0] > 0.8f);
  BOOST_TEST(coding[1] < 0.35f);
  BOOST_TEST(std::abs(coding[2] - 0.6f) < 0.1f);

  const auto fresh = synthetic_requests(1000, 2, right);
  constexpr std::size_t bins = 10;
  std::vector<double> predicted(bins), observed(bins), count(bins);
  for (const auto& r : fresh) {
    const auto p = fit.predictor.predict(r.text, r.task);
    for (std::size_t m = 0; m < 3; ++m) {
      const auto bin = std::min(bins - 1, static_cast<std::size_t>(p[m] * bins));
      predicted[bin] += p[m];
      observed[bin] += r.score[m];
      count[bin] += 1;
    }
  }
  double calibration_error = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    calibration_error += std::abs(predicted[b] - observed[b]) / 3000;
    if (count[b] >= 150)
      BOOST_TEST(std::abs(predicted[b] - observed[b]) / count[b] < 0.12,
                 "bin " << b << ": predicted " << predicted[b] / count[b] << ", observed " << observed[b] / count[b]);
  }
  BOOST_TEST(calibration_error <= 0.05);
  BOOST_CHECK_THROW(correctness_predictor::fit({}, learning), std::invalid_argument);
  BOOST_CHECK_THROW(correctness_predictor::fit({"one"}, learning), std::invalid_argument);
}

// MBPP's lesson: where a cheap model is as good as the dear one, the
// router learned to match the best model must route to the cheap one.
// "dear" (cost 10) and "cheap" (cost 1) are both right on 70% of
// requests; "weak" (cost 0.5) on 20%.
BOOST_AUTO_TEST_CASE(a_cheap_model_as_good_as_the_dear_one_gets_the_requests) {
  auto learning = synthetic_requests(400, 5, {{0.7, 0.7, 0.2}, {0.7, 0.7, 0.2}});
  for (auto& r : learning) r.cost = {10, 1, 0.5};
  const auto routing = predictive_routing::learn({"dear", "cheap", "weak"}, learning);
  BOOST_TEST(routing.ladder().size() == routing.out_of_fold().size());
  BOOST_TEST(routing.out_of_fold().front().cost > 1.0);  // weight 0: the predictors' favourite, "dear" or "cheap"
  const auto [router, choice] = routing.for_target(routing_target::parse("match-best"));
  BOOST_TEST(choice.met);
  BOOST_TEST(choice.result.cost < 1.5);  // out of fold: "dear" on fewer than one request in 18
  BOOST_TEST(router.cost_weight() == choice.weight);
  const auto decision = router.route("write python function sort list return loop array");
  BOOST_TEST(decision.model == "cheap");
  BOOST_TEST(decision.ranking.size() == 3u);
  BOOST_TEST(router.choose("capital river country mountain") == 1u);
  // The dear model alone when cost does not count.
  BOOST_TEST(routing.at_weight(0).route("write python function sort list").model != "weak");
}

BOOST_AUTO_TEST_SUITE_END()
