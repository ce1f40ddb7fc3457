// tokenize: words, numbers, ideographs and symbols come out case-folded and
// split where a reader would split them.
#include <boost/test/unit_test.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "llmgate/embed/tokenizer.hpp"

using llmgate::token_kind;

namespace {

// Tokens as "text/kind" strings, easy to compare and to read in a failure.
std::vector<std::string> tokens_of(std::string_view text) {
  llmgate::token_list tokens;
  llmgate::tokenize(text, tokens);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    static constexpr const char* kinds[] = {"w", "n", "i", "s"};
    out.push_back(std::string(tokens[i].text) + "/" + kinds[static_cast<int>(tokens[i].kind)]);
  }
  return out;
}

using list = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(tokenizer_test)

BOOST_AUTO_TEST_CASE(words_are_folded_and_split_by_space_and_punctuation) {
  BOOST_TEST((tokens_of("Hello, World! How-are you?") == list{"hello/w", "world/w", "how/w", "are/w", "you/w"}));
  BOOST_TEST((tokens_of("ΣΑΣ Привет Straße") == list{"σασ/w", "привет/w", "straße/w"}));
  BOOST_TEST(tokens_of("").empty());
  BOOST_TEST(tokens_of(" ?! ... ").empty());
}

BOOST_AUTO_TEST_CASE(apostrophes_inside_words_are_dropped) {
  BOOST_TEST((tokens_of("Don't") == list{"dont/w"}));
  BOOST_TEST((tokens_of("it\u2019s") == list{"its/w"}));
  BOOST_TEST((tokens_of("'quoted'") == list{"quoted/w"}));
}

BOOST_AUTO_TEST_CASE(numbers_stay_whole_and_apart_from_letters) {
  BOOST_TEST((tokens_of("2 apples, 3.5 kg and 1,000 km.") ==
              list{"2/n", "apples/w", "3.5/n", "kg/w", "and/w", "1000/n", "km/w"}));
  BOOST_TEST((tokens_of("iPhone7s") == list{"iphone/w", "7/n", "s/w"}));
  BOOST_TEST((tokens_of("1, 2") == list{"1/n", "2/n"}));
  BOOST_TEST((tokens_of("٣٤") == list{"٣٤/n"}));
}

BOOST_AUTO_TEST_CASE(symbols_are_tokens_so_that_cpp_and_csharp_differ) {
  BOOST_TEST((tokens_of("C++") == list{"c/w", "+/s", "+/s"}));
  BOOST_TEST((tokens_of("C#") == list{"c/w", "#/s"}));
  BOOST_TEST((tokens_of("$5 or 5%") == list{"$/s", "5/n", "or/w", "5/n", "%/s"}));
  BOOST_TEST((tokens_of("I ❤ it") == list{"i/w", "❤/s", "it/w"}));
}

BOOST_AUTO_TEST_CASE(a_name_reads_the_same_quoted_in_backticks_or_quotes_or_not) {
  const list words{"like/w", "this/w"};
  for (const auto* written : {"`like.this`", "\"like.this\"", "like.this", "'like.this'", "Like.This", "like_this",
                              "``like.this``", "\u201clike.this\u201d"})
    BOOST_TEST((tokens_of(written) == words), written);
  BOOST_TEST((tokens_of("Use `iter_files()` on `x`") == list{"use/w", "iter/w", "files/w", "on/w", "x/w"}));
  BOOST_TEST((tokens_of("a`b") == list{"a/w", "b/w"}));
}

BOOST_AUTO_TEST_CASE(each_ideograph_is_a_token) {
  BOOST_TEST((tokens_of("我爱东京") == list{"我/i", "爱/i", "东/i", "京/i"}));
  BOOST_TEST((tokens_of("在Tokyo住") == list{"在/i", "tokyo/w", "住/i"}));
  BOOST_TEST((tokens_of("カタカナ") == list{"カ/i", "タ/i", "カ/i", "ナ/i"}));
}

BOOST_AUTO_TEST_CASE(combining_marks_stay_in_their_word_and_bad_bytes_become_symbols) {
  BOOST_TEST((tokens_of("cafe\u0301 ok") == list{"cafe\u0301/w", "ok/w"}));
  BOOST_TEST((tokens_of("ab\xFF" "cd") == list{"ab/w", "\xEF\xBF\xBD/s", "cd/w"}));
}

BOOST_AUTO_TEST_CASE(a_reused_list_holds_only_the_latest_text) {
  llmgate::token_list tokens;
  llmgate::tokenize("one two three", tokens);
  llmgate::tokenize("four", tokens);
  BOOST_TEST_REQUIRE(tokens.size() == 1u);
  BOOST_TEST(tokens[0].text == "four");
  BOOST_TEST((tokens[0].kind == token_kind::word));
}

BOOST_AUTO_TEST_SUITE_END()
