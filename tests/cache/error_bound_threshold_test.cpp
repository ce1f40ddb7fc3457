// error_bound_threshold: with no verdicts it takes the verifier at its
// word; on a synthetic stream whose true error rates are known (a verifier
// that claims three times too little error) the answers it serves keep
// the bound once verdicts came in; a new scope borrows the cache's
// estimate and moves to its own as its verdicts come; an entry judged
// right serves further down than its scope; a snapshot keeps the verdicts.
// The expected estimates are worked out by hand from the header's rules.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <string>
#include <system_error>

#include "llmgate/cache/configured_threshold.hpp"
#include "llmgate/cache/error_bound_threshold.hpp"
#include "llmgate/store/snapshot_file.hpp"

using llmgate::error_bound_threshold;
using llmgate::hash128;
using llmgate::threshold_decision;
namespace tt = boost::test_tools;

namespace {

// The header's rules, for the hand-worked estimates: a mean of `wrong` of
// `n` verdicts with `k` pseudo-verdicts at `prior`, and its upper bound at z = 1.
double mean(double wrong, double n, double k, double prior) { return (wrong + k * prior) / (n + k); }
double upper(double m, double n) { return m + std::sqrt(m * (1 - m) / n); }

const char* name_of(threshold_decision d) {
  return d == threshold_decision::hit ? "hit" : d == threshold_decision::explore ? "explore" : "miss";
}

const hash128 tenant_a{.low = 1, .high = 1};
const hash128 tenant_b{.low = 2, .high = 2};

}  // namespace

BOOST_AUTO_TEST_SUITE(error_bound_threshold_test)

BOOST_AUTO_TEST_CASE(with_no_verdicts_it_takes_the_verifier_at_its_word) {
  const error_bound_threshold policy({.bound = 0.05f, .explore_rate = 0, .verify_rate = 0});
  // Bin [0.96, 0.98) claims 1 - 0.97 wrong, as 100 verdicts: within 0.05
  // with its standard error; [0.94, 0.96) claims 0.05: over it with its error.
  BOOST_TEST(policy.estimated_error(tenant_a, 7, 0.97f) == upper(0.03, 100), tt::tolerance(1e-9));
  BOOST_TEST(policy.estimated_error(tenant_a, 7, 0.95f) == upper(0.05, 100), tt::tolerance(1e-9));
  BOOST_TEST(name_of(policy.decide(tenant_a, 7, 0.97f)) == std::string("hit"));
  BOOST_TEST(name_of(policy.decide(tenant_a, 7, 0.999f)) == std::string("hit"));
  BOOST_TEST(name_of(policy.decide(tenant_a, 7, 0.95f)) == std::string("miss"));
}

BOOST_AUTO_TEST_CASE(the_bound_is_kept_where_the_verifier_claims_too_little_error) {
  // True chance of a wrong answer at probability p: 3 (1 - p), three times
  // what the verifier claims. Every explored answer is judged, and every
  // served one where users report (else the policy's verify_rate is all
  // it hears of the bins it serves).
  for (const bool reported : {true, false})
  for (const float bound : {0.02f, 0.05f, 0.10f}) {
    error_bound_threshold policy({.bound = bound});
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> probability(0.80f, 1.0f);
    std::uniform_real_distribution<double> chance(0.0, 1.0);
    std::size_t served = 0, wrong = 0;
    constexpr int requests = 40'000;
    for (int i = 0; i < requests; ++i) {
      const float p = probability(rng);
      const auto entry = static_cast<llmgate::entry_handle>(i);  // each neighbour a fresh entry
      const auto decision = policy.decide(tenant_a, entry, p);
      const bool right = chance(rng) >= 3.0 * (1.0 - p);
      if (decision == threshold_decision::miss) continue;
      if (reported || decision == threshold_decision::explore) policy.record(tenant_a, entry, p, right);
      if (decision == threshold_decision::hit && i >= requests / 4) ++served, wrong += !right;  // after a warm-up
    }
    // (At 0.02 nothing is truly that right: the top bin is 3% wrong on average.)
    const double realised = served ? static_cast<double>(wrong) / static_cast<double>(served) : 0.0;
    BOOST_TEST_MESSAGE("bound " << bound << (reported ? "" : ", hits not reported") << ": served " << served << ", "
                                << wrong << " wrong");
    BOOST_TEST(realised <= bound, "bound " << bound << ": " << wrong << " of " << served << " served were wrong");
    // Not mute: the top bin is truly 3% wrong on average, so a bound of
    // 0.05 or more serves it (a twentieth of the stream) and more.
    if (bound >= 0.05f) BOOST_TEST(served >= static_cast<std::size_t>(0.75 * requests / 20));
  }
}

BOOST_AUTO_TEST_CASE(a_new_scope_borrows_the_caches_estimate_then_goes_by_its_own) {
  error_bound_threshold policy({.bound = 0.05f, .explore_rate = 0, .verify_rate = 0});
  // Tenant a: at probability 0.95, 20 of 100 answers were wrong.
  for (int i = 0; i < 100; ++i) policy.record(tenant_a, 1, 0.95f, i % 5 != 0);
  const double cache = mean(20, 100, 100, 0.05);  // 0.125, behind 200
  BOOST_TEST(policy.estimated_error(tenant_b, 2, 0.95f) == upper(cache, 200), tt::tolerance(1e-9));
  BOOST_TEST(policy.estimated_error(tenant_a, 2, 0.95f) == upper(mean(20, 100, 30, cache), 130), tt::tolerance(1e-9));
  BOOST_TEST(name_of(policy.decide(tenant_b, 2, 0.95f)) == std::string("miss"));  // not reckless
  // Tenant b's own 200 verdicts, all right: its mean (0 + 30 x 25/400) / 230
  // is raised to the bin above's 0.03, behind 230 verdicts.
  for (int i = 0; i < 200; ++i) policy.record(tenant_b, 3, 0.95f, true);
  BOOST_TEST(policy.estimated_error(tenant_b, 2, 0.95f) == upper(0.03, 230), tt::tolerance(1e-9));
  BOOST_TEST(name_of(policy.decide(tenant_b, 2, 0.95f)) == std::string("hit"));  // not mute
  BOOST_TEST(name_of(policy.decide(tenant_a, 2, 0.95f)) == std::string("miss"));
}

