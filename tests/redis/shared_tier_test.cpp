// redis_shared_tier: gateway replicas (tiers in one process, each with its
// own caches) over one real redis-server. What one stores the others serve,
// never across tenants; semantic inserts, verdicts and evictions travel; a
// store that dies costs no request more than the read timeout, writes wait
// in the bounded queue and reach the store when it is back; a snapshot
// trims the stream and a replica started later, or one that was away,
// catches up from it.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "redis_server.hpp"
#include "shared_replica.hpp"

using namespace std::chrono_literals;
using llmgate::cache_scope;
using llmgate::cached_answer;
using llmgate::exact_key;
using llmgate::lookup_outcome;
using llmgate::test::answer_of;
using llmgate::test::eventually;
using llmgate::test::find_exact;
using llmgate::test::redis_server;
using llmgate::test::redis_text;
using llmgate::test::shared_config_for;
using llmgate::test::shared_replica;

namespace {

cache_scope tenant_scope(std::string tenant) { return cache_scope({.tenant = std::move(tenant), .model = "m"}); }

exact_key key_for(shared_replica& replica, const std::string& tenant, std::string_view text) {
  return replica.caches.exact().make_key(tenant_scope(tenant), text);
}

bool flushed(shared_replica& replica) { return replica.tier->statistics().queued_writes == 0; }

bool semantic_hit(shared_replica& replica, const std::string& tenant, std::string_view text) {
  return replica.semantic().lookup(tenant_scope(tenant), text).outcome == lookup_outcome::hit;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shared_tier_test)

BOOST_AUTO_TEST_CASE(an_exact_answer_stored_through_one_replica_is_found_through_another) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a")), b(shared_config_for(server.port(), "b"));
  BOOST_TEST(a.tier->statistics().available);

  const exact_key key = key_for(a, "acme", "What is the capital of France?");
  BOOST_TEST(!find_exact(*b.tier, key));
  a.tier->store_exact(key, answer_of("Paris."));
  BOOST_TEST_REQUIRE(eventually([&] { return flushed(a); }));
  const cached_answer found = find_exact(*b.tier, key);
  BOOST_TEST_REQUIRE(found != nullptr);
  BOOST_TEST(found->content == "Paris.");
  BOOST_TEST(!find_exact(*b.tier, key_for(b, "acme", "What is the capital of Spain?")));

  // A wrong verdict erases it for everyone: in the store, and the copy a
  // replica's local exact cache took when it served it.
  a.tier->start();
  a.caches.exact().insert(key, found);
  b.tier->erase_exact(key);
  BOOST_TEST_REQUIRE(eventually([&] { return flushed(b); }));
  BOOST_TEST(!find_exact(*a.tier, key));
  BOOST_TEST_REQUIRE(eventually([&] { return !a.caches.exact().find(key).has_value(); }));

  const auto s = b.tier->statistics();
  BOOST_TEST(s.exact_hits == 1u);
  BOOST_TEST(s.exact_misses == 2u);
  BOOST_TEST(a.tier->statistics().applied_changes == 1u);
  BOOST_TEST(s.round_trips > 0u);
  BOOST_TEST(s.errors == 0u);
}

