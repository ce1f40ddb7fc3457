// UTF-8 decoding never fails and never swallows a good character after a
// bad one; simple case folding works across scripts; character classes are
// right for every kind of character the tokenizer meets.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "llmgate/embed/unicode.hpp"

using namespace llmgate::unicode;

namespace {

constexpr char32_t fffd = replacement_character;

// Every code point of `bytes`, as decode_utf8 reads them one after another.
std::u32string decode_all(std::string_view bytes) {
  std::u32string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const auto [c, length] = decode_utf8(bytes, i);
    BOOST_TEST_REQUIRE(length >= 1u);
    out += c;
    i += length;
  }
  return out;
}

// Code points as numbers, which Boost.Test can print.
std::uint32_t fold(std::uint32_t c) { return simple_case_fold(c); }

std::u32string fold_all(std::u32string text) {
  for (auto& c : text) c = simple_case_fold(c);
  return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(unicode_test)

BOOST_AUTO_TEST_CASE(well_formed_sequences_of_every_length_decode) {
  BOOST_TEST((decode_all("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80") == U"a\u00E9\u20AC\U0001F600"));
  BOOST_TEST(decode_utf8("\xF0\x9F\x98\x80", 0).length == 4u);
  // The extremes of each length.
  BOOST_TEST((decode_all("\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF") ==
              U"\u007F\u0080\u07FF\u0800\uFFFF\U00010000\U0010FFFF"));
  // NUL is a character like any other.
  BOOST_TEST((decode_all(std::string_view("a\0b", 3)) == std::u32string(U"a\0b", 3)));
}

BOOST_AUTO_TEST_CASE(bytes_that_cannot_start_a_sequence_read_as_one_replacement_each) {
  BOOST_TEST((decode_all("\x80" "a") == std::u32string{fffd, U'a'}));       // lone continuation byte
  BOOST_TEST((decode_all("\xBF\xBF") == std::u32string{fffd, fffd}));
  BOOST_TEST((decode_all("\xFE\xFF" "b") == std::u32string{fffd, fffd, U'b'}));
  BOOST_TEST((decode_all("\xF5\x80") == std::u32string{fffd, fffd}));      // beyond U+10FFFF's lead bytes
}

BOOST_AUTO_TEST_CASE(overlong_forms_are_refused) {
  BOOST_TEST((decode_all("\xC0\xAF") == std::u32string{fffd, fffd}));      // '/' in two bytes
  BOOST_TEST((decode_all("\xC1\xBF") == std::u32string{fffd, fffd}));
  BOOST_TEST((decode_all("\xE0\x80\xAF") == std::u32string{fffd, fffd, fffd}));
  BOOST_TEST((decode_all("\xE0\x9F\xBF") == std::u32string{fffd, fffd, fffd}));  // U+07FF in three
  BOOST_TEST((decode_all("\xF0\x8F\xBF\xBF") == std::u32string{fffd, fffd, fffd, fffd}));
}

BOOST_AUTO_TEST_CASE(surrogates_and_values_above_the_last_code_point_are_refused) {
  BOOST_TEST((decode_all("\xED\xA0\x80") == std::u32string{fffd, fffd, fffd}));  // U+D800
  BOOST_TEST((decode_all("\xED\xBF\xBF") == std::u32string{fffd, fffd, fffd}));  // U+DFFF
  BOOST_TEST((decode_all("\xED\x9F\xBF") == U"\uD7FF"));                          // just below
  BOOST_TEST((decode_all("\xF4\x90\x80\x80") == std::u32string{fffd, fffd, fffd, fffd}));  // U+110000
}

BOOST_AUTO_TEST_CASE(a_sequence_cut_short_is_one_replacement_and_the_next_character_survives) {
  BOOST_TEST((decode_all("\xE2\x82") == std::u32string{fffd}));           // at the end of the text
  BOOST_TEST(decode_utf8("\xE2\x82", 0).length == 2u);
  BOOST_TEST((decode_all("\xE2\x82" "A") == std::u32string{fffd, U'A'}));
  BOOST_TEST((decode_all("\xF0\x9F\x98" "A") == std::u32string{fffd, U'A'}));
  BOOST_TEST((decode_all("\xF0\x9F" "\xC3\xA9") == std::u32string{fffd, U'\u00E9'}));
  BOOST_TEST((decode_all("\xC3") == std::u32string{fffd}));
}

BOOST_AUTO_TEST_CASE(append_utf8_writes_what_decode_utf8_reads) {
  std::string bytes;
  for (const char32_t c : std::u32string(U"a\u00E9\u20AC\U0001F600\U0010FFFF")) append_utf8(bytes, c);
  BOOST_TEST(bytes == "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
  std::string invalid;
  append_utf8(invalid, 0xD800);
  append_utf8(invalid, 0x110000);
  BOOST_TEST(invalid == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

BOOST_AUTO_TEST_CASE(case_folding_covers_latin_greek_cyrillic_armenian_and_full_width) {
  BOOST_TEST((fold_all(U"HELLO, World") == U"hello, world"));
  BOOST_TEST((fold_all(U"ÄÖÜ ÀÉÎÕ Ÿ") == U"äöü àéîõ ÿ"));            // Latin-1 Supplement, and Ÿ from Latin Ext-A
  BOOST_TEST((fold_all(U"ŁÓDŹ ŐŰ Ǆǅǆ ȘȚ") == U"łódź őű ǆǆǆ șț"));     // Latin Extended-A and -B
  BOOST_TEST((fold_all(U"ΣΑΣ Σοφός ΆΈΉ") == U"σασ σοφόσ άέή"));        // final sigma folds to σ too
  BOOST_TEST((fold_all(U"ПРИВЕТ, МИР Ёё Ђ") == U"привет, мир ёё ђ"));
  BOOST_TEST((fold_all(U"ԱԲԳ Հայաստան") == U"աբգ հայաստան"));
  BOOST_TEST((fold_all(U"ＡＢＣ ｘｙｚ") == U"ａｂｃ ｘｙｚ"));
}

BOOST_AUTO_TEST_CASE(case_folding_follows_the_special_mappings_of_casefolding_txt) {
  BOOST_TEST(fold(0x00B5u) == 0x03BCu);    // micro sign -> Greek mu
  BOOST_TEST(fold(0x017Fu) == 0x0073u);    // long s -> s
  BOOST_TEST(fold(0x212Au) == 0x006Bu);    // Kelvin sign -> k
  BOOST_TEST(fold(0x2126u) == 0x03C9u);    // Ohm sign -> omega
  BOOST_TEST(fold(0x1E9Eu) == 0x00DFu);    // capital sharp s -> ß (simple, not "ss")
  BOOST_TEST(fold(0x00DFu) == 0x00DFu);    // ß has only a full folding
  BOOST_TEST(fold(0x0130u) == 0x0130u);    // İ has only full and Turkic foldings
  BOOST_TEST(fold(0x1C90u) == 0x10D0u);    // Georgian Mtavruli
  BOOST_TEST(fold(0xAB70u) == 0x13A0u);    // Cherokee folds to the capitals
  BOOST_TEST(fold(0x10400u) == 0x10428u);  // Deseret, beyond the BMP
  BOOST_TEST(fold(0x0101u) == 0x0101u);    // already folded: unchanged
  BOOST_TEST(fold(0x0102u) == 0x0103u);    // in an every-other-one run...
  BOOST_TEST(fold(0x0103u) == 0x0103u);    // ...whose odd members stay
  BOOST_TEST(fold(0x4E2Du) == 0x4E2Du);    // 中: no case
  BOOST_TEST(fold(0xFFFDu) == 0xFFFDu);
}

BOOST_AUTO_TEST_CASE(classes_split_words_in_every_script) {
  for (const char32_t c : std::u32string(U"aZéЖաαا中あ\u0301ǅ"))
    BOOST_TEST((classify(c) == char_class::letter), "U+" << std::hex << static_cast<unsigned>(c));
  for (const char32_t c : std::u32string(U"09٣३²"))
    BOOST_TEST((classify(c) == char_class::digit), "U+" << std::hex << static_cast<unsigned>(c));
  for (const char32_t c : std::u32string(U" \t\n\u00A0\u2003\u3000\u2028"))
    BOOST_TEST((classify(c) == char_class::space), "U+" << std::hex << static_cast<unsigned>(c));
  for (const char32_t c : std::u32string(U"+#$%&*/<=>@|~€£×😀\uFFFD"))
    BOOST_TEST((classify(c) == char_class::symbol), "U+" << std::hex << static_cast<unsigned>(c));
  for (const char32_t c : std::u32string(U".,;:!?'\"()[]{}-_¿«»。、\u200B"))
    BOOST_TEST((classify(c) == char_class::punctuation), "U+" << std::hex << static_cast<unsigned>(c));
  BOOST_TEST((classify(U'\0') == char_class::punctuation));
}

BOOST_AUTO_TEST_CASE(ideographs_and_kana_are_told_apart_from_other_letters) {
  for (const char32_t c : std::u32string(U"中東京あカ\U00020000"))
    BOOST_TEST(is_ideograph(c), "U+" << std::hex << static_cast<unsigned>(c));
  for (const char32_t c : std::u32string(U"aЖ한ا"))
    BOOST_TEST(!is_ideograph(c), "U+" << std::hex << static_cast<unsigned>(c));
}

BOOST_AUTO_TEST_SUITE_END()
