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
#include <cmath>        // std::log2
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
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

inline constexpr std::string_view code_phrases =
    "def |```|#include|function(|=>|);|write a function|write a python|write a program|in python|code ";
inline constexpr std::string_view math_phrases =
    "\\frac|$|\\sqrt|how many|how much|what is the value|calculate|solve for|remainder";
inline constexpr std::string_view choice_phrases = "a)|(a)|which of the following|options:|clue";
// Bits of phrase_lists(): these three, then task_phrases[t] as 1u << (3 + t).
inline constexpr unsigned code_bit = 1u << 0, math_bit = 1u << 1, choice_bit = 1u << 2;

struct phrase {
  std::string_view text;
  unsigned bit;
};

// Every '|'-separated phrase of the lists above, by its first byte, and
// which pairs of bytes start one (a one-byte phrase: followed by any byte,
// or none, read as 0). Built once.
struct phrase_table {
  std::array<std::vector<phrase>, 256> by_first_byte;
  std::array<std::uint64_t, 65536 / 64> starts{};  // bit (b0 << 8 | b1)

  bool may_start(unsigned pair) const noexcept { return (starts[pair >> 6] >> (pair & 63)) & 1u; }
};

inline const phrase_table& phrases() {
  static const auto table = [] {
    phrase_table t;
    const auto mark = [&](unsigned pair) { t.starts[pair >> 6] |= std::uint64_t{1} << (pair & 63); };
    const auto add = [&](std::string_view list, unsigned bit) {
      while (!list.empty()) {
        const auto bar = list.find('|');
        const auto text = list.substr(0, bar);
        const unsigned first = static_cast<unsigned char>(text[0]);
        t.by_first_byte[first].push_back({text, bit});
        if (text.size() == 1)
          for (unsigned next = 0; next < 256; ++next) mark(first << 8 | next);
        else
          mark(first << 8 | static_cast<unsigned char>(text[1]));
        list = bar == std::string_view::npos ? std::string_view() : list.substr(bar + 1);
      }
    };
    add(code_phrases, code_bit);
    add(math_phrases, math_bit);
    add(choice_phrases, choice_bit);
    for (std::size_t task = 0; task < std::size(task_phrases); ++task) add(task_phrases[task].second, 1u << (3 + task));
    return t;
  }();
  return table;
}

// The lists with a phrase in `text`, as bits: one pass over the text, in
// which a position whose two bytes start no phrase costs one bit test (a
// search per phrase would read the text some fifty times).
inline unsigned phrase_lists(std::string_view text) {
  const auto& table = phrases();
  unsigned found = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned first = static_cast<unsigned char>(text[i]);
    const unsigned second = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
    if (!table.may_start(first << 8 | second)) continue;
    for (const auto& p : table.by_first_byte[first])
      if (!(found & p.bit) && text.compare(i, p.text.size(), p.text) == 0) found |= p.bit;
  }
  return found;
}

}  // namespace detail

