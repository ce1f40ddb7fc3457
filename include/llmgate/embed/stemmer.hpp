// stem_english_suffixes: light English stemming, Porter's step 1 (plurals,
// -ed, -ing), so that "apples" meets "apple" and "learning" meets "learn".
// Only the inflections: derivational suffixes (-ation, -ness...) change
// meaning too often to strip for a cache that must not confuse questions.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

namespace detail {

// Porter's consonant: not a vowel, and 'y' only after a vowel (or first).
inline bool porter_consonant(std::string_view w, std::size_t i) noexcept {
  switch (w[i]) {
    case 'a': case 'e': case 'i': case 'o': case 'u': return false;
    case 'y': return i == 0 || !porter_consonant(w, i - 1);
    default: return true;
  }
}

// Porter's measure m: the number of vowel-consonant sequences in w.
inline int porter_measure(std::string_view w) noexcept {
  int m = 0;
  bool previous_vowel = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const bool consonant = porter_consonant(w, i);
    if (consonant && previous_vowel) ++m;
    previous_vowel = !consonant;
  }
  return m;
}

inline bool porter_has_vowel(std::string_view w) noexcept {
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!porter_consonant(w, i)) return true;
  return false;
}

// Ends consonant-vowel-consonant, the last not w, x or y ("hop", not "snow").
inline bool porter_short_ending(std::string_view w) noexcept {
  const std::size_t n = w.size();
  return n >= 3 && porter_consonant(w, n - 3) && !porter_consonant(w, n - 2) &&
         porter_consonant(w, n - 1) && w[n - 1] != 'w' && w[n - 1] != 'x' && w[n - 1] != 'y';
}

}  // namespace detail

/// Strips English inflections from a lower-case ASCII word in place
/// (Porter's step 1: "caresses" -> "caress", "ponies" -> "poni", "agreed"
/// -> "agree", "hopping" -> "hop", "making" -> "make", "happy" -> "happi").
/// Words of three letters or fewer, and words ending in "us" or "is"
/// ("virus", "analysis", "this"), keep their final "s". Other words are
/// left alone: the caller applies this to ASCII words only.
inline void stem_english_suffixes(std::string& w) {
  const auto ends_with = [&](std::string_view suffix) { return std::string_view(w).ends_with(suffix); };
  const auto stem_before = [&](std::size_t suffix) { return std::string_view(w).substr(0, w.size() - suffix); };

  // Step 1a: plurals.
  if (ends_with("sses") || ends_with("ies")) {
    w.resize(w.size() - 2);
  } else if (w.size() > 3 && ends_with("s") && !ends_with("ss") && !ends_with("us") && !ends_with("is")) {
    w.pop_back();
  }

  // Step 1b: -eed, -ed, -ing.
  bool stripped = false;
  if (ends_with("eed")) {
    if (detail::porter_measure(stem_before(3)) > 0) w.pop_back();
  } else if (ends_with("ed") && detail::porter_has_vowel(stem_before(2))) {
    w.resize(w.size() - 2);
    stripped = true;
  } else if (ends_with("ing") && detail::porter_has_vowel(stem_before(3))) {
    w.resize(w.size() - 3);
    stripped = true;
  }
  if (stripped) {
    const std::size_t n = w.size();
    if (ends_with("at") || ends_with("bl") || ends_with("iz")) {
      w += 'e';
    } else if (n >= 2 && w[n - 1] == w[n - 2] && detail::porter_consonant(w, n - 1) &&
               w[n - 1] != 'l' && w[n - 1] != 's' && w[n - 1] != 'z') {
      w.pop_back();
    } else if (detail::porter_measure(w) == 1 && detail::porter_short_ending(w)) {
      w += 'e';
    }
  }

  // Step 1c: a final y after a vowel-bearing stem reads i, as "ies" does.
  if (w.size() > 1 && w.back() == 'y' && detail::porter_has_vowel(stem_before(1))) w.back() = 'i';
}

}  // namespace llmgate::inline v0
