// Every eviction policy's order, checked victim by victim on constructed
// sequences, and the lifetimes of ttl_eviction and expiring<> on a fake clock.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <vector>

#include "llmgate/cache/eviction/cost_aware.hpp"
#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/eviction/ttl.hpp"
#include "fake_clock.hpp"

using namespace std::chrono_literals;
using llmgate::entry_handle;
using llmgate::entry_info;
using llmgate::test::fake_clock;

static_assert(llmgate::EvictionPolicy<llmgate::ttl_eviction<fake_clock>>);
static_assert(llmgate::EvictionPolicy<llmgate::expiring<llmgate::lfu_eviction, fake_clock>>);

namespace {

// Pops every victim: the order in which a full cache would evict.
template <class Policy>
std::vector<entry_handle> eviction_order(Policy& policy) {
  std::vector<entry_handle> order;
  while (const auto victim = policy.pop_victim()) order.push_back(*victim);
  return order;
}

template <class Policy>
std::vector<entry_handle> expired_now(Policy& policy) {
  std::vector<entry_handle> expired;
  while (const auto handle = policy.pop_expired()) expired.push_back(*handle);
  return expired;
}

using handles = std::vector<entry_handle>;

}  // namespace

BOOST_AUTO_TEST_SUITE(eviction_test)

BOOST_AUTO_TEST_CASE(lru_evicts_the_least_recently_used) {
  llmgate::lru_eviction lru;
  for (entry_handle h : {0u, 1u, 2u, 3u}) lru.insert(h, {});
  lru.touch(0);
  lru.touch(2);
  lru.touch(0);
  BOOST_TEST(eviction_order(lru) == (handles{1, 3, 2, 0}), boost::test_tools::per_element());
  BOOST_TEST(!lru.pop_expired());
}

BOOST_AUTO_TEST_CASE(lru_erase_unlinks_and_handles_are_reused) {
  llmgate::lru_eviction lru;
  for (entry_handle h : {0u, 1u, 2u}) lru.insert(h, {});
  lru.erase(1);
  lru.erase(1);  // not held any more: nothing happens
  lru.insert(1, {});  // the handle comes back, now the most recent
  lru.touch(0);
  BOOST_TEST(eviction_order(lru) == (handles{2, 1, 0}), boost::test_tools::per_element());
  lru.insert(7, {});
  lru.clear();
  BOOST_TEST(!lru.pop_victim());
}