BOOST_AUTO_TEST_CASE(an_exact_answer_expires_with_the_exact_caches_lifetime) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  auto config = shared_config_for(server.port(), "a");
  config.exact_cache.eviction.ttl_seconds = 30;
  shared_replica a(std::move(config));
  const exact_key key = key_for(a, "acme", "lifetime");
  a.tier->store_exact(key, answer_of("soon gone"));
  BOOST_TEST_REQUIRE(eventually([&] { return flushed(a); }));
  const long long left = std::stoll(redis_text(server, {"PTTL", llmgate::exact_key_name("test", key)}));
  BOOST_TEST(left > 25'000);
  BOOST_TEST(left <= 30'000);
}

BOOST_AUTO_TEST_CASE(no_tenant_ever_gets_another_tenants_answer) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a")), b(shared_config_for(server.port(), "b"));
  std::mt19937 random(23);
  constexpr int tenants = 40;
  const std::vector<std::string> texts = {"hello", "what is 2+2", "summarise the report", "translate: bonjour"};

  // Same texts under many tenants (their keys differ), each stored through
  // a replica chosen at random; and the same texts under keys forced to
  // collide (one hash, one scope, one Redis key, another tenant each).
  const exact_key collide = key_for(a, "nobody", "collision");
  std::vector<std::pair<exact_key, std::string>> stored, colliding;
  for (int t = 0; t < tenants; ++t) {
    const std::string tenant = "tenant-" + std::to_string(t);
    for (const auto& text : texts) {
      const std::string answer = tenant + " says " + text;
      exact_key key = key_for(a, tenant, text);
      (random() % 2 ? a : b).tier->store_exact(key, answer_of(answer));
      stored.emplace_back(std::move(key), answer);
      exact_key forced{collide.hash, collide.scope, tenant, text};
      (random() % 2 ? a : b).tier->store_exact(forced, answer_of(answer));
      colliding.emplace_back(std::move(forced), answer);
    }
  }
  BOOST_TEST_REQUIRE(eventually([&] { return flushed(a) && flushed(b); }, 5s));

  int own_hits = 0, cross_tenant_hits = 0;
  for (const auto& list : {stored, colliding})
    for (const auto& [key, answer] : list) {
      shared_replica& reader = random() % 2 ? a : b;
      if (const cached_answer found = find_exact(*reader.tier, key)) {
        if (found->content == answer) ++own_hits;
        else ++cross_tenant_hits;
      }
    }
  BOOST_TEST(cross_tenant_hits == 0);
  // Every distinct key answers; of the colliding ones only the last written holds the Redis key.
  BOOST_TEST(own_hits >= static_cast<int>(stored.size()) + 1);
  BOOST_TEST(own_hits <= static_cast<int>(stored.size() + colliding.size()));
}

BOOST_AUTO_TEST_CASE(a_value_that_is_not_an_answer_is_a_miss_counted_as_an_error) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a"));
  const exact_key key = key_for(a, "acme", "garbage");
  server.cli({"SET", llmgate::exact_key_name("test", key), "not a SHEX value"});
  BOOST_TEST(!find_exact(*a.tier, key));
  BOOST_TEST(a.tier->statistics().errors == 1u);
  BOOST_TEST(a.tier->statistics().available);
}

BOOST_AUTO_TEST_CASE(a_semantic_insert_becomes_a_hit_on_the_other_replica) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a")), b(shared_config_for(server.port(), "b"));
  a.tier->start();
  b.tier->start();

  BOOST_TEST(!semantic_hit(b, "acme", "how do I reset my password"));
  const auto inserted = std::chrono::steady_clock::now();
  a.semantic().insert(tenant_scope("acme"), "how do I reset my password", answer_of("Click 'forgot password'."));
  BOOST_TEST_REQUIRE(eventually([&] { return b.semantic().size() == 1; }));
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - inserted).count();
  BOOST_TEST(waited_ms < 2000.0);
  BOOST_TEST(semantic_hit(b, "acme", "how do I reset my password"));
  BOOST_TEST(!semantic_hit(b, "other-tenant", "how do I reset my password"));  // scopes stay apart
  const auto s = b.tier->statistics();
  BOOST_TEST(s.applied_changes == 1u);
  // The change's age when applied: no more than the wait for it, plus the
  // millisecond the stream id's time is rounded down to.
  BOOST_TEST(s.replication_lag_ms >= 0.0);
  BOOST_TEST(s.replication_lag_ms <= waited_ms + 1.0);
  BOOST_TEST(a.tier->statistics().applied_changes == 0u);  // its own change is not applied back
  BOOST_TEST(a.semantic().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_wrong_verdict_and_an_eviction_travel) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  auto small = shared_config_for(server.port(), "a");
  small.semantic_cache.max_entries = 2;
  shared_replica a(std::move(small)), b(shared_config_for(server.port(), "b"));
  a.tier->start();
  b.tier->start();

  a.semantic().insert(tenant_scope("acme"), "first question", answer_of("first"));
  BOOST_TEST_REQUIRE(eventually([&] { return b.semantic().size() == 1; }));
  // b serves it, is told it was wrong: a stops serving it too.
  const auto served = b.semantic().lookup(tenant_scope("acme"), "first question");
  BOOST_TEST_REQUIRE((served.outcome == lookup_outcome::hit));
  b.semantic().feedback(served, false);
  BOOST_TEST(!semantic_hit(b, "acme", "first question"));
  BOOST_TEST_REQUIRE(eventually([&] { return a.semantic().statistics().wrong_reports == 1; }));
  BOOST_TEST(!semantic_hit(a, "acme", "first question"));

  // a is full at two entries: the third evicts the oldest there, and here.
  a.semantic().insert(tenant_scope("acme"), "second question", answer_of("second"));
  a.semantic().insert(tenant_scope("acme"), "third question", answer_of("third"));
  BOOST_TEST(a.semantic().size() == 2u);
  BOOST_TEST_REQUIRE(eventually([&] { return b.tier->statistics().applied_changes == 4; }));
  BOOST_TEST(b.semantic().size() == 2u);
  BOOST_TEST(semantic_hit(b, "acme", "second question"));
  BOOST_TEST(semantic_hit(b, "acme", "third question"));
  BOOST_TEST(!semantic_hit(b, "acme", "first question"));
}

