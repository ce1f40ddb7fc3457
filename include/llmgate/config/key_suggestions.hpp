// nearest_name: the known key a misspelt one was probably meant to be, for
// "did you mean ...?" in a configuration's refusals.
#pragma once

#include <algorithm>    // std::min, std::max
#include <cctype>       // std::tolower
#include <cstddef>      // std::size_t
#include <numeric>      // std::iota
#include <optional>     // std::optional
#include <span>         // std::span
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

// The edits (insert, delete or change a character, swap two neighbours)
// that turn `a` into `b`, case aside: how far a misspelt key is from a
// known one.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> two_back(b.size() + 1), back(b.size() + 1), row(b.size() + 1);
  std::iota(back.begin(), back.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        row[j] = std::min(row[j], two_back[j - 2] + 1);
    }
    two_back.swap(back);
    back.swap(row);
  }
  return back[b.size()];
}

// The known name nearest `name`, when it is near enough to be what was
// meant: at most a third of the longer name's characters away (one at least).
inline std::optional<std::string_view> nearest_name(std::string_view name, std::span<const std::string_view> known) {
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (const auto candidate : known) {
    const auto d = edit_distance(name, candidate);
    if (d > std::max<std::size_t>(1, std::max(name.size(), candidate.size()) / 3)) continue;
    if (!best || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace llmgate::inline v0::detail
