// No cache lock is held while an embedder runs: while one request's
// embedding is stalled inside embed(), lookups and inserts of other
// requests complete. Nor is the exclusive lock held while an insert links
// its vector into the index. Ordered by latches, not by timing: were a lock
// held across the stalled call, the main thread would wait for it forever
// (and the test would hang rather than pass). Run under ThreadSanitizer
// (label "concurrency").
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/index/flat_index.hpp"

using namespace llmgate;

namespace {

// Where a test stops a thread: it announces itself on `entered` and waits
// for `released`, once, after the test arms it.
struct stall_point {
  std::latch entered{1};
  std::latch released{1};
  std::atomic<bool> armed{false};

  void pass() {
    if (armed.exchange(false)) {
      entered.count_down();
      released.wait();
    }
  }
};

// The hashing embedder, except that the first embed() of `stalled_text`
// announces itself on `entered` and waits for `released`, as a remote
// embedder waiting on the network would.
struct stalling_embedder {
  struct gate : stall_point {
    std::string stalled_text;
  };
  std::shared_ptr<gate> gate_;
  hashing_embedder inner;

  std::size_t dimension() const { return inner.dimension(); }
  std::error_code embed(std::string_view text, std::span<float> out) const {
    if (text == gate_->stalled_text) gate_->pass();
    return inner.embed(text, out);
  }
};

using stalling_cache = basic_semantic_cache<std::string, stalling_embedder>;

stalling_embedder stalling_on(std::string text, std::shared_ptr<stalling_embedder::gate>& gate) {
  gate = std::make_shared<stalling_embedder::gate>();
  gate->stalled_text = std::move(text);
  gate->armed = true;
  return stalling_embedder{gate, hashing_embedder()};
}

// An exact index whose add() stops at `stall` once armed: an insert
// linking its vector, as a slow HNSW insert would be.
struct stalling_index {
  using metric_type = cosine_metric;
  flat_index<> inner;
  std::shared_ptr<stall_point> stall;

  std::error_code add(vector_id id, std::span<const float> v) {
    stall->pass();
    return inner.add(id, v);
  }
  bool remove(vector_id id) { return inner.remove(id); }
  bool contains(vector_id id) const { return inner.contains(id); }
  std::vector<search_hit> search(std::span<const float> q, std::size_t k) const { return inner.search(q, k); }
  template <class Filter>
  std::vector<search_hit> search(std::span<const float> q, std::size_t k, Filter filter) const {
    return inner.search(q, k, filter);
  }
  std::size_t size() const { return inner.size(); }
  std::size_t dimension() const { return inner.dimension(); }
  std::size_t memory_usage() const { return inner.memory_usage(); }
  void save_to(store::snapshot_writer& out) const { inner.save_to(out); }
  static std::optional<stalling_index> load_from(store::snapshot_reader& in, std::error_code& ec) {
    auto loaded = flat_index<>::load_from(in, ec);
    if (!loaded) return std::nullopt;
    return stalling_index{std::move(*loaded), std::make_shared<stall_point>()};
  }
};

struct stalling_index_factory {
  using index_type = stalling_index;
  std::shared_ptr<stall_point> stall = std::make_shared<stall_point>();
  index_type make(std::size_t dimension) const { return {flat_index<>(dimension), stall}; }
};

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

BOOST_AUTO_TEST_CASE(lookups_and_inserts_complete_while_an_insert_links_its_vector) {
  const stalling_index_factory indexes;
  basic_semantic_cache<std::string, hashing_embedder, stalling_index_factory> cache(
      {}, hashing_embedder(), static_threshold{0.9f}, {}, {}, {}, indexes);
  const cache_scope a({.tenant = "a"}), b({.tenant = "b"});
  cache.insert(a, "Where do I download invoices?", "Billing");
  cache.insert(b, "Which payment methods do you accept?", "Cards");

  indexes.stall->armed = true;
  std::thread stalled_insert([&] { cache.insert(a, "How do I close my account?", "Settings, then Account"); });
  indexes.stall->entered.wait();  // stored, and inside the index's add() now

  // Stored but not yet in the index: counted, not found.
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST((cache.lookup(a, "How do I close my account?").outcome == lookup_outcome::miss));
  // Lookups of both scopes, and another insert into the same scope's index.
  BOOST_TEST((cache.lookup(a, "Where do I download invoices?").outcome == lookup_outcome::hit));
  BOOST_TEST((cache.lookup(b, "Which payment methods do you accept?").outcome == lookup_outcome::hit));
  cache.insert(a, "What is the refund policy?", "30 days");
  BOOST_TEST((cache.lookup(a, "What is the refund policy?").outcome == lookup_outcome::hit));

  indexes.stall->released.count_down();
  stalled_insert.join();
  BOOST_TEST(cache.size() == 4u);
  const auto found = cache.lookup(a, "How do I close my account?");
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "Settings, then Account");
}

BOOST_AUTO_TEST_CASE(a_snapshot_waits_for_an_insert_to_link_its_vector) {
  // Saved between the insert's steps, the file would hold an entry its
  // index lacks, and loading would reject it as corrupt. The main thread's
  // save waits instead, until another thread lets the insert go on (the
  // sleep only gives the save time to start waiting; were it to start
  // later, it would save after the insert and pass all the same).
  using cache_type = basic_semantic_cache<std::string, hashing_embedder, stalling_index_factory>;
  const stalling_index_factory indexes;
  cache_type cache({}, hashing_embedder(), static_threshold{0.9f}, {}, {}, {}, indexes);
  const cache_scope a({.tenant = "a"});
  cache.insert(a, "Where do I download invoices?", "Billing");

  indexes.stall->armed = true;
  std::thread stalled_insert([&] { cache.insert(a, "How do I close my account?", "Settings, then Account"); });
  indexes.stall->entered.wait();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    indexes.stall->released.count_down();
  });
  const std::string saved = cache.save_bytes();
  releaser.join();
  stalled_insert.join();

  auto loaded = cache_type::load_bytes(saved, "the snapshot", {}, hashing_embedder(), static_threshold{0.9f}, {}, {},
                                       {}, indexes);
  BOOST_TEST(loaded.size() == 2u);
  const auto found = loaded.lookup(a, "How do I close my account?");
  BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit));
  BOOST_TEST(*found.answer == "Settings, then Account");
}

BOOST_AUTO_TEST_SUITE_END()