BOOST_AUTO_TEST_CASE(a_dead_store_costs_no_wait_and_its_writes_wait_in_the_bounded_queue) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  auto config = shared_config_for(server.port(), "a");
  config.shared->read_timeout_ms = 50;
  config.shared->max_queued_writes = 100;
  config.shared->semantic = false;
  shared_replica a(std::move(config));
  const exact_key before = key_for(a, "acme", "stored before");
  a.tier->store_exact(before, answer_of("before"));
  BOOST_TEST_REQUIRE(eventually([&] { return flushed(a); }));

  server.kill();
  // The first read finds out (at most the read timeout), the next ones do not wait.
  for (int i = 0; i < 5; ++i) {
    const auto asked = std::chrono::steady_clock::now();
    BOOST_TEST(!find_exact(*a.tier, before));
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 50ms + 100ms), "read " << i);
  }
  BOOST_TEST_REQUIRE(eventually([&] { return !a.tier->statistics().available; }));
  for (int i = 0; i < 5; ++i) {
    const auto asked = std::chrono::steady_clock::now();
    BOOST_TEST(!find_exact(*a.tier, before));
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 10ms), "read while away " << i);
  }
  BOOST_TEST(!a.tier->statistics().detail.empty());

  constexpr int written = 250;
  std::vector<exact_key> keys;
  for (int i = 0; i < written; ++i) {
    keys.push_back(key_for(a, "acme", "question " + std::to_string(i)));
    a.tier->store_exact(keys.back(), answer_of("answer " + std::to_string(i)));
  }
  // Writes in flight count as queued: once all are back in the queue, it holds its bound.
  BOOST_TEST_REQUIRE(eventually([&] { return a.tier->statistics().queued_writes == 100; }));
  BOOST_TEST(a.tier->statistics().dropped_writes == written - 100u);

  server.restart();  // empty: nothing was persisted
  BOOST_TEST_REQUIRE(eventually([&] { return a.tier->statistics().available && flushed(a); }, 5s));
  BOOST_TEST(redis_text(server, {"DBSIZE"}) == "100");
  for (int i : {0, written - 101})  // the oldest were dropped
    BOOST_TEST(redis_text(server, {"EXISTS", llmgate::exact_key_name("test", keys[i])}) == "0", i);
  for (int i : {written - 100, written - 1})
    BOOST_TEST(redis_text(server, {"EXISTS", llmgate::exact_key_name("test", keys[i])}) == "1", i);
  const cached_answer last = find_exact(*a.tier, keys.back());
  BOOST_TEST_REQUIRE(last != nullptr);
  BOOST_TEST(last->content == "answer " + std::to_string(written - 1));
}

