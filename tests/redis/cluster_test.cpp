// The client on a real 3-master Redis Cluster (redis_cluster.hpp): found
// from one seed node, it sends each key to the master of its slot; keys
// sharing a hash tag share a node; for one command or a pipeline, it
// follows MOVED once a slot has moved (and then asks the new master
// directly) and ASK while a slot is half moved (without taking ASK for a
// new map); and a load of SET/GET from many coroutines while a slot
// migrates sees no error and reads back every value it wrote.
#include <boost/test/unit_test.hpp>

#include <atomic>     // std::atomic
#include <chrono>     // std::chrono::seconds, milliseconds
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint16_t
#include <future>     // std::future
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string, std::to_string
#include <thread>     // std::jthread, std::this_thread::sleep_for
#include <utility>    // std::move
#include <vector>     // std::vector

#include <boost/asio/co_spawn.hpp>             // net::co_spawn
#include <boost/asio/executor_work_guard.hpp>  // net::make_work_guard
#include <boost/asio/io_context.hpp>           // net::io_context
#include <boost/asio/post.hpp>                 // net::post
#include <boost/asio/use_future.hpp>           // net::use_future

#include "llmgate/redis/client.hpp"         // client, client_options, client_statistics
#include "llmgate/redis/cluster_slots.hpp"  // key_slot
#include "redis_cluster.hpp"                // redis_cluster, key_in_slot, skip_without_redis

using namespace std::chrono_literals;
using llmgate::redis::client;
using llmgate::redis::client_options;
using llmgate::redis::client_statistics;
using llmgate::redis::command;
using llmgate::redis::key_slot;
using llmgate::redis::reply;
using llmgate::redis::reply_kind;
using llmgate::test::key_in_slot;
using llmgate::test::redis_cluster;
namespace net = boost::asio;

namespace {

/// Runs the client's io_context on a thread of its own, while the test's
/// thread drives the cluster through redis-cli and waits for answers.
/// Declared after the client, so that it stops (and joins) before the
/// client is destroyed.
class io_thread {
 public:
  explicit io_thread(net::io_context& io) : io_(io), work_(net::make_work_guard(io)), thread_([&io] { io.run(); }) {}
  ~io_thread() {
    work_.reset();
    io_.stop();
  }

 private:
  net::io_context& io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::jthread thread_;
};

/// The value a future brings, or a failure after `limit` (a test that
/// hangs tells nothing).
template <class T>
T within(std::future<T> done, std::chrono::seconds limit = 30s) {
  if (done.wait_for(limit) != std::future_status::ready)
    throw std::runtime_error("no answer in " + std::to_string(limit.count()) + " s");
  return done.get();
}

/// Runs `task` on the client's executor (the client lives there) and waits.
template <class T>
T wait(net::io_context& io, net::awaitable<T> task) {
  return within(net::co_spawn(io, std::move(task), net::use_future));
}

/// Reads the client's state on its executor.
client_statistics statistics_of(net::io_context& io, const client& redis) {
  return within(net::post(io, net::use_future([&redis] { return redis.statistics(); })));
}

client_options options_for(const redis_cluster& cluster, std::size_t seed) {
  client_options options;
  options.endpoints = {cluster.endpoint(seed)};
  options.command_timeout = 2000ms;  // a MIGRATE by redis-cli may hold a node for a moment
  return options;
}

/// Sends the commands one after another, each to its key's node.
net::awaitable<std::vector<reply>> exec_each(client& redis, std::vector<command> commands) {
  std::vector<reply> replies;
  for (auto& c : commands) replies.push_back(co_await redis.exec(std::move(c)));
  co_return replies;
}

std::vector<command> sets_of(const std::vector<std::string>& keys, const std::string& value_prefix) {
  std::vector<command> sets;
  for (const auto& key : keys) sets.push_back({"SET", key, value_prefix + key});
  return sets;
}

std::vector<command> gets_of(const std::vector<std::string>& keys) {
  std::vector<command> gets;
  for (const auto& key : keys) gets.push_back({"GET", key});
  return gets;
}

/// Checks that every SET answered OK.
void check_all_ok(const std::vector<reply>& replies) {
  for (const auto& r : replies) BOOST_TEST((r.kind == reply_kind::status && r.text == "OK"), r.text);
}

/// Checks that GET of each key answered value_prefix + key.
void check_values(const std::vector<reply>& replies, const std::vector<std::string>& keys,
                  const std::string& value_prefix) {
  BOOST_TEST_REQUIRE(replies.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    BOOST_TEST((replies[i].is_string() && replies[i].text == value_prefix + keys[i]), keys[i] << ": " << replies[i].text);
}

/// `count` keys "{tag}:<i>", all in the slot of `tag`.
std::vector<std::string> tagged_keys(const std::string& tag, std::size_t count) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < count; ++i) keys.push_back("{" + tag + "}:" + std::to_string(i));
  return keys;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_test)

