// Ranking agreement between an automatic method and people: Spearman's rank
// correlation (ties at their average rank) and the bottom-k Jaccard index,
// on rankings worked out by hand.
#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include <cmath>   // std::isnan, std::sqrt
#include <set>     // std::set
#include <string>  // std::string
#include <vector>  // std::vector

#include "llmgate/eval/score/agreement.hpp"  // average_ranks, spearman, bottom_k, bottom_k_jaccard

using namespace llmgate;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_SUITE(agreement_test)

BOOST_AUTO_TEST_CASE(ties_take_the_mean_of_their_ranks) {
  BOOST_TEST((average_ranks({10, 20, 20, 30}) == std::vector<double>{1, 2.5, 2.5, 4}));
  BOOST_TEST((average_ranks({3, 1, 2}) == std::vector<double>{3, 1, 2}));
  BOOST_TEST((average_ranks({5, 5, 5}) == std::vector<double>{2, 2, 2}));
  BOOST_TEST(average_ranks({}).empty());
}

BOOST_AUTO_TEST_CASE(spearman_without_ties) {
  const candidate_scores people{{"A", 1}, {"B", 2}, {"C", 3}, {"D", 4}};
  // B and C swapped: sum d^2 = 2, so 1 - 6 * 2 / (4 * 15) = 0.8.
  BOOST_TEST(spearman({{"A", 0.1}, {"B", 0.3}, {"C", 0.2}, {"D", 0.9}}, people) == 0.8, tt::tolerance(1e-12));
  BOOST_TEST(spearman({{"A", 10}, {"B", 20}, {"C", 30}, {"D", 40}}, people) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(spearman({{"A", 4}, {"B", 3}, {"C", 2}, {"D", 1}}, people) == -1.0, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(spearman_with_ties_is_pearson_on_average_ranks) {
  // Ranks (1, 2.5, 2.5, 4) and (1, 2, 3, 4), both of mean 2.5: products
  // 2.25 + 0 + 0 + 2.25 = 4.5; squares 4.5 and 5; 4.5 / sqrt(22.5) = sqrt(0.9).
  const candidate_scores method{{"A", 1}, {"B", 2}, {"C", 2}, {"D", 3}};
  const candidate_scores people{{"A", 1}, {"B", 2}, {"C", 3}, {"D", 4}};
  BOOST_TEST(spearman(method, people) == std::sqrt(0.9), tt::tolerance(1e-12));
  BOOST_TEST(spearman(method, people) == 0.9486832980505138, tt::tolerance(1e-12));
  BOOST_TEST(spearman(people, method) == spearman(method, people), tt::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(spearman_compares_the_candidates_both_rank) {
  const candidate_scores people{{"A", 1}, {"B", 2}, {"C", 3}};
  // E is unrated by people: left out.
  BOOST_TEST(spearman({{"A", 1}, {"B", 2}, {"C", 3}, {"E", -5}}, people) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(std::isnan(spearman({{"A", 1}}, people)));                              // one in common
  BOOST_TEST(std::isnan(spearman({{"A", 1}, {"B", 1}, {"C", 1}}, people)));          // all tied
  BOOST_TEST(std::isnan(spearman({}, people)));
}

BOOST_AUTO_TEST_CASE(bottom_k_jaccard_by_hand) {
  const candidate_scores method{{"A", 1}, {"B", 2}, {"C", 3}, {"D", 4}};
  BOOST_TEST(bottom_k_jaccard(method, {{"A", 2}, {"B", 1}, {"C", 4}, {"D", 3}}, 2) == 1.0);  // {A,B} both
  BOOST_TEST(bottom_k_jaccard(method, {{"A", 2}, {"B", 1}, {"C", 4}, {"D", 3}}, 1) == 0.0);  // {A} / {B}
  BOOST_TEST(bottom_k_jaccard(method, {{"A", 1}, {"B", 3}, {"C", 2}, {"D", 4}}, 2) == 1.0 / 3);  // {A,B} / {A,C}
  BOOST_TEST(bottom_k_jaccard(method, method, 9) == 1.0);                                      // k past n: all
}

BOOST_AUTO_TEST_CASE(bottom_k_keeps_every_candidate_tied_at_the_cut) {
  const std::set<std::string> all{"A", "B", "C", "D"};
  const candidate_scores people{{"A", 1}, {"B", 2}, {"C", 2}, {"D", 4}};
  BOOST_TEST((bottom_k(people, all, 2) == std::set<std::string>{"A", "B", "C"}));
  BOOST_TEST((bottom_k(people, {"B", "C", "D"}, 1) == std::set<std::string>{"B", "C"}));
  // {A, B} against {A, B, C}: 2 / 3.
  BOOST_TEST(bottom_k_jaccard({{"A", 1}, {"B", 2}, {"C", 3}, {"D", 4}}, people, 2) == 2.0 / 3);
}

BOOST_AUTO_TEST_CASE(bottom_k_jaccard_undefined_cases) {
  BOOST_TEST(std::isnan(bottom_k_jaccard({{"A", 1}}, {{"A", 1}}, 0)));
  BOOST_TEST(std::isnan(bottom_k_jaccard({{"A", 1}}, {{"B", 1}}, 1)));  // nobody in common
  BOOST_TEST(bottom_k_jaccard({{"A", 1}, {"X", 0}}, {{"A", 1}}, 1) == 1.0);  // X unrated: only A compared
}

BOOST_AUTO_TEST_SUITE_END()