BOOST_AUTO_TEST_CASE(a_snapshot_trims_the_stream_and_later_replicas_catch_up) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server;
  shared_replica a(shared_config_for(server.port(), "a")), b(shared_config_for(server.port(), "b"));
  shared_replica away(shared_config_for(server.port(), "away"));  // made, not started: it misses what follows
  a.tier->start();
  b.tier->start();

  for (int i = 0; i < 20; ++i)
    a.semantic().insert(tenant_scope("acme"), "question number " + std::to_string(i), answer_of(std::to_string(i)));
  // b's change, applied by a, comes after all of a's on the stream: a has read past them.
  b.semantic().insert(tenant_scope("acme"), "a question from b", answer_of("b"));
  BOOST_TEST_REQUIRE(eventually([&] { return a.tier->statistics().applied_changes == 1; }));
  BOOST_TEST_REQUIRE(eventually([&] { return b.tier->statistics().applied_changes == 20; }));

  BOOST_TEST_REQUIRE(a.tier->snapshot_now());
  BOOST_TEST(redis_text(server, {"XLEN", "test:{semantic}:stream"}) == "1");  // b's, the snapshot's last
  BOOST_TEST(!b.tier->snapshot_now());  // a holds the lease

  for (int i = 20; i < 25; ++i)
    a.semantic().insert(tenant_scope("acme"), "question number " + std::to_string(i), answer_of(std::to_string(i)));
  BOOST_TEST_REQUIRE(eventually([&] { return b.tier->statistics().applied_changes == 25; }));

  // Started later: adopts the snapshot before serving, then reads the stream from it.
  shared_replica later(shared_config_for(server.port(), "later"));
  BOOST_TEST(later.semantic().size() == 21u);
  later.tier->start();
  BOOST_TEST_REQUIRE(eventually([&] { return later.semantic().size() == 26; }));
  for (int i : {0, 19, 20, 24}) BOOST_TEST(semantic_hit(later, "acme", "question number " + std::to_string(i)), i);
  BOOST_TEST(semantic_hit(later, "acme", "a question from b"));

  // Away while the stream was trimmed: reloads from the snapshot, then the stream.
  BOOST_TEST(away.semantic().size() == 0u);
  away.tier->start();
  BOOST_TEST_REQUIRE(eventually([&] { return away.semantic().size() == 26; }));
  BOOST_TEST(semantic_hit(away, "acme", "question number 3"));
  BOOST_TEST(semantic_hit(away, "acme", "question number 24"));
}

BOOST_AUTO_TEST_CASE(a_refused_login_stops_the_start_and_an_unreachable_store_does_not) {
  if (llmgate::test::skip_without_redis()) return;
  redis_server server({.password = "right"});
  auto wrong = shared_config_for(server.port(), "a");
  wrong.shared->redis.password = "wrong";
  try {
    shared_replica refused(std::move(wrong));
    BOOST_ERROR("a tier started with a wrong password");
  } catch (const llmgate::error& e) {
    BOOST_TEST(std::string(e.what()).find("AUTH refused") != std::string::npos, e.what());
  }
  auto right = shared_config_for(server.port(), "a");
  right.shared->redis.password = "right";
  shared_replica logged_in(std::move(right));
  BOOST_TEST(logged_in.tier->statistics().available);

  const std::uint16_t nobody = server.port();
  server.kill();
  auto unreachable = shared_config_for(nobody, "b");
  unreachable.shared->redis.password = "right";
  shared_replica away(std::move(unreachable));
  away.tier->start();
  const auto s = away.tier->statistics();
  BOOST_TEST(!s.available);
  BOOST_TEST(!s.detail.empty());
  BOOST_TEST(!find_exact(*away.tier, key_for(away, "acme", "anything")));
}

BOOST_AUTO_TEST_SUITE_END()
