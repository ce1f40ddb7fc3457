// The tenants' spending across gateway replicas (tiers in one process, each
// with its own ledger) over one real redis-server: one replica's spending
// counts for all, the store holds each replica's figure whole, and while
// the store is away each replica holds to its share of what remained, the
// store having everyone's spending once it is back. The replicas share a
// stopped spending clock, so that every figure is exact.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "redis_server.hpp"
#include "shared_replica.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using llmgate::gateway_config;
using llmgate::spending_ledger;
using llmgate::spending_period;
using llmgate::wall_clock;
using llmgate::test::eventually;
using llmgate::test::redis_server;
using llmgate::test::redis_text;
using llmgate::test::shared_config_for;
using llmgate::test::shared_replica;

namespace {

const auto month = sys_days(2026y / November / 1);

// A replica named `name` whose tenant acme has $1 a month, synced every 20 ms.
gateway_config config_for(const redis_server& server, std::string name) {
  auto config = shared_config_for(server.port(), std::move(name));
  config.tenants = {{"acme", "key-acme", {.budget_usd = 1.0, .budget_period = spending_period::parse("month")}}};
  config.shared->spending_sync_ms = 20;
  return config;
}

wall_clock stopped_clock() {
  return wall_clock::stopped_at(time_point_cast<system_clock::duration>(month + days(28) + 12h));
}

double used(const spending_ledger& ledger) {
  return ledger.statistics().at("tenants").at(0).at("limits").at("budget").at("used").to_number<double>();
}

bool synced_with(const spending_ledger& ledger, std::size_t replicas) {
  const auto stats = ledger.statistics();
  return !stats.at("store_away").as_bool() && stats.at("replicas").to_number<std::size_t>() == replicas;
}

bool away(const spending_ledger& ledger) { return ledger.statistics().at("store_away").as_bool(); }

// Two replicas, a and b, over one redis-server, syncing; the suite skips
// without redis-server.
struct two_replicas {
  redis_server server;
  wall_clock clock = stopped_clock();
  shared_replica a{config_for(server, "a"), clock}, b{config_for(server, "b"), clock};

  two_replicas() {
    a.tier->start();
    b.tier->start();
    BOOST_TEST_REQUIRE(eventually([&] { return synced_with(a.spending, 2) && synced_with(b.spending, 2); }));
  }
};

const std::string budget_key =
    "test:{spending}:acme:budget:" + std::to_string(sys_seconds(month).time_since_epoch().count());

}  // namespace

BOOST_AUTO_TEST_SUITE(shared_spending_test)

BOOST_AUTO_TEST_CASE(one_replicas_spending_counts_for_all_and_the_store_holds_each_replicas_figure) {
  if (llmgate::test::skip_without_redis()) return;
  two_replicas replicas;
  auto& [server, clock, a, b] = replicas;
  BOOST_TEST_REQUIRE(!a.spending.admit("acme", 0).has_value());
  a.spending.charge("acme", 0.75, 0, 0);
  BOOST_TEST(eventually([&] { return used(b.spending) == 0.75; }));
  BOOST_TEST_REQUIRE(!b.spending.admit("acme", 0).has_value());
  b.spending.charge("acme", 0.25, 0, 0);
  BOOST_TEST(eventually([&] { return used(a.spending) == 1.0; }));

  // Spent on both, the budget is reached on both.
  for (spending_ledger* ledger : {&a.spending, &b.spending}) {
    const auto refused = ledger->admit("acme", 0);
    BOOST_TEST_REQUIRE(refused.has_value());
    BOOST_TEST(refused->used == 1.0);
    BOOST_TEST(!refused->local_share);
  }
  BOOST_TEST(redis_text(server, {"HGET", budget_key, "a"}) == "0.75");
  BOOST_TEST(redis_text(server, {"HGET", budget_key, "b"}) == "0.25");
  // A replica not seen for a day is forgotten.
  server.cli({"HSET", "test:{spending}:replicas", "gone", "1"});
  BOOST_TEST(eventually([&] { return redis_text(server, {"HEXISTS", "test:{spending}:replicas", "gone"}) == "0"; }));
  BOOST_TEST(redis_text(server, {"HEXISTS", "test:{spending}:replicas", "a"}) == "1");
  // Kept until no replica reads the month: the end of the next one.
  const auto expires = std::stoll(redis_text(server, {"PEXPIRETIME", budget_key}));
  BOOST_TEST(expires == duration_cast<milliseconds>((sys_days(2027y / January / 1)).time_since_epoch()).count());
}

BOOST_AUTO_TEST_CASE(while_the_store_is_away_each_replica_holds_to_its_share_and_the_store_has_all_once_back) {
  if (llmgate::test::skip_without_redis()) return;
  two_replicas replicas;
  auto& [server, clock, a, b] = replicas;
  a.spending.charge("acme", 0.25, 0, 0);
  BOOST_TEST_REQUIRE(eventually([&] { return used(b.spending) == 0.25; }));

  server.cli({"SAVE"});  // what the store holds now comes back with it
  server.kill();
  BOOST_TEST_REQUIRE(eventually([&] { return away(a.spending) && away(b.spending); }));

  // $0.75 remained for two replicas: each may spend $0.375 of it.
  BOOST_TEST(!a.spending.admit("acme", 0).has_value());
  a.spending.charge("acme", 0.125, 0, 0);  // 0.25 + 2 * 0.125 = 0.5
  BOOST_TEST(!a.spending.admit("acme", 0).has_value());
  a.spending.charge("acme", 0.25, 0, 0);  // 0.25 + 2 * 0.375 = 1.0
  const auto refused = a.spending.admit("acme", 0);
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->local_share);
  BOOST_TEST(!b.spending.admit("acme", 0).has_value());
  b.spending.charge("acme", 0.25, 0, 0);  // 0.25 + 2 * 0.25 = 0.75: its share is not spent yet
  BOOST_TEST(used(b.spending) == 0.75);
  BOOST_TEST(!b.spending.admit("acme", 0).has_value());

  server.restart();
  // a spent 0.625 and b 0.25: both see all of it.
  BOOST_TEST(eventually([&] { return used(a.spending) == 0.875 && used(b.spending) == 0.875; }, 5s));
  BOOST_TEST(!away(a.spending));
  BOOST_TEST(!a.spending.admit("acme", 0).has_value());
  BOOST_TEST(redis_text(server, {"HGET", budget_key, "a"}) == "0.625");
  BOOST_TEST(redis_text(server, {"HGET", budget_key, "b"}) == "0.25");
}

BOOST_AUTO_TEST_SUITE_END()
