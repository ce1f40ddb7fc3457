// The semantic cache's bound in bytes (semantic_cache_options::max_bytes):
// what an entry counts, eviction until both bounds hold, refusal of an
// entry larger than the bound, and a count that stays exact through
// removal, expiry, snapshots and re-embedding.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "llmgate/cache/eviction/ttl.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "../temporary_directory.hpp"
#include "fake_clock.hpp"

using namespace llmgate;

namespace {

using cache_type = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lru_eviction,
                                        static_threshold>;

cache_type make_cache(std::size_t max_bytes) {
  return cache_type({.max_bytes = max_bytes}, hashing_embedder(), static_threshold{0.9f});
}

// What the cache counts for an entry with a string answer: its key text,
// the answer as cache_value_traits<std::string> counts it (the string
// object and its characters) and its vector, hashing_embedder's 384
// components at a byte each in the default (int8) index.
std::size_t entry_bytes(std::string_view text, std::string_view answer) {
  return text.size() + sizeof(std::string) + answer.size() + 384;
}

// `size` bytes of random eight-letter words, the same for the same seed:
// prompts with no word in common, far apart for the embedder, so that
// only a prompt's own entry can answer it.
std::string prompt(std::size_t size, unsigned seed) {
  std::mt19937_64 draw(seed);
  std::string text;
  text.reserve(size + 9);
  while (text.size() < size) {
    std::uint64_t letters = draw();
    for (int i = 0; i < 8; ++i, letters /= 26) text += static_cast<char>('a' + letters % 26);
    text += ' ';
  }
  text.resize(size);
  return text;
}

// Answers of one length, so that every entry of a test counts the same.
std::string answer_of(std::size_t i) {
  const std::string number = std::to_string(i);
  return "answer " + std::string(6 - number.size(), '0') + number;
}

constexpr std::size_t prompt_size = 10'000;

std::vector<std::string> prompts(std::size_t count, unsigned first_seed = 1) {
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < count; ++i) texts.push_back(prompt(prompt_size, first_seed + static_cast<unsigned>(i)));
  return texts;
}

// What each of the tests' entries counts.
const std::size_t entry_size = entry_bytes(prompt(prompt_size, 1), answer_of(0));

// A vector drawn from the text's hash: one pass over a text however long
// (hashing_embedder reads every word of it) and distinct texts far apart.
struct seeded_embedder {
  std::size_t dimension() const noexcept { return 384; }
  std::error_code embed(std::string_view text, std::span<float> out) const {
    if (out.size() != dimension()) return make_error_code(errc::dimension_mismatch);
    std::mt19937_64 draw(looked_up_vector::hash_of(text));
    std::normal_distribution<float> component;
    for (float& value : out) value = component(draw);
    return {};
  }
};

template <class Cache>
bool hits(Cache& cache, const cache_scope& scope, const std::string& text) {
  return cache.lookup(scope, text).outcome == lookup_outcome::hit;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_bytes_test)

BOOST_AUTO_TEST_CASE(the_bound_is_256_mib_by_default) {
  BOOST_TEST(semantic_cache_options{}.max_bytes == std::size_t{256} << 20);
}

BOOST_AUTO_TEST_CASE(an_entry_counts_its_text_its_answer_and_its_vector) {
  const cache_scope scope;
  const std::string text = "How do I reset my password?", answer = "Use the 'forgot password' link.";
  auto cache = make_cache(std::size_t{1} << 20);
  BOOST_TEST(cache.bytes() == 0u);
  cache.insert(scope, text, answer);
  BOOST_TEST(cache.bytes() == text.size() + sizeof(std::string) + answer.size() + 384);
  BOOST_TEST(cache.statistics().bytes == cache.bytes());

  // flat_index keeps a float per component.
  basic_semantic_cache<std::string, hashing_embedder, flat_index_factory<>> flat;
  flat.insert(scope, text, answer);
  BOOST_TEST(flat.bytes() == text.size() + sizeof(std::string) + answer.size() + 384 * sizeof(float));

  // The semantic cache keeps a second insert of a text as an entry of its
  // own, and counts it.
  cache.insert(scope, text, answer);
  BOOST_TEST(cache.size() == 2u);
  BOOST_TEST(cache.bytes() == 2 * entry_bytes(text, answer));
}

