// normalize_text: the canonical form of a request that the exact cache keys
// on, and that the replay uses to tell when two questions are the same
// question (case-folded, letters and digits only).
#pragma once

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
/// then drops.
inline void normalize_text(std::string_view text, const normalize_options& options, std::string& out) {
  out.clear();
  out.reserve(text.size());
  bool space_pending = false;  // a collapsed run of white space waits for the next kept character
  for (std::size_t position = 0; position < text.size();) {
    const auto [c, length] = unicode::decode_utf8(text, position);
    position += length;
    const auto kind = unicode::classify(c);
    if (options.letters_and_digits_only && kind != unicode::char_class::letter &&
        kind != unicode::char_class::digit)
      continue;
    if (options.collapse_whitespace && kind == unicode::char_class::space) {
      space_pending = !out.empty();
      continue;
    }
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
