// normalize_text: each option does what it says and nothing more, and the
// result is valid UTF-8 whatever the input.
#include <boost/test/unit_test.hpp>

#include <string>

#include "llmgate/embed/text.hpp"

using llmgate::normalize_options;
using llmgate::normalize_text;

BOOST_AUTO_TEST_SUITE(text_test)

BOOST_AUTO_TEST_CASE(the_default_collapses_white_space_and_keeps_everything_else) {
  BOOST_TEST(normalize_text("  What is   C++?\t\n ") == "What is C++?");
  BOOST_TEST(normalize_text("a\u00A0\u3000b") == "a b");  // no-break and ideographic spaces too
  BOOST_TEST(normalize_text("Straße ΣΑΣ") == "Straße ΣΑΣ");
  BOOST_TEST(normalize_text("") == "");
  BOOST_TEST(normalize_text(" \t ") == "");
}

BOOST_AUTO_TEST_CASE(without_collapsing_white_space_is_kept_as_it_is) {
  const normalize_options keep{.collapse_whitespace = false};
  BOOST_TEST(normalize_text(" a  b\t", keep) == " a  b\t");
}

BOOST_AUTO_TEST_CASE(case_folding_folds_every_script) {
  const normalize_options fold{.case_fold = true};
  BOOST_TEST(normalize_text("ÄÖÜ Straße", fold) == "äöü straße");
  BOOST_TEST(normalize_text("ΣΑΣ ПРИВЕТ ԱԲԳ", fold) == "σασ привет աբգ");
  BOOST_TEST(normalize_text("ＨＥＬＬＯ", fold) == "ｈｅｌｌｏ");
}

BOOST_AUTO_TEST_CASE(letters_and_digits_only_is_the_replays_question_identity) {
  const normalize_options identity{.case_fold = true, .letters_and_digits_only = true};
  BOOST_TEST(normalize_text("How can I increase my IQ?", identity) == "howcaniincreasemyiq");
  BOOST_TEST(normalize_text("how can i increase my iq", identity) == "howcaniincreasemyiq");
  BOOST_TEST(normalize_text("Is 2+2 = 4?", identity) == "is224");
  BOOST_TEST(normalize_text("C#", identity) == normalize_text("C++", identity));  // symbols go too
  BOOST_TEST(normalize_text("Où est l'hôtel ?", identity) == "oùestlhôtel");
  BOOST_TEST(normalize_text("東京は どこ？", identity) == "東京はどこ");
  BOOST_TEST(normalize_text("e\u0301", identity) == "e\u0301");  // combining marks belong to letters
}

BOOST_AUTO_TEST_CASE(invalid_utf8_becomes_the_replacement_character) {
  BOOST_TEST(normalize_text("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  BOOST_TEST(normalize_text("a\xE2\x82") == "a\xEF\xBF\xBD");
  BOOST_TEST(normalize_text("a\xFF" "b", {.letters_and_digits_only = true}) == "ab");
}

BOOST_AUTO_TEST_CASE(the_output_string_is_reused) {
  std::string out = "old content";
  normalize_text("  New  text ", {.case_fold = true}, out);
  BOOST_TEST(out == "new text");
  const void* buffer = out.data();
  normalize_text("short", {}, out);
  BOOST_TEST(out == "short");
  BOOST_TEST(static_cast<const void*>(out.data()) == buffer);
}

BOOST_AUTO_TEST_SUITE_END()
