// The labelled pairs of a QQP file and their split into the part a
// verifier is fitted on and the held-out part the replay replays, so that
// no question the verifier was fitted on is ever replayed.
//
// The split is the documented one of cache/verifier_training.hpp
// (split_pairs): questions are grouped into components, connected by any
// pair (duplicate or not) and by their normal form (case-folded letters and
// digits), and a whole component goes to the fit part when a fixed hash of
// its smallest normal form falls under the fit share. This header holds
// that rule until verifier_training.hpp is on main; then split_pairs
// replaces it here and nowhere else.
#pragma once

#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint32_t, std::uint64_t
#include <filesystem>     // std::filesystem::path
#include <span>           // std::span
#include <string>         // std::string
#include <unordered_map>  // normal form -> question
#include <vector>         // std::vector

#include <llmgate/detail/xxhash.hpp>  // XXH3_64bits
#include <llmgate/embed/text.hpp>     // normalize_text

#include "stream_reader.hpp"  // labelled_pair, read_labelled_pairs, detail::disjoint_sets

namespace replay {

struct pair_split {
  std::vector<labelled_pair> fit, held_out;
};

/// The share of components that goes to the fit part.
inline constexpr double fit_share = 0.5;

/// Splits `pairs` by component (see above), keeping file order within each part.
inline pair_split split_pairs(std::span<const labelled_pair> pairs, double share = fit_share) {
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<std::string> forms;
  detail::disjoint_sets components;
  const auto question = [&](const std::string& text) {
    std::string form = llmgate::normalize_text(text, {.case_fold = true, .letters_and_digits_only = true});
    const auto [at, added] = ids.try_emplace(form, 0);
    if (added) {
      at->second = components.add();
      forms.push_back(std::move(form));
    }
    return at->second;
  };
  std::vector<std::uint32_t> first(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    first[i] = question(pairs[i].a);
    components.unite(first[i], question(pairs[i].b));
  }
  // Each component's smallest normal form, under its root.
  std::vector<const std::string*> smallest(forms.size(), nullptr);
  for (std::uint32_t q = 0; q < forms.size(); ++q) {
    const std::string*& s = smallest[components.find(q)];
    if (!s || forms[q] < *s) s = &forms[q];
  }
  pair_split split;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::string& form = *smallest[components.find(first[i])];
    const double draw = static_cast<double>(XXH3_64bits(form.data(), form.size()) >> 11) * 0x1p-53;
    (draw < share ? split.fit : split.held_out).push_back(pairs[i]);
  }
  return split;
}

}  // namespace replay
