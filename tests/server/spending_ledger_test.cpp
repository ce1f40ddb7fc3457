// The tenants' spending limits on a stopped clock, so that every figure is
// exact: the periods (calendar days and months, durations from the epoch),
// a budget at its edges (the request that crosses it passes, the next is
// refused until the period ends), the sliding minute of the rate limits
// and when a refused request may pass, the snapshot, and the sync with a
// shared store (the others' spending, a failed sync, this replica's share
// while the store is away, a restart under the same name or another).
#include <chrono>      // std::chrono
#include <optional>    // std::optional
#include <span>        // std::span
#include <string>      // std::string
#include <vector>      // std::vector

#include <boost/test/unit_test.hpp>

#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"
#include "llmgate/error.hpp"
#include "llmgate/server/spending/spending_ledger.hpp"

namespace {

using namespace llmgate;
using namespace std::chrono;
using namespace std::chrono_literals;

sys_seconds at(year_month_day day, seconds time = 0s) { return sys_days(day) + time; }

spending_period period(std::string_view text) {
  const auto parsed = spending_period::parse(text);
  BOOST_TEST_REQUIRE(parsed.has_value(), text);
  return *parsed;
}

std::vector<tenant_config> one_tenant(spending_limits limits) { return {{"acme", "key-acme", limits}}; }

spending_limits budget(double usd, std::string_view every) {
  return {.budget_usd = usd, .budget_period = period(every)};
}

// A clock stopped at `t`.
wall_clock stopped(sys_seconds t) { return wall_clock::stopped_at(time_point_cast<system_clock::duration>(t)); }

double used(const spending_ledger& ledger, std::string_view limit) {
  return ledger.statistics().at("tenants").at(0).at("limits").at(limit).at("used").to_number<double>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spending_ledger_test)

BOOST_AUTO_TEST_CASE(periods_begin_where_the_calendar_and_the_epoch_say) {
  const auto t = at(2026y / February / 15, 13h + 5min + 7s);
  BOOST_TEST((period("day").start_of(t) == at(2026y / February / 15)));
  BOOST_TEST((period("day").next(at(2026y / February / 15)) == at(2026y / February / 16)));
  BOOST_TEST((period("month").start_of(t) == at(2026y / February / 1)));
  BOOST_TEST((period("month").next(at(2026y / February / 1)) == at(2026y / March / 1)));
  BOOST_TEST((period("month").next(at(2026y / December / 1)) == at(2027y / January / 1)));
  // Durations count from the Unix epoch: every replica's periods begin together.
  BOOST_TEST((period("12h").start_of(t) == at(2026y / February / 15, 12h)));
  BOOST_TEST((period("90m").start_of(t) == at(2026y / February / 15, 12h)));  // 2026-02-15T12:00 is a multiple of 90 minutes
  BOOST_TEST((period("90m").next(at(2026y / February / 15, 12h)) == at(2026y / February / 15, 13h + 30min)));
  BOOST_TEST((period("3600s").start_of(t) == at(2026y / February / 15, 13h)));
  BOOST_TEST((period("7d").start_of(at(1970y / January / 9)) == at(1970y / January / 8)));
  BOOST_TEST(period("7d").text() == "7d");
  for (const char* refused : {"", "d", "0s", "-5m", "5x", "1.5h", "day1", "Month", "100000000d"})
    BOOST_TEST(!spending_period::parse(refused).has_value(), refused);
}

BOOST_AUTO_TEST_CASE(a_tenant_without_limits_always_passes_and_is_not_counted) {
  spending_ledger ledger(std::vector<tenant_config>{{"acme", "key-acme"}}, wall_clock{});
  BOOST_TEST(ledger.empty());
  BOOST_TEST(!ledger.admit("acme", 1'000'000).has_value());
  BOOST_TEST(!ledger.admit("nobody", 0).has_value());
  BOOST_TEST(ledger.begin_sync().empty());
}

BOOST_AUTO_TEST_CASE(the_request_that_crosses_the_budget_passes_and_the_next_waits_for_the_period_to_end) {
  const auto clock = stopped(at(2026y / November / 29, 23h + 58min + 20s));
  spending_ledger ledger(one_tenant(budget(0.01, "day")), clock);
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST_REQUIRE(!ledger.admit("acme", 0).has_value());
    ledger.charge("acme", 0.004, 100, 50);
  }
  const double spent = 0.004 + 0.004 + 0.004;  // 0.012: the third request crossed 0.01 and was served
  BOOST_TEST(used(ledger, "budget") == spent);
  const auto refused = ledger.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST((refused->limit == spending_measure::usd));
  BOOST_TEST(refused->allowed == 0.01);
  BOOST_TEST(refused->used == spent);
  BOOST_TEST(refused->period == "day");
  BOOST_TEST((refused->retry_at == at(2026y / November / 30)));
  BOOST_TEST(!refused->local_share);
  const auto stats = ledger.statistics().at("tenants").at(0).at("limits").at("budget");
  BOOST_TEST(stats.at("refusals").to_number<int>() == 1);
  BOOST_TEST(stats.at("remaining").to_number<double>() == 0.0);
  BOOST_TEST(stats.at("resets_at").to_number<std::int64_t>() == at(2026y / November / 30).time_since_epoch().count());