BOOST_AUTO_TEST_CASE(lfu_evicts_the_least_hit_and_the_oldest_among_equals) {
  llmgate::lfu_eviction lfu;
  for (entry_handle h : {0u, 1u, 2u, 3u, 4u}) lfu.insert(h, {});
  lfu.touch(2);
  lfu.touch(2);  // 2 hits
  lfu.touch(0);  // 1 hit, older than 3
  lfu.touch(3);  // 1 hit
  lfu.touch(4);
  lfu.touch(4);  // 2 hits, younger than 2
  // 1 (0 hits), then 0 and 3 (1 hit, oldest first), then 2 and 4 (2 hits).
  BOOST_TEST(eviction_order(lfu) == (handles{1, 0, 3, 2, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(lfu_starts_restored_entries_at_their_hits_and_erases_anywhere) {
  llmgate::lfu_eviction lfu;
  lfu.insert(0, {.hits = 5});
  lfu.insert(1, {.hits = 0});
  lfu.insert(2, {.hits = 3});
  lfu.insert(3, {.hits = 1});
  lfu.erase(3);
  for (int i = 0; i < 3; ++i) lfu.touch(1);  // 3 hits, as many as 2 and older
  BOOST_TEST(eviction_order(lfu) == (handles{1, 2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(lfu_heap_order_holds_under_many_random_operations) {
  // A model check: a linear scan for (hits, age) agrees with the heap.
  llmgate::lfu_eviction lfu;
  std::vector<std::optional<std::pair<unsigned, unsigned>>> model(64);  // hits, age
  unsigned age = 0;
  std::uint32_t state = 12345;
  const auto next = [&state] { return state = state * 1664525u + 1013904223u, state >> 8; };
  for (int step = 0; step < 20000; ++step) {
    const entry_handle h = next() % model.size();
    switch (next() % 4) {
      case 0:
        if (!model[h]) { lfu.insert(h, {}); model[h] = std::pair{0u, age++}; }
        break;
      case 1:
        if (model[h]) { lfu.touch(h); ++model[h]->first; }
        break;
      case 2:
        lfu.erase(h);
        model[h].reset();
        break;
      default: {
        std::optional<entry_handle> expected;
        for (entry_handle c = 0; c < model.size(); ++c)
          if (model[c] && (!expected || *model[c] < *model[*expected])) expected = c;
        const auto victim = lfu.pop_victim();
        BOOST_TEST_REQUIRE((victim == expected));
        if (victim) model[*victim].reset();
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(cost_aware_keeps_what_was_expensive_per_byte) {
  llmgate::cost_aware_eviction gdsf;
  gdsf.insert(0, {.bytes = 100, .cost = 100});  // 1.0 per byte
  gdsf.insert(1, {.bytes = 100, .cost = 50});   // 0.5
  gdsf.insert(2, {.bytes = 4, .cost = 3});      // 0.75: small and fairly dear
  gdsf.insert(3, {.bytes = 1000, .cost = 500}); // 0.5, younger than 1
  BOOST_TEST(eviction_order(gdsf) == (handles{1, 3, 2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cost_aware_counts_hits_and_ages_out_what_is_no_longer_asked_for) {
  llmgate::cost_aware_eviction gdsf;
  gdsf.insert(0, {.bytes = 100, .cost = 100});  // H = 1.0, never hit again
  gdsf.insert(1, {.bytes = 100, .cost = 50});   // H = 0.5
  gdsf.insert(2, {.bytes = 4, .cost = 3});      // H = 0.75
  gdsf.insert(3, {.bytes = 100, .cost = 25});   // H = 0.25, then hit 3 times: 4 * 0.25 = 1.0
  for (int i = 0; i < 3; ++i) gdsf.touch(3);
  BOOST_TEST(*gdsf.pop_victim() == 1u);  // L = 0.5
  BOOST_TEST(*gdsf.pop_victim() == 2u);  // L = 0.75
  BOOST_TEST(gdsf.inflation() == 0.75);
  // A newcomer worth 0.5 per byte now starts at L + 0.5 = 1.25: above 0,
  // which was dearer but has not been asked for since, and above 3.
  gdsf.insert(4, {.bytes = 100, .cost = 50});
  BOOST_TEST(eviction_order(gdsf) == (handles{0, 3, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ttl_expires_entries_a_lifetime_after_insert) {
  fake_clock clock;
  llmgate::ttl_eviction<fake_clock> ttl(10s, llmgate::ttl_refresh::never, clock);
  ttl.insert(0, {});
  clock.advance(1s);
  ttl.insert(1, {});
  clock.advance(1s);
  ttl.insert(2, {});
  ttl.touch(0);  // no refresh: the deadline stays at 10 s
  clock.advance(7s);  // t = 9 s
  BOOST_TEST(expired_now(ttl).empty());
  BOOST_TEST(!ttl.is_expired(0));
  clock.advance(1s);  // t = 10 s: 0's deadline is reached
  BOOST_TEST(ttl.is_expired(0));
  BOOST_TEST(!ttl.is_expired(1));
  BOOST_TEST(expired_now(ttl) == (handles{0}), boost::test_tools::per_element());
  clock.advance(5s);
  BOOST_TEST(expired_now(ttl) == (handles{1, 2}), boost::test_tools::per_element());
  BOOST_TEST(!ttl.pop_victim());
}

BOOST_AUTO_TEST_CASE(ttl_with_refresh_pushes_the_deadline_back_on_each_hit) {
  fake_clock clock;
  llmgate::ttl_eviction<fake_clock> ttl(10s, llmgate::ttl_refresh::on_hit, clock);
  ttl.insert(0, {});
  ttl.insert(1, {});
  clock.advance(6s);
  ttl.touch(0);  // deadline 16 s
  clock.advance(4s);  // t = 10 s
  BOOST_TEST(expired_now(ttl) == (handles{1}), boost::test_tools::per_element());
  clock.advance(5s);  // t = 15 s
  BOOST_TEST(expired_now(ttl).empty());
  clock.advance(1s);
  BOOST_TEST(expired_now(ttl) == (handles{0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ttl_victim_is_the_entry_closest_to_its_deadline) {
  fake_clock clock;
  llmgate::ttl_eviction<fake_clock> fifo(1h, llmgate::ttl_refresh::never, clock);
  llmgate::ttl_eviction<fake_clock> refreshed(1h, llmgate::ttl_refresh::on_hit, clock);
  for (entry_handle h : {0u, 1u, 2u}) {
    fifo.insert(h, {});
    refreshed.insert(h, {});
    clock.advance(1s);
  }
  fifo.touch(0);
  refreshed.touch(0);
  BOOST_TEST(eviction_order(fifo) == (handles{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(eviction_order(refreshed) == (handles{1, 2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(expiring_evicts_by_its_policy_and_expires_by_deadline) {
  fake_clock clock;
  llmgate::expiring<llmgate::lfu_eviction, fake_clock> policy(10s, llmgate::ttl_refresh::never,
                                                              clock);
  policy.insert(0, {});
  policy.touch(0);
  clock.advance(5s);
  policy.insert(1, {});
  policy.insert(2, {});
  policy.touch(2);
  // Full before anything expires: LFU picks 1 (no hits), not the oldest, 0.
  BOOST_TEST(*policy.pop_victim() == 1u);
  clock.advance(5s);  // t = 10 s: 0 is past its lifetime, whatever its hits
  BOOST_TEST(policy.is_expired(0));
  BOOST_TEST(expired_now(policy) == (handles{0}), boost::test_tools::per_element());
  // Neither structure holds 0 or 1 any more.
  BOOST_TEST(eviction_order(policy) == (handles{2}), boost::test_tools::per_element());
  BOOST_TEST(expired_now(policy).empty());
}

BOOST_AUTO_TEST_SUITE_END()
