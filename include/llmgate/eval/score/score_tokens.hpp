// score_tokens: the words that the text scorers (TF-IDF, BLEU) compare, so
// that both read an answer the same way.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/embed/tokenizer.hpp"  // tokenize, token_list

namespace llmgate::inline v0 {

/// The tokens of `text` as llmgate's tokenizer gives them (tokenizer.hpp):
/// case-folded words, numbers, single ideographs and symbols, in order;
/// white space and punctuation only separate. The same tokenizer as the
/// hashing embedder's, so "Don't" and "dont", "iPhone 7" and "iphone7"
/// count as the same words for every scorer.
inline std::vector<std::string> score_tokens(std::string_view text) {
  token_list tokens;
  tokenize(text, tokens);
  std::vector<std::string> out;
  out.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) out.emplace_back(tokens[i].text);
  return out;
}

}  // namespace llmgate::inline v0