  clock.advance(99s);  // 23:59:59: still the same day
  BOOST_TEST(ledger.admit("acme", 0).has_value());
  clock.advance(1s);  // midnight: a new period, nothing spent in it
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
  BOOST_TEST(used(ledger, "budget") == 0.0);
}

// The previous minute's part is a fraction of seconds: its products are
// exact to the last bit or two.
BOOST_AUTO_TEST_CASE(a_minute_slides_the_previous_minute_counting_for_what_is_left_of_it,
                     *boost::unit_test::tolerance(1e-12)) {
  const auto minute = at(2026y / November / 29, 10h);
  const auto clock = stopped(minute);
  spending_ledger ledger(one_tenant({.output_tokens_per_minute = 50}), clock);
  for (int i = 0; i < 3; ++i) {  // 20, 40, 60: the third passes, under the limit when admitted
    BOOST_TEST_REQUIRE(!ledger.admit("acme", 0).has_value());
    ledger.charge("acme", 0, 10, 20);
  }
  auto refused = ledger.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->used == 60.0);
  // 60 in this minute: in the next it counts 60 * (1 - s/60), under 50 once s passes 10.
  BOOST_TEST((refused->retry_at == minute + 71s));

  clock.advance(60s);
  refused = ledger.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->used == 60.0);
  BOOST_TEST((refused->retry_at == minute + 71s));
  clock.advance(10s);  // 60 * 50/60 = 50: the minute's completions reached the limit still
  BOOST_TEST(ledger.admit("acme", 0).has_value());
  clock.advance(1s);  // 60 * 49/60 = 49
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
  BOOST_TEST(used(ledger, "output_tokens_per_minute") == 49.0);
  clock.advance(2min);  // two minutes on: neither window counts
  BOOST_TEST(used(ledger, "output_tokens_per_minute") == 0.0);
}

BOOST_AUTO_TEST_CASE(requests_count_when_admitted_and_a_refused_one_is_not_counted) {
  const auto minute = at(2026y / November / 29, 10h);
  const auto clock = stopped(minute);
  spending_ledger ledger(one_tenant({.requests_per_minute = 2}), clock);
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
  const auto refused = ledger.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST((refused->limit == spending_measure::requests));
  BOOST_TEST(refused->used == 2.0);
  BOOST_TEST(refused->requested == 1.0);
  BOOST_TEST((refused->retry_at == minute + 90s));  // 2 * (1 - 30/60) + 1 = 2
  clock.advance(89s);
  BOOST_TEST(ledger.admit("acme", 0).has_value());
  clock.advance(1s);
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
  BOOST_TEST(used(ledger, "requests_per_minute") == 2.0);  // the previous minute's half, and this one
}

BOOST_AUTO_TEST_CASE(a_prompt_is_checked_by_its_estimate_and_one_over_the_limit_can_never_pass) {
  const auto clock = stopped(at(2026y / November / 29, 10h));
  spending_ledger ledger(one_tenant({.input_tokens_per_minute = 100}), clock);
  BOOST_TEST(ledger.counts_input("acme"));
  BOOST_TEST(!ledger.counts_input("nobody"));
  auto refused = ledger.admit("acme", 150);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->requested == 150.0);
  BOOST_TEST(!refused->retry_at.has_value());
  BOOST_TEST(!ledger.admit("acme", 60).has_value());
  ledger.charge("acme", 0, 60, 5);  // the call's own count is what is charged
  BOOST_TEST(!ledger.admit("acme", 40).has_value());  // 60 + 40 = 100: at the limit, not past it
  refused = ledger.admit("acme", 41);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->used == 60.0);
  BOOST_TEST(refused->retry_at.has_value());
}

