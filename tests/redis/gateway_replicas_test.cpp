// Three gateway processes (the gateway program, LLMGATE_GATEWAY_PROGRAM)
// in front of one model server, sharing their caches through a real Redis
// (tests/redis/redis_server.hpp) or a 3-master Redis Cluster
// (tests/redis/redis_cluster.hpp), as replicas behind a load balancer do:
//
//   - an answer one replica paid for hits on the other two (exact: the same
//     request; semantic: a paraphrase), within a bounded delay (reported);
//   - no tenant is ever served another tenant's answer, on any replica;
//   - the same on a cluster, with a slot moved to another master under load;
//   - Redis killed under load and started again: no client request fails,
//     /readyz says "degraded" while it is away and "ready" after, and the
//     writes queued meanwhile reach it;
//   - a replica killed (SIGKILL) or stopped (SIGTERM) and started again
//     catches up and answers as the others do;
//   - a wrong password or a certificate its CA file does not vouch for: the
//     gateway exits at start with status 1 and says why on stderr.
//
// The model server (replica_upstream, gateway_processes.hpp) numbers its
// answers, so that a served answer names the request that paid for it, and
// refuses what a test has asked of the origin: probing a replica that does
// not hold the answer yet gets a 400, never a fresh answer.
#include <boost/test/unit_test.hpp>

#include <algorithm>  // std::sort, std::shuffle
#include <atomic>     // std::atomic
#include <chrono>     // std::chrono
#include <cstddef>    // std::size_t
#include <map>        // std::map
#include <memory>     // std::unique_ptr
#include <mutex>      // std::mutex, std::lock_guard
#include <optional>   // std::optional
#include <random>     // std::mt19937, std::random_device
#include <set>        // std::set
#include <string>     // std::string
#include <thread>     // std::thread
#include <tuple>      // std::tie
#include <vector>     // std::vector

#include "../server/gateway_client.hpp"    // post, chat_body
#include "../temporary_directory.hpp"      // temporary_directory
#include "gateway_processes.hpp"           // gateway_process, replica_config, replica_upstream, test_question
#include "llmgate/redis/cluster_slots.hpp" // redis::key_slot
#include "redis_cluster.hpp"               // redis_cluster
#include "redis_server.hpp"                // redis_server, skip_without_redis

namespace {

using namespace llmgate::test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// How long an answer may take to reach the other replicas before a test
/// fails; the delays seen are reported (scripts/bench shared measures them).
constexpr auto propagation_limit = 5s;
constexpr auto start_limit = 20s;

double ms_since(clock_type::time_point since) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - since).count();
}

/// What a chat reply says: its status, x-llmgate-cache and content.
struct answer {
  unsigned status = 0;
  std::string cache;    ///< "miss", "exact", "semantic", ...; "" when no reply came
  std::string content;  ///< the message's text when status is 200
  bool hit() const { return status == 200 && !cache.empty() && cache != "miss"; }
};

answer ask(unsigned short port, const std::string& key, const std::string& text) {
  try {
    const auto reply = post(port, "/v1/chat/completions", chat_body(text), key);
    answer a{reply.status, reply.header("x-llmgate-cache"), {}};
    if (reply.status == 200)
      a.content = std::string(reply.json().at("choices").at(0).at("message").at("content").as_string());
    return a;
  } catch (const std::exception&) {
    return {};  // no reply: the connection failed
  }
}

/// Asks until the replica answers from a cache, for at most `limit`;
/// the hit, and the delay since `since` in milliseconds.
struct probe_result {
  answer got;
  double delay_ms = 0;
};
probe_result first_hit(unsigned short port, const std::string& key, const std::string& text,
                       clock_type::time_point since, std::chrono::milliseconds limit = propagation_limit) {
  for (;;) {
    answer got = ask(port, key, text);
    if (got.hit() || clock_type::now() - since > limit) return {got, ms_since(since)};
    std::this_thread::sleep_for(2ms);
  }
}