BOOST_AUTO_TEST_CASE(the_least_recently_used_entries_leave_until_the_bytes_fit) {
  // Room for five entries and half of a sixth; max_entries (100,000) is never reached.
  auto cache = make_cache(5 * entry_size + entry_size / 2);
  const cache_scope scope;
  const auto texts = prompts(8);
  for (std::size_t i = 0; i < 5; ++i) cache.insert(scope, texts[i], answer_of(i));
  BOOST_TEST(cache.size() == 5u);
  BOOST_TEST(cache.bytes() == 5 * entry_size);
  BOOST_TEST(hits(cache, scope, texts[0]));  // now the most recently used
  for (std::size_t i = 5; i < 8; ++i) cache.insert(scope, texts[i], answer_of(i));

  BOOST_TEST(cache.size() == 5u);
  BOOST_TEST(cache.bytes() == 5 * entry_size);
  BOOST_TEST(cache.statistics().bytes == 5 * entry_size);
  BOOST_TEST(cache.statistics().evictions == 3u);
  for (std::size_t i : {1, 2, 3}) BOOST_TEST(!hits(cache, scope, texts[i]), "entry " << i << " left");
  for (std::size_t i : {0, 4, 5, 6, 7}) {
    const auto found = cache.lookup(scope, texts[i]);
    BOOST_TEST_REQUIRE((found.outcome == lookup_outcome::hit), "entry " << i << " stays");
    BOOST_TEST(*found.answer == answer_of(i));
  }
}

BOOST_AUTO_TEST_CASE(an_entry_larger_than_max_bytes_alone_is_refused_and_the_cache_is_unchanged) {
  const std::size_t max_bytes = 3 * entry_size;
  auto cache = make_cache(max_bytes);
  const cache_scope scope;
  const auto texts = prompts(2);
  cache.insert(scope, texts[0], answer_of(0));
  cache.insert(scope, texts[1], answer_of(1));

  // One byte over the bound, by the text and by the answer.
  const std::string long_text = prompt(max_bytes - entry_bytes("", answer_of(2)) + 1, 99);
  BOOST_TEST(cache.insert(scope, long_text, answer_of(2)) == cache_type::rejected_entry);
  const std::string long_answer(max_bytes - entry_bytes(texts[0], "") + 1, 'x');
  BOOST_TEST(cache.insert(scope, prompt(prompt_size, 98), long_answer) == cache_type::rejected_entry);
  BOOST_TEST(!cache.insert_replica(cache_key{scope.hash(), long_text}, {}, answer_of(2)));

  BOOST_TEST(cache.size() == 2u);
  BOOST_TEST(cache.bytes() == 2 * entry_size);
  BOOST_TEST(cache.statistics().insertions == 2u);
  BOOST_TEST(cache.statistics().evictions == 0u);
  BOOST_TEST(!hits(cache, scope, long_text));
  BOOST_TEST(hits(cache, scope, texts[0]));
  BOOST_TEST(hits(cache, scope, texts[1]));

  // An entry of exactly max_bytes is stored, once every other has left.
  const std::string fitting_text = prompt(max_bytes - entry_bytes("", answer_of(3)), 97);
  BOOST_TEST(cache.insert(scope, fitting_text, answer_of(3)) != cache_type::rejected_entry);
  BOOST_TEST(cache.size() == 1u);
  BOOST_TEST(cache.bytes() == max_bytes);
  BOOST_TEST(hits(cache, scope, fitting_text));
}