/// Writes into `out` `text` itself when it has at most 2 * edge_words +
/// middle_words words, else its first and last edge_words words around an
/// even sample of middle_words words from between them, the gaps marked
/// " ... ". Returns how many words `text` has. Bounds what reading a long
/// request costs, keeping its start (the instruction) and its end (often
/// the question itself); `out` is reused, so a caller that keeps it
/// allocates nothing once it is large enough.
inline std::size_t prune_request_into(std::string_view text, std::size_t edge_words, std::size_t middle_words,
                                      std::string& out) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  // Word starts, counted without branches (| and &, not || and &&) so that
  // the compiler vectorises the one pass every request pays for.
  const auto blank_bit = [](char c) -> unsigned { return (c == ' ') | (c == '\t') | (c == '\r') | (c == '\n'); };
  std::size_t words = !text.empty() && !blank(text[0]);
  for (std::size_t i = 1; i < text.size(); ++i) words += blank_bit(text[i - 1]) & (blank_bit(text[i]) ^ 1u);
  out.clear();
  if (words <= 2 * edge_words + middle_words) {
    out.assign(text);
    return words;
  }

  const auto append = [&](std::string_view word) {
    if (!out.empty()) out += ' ';
    out.append(word);
  };
  // The word starting at `start` (not blank), and where the text goes on after it.
  const auto word_at = [&](std::size_t start) {
    std::size_t end = start;
    while (end < text.size() && !blank(text[end])) ++end;
    return text.substr(start, end - start);
  };
  const auto next_start = [&](std::size_t from) {
    while (from < text.size() && blank(text[from])) ++from;
    return from;
  };

  std::size_t at = next_start(0);
  for (std::size_t w = 0; w < edge_words; ++w) {
    const auto word = word_at(at);
    append(word);
    at = next_start(at + word.size());
  }
  out += " ...";
  if (middle_words > 0) {
    // Word edge_words + k * middle / middle_words for k = 0, 1, ...
    const std::size_t middle = words - 2 * edge_words;
    for (std::size_t w = edge_words, k = 0; k < middle_words; ++w) {
      const auto word = word_at(at);
      if (w == edge_words + k * middle / middle_words) {
        append(word);
        ++k;
      }
      at = next_start(at + word.size());
    }
    out += " ...";
  }
  // The last edge_words words, found from the end.
  std::size_t start = text.size();
  for (std::size_t w = 0; w < edge_words; ++w) {
    while (start > 0 && blank(text[start - 1])) --start;
    while (start > 0 && !blank(text[start - 1])) --start;
  }
  for (std::size_t w = 0; w < edge_words; ++w) {
    const auto word = word_at(start);
    append(word);
    start = next_start(start + word.size());
  }
  return words;
}

/// prune_request_into() into a new string.
inline std::string prune_request(std::string_view text, std::size_t edge_words, std::size_t middle_words) {
  std::string pruned;
  prune_request_into(text, edge_words, middle_words, pruned);
  return pruned;
}

/// Reads task type, domain and complexity off the text. `total_words`:
/// the whole request's word count when `text` is a pruned request (what
/// prune_request_into returns), so that complexity still sees its length;
/// 0: `text` is the whole request.
inline text_features read_text_features(std::string_view text, std::size_t total_words = 0) {
  thread_local std::string lower;  // reused: no allocation per request once grown
  lower.assign(text);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');

  const auto& keywords = detail::keyword_lists();
  std::array<int, std::size(detail::domain_keywords)> domain_hits{};
  std::size_t words = 0, numbers = 0, reasoning_words = 0;
  const auto is_word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '#' || c == '_';
  };
  for (std::size_t i = 0; i < lower.size();) {
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
  if (total_words > 0) words = total_words;

  const unsigned lists = detail::phrase_lists(lower);
  const bool code = (lists & detail::code_bit) || domain_hits[0] >= 3;
  const bool math = (lists & detail::math_bit) && numbers >= 1;

  text_features f{"chat", "general", 0.0f};
  if (code) {
    f.task_type = "coding";
  } else if (math || (numbers >= 3 && domain_hits[1] > 0)) {
    f.task_type = "math";
  } else {
    bool named = false;
    for (std::size_t task = 0; task < std::size(detail::task_phrases); ++task)
      if (!named && (lists & (1u << (3 + task)))) {
        f.task_type = detail::task_phrases[task].first;
        named = true;
      }
    if (!named) {
      if ((lists & detail::choice_bit) || reasoning_words >= 2)
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

/// The text rules' reading of a request as the local analyser reads it:
/// its first and last edge_words words (prune_request_into), with its full
/// length for complexity.
inline text_features read_request_features(std::string_view text, std::size_t edge_words) {
  thread_local std::string pruned;  // reused: no allocation per request once grown
  const auto words = prune_request_into(text, edge_words, 0, pruned);
  return read_text_features(pruned, words);
}

}  // namespace llmgate::inline v0
