// Semantic cache snapshots: a loaded cache answers, learns and grows exactly
// as the saved one, and damaged files are refused with the reason.
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <vector>

#include "llmgate/cache/eviction/lfu.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"
#include "../test_texts.hpp"

using namespace llmgate;
using llmgate::test::read_bytes;
using llmgate::test::write_bytes;

namespace {

// Every policy that keeps state: the learning embedder, the adaptive
// threshold, LFU's counts, HNSW's graph.
using cache_type = basic_semantic_cache<std::string, hashing_embedder, default_index_factory, lfu_eviction,
                                        adaptive_threshold>;

// Below what fill() stores, so that the saved cache has evicted.
constexpr std::size_t capacity = 100;

constexpr adaptive_threshold_options threshold_options{.start_threshold = 0.9f, .min_feedback = 5};

cache_type make_cache() {
  hashing_embedder::options_type embedder;
  embedder.first_refresh = 16;  // the weights are learned (and saved) within this test's traffic
  return cache_type({.max_entries = capacity}, hashing_embedder(embedder), adaptive_threshold(threshold_options));
}

std::string question(int topic, int variant) {
  static const char* const subjects[] = {"my password", "the invoice", "a refund", "the VPN", "my laptop",
                                         "the office wifi", "an expense report", "the holiday calendar"};
  static const char* const forms[] = {"How do I reset {}?", "how can I reset {} please", "What do I do about {}?",
                                      "Who handles {} for team {}?"};
  std::string text = forms[variant % 4];
  text.replace(text.find("{}"), 2, subjects[topic % 8]);
  if (const auto team = text.find("{}"); team != std::string::npos) text.replace(team, 2, std::to_string(topic));
  return text;
}

const cache_scope scope_of(int i) { return cache_scope({.tenant = "tenant-" + std::to_string(i % 3)}); }

// A cache that has seen traffic: inserts past its capacity (evictions,
// reused handles), hits, and feedback both ways.
void fill(cache_type& cache) {
  for (int i = 0; i < 150; ++i) {
    const auto found = cache.lookup(scope_of(i), question(i, i / 7));
    if (found.outcome == lookup_outcome::miss) {
      cache.insert(scope_of(i), question(i, i / 7), "answer " + std::to_string(i % 40),
                   {.prompt_tokens = 10, .completion_tokens = std::uint64_t(i), .usd = 0.001 * i});
    } else {
      cache.feedback(found, i % 5 != 0);
    }
  }
}

void same_lookup(const semantic_lookup<std::string>& a, const semantic_lookup<std::string>& b) {
  BOOST_TEST((a.outcome == b.outcome));
  BOOST_TEST((a.answer == b.answer));
  BOOST_TEST(a.similarity == b.similarity);
  BOOST_TEST(a.entry == b.entry);
  BOOST_TEST(a.entry_serial == b.entry_serial);
  BOOST_TEST(a.vetoes == b.vetoes);
}

std::optional<errc> load_error(const std::filesystem::path& path) {
  try {
    cache_type::load(path, {.max_entries = capacity}, hashing_embedder(), adaptive_threshold(threshold_options));
  } catch (const llmgate::error& e) {
    return static_cast<errc>(e.code().value());
  }
  return std::nullopt;
}

// The file with its payload replaced and sealed again with a valid
// checksum, to reach the checks on content behind the checksum.
void reseal(const std::filesystem::path& path, const std::string& payload) {
  store::snapshot_writer out({'S', 'E', 'M', 'C'}, 2);  // the format version save() writes
  out.write_array(std::span<const char>(payload));
  BOOST_TEST_REQUIRE(!out.commit(path));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semantic_cache_snapshot_test)

BOOST_AUTO_TEST_CASE(a_loaded_cache_answers_learns_and_grows_as_the_saved_one) {
  llmgate::test::temporary_directory dir;
  auto saved = make_cache();
  fill(saved);
  BOOST_TEST_REQUIRE(saved.embedder().generation() > 0u);
  BOOST_TEST_REQUIRE(saved.statistics().evictions > 0u);
  const auto path = dir / "semantic.llmgate";
  BOOST_TEST_REQUIRE(!saved.save(path));

  auto loaded = cache_type::load(path, {.max_entries = capacity}, hashing_embedder(), adaptive_threshold(threshold_options));
  BOOST_TEST(loaded.size() == saved.size());
  BOOST_TEST(loaded.embedder().generation() == saved.embedder().generation());
  BOOST_TEST(loaded.threshold_policy().threshold() == saved.threshold_policy().threshold());
  const auto before = saved.statistics(), after = loaded.statistics();
  BOOST_TEST(after.lookups == before.lookups);
  BOOST_TEST(after.hits == before.hits);
  BOOST_TEST(after.evictions == before.evictions);
  BOOST_TEST(after.wrong_reports == before.wrong_reports);
  BOOST_TEST(after.usd_saved == before.usd_saved);
  BOOST_TEST(after.lookup_p99 == before.lookup_p99);

  // The same traffic again through both: every lookup, feedback, insert and
  // eviction (LFU counts, reused handles, refreshes) must come out the same.
  for (int i = 0; i < 200; ++i) {
    const auto scope = scope_of(i + 1);
    const std::string text = question(i * 3 + 1, i / 5);
    const auto a = saved.lookup(scope, text), b = loaded.lookup(scope, text);
    same_lookup(a, b);
    if (a.outcome == lookup_outcome::miss) {
      BOOST_TEST(saved.insert(scope, text, "fresh " + std::to_string(i)) ==
                 loaded.insert(scope, text, "fresh " + std::to_string(i)));
    } else {
      saved.feedback(a, i % 3 != 0);
      loaded.feedback(b, i % 3 != 0);
    }
  }
  const auto replayed = saved.statistics();
  BOOST_TEST_REQUIRE(replayed.hits > before.hits);  // the traffic did reach stored answers
  BOOST_TEST_REQUIRE(replayed.evictions > before.evictions);
  BOOST_TEST(loaded.statistics().hits == replayed.hits);
  BOOST_TEST(loaded.statistics().evictions == replayed.evictions);
  BOOST_TEST(loaded.embedder().generation() == saved.embedder().generation());
}

BOOST_AUTO_TEST_CASE(a_damaged_snapshot_is_refused_with_the_reason) {
  llmgate::test::temporary_directory dir;
  auto cache = make_cache();
  fill(cache);
  const auto path = dir / "semantic.llmgate";
  BOOST_TEST_REQUIRE(!cache.save(path));
  const std::string good = read_bytes(path);
  BOOST_TEST_REQUIRE(!load_error(path));

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  write_bytes(path, flipped);
  BOOST_TEST((load_error(path) == errc::checksum_mismatch));

  write_bytes(path, good.substr(0, good.size() - 1));
  BOOST_TEST((load_error(path) == errc::truncated_file));

  BOOST_TEST((load_error(dir / "absent.llmgate") == errc::io_failure));

  store::snapshot_writer other({'E', 'X', 'C', 'T'}, 1);
  BOOST_TEST_REQUIRE(!other.commit(path));
  BOOST_TEST((load_error(path) == errc::wrong_kind_of_file));

  // Sealed files whose content does not add up: one byte short, one byte
  // too many, and the entry table cut off.
  const std::size_t header = store::detail::header_size, checksum = 4;
  const std::string payload = good.substr(header, good.size() - header - checksum);
  reseal(path, payload);
  BOOST_TEST(!load_error(path));
  reseal(path, payload.substr(0, payload.size() - 1));
  BOOST_TEST((load_error(path) == errc::corrupt_file));
  reseal(path, payload + '\0');
  BOOST_TEST((load_error(path) == errc::corrupt_file));
  reseal(path, payload.substr(0, payload.size() / 2));
  BOOST_TEST((load_error(path) == errc::corrupt_file));
}

BOOST_AUTO_TEST_CASE(a_loaded_cache_searches_as_wide_as_its_options_say) {
  // A sparse graph (m 4, ef_construction 8) over texts of random words, so
  // that how widely a lookup searches decides how many texts find
  // themselves. The file keeps its graph; the search breadth is the
  // loading index factory's.
  using plain_cache = basic_semantic_cache<std::string>;
  hashing_embedder::options_type fixed;
  fixed.first_refresh = 0;  // no re-weighting: only the breadth differs
  const auto graphs = [](std::size_t ef_search) {
    return default_index_factory{{.m = 4, .ef_construction = 8, .ef_search = ef_search}};
  };
  plain_cache cache({}, hashing_embedder(fixed), static_threshold{0.999f}, {}, {}, {}, graphs(64));
  const cache_scope scope;
  const auto texts = llmgate::test::random_word_texts(2000, 11);
  for (std::size_t i = 0; i < texts.size(); ++i) cache.insert(scope, texts[i], std::to_string(i));
  llmgate::test::temporary_directory directory;
  BOOST_TEST_REQUIRE(!cache.save(directory / "cache"));
  const auto found_with = [&](std::size_t ef_search) {
    auto loaded = plain_cache::load(directory / "cache", {}, hashing_embedder(fixed), static_threshold{0.999f}, {},
                                    {}, {}, graphs(ef_search));
    std::size_t found = 0;
    for (const auto& text : texts) found += loaded.lookup(scope, text).outcome == lookup_outcome::hit;
    return found;
  };
  const std::size_t narrow = found_with(1), wide = found_with(64);
  BOOST_TEST(wide > narrow + narrow / 2, "ef_search 1: " << narrow << " found, 64: " << wide);
}

BOOST_AUTO_TEST_SUITE_END()