BOOST_AUTO_TEST_CASE(removing_every_entry_brings_the_bytes_back_to_zero) {
  auto cache = make_cache(std::size_t{1} << 20);
  const cache_scope first({.tenant = "first"}), second({.tenant = "second"});
  const auto texts = prompts(6);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(i % 2 ? second : first, texts[i], answer_of(i));
  BOOST_TEST(cache.bytes() == 6 * entry_size);
  for (std::size_t i = 0; i < texts.size(); ++i)
    BOOST_TEST(cache.erase_replica((i % 2 ? second : first).hash(), texts[i]));
  BOOST_TEST(cache.size() == 0u);
  BOOST_TEST(cache.bytes() == 0u);
  BOOST_TEST(cache.statistics().bytes == 0u);
  cache.insert(first, texts[0], answer_of(0));  // reuses a freed handle
  BOOST_TEST(cache.bytes() == entry_size);
}

BOOST_AUTO_TEST_CASE(expired_entries_leave_first_and_give_their_bytes_back) {
  using expiring_lru = expiring<lru_eviction, test::fake_clock>;
  const test::fake_clock clock;
  basic_semantic_cache<std::string, hashing_embedder, default_index_factory, expiring_lru, static_threshold> cache(
      {.max_bytes = 3 * entry_size}, hashing_embedder(), static_threshold{0.9f}, guarded_similarity<lexical_guard>(),
      last_user_turn(), expiring_lru(std::chrono::seconds(60), ttl_refresh::never, clock));
  const cache_scope scope;
  const auto texts = prompts(6);  // a b c d e f
  for (std::size_t i = 0; i < 3; ++i) cache.insert(scope, texts[i], answer_of(i));
  clock.advance(std::chrono::seconds(30));
  BOOST_TEST(hits(cache, scope, texts[0]));       // a is now more recent than b and c
  cache.insert(scope, texts[3], answer_of(3));    // b, the least recently used, leaves
  clock.advance(std::chrono::seconds(40));        // a and c have expired, d has not
  cache.insert(scope, texts[4], answer_of(4));    // an expired one leaves, not d
  cache.insert(scope, texts[5], answer_of(5));    // the other expired one leaves

  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(cache.bytes() == 3 * entry_size);
  BOOST_TEST(cache.statistics().evictions == 3u);
  for (std::size_t i : {0, 1, 2}) BOOST_TEST(!hits(cache, scope, texts[i]), "entry " << i << " left");
  for (std::size_t i : {3, 4, 5}) BOOST_TEST(hits(cache, scope, texts[i]), "entry " << i << " stays");
}

BOOST_AUTO_TEST_CASE(a_snapshot_round_trip_keeps_the_bytes) {
  const std::size_t max_bytes = 4 * entry_size;
  auto saved = make_cache(max_bytes);
  const cache_scope scope;
  const auto texts = prompts(6);
  for (std::size_t i = 0; i < texts.size(); ++i) saved.insert(scope, texts[i], answer_of(i));
  BOOST_TEST_REQUIRE(saved.bytes() == 4 * entry_size);

  const test::temporary_directory directory;
  BOOST_TEST_REQUIRE(!saved.save(directory / "semantic.snapshot"));
  auto loaded = cache_type::load(directory / "semantic.snapshot", {.max_bytes = max_bytes}, hashing_embedder(),
                                 static_threshold{0.9f});
  BOOST_TEST(loaded.size() == 4u);
  BOOST_TEST(loaded.bytes() == 4 * entry_size);
  BOOST_TEST(loaded.statistics().bytes == 4 * entry_size);
  BOOST_TEST(loaded.statistics().evictions == saved.statistics().evictions);

  // The loaded cache goes on keeping its bound, in the saved order.
  loaded.insert(scope, prompt(prompt_size, 50), answer_of(50));
  BOOST_TEST(loaded.size() == 4u);
  BOOST_TEST(loaded.bytes() == 4 * entry_size);
  BOOST_TEST(!hits(loaded, scope, texts[2]));
  BOOST_TEST(hits(loaded, scope, texts[3]));
}

