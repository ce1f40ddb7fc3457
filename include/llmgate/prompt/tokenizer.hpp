// Tokenizer: how the PML compiler counts tokens, for parameters' len limits
// and the token spans of a compiled prompt's modules. A model server's own
// tokenizer (llama.cpp's /tokenize) counts exactly; estimated_tokenizer
// needs nothing and is close for prose and code.
#pragma once

#include <concepts>     // std::convertible_to
#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

/// Counts the tokens of a text. count must be deterministic: the compiler
/// counts the same prefixes of every prompt and relies on equal answers.
template <class T>
concept Tokenizer = requires(const T& t, std::string_view text) {
  { t.count(text) } -> std::convertible_to<std::size_t>;
};

/// An estimate of a BPE tokenizer's count, the way they split text: a run
/// of letters and digits (any non-ASCII character counts as a letter) is
/// one token per 4 characters or part of them, every other visible
/// character is a token, white space is free (it joins the word after it).
/// "The cat sat." is 4 tokens; "internationalisation" is 5.
struct estimated_tokenizer {
  std::size_t count(std::string_view text) const noexcept {
    std::size_t tokens = 0;
    std::size_t word = 0;  // characters in the current run of letters and digits
    for (const char c : text) {
      const auto b = static_cast<unsigned char>(c);
      const bool continuation = (b & 0xC0) == 0x80;
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || b >= 0x80;
      if (letter) {
        if (continuation) continue;  // part of the character before it
        if (word % 4 == 0) ++tokens;
        ++word;
        continue;
      }
      word = 0;
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') ++tokens;
    }
    return tokens;
  }
};

static_assert(Tokenizer<estimated_tokenizer>);

}  // namespace llmgate::inline v0
