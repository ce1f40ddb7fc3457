// No cache lock is held while an embedder runs: while one request's
// embedding is stalled inside embed(), lookups and inserts of other
// requests complete. Ordered by latches, not by timing: were a lock held
// across the stalled embed(), the main thread would wait for it forever
// (and the test would hang rather than pass). Run under ThreadSanitizer
// (label "concurrency").
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <thread>

#include "llmgate/cache/semantic_cache.hpp"

using namespace llmgate;

namespace {

// The hashing embedder, except that the first embed() of `stalled_text`
// announces itself on `entered` and waits for `released`, as a remote
// embedder waiting on the network would.
struct stalling_embedder {
  struct gate {
    std::string stalled_text;
    std::latch entered{1};
    std::latch released{1};
    std::atomic<bool> armed{true};
  };
  std::shared_ptr<gate> gate_;
  hashing_embedder inner;

  std::size_t dimension() const { return inner.dimension(); }
  std::error_code embed(std::string_view text, std::span<float> out) const {
    if (text == gate_->stalled_text && gate_->armed.exchange(false)) {
      gate_->entered.count_down();
      gate_->released.wait();
    }
    return inner.embed(text, out);
  }
};

using stalling_cache = basic_semantic_cache<std::string, stalling_embedder>;

stalling_embedder stalling_on(std::string text, std::shared_ptr<stalling_embedder::gate>& gate) {
  gate = std::make_shared<stalling_embedder::gate>();
  gate->stalled_text = std::move(text);
  return stalling_embedder{gate, hashing_embedder()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_two_step_concurrency_test)

BOOST_AUTO_TEST_CASE(lookups_and_inserts_complete_while_a_lookup_is_embedding) {
  const std::string stalled = "How do I reset my password?";
  std::shared_ptr<stalling_embedder::gate> gate;
  stalling_cache cache({}, stalling_on(stalled, gate), static_threshold{0.9f});
  const cache_scope a({.tenant = "a"}), b({.tenant = "b"});
  cache.insert(b, "Where do I download invoices?", "Billing");
  cache.insert(a, "Which payment methods do you accept?", "Cards");

  semantic_lookup<std::string> stalled_result;
  std::thread stalled_lookup([&] { stalled_result = cache.lookup(a, stalled); });
  gate->entered.wait();  // the lookup is inside embed() now, and stays there

  // Another scope's lookup and insert, and one of the same scope, complete.
  const auto other = cache.lookup(b, "Where do I download invoices?");
  BOOST_TEST((other.outcome == lookup_outcome::hit));
  cache.insert(b, "What is the refund policy?", "30 days");
  BOOST_TEST((cache.lookup(b, "What is the refund policy?").outcome == lookup_outcome::hit));
  BOOST_TEST((cache.lookup(a, "Which payment methods do you accept?").outcome == lookup_outcome::hit));
  // The stalled text itself, stored meanwhile: the stalled lookup searches
  // after this, so it will find it.
  cache.insert(a, stalled, "Use the reset link");
  BOOST_TEST(cache.size() == 4u);

  gate->released.count_down();
  stalled_lookup.join();
  BOOST_TEST_REQUIRE((stalled_result.outcome == lookup_outcome::hit));
  BOOST_TEST(*stalled_result.answer == "Use the reset link");
  BOOST_TEST(cache.statistics().lookups == 4u);
}

BOOST_AUTO_TEST_CASE(lookups_and_inserts_complete_while_an_insert_is_embedding) {
  const std::string stalled = "How do I close my account?";
  std::shared_ptr<stalling_embedder::gate> gate;
  stalling_cache cache({}, stalling_on(stalled, gate), static_threshold{0.9f});
  const cache_scope a({.tenant = "a"}), b({.tenant = "b"});
  cache.insert(b, "Where do I download invoices?", "Billing");

  std::thread stalled_insert([&] { cache.insert(a, stalled, "Settings, then Account"); });
  gate->entered.wait();

  BOOST_TEST((cache.lookup(b, "Where do I download invoices?").outcome == lookup_outcome::hit));
  BOOST_TEST((cache.lookup(a, stalled).outcome == lookup_outcome::miss));  // not stored yet
  cache.insert(b, "What is the refund policy?", "30 days");
  BOOST_TEST(cache.size() == 2u);

  gate->released.count_down();
  stalled_insert.join();
  BOOST_TEST(cache.size() == 3u);
  const auto found = cache.lookup(a, stalled);
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "Settings, then Account");
}

BOOST_AUTO_TEST_SUITE_END()