BOOST_AUTO_TEST_CASE(an_entry_judged_right_serves_further_down_than_its_scope) {
  error_bound_threshold policy({.bound = 0.05f, .explore_rate = 0, .verify_rate = 0});
  for (int i = 0; i < 6; ++i) policy.record(tenant_a, 9, 0.93f, true);
  // The cache's bin: 6 right against 100 at 0.07; the scope's: 6 right
  // against 30 of the cache's; the entry's: 4 / (6 + 4) of the scope's.
  const double scope = upper(mean(0, 6, 30, mean(0, 6, 100, 0.07)), 36);
  BOOST_TEST(policy.estimated_error(tenant_a, 8, 0.93f) == scope, tt::tolerance(1e-9));
  BOOST_TEST(policy.estimated_error(tenant_a, 9, 0.93f) == 4 * scope / 10, tt::tolerance(1e-9));
  BOOST_TEST(name_of(policy.decide(tenant_a, 9, 0.93f)) == std::string("hit"));
  BOOST_TEST(name_of(policy.decide(tenant_a, 8, 0.93f)) == std::string("miss"));  // another entry
  BOOST_TEST(name_of(policy.decide(tenant_a, 9, 0.91f)) == std::string("miss"));  // below where it was judged
  policy.forget(9);
  BOOST_TEST(name_of(policy.decide(tenant_a, 9, 0.93f)) == std::string("miss"));
}

BOOST_AUTO_TEST_CASE(a_snapshot_keeps_the_verdicts_and_a_cut_one_is_refused) {
  error_bound_threshold policy({.bound = 0.05f});
  for (int i = 0; i < 50; ++i) policy.record(i % 2 ? tenant_a : tenant_b, 4, 0.9f + 0.001f * (i % 40), i % 7 != 0);
  llmgate::store::snapshot_writer out({'T', 'E', 'S', 'T'}, 1);
  policy.save_to(out);
  const std::string bytes = std::move(out).seal();
  std::error_code ec;
  llmgate::store::snapshot_reader in(bytes, {'T', 'E', 'S', 'T'}, 1, ec);
  BOOST_REQUIRE(!ec);
  error_bound_threshold restored({.bound = 0.05f});
  restored.restore_from(in);
  BOOST_TEST(!in.finish());
  for (const float p : {0.85f, 0.91f, 0.93f, 0.95f, 0.99f})
    for (const auto& scope : {tenant_a, tenant_b}) {
      BOOST_TEST(restored.estimated_error(scope, 4, p) == policy.estimated_error(scope, 4, p));
      BOOST_TEST(restored.estimated_error(scope, 5, p) == policy.estimated_error(scope, 5, p));
    }
  // A payload cut short reads as corrupt.
  llmgate::store::snapshot_writer small({'T', 'E', 'S', 'T'}, 1);
  small.write(std::uint64_t{1});
  std::string cut = std::move(small).seal();
  llmgate::store::snapshot_reader short_in(cut, {'T', 'E', 'S', 'T'}, 1, ec);
  BOOST_REQUIRE(!ec);
  error_bound_threshold(policy.options()).restore_from(short_in);
  BOOST_TEST(short_in.finish() == make_error_code(llmgate::errc::corrupt_file));
}

BOOST_AUTO_TEST_CASE(a_configuration_names_it_and_its_snapshot_is_read_past_by_another_kind) {
  auto bounded = llmgate::configured_threshold::error_bounded({.bound = 0.02f});
  BOOST_TEST(llmgate::threshold_kind_name(bounded.kind()) == "error_bound");
  BOOST_TEST(llmgate::threshold_kind_name(*llmgate::threshold_kind_named("error_bound")) == "error_bound");
  // The top bin claims 0.01 wrong, as 100 verdicts: 0.01 + 0.00995 is within 0.02; the next is not.
  BOOST_TEST(bounded.threshold() == 0.98f);
  for (int i = 0; i < 30; ++i) bounded.record(tenant_a, 1, 0.99f, false);  // the top bin turns out wrong
  BOOST_TEST(bounded.threshold() > 1.0f);                                  // nothing is served now
  llmgate::store::snapshot_writer out({'T', 'E', 'S', 'T'}, 1);
  bounded.save_to(out);
  out.write(std::uint32_t{77});  // what follows it in a cache's snapshot
  const std::string bytes = std::move(out).seal();
  for (auto loaded : {llmgate::configured_threshold::error_bounded({.bound = 0.02f}),
                      llmgate::configured_threshold::adaptive(), llmgate::configured_threshold::fixed(0.9f)}) {
    std::error_code ec;
    llmgate::store::snapshot_reader in(bytes, {'T', 'E', 'S', 'T'}, 1, ec);
    loaded.restore_from(in);
    BOOST_TEST(in.read<std::uint32_t>() == 77u);
    BOOST_TEST(!in.finish());
    if (loaded.kind() == llmgate::threshold_kind::error_bound) BOOST_TEST(loaded.threshold() > 1.0f);
  }
}

BOOST_AUTO_TEST_SUITE_END()
