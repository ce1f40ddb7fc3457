// Preferences: named profiles expand to their weights, specifications
// parse into profiles and overrides, and bad ones are refused by name.
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "llmgate/route/preferences.hpp"

using llmgate::preferences;
using llmgate::quality;

BOOST_AUTO_TEST_SUITE(preferences_test)

BOOST_AUTO_TEST_CASE(profiles_lean_the_way_their_names_say) {
  const auto cost = preferences::profile("cost-effective");
  const auto latency = preferences::profile("latency-first");
  const auto accuracy = preferences::profile("accuracy-first");
  const auto ethics = preferences::profile("ethically-aligned");
  const auto balanced = preferences::profile("balanced");
  BOOST_TEST(cost.weight(quality::cost) > cost.weight(quality::accuracy));
  BOOST_TEST(latency.weight(quality::latency) > latency.weight(quality::accuracy));
  BOOST_TEST(accuracy.weight(quality::accuracy) > 0.5f);
  BOOST_TEST(ethics.weight(quality::harmlessness) + ethics.weight(quality::honesty) >
             ethics.weight(quality::accuracy) + ethics.weight(quality::cost));
  BOOST_TEST(preferences().describe() == "balanced");
  BOOST_TEST(balanced.weight(quality::accuracy) > balanced.weight(quality::creativity));
  BOOST_CHECK_THROW(preferences::profile("cheap"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(explicit_weights_leave_the_others_at_zero) {
  const auto p = preferences::parse("accuracy=0.7,cost=0.3");
  BOOST_TEST(p.weight(quality::accuracy) == 0.7f);
  BOOST_TEST(p.weight(quality::cost) == 0.3f);
  BOOST_TEST(p.weight(quality::latency) == 0.0f);
  BOOST_TEST(p.describe() == "accuracy=0.7,cost=0.3");
  BOOST_TEST(preferences::parse(p.describe()).weights() == p.weights());
}

BOOST_AUTO_TEST_CASE(overrides_change_one_weight_of_a_profile) {
  const auto base = preferences::profile("balanced");
  const auto p = preferences::parse("balanced,cost=0.9");
  BOOST_TEST(p.weight(quality::cost) == 0.9f);
  BOOST_TEST(p.weight(quality::accuracy) == base.weight(quality::accuracy));
  const auto q = base.with(quality::latency, 1.0f);
  BOOST_TEST(q.weight(quality::latency) == 1.0f);
  BOOST_TEST(base.weight(quality::latency) != 1.0f);  // the original stays
  BOOST_TEST(q.describe() != "balanced");
}

BOOST_AUTO_TEST_CASE(bad_specifications_are_refused) {
  BOOST_CHECK_THROW(preferences::parse(""), std::invalid_argument);
  BOOST_CHECK_THROW(preferences::parse("speed=1"), std::invalid_argument);
  BOOST_CHECK_THROW(preferences::parse("cost=cheap"), std::invalid_argument);
  BOOST_CHECK_THROW(preferences::parse("cost=1.5"), std::invalid_argument);
  BOOST_CHECK_THROW(preferences::parse("cost=0.5,balanced"), std::invalid_argument);
  BOOST_CHECK_THROW(preferences().set(quality::cost, -0.1f), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
