// The pair features: exact values on small pairs, symmetry, the guard's
// answers on prepared texts, and word_idf's fit, save and load.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "llmgate/cache/guard.hpp"
#include "llmgate/cache/pair_features.hpp"
#include "../file_bytes.hpp"
#include "../skip_test.hpp"
#include "../temporary_directory.hpp"

using llmgate::errc;
using llmgate::lexical_guard;
using llmgate::pair_featurizer;
using llmgate::prepared_text;
using llmgate::veto_reason;
using llmgate::word_idf;
namespace store = llmgate::store;

namespace {

constexpr std::size_t n = pair_featurizer::feature_count;
constexpr store::kind_tag kind = {'T', 'I', 'D', 'F'};

std::size_t index_of(std::string_view name) {
  for (std::size_t i = 0; i < n; ++i)
    if (pair_featurizer::feature_names[i] == name) return i;
  BOOST_FAIL("no feature named " << name);
  return n;
}

std::array<float, n> features_of(const pair_featurizer& featurizer, std::string_view a, std::string_view b,
                                 float similarity = 0.5f) {
  std::array<float, n> out{};
  featurizer.features(featurizer.prepare(a), featurizer.prepare(b), similarity, out);
  return out;
}

// Pairs the guard's own tests use, and a few more.
const std::vector<std::pair<std::string, std::string>> guard_pairs = {
    {"How do I reset my password?", "how can i reset my PASSWORD"},
    {"Minutes in 2 hours?", "How many minutes are there in 2 hours"},
    {"Is Rust better than Go?", "Is Rust better than Go for servers?"},
    {"I can't log in", "I cannot sign in"},
    {"How many minutes are in 2 hours?", "How many minutes are in 3 hours?"},
    {"What is 12 times 4?", "What is 12 times 4 plus 1?"},
    {"Wie viel sind ٣ Stunden?", "Wie viel sind 3 Stunden?"},
    {"Should I take ibuprofen with food?", "Should I not take ibuprofen with food?"},
    {"Kann ich das essen?", "Kann ich das nicht essen?"},
    {"Is Java faster than Python?", "Is Python faster than Java?"},
    {"Flights from Paris to London", "Flights from London to Paris"},
    {"Translate from English into French", "Translate from French into English"},
    {"Convert 5 km in 3 minutes to speed", "Convert 3 km in 5 minutes to speed"},
    {"python install pip how", "how install pip python"},
    {"", ""},
    {"?!", "C++ vs C#"},
    {"Why is the sky blue?", "Why isn't the sky blue?"},
};

std::filesystem::path save(const word_idf& idf, const llmgate::test::temporary_directory& dir, std::string name) {
  store::snapshot_writer out(kind, 1);
  idf.save_to(out);
  const auto path = dir / name;
  BOOST_TEST_REQUIRE(!out.commit(path));
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pair_features_test)

BOOST_AUTO_TEST_CASE(names_are_distinct_and_complete) {
  for (std::size_t i = 0; i < n; ++i) {
    BOOST_TEST(!pair_featurizer::feature_names[i].empty());
    for (std::size_t j = 0; j < i; ++j) BOOST_TEST(pair_featurizer::feature_names[i] != pair_featurizer::feature_names[j]);
  }
}

BOOST_AUTO_TEST_CASE(exact_values_of_a_small_pair) {
  // Without IDF every word weighs 1. Tokens: how do i learn java / how do
  // i learn python; "how", "do", "i" are function words; "Java" and
  // "Python" are capitalised inside a sentence, so named things.
  const pair_featurizer featurizer;
  const auto f = features_of(featurizer, "How do I learn Java?", "How do I learn Python?", 0.75f);
  const auto at = [&](std::string_view name) { return f[index_of(name)]; };
  BOOST_TEST(at("similarity") == 0.75f);
  BOOST_TEST(at("word_jaccard") == 4.0f / 6.0f);
  BOOST_TEST(at("word_overlap_min") == 4.0f / 5.0f);
  BOOST_TEST(at("word_overlap_max") == 4.0f / 5.0f);
  BOOST_TEST(at("token_jaccard") == 4.0f / 6.0f);
  BOOST_TEST(at("content_jaccard") == 1.0f / 3.0f);
  BOOST_TEST(at("content_overlap_min") == 1.0f / 2.0f);
  BOOST_TEST(at("idf_shared_share") == 8.0f / 10.0f);
  BOOST_TEST(at("idf_shared_max") == 1.0f);
  BOOST_TEST(at("idf_unshared_mass") == 2.0f);
  BOOST_TEST(at("idf_unshared_mass_min") == 1.0f);
  BOOST_TEST(at("idf_unshared_max") == 1.0f);
  BOOST_TEST(at("idf_unshared_max_min") == 1.0f);
  BOOST_TEST(at("unshared_words") == 2.0f);
  BOOST_TEST(at("unshared_words_min") == 1.0f);
  BOOST_TEST(at("unshared_content") == 2.0f);
  BOOST_TEST(at("tfidf_cosine") == 4.0f / 5.0f);
  BOOST_TEST(at("idf_mean") == 1.0f);
  BOOST_TEST(at("words_ratio") == 1.0f);
  BOOST_TEST(at("words_difference") == 0.0f);
  BOOST_TEST(at("chars_ratio") == 19.0f / 21.0f);  // "how do i learn java" / "how do i learn python"
  BOOST_TEST(at("chars_difference") == static_cast<float>(std::log1p(2.0)));
  BOOST_TEST(at("words_total") == static_cast<float>(std::log1p(10.0)));
  BOOST_TEST(at("first_word_equal") == 1.0f);
  BOOST_TEST(at("last_word_equal") == 0.0f);
  BOOST_TEST(at("question_words_equal") == 1.0f);
  BOOST_TEST(at("question_words_one_side") == 0.0f);
  BOOST_TEST(at("first_question_word_equal") == 1.0f);
  BOOST_TEST(at("lcs_words_ratio") == 4.0f / 5.0f);
  BOOST_TEST(at("common_run_ratio") == 4.0f / 5.0f);
  BOOST_TEST(at("prefix_ratio") == 4.0f / 5.0f);
  BOOST_TEST(at("suffix_ratio") == 0.0f);
  for (const auto name : {"numbers_equal", "numbers_differ", "numbers_one_side", "negation_differs", "order_swapped",
                          "guard_vetoes", "entities_shared"})
    BOOST_TEST(at(name) == 0.0f, name);
  BOOST_TEST(at("entities_unshared") == 2.0f);
  // Bit sets: strictly between nothing and everything shared.
  for (const auto name : {"bigram_jaccard", "char3_jaccard", "char5_jaccard"}) {
    BOOST_TEST(at(name) > 0.0f, name);
    BOOST_TEST(at(name) < 1.0f, name);
  }
}

BOOST_AUTO_TEST_CASE(question_words_order_and_entities) {
  const pair_featurizer featurizer;
  auto f = features_of(featurizer, "How can I increase my IQ?", "Can I increase my IQ?");
  BOOST_TEST(f[index_of("first_word_equal")] == 0.0f);
  BOOST_TEST(f[index_of("question_words_equal")] == 0.0f);
  BOOST_TEST(f[index_of("question_words_one_side")] == 1.0f);  // "how"
  BOOST_TEST(f[index_of("first_question_word_equal")] == 0.0f);
  BOOST_TEST(f[index_of("suffix_ratio")] == 1.0f);  // "can i increase my iq" ends both
  BOOST_TEST(f[index_of("lcs_words_ratio")] == 5.0f / 6.0f);
  BOOST_TEST(f[index_of("entities_shared")] == 1.0f);  // "IQ"; "Can" starts its sentence
  BOOST_TEST(f[index_of("entities_unshared")] == 0.0f);

  f = features_of(featurizer, "Is the mp3 player better than an iPod?", "is an iPod better than the MP3 player");
  BOOST_TEST(f[index_of("entities_shared")] == 2.0f);  // mp3 (letters and digits), ipod (capitalised)
  BOOST_TEST(f[index_of("entities_unshared")] == 0.0f);
  BOOST_TEST(f[index_of("order_swapped")] == 1.0f);
  BOOST_TEST(f[index_of("guard_vetoes")] == 1.0f);
  BOOST_TEST(f[index_of("word_jaccard")] == 1.0f);
}

BOOST_AUTO_TEST_CASE(numbers_and_negation) {
  const pair_featurizer featurizer;
  auto f = features_of(featurizer, "How many minutes are in 2 hours?", "How many minutes are in 3 hours?");
  BOOST_TEST(f[index_of("numbers_differ")] == 1.0f);
  BOOST_TEST(f[index_of("numbers_equal")] == 0.0f);
  BOOST_TEST(f[index_of("guard_vetoes")] == 1.0f);
  BOOST_TEST(f[index_of("order_swapped")] == 0.0f);

  f = features_of(featurizer, "Convert 5 km in 3 minutes to speed", "Convert 3 km in 5 minutes to speed");
  BOOST_TEST(f[index_of("numbers_equal")] == 1.0f);
  BOOST_TEST(f[index_of("order_swapped")] == 1.0f);

  f = features_of(featurizer, "What is 12 times 4?", "What is twelve times four?");
  BOOST_TEST(f[index_of("numbers_one_side")] == 1.0f);

  f = features_of(featurizer, "Should I take ibuprofen with food?", "Should I not take ibuprofen with food?");
  BOOST_TEST(f[index_of("negation_differs")] == 1.0f);
  BOOST_TEST(f[index_of("guard_vetoes")] == 1.0f);
  BOOST_TEST(f[index_of("idf_unshared_mass_min")] == 0.0f);  // all extra words are on one side
  BOOST_TEST(f[index_of("unshared_content")] == 1.0f);       // "not" is no function word here
}

BOOST_AUTO_TEST_CASE(a_text_against_itself_agrees_fully) {
  const pair_featurizer featurizer(word_idf::fit(std::vector<std::string>{"what is java", "what is rust"}));
  const auto f = features_of(featurizer, "What is Java, and is it like JavaScript?", "What is Java, and is it like JavaScript?");
  for (const auto name : {"word_jaccard", "word_overlap_min", "word_overlap_max", "token_jaccard", "content_jaccard",
                          "content_overlap_min", "idf_shared_share", "bigram_jaccard", "bigram_overlap_min",
                          "char3_jaccard", "char3_overlap_min", "char5_jaccard", "char5_overlap_min", "words_ratio",
                          "chars_ratio", "first_word_equal", "last_word_equal", "question_words_equal",
                          "first_question_word_equal", "lcs_words_ratio", "common_run_ratio", "prefix_ratio",
                          "suffix_ratio"})
    BOOST_TEST(f[index_of(name)] == 1.0f, name);
  BOOST_TEST(f[index_of("tfidf_cosine")] == 1.0f, boost::test_tools::tolerance(1e-6f));
  for (const auto name : {"idf_unshared_mass", "unshared_words", "unshared_content", "words_difference",
                          "chars_difference", "guard_vetoes", "entities_unshared"})
    BOOST_TEST(f[index_of(name)] == 0.0f, name);
  BOOST_TEST(f[index_of("entities_shared")] == 2.0f);  // Java, JavaScript
}

BOOST_AUTO_TEST_CASE(empty_texts_are_equal) {
  const pair_featurizer featurizer;
  const auto f = features_of(featurizer, "", "?!");
  for (const auto name : {"word_jaccard", "word_overlap_min", "tfidf_cosine", "words_ratio", "lcs_words_ratio",
                          "common_run_ratio", "prefix_ratio"})
    BOOST_TEST(f[index_of(name)] == 1.0f, name);
  for (const float v : f) BOOST_TEST(std::isfinite(v));
}

BOOST_AUTO_TEST_CASE(features_are_symmetric) {
  const pair_featurizer featurizer(word_idf::fit(std::vector<std::string>{"is java faster", "flights from paris"}));
  for (const auto& [a, b] : guard_pairs) {
    const auto ab = features_of(featurizer, a, b, 0.3f), ba = features_of(featurizer, b, a, 0.3f);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST(ab[i] == ba[i], a << " / " << b << ": " << pair_featurizer::feature_names[i]);
  }
}

BOOST_AUTO_TEST_CASE(reusing_a_prepared_text_gives_the_same_features) {
  const pair_featurizer featurizer;
  prepared_text reused;
  featurizer.prepare("A long first text, with 3 numbers 4 and 5, and Names In Capitals", reused);
  featurizer.prepare("short one", reused);
  const auto fresh = featurizer.prepare("short one");
  const auto other = featurizer.prepare("a short one?");
  std::array<float, n> x{}, y{};
  featurizer.features(reused, other, 0.1f, x);
  featurizer.features(fresh, other, 0.1f, y);
  BOOST_TEST(x == y);
}

BOOST_AUTO_TEST_CASE(guard_veto_is_lexical_guards_answer) {
  const pair_featurizer featurizer;
  const lexical_guard guard;
  for (const auto& [a, b] : guard_pairs) {
    const auto pa = featurizer.prepare(a), pb = featurizer.prepare(b);
    const veto_reason expected = guard.vetoes(a, b);
    BOOST_TEST((featurizer.guard_veto(pa, pb) == expected), a << " / " << b);
    std::array<float, n> f{};
    featurizer.features(pa, pb, 0.0f, f);
    BOOST_TEST((f[index_of("guard_vetoes")] == 1.0f) == (expected != veto_reason::none), a << " / " << b);
    BOOST_TEST((f[index_of("negation_differs")] == 1.0f) == (expected == veto_reason::negation_differs));
    BOOST_TEST((f[index_of("order_swapped")] == 1.0f) == (expected == veto_reason::order_swapped));
  }
  BOOST_TEST((guard.vetoes("Is Java faster than Python?", "Is Python faster than Java?") == veto_reason::order_swapped));
}

BOOST_AUTO_TEST_CASE(guard_veto_agrees_on_qqp_pairs) {
  const std::filesystem::path path = LLMGATE_SHARED_DATA_DIR "/qqp/pairs.dev.jsonl";
  if (!std::filesystem::exists(path))
    return llmgate::test::skip_test(path.string() + " is absent (QQP pairs live in ../shared/data)",
                                    llmgate::test::real_part::optional);
  std::ifstream in(path);
  const pair_featurizer featurizer;
  const lexical_guard guard;
  std::string line;
  std::size_t checked = 0, vetoed = 0;
  while (checked < 600 && std::getline(in, line)) {
    const auto pair = boost::json::parse(line).as_object();
    const std::string a(pair.at("a").as_string()), b(pair.at("b").as_string());
    const auto pa = featurizer.prepare(a), pb = featurizer.prepare(b);
    const veto_reason expected = guard.vetoes(a, b);
    BOOST_TEST((featurizer.guard_veto(pa, pb) == expected), a << " / " << b);
    std::array<float, n> f{};
    featurizer.features(pa, pb, 0.0f, f);
    BOOST_TEST((f[index_of("guard_vetoes")] == 1.0f) == (expected != veto_reason::none), a << " / " << b);
    vetoed += expected != veto_reason::none;
    ++checked;
  }
  BOOST_TEST(checked == 600u);
  BOOST_TEST(vetoed > 0u);  // the sample exercises the vetoes too
}

BOOST_AUTO_TEST_CASE(idf_of_a_toy_corpus) {
  // 4 texts; "cat" is in 3 (counted once per text, case-folded), "a" in 2,
  // "dog", "the", "sat" in 1; the "." is no word.
  const std::vector<std::string> texts = {"a cat", "a dog", "the cat sat.", "Cat cat"};
  const auto idf = word_idf::fit(texts);
  const auto expected = [](double df) { return static_cast<float>(std::log(5.0 / (1.0 + df)) + 1.0); };
  const auto of = [&](std::string_view word) { return idf.of(llmgate::detail::pair_word_hash(word)); };
  BOOST_TEST(idf.documents() == 4u);
  BOOST_TEST(idf.words() == 5u);
  BOOST_TEST(of("cat") == expected(3));
  BOOST_TEST(of("a") == expected(2));
  BOOST_TEST(of("dog") == expected(1));
  BOOST_TEST(of("sat") == expected(1));
  BOOST_TEST(of("horse") == expected(0));
  BOOST_TEST(of(".") == expected(0));

  const word_idf none;
  BOOST_TEST(none.of(llmgate::detail::pair_word_hash("cat")) == 1.0f);
  BOOST_TEST(word_idf::fit(std::vector<std::string>{}).of(42) == 1.0f);

  // The featurizer weighs words with it.
  const pair_featurizer featurizer(idf);
  const auto f = features_of(featurizer, "a cat", "a dog");
  BOOST_TEST(f[index_of("idf_unshared_mass")] == expected(3) + expected(1));
  BOOST_TEST(f[index_of("idf_unshared_max")] == expected(1));
  BOOST_TEST(f[index_of("idf_shared_max")] == expected(2));
  BOOST_TEST(f[index_of("idf_shared_share")] ==
             static_cast<float>(2.0 * expected(2) / ((expected(2) + expected(3)) + (expected(2) + expected(1)))));
}

BOOST_AUTO_TEST_CASE(words_meet_by_stem) {
  // "apples" and "apple" are one word to the IDF and the word features,
  // two to token_jaccard.
  const auto idf = word_idf::fit(std::vector<std::string>{"red apples", "an apple", "a pear"});
  std::string scratch;
  const auto stem_of = [&](std::string_view word) {
    return llmgate::detail::pair_stem_hash({word, llmgate::token_kind::word}, llmgate::detail::pair_word_hash(word),
                                           scratch);
  };
  BOOST_TEST(stem_of("apples") == stem_of("apple"));
  BOOST_TEST(stem_of("apple") == llmgate::detail::pair_word_hash("apple"));
  BOOST_TEST(idf.of(stem_of("apples")) == static_cast<float>(std::log(4.0 / 3.0) + 1.0));

  const pair_featurizer featurizer(idf);
  const auto f = features_of(featurizer, "I like apples", "I like apple");
  BOOST_TEST(f[index_of("word_jaccard")] == 1.0f);
  BOOST_TEST(f[index_of("token_jaccard")] == 2.0f / 4.0f);
  BOOST_TEST(f[index_of("unshared_words")] == 0.0f);
}

BOOST_AUTO_TEST_CASE(idf_save_and_load_round_trip) {
  const llmgate::test::temporary_directory dir;
  const std::vector<std::string> texts = {"a cat", "a dog", "the cat sat", "Cat cat", "Что такое кошка?"};
  const auto idf = word_idf::fit(texts);
  const auto path = save(idf, dir, "idf.bin");
  // Equal fits give equal bytes.
  BOOST_TEST(llmgate::test::read_bytes(save(word_idf::fit(texts), dir, "again.bin")) == llmgate::test::read_bytes(path));

  std::error_code ec;
  store::snapshot_reader in(path, kind, 1, ec);
  BOOST_TEST_REQUIRE(!ec);
  const auto loaded = word_idf::load_from(in);
  BOOST_TEST(!in.finish());
  BOOST_TEST(loaded.documents() == idf.documents());
  BOOST_TEST(loaded.words() == idf.words());
  for (const auto word : {"a", "cat", "dog", "the", "sat", "что", "кошка", "unseen"}) {
    const auto h = llmgate::detail::pair_word_hash(word);
    BOOST_TEST(loaded.of(h) == idf.of(h), word);
  }

  // An empty one round-trips too.
  const auto empty_path = save(word_idf(), dir, "empty.bin");
  store::snapshot_reader empty_in(empty_path, kind, 1, ec);
  BOOST_TEST_REQUIRE(!ec);
  BOOST_TEST(word_idf::load_from(empty_in).of(7) == 1.0f);
  BOOST_TEST(!empty_in.finish());
}

BOOST_AUTO_TEST_CASE(bad_content_is_refused) {
  const llmgate::test::temporary_directory dir;
  const auto load = [&](const auto& write) {
    store::snapshot_writer out(kind, 1);
    write(out);
    const auto path = dir / "bad.bin";
    BOOST_TEST_REQUIRE(!out.commit(path));
    std::error_code ec;
    store::snapshot_reader in(path, kind, 1, ec);
    BOOST_TEST_REQUIRE(!ec);
    (void)word_idf::load_from(in);
    return in.finish();
  };
  const auto corrupt = make_error_code(errc::corrupt_file);
  // More words than the bytes left could hold.
  BOOST_TEST(load([](auto& out) {
               out.write(std::uint64_t{10});
               out.write(std::uint64_t{1} << 60);
               out.write(std::uint64_t{5});
               out.write(std::uint32_t{1});
             }) == corrupt);
  // A document frequency above the document count, and one of 0.
  for (const std::uint32_t df : {11u, 0u})
    BOOST_TEST(load([df](auto& out) {
                 out.write(std::uint64_t{10});
                 out.write(std::uint64_t{1});
                 out.write(std::uint64_t{5});
                 out.write(df);
               }) == corrupt);
  // Hashes out of order (or repeated).
  BOOST_TEST(load([](auto& out) {
               out.write(std::uint64_t{10});
               out.write(std::uint64_t{2});
               for (int i = 0; i < 2; ++i) {
                 out.write(std::uint64_t{5});
                 out.write(std::uint32_t{1});
               }
             }) == corrupt);
  // Fewer entries than announced.
  BOOST_TEST(load([](auto& out) {
               out.write(std::uint64_t{10});
               out.write(std::uint64_t{2});
               out.write(std::uint64_t{5});
               out.write(std::uint32_t{1});
             }) == corrupt);

  // A cut file is refused by the snapshot layer before any content is read.
  const auto path = save(word_idf::fit(std::vector<std::string>{"a cat", "a dog"}), dir, "cut.bin");
  const std::string bytes = llmgate::test::read_bytes(path);
  llmgate::test::write_bytes(path, bytes.substr(0, bytes.size() - 7));
  std::error_code ec;
  store::snapshot_reader in(path, kind, 1, ec);
  BOOST_TEST((ec == make_error_code(errc::truncated_file)));
}

BOOST_AUTO_TEST_SUITE_END()
