// The spending ledger under the gateway's threads: worker threads admit and
// charge a tenant's requests while the shared tier's thread syncs and an
// operator reads the figures (labelled "concurrency": the ThreadSanitizer
// preset runs it). Nothing charged is lost, and a limit admits no more
// requests than it allows, however the threads interleave.
#include <atomic>   // std::atomic
#include <chrono>   // std::chrono
#include <span>     // std::span
#include <thread>   // std::jthread
#include <vector>   // std::vector

#include <boost/test/unit_test.hpp>

#include "llmgate/server/spending/spending_ledger.hpp"

namespace {

using namespace llmgate;
using namespace std::chrono;
using namespace std::chrono_literals;

wall_clock stopped() {
  return wall_clock::stopped_at(time_point_cast<system_clock::duration>(sys_days(2026y / November / 29) + 10h));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spending_ledger_concurrency_test)

BOOST_AUTO_TEST_CASE(workers_charge_while_the_tier_syncs_and_nothing_is_lost) {
  constexpr int workers = 4, requests = 2'000;
  spending_ledger ledger(std::vector<tenant_config>{{"acme", "k",
                                                     {.budget_usd = 1e6, .budget_period = spending_period::parse("day"),
                                                      .requests_per_minute = 1'000'000}}},
                         stopped());
  ledger.share_as("a");
  std::atomic<int> done{0};
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < workers; ++w)
      threads.emplace_back([&] {
        for (int i = 0; i < requests; ++i)
          if (!ledger.admit("acme", 0)) ledger.charge("acme", 0.25, 10, 10);
        ++done;
      });
    threads.emplace_back([&] {  // the shared tier: a store where no other replica spent
      const std::vector<double> nobody(4, 0.0);  // at most two windows of two limits
      while (done.load() < workers) {
        const auto entries = ledger.begin_sync();
        ledger.end_sync(entries, std::span<const double>(nobody.data(), entries.size()), 1);
        (void)ledger.statistics();
      }
    });
  }
  const auto limits = ledger.statistics().at("tenants").at(0).at("limits");
  BOOST_TEST(limits.at("budget").at("used").to_number<double>() == 0.25 * workers * requests);
  BOOST_TEST(limits.at("requests_per_minute").at("used").to_number<double>() == double(workers * requests));
}

BOOST_AUTO_TEST_CASE(a_limit_admits_no_more_than_it_allows_however_the_workers_race) {
  constexpr int workers = 4, limit = 1'000;
  spending_ledger ledger(std::vector<tenant_config>{{"acme", "k", {.requests_per_minute = limit}}}, stopped());
  std::atomic<int> admitted{0};
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < workers; ++w)
      threads.emplace_back([&] {
        for (int i = 0; i < limit; ++i)
          if (!ledger.admit("acme", 0)) ++admitted;
      });
  }
  BOOST_TEST(admitted.load() == limit);
}

BOOST_AUTO_TEST_SUITE_END()
