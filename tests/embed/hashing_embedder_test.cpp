// hashing_embedder: unit vectors, determinism, the similarities a cache
// relies on (identical texts, paraphrases, numbers, word order), the IDF
// generations that keep stored vectors comparable, and save/load.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/index/flat_index.hpp"
#include "llmgate/simd/kernels.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"

using llmgate::errc;
using llmgate::hashing_embedder;
using llmgate::hashing_embedder_options;

using llmgate::test::read_bytes;
using llmgate::test::write_bytes;

namespace {

std::vector<float> embed(const hashing_embedder& e, std::string_view text) {
  std::vector<float> v(e.dimension());
  BOOST_TEST_REQUIRE(!e.embed(text, v));
  return v;
}

float cosine(const hashing_embedder& e, std::string_view a, std::string_view b) {
  const auto x = embed(e, a), y = embed(e, b);
  return llmgate::simd::dot(x.data(), y.data(), x.size());
}

// Made-up traffic: support questions, a few of them asked in other words.
const std::vector<std::string> traffic = {
    "How do I reset my router password?",
    "What is the best time to plant tomatoes?",
    "How can I learn to play the guitar quickly?",
    "What is the capital of Australia?",
    "Why is the sky blue during the day?",
    "How do I cancel my subscription?",
    "What are the side effects of caffeine?",
    "How long does it take to boil an egg?",
    "Which programming language should I learn first?",
    "How can I improve my credit score?",
    "What is the difference between a virus and a bacterium?",
    "How do I make sourdough bread at home?",
    "Is it safe to travel to Iceland in winter?",
    "How many planets are in the solar system?",
    "What is the best way to save money for a house?",
    "How can I stop my dog from barking at night?",
};

// Each text, then a paraphrase of it, then an unrelated question.
struct triple {
  std::string text, paraphrase, unrelated;
};
const std::vector<triple> triples = {
    {"How do I reset my router password?", "How can I reset the password of my router?",
     "What is the best time to plant tomatoes?"},
    {"How can I learn to play the guitar quickly?", "What is the fastest way to learn playing guitar?",
     "How do I cancel my subscription?"},
    {"How can I improve my credit score?", "What can I do to improve my credit scores?",
     "How many planets are in the solar system?"},
    {"How do I make sourdough bread at home?", "How to make sourdough bread at home",
     "Is it safe to travel to Iceland in winter?"},
};

hashing_embedder trained(hashing_embedder_options options = {}) {
  hashing_embedder e(options);
  for (const auto& text : traffic) e.observe(text);
  e.refresh();
  return e;
}

errc load_error(const std::filesystem::path& path) {
  try {
    hashing_embedder::load(path);
  } catch (const llmgate::error& e) {
    return static_cast<errc>(e.code().value());
  }
  return errc{};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hashing_embedder_test)

BOOST_AUTO_TEST_CASE(it_models_the_embedder_concepts) {
  static_assert(llmgate::Embedder<hashing_embedder>);
  static_assert(llmgate::LearningEmbedder<hashing_embedder>);
  BOOST_TEST(hashing_embedder().dimension() == 384u);
  BOOST_TEST(hashing_embedder({.dimension = 64}).dimension() == 64u);
}

BOOST_AUTO_TEST_CASE(every_text_gets_a_unit_vector) {
  const auto e = trained();
  const std::string long_text(20000, 'x');
  const std::vector<std::string> texts = {"How do I reset my router password?", "", "?!", "a", "我爱东京",
                                         "Привет, мир", "\xFF\xFE", "2", long_text};
  for (const auto& text : texts) {
    const auto v = embed(e, text);
    const float length = std::sqrt(llmgate::simd::dot(v.data(), v.data(), v.size()));
    BOOST_TEST(length == 1.0f, boost::test_tools::tolerance(1e-5f));
  }
}

BOOST_AUTO_TEST_CASE(a_wrong_output_size_is_an_error_and_leaves_the_output_alone) {
  const hashing_embedder e;
  std::vector<float> small(10, 7.0f);
  BOOST_TEST(e.embed("text", small) == errc::dimension_mismatch);
  BOOST_TEST(small == std::vector<float>(10, 7.0f));
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused) {
  BOOST_CHECK_THROW(hashing_embedder({.dimension = 0}), std::invalid_argument);
  BOOST_CHECK_THROW(hashing_embedder({.frequency_table_bits = 40}), std::invalid_argument);
  BOOST_CHECK_THROW(hashing_embedder({.word_weight = -1.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(hashing_embedder({.char_ngram_min = 4, .char_ngram_max = 3}), std::invalid_argument);
  BOOST_CHECK_THROW(hashing_embedder({.refresh_growth = 1.0}), std::invalid_argument);
  BOOST_CHECK_NO_THROW(hashing_embedder({.first_refresh = 0, .refresh_growth = 1.0}));
}

BOOST_AUTO_TEST_CASE(the_same_stream_gives_the_same_vectors) {
  const auto a = trained(), b = trained();
  for (const auto& text : traffic) {
    const auto x = embed(a, text);
    BOOST_TEST(x == embed(a, text));  // bit for bit, call after call
    BOOST_TEST(x == embed(b, text));  // and embedder after embedder
  }
}

// Vectors stored by a cache must stay comparable with new ones across
// versions of the library: these figures were computed before the embedder
// was last made faster. A checksum sum((i + 1) v[i]) and the largest
// component pin each vector; the tolerance only admits the rounding that
// differs between builds (FMA contraction, the SIMD kernels' order), far
// below what one feature more or less changes.
BOOST_AUTO_TEST_CASE(vectors_keep_their_values_across_versions) {
  struct pinned {
    bool trained;
    std::string_view text;
    double checksum;
    std::size_t largest;
    float value;
  };
  const pinned cases[] = {
      {false, "How do I reset my router password?", 297.437941, 216, 0.355838f},
      {false, "Hopping ponies agreed: 3.5 apples cost $1,000!", -117.156899, 161, -0.559657f},
      {false, "\u00DCn\u00EFc\u00F6d\u00E9 na\u00EFve CAF\u00C9 \u6771\u4EAC don't \U0001F389", -53.712809, 20, 0.304150f},
      {false, "???", 232.0, 231, 1.0f},
      {true, "How do I reset my router password?", 341.265313, 86, -0.342710f},
      {true, "Hopping ponies agreed: 3.5 apples cost $1,000!", -122.917045, 161, -0.563157f},
      {true, "\u00DCn\u00EFc\u00F6d\u00E9 na\u00EFve CAF\u00C9 \u6771\u4EAC don't \U0001F389", -50.602683, 20, 0.306263f},
      {true, "???", 232.0, 231, 1.0f},
  };
  const hashing_embedder fresh;
  const auto learned = trained();
  for (const auto& c : cases) {
    const auto v = embed(c.trained ? learned : fresh, c.text);
    double checksum = 0;
    std::size_t largest = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      checksum += static_cast<double>(i + 1) * v[i];
      if (std::fabs(v[i]) > std::fabs(v[largest])) largest = i;
    }
    BOOST_TEST_CONTEXT(c.text << (c.trained ? " (trained)" : "")) {
      BOOST_TEST(checksum == c.checksum, boost::test_tools::tolerance(1e-7));
      BOOST_TEST(largest == c.largest);
      BOOST_TEST(v[largest] == c.value, boost::test_tools::tolerance(1e-5f));
    }
  }
}

BOOST_AUTO_TEST_CASE(identical_texts_have_cosine_one_also_across_case_and_punctuation) {
  const auto e = trained();
  BOOST_TEST(cosine(e, "How do I reset my router?", "How do I reset my router?") ==
             1.0f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(cosine(e, "How do I reset my router?", "  how do i reset my ROUTER ") ==
             1.0f, boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(paraphrases_are_closer_than_unrelated_texts) {
  for (const bool learned : {false, true}) {
    const auto e = learned ? trained() : hashing_embedder();
    for (const auto& [text, paraphrase, unrelated] : triples) {
      const float close = cosine(e, text, paraphrase), far = cosine(e, text, unrelated);
      BOOST_TEST(close > far + 0.15f, text << " (learned " << learned << "): " << close << " vs " << far);
    }
  }
}

BOOST_AUTO_TEST_CASE(numbers_keep_texts_apart) {
  const auto e = trained();
  const float different = cosine(e, "I have 2 apples", "I have 3 apples");
  const float plural = cosine(e, "I have 2 apples", "I have 2 apple");
  BOOST_TEST(different < 0.8f);
  BOOST_TEST(plural > 0.95f);  // stemming: the same question
  BOOST_TEST(cosine(e, "Flights from 2019", "Flights from 2018") < 0.8f);
  BOOST_TEST(cosine(e, "Is 3.5 kg heavy?", "Is 3.6 kg heavy?") < 0.9f);
}

BOOST_AUTO_TEST_CASE(word_order_and_question_kind_lower_the_similarity) {
  const auto e = trained();
  BOOST_TEST(cosine(e, "Is Apple better than Samsung?", "Is Samsung better than Apple?") < 0.99f);
  BOOST_TEST(cosine(e, "How can I increase my IQ?", "Can I increase my IQ?") < 0.99f);
  BOOST_TEST(cosine(e, "What is C++?", "What is C#?") < 0.99f);
}

BOOST_AUTO_TEST_CASE(learning_turns_frequent_words_down) {
  hashing_embedder e;
  const float before = cosine(e, "the cat is on the mat", "the dog is on the sofa");
  for (int i = 0; i < 50; ++i) e.observe("the weather is on the news number " + std::to_string(i));
  e.observe("cat");
  e.observe("dog");
  BOOST_TEST(cosine(e, "the cat is on the mat", "the dog is on the sofa") == before);  // not yet
  e.refresh();
  BOOST_TEST(cosine(e, "the cat is on the mat", "the dog is on the sofa") < before - 0.2f);
}

BOOST_AUTO_TEST_CASE(vectors_change_only_at_a_refresh_which_starts_a_generation) {
  hashing_embedder e;
  BOOST_TEST(e.generation() == 0u);
  const auto first = embed(e, "How do I reset my router password?");
  for (const auto& text : traffic) e.observe(text);
  BOOST_TEST(e.documents_observed() == traffic.size());
  BOOST_TEST(embed(e, "How do I reset my router password?") == first);
  // Next weights embed on request, but embed() keeps the published ones
  // until they are published.
  const auto next = e.next_weights();
  BOOST_TEST(next->generation == 1u);
  std::vector<float> v(e.dimension());
  BOOST_TEST_REQUIRE(!e.embed("How do I reset my router password?", v, next));
  BOOST_TEST(v != first);
  BOOST_TEST(embed(e, "How do I reset my router password?") == first);
  e.publish(next);
  BOOST_TEST(e.generation() == 1u);
  BOOST_TEST(embed(e, "How do I reset my router password?") == v);
  BOOST_TEST(e.refresh() == 2u);
  BOOST_TEST(embed(e, "How do I reset my router password?") == v);  // nothing new was observed
}

BOOST_AUTO_TEST_CASE(a_refresh_is_due_at_first_refresh_and_then_whenever_the_documents_double) {
  hashing_embedder e({.first_refresh = 4, .refresh_growth = 2.0});
  const auto observe = [&](int n) {
    for (int i = 0; i < n; ++i) e.observe("text " + std::to_string(i));
  };
  BOOST_TEST(!e.refresh_due());
  observe(3);
  BOOST_TEST(!e.refresh_due());
  observe(1);
  BOOST_TEST(e.refresh_due());
  e.refresh();
  BOOST_TEST(!e.refresh_due());
  observe(3);  // 7 of the 8 due
  BOOST_TEST(!e.refresh_due());
  observe(1);
  BOOST_TEST(e.refresh_due());

  hashing_embedder manual({.first_refresh = 0});
  for (int i = 0; i < 100; ++i) manual.observe("text");
  BOOST_TEST(!manual.refresh_due());
}

BOOST_AUTO_TEST_CASE(save_and_load_give_back_the_same_embedder) {
  llmgate::test::temporary_directory dir;
  // A small table, in which features share counters, some beyond the
  // number of documents: still a sound file.
  auto original = trained({.dimension = 128, .frequency_table_bits = 8});
  original.observe("learned after the refresh, not yet published");
  BOOST_TEST_REQUIRE(!original.save(dir / "embedder.bin"));

  auto loaded = hashing_embedder::load(dir / "embedder.bin");
  BOOST_TEST((loaded.options() == original.options()));
  BOOST_TEST(loaded.generation() == original.generation());
  BOOST_TEST(loaded.documents_observed() == original.documents_observed());
  for (const auto& text : traffic) BOOST_TEST(embed(loaded, text) == embed(original, text));

  // The unpublished counts came back too: the next refresh agrees.
  original.refresh();
  loaded.refresh();
  for (const auto& text : traffic) BOOST_TEST(embed(loaded, text) == embed(original, text));
}

BOOST_AUTO_TEST_CASE(an_embedder_travels_inside_another_snapshot) {
  llmgate::test::temporary_directory dir;
  const auto original = trained({.dimension = 64, .frequency_table_bits = 10});
  constexpr llmgate::store::kind_tag kind = {'T', 'E', 'S', 'T'};
  llmgate::store::snapshot_writer out(kind, 1);
  out.write_string("before");
  original.save_to(out);
  out.write_string("after");
  BOOST_TEST_REQUIRE(!out.commit(dir / "composite.bin"));

  std::error_code ec;
  llmgate::store::snapshot_reader in(dir / "composite.bin", kind, 1, ec);
  BOOST_TEST_REQUIRE(!ec);
  BOOST_TEST(in.read_string() == "before");
  const auto loaded = hashing_embedder::load_from(in);
  BOOST_TEST(in.read_string() == "after");
  BOOST_TEST(!in.finish());
  BOOST_TEST(embed(loaded, traffic[0]) == embed(original, traffic[0]));
}

BOOST_AUTO_TEST_CASE(damaged_or_foreign_files_are_refused) {
  llmgate::test::temporary_directory dir;
  const auto path = dir / "embedder.bin";
  BOOST_TEST_REQUIRE(!trained({.frequency_table_bits = 10}).save(path));
  const std::string good = read_bytes(path);

  BOOST_TEST((load_error(dir / "missing.bin") == errc::io_failure));

  std::string altered = good;
  altered[good.size() / 2] ^= 0x01;
  write_bytes(path, altered);
  BOOST_TEST((load_error(path) == errc::checksum_mismatch));

  write_bytes(path, good.substr(0, good.size() - 100));
  BOOST_TEST((load_error(path) == errc::truncated_file));

  write_bytes(path, "not a snapshot at all");
  BOOST_TEST((load_error(path) == errc::not_a_llmgate_file));

  llmgate::flat_index<> index(4);
  BOOST_TEST_REQUIRE(!index.save(path));
  BOOST_TEST((load_error(path) == errc::wrong_kind_of_file));

  // A sound file whose content cannot be right: a 2^40-entry table.
  llmgate::store::snapshot_writer bad(hashing_embedder::file_kind, hashing_embedder::file_version);
  bad.write(std::uint64_t{384});
  bad.write(std::uint32_t{40});
  BOOST_TEST_REQUIRE(!bad.commit(path));
  BOOST_TEST((load_error(path) == errc::corrupt_file));

  write_bytes(path, good);  // and the original still loads
  BOOST_TEST((load_error(path) == errc{}));
}

BOOST_AUTO_TEST_SUITE_END()