BOOST_AUTO_TEST_CASE(key_slot_agrees_with_the_cluster) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  for (const std::string key : {"foo", "somekey", "{user1000}.following", "{}", "{", "foo{}{bar}", "a{b}c", "llmgate:{0123}:x:ab"})
    BOOST_TEST(std::to_string(key_slot(key)) == cluster.cli(0, {"CLUSTER", "KEYSLOT", key}), key);
}

BOOST_AUTO_TEST_CASE(from_one_seed_writes_spread_over_every_master) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  net::io_context io;
  client redis(io.get_executor(), options_for(cluster, 1));
  io_thread running(io);
  wait(io, redis.connect());
  BOOST_TEST(within(net::post(io, net::use_future([&redis] { return redis.cluster(); }))));

  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) keys.push_back("spread:" + std::to_string(i));
  check_all_ok(wait(io, exec_each(redis, sets_of(keys, "value of "))));
  check_values(wait(io, exec_each(redis, gets_of(keys))), keys, "value of ");

  // Each master holds exactly the keys of its slots.
  const auto owners = cluster.slot_owners();
  std::vector<long long> expected(redis_cluster::master_count, 0);
  for (const auto& key : keys) ++expected.at(owners.at(key_slot(key)));
  for (std::size_t i = 0; i < redis_cluster::master_count; ++i) {
    BOOST_TEST(expected[i] > 0);
    BOOST_TEST(cluster.dbsize(i) == expected[i], "node " << i);
  }
  // Sent where they belong, no node had to redirect.
  BOOST_TEST(statistics_of(io, redis).redirects == 0u);
  BOOST_TEST(statistics_of(io, redis).errors == 0u);
}

BOOST_AUTO_TEST_CASE(keys_with_one_hash_tag_land_on_one_node) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  net::io_context io;
  client redis(io.get_executor(), options_for(cluster, 0));
  io_thread running(io);
  wait(io, redis.connect());

  std::vector<std::string> keys = tagged_keys("user1000", 40);
  keys.push_back("{user1000}.following");
  keys.push_back("{user1000}.followers");
  // One pipeline: one write to the node of the tag's slot.
  check_all_ok(wait(io, redis.exec_pipeline(sets_of(keys, "v:"), "{user1000}")));
  check_values(wait(io, exec_each(redis, gets_of(keys))), keys, "v:");

  const std::size_t home = cluster.node_of_slot(key_slot("user1000"));
  for (std::size_t i = 0; i < redis_cluster::master_count; ++i)
    BOOST_TEST(cluster.dbsize(i) == (i == home ? static_cast<long long>(keys.size()) : 0), "node " << i);
  BOOST_TEST(statistics_of(io, redis).redirects == 0u);
}