BOOST_AUTO_TEST_CASE(spending_survives_a_save_and_a_load_and_a_damaged_file_is_refused) {
  test::temporary_directory directory;
  const auto clock = stopped(at(2026y / November / 29, 10h));
  const auto limits = spending_limits{.budget_usd = 1, .budget_period = period("month"), .requests_per_minute = 10};
  spending_ledger before(std::vector<tenant_config>{{"acme", "a", limits}, {"globex", "g", limits}}, clock);
  BOOST_TEST(!before.admit("acme", 0).has_value());
  before.charge("acme", 0.25, 10, 10);
  BOOST_TEST(!before.admit("globex", 0).has_value());
  before.charge("globex", 0.5, 10, 10);
  const auto file = directory / "spending.snapshot";
  BOOST_TEST_REQUIRE(!before.save(file));

  // globex is gone from the config: its spending is dropped.
  spending_ledger after(one_tenant(limits), clock);
  after.load(file);
  BOOST_TEST(used(after, "budget") == 0.25);
  BOOST_TEST(used(after, "requests_per_minute") == 1.0);
  BOOST_TEST(after.statistics().at("tenants").as_array().size() == 1u);

  std::string bytes = test::read_bytes(file);
  bytes[bytes.size() / 2] ^= 0x20;
  test::write_bytes(file, bytes);
  spending_ledger damaged(one_tenant(limits), clock);
  BOOST_CHECK_THROW(damaged.load(file), llmgate::error);
}

BOOST_AUTO_TEST_CASE(a_sync_writes_this_replicas_spending_whole_and_reads_the_others) {
  const auto clock = stopped(at(2026y / November / 29, 10h));
  spending_ledger ledger(one_tenant(budget(1.0, "day")), clock);
  ledger.share_as("a");
  ledger.charge("acme", 0.25, 0, 0);
  auto entries = ledger.begin_sync();
  BOOST_TEST_REQUIRE(entries.size() == 1u);  // the day's window; there is no previous one yet
  BOOST_TEST(entries[0].tenant == "acme");
  BOOST_TEST(entries[0].mine == 0.25);
  BOOST_TEST(entries[0].window_start == at(2026y / November / 29).time_since_epoch().count());
  BOOST_TEST(entries[0].keep_until == at(2026y / December / 1).time_since_epoch().count());
  ledger.charge("acme", 0.125, 0, 0);  // while the sync is under way
  const std::vector<double> others = {0.5};  // another replica spent 0.5
  ledger.end_sync(entries, std::span<const double>(others), 2);
  BOOST_TEST(used(ledger, "budget") == 0.875);

  entries = ledger.begin_sync();
  BOOST_TEST_REQUIRE(entries.size() == 1u);
  BOOST_TEST(entries[0].mine == 0.375);  // whole, not what changed: a write sent twice counts once
  ledger.end_sync(entries, std::nullopt, 0);  // the store is away
  BOOST_TEST(ledger.statistics().at("store_away").as_bool());

  // Away, what this replica spent since its last sync (0.125) counts once
  // per replica last seen (two): 0.5 + 0.25 + 2 * 0.125 = 1.0 reaches the budget.
  BOOST_TEST(used(ledger, "budget") == 1.0);
  const auto refused = ledger.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->local_share);

  entries = ledger.begin_sync();  // the store is back
  ledger.end_sync(entries, std::span<const double>(others), 2);
  BOOST_TEST(used(ledger, "budget") == 0.875);
  BOOST_TEST(!ledger.admit("acme", 0).has_value());
}

BOOST_AUTO_TEST_CASE(a_replica_back_under_its_name_goes_on_with_its_figure_and_under_another_its_spending_is_anothers) {
  test::temporary_directory directory;
  const auto clock = stopped(at(2026y / November / 29, 10h));
  const auto file = directory / "spending.snapshot";
  {
    spending_ledger before(one_tenant(budget(1.0, "day")), clock);
    before.share_as("a");
    before.charge("acme", 0.25, 0, 0);
    const auto entries = before.begin_sync();
    const std::vector<double> others = {0.5};
    before.end_sync(entries, std::span<const double>(others), 2);
    BOOST_TEST_REQUIRE(!before.save(file));
  }
  spending_ledger same(one_tenant(budget(1.0, "day")), clock);
  same.share_as("a");
  same.load(file);
  BOOST_TEST(used(same, "budget") == 0.75);
  BOOST_TEST(same.begin_sync().at(0).mine == 0.25);

  spending_ledger renamed(one_tenant(budget(1.0, "day")), clock);
  renamed.share_as("b");  // a new process id: the store holds "a"'s 0.25 under "a"
  renamed.load(file);
  BOOST_TEST(used(renamed, "budget") == 0.75);
  BOOST_TEST(renamed.begin_sync().at(0).mine == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
