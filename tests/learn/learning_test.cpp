// The learn area: classifier metrics with their textbook values, folds
// that partition the rows evenly, logistic regression that recovers the
// rate behind its examples, and Platt scaling that recovers a known slope.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "llmgate/learn.hpp"

using namespace llmgate;

BOOST_AUTO_TEST_SUITE(learning_test)

BOOST_AUTO_TEST_CASE(brier_score_and_auc_have_their_textbook_values) {
  const std::vector<float> probabilities{0.9f, 0.2f, 0.6f, 0.4f}, outcomes{1, 0, 1, 1};
  // (0.1^2 + 0.2^2 + 0.4^2 + 0.6^2) / 4
  BOOST_TEST(brier_score(probabilities, outcomes) == 0.1425, boost::test_tools::tolerance(1e-6));
  // the mean is 0.75: (3 * 0.25^2 + 0.75^2) / 4
  BOOST_TEST(base_rate_brier_score(outcomes) == 0.1875, boost::test_tools::tolerance(1e-12));
  const bool labels[] = {true, false, true, true};
  BOOST_TEST(roc_auc(probabilities, labels) == 1.0);
  const float tied[] = {0.5f, 0.5f};
  const bool one_each[] = {true, false};
  BOOST_TEST(roc_auc(tied, one_each) == 0.5);
  BOOST_TEST(std::isnan(brier_score(probabilities, std::vector<float>{1, 0})));
  BOOST_TEST(std::isnan(base_rate_brier_score(std::vector<float>{})));
}

BOOST_AUTO_TEST_CASE(folds_partition_the_rows_evenly_and_the_same_seed_deals_the_same) {
  const auto fold = fold_assignment(10, 3, 7);
  BOOST_TEST(fold == fold_assignment(10, 3, 7));
  BOOST_TEST(fold != fold_assignment(10, 3, 8));
  std::size_t sizes[3] = {};
  for (const auto f : fold) ++sizes[f];
  BOOST_TEST(sizes[0] == 4u);
  BOOST_TEST(sizes[1] == 3u);
  BOOST_TEST(sizes[2] == 3u);
  for (std::size_t f = 0; f < 3; ++f) {
    const auto held_out = rows_of_fold(fold, f, true), learned = rows_of_fold(fold, f, false);
    BOOST_TEST(held_out.size() == sizes[f]);
    BOOST_TEST(held_out.size() + learned.size() == 10u);
    for (const auto r : held_out) BOOST_TEST(fold[r] == f);
    for (const auto r : learned) BOOST_TEST(fold[r] != f);
  }
  BOOST_CHECK_THROW(fold_assignment(10, 1), std::invalid_argument);
}

// 100 rows with feature +1 of which 80 are right, 100 with feature -1 of
// which 20 are: the fitted probabilities are the two rates.
BOOST_AUTO_TEST_CASE(logistic_regression_recovers_the_rates_behind_its_rows_deterministically) {
  std::vector<feature_row> rows;
  std::vector<float> outcomes;
  for (int i = 0; i < 200; ++i) {
    feature_row row;
    row.add(i < 100 ? 0 : 1, 1.0f);  // which group, as an indicator
    rows.push_back(row);
    outcomes.push_back(i < 100 ? (i < 80 ? 1.0f : 0.0f) : (i < 120 ? 1.0f : 0.0f));
  }
  const logistic_regression_options options{.l2 = 1e-4, .passes = 60, .learning_rate = 0.5, .seed = 3};
  const auto model = logistic_regression::fit(rows, outcomes, 2, options);
  BOOST_TEST(model.dimension() == 2u);
  BOOST_TEST(std::abs(model.probability(rows[0]) - 0.8) < 0.03);
  BOOST_TEST(std::abs(model.probability(rows[150]) - 0.2) < 0.03);
  const auto again = logistic_regression::fit(rows, outcomes, 2, options);
  BOOST_TEST(std::vector<float>(again.weights().begin(), again.weights().end()) ==
             std::vector<float>(model.weights().begin(), model.weights().end()));
  BOOST_TEST(again.bias() == model.bias());

  // Fractional outcomes are fitted as rates too.
  const std::vector<float> seven_tenths(200, 0.7f);
  BOOST_TEST(std::abs(logistic_regression::fit(rows, seven_tenths, 2, options).probability(rows[0]) - 0.7) < 0.03);
  BOOST_CHECK_THROW(logistic_regression::fit(rows, outcomes, 1, options), std::invalid_argument);  // index 1 >= 1
  BOOST_CHECK_THROW(logistic_regression::fit(rows, std::vector<float>(3), 2, options), std::invalid_argument);
}

// Outcomes drawn as the rate sigmoid(0.5 z + 1) at each logit z: the fit
// gives back 0.5 and 1 (Platt's targets move them a little on 2,001 rows).
BOOST_AUTO_TEST_CASE(platt_scaling_recovers_a_known_slope_and_intercept) {
  std::vector<float> logits, outcomes;
  for (int i = 0; i <= 2000; ++i) {
    const double z = -8.0 + 16.0 * i / 2000;
    logits.push_back(static_cast<float>(z));
    outcomes.push_back(static_cast<float>(sigmoid(0.5 * z + 1.0)));
  }
  const auto scaling = platt_scaling::fit(logits, outcomes);
  BOOST_TEST(std::abs(scaling.slope - 0.5) < 0.01);
  BOOST_TEST(std::abs(scaling.intercept - 1.0) < 0.02);
  BOOST_TEST(scaling.probability(2.0) == sigmoid(2.0 * scaling.slope + scaling.intercept));
  const auto identity = platt_scaling::fit({}, {});
  BOOST_TEST(identity.slope == 1.0);
  BOOST_TEST(identity.intercept == 0.0);
  BOOST_CHECK_THROW(platt_scaling::fit(logits, std::vector<float>{1}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
