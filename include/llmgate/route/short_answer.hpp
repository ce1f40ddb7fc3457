// short_answer: the normal form of an answer short enough to compare
// exactly, so that two models' answers can be checked against each other
// (cascade_plan.hpp): "B", "(B)", "B)", "B.\n" and "Answer: B" are one
// choice; "1,200", "$1200" and "1200.0" one number; "Yes." and "yes" one
// verdict. A longer free-text answer has no normal form (std::nullopt):
// whether two of those say the same is not decided here.
#pragma once

#include <cctype>       // std::isdigit, std::isspace, std::tolower
#include <charconv>     // std::from_chars
#include <cstdio>       // std::snprintf
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::errc

namespace llmgate::inline v0 {

namespace detail {

inline std::string_view trim_answer(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == '.'))
    text.remove_suffix(1);
  for (const std::string_view lead : {"Answer:", "answer:", "The answer is", "the answer is"})
    if (text.starts_with(lead)) return trim_answer(text.substr(lead.size()));
  return text;
}

inline std::optional<std::string> choice_letter(std::string_view t) {
  if (t.size() >= 2 && t.front() == '(') t.remove_prefix(1);
  if (t.empty() || t.front() < 'A' || t.front() > 'J') return std::nullopt;
  const char letter = t.front();
  t.remove_prefix(1);
  // "B", "B) house", "B.", "B\nbecause ...": a choice. "A cat", "I do":
  // a sentence that starts with a capital letter.
  const bool marked = !t.empty() && (t.front() == ')' || t.front() == ':' || t.front() == '.');
  if (!marked && !t.empty() && t.front() != '\n') return std::nullopt;
  if (marked && t.size() > 1 && !std::isspace(static_cast<unsigned char>(t[1]))) return std::nullopt;
  return std::string("choice:") + letter;
}

inline std::optional<std::string> plain_number(std::string_view t) {
  std::string digits;
  for (const char c : t) {
    if (c == ',' || c == '$' || c == '%') continue;
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+') return std::nullopt;
    digits += c;
  }
  if (digits.starts_with('+')) digits.erase(0, 1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  char text[40];
  std::snprintf(text, sizeof text, "number:%.12g", value);
  return text;
}

}  // namespace detail

/// The normal form of `answer` (file comment), or std::nullopt for free text.
inline std::optional<std::string> normalised_short_answer(std::string_view answer) {
  const auto t = detail::trim_answer(answer);
  if (t.empty() || t.size() > 200) return std::nullopt;
  if (auto choice = detail::choice_letter(t)) return choice;
  if (auto number = detail::plain_number(t)) return number;
  std::string lower;
  for (const char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "yes" || lower == "true") return "verdict:yes";
  if (lower == "no" || lower == "false") return "verdict:no";
  return std::nullopt;
}

/// Whether two answers say the same short thing. Free text never agrees.
inline bool short_answers_agree(std::string_view a, std::string_view b) {
  const auto x = normalised_short_answer(a);
  return x && x == normalised_short_answer(b);
}

}  // namespace llmgate::inline v0
