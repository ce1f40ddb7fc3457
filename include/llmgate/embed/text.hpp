// normalize_text: the canonical form of a request that the exact cache keys
// on, and that the replay uses to tell when two questions are the same
// question (case-folded, letters and digits only).
#pragma once

#include <algorithm>    // std::all_of
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/embed/unicode.hpp"

namespace llmgate::inline v0 {

/// What normalize_text changes. The defaults only remove differences that
/// never change a request's meaning (white space); case folding is opt-in
/// because case can matter (code, acronyms).
struct normalize_options {
  /// Trims both ends and turns every run of white space into one ' '.
  bool collapse_whitespace = true;
  /// Unicode simple case folding, in every script ("ÄΣЖＡ" reads "äσжａ").
  bool case_fold = false;
  /// Drops every character that is not a letter or a digit, white space
  /// included (so collapse_whitespace then has nothing left to do).
  bool letters_and_digits_only = false;
};

/// Writes the normal form of `text` into `out` (replacing its content and
/// reusing its memory, so a caller that keeps `out` allocates nothing in
/// steady state). The result is always valid UTF-8: bytes that are not are
/// read as U+FFFD (see unicode::decode_utf8), which letters_and_digits_only
/// then drops. ASCII text takes one pass without decoding; text in other
/// scripts costs a few times more (figures in the commit messages).
inline void normalize_text(std::string_view text, const normalize_options& options, std::string& out) {
  using unicode::char_class;
  // What becomes of one character; returns false for a character dropped.
  // A collapsed run of white space waits in `space_pending` for the next
  // kept character, so that none is left at either end.
  bool space_pending = false;
  const auto keep = [&](char_class kind, bool output_empty) {
    if (options.letters_and_digits_only && kind != char_class::letter && kind != char_class::digit) return false;
    if (options.collapse_whitespace && kind == char_class::space) {
      space_pending = !output_empty;
      return false;
    }
    return true;
  };

  // ASCII text, the common case, never grows: it is written in place
  // without decoding or bounds checks.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    out.resize(text.size());
    char* const begin = out.data();
    char* end = begin;
    for (const char c : text) {
      if (!keep(unicode::classify(static_cast<unsigned char>(c)), end == begin)) continue;
      if (space_pending) *end++ = ' ';
      space_pending = false;
      *end++ = options.case_fold && c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
    }
    out.resize(static_cast<std::size_t>(end - begin));
    return;
  }

  out.clear();
  out.reserve(text.size());
  for (std::size_t position = 0; position < text.size();) {
    const auto [c, length] = unicode::decode_utf8(text, position);
    position += length;
    if (!keep(unicode::classify(c), out.empty())) continue;
    if (space_pending) out += ' ';
    space_pending = false;
    unicode::append_utf8(out, options.case_fold ? unicode::simple_case_fold(c) : c);
  }
}

/// The normal form of `text` as a new string.
inline std::string normalize_text(std::string_view text, const normalize_options& options = {}) {
  std::string out;
  normalize_text(text, options, out);
  return out;
}

}  // namespace llmgate::inline v0
