// text_features: what the text of a request says about its task without
// any model: keywords and markers of code and mathematics give a task type
// and a domain, length and words that ask for reasoning give a complexity.
// Also prune_request, which both analysers use to bound the cost of long
// requests.
// The local analyser starts from these and lets labelled examples that
// resemble the request correct them.
#pragma once

#include <algorithm>    // std::clamp, std::min
#include <array>        // std::array
#include <cctype>       // std::isalnum
#include <cmath>        // std::log2
#include <cstddef>      // std::size_t
#include <iterator>     // std::size
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // keyword -> lists

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

/// Task types the text rules and the LLM analyser's prompt know.
inline constexpr std::array<std::string_view, 9> known_task_types = {
    "coding", "math", "reasoning", "question_answering", "summarization",
    "translation", "creative_writing", "extraction", "chat"};

/// Domains the text rules and the LLM analyser's prompt know.
inline constexpr std::array<std::string_view, 7> known_domains = {
    "programming", "mathematics", "science", "medicine", "law", "finance", "general"};

/// The text rules' reading of a request.
struct text_features {
  std::string_view task_type;  ///< one of known_task_types
  std::string_view domain;     ///< one of known_domains
  float complexity;            ///< 0..1
};

namespace detail {

// Space-separated words that point at a label.
using keyword_list = std::pair<std::string_view, std::string_view>;

// Programming first and mathematics second: the rules below read them by place.
inline constexpr keyword_list domain_keywords[] = {
    {"programming", "code function python java javascript c++ sql api compile bug class array string list "
                    "algorithm program script regex json html css def return"},
    {"mathematics", "equation integral derivative probability sum product remainder divisible prime "
                    "polynomial geometry triangle circle fraction percent average ratio solve calculate"},
    {"medicine", "patient patients disease symptom symptoms diagnosis clinical drug drugs dose medical "
                 "treatment therapy doctor hospital cancer infection vaccine"},
    {"law", "law legal court contract statute liability attorney lawyer lawsuit plaintiff defendant "
            "regulation rights crime"},
    {"finance", "stock stocks invest investment tax loan interest finance financial revenue accounting "
                "bank budget profit market inflation"},
    {"science", "physics chemistry biology cell cells molecule atom energy reaction experiment gene genes "
                "species planet organism electron chemical temperature"},
};

inline constexpr keyword_list task_phrases[] = {
    {"translation", "translate|translation of|in french|in german|in spanish|into english"},
    {"summarization", "summarize|summarise|summary|tl;dr|key points"},
    {"creative_writing", "write a story|write a poem|a poem|a short story|write a song|lyrics|write an essay"},
    {"extraction", "extract|list all|find all|pull out"},
};

inline constexpr std::string_view reasoning_words =
    "why explain prove derive analyze analyse compare design evaluate justify step steps optimize optimise "
    "reason tradeoffs";
inline constexpr unsigned reasoning_bit = 1u << 7;

// Which lists each keyword is on: bit d for domain_keywords[d], and
// reasoning_bit. Built once; a word costs one hash lookup.
inline const boost::unordered_flat_map<std::string_view, unsigned>& keyword_lists() {
  static const auto table = [] {
    boost::unordered_flat_map<std::string_view, unsigned> t;
    const auto add = [&](std::string_view words, unsigned bit) {
      while (!words.empty()) {
        const auto space = words.find(' ');
        if (space != 0) t[words.substr(0, space)] |= bit;
        words = space == std::string_view::npos ? std::string_view() : words.substr(space + 1);
      }
    };
    for (std::size_t d = 0; d < std::size(domain_keywords); ++d) add(domain_keywords[d].second, 1u << d);
    add(reasoning_words, reasoning_bit);
    return t;
  }();
  return table;
}

// One of the '|'-separated phrases occurs in `text`.
inline bool mentions(std::string_view text, std::string_view phrases) noexcept {
  while (!phrases.empty()) {
    const auto bar = phrases.find('|');
    if (text.find(phrases.substr(0, bar)) != std::string_view::npos) return true;
    phrases = bar == std::string_view::npos ? std::string_view() : phrases.substr(bar + 1);
  }
  return false;
}

}  // namespace detail

