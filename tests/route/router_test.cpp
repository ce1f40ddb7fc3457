// The router: preferences pick among models, filters by task type and
// domain, the generalist fallback and its flag, the cost cap, complexity,
// feedback that changes a later decision and survives a restart, and batch
// mode's sample.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "llmgate/route/router.hpp"
#include "../temporary_directory.hpp"

using llmgate::model_registry;
using llmgate::preferences;
using llmgate::task_profile;

namespace {

// An analyser that reads every request as one given task.
struct fixed_analyser {
  task_profile task;
  task_profile analyse(std::string_view) const { return task; }
};

using test_router = llmgate::basic_router<fixed_analyser>;

model_registry four_models() {
  return model_registry::from_json(R"({"models": [
    {"name": "cheap", "accuracy": 0.70, "input_cost_per_million": 0.1, "latency_ms": 200},
    {"name": "strong", "accuracy": 0.90, "input_cost_per_million": 10, "latency_ms": 2000, "generalist": true},
    {"name": "coder", "accuracy": 0.75, "task_accuracy": {"coding": 0.95}, "input_cost_per_million": 1,
     "latency_ms": 600, "task_types": ["coding"]},
    {"name": "lawyer", "accuracy": 0.60, "domain_accuracy": {"law": 0.97}, "input_cost_per_million": 2,
     "latency_ms": 900, "domains": ["law"]}
  ]})");
}

task_profile task(std::string type, std::string domain, float complexity = 0.5f) {
  return {std::move(type), std::move(domain), complexity, {}, {}};
}

test_router router_for(task_profile t, preferences p = preferences::parse("accuracy=1")) {
  return test_router(four_models(), fixed_analyser{std::move(t)}, std::move(p));
}

bool considered(const llmgate::routing_decision& d, std::string_view model) {
  return std::ranges::any_of(d.ranking, [&](const auto& r) { return r.model == model; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(router_test)

BOOST_AUTO_TEST_CASE(preferences_decide_between_accuracy_and_cost) {
  const auto r = router_for(task("chat", "general"));
  BOOST_TEST(r.route("hi").model == "strong");
  BOOST_TEST(r.route("hi", preferences::parse("cost=1")).model == "cheap");
  BOOST_TEST(r.route("hi", preferences::parse("latency=1")).model == "cheap");
  BOOST_TEST(!r.route("hi").fallback);
}

BOOST_AUTO_TEST_CASE(a_task_figure_from_few_requests_does_not_overturn_the_overall_ranking) {
  const auto registry = model_registry::from_json(R"({"models": [
    {"name": "strong", "accuracy": 0.90, "task_accuracy": {"coding": 0.80}, "task_samples": {"coding": 5}},
    {"name": "lucky", "accuracy": 0.70, "task_accuracy": {"coding": 0.85}, "task_samples": {"coding": 5}}]})");
  const auto accuracy = preferences::parse("accuracy=1");
  const test_router by_default(registry, fixed_analyser{task("coding", "")}, accuracy);
  BOOST_TEST(by_default.route("x").model == "strong");
  llmgate::router_options trusting;
  trusting.overall_accuracy_weight = 0;  // five requests' figures taken as they are
  const test_router trusting_router(registry, fixed_analyser{task("coding", "")}, accuracy, {}, trusting);
  BOOST_TEST(trusting_router.route("x").model == "lucky");
}

BOOST_AUTO_TEST_CASE(filters_keep_models_to_their_task_types_and_domains) {
  // Decisions name models by views into their router: keep the routers alive.
  const auto for_coding = router_for(task("coding", "programming"));
  const auto coding = for_coding.route("x");
  BOOST_TEST(coding.model == "coder");  // 0.95 at coding beats strong's 0.90
  BOOST_TEST(!considered(coding, "lawyer"));

  const auto for_math = router_for(task("math", "general"));
  const auto math = for_math.route("x");
  BOOST_TEST(!considered(math, "coder"));
  BOOST_TEST(!considered(math, "lawyer"));
  BOOST_TEST(math.model == "strong");

  const auto for_law = router_for(task("chat", "law"));
  const auto law = for_law.route("x");
  BOOST_TEST(law.model == "lawyer");
  BOOST_TEST(!law.fallback);
}

BOOST_AUTO_TEST_CASE(nothing_fits_so_a_generalist_is_chosen_and_flagged) {
  const auto registry = model_registry::from_json(R"({"models": [
    {"name": "coder", "accuracy": 0.9, "task_types": ["coding"]},
    {"name": "lawyer", "accuracy": 0.9, "domains": ["law"], "task_types": ["question_answering"]},
    {"name": "all-rounder", "accuracy": 0.6, "task_types": ["chat"], "generalist": true}
  ]})");
  const test_router r(registry, fixed_analyser{task("math", "science")});
  const auto d = r.route("what is 2 + 2?");
  BOOST_TEST(d.fallback);
  BOOST_TEST(d.model == "all-rounder");
  BOOST_TEST(d.reasons().find("fallback") != std::string::npos);

  const test_router fits(registry, fixed_analyser{task("coding", "programming")});
  BOOST_TEST(!fits.route("x").fallback);
  BOOST_TEST(fits.route("x").model == "coder");
}