BOOST_AUTO_TEST_CASE(moved_is_followed_after_a_slot_migration) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  net::io_context io;
  client redis(io.get_executor(), options_for(cluster, 0));
  io_thread running(io);
  wait(io, redis.connect());

  const std::uint16_t slot = 100;
  BOOST_TEST_REQUIRE(cluster.node_of_slot(slot) == 0u);
  const std::string key = key_in_slot(slot);
  check_all_ok(wait(io, exec_each(redis, {{"SET", key, "before the move"}})));

  cluster.migrate_slot(slot, 0, 2);
  const auto before = statistics_of(io, redis).redirects;
  const auto read = wait(io, redis.exec({"GET", key}));
  BOOST_TEST((read.is_string() && read.text == "before the move"), read.text);
  const auto after_moved = statistics_of(io, redis).redirects;
  BOOST_TEST(after_moved == before + 1);  // node 0 said MOVED once

  // The map is new now: node 2 is asked directly.
  check_all_ok(wait(io, exec_each(redis, {{"SET", key, "after the move"}})));
  const auto again = wait(io, redis.exec({"GET", key}));
  BOOST_TEST((again.is_string() && again.text == "after the move"), again.text);
  BOOST_TEST(statistics_of(io, redis).redirects == after_moved);
  BOOST_TEST(cluster.cli(2, {"GET", key}) == "after the move");

  // A pipeline sent to the old master follows MOVED too.
  cluster.migrate_slot(slot, 2, 1);
  const auto piped = wait(io, redis.exec_pipeline({{"GET", key}, {"GET", key}}, key));
  BOOST_TEST_REQUIRE(piped.size() == 2u);
  for (const auto& r : piped) BOOST_TEST((r.is_string() && r.text == "after the move"), r.text);
  BOOST_TEST(statistics_of(io, redis).redirects > after_moved);
  BOOST_TEST(statistics_of(io, redis).errors == 0u);
}

BOOST_AUTO_TEST_CASE(ask_is_followed_mid_migration) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  net::io_context io;
  client redis(io.get_executor(), options_for(cluster, 2));
  io_thread running(io);
  wait(io, redis.connect());

  const std::uint16_t slot = 7000;
  BOOST_TEST_REQUIRE(cluster.node_of_slot(slot) == 1u);
  const auto keys = tagged_keys(key_in_slot(slot), 20);
  check_all_ok(wait(io, exec_each(redis, sets_of(keys, "v:"))));

  auto migration = cluster.begin_migration(slot, 1, 0);
  BOOST_TEST_REQUIRE(migration.move_keys(10) == 10u);
  BOOST_TEST_REQUIRE(migration.keys_left() == 10u);

  // Node 1 answers ASK for each of the 10 keys that left, and serves the
  // others: one redirect per moved key, and none more (ASK does not
  // change the map, or the keys still on node 1 would come back MOVED).
  const auto before = statistics_of(io, redis).redirects;
  check_values(wait(io, exec_each(redis, gets_of(keys))), keys, "v:");
  BOOST_TEST(statistics_of(io, redis).redirects - before == 10u);
  // The same in one pipeline: its replies for the moved keys are ASKs.
  const std::string tag = "{" + key_in_slot(slot) + "}";
  check_values(wait(io, redis.exec_pipeline(gets_of(keys), tag)), keys, "v:");
  BOOST_TEST(statistics_of(io, redis).redirects - before == 20u);

  // A key new to the slot goes to the importing node.
  const std::string fresh = tag + ":fresh";
  check_all_ok(wait(io, exec_each(redis, {{"SET", fresh, "v:" + fresh}})));
  check_values(wait(io, exec_each(redis, {{"GET", fresh}})), {fresh}, "v:");

  migration.finish();
  auto all = keys;
  all.push_back(fresh);
  check_values(wait(io, exec_each(redis, gets_of(all))), all, "v:");
  BOOST_TEST(cluster.dbsize(0) == static_cast<long long>(all.size()));
  BOOST_TEST(cluster.dbsize(1) == 0);
  BOOST_TEST(statistics_of(io, redis).errors == 0u);
}

