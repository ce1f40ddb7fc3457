// Tokenizer: how the PML compiler counts tokens, for parameters' len limits
// and the token spans of a compiled prompt's modules. A model server's own
// tokenizer (llama.cpp's /tokenize) counts exactly; estimated_tokenizer
// needs nothing and is close for prose and code.
#pragma once

#include <concepts>     // std::convertible_to, std::same_as
#include <cstddef>      // std::size_t
#include <span>         // std::span
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// Counts the tokens of a text. count must be deterministic: the compiler
/// counts the same prefixes of every prompt and relies on equal answers.
template <class T>
concept Tokenizer = requires(const T& t, std::string_view text) {
  { t.count(text) } -> std::convertible_to<std::size_t>;
};

/// A Tokenizer that also counts many prefixes of one text in one pass:
/// count_prefixes(text, ends)[i] == count(text.substr(0, ends[i])) for
/// ascending `ends`. The compiler counts every module span this way, so
/// that a prompt of many modules costs its length, not modules x length.
template <class T>
concept PrefixTokenizer = Tokenizer<T> && requires(const T& t, std::string_view text, std::span<const std::size_t> ends) {
  { t.count_prefixes(text, ends) } -> std::same_as<std::vector<std::size_t>>;
};

/// The tokens of each prefix text.substr(0, ends[i]), `ends` ascending: in
/// one pass where the tokenizer can, else one count per prefix.
template <Tokenizer T>
std::vector<std::size_t> count_prefix_tokens(const T& tokenizer, std::string_view text,
                                             std::span<const std::size_t> ends) {
  if constexpr (PrefixTokenizer<T>) {
    return tokenizer.count_prefixes(text, ends);
  } else {
    std::vector<std::size_t> counts;
    counts.reserve(ends.size());
    for (const std::size_t end : ends) counts.push_back(static_cast<std::size_t>(tokenizer.count(text.substr(0, end))));
    return counts;
  }
}

/// An estimate of a BPE tokenizer's count, the way they split text: a run
/// of letters and digits (any non-ASCII character counts as a letter) is
/// one token per 4 characters or part of them, every other visible
/// character is a token, white space is free (it joins the word after it).
/// "The cat sat." is 4 tokens; "internationalisation" is 5.
class estimated_tokenizer {
 public:
  std::size_t count(std::string_view text) const noexcept {
    running_count counter;
    for (const char c : text) counter.add(c);
    return counter.tokens;
  }

  std::vector<std::size_t> count_prefixes(std::string_view text, std::span<const std::size_t> ends) const {
    std::vector<std::size_t> counts;
    counts.reserve(ends.size());
    running_count counter;
    std::size_t at = 0;
    for (const std::size_t end : ends) {
      for (const std::size_t stop = end < text.size() ? end : text.size(); at < stop; ++at) counter.add(text[at]);
      counts.push_back(counter.tokens);
    }
    return counts;
  }

 private:
  // The count so far of a text read left to right: a prefix's count is
  // the count after its last byte.
  struct running_count {
    std::size_t tokens = 0;
    std::size_t word = 0;  // characters in the current run of letters and digits

    void add(char c) noexcept {
      const auto b = static_cast<unsigned char>(c);
      const bool continuation = (b & 0xC0) == 0x80;
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || b >= 0x80;
      if (letter) {
        if (continuation) return;  // part of the character before it
        if (word % 4 == 0) ++tokens;
        ++word;
        return;
      }
      word = 0;
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') ++tokens;
    }
  };
};

static_assert(PrefixTokenizer<estimated_tokenizer>);

}  // namespace llmgate::inline v0