BOOST_AUTO_TEST_CASE(a_snapshot_loads_down_to_a_smaller_bound) {
  auto saved = make_cache(std::size_t{1} << 20);
  const cache_scope scope;
  const auto texts = prompts(6);
  for (std::size_t i = 0; i < texts.size(); ++i) saved.insert(scope, texts[i], answer_of(i));
  BOOST_TEST(hits(saved, scope, texts[0]));  // now the most recently used
  const std::string bytes = saved.save_bytes();

  auto smaller = cache_type::load_bytes(bytes, "a test's snapshot", {.max_bytes = 4 * entry_size + entry_size / 2},
                                        hashing_embedder(), static_threshold{0.9f});
  BOOST_TEST(smaller.size() == 4u);
  BOOST_TEST(smaller.bytes() == 4 * entry_size);
  BOOST_TEST(smaller.statistics().evictions == saved.statistics().evictions);  // as saved
  for (std::size_t i : {1, 2}) BOOST_TEST(!hits(smaller, scope, texts[i]), "entry " << i << " left");
  for (std::size_t i : {0, 3, 4, 5}) BOOST_TEST(hits(smaller, scope, texts[i]), "entry " << i << " stays");

  // A bound smaller than one entry: none of them could have been stored.
  auto none = cache_type::load_bytes(bytes, "a test's snapshot", {.max_bytes = entry_size - 1}, hashing_embedder(),
                                     static_threshold{0.9f});
  BOOST_TEST(none.size() == 0u);
  BOOST_TEST(none.bytes() == 0u);
  BOOST_TEST(!hits(none, scope, texts[0]));
}

BOOST_AUTO_TEST_CASE(re_embedding_under_new_weights_keeps_the_bytes) {
  hashing_embedder::options_type learning;
  learning.first_refresh = 16;
  cache_type cache({.max_bytes = 12 * entry_size, .refresh_in_insert = false}, hashing_embedder(learning),
                   static_threshold{0.9f});
  const cache_scope scope;
  const auto texts = prompts(20);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], answer_of(i));
  BOOST_TEST(cache.bytes() == 12 * entry_size);
  BOOST_TEST_REQUIRE(cache.refresh());
  BOOST_TEST(cache.size() == 12u);
  BOOST_TEST(cache.bytes() == 12 * entry_size);
  BOOST_TEST(hits(cache, scope, texts[19]));
}

BOOST_AUTO_TEST_CASE(a_stream_of_900_kb_prompts_stays_within_max_bytes) {
  // Each request a new 900 KB prompt: a lookup that misses, then the insert
  // of its answer. Without a bound in bytes the cache kept every one.
  constexpr std::size_t max_bytes = std::size_t{64} << 20, prompt_bytes = 900 * 1024, requests = 300;
  basic_semantic_cache<std::string, seeded_embedder, default_index_factory, lru_eviction, static_threshold> cache(
      {.max_bytes = max_bytes}, seeded_embedder(), static_threshold{0.9f});
  const cache_scope scope;
  std::size_t misses = 0;
  for (std::size_t i = 0; i < requests; ++i) {
    const std::string text = prompt(prompt_bytes, 1000 + static_cast<unsigned>(i));
    auto found = cache.lookup(scope, text);
    if (found.outcome != lookup_outcome::miss) continue;
    ++misses;
    BOOST_TEST_REQUIRE(cache.insert(std::move(found), scope, text, answer_of(i)) != cache_type::rejected_entry);
    BOOST_TEST_REQUIRE(cache.bytes() <= max_bytes, "after request " << i);
  }
  BOOST_TEST(misses == requests);
  const std::size_t entry = entry_bytes(std::string(prompt_bytes, ' '), answer_of(0));
  const std::size_t kept = max_bytes / entry;
  BOOST_TEST(cache.size() == kept);
  BOOST_TEST(cache.bytes() == kept * entry);
  BOOST_TEST(cache.statistics().evictions == requests - kept);
  BOOST_TEST(hits(cache, scope, prompt(prompt_bytes, 1000 + requests - 1)));
}

BOOST_AUTO_TEST_SUITE_END()
