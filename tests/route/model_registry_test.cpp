// The model registry: JSON read into cards, every metric normalised to
// 0..1 as documented (log scale for cost and latency, linear for ratings,
// one accuracy scale), accuracies per task and domain, tags, and bad
// registries refused with a message that names the model and the field.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <stdexcept>
#include <string>

#include "llmgate/route/model_registry.hpp"
#include "../temporary_directory.hpp"

using llmgate::model_registry;
using llmgate::quality;
using llmgate::index_of;

namespace {

constexpr const char* three_models = R"({"models": [
  {"name": "small", "accuracy": 0.6, "latency_ms": 100, "input_cost_per_million": 0.1,
   "output_cost_per_million": 0.1, "helpfulness": 6, "task_accuracy": {"coding": 0.4}},
  {"name": "medium", "accuracy": 0.7, "latency_ms": 1000, "input_cost_per_million": 1,
   "output_cost_per_million": 1, "helpfulness": 7, "domain_accuracy": {"law": 0.9}},
  {"name": "large", "accuracy": 0.8, "latency_ms": 10000, "input_cost_per_million": 10,
   "output_cost_per_million": 10, "task_accuracy": {"coding": 0.95}, "domains": ["law", "medicine"],
   "task_types": ["coding"], "generalist": true, "backend": "openai"}
]})";

float rating(const model_registry& r, std::size_t model, quality q) { return r.qualities(model)[index_of(q)]; }

bool throws_mentioning(const std::string& json, const std::string& words) {
  try {
    model_registry::from_json(json);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what()).find(words) != std::string::npos;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_registry_test)

BOOST_AUTO_TEST_CASE(reads_every_field_of_the_json_form) {
  const auto r = model_registry::from_json(three_models);
  BOOST_TEST(r.size() == 3u);
  const auto& large = r.card(*r.find("large"));
  BOOST_TEST(large.backend == "openai");
  BOOST_TEST(large.generalist);
  BOOST_TEST(large.task_accuracy.at("coding") == 0.95);
  BOOST_TEST(large.domains.size() == 2u);
  BOOST_TEST(!r.find("absent"));
}

