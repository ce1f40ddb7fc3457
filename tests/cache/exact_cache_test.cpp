// exact_cache: hits and misses, normalisation, scope isolation, capacity in
// entries and bytes, lifetimes on a fake clock, collision safety, and
// snapshots that restore the same answers and refuse damaged files.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/eviction/ttl.hpp"
#include "llmgate/cache/exact_cache.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"
#include "fake_clock.hpp"

using namespace std::chrono_literals;
using llmgate::cache_scope;
using llmgate::errc;
using llmgate::exact_cache;
using llmgate::exact_cache_options;
using llmgate::insert_outcome;
using llmgate::test::fake_clock;

// A value type of the caller's own, measured and saved through the
// customisation point.
struct answer {
  std::string text;
  std::uint32_t tokens = 0;
  friend bool operator==(const answer&, const answer&) = default;
};

template <>
struct llmgate::cache_value_traits<answer> {
  static std::size_t bytes(const answer& a) { return sizeof(answer) + a.text.size(); }
  static void write(store::snapshot_writer& out, const answer& a) {
    out.write_string(a.text);
    out.write(a.tokens);
  }
  static answer read(store::snapshot_reader& in) {
    answer a;
    a.text = in.read_string();
    a.tokens = in.read<std::uint32_t>();
    return a;
  }
};

using llmgate::test::read_bytes;
using llmgate::test::write_bytes;