/// `text` itself when it has at most 2 * edge_words + middle_words words,
/// else its first and last edge_words words around an even sample of
/// middle_words words from between them, the gaps marked " ... ". Bounds
/// what reading a long request costs, keeping its start (the instruction)
/// and its end (often the question itself).
inline std::string prune_request(std::string_view text, std::size_t edge_words, std::size_t middle_words) {
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < text.size();) {
    const auto start = text.find_first_not_of(" \t\r\n", i);
    if (start == std::string_view::npos) break;
    const auto end = std::min(text.size(), text.find_first_of(" \t\r\n", start));
    words.push_back(text.substr(start, end - start));
    i = end;
  }
  if (words.size() <= 2 * edge_words + middle_words) return std::string(text);

  std::string pruned;
  const auto append = [&](std::size_t from, std::size_t to) {
    for (std::size_t w = from; w < to; ++w) pruned.append(pruned.empty() ? "" : " ").append(words[w]);
  };
  append(0, edge_words);
  pruned += " ...";
  const std::size_t middle = words.size() - 2 * edge_words;
  for (std::size_t k = 0; k < middle_words; ++k) pruned.append(" ").append(words[edge_words + k * middle / middle_words]);
  if (middle_words > 0) pruned += " ...";
  append(words.size() - edge_words, words.size());
  return pruned;
}

/// Reads task type, domain and complexity off the text.
inline text_features read_text_features(std::string_view text) {
  std::string lower(text);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');

  const auto& keywords = detail::keyword_lists();
  std::array<int, std::size(detail::domain_keywords)> domain_hits{};
  std::size_t words = 0, numbers = 0, reasoning_words = 0;
  for (std::size_t i = 0; i < lower.size();) {
    const auto is_word_char = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '#' || c == '_';
    };
    if (!is_word_char(lower[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < lower.size() && is_word_char(lower[end])) ++end;
    const std::string_view word(lower.data() + i, end - i);
    ++words;
    if (word[0] >= '0' && word[0] <= '9') ++numbers;
    if (const auto found = keywords.find(word); found != keywords.end()) {
      for (std::size_t d = 0; d < domain_hits.size(); ++d)
        if (found->second & (1u << d)) ++domain_hits[d];
      if (found->second & detail::reasoning_bit) ++reasoning_words;
    }
    i = end;
  }

  const bool code = detail::mentions(lower, "def |```|#include|function(|=>|);|write a function|"
                                            "write a python|write a program|in python|code ") ||
                    domain_hits[0] >= 3;
  const bool math = detail::mentions(lower, "\\frac|$|\\sqrt|how many|how much|what is the value|calculate|"
                                            "solve for|remainder") &&
                    numbers >= 1;

  text_features f{"chat", "general", 0.0f};
  if (code) {
    f.task_type = "coding";
  } else if (math || (numbers >= 3 && domain_hits[1] > 0)) {
    f.task_type = "math";
  } else {
    bool named = false;
    for (const auto& [task, phrases] : detail::task_phrases)
      if (!named && detail::mentions(lower, phrases)) {
        f.task_type = task;
        named = true;
      }
    if (!named) {
      if (detail::mentions(lower, "a)|(a)|which of the following|options:|clue") || reasoning_words >= 2)
        f.task_type = "reasoning";
      else if (lower.find('?') != std::string::npos)
        f.task_type = "question_answering";
    }
  }

  int best_hits = 0;
  for (std::size_t d = 0; d < domain_hits.size(); ++d)
    if (domain_hits[d] > best_hits) {
      best_hits = domain_hits[d];
      f.domain = detail::domain_keywords[d].first;
    }
  if (code) f.domain = "programming";

  // Longer requests and those that ask for reasoning, code or mathematics
  // are harder; a 2,000-word request is as long as it gets.
  const float length = std::min(1.0f, static_cast<float>(std::log2(1.0 + static_cast<double>(words))) / 11.0f);
  const float reasoning = 0.1f * static_cast<float>(std::min<std::size_t>(reasoning_words, 3));
  const float technical = code || f.task_type == std::string_view("math") ? 0.15f : 0.0f;
  f.complexity = std::clamp(0.1f + 0.45f * length + reasoning + technical, 0.0f, 1.0f);
  return f;
}

}  // namespace llmgate::inline v0