BOOST_AUTO_TEST_CASE(a_cost_cap_rules_out_dear_models) {
  using capped_router = llmgate::basic_router<fixed_analyser, llmgate::cost_capped_score<>>;
  const capped_router r(four_models(), fixed_analyser{task("math", "general")}, preferences::parse("accuracy=1"),
                        llmgate::cost_capped_score<>{1.5});
  const auto d = r.route("x");
  BOOST_TEST(d.model == "cheap");
  BOOST_TEST(!considered(d, "strong"));
  BOOST_TEST(!d.fallback);
}

BOOST_AUTO_TEST_CASE(complex_tasks_lean_towards_accuracy) {
  const auto p = preferences::parse("accuracy=0.5,cost=0.5");
  const auto for_hard = router_for(task("chat", "general", 1.0f), p);
  const auto for_easy = router_for(task("chat", "general", 0.0f), p);
  const auto hard = for_hard.route("x");
  const auto easy = for_easy.route("x");
  BOOST_TEST(hard.weights[llmgate::index_of(llmgate::quality::accuracy)] == 0.75f);
  BOOST_TEST(hard.weights[llmgate::index_of(llmgate::quality::cost)] == 0.25f);
  BOOST_TEST(hard.model == "strong");
  BOOST_TEST(easy.model == "cheap");
}

BOOST_AUTO_TEST_CASE(evidence_from_similar_requests_moves_the_expected_accuracy) {
  auto t = task("chat", "general");
  t.evidence = {{"cheap", 20.0f, 1.0f}, {"strong", 20.0f, 0.5f}};
  const auto r = router_for(t);
  const auto d = r.route("x");
  BOOST_TEST(d.model == "cheap");
  BOOST_TEST(d.ranking.front().expected_accuracy > 0.9f);
}

BOOST_AUTO_TEST_CASE(thumbs_down_change_a_later_decision_for_that_task_only) {
  auto r = router_for(task("coding", "programming"));
  const auto first = r.route("write a parser");
  BOOST_TEST_REQUIRE(first.model == "coder");
  for (int i = 0; i < 3; ++i) r.feedback(first, false);
  const auto later = r.route("write a parser");
  BOOST_TEST(later.model == "strong");
  BOOST_TEST(r.ledger().votes("coder", "coding", "programming").down == 3u);
  BOOST_TEST(r.ledger().votes("coder", "coding", "law").down == 0u);

  // Thumbs up bring it back.
  for (int i = 0; i < 30; ++i) r.feedback(first, true);
  BOOST_TEST(r.route("write a parser").model == "coder");
}

BOOST_AUTO_TEST_CASE(feedback_survives_a_restart_and_damage_is_refused) {
  llmgate::test::temporary_directory dir;
  const auto path = dir / "feedback.bin";
  {
    auto r = router_for(task("coding", "programming"));
    const auto d = r.route("x");
    for (int i = 0; i < 3; ++i) r.feedback(d, false);
    BOOST_TEST_REQUIRE(!r.save_feedback(path));
  }
  auto restarted = router_for(task("coding", "programming"));
  BOOST_TEST(restarted.route("x").model == "coder");
  restarted.load_feedback(path);
  BOOST_TEST(restarted.route("x").model == "strong");

  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(40);
    file.put('\x7f');
  }
  try {
    restarted.load_feedback(path);
    BOOST_FAIL("a damaged feedback file was read");
  } catch (const llmgate::error& e) {
    BOOST_TEST(std::string(e.what()).find("feedback.bin") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(batch_mode_routes_a_sample_and_picks_one_model) {
  const llmgate::router r(four_models(), llmgate::local_analyser{}, preferences::parse("accuracy=1"));
  std::vector<std::string> batch;
  for (int i = 0; i < 1000; ++i)
    batch.push_back(i % 10 == 0 ? "tell me a joke" : "Write a Python function number " + std::to_string(i));

  const auto b = r.route_batch(batch, preferences::parse("accuracy=1"));
  BOOST_TEST(b.sampled.size() == 20u);  // 2% of 1000
  BOOST_TEST(std::ranges::is_sorted(b.sampled));
  BOOST_TEST(std::set<std::size_t>(b.sampled.begin(), b.sampled.end()).size() == 20u);
  BOOST_TEST(b.sampled.back() < batch.size());
  std::size_t votes = 0;
  for (const auto& [model, count] : b.votes) votes += count;
  BOOST_TEST(votes == 20u);
  BOOST_TEST(b.model == b.votes.front().first);
  BOOST_TEST(b.model == "coder");  // nine in ten requests ask for code

  const auto again = r.route_batch(batch, preferences::parse("accuracy=1"));
  BOOST_TEST(again.sampled == b.sampled);  // the same seed, the same sample
  const auto other = r.route_batch(batch, preferences::parse("accuracy=1"), {.sample_share = 0.02, .seed = 7});
  BOOST_TEST(other.sampled != b.sampled);

  const std::vector<std::string> few = {"a", "b", "c"};
  BOOST_TEST(r.route_batch(few, preferences()).sampled.size() == 1u);  // at least one
  BOOST_CHECK_THROW(r.route_batch(std::vector<std::string>{}, preferences()), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(reasons_name_the_choice_the_task_and_the_runner_up) {
  const auto r = router_for(task("coding", "programming"));
  const auto reasons = r.route("x").reasons();
  BOOST_TEST(reasons.find("chose coder") != std::string::npos);
  BOOST_TEST(reasons.find("'coding'") != std::string::npos);
  BOOST_TEST(reasons.find("runner-up strong") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_empty_registry_is_refused) {
  BOOST_CHECK_THROW(test_router(model_registry(), fixed_analyser{}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
