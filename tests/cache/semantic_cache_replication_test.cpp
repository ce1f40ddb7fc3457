// What a semantic cache offers a tier that copies it to other replicas
// (the Redis tier): an observer told of each change the cache makes on its
// own, the *_replica calls that apply another cache's changes without
// telling it again, and the whole cache as bytes.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "llmgate/cache/learned_verifier.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "llmgate/embed/external_embedder.hpp"

using namespace llmgate;

namespace {

// Records each call as one line, in order.
struct recording_observer final : semantic_cache_observer<std::string> {
  std::vector<std::string> calls;
  std::size_t last_vector_size = 0;

  void inserted(const hash128&, std::string_view text, std::span<const float> vector, const std::string& answer,
                const answer_cost& cost) override {
    last_vector_size = vector.size();
    calls.push_back("inserted " + std::string(text) + " -> " + answer + " $" + std::to_string(cost.usd));
  }
  void evicted(const hash128&, std::string_view text) override { calls.push_back("evicted " + std::string(text)); }
  void told(const hash128&, std::string_view request, std::string_view stored, float similarity, float,
            bool correct) override {
    calls.push_back("told " + std::string(request) + " | " + std::string(stored) + " " +
                    (correct ? "right" : "wrong") + (similarity > 0.999f ? " at 1" : " below 1"));
  }
};

const cache_scope acme({.tenant = "acme"});
const cache_scope globex({.tenant = "globex"});

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_replication_test)

BOOST_AUTO_TEST_CASE(the_observer_hears_inserts_evictions_and_verdicts_in_order) {
  semantic_cache cache({.max_entries = 2});
  recording_observer heard;
  cache.observe(&heard);
  cache.insert(acme, "How do I reset my password?", std::string("A1"), {.usd = 0.5});
  cache.insert(acme, "What is the capital of France?", std::string("A2"));
  cache.insert(acme, "Why is the sky blue?", std::string("A3"));  // over capacity: the oldest leaves
  BOOST_TEST(heard.last_vector_size == 384u);
  const auto found = cache.lookup(acme, "What is the capital of France?");
  BOOST_TEST_REQUIRE(static_cast<int>(found.outcome) == static_cast<int>(lookup_outcome::hit));
  cache.feedback(found, false);
  const std::vector<std::string> expected = {
      "inserted How do I reset my password? -> A1 $0.500000",
      "inserted What is the capital of France? -> A2 $0.000000",
      "evicted How do I reset my password?",
      "inserted Why is the sky blue? -> A3 $0.000000",
      "told What is the capital of France? | What is the capital of France? wrong at 1"};
  BOOST_TEST(heard.calls == expected, boost::test_tools::per_element());

  cache.observe(nullptr);
  cache.insert(acme, "Who wrote Hamlet?", std::string("A4"));
  BOOST_TEST(heard.calls.size() == expected.size());
}

BOOST_AUTO_TEST_CASE(replica_calls_apply_another_caches_changes_and_tell_no_one) {
  semantic_cache here;
  recording_observer heard;
  here.observe(&heard);
  const auto key = here.key(acme, "How do I reset my password?");
  BOOST_TEST(here.insert_replica(key, {}, "A1", {.usd = 0.25}));
  BOOST_TEST(!here.insert_replica(key, {}, "A1 again"));  // the scope holds this text already
  BOOST_TEST(here.size() == 1u);
  // The same text in another tenant's scope is another entry.
  BOOST_TEST(here.insert_replica(here.key(globex, "How do I reset my password?"), {}, "G1"));
  BOOST_TEST(here.size() == 2u);

  const auto hit = here.lookup(acme, "How do I reset my password?");
  BOOST_TEST_REQUIRE(static_cast<int>(hit.outcome) == static_cast<int>(lookup_outcome::hit));
  BOOST_TEST(hit.answer.value() == "A1");

  // Another replica's wrong verdict at similarity 1 stops the entry serving.
  BOOST_TEST(here.feedback_replica(acme.hash(), "How do I reset my password?", "How do I reset my password?", 1.0f,
                                   1.0f, false));
  BOOST_TEST(here.statistics().wrong_reports == 1u);
  BOOST_TEST(static_cast<int>(here.lookup(acme, "How do I reset my password?").outcome) ==
             static_cast<int>(lookup_outcome::miss));
  BOOST_TEST(!here.feedback_replica(acme.hash(), "x", "a text never stored", 1.0f, 1.0f, false));

  BOOST_TEST(here.erase_replica(globex.hash(), "How do I reset my password?"));
  BOOST_TEST(!here.erase_replica(globex.hash(), "How do I reset my password?"));
  BOOST_TEST(here.size() == 1u);
  BOOST_TEST(heard.calls.empty());
}

// An embedder that does not learn makes the same vector on every replica,
// so the one sent along is indexed as it is: external_embedder, which
// cannot embed at all, finds the entry by it.
BOOST_AUTO_TEST_CASE(a_vector_from_another_replica_is_indexed_as_it_is) {
  using remote_cache = basic_semantic_cache<std::string, external_embedder>;
  remote_cache here({}, external_embedder(3));
  const auto key = here.key(acme, "north");
  BOOST_TEST(here.insert_replica(key, {1.0f, 0.0f, 0.0f}, "N"));
  const auto found = here.search(key, looked_up_vector::of("north", {1.0f, 0.0f, 0.0f}));
  BOOST_TEST_REQUIRE(static_cast<int>(found.outcome) == static_cast<int>(lookup_outcome::hit));
  BOOST_TEST(found.answer.value() == "N");
}

BOOST_AUTO_TEST_CASE(the_whole_cache_goes_through_bytes_and_bad_bytes_are_refused_by_name) {
  using cache_type = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lru_eviction,
                                          static_threshold, learned_verifier>;
  cache_type saved;
  saved.insert(acme, "How do I reset my password?", std::string("A1"), {.prompt_tokens = 3, .usd = 0.5});
  saved.insert(globex, "What is the capital of France?", std::string("G1"));
  const std::string bytes = saved.save_bytes();

  auto loaded = cache_type::load_bytes(bytes, "the test's bytes");
  BOOST_TEST(loaded.size() == 2u);
  std::vector<std::string> entries;
  loaded.for_each_entry([&](const hash128& scope, std::string_view text, const std::string& answer,
                            const answer_cost& cost) {
    entries.push_back((scope == acme.hash() ? "acme " : "globex ") + std::string(text) + " -> " + answer + " $" +
                      std::to_string(cost.usd));
  });
  std::sort(entries.begin(), entries.end());
  BOOST_TEST(entries == (std::vector<std::string>{"acme How do I reset my password? -> A1 $0.500000",
                                                  "globex What is the capital of France? -> G1 $0.000000"}),
             boost::test_tools::per_element());
  BOOST_TEST(loaded.lookup(acme, "How do I reset my password?").answer.value() == "A1");
  // The loaded cache finds entries by text too (the replica calls need it).
  BOOST_TEST(loaded.erase_replica(globex.hash(), "What is the capital of France?"));

  std::string altered = bytes;
  altered[altered.size() / 2] ^= 0x01;
  try {
    (void)cache_type::load_bytes(altered, "redis llmgate:{semantic}:snapshot");
    BOOST_FAIL("altered bytes were loaded");
  } catch (const error& e) {
    BOOST_TEST(e.code() == errc::checksum_mismatch);
    BOOST_TEST(std::string(e.what()).find("'redis llmgate:{semantic}:snapshot'") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