/// Three replicas "a", "b", "c" on the same store, started and healthy.
struct replicas {
  replicas(const temporary_directory& dir, const replica_upstream& upstream, const std::vector<tenant_key>& tenants,
           const std::vector<llmgate::redis::endpoint>& endpoints, unsigned snapshot_interval_s = 60) {
    for (const char* name : {"a", "b", "c"})
      each.push_back(std::make_unique<gateway_process>(
          LLMGATE_GATEWAY_PROGRAM, dir.path(), name,
          replica_config(upstream.url(), tenants,
                         shared_section({.endpoints = endpoints, .replica = name,
                                         .snapshot_interval_s = snapshot_interval_s}))));
    for (auto& replica : each) replica->start();
    for (auto& replica : each)
      BOOST_TEST_REQUIRE(replica->wait_until_healthy(start_limit), replica->name() << " did not start:\n" << replica->log());
  }
  gateway_process& operator[](std::size_t i) { return *each[i]; }

  std::vector<std::unique_ptr<gateway_process>> each;
};

/// Delays seen, reported as their median and largest.
struct delays {
  std::vector<double> ms;
  void report(const std::string& what) {
    if (ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    BOOST_TEST_MESSAGE(what << ": " << ms.size() << " hits, median " << ms[ms.size() / 2] << " ms, largest "
                            << ms.back() << " ms");
  }
};

/// One round of the propagation check: two new questions answered fresh
/// through replica `origin`, then the first asked again (exact) and the
/// second paraphrased (semantic) on every other replica until each hits
/// with the origin's answer.
void check_propagation(replicas& set, replica_upstream& upstream, std::size_t origin, const std::string& key,
                       std::size_t exact_n, std::size_t semantic_n, delays& exact, delays& semantic) {
  const answer fresh_exact = ask(set[origin].port(), key, test_question(exact_n));
  const answer fresh_semantic = ask(set[origin].port(), key, test_question(semantic_n));
  const auto answered = clock_type::now();
  BOOST_TEST_REQUIRE(fresh_exact.status == 200u, set[origin].name() << " did not answer:\n" << set[origin].log());
  BOOST_TEST(fresh_exact.cache == "miss");
  BOOST_TEST_REQUIRE(fresh_semantic.status == 200u, set[origin].name() << " did not answer:\n" << set[origin].log());
  BOOST_TEST(fresh_semantic.cache == "miss");
  upstream.refuse(test_question(exact_n));
  upstream.refuse(test_question(semantic_n));
  upstream.refuse(test_paraphrase(semantic_n));
  for (std::size_t other = 0; other < set.each.size(); ++other) {
    if (other == origin) continue;
    const auto same = first_hit(set[other].port(), key, test_question(exact_n), answered);
    BOOST_TEST(same.got.hit(), set[other].name() << " has no hit for " << test_question(exact_n) << " after "
                                                 << same.delay_ms << " ms (" << same.got.status << ")");
    BOOST_TEST(same.got.content == fresh_exact.content);
    if (same.got.hit()) exact.ms.push_back(same.delay_ms);
    const auto near = first_hit(set[other].port(), key, test_paraphrase(semantic_n), answered);
    BOOST_TEST(near.got.cache == "semantic", set[other].name() << " has no semantic hit for " << test_paraphrase(semantic_n)
                                                               << " after " << near.delay_ms << " ms");
    BOOST_TEST(near.got.content == fresh_semantic.content);
    if (near.got.hit()) semantic.ms.push_back(near.delay_ms);
  }
}

/// Clients asking all the time, from a few threads, a random replica each
/// time: a mix of questions asked before (hits) and new ones (misses that
/// the replica stores, locally and in the shared tier). Counts the
/// requests that failed (no reply or a status other than 200) and keeps
/// the new questions answered, with when.
class background_load {
 public:
  struct fresh {
    std::string key, text, content;
    clock_type::time_point answered;
  };