namespace {

struct load_result {
  std::size_t rounds = 0, errors = 0, wrong_values = 0;
  std::string first_problem;
};

/// SET then GET each of its own keys, round after round, until `stop` and
/// one more round; counts what went wrong.
net::awaitable<load_result> write_and_read(client& redis, std::vector<std::string> keys, const std::atomic<bool>& stop) {
  load_result result;
  for (bool last = false; !last; ++result.rounds) {
    last = stop.load();
    for (const auto& key : keys) {
      const std::string value = key + "@" + std::to_string(result.rounds);
      // Named commands: GCC 12 cannot build a braced list of strings
      // inside a co_await ("array used as initializer").
      command set_value = {"SET", key, value}, get_value = {"GET", key};
      try {
        const reply set = co_await redis.exec(std::move(set_value));
        const reply get = co_await redis.exec(std::move(get_value));
        if (set.is_error() || get.is_error()) {
          if (result.errors++ == 0) result.first_problem = key + ": " + set.text + " / " + get.text;
        } else if (!get.is_string() || get.text != value) {
          if (result.wrong_values++ == 0) result.first_problem = key + ": read " + get.text + ", wrote " + value;
        }
      } catch (const llmgate::error& e) {
        if (result.errors++ == 0) result.first_problem = key + ": " + e.what();
      }
    }
  }
  co_return result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(concurrent_sets_and_gets_see_no_error_while_a_slot_migrates) {
  if (llmgate::test::skip_without_redis()) return;
  redis_cluster cluster;
  net::io_context io;
  client redis(io.get_executor(), options_for(cluster, 0));
  io_thread running(io);
  wait(io, redis.connect());

  const std::uint16_t slot = 12000;
  BOOST_TEST_REQUIRE(cluster.node_of_slot(slot) == 2u);
  const std::string tag = key_in_slot(slot);
  // Keys already there, so that the migration takes a while.
  const auto resident = tagged_keys(tag, 300);
  check_all_ok(wait(io, redis.exec_pipeline(sets_of(resident, "v:"), "{" + tag + "}")));

  constexpr std::size_t workers = 8, keys_per_worker = 25;
  std::atomic<bool> stop = false;
  std::vector<std::future<load_result>> loads;
  for (std::size_t w = 0; w < workers; ++w) {
    std::vector<std::string> keys;
    for (std::size_t k = 0; k < keys_per_worker; ++k)
      keys.push_back("{" + tag + "}:w" + std::to_string(w) + ":" + std::to_string(k));
    loads.push_back(net::co_spawn(io, write_and_read(redis, std::move(keys), stop), net::use_future));
  }

  std::this_thread::sleep_for(100ms);  // load before the migration, too
  auto migration = cluster.begin_migration(slot, 2, 1);
  while (migration.move_keys(10) > 0) std::this_thread::sleep_for(10ms);
  migration.finish();
  stop = true;

  std::size_t rounds = 0;
  for (auto& load : loads) {
    const load_result result = within(std::move(load), 60s);
    rounds += result.rounds;
    BOOST_TEST(result.errors == 0u, result.first_problem);
    BOOST_TEST(result.wrong_values == 0u, result.first_problem);
  }
  const auto statistics = statistics_of(io, redis);
  BOOST_TEST_MESSAGE(rounds * keys_per_worker << " SET+GET pairs on " << workers * keys_per_worker << " keys, "
                                       << statistics.redirects << " redirects");
  BOOST_TEST(statistics.errors == 0u);
  BOOST_TEST(statistics.redirects > 0u);  // ASK during the move, MOVED after it

  // Everything ended on node 1, with the values last written.
  BOOST_TEST(cluster.dbsize(2) == 0);
  BOOST_TEST(cluster.dbsize(1) == static_cast<long long>(resident.size() + workers * keys_per_worker));
  check_values(wait(io, exec_each(redis, gets_of(resident))), resident, "v:");
}

BOOST_AUTO_TEST_SUITE_END()
