// The policies chosen at run time: configured_eviction and
// configured_threshold decide exactly as the policies they select (the same
// script of calls driven through both, every answer compared), lifetimes
// on a fake clock, the adaptive threshold taught through the cache's
// feedback(), and snapshots that keep what it learned.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmgate/cache/configured_threshold.hpp"
#include "llmgate/cache/eviction/configured.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "../temporary_directory.hpp"
#include "fake_clock.hpp"

using namespace llmgate;
using namespace std::chrono_literals;
using llmgate::test::fake_clock;

static_assert(EvictionPolicy<basic_configured_eviction<fake_clock>>);

namespace {

// Every answer a policy gives to one script of calls: inserts of various
// sizes, costs and earlier hits, hits, an erase, time passing, expired
// entries popped, then every victim in order.
template <class Policy>
std::vector<long long> script(Policy& policy, const fake_clock& clock) {
  std::vector<long long> answers;
  const auto note = [&](std::optional<entry_handle> handle) { answers.push_back(handle ? *handle : -1); };
  for (entry_handle h = 0; h < 12; ++h) {
    policy.insert(h, entry_info{.bytes = 100 + 37 * (h % 5), .cost = 0.5 * (h % 4), .hits = h % 3});
    clock.advance(1s);
  }
  for (const entry_handle h : {3u, 7u, 3u, 11u, 0u, 5u, 3u, 9u}) {
    policy.touch(h);
    clock.advance(500ms);
  }
  policy.erase(6);
  note(policy.pop_victim());
  for (entry_handle h = 0; h < 12; ++h) answers.push_back(policy.is_expired(h));
  clock.advance(5s);
  while (const auto expired = policy.pop_expired()) note(expired);
  answers.push_back(-3);
  policy.insert(6, entry_info{.bytes = 10, .cost = 2.0});
  while (const auto victim = policy.pop_victim()) note(victim);
  answers.push_back(-4);
  note(policy.pop_expired());
  return answers;
}

template <class Reference>
void behaves_as(eviction_kind kind, std::optional<fake_clock::duration> ttl, Reference make_reference) {
  const fake_clock configured_clock, reference_clock;
  basic_configured_eviction<fake_clock> configured(kind, ttl, ttl_refresh::on_hit, configured_clock);
  auto reference = make_reference(reference_clock);
  const auto expected = script(reference, reference_clock);
  const auto got = script(configured, configured_clock);
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST((configured.kind() == kind));
  BOOST_TEST((configured.ttl() == ttl));
}

// Every decision a threshold policy makes over a grid of entries and similarities.
template <class Policy>
std::vector<threshold_decision> decisions(const Policy& policy) {
  std::vector<threshold_decision> all;
  for (entry_handle entry = 0; entry < 8; ++entry)
    for (int s = 600; s <= 1000; s += 3) all.push_back(policy.decide(hash128{}, entry, s / 1000.0f));
  return all;
}

// Feedback, right and wrong, at similarities around 0.85.
template <class Policy>
void teach(Policy& policy) {
  for (int i = 0; i < 60; ++i)
    policy.record(hash128{}, static_cast<entry_handle>(i % 8), 0.80f + (i % 20) / 100.0f, i % 7 != 0 && i % 20 > 3);
  policy.forget(2);
}

using plain_cache = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, configured_eviction,
                                         configured_threshold>;

hashing_embedder fixed_weights() {
  hashing_embedder::options_type options;
  options.first_refresh = 0;  // no re-weighting: similarities stay as they are
  return hashing_embedder(options);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(configured_policies_test)

BOOST_AUTO_TEST_CASE(configuration_names_are_read_and_written_back) {
  BOOST_TEST((eviction_kind_named("lru") == eviction_kind::lru));
  BOOST_TEST((eviction_kind_named("lfu") == eviction_kind::lfu));
  BOOST_TEST((eviction_kind_named("cost_aware") == eviction_kind::cost_aware));
  BOOST_TEST(!eviction_kind_named("LRU"));
  BOOST_TEST(!eviction_kind_named("fifo"));
  BOOST_TEST(!eviction_kind_named(""));
  for (const auto kind : {eviction_kind::lru, eviction_kind::lfu, eviction_kind::cost_aware})
    BOOST_TEST((eviction_kind_named(eviction_kind_name(kind)) == kind));
  BOOST_TEST((threshold_kind_named("static") == threshold_kind::fixed));
  BOOST_TEST((threshold_kind_named("adaptive") == threshold_kind::adaptive));
  BOOST_TEST(!threshold_kind_named("dynamic"));
  for (const auto kind : {threshold_kind::fixed, threshold_kind::adaptive})
    BOOST_TEST((threshold_kind_named(threshold_kind_name(kind)) == kind));
}

BOOST_AUTO_TEST_CASE(each_eviction_kind_evicts_as_the_policy_it_selects) {
  behaves_as(eviction_kind::lru, std::nullopt, [](const fake_clock&) { return lru_eviction{}; });
  behaves_as(eviction_kind::lfu, std::nullopt, [](const fake_clock&) { return lfu_eviction{}; });
  behaves_as(eviction_kind::cost_aware, std::nullopt, [](const fake_clock&) { return cost_aware_eviction{}; });
}

BOOST_AUTO_TEST_CASE(with_a_lifetime_each_kind_expires_as_expiring_does) {
  for (const fake_clock::duration ttl : {fake_clock::duration(4s), fake_clock::duration(9s), fake_clock::duration(60s)}) {
    behaves_as(eviction_kind::lru, ttl, [&](const fake_clock& clock) {
      return expiring<lru_eviction, fake_clock>(ttl, ttl_refresh::on_hit, clock);
    });
    behaves_as(eviction_kind::lfu, ttl, [&](const fake_clock& clock) {
      return expiring<lfu_eviction, fake_clock>(ttl, ttl_refresh::on_hit, clock);
    });
    behaves_as(eviction_kind::cost_aware, ttl, [&](const fake_clock& clock) {
      return expiring<cost_aware_eviction, fake_clock>(ttl, ttl_refresh::on_hit, clock);
    });
  }
}

BOOST_AUTO_TEST_CASE(the_exact_victims_of_a_small_script) {
  // Spelled out once, so that a policy and its configured twin cannot both be wrong.
  const fake_clock clock;
  basic_configured_eviction<fake_clock> lfu(eviction_kind::lfu, 10s, ttl_refresh::never, clock);
  lfu.insert(0, {});
  lfu.insert(1, {});
  lfu.insert(2, {});
  lfu.touch(0);
  lfu.touch(0);
  lfu.touch(2);
  clock.advance(5s);
  lfu.insert(3, {});
  BOOST_TEST(!lfu.pop_expired());
  clock.advance(5s);  // 0, 1 and 2 reach their deadline; 3 has 5 s left
  BOOST_TEST(lfu.is_expired(1));
  BOOST_TEST(!lfu.is_expired(3));
  BOOST_TEST(*lfu.pop_expired() == 0u);
  BOOST_TEST(*lfu.pop_expired() == 1u);
  lfu.insert(4, {.hits = 1});
  BOOST_TEST(*lfu.pop_victim() == 3u);  // no hits; 2 and 4 have one each, 2 is older
  BOOST_TEST(*lfu.pop_victim() == 2u);
  BOOST_TEST(*lfu.pop_victim() == 4u);
  BOOST_TEST(!lfu.pop_victim());
  BOOST_TEST(!lfu.pop_expired());
}

BOOST_AUTO_TEST_CASE(a_lifetime_must_be_positive) {
  BOOST_CHECK_THROW(configured_eviction(eviction_kind::lru, std::chrono::seconds(0)), std::invalid_argument);
  BOOST_CHECK_THROW(configured_eviction(eviction_kind::lfu, std::chrono::seconds(-5)), std::invalid_argument);
  BOOST_TEST(!configured_eviction().ttl());
  BOOST_TEST((configured_eviction().kind() == eviction_kind::lru));
}

BOOST_AUTO_TEST_CASE(each_threshold_kind_decides_as_the_policy_it_selects) {
  for (const float t : {0.7f, 0.9f, 0.95f}) {
    const auto fixed = configured_threshold::fixed(t);
    BOOST_TEST((fixed.kind() == threshold_kind::fixed));
    BOOST_TEST(fixed.threshold() == t);
    BOOST_TEST((decisions(fixed) == decisions(static_threshold{t})));
  }
  BOOST_TEST(configured_threshold().threshold() == static_threshold{}.threshold);

  const adaptive_threshold_options options{.error_bound = 0.1f, .start_threshold = 0.95f, .min_feedback = 20};
  auto configured = configured_threshold::adaptive(options);
  adaptive_threshold reference(options);
  BOOST_TEST((configured.kind() == threshold_kind::adaptive));
  BOOST_TEST((decisions(configured) == decisions(reference)));
  teach(configured);
  teach(reference);
  BOOST_TEST(configured.threshold() == reference.threshold());
  BOOST_TEST(reference.threshold() != options.start_threshold);  // the feedback moved it
  BOOST_TEST((decisions(configured) == decisions(reference)));
}

BOOST_AUTO_TEST_CASE(wrong_hits_reported_through_the_cache_raise_the_adaptive_threshold) {
  plain_cache cache({}, fixed_weights(),
                    configured_threshold::adaptive({.start_threshold = 0.9f, .min_feedback = 3, .explore_rate = 0}));
  const cache_scope scope;
  const std::vector<std::string> texts = {"How do I reset my password?", "Where do I download invoices?",
                                          "Which payment methods do you accept?", "How do I close my account?"};
  for (const auto& text : texts) cache.insert(scope, text, "answer to " + text);
  BOOST_TEST(cache.threshold_policy().threshold() == 0.9f);
  for (int i = 0; i < 3; ++i) {
    const auto found = cache.lookup(scope, texts[i]);
    BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
    cache.feedback(found, false);
  }
  // Every judged hit was wrong: no threshold keeps the error bound, so the
  // learned one lies above every similarity (the top bin's edge and one more).
  BOOST_TEST(cache.threshold_policy().threshold() == 1.0f + 1.0f / 1000);
  BOOST_TEST(cache.statistics().wrong_reports == 3u);
  // The fourth text, never reported, hit before and no longer does.
  BOOST_TEST((cache.lookup(scope, texts[3]).outcome == lookup_outcome::miss));
}

BOOST_AUTO_TEST_CASE(entries_expire_in_the_cache_after_the_configured_lifetime) {
  const fake_clock clock;
  basic_semantic_cache<std::string, hashing_embedder, default_index_factory, basic_configured_eviction<fake_clock>>
      cache({.max_entries = 2}, fixed_weights(), static_threshold{0.9f}, {}, {},
            basic_configured_eviction<fake_clock>(eviction_kind::lru, 60s, ttl_refresh::never, clock));
  const cache_scope scope;
  cache.insert(scope, "How do I reset my password?", "the reset link");
  clock.advance(30s);
  cache.insert(scope, "Where do I download invoices?", "Billing, then Invoices");
  BOOST_TEST((cache.lookup(scope, "How do I reset my password?").outcome == lookup_outcome::hit));
  clock.advance(30s);  // the first reaches its lifetime; its hit did not extend it (never refreshed)
  BOOST_TEST((cache.lookup(scope, "How do I reset my password?").outcome == lookup_outcome::miss));
  // A full cache lets the expired entry go first, although it was used
  // more recently than the other, LRU's victim.
  cache.insert(scope, "Which payment methods do you accept?", "cards");
  BOOST_TEST(cache.size() == 2u);
  BOOST_TEST(cache.statistics().evictions == 1u);
  BOOST_TEST((cache.lookup(scope, "Where do I download invoices?").outcome == lookup_outcome::hit));
  BOOST_TEST((cache.lookup(scope, "Which payment methods do you accept?").outcome == lookup_outcome::hit));
  clock.advance(61s);
  BOOST_TEST((cache.lookup(scope, "Which payment methods do you accept?").outcome == lookup_outcome::miss));
}

BOOST_AUTO_TEST_CASE(a_snapshot_keeps_what_the_adaptive_threshold_learned) {
  const adaptive_threshold_options options{.start_threshold = 0.9f, .min_feedback = 3, .explore_rate = 0};
  llmgate::test::temporary_directory directory;
  {
    plain_cache cache({}, fixed_weights(), configured_threshold::adaptive(options));
    const cache_scope scope;
    for (const char* text : {"How do I reset my password?", "Where do I download invoices?", "How do I log in?"}) {
      cache.insert(scope, text, "answer");
      cache.feedback(cache.lookup(scope, text), false);
    }
    BOOST_TEST_REQUIRE(cache.threshold_policy().threshold() > 1.0f);
    BOOST_TEST_REQUIRE(!cache.save(directory / "adaptive"));
    plain_cache fixed({}, fixed_weights(), configured_threshold::fixed(0.8f));
    fixed.insert(scope, "How do I reset my password?", "answer");
    BOOST_TEST_REQUIRE(!fixed.save(directory / "static"));
  }
  const auto loaded = plain_cache::load(directory / "adaptive", {}, fixed_weights(),
                                        configured_threshold::adaptive(options));
  BOOST_TEST(loaded.threshold_policy().threshold() == 1.0f + 1.0f / 1000);
  BOOST_TEST(loaded.size() == 3u);
  // Loaded under another kind: what the file's policy learned is passed over.
  const auto as_static = plain_cache::load(directory / "adaptive", {}, fixed_weights(), configured_threshold::fixed(0.8f));
  BOOST_TEST(as_static.threshold_policy().threshold() == 0.8f);
  BOOST_TEST(as_static.size() == 3u);
  const auto as_adaptive = plain_cache::load(directory / "static", {}, fixed_weights(),
                                             configured_threshold::adaptive(options));
  BOOST_TEST(as_adaptive.threshold_policy().threshold() == 0.9f);
  BOOST_TEST(as_adaptive.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