  background_load(replicas& set, std::vector<tenant_key> tenants, std::size_t first_question, unsigned threads = 3)
      : tenants_(std::move(tenants)) {
    for (unsigned t = 0; t < threads; ++t)
      threads_.emplace_back([this, &set, t, first_question] {
        std::mt19937 draw(t + 1);
        std::vector<std::pair<std::string, std::string>> asked;  // key, question
        for (std::size_t i = 0; !stop_; ++i) {
          const auto& replica = set[draw() % set.each.size()];
          std::string key, text;
          if (asked.empty() || draw() % 3 == 0) {  // a new question, a third of the time
            key = tenants_[draw() % tenants_.size()].key;
            text = test_question(first_question + t * 1'000'000 + i);
            asked.emplace_back(key, text);
          } else {
            std::tie(key, text) = asked[draw() % asked.size()];
          }
          const answer got = ask(replica.port(), key, text);
          ++requests_;
          std::lock_guard lock(mutex_);
          if (got.status != 200) failures_.push_back(replica.name() + " " + std::to_string(got.status) + " " + text);
          else if (got.cache == "miss") fresh_.push_back({key, text, got.content, clock_type::now()});
        }
      });
  }
  ~background_load() { stop(); }

  void stop() {
    stop_ = true;
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }
  std::size_t requests() const { return requests_; }
  std::vector<std::string> failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }
  std::vector<fresh> answered_fresh() const {
    std::lock_guard lock(mutex_);
    return fresh_;
  }

 private:
  std::vector<tenant_key> tenants_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> requests_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
  std::vector<fresh> fresh_;
  std::vector<std::thread> threads_;
};