namespace {

const cache_scope acme({.tenant = "acme", .model = "gpt-4o-mini"});

// The llmgate::errc a load of `path` fails with, or nothing when it loads.
template <class Cache>
std::optional<errc> load_error(const std::filesystem::path& path) {
  try {
    Cache::load(path, {.shards = 1});
  } catch (const llmgate::error& e) {
    return static_cast<errc>(e.code().value());
  }
  return std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exact_cache_test)

BOOST_AUTO_TEST_CASE(answers_what_was_stored_and_counts_hits_and_misses) {
  exact_cache<std::string> cache;
  BOOST_TEST(!cache.find(acme, "What is the capital of France?"));
  BOOST_TEST((cache.insert(acme, "What is the capital of France?", "Paris") ==
              insert_outcome::inserted));
  BOOST_TEST(cache.find(acme, "What is the capital of France?").value() == "Paris");
  BOOST_TEST(!cache.find(acme, "What is the capital of Spain?"));
  BOOST_TEST((cache.insert(acme, "What is the capital of France?", "Paris, France") ==
              insert_outcome::replaced));
  BOOST_TEST(cache.find(acme, "What is the capital of France?").value() == "Paris, France");

  const auto stats = cache.statistics();
  BOOST_TEST(stats.hits == 2u);
  BOOST_TEST(stats.misses == 2u);
  BOOST_TEST(stats.insertions == 2u);
  BOOST_TEST(stats.entries == 1u);
  BOOST_TEST(cache.size() == 1u);
}

BOOST_AUTO_TEST_CASE(normalisation_makes_spacing_and_case_one_key) {
  exact_cache<std::string> cache;
  cache.insert(acme, "Hello   World", "hi");
  for (const char* same : {"hello world", "  HELLO\tworld\n", "Hello World"})
    BOOST_TEST(cache.find(acme, same).value_or("") == "hi", same);
  BOOST_TEST(!cache.find(acme, "helloworld"));
  BOOST_TEST(cache.make_key(acme, " A \r\n b ").text == "a b");
  // In every script, not only ASCII.
  cache.insert(acme, "ÉTÉ À ΑΘΗΝΑ", "summer");
  BOOST_TEST(cache.find(acme, "été à αθηνα").value_or("") == "summer");

  // Each half of the normalisation can be turned off.
  exact_cache<std::string> case_sensitive({}, {}, {.options = {.collapse_whitespace = true, .case_fold = false}});
  case_sensitive.insert(acme, "Hello   World", "hi");
  BOOST_TEST(case_sensitive.find(acme, "Hello World").has_value());
  BOOST_TEST(!case_sensitive.find(acme, "hello world"));
}

BOOST_AUTO_TEST_CASE(a_make_key_serves_the_lookup_and_the_insert_after_a_miss) {
  exact_cache<std::string> cache;
  auto key = cache.make_key(acme, "Summarise this.");
  BOOST_TEST(!cache.find(key));
  cache.insert(std::move(key), "Done.");
  BOOST_TEST(cache.find(acme, "summarise this.").value() == "Done.");
  BOOST_TEST(cache.erase(cache.make_key(acme, "SUMMARISE THIS.")));
  BOOST_TEST(!cache.erase(cache.make_key(acme, "SUMMARISE THIS.")));
  BOOST_TEST(!cache.find(acme, "Summarise this."));
}

BOOST_AUTO_TEST_CASE(no_lookup_ever_returns_another_scopes_answer) {
  // Many tenants, models, parameters and system prompts store different
  // answers to the same texts, in random order, some twice; every lookup of
  // a scope finds its own answer or nothing. Run twice: with room for all,
  // where every lookup must hit, and crowded, where evictions interleave.
  std::vector<cache_scope> scopes;
  for (int tenant = 0; tenant < 12; ++tenant)
    for (int model = 0; model < 4; ++model)
      scopes.emplace_back(llmgate::cache_scope_fields{
          .tenant = "tenant-" + std::to_string(tenant), .model = "model-" + std::to_string(model),
          .parameters = tenant % 3 ? "temperature=0;" : "temperature=0.7;",
          .system_prompt = model % 2 ? "Be brief." : ""});
  // Scopes apart in one field only.
  scopes.emplace_back(llmgate::cache_scope_fields{.tenant = "tenant-0", .model = "model-0",
                                                  .parameters = "temperature=0.7;",
                                                  .system_prompt = "Be kind."});
  std::vector<std::string> texts;
  for (int t = 0; t < 60; ++t) texts.push_back("question number " + std::to_string(t) + "?");
  const auto answer_of = [](std::size_t scope, std::size_t text) {
    return "answer " + std::to_string(scope) + "/" + std::to_string(text);
  };

  for (const std::size_t capacity : {std::size_t{100'000}, std::size_t{300}}) {
    exact_cache<std::string> cache({.max_entries = capacity, .shards = 8});
    std::mt19937_64 random(7);
    std::vector<bool> stored(scopes.size() * texts.size());
    std::size_t wrong = 0, hits = 0, lost = 0;
    for (int step = 0; step < 40'000; ++step) {
      const std::size_t s = random() % scopes.size(), t = random() % texts.size();
      if (random() % 2) {
        cache.insert(scopes[s], texts[t], answer_of(s, t));
        stored[s * texts.size() + t] = true;
      } else if (const auto found = cache.find(scopes[s], texts[t])) {
        ++hits;
        if (*found != answer_of(s, t)) ++wrong;
      } else if (stored[s * texts.size() + t]) {
        ++lost;
      }
    }
    BOOST_TEST(wrong == 0u);
    BOOST_TEST(hits > 0u);
    if (capacity > stored.size()) {
      BOOST_TEST(lost == 0u);  // with room for all, whatever was stored is found
      BOOST_TEST(cache.statistics().evictions == 0u);
    } else {
      BOOST_TEST(cache.size() <= capacity);
      BOOST_TEST(cache.statistics().evictions > 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_hash_collision_is_a_miss_never_another_answer) {
  exact_cache<std::string> cache;
  const auto original = cache.make_key(acme, "first request");
  cache.insert(original, "first answer");

  // A key with the same hash for another text, or another scope: what a
  // 128-bit collision would look like.
  auto other_text = original;
  other_text.text = "second request";
  auto other_scope = original;
  other_scope.scope = cache_scope({.tenant = "acme", .model = "other"}).hash();
  // Even a scope hash forged to match (xxh3 does not resist crafted
  // collisions) gets no further than the tenant, which is compared as text.
  auto other_tenant = original;
  other_tenant.tenant = "umbrella";
  BOOST_TEST(!cache.find(other_text));
  BOOST_TEST(!cache.find(other_scope));
  BOOST_TEST(!cache.find(other_tenant));
  BOOST_TEST(!cache.erase(other_text));
  BOOST_TEST(cache.find(original).value() == "first answer");

  // Storing under the colliding key replaces the entry; neither request can
  // then read the other's answer.
  BOOST_TEST((cache.insert(other_text, "second answer") == insert_outcome::replaced));
  BOOST_TEST(!cache.find(original));
  BOOST_TEST(cache.find(other_text).value() == "second answer");
}

BOOST_AUTO_TEST_CASE(capacity_in_entries_holds_and_the_policy_picks_the_victims) {
  exact_cache<int> cache({.max_entries = 4, .shards = 1});
  for (int i = 0; i < 4; ++i) cache.insert(acme, "q" + std::to_string(i), i);
  cache.find(acme, "q0");  // q0 becomes the most recently used
  cache.insert(acme, "q4", 4);
  cache.insert(acme, "q5", 5);
  BOOST_TEST(cache.size() == 4u);
  BOOST_TEST(!cache.find(acme, "q1"));
  BOOST_TEST(!cache.find(acme, "q2"));
  for (int kept : {0, 3, 4, 5}) BOOST_TEST(cache.find(acme, "q" + std::to_string(kept)).value() == kept);
  BOOST_TEST(cache.statistics().evictions == 2u);

  // Spread over shards, the total never exceeds the bound either.
  exact_cache<int> sharded({.max_entries = 10, .shards = 4});
  BOOST_TEST(sharded.options().shards == 4u);
  for (int i = 0; i < 1000; ++i) {
    sharded.insert(acme, std::to_string(i), i);
    BOOST_TEST_REQUIRE(sharded.size() <= 10u);
  }
  // Fewer entries than shards: shards shrink so each holds at least one.
  BOOST_TEST((exact_cache<int>({.max_entries = 3, .shards = 16}).options().shards == 2u));
}

BOOST_AUTO_TEST_CASE(capacity_in_bytes_holds_and_counts_key_and_value) {
  // Each entry: the tenant "acme", a 2-byte text and a string value of
  // sizeof(std::string) + 100 bytes.
  const std::size_t entry_bytes = 4 + 2 + sizeof(std::string) + 100;
  exact_cache<std::string> cache({.max_entries = 1000, .max_bytes = 3 * entry_bytes + 10, .shards = 1});
  for (int i = 10; i < 20; ++i) {
    cache.insert(acme, std::to_string(i), std::string(100, 'x'));
    BOOST_TEST_REQUIRE(cache.statistics().bytes <= 3 * entry_bytes + 10);
  }
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(cache.statistics().bytes == 3 * entry_bytes);
  BOOST_TEST(cache.find(acme, "19").has_value());
  BOOST_TEST(!cache.find(acme, "16").has_value());

  // A caller-given size replaces the traits' measure; one too large for the
  // cache is refused and leaves it as it was.
  BOOST_TEST((cache.insert(acme, "big", "small string", {.bytes = 3 * entry_bytes + 10}) ==
              insert_outcome::rejected));
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(cache.statistics().rejections == 1u);
  BOOST_TEST((cache.insert(acme, "ok", "s", {.bytes = 2 * entry_bytes}) == insert_outcome::inserted));
  BOOST_TEST(cache.size() == 2u);  // it took the room of two
  BOOST_TEST(cache.statistics().bytes == (4 + 2 + 2 * entry_bytes) + entry_bytes);
}

BOOST_AUTO_TEST_CASE(entries_expire_after_their_lifetime) {
  // The clock is a fake: waiting real time would make this slow and flaky.
  fake_clock clock;
  using cache_type = exact_cache<std::string, llmgate::ttl_eviction<fake_clock>>;
  cache_type cache({}, llmgate::ttl_eviction<fake_clock>(60s, llmgate::ttl_refresh::never, clock));
  cache.insert(acme, "a", "1");
  clock.advance(30s);
  cache.insert(acme, "b", "2");
  BOOST_TEST(cache.find(acme, "a").value() == "1");  // no refresh: still expires at 60 s
  clock.advance(30s);
  BOOST_TEST(!cache.find(acme, "a"));
  BOOST_TEST(cache.find(acme, "b").value() == "2");
  clock.advance(30s);
  BOOST_TEST(cache.purge_expired() == 1u);
  BOOST_TEST(cache.size() == 0u);
  const auto stats = cache.statistics();
  BOOST_TEST(stats.expirations == 2u);
  BOOST_TEST(stats.bytes == 0u);

  cache_type refreshed({}, llmgate::ttl_eviction<fake_clock>(60s, llmgate::ttl_refresh::on_hit, clock));
  refreshed.insert(acme, "a", "1");
  for (int i = 0; i < 5; ++i) {
    clock.advance(45s);
    BOOST_TEST(refreshed.find(acme, "a").has_value());  // each hit buys another 60 s
  }
  clock.advance(60s);
  BOOST_TEST(!refreshed.find(acme, "a"));
}

BOOST_AUTO_TEST_CASE(capacity_holds_while_lifetimes_are_set) {
  fake_clock clock;
  using policy = llmgate::expiring<llmgate::lfu_eviction, fake_clock>;
  exact_cache<int, policy> cache({.max_entries = 3, .max_bytes = 1000, .shards = 1},
                                 policy(1h, llmgate::ttl_refresh::never, clock));
  for (int i = 0; i < 3; ++i) cache.insert(acme, "q" + std::to_string(i), i);
  cache.find(acme, "q0");
  cache.find(acme, "q2");
  cache.insert(acme, "q3", 3);  // nothing has expired: LFU evicts q1
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(!cache.find(acme, "q1"));
  clock.advance(2h);
  cache.insert(acme, "q4", 4);  // everything else has expired and leaves first
  const auto stats = cache.statistics();
  BOOST_TEST(stats.evictions == 1u);
  BOOST_TEST(stats.expirations == 3u);
  BOOST_TEST(cache.size() == 1u);
  BOOST_TEST(cache.find(acme, "q4").value() == 4);
}

BOOST_AUTO_TEST_CASE(a_snapshot_restores_the_same_answers_order_and_statistics) {
  llmgate::test::temporary_directory dir;
  exact_cache<std::string> cache({.max_entries = 5, .shards = 1});
  for (int i = 0; i < 5; ++i) cache.insert(acme, "q" + std::to_string(i), "answer " + std::to_string(i));
  const cache_scope umbrella({.tenant = "umbrella"});
  cache.insert(umbrella, "q0", "umbrella's answer");  // evicts q0 of acme, the oldest
  cache.find(acme, "q1");                             // q1 becomes the most recent
  cache.find(acme, "missing");
  BOOST_TEST_REQUIRE(!cache.save(dir / "exact.llmgate"));

  auto restored = exact_cache<std::string>::load(dir / "exact.llmgate", {.max_entries = 5, .shards = 1});
  const auto before = cache.statistics(), after = restored.statistics();
  BOOST_TEST(after.hits == before.hits);
  BOOST_TEST(after.misses == before.misses);
  BOOST_TEST(after.insertions == before.insertions);
  BOOST_TEST(after.evictions == before.evictions);
  BOOST_TEST(after.entries == before.entries);
  BOOST_TEST(after.bytes == before.bytes);
  for (const char* text : {"q0", "q1", "q2", "q3", "q4", "missing"}) {
    BOOST_TEST((restored.find(acme, text) == cache.find(acme, text)), text);
    BOOST_TEST((restored.find(umbrella, text) == cache.find(umbrella, text)), text);
  }
  // The LRU order came back too: both evict the same entry next.
  cache.insert(acme, "new", "n");
  restored.insert(acme, "new", "n");
  for (const char* text : {"q1", "q2", "q3", "q4"})
    BOOST_TEST(restored.find(acme, text).has_value() == cache.find(acme, text).has_value(), text);
}

BOOST_AUTO_TEST_CASE(a_snapshot_restores_lfu_counts_and_custom_values) {
  llmgate::test::temporary_directory dir;
  using cache_type = exact_cache<answer, llmgate::lfu_eviction>;
  cache_type cache({.max_entries = 3, .shards = 1});
  cache.insert(acme, "a", {"alpha", 12});
  cache.insert(acme, "b", {"beta", 7});
  cache.insert(acme, "c", {"gamma", 3});
  for (int i = 0; i < 3; ++i) cache.find(acme, "a");
  cache.find(acme, "c");
  BOOST_TEST_REQUIRE(!cache.save(dir / "lfu.llmgate"));

  auto restored = cache_type::load(dir / "lfu.llmgate", {.max_entries = 3, .shards = 1});
  BOOST_TEST((restored.find(acme, "a").value() == answer{"alpha", 12}));
  // b has no hits, so it is the one to go, in the restored cache as well.
  restored.insert(acme, "d", {"delta", 1});
  BOOST_TEST(!restored.find(acme, "b"));
  BOOST_TEST(restored.find(acme, "c").has_value());

  exact_cache<double> numbers;
  numbers.insert(acme, "pi", 3.14159);
  BOOST_TEST_REQUIRE(!numbers.save(dir / "numbers.llmgate"));
  BOOST_TEST(exact_cache<double>::load(dir / "numbers.llmgate").find(acme, "PI").value() == 3.14159);
}

BOOST_AUTO_TEST_CASE(a_damaged_snapshot_is_refused) {
  llmgate::test::temporary_directory dir;
  using cache_type = exact_cache<std::string>;
  cache_type cache;
  for (int i = 0; i < 20; ++i) cache.insert(acme, "q" + std::to_string(i), "answer");
  const auto path = dir / "exact.llmgate";
  BOOST_TEST_REQUIRE(!cache.save(path));
  const std::string good = read_bytes(path);

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  write_bytes(path, flipped);
  BOOST_TEST((load_error<cache_type>(path) == errc::checksum_mismatch));

  write_bytes(path, good.substr(0, good.size() - 9));
  BOOST_TEST((load_error<cache_type>(path) == errc::truncated_file));

  BOOST_TEST((load_error<cache_type>(dir / "absent.llmgate") == errc::io_failure));

  // Another structure's snapshot.
  llmgate::store::snapshot_writer other({'F', 'L', 'A', 'T'}, 1);
  BOOST_TEST_REQUIRE(!other.commit(path));
  BOOST_TEST((load_error<cache_type>(path) == errc::wrong_kind_of_file));

  // A sound file whose content does not add up: an entry count larger than
  // the bytes that follow, and one request saved twice.
  const auto sealed = [&](std::uint64_t count, int entries) {
    llmgate::store::snapshot_writer out({'E', 'X', 'C', 'T'}, 1);
    for (int i = 0; i < 6; ++i) out.write(std::uint64_t{0});  // statistics
    out.write(std::uint64_t{1});                              // one shard section
    out.write(count);
    for (int i = 0; i < entries; ++i) {
      out.write(acme.hash().low);
      out.write(acme.hash().high);
      out.write_string(acme.tenant());
      out.write_string("same request");
      out.write(std::uint64_t{0});
      out.write(1.0);
      out.write(std::uint64_t{64});
      out.write_string("answer");
    }
    BOOST_TEST_REQUIRE(!out.commit(path));
  };
  sealed(1'000'000, 1);
  BOOST_TEST((load_error<cache_type>(path) == errc::corrupt_file));
  sealed(2, 2);
  BOOST_TEST((load_error<cache_type>(path) == errc::corrupt_file));
  sealed(1, 1);
  BOOST_TEST(!load_error<cache_type>(path));
}

BOOST_AUTO_TEST_SUITE_END()
