// stem_english_suffixes: Porter's step 1 on the examples of Porter's paper,
// and the words it must leave alone.
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

#include "llmgate/embed/stemmer.hpp"

namespace {

std::string stemmed(std::string word) {
  llmgate::stem_english_suffixes(word);
  return word;
}

void check(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [word, stem] : cases) BOOST_TEST(stemmed(word) == stem, word);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stemmer_test)

BOOST_AUTO_TEST_CASE(plurals) {
  check({{"caresses", "caress"}, {"ponies", "poni"}, {"caress", "caress"}, {"cats", "cat"},
         {"apples", "apple"}, {"questions", "question"}});
}

BOOST_AUTO_TEST_CASE(past_tenses_and_participles) {
  check({{"feed", "feed"}, {"agreed", "agree"}, {"plastered", "plaster"}, {"bled", "bled"},
         {"motoring", "motor"}, {"sing", "sing"}, {"conflated", "conflate"}, {"troubled", "trouble"},
         {"sized", "size"}, {"hopping", "hop"}, {"tanned", "tan"}, {"falling", "fall"},
         {"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"}, {"filing", "file"},
         {"making", "make"}, {"learning", "learn"}});
}

BOOST_AUTO_TEST_CASE(final_y_reads_i_as_ies_does) {
  check({{"happy", "happi"}, {"sky", "sky"}, {"study", "studi"}, {"studies", "studi"}});
}

BOOST_AUTO_TEST_CASE(short_words_and_latin_endings_keep_their_s) {
  check({{"gas", "gas"}, {"this", "this"}, {"virus", "virus"}, {"analysis", "analysis"},
         {"is", "is"}, {"a", "a"}, {"", ""}});
}

BOOST_AUTO_TEST_SUITE_END()
