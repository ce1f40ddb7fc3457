// The Unicode the text handling needs, without ICU: UTF-8 decoding that
// never fails (bad bytes become U+FFFD), simple case folding, and a
// character class per code point good enough to split words.
//
// Why no ICU or Boost.Locale: both need compiled libraries, and llmgate is
// header-only. The tables behind these functions come from the Unicode
// Character Database (see detail/unicode_tables.hpp); they cover every
// script, not only Latin.
#pragma once

#include <algorithm>    // std::upper_bound
#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::int32_t
#include <iterator>     // std::prev, std::end
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/embed/detail/unicode_tables.hpp"

namespace llmgate::inline v0::unicode {

/// What invalid UTF-8 decodes to.
inline constexpr char32_t replacement_character = 0xFFFD;

/// One code point read from UTF-8 and how many bytes it took (at least 1).
struct decoded {
  char32_t code_point;
  std::size_t length;
};

/// Reads the code point that starts at `text[position]` (which must be
/// inside `text`). Never fails: a byte that cannot start a sequence, an
/// overlong form, a surrogate, a value above U+10FFFF or a sequence cut
/// short reads as U+FFFD, consuming the longest prefix that could still
/// have been valid ("maximal subpart", as the Unicode standard and the
/// WHATWG decoder do), so that the next character is never swallowed.
constexpr decoded decode_utf8(std::string_view text, std::size_t position) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[position + i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {lead, 1};

  std::size_t length;
  char32_t value;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // shorter forms are overlong
    if (lead == 0xED) high = 0x9F;  // D800..DFFF are surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return {replacement_character, 1};  // a continuation byte, C0, C1 or F5..FF
  }
  for (std::size_t i = 1; i < length; ++i) {
    if (position + i >= text.size()) return {replacement_character, i};
    const unsigned char next = byte(i);
    if (next < low || next > high) return {replacement_character, i};
    low = 0x80, high = 0xBF;
    value = (value << 6) | (next & 0x3F);
  }
  return {value, length};
}

/// Appends `c` to `out` as UTF-8; surrogates and values above U+10FFFF,
/// which no decoder returns, become U+FFFD.
inline void append_utf8(std::string& out, char32_t c) {
  if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = replacement_character;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

/// Unicode simple case folding (CaseFolding.txt, statuses C and S): the
/// one-code-point mapping that makes caseless comparison work in every
/// script ("Σ" and "ς" both fold to "σ", "Ä" to "ä", "Ａ" to "ａ"). The
/// full foldings that change length ("ß" to "ss") are left out so that
/// folding never moves text around.
constexpr char32_t simple_case_fold(char32_t c) noexcept {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  const auto& runs = detail::case_fold_runs;
  const auto after = std::upper_bound(std::begin(runs), std::end(runs), c,
                                      [](char32_t x, const detail::case_fold_run& run) { return x < run.first; });
  if (after == std::begin(runs)) return c;
  const auto& run = *std::prev(after);
  const char32_t offset = c - run.first;
  if (offset % run.stride != 0 || offset / run.stride >= run.count) return c;
  return static_cast<char32_t>(static_cast<std::int32_t>(c) + run.delta);
}

/// What a code point is for splitting text into words.
enum class char_class : std::uint8_t {
  letter,       ///< letters of every script, combining marks, letter numbers
  digit,        ///< decimal digits of every script and other numerals (², ½)
  space,        ///< white space and separators
  symbol,       ///< currency, maths, emoji, and ASCII #$%&*+/<=>@\^`|~
  punctuation,  ///< punctuation, control and format characters
};

namespace detail {

constexpr char_class classify_by_runs(char32_t c) noexcept {
  const auto& runs = class_runs;
  const auto after = std::upper_bound(std::begin(runs), std::end(runs), c,
                                      [](char32_t x, const class_run& run) { return x < run.first; });
  return static_cast<char_class>(std::prev(after)->kind);
}

// Most text is mostly ASCII: its classes are looked up, not searched for.
inline constexpr auto ascii_classes = [] {
  std::array<char_class, 128> classes{};
  for (char32_t c = 0; c < 128; ++c) classes[c] = classify_by_runs(c);
  return classes;
}();

}  // namespace detail

/// The class of `c` (Unicode 14 general categories; unassigned code points
/// take the class of the assigned ones just before them).
constexpr char_class classify(char32_t c) noexcept {
  return c < 0x80 ? detail::ascii_classes[c] : detail::classify_by_runs(c);
}

/// True for the characters of scripts written without spaces between words
/// (CJK ideographs, Hiragana, Katakana): each one is a word of its own.
constexpr bool is_ideograph(char32_t c) noexcept {
  return (c >= 0x3040 && c <= 0x30FF) ||    // Hiragana, Katakana
         (c >= 0x31F0 && c <= 0x31FF) ||    // Katakana phonetic extensions
         (c >= 0x3400 && c <= 0x4DBF) ||    // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||    // CJK unified ideographs
         (c >= 0xF900 && c <= 0xFAFF) ||    // CJK compatibility ideographs
         (c >= 0xFF66 && c <= 0xFF9D) ||    // half-width Katakana
         (c >= 0x20000 && c <= 0x3134F);    // CJK extensions B to G
}

}  // namespace llmgate::inline v0::unicode
