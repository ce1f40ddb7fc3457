// The GuardPolicy concept (a cheap veto of a semantic hit) and its models.
//
// A text embedder places "How many minutes in 2 hours?" and "... in 3
// hours?" almost on top of each other, although their answers differ. A
// guard compares the request with the stored request behind a candidate
// hit and vetoes the hit for reasons an embedder misses; a vetoed hit is
// answered fresh, so a guard trades a few hits for precision.
#pragma once

#include <algorithm>    // std::sort, std::find, std::ranges::is_permutation
#include <array>        // std::array
#include <concepts>     // std::same_as
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/embed/tokenizer.hpp"  // token_list, tokenize

namespace llmgate::inline v0 {

/// Why a guard vetoed a hit.
enum class veto_reason { none, numbers_differ, negation_differs, order_swapped };

/// vetoes(request, stored): veto_reason::none lets the hit through.
template <class G>
concept GuardPolicy = requires(const G& guard, std::string_view request, std::string_view stored) {
  { guard.vetoes(request, stored) } -> std::same_as<veto_reason>;
};

/// Lets every hit through.
struct no_guard {
  veto_reason vetoes(std::string_view, std::string_view) const noexcept { return veto_reason::none; }
};

/// Vetoes a hit when the two requests
/// - carry different numbers ("2 hours" vs "3 hours"),
/// - differ in negation (one says not/never/no/without... the other does not,
///   counted modulo two so "not un-" style doubles cancel),
/// - carry the same numbers in another order ("from 3 to 5" vs "from 5 to 3"),
/// - name the same things in swapped order around a comparison or a
///   direction ("is A faster than B" vs "is B faster than A", "from A to B"
///   vs "from B to A": the same words, such a word, another order).
/// Negation, comparison and direction words are listed for English, German,
/// French, Spanish and Russian; numbers work in every script.
class lexical_guard {
 public:
  veto_reason vetoes(std::string_view request, std::string_view stored) const {
    token_list a, b;
    tokenize(request, a);
    tokenize(stored, b);
    return vetoes(a, b);
  }

  /// The same checks on texts already tokenized (tokenize()), for a
  /// caller that keeps the tokens of a request for other uses.
  veto_reason vetoes(const token_list& a, const token_list& b) const {
    const auto numbers_a = numbers(a), numbers_b = numbers(b);
    if (!std::ranges::is_permutation(numbers_a, numbers_b)) return veto_reason::numbers_differ;
    if (negations(a) % 2 != negations(b) % 2) return veto_reason::negation_differs;
    if (numbers_a != numbers_b) return veto_reason::order_swapped;
    if (has_order_word(a) && has_order_word(b)) {
      auto words_a = words(a), words_b = words(b);
      if (words_a != words_b) {
        std::sort(words_a.begin(), words_a.end());
        std::sort(words_b.begin(), words_b.end());
        if (words_a == words_b) return veto_reason::order_swapped;
      }
    }
    return veto_reason::none;
  }

  // The lists, public so that features built on the guard's checks
  // (cache/pair_features.hpp) read the same words.
  static constexpr std::array<std::string_view, 24> negation_words = {
      "not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
      "without", "cannot", "cant", "dont", "doesnt", "didnt", "isnt", "arent",
      "wasnt", "wont", "shouldnt", "nicht", "kein", "pas", "sin", "не"};
  /// Words around which the order of the things named matters.
  static constexpr std::array<std::string_view, 22> order_words = {
      "than", "vs", "versus", "or", "better", "worse", "from", "to", "into",
      "als", "oder", "von", "nach", "que", "ou", "vers", "desde", "hacia", "чем", "или", "из", "до"};

 private:

  static bool is_one_of(std::string_view word, auto const& list) {
    return std::find(list.begin(), list.end(), word) != list.end();
  }

  // In the order they appear.
  static std::vector<std::string_view> numbers(const token_list& tokens) {
    std::vector<std::string_view> found;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i].kind == token_kind::number) found.push_back(tokens[i].text);
    return found;
  }

  static int negations(const token_list& tokens) {
    int count = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      count += tokens[i].kind == token_kind::word && is_one_of(tokens[i].text, negation_words);
    return count;
  }

  static bool has_order_word(const token_list& tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (is_one_of(tokens[i].text, order_words)) return true;
    return false;
  }

  static std::vector<std::string_view> words(const token_list& tokens) {
    std::vector<std::string_view> found;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i].kind != token_kind::symbol) found.push_back(tokens[i].text);
    return found;
  }
};

static_assert(GuardPolicy<no_guard> && GuardPolicy<lexical_guard>);

}  // namespace llmgate::inline v0