/// Polls every replica's /readyz until all say `status`; the time it took,
/// or nothing after `limit`.
std::optional<double> all_say(replicas& set, const std::string& status, std::chrono::milliseconds limit) {
  const auto since = clock_type::now();
  while (clock_type::now() - since < limit) {
    bool all = true;
    for (auto& replica : set.each) all = all && replica->readiness() == status;
    if (all) return ms_since(since);
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

/// Every value under the shared exact tier's keys, as redis-cli prints
/// them: the answers they hold (each names its question) can be searched.
std::string exact_values(const redis_server& redis) {
  return redis.cli({"EVAL",
                    "local out = {} for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                    "out[#out + 1] = redis.call('GET', k) end return out",
                    "0", "llmgate:*:x:*"});
}

/// Every entry of the semantic stream, as redis-cli prints them.
std::string stream_entries(const redis_server& redis) {
  return redis.cli({"XRANGE", "llmgate:{semantic}:stream", "-", "+"});
}

const std::vector<tenant_key> one_tenant = {{"acme", "key-acme"}};

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_replicas_test)

BOOST_AUTO_TEST_CASE(an_answer_cached_through_one_replica_hits_on_the_other_two) {
  if (skip_without_redis()) return;
  redis_server redis;
  replica_upstream upstream;
  temporary_directory dir;
  replicas set(dir, upstream, one_tenant, {redis.endpoint()});
  delays exact, semantic;
  for (std::size_t round = 0; round < 6; ++round)
    check_propagation(set, upstream, round % 3, "key-acme", round, 100 + round, exact, semantic);
  exact.report("exact propagation to the other replicas");
  semantic.report("semantic propagation to the other replicas");
  BOOST_TEST(exact.ms.size() == 12u);
  BOOST_TEST(semantic.ms.size() == 12u);
  BOOST_TEST(upstream.answers() == 12u);  // each answer paid for once, by its origin
  for (auto& replica : set.each) {
    const std::string metrics = replica->metrics();
    BOOST_TEST_MESSAGE(replica->name() << ": " << metric_value(metrics, "llmgate_shared_exact_hits_total").value_or(-1)
                                       << " exact answers found in Redis, "
                                       << metric_value(metrics, "llmgate_shared_round_trips_total").value_or(-1)
                                       << " round trips");
    BOOST_TEST(metric_value(metrics, "llmgate_shared_available").value_or(-1) == 1.0);
    BOOST_TEST(metric_value(metrics, "llmgate_shared_applied_changes_total").value_or(-1) == 8.0);  // the other two's 4 answers each
    BOOST_TEST(metric_value(metrics, "llmgate_shared_queued_writes").value_or(-1) == 0.0);
    BOOST_TEST(metric_value(metrics, "llmgate_shared_dropped_writes_total").value_or(-1) == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(no_tenant_is_served_another_tenants_answer_on_any_replica) {
  if (skip_without_redis()) return;
  const unsigned seed = std::random_device{}();
  BOOST_TEST_MESSAGE("seed " << seed);
  std::mt19937 draw(seed);
  std::vector<tenant_key> tenants;
  for (int i = 0; i < 24; ++i) {
    const std::string name = "tenant-" + std::to_string(draw());
    tenants.push_back({name, "key-" + std::to_string(draw()) + "-" + name});
  }
  redis_server redis;
  replica_upstream upstream;
  temporary_directory dir;
  replicas set(dir, upstream, tenants, {redis.endpoint()});

  // Every tenant asks the same questions, each through a random replica, in
  // a random order: each must be answered fresh, whoever asked it before.
  const std::vector<std::size_t> questions = {0, 1, 2};
  std::vector<std::pair<std::size_t, std::size_t>> asks;  // tenant, question
  for (std::size_t t = 0; t < tenants.size(); ++t)
    for (const auto q : questions) asks.emplace_back(t, q);
  std::shuffle(asks.begin(), asks.end(), draw);
  std::map<std::pair<std::size_t, std::size_t>, std::string> own;  // each tenant's answer to each question
  std::size_t cross_tenant_hits = 0;
  for (const auto& [t, q] : asks) {
    const answer got = ask(set[draw() % 3].port(), tenants[t].key, test_question(q));
    BOOST_TEST_REQUIRE(got.status == 200u);
    cross_tenant_hits += got.cache != "miss";
    own[{t, q}] = got.content;
  }
  BOOST_TEST(cross_tenant_hits == 0u);
  BOOST_TEST(upstream.answers() == asks.size());

  // Then every tenant asks them again, and the paraphrase of the first, on
  // every replica: each a hit with the tenant's own answer once it has
  // arrived, never another's.
  const auto since = clock_type::now();
  for (const auto q : questions) {
    upstream.refuse(test_question(q));
    upstream.refuse(test_paraphrase(q));
  }
  std::size_t own_hits = 0, others_answers = 0;
  for (std::size_t t = 0; t < tenants.size(); ++t)
    for (std::size_t r = 0; r < 3; ++r) {
      for (const auto q : questions) {
        const auto again = first_hit(set[r].port(), tenants[t].key, test_question(q), since);
        own_hits += again.got.hit() && again.got.content == own[{t, q}];
        others_answers += again.got.hit() && again.got.content != own[{t, q}];
      }
      const auto near = first_hit(set[r].port(), tenants[t].key, test_paraphrase(0), since);
      own_hits += near.got.cache == "semantic" && near.got.content == own[{t, 0}];
      others_answers += near.got.hit() && near.got.content != own[{t, 0}];
    }
  BOOST_TEST(others_answers == 0u);
  BOOST_TEST(own_hits == tenants.size() * 3 * (questions.size() + 1));
}

BOOST_AUTO_TEST_CASE(on_a_redis_cluster_answers_reach_every_replica_while_slots_move) {
  if (skip_without_redis()) return;
  redis_cluster cluster;
  replica_upstream upstream;
  temporary_directory dir;
  const std::vector<tenant_key> tenants = {{"acme", "key-acme"}, {"globex", "key-globex"}, {"initech", "key-initech"}};
  replicas set(dir, upstream, tenants, {cluster.endpoint(0), cluster.endpoint(1), cluster.endpoint(2)});
  delays exact, semantic;
  check_propagation(set, upstream, 0, "key-acme", 0, 100, exact, semantic);

  background_load load(set, tenants, 10'000);
  std::this_thread::sleep_for(1s);
  // The semantic stream's slot (every replica appends to it and tails it)
  // and the slot of an exact answer's scope move to another master under load.
  const std::uint16_t stream_slot = llmgate::redis::key_slot("llmgate:{semantic}:stream");
  const std::size_t stream_owner = cluster.node_of_slot(stream_slot);
  cluster.migrate_slot(stream_slot, stream_owner, (stream_owner + 1) % 3);
  std::optional<std::uint16_t> scope_slot;
  for (std::size_t node = 0; node < 3 && !scope_slot; ++node)
    if (const std::string keys = cluster.cli(node, {"KEYS", "llmgate:*:x:*"}); !keys.empty())
      scope_slot = llmgate::redis::key_slot(keys.substr(0, keys.find('\n')));
  BOOST_TEST_REQUIRE(scope_slot.has_value(), "no exact answer in the cluster");
  const std::size_t scope_owner = cluster.node_of_slot(*scope_slot);
  cluster.migrate_slot(*scope_slot, scope_owner, (scope_owner + 2) % 3);
  for (std::size_t round = 1; round < 4; ++round)
    check_propagation(set, upstream, round % 3, tenants[round % 3].key, round, 100 + round, exact, semantic);
  std::this_thread::sleep_for(500ms);
  load.stop();
  exact.report("exact propagation on the cluster");
  semantic.report("semantic propagation on the cluster");
  BOOST_TEST_MESSAGE(load.requests() << " requests under load while slots " << stream_slot << " and " << *scope_slot
                                     << " moved");
  BOOST_TEST(load.failures().empty(), load.failures().size() << " failed, the first: "
                                                            << (load.failures().empty() ? "" : load.failures()[0]));
  BOOST_TEST(exact.ms.size() == 8u);
  BOOST_TEST(semantic.ms.size() == 8u);
  BOOST_TEST(cluster.node_of_slot(stream_slot) == (stream_owner + 1) % 3);
  BOOST_TEST(cluster.cli((stream_owner + 1) % 3, {"EXISTS", "llmgate:{semantic}:stream"}) == "1");
}

BOOST_AUTO_TEST_CASE(redis_killed_under_load_fails_no_request_and_gets_the_queued_writes_back) {
  if (skip_without_redis()) return;
  redis_server redis;
  replica_upstream upstream;
  temporary_directory dir;
  const std::vector<tenant_key> tenants = {{"acme", "key-acme"}, {"globex", "key-globex"}};
  replicas set(dir, upstream, tenants, {redis.endpoint()}, 3600);  // no snapshot: the stream keeps every entry
  BOOST_TEST(all_say(set, "ready", 5s).has_value());

  background_load load(set, tenants, 20'000);
  std::this_thread::sleep_for(1s);
  redis.kill();
  const auto degraded = all_say(set, "degraded", 10s);
  BOOST_TEST(degraded.has_value(), "the replicas did not all say \"degraded\" within 10 s of Redis's death");
  if (degraded) BOOST_TEST_MESSAGE("all replicas degraded " << *degraded << " ms after Redis was killed");
  const auto degraded_at = clock_type::now();
  std::this_thread::sleep_for(2s);
  const auto restarted_at = clock_type::now();
  redis.restart();  // empty: nothing was persisted
  const auto ready = all_say(set, "ready", 15s);
  BOOST_TEST(ready.has_value(), "the replicas did not all say \"ready\" within 15 s of Redis's return");
  if (ready) BOOST_TEST_MESSAGE("all replicas ready " << *ready << " ms after Redis was back");
  std::this_thread::sleep_for(500ms);
  load.stop();
  BOOST_TEST_MESSAGE(load.requests() << " requests under load");
  BOOST_TEST(load.failures().empty(), load.failures().size() << " failed, the first: "
                                                            << (load.failures().empty() ? "" : load.failures()[0]));

  // Every answer made fresh while Redis was away reaches it once it is back:
  // its semantic stream entry holds it, and its question's exact entry holds
  // it or, where two replicas answered that question meanwhile, the other's.
  std::vector<background_load::fresh> while_away;
  for (const auto& f : load.answered_fresh())
    if (f.answered > degraded_at && f.answered < restarted_at) while_away.push_back(f);
  BOOST_TEST_REQUIRE(!while_away.empty());
  BOOST_TEST_MESSAGE(while_away.size() << " answers made fresh while Redis was away");
  std::size_t missing_exact = while_away.size(), missing_stream = while_away.size();
  for (const auto since = clock_type::now(); missing_exact + missing_stream > 0 && clock_type::now() - since < 10s;) {
    const std::string exact = exact_values(redis), stream = stream_entries(redis);
    missing_exact = missing_stream = 0;
    for (const auto& f : while_away) {
      missing_exact += exact.find(" to: " + f.text) == std::string::npos;
      missing_stream += stream.find(f.content) == std::string::npos;
    }
    if (missing_exact + missing_stream > 0) std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(missing_exact == 0u);
  BOOST_TEST(missing_stream == 0u);
  for (auto& replica : set.each) {
    const std::string metrics = replica->metrics();
    BOOST_TEST(metric_value(metrics, "llmgate_shared_available").value_or(-1) == 1.0);
    BOOST_TEST(metric_value(metrics, "llmgate_shared_errors_total").value_or(-1) > 0.0);  // what failed meanwhile
    BOOST_TEST(metric_value(metrics, "llmgate_shared_queued_writes").value_or(-1) == 0.0);
    BOOST_TEST(metric_value(metrics, "llmgate_shared_dropped_writes_total").value_or(-1) == 0.0);
  }
  // And every replica serves them. While Redis was away, two replicas may
  // each have answered the same new question fresh; either answer will do.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> answers;  // (key, text) -> fresh answers
  for (const auto& f : load.answered_fresh()) answers[{f.key, f.text}].insert(f.content);
  for (const auto& f : while_away) upstream.refuse(f.text);
  const auto since = clock_type::now();
  for (std::size_t i = 0; i < while_away.size() && i < 10; ++i) {
    const auto hit = first_hit(set[i % 3].port(), while_away[i].key, while_away[i].text, since);
    BOOST_TEST(hit.got.hit());
    const auto& fresh_answers = answers[std::pair(while_away[i].key, while_away[i].text)];
    BOOST_TEST(fresh_answers.contains(hit.got.content), hit.got.content);
  }
}

BOOST_AUTO_TEST_CASE(a_replica_started_again_catches_up_and_answers_as_the_others_do) {
  if (skip_without_redis()) return;
  redis_server redis;
  replica_upstream upstream;
  temporary_directory dir;
  replicas set(dir, upstream, one_tenant, {redis.endpoint()}, 1);  // a snapshot each second, the stream trimmed
  delays exact, semantic;
  for (std::size_t round = 0; round < 3; ++round)
    check_propagation(set, upstream, 0, "key-acme", round, 100 + round, exact, semantic);

  // c dies at once, b stops cleanly (it drains and flushes its queue: exit 0);
  // a answers new questions meanwhile.
  set[2].kill();
  BOOST_TEST(set[1].terminate() == 0);
  for (std::size_t n = 3; n < 6; ++n)
    for (const auto& text : {test_question(n), test_question(100 + n)}) BOOST_TEST(ask(set[0].port(), "key-acme", text).cache == "miss");
  std::this_thread::sleep_for(2500ms);  // a snapshot or two covers them, and the stream is trimmed
  BOOST_TEST_REQUIRE(set[1].restart(start_limit), set[1].log());
  BOOST_TEST_REQUIRE(set[2].restart(start_limit), set[2].log());
  const auto since = clock_type::now();
  for (std::size_t n = 0; n < 6; ++n) {
    upstream.refuse(test_question(n));
    upstream.refuse(test_question(100 + n));
    upstream.refuse(test_paraphrase(100 + n));
  }
  // Both started empty: what they serve came from the shared tier.
  for (std::size_t restarted : {1, 2}) {
    for (std::size_t n = 0; n < 6; ++n) {
      const auto same = first_hit(set[restarted].port(), "key-acme", test_question(n), since);
      BOOST_TEST(same.got.hit(), set[restarted].name() << " has no hit for question " << n);
      BOOST_TEST(same.got.content == ask(set[0].port(), "key-acme", test_question(n)).content);
      const auto near = first_hit(set[restarted].port(), "key-acme", test_paraphrase(100 + n), since);
      BOOST_TEST(near.got.cache == "semantic", set[restarted].name() << " has no semantic hit for paraphrase " << n);
      BOOST_TEST(near.got.content == ask(set[0].port(), "key-acme", test_paraphrase(100 + n)).content);
    }
  }
  BOOST_TEST(upstream.answers() == 12u);  // nothing paid for twice
  // The answers of the first rounds were in a snapshot by then, the stream trimmed behind it.
  for (std::size_t restarted : {1, 2})
    BOOST_TEST(set[restarted].log().find(R"("event":"shared_snapshot_adopted")") != std::string::npos,
               set[restarted].log());
  exact.report("exact propagation before the restarts");
  semantic.report("semantic propagation before the restarts");
}

BOOST_AUTO_TEST_CASE(a_wrong_password_stops_the_gateway_at_start_and_says_why) {
  if (skip_without_redis()) return;
  redis_server redis({.password = "right-password"});
  replica_upstream upstream;
  temporary_directory dir;
  const auto config = [&](const std::string& password) {
    return replica_config(upstream.url(), one_tenant,
                          shared_section({.endpoints = {redis.endpoint()}, .replica = "a", .password = password}));
  };
  gateway_process wrong(LLMGATE_GATEWAY_PROGRAM, dir.path(), "wrong", config("wrong-password"));
  wrong.start();
  const auto status = wrong.wait_for_exit(start_limit);
  BOOST_TEST_REQUIRE(status.has_value(), "the gateway still runs with a wrong password");
  BOOST_TEST(*status == 1);
  const std::string said = wrong.log();
  BOOST_TEST_MESSAGE("stderr: " << said);
  BOOST_TEST(said.starts_with("gateway: "));
  BOOST_TEST(said.find("127.0.0.1:" + std::to_string(redis.port())) != std::string::npos);
  BOOST_TEST(said.find("WRONGPASS") != std::string::npos);

  gateway_process right(LLMGATE_GATEWAY_PROGRAM, dir.path(), "right", config("right-password"));
  right.start();
  BOOST_TEST_REQUIRE(right.wait_until_healthy(start_limit), right.log());
  BOOST_TEST(right.readiness() == "ready");
}

BOOST_AUTO_TEST_CASE(a_certificate_the_ca_file_does_not_vouch_for_stops_the_gateway_at_start_and_says_why) {
  if (skip_without_redis(true)) return;
  redis_server redis({.tls = true});
  replica_upstream upstream;
  temporary_directory dir;
  const auto config = [&](const std::filesystem::path& ca_file) {
    return replica_config(upstream.url(), one_tenant,
                          shared_section({.endpoints = {redis.endpoint()}, .replica = "a", .ca_file = ca_file.string()}));
  };
  gateway_process wrong(LLMGATE_GATEWAY_PROGRAM, dir.path(), "wrong", config(redis.certificates().wrong_ca_file));
  wrong.start();
  const auto status = wrong.wait_for_exit(start_limit);
  BOOST_TEST_REQUIRE(status.has_value(), "the gateway still runs with a CA file that does not vouch for Redis");
  BOOST_TEST(*status == 1);
  const std::string said = wrong.log();
  BOOST_TEST_MESSAGE("stderr: " << said);
  BOOST_TEST(said.starts_with("gateway: "));
  BOOST_TEST(said.find("127.0.0.1:" + std::to_string(redis.port())) != std::string::npos);
  BOOST_TEST(said.find("certificate verify failed") != std::string::npos);

  gateway_process right(LLMGATE_GATEWAY_PROGRAM, dir.path(), "right", config(redis.certificates().ca_file));
  right.start();
  BOOST_TEST_REQUIRE(right.wait_until_healthy(start_limit), right.log());
  BOOST_TEST(right.readiness() == "ready");
}

BOOST_AUTO_TEST_SUITE_END()