BOOST_AUTO_TEST_CASE(cost_and_latency_are_inverted_on_a_log_scale) {
  const auto r = model_registry::from_json(three_models);
  // Prices 0.1, 1, 10 are evenly spaced in log: ratings 1, 0.5, 0.
  BOOST_TEST(rating(r, 0, quality::cost) == 1.0f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(rating(r, 1, quality::cost) == 0.5f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(rating(r, 2, quality::cost) == 0.0f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(rating(r, 0, quality::latency) == 1.0f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(rating(r, 1, quality::latency) == 0.5f, boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(ratings_are_linear_and_missing_ones_are_middling) {
  const auto r = model_registry::from_json(three_models);
  BOOST_TEST(rating(r, 0, quality::helpfulness) == 0.0f);
  BOOST_TEST(rating(r, 1, quality::helpfulness) == 1.0f);
  BOOST_TEST(rating(r, 2, quality::helpfulness) == 0.5f);  // not given
  BOOST_TEST(rating(r, 0, quality::honesty) == 0.5f);      // given for none
}

BOOST_AUTO_TEST_CASE(accuracy_shares_one_scale_across_overall_task_and_domain_figures) {
  const auto r = model_registry::from_json(three_models);
  // Lowest figure 0.4 (small at coding), highest 0.95 (large at coding).
  BOOST_TEST(rating(r, 0, quality::accuracy) == (0.6f - 0.4f) / 0.55f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(r.normalised_accuracy(0.95) == 1.0f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(r.normalised_accuracy(0.2) == 0.0f);  // clamped
  BOOST_TEST(r.normalised_accuracy(1.0) == 1.0f);
}

BOOST_AUTO_TEST_CASE(a_metric_every_model_shares_rates_one) {
  const auto r = model_registry::from_json(
      R"({"models": [{"name": "a", "latency_ms": 50}, {"name": "b", "latency_ms": 50}]})");
  BOOST_TEST(rating(r, 0, quality::latency) == 1.0f);
  BOOST_TEST(rating(r, 1, quality::latency) == 1.0f);
}

BOOST_AUTO_TEST_CASE(accuracy_for_a_task_prefers_task_and_domain_figures) {
  const auto r = model_registry::from_json(three_models);
  BOOST_TEST(r.accuracy_for(0, "coding", "") == 0.4);
  BOOST_TEST(r.accuracy_for(0, "math", "") == 0.6);          // overall
  BOOST_TEST(r.accuracy_for(1, "coding", "law") == 0.9);     // domain only
  BOOST_TEST(r.accuracy_for(2, "coding", "law") == 0.95);    // task only (no law figure)
  const auto unrated = model_registry::from_json(
      R"({"models": [{"name": "a", "accuracy": 0.5}, {"name": "b", "accuracy": 0.9}, {"name": "c"}]})");
  BOOST_TEST(unrated.accuracy_for(2, "", "") == 0.7, boost::test_tools::tolerance(1e-9));  // registry mean
}

BOOST_AUTO_TEST_CASE(a_task_figure_from_few_requests_is_pulled_towards_the_overall_ranking) {
  // Coding is 0.1 harder than overall for the three models on average
  // (+0.15, -0.35, -0.1), so the first two's overall accuracies predict
  // 0.5 and 0.7 at coding.
  const auto r = model_registry::from_json(R"({"models": [
    {"name": "weak", "accuracy": 0.6, "task_accuracy": {"coding": 0.75}, "task_samples": {"coding": 10}},
    {"name": "strong", "accuracy": 0.8, "task_accuracy": {"coding": 0.45}, "task_samples": {"coding": 10}},
    {"name": "unmeasured", "accuracy": 0.5, "task_accuracy": {"coding": 0.4}}]})");
  BOOST_TEST(r.card(0).task_samples.at("coding") == 10.0);
  // Taken as they are without a weight for the overall accuracy...
  BOOST_TEST(r.accuracy_for(0, "coding", "") == 0.75);
  // ...and as (10 a + 30 predicted) / 40 with one: 10 requests do not turn
  // the ranking over.
  BOOST_TEST(r.accuracy_for(0, "coding", "", 30) == (7.5 + 0.5 * 30) / 40, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.accuracy_for(1, "coding", "", 30) == (4.5 + 0.7 * 30) / 40, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.accuracy_for(1, "coding", "", 30) > r.accuracy_for(0, "coding", "", 30));
  // A figure with no sample count is taken as it is.
  BOOST_TEST(r.accuracy_for(2, "coding", "", 30) == 0.4);
}

BOOST_AUTO_TEST_CASE(blended_price_weighs_three_input_tokens_to_one_output_token) {
  llmgate::model_card card;
  card.input_cost_per_million = 1.0;
  card.output_cost_per_million = 5.0;
  BOOST_TEST(*card.blended_price() == 2.0);
  card.output_cost_per_million.reset();
  BOOST_TEST(*card.blended_price() == 1.0);
  card.input_cost_per_million.reset();
  BOOST_TEST(!card.blended_price());
}

BOOST_AUTO_TEST_CASE(tags_limit_what_a_model_serves) {
  const auto r = model_registry::from_json(three_models);
  BOOST_TEST(r.serves(2, "coding", "law"));
  BOOST_TEST(!r.serves(2, "math", "law"));
  BOOST_TEST(!r.serves(2, "coding", "finance"));
  BOOST_TEST(r.serves(2, "", ""));       // unknown task: no filter
  BOOST_TEST(r.serves(0, "anything", "at all"));  // no tags
}

BOOST_AUTO_TEST_CASE(bad_registries_are_refused_with_the_model_and_field_named) {
  BOOST_TEST(throws_mentioning("not json", "not JSON"));
  BOOST_TEST(throws_mentioning(R"({"model": []})", "\"models\" array"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"accuracy": 0.5}]})", "has no name"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a", "accuracy": 1.5}]})", "('a'): accuracy"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a", "latency_ms": "fast"}]})", "latency_ms must be a number"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a", "input_cost_per_million": -1}]})", "prices"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a", "task_accuracy": {"coding": 2}}]})",
                               "task_accuracy.coding"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a", "task_samples": {"coding": -1}}]})",
                               "sample counts"));
  BOOST_TEST(throws_mentioning(R"({"models": [{"name": "a"}, {"name": "a"}]})", "used twice"));
}

BOOST_AUTO_TEST_CASE(loads_a_file_and_names_a_missing_one) {
  llmgate::test::temporary_directory dir;
  {
    std::ofstream out(dir / "models.json");
    out << three_models;
  }
  BOOST_TEST(model_registry::load(dir / "models.json").size() == 3u);
  BOOST_CHECK_THROW(model_registry::load(dir / "absent.json"), llmgate::error);
}

BOOST_AUTO_TEST_SUITE_END()
