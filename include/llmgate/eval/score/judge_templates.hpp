// judge_templates: the questions the LLM judges are asked. One default
// template per judge kind, which judge_config::template_text replaces; each
// holds {{placeholder}}s the kit fills in one pass (so an answer that itself
// contains "{{reference}}" stays as it is):
//
//   {{prompt}}     the evaluation prompt, its variables filled in
//   {{answer}}     the answer judged                     (scorer, comparer*)
//   {{reference}}  the reference's answer to that prompt  (comparer*)
//   {{answers}}    the anonymised answers, "Answer A:"... (choice)
//
// A template must hold every placeholder its kind needs and no other
// placeholder: check_judge_template refuses it before anything is sent.
// A replacement template must ask for its kind's verdict format
// (judge_verdict.hpp), since the parser accepts that format and nothing else.
#pragma once

#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include "llmgate/error.hpp"                      // llmgate::error, errc::invalid_request
#include "llmgate/eval/plan/evaluation_plan.hpp"  // judge_kind

namespace llmgate::inline v0 {

inline std::string_view to_string(judge_kind kind) noexcept {
  switch (kind) {
    case judge_kind::scorer: return "scorer";
    case judge_kind::comparer: return "comparer";
    case judge_kind::comparer_reasoning: return "comparer_reasoning";
    case judge_kind::choice: return "choice";
  }
  return "scorer";
}

/// The method judge `index` of the plan records its verdicts under:
/// "judge:<kind>", or "judge:<kind>:<candidate>" where two judges share a kind.
inline std::string judge_method(const evaluation_plan& plan, std::size_t index) {
  const judge_config& judge = plan.judges.at(index);
  std::string method = "judge:" + std::string(to_string(judge.kind));
  for (std::size_t other = 0; other < plan.judges.size(); ++other)
    if (other != index && plan.judges[other].kind == judge.kind) return method + ":" + judge.candidate;
  return method;
}

/// The placeholders a template of `kind` must hold (and the only ones it may).
inline std::vector<std::string_view> judge_placeholders(judge_kind kind) {
  switch (kind) {
    case judge_kind::scorer: return {"prompt", "answer"};
    case judge_kind::comparer:
    case judge_kind::comparer_reasoning: return {"prompt", "answer", "reference"};
    case judge_kind::choice: return {"prompt", "answers"};
  }
  return {};
}

/// The kit's own template for `kind`.
inline std::string_view default_judge_template(judge_kind kind) noexcept {
  switch (kind) {
    case judge_kind::scorer:
      return "You are judging the answer an assistant gave to a user's prompt.\n"
             "\n"
             "Prompt:\n<<<\n{{prompt}}\n>>>\n"
             "\n"
             "Answer:\n<<<\n{{answer}}\n>>>\n"
             "\n"
             "Judge how well the answer serves the prompt: whether it is correct, complete and clear, and "
             "whether it follows the prompt's instructions. First explain your judgement in a few sentences. "
             "Then end with one last line that holds the score and nothing else, in exactly this form:\n"
             "Score: N\n"
             "where N is an integer from 0 (useless) to 10 (perfect).";
    case judge_kind::comparer:
      return "You are comparing an assistant's answer to a user's prompt with a reference answer to the same "
             "prompt.\n"
             "\n"
             "Prompt:\n<<<\n{{prompt}}\n>>>\n"
             "\n"
             "Reference answer:\n<<<\n{{reference}}\n>>>\n"
             "\n"
             "Answer:\n<<<\n{{answer}}\n>>>\n"
             "\n"
             "Does the answer serve the prompt better than the reference answer, about the same, or worse? "
             "Reply with one line and nothing else, exactly one of:\n"
             "Verdict: better\n"
             "Verdict: same\n"
             "Verdict: worse";
    case judge_kind::comparer_reasoning:
      return "You are comparing an assistant's answer to a user's prompt with a reference answer to the same "
             "prompt.\n"
             "\n"
             "Prompt:\n<<<\n{{prompt}}\n>>>\n"
             "\n"
             "Reference answer:\n<<<\n{{reference}}\n>>>\n"
             "\n"
             "Answer:\n<<<\n{{answer}}\n>>>\n"
             "\n"
             "Does the answer serve the prompt better than the reference answer, about the same, or worse? "
             "First explain your comparison in a few sentences. Then end with one last line that holds the "
             "verdict and nothing else, exactly one of:\n"
             "Verdict: better\n"
             "Verdict: same\n"
             "Verdict: worse";
    case judge_kind::choice:
      return "You are choosing the best of several answers to a user's prompt. Each answer is labelled with a "
             "letter; their order means nothing.\n"
             "\n"
             "Prompt:\n<<<\n{{prompt}}\n>>>\n"
             "\n"
             "{{answers}}\n"
             "\n"
             "Which answer serves the prompt best? Reply with one line and nothing else, in exactly this form:\n"
             "Choice: X\n"
             "where X is the letter of the best answer.";
  }
  return {};
}

/// The template a judge asks with: its own, or the default for its kind.
inline std::string_view judge_template(const judge_config& judge) noexcept {
  return judge.template_text.empty() ? default_judge_template(judge.kind) : std::string_view(judge.template_text);
}

namespace detail {

inline bool placeholder_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The placeholder's name when `text` starts with "{{name}}", and its length.
inline std::optional<std::pair<std::string_view, std::size_t>> placeholder_at(std::string_view text) noexcept {
  if (!text.starts_with("{{")) return std::nullopt;
  std::size_t end = 2;
  while (end < text.size() && placeholder_char(text[end])) ++end;
  if (end == 2 || text.substr(end, 2) != "}}") return std::nullopt;
  return std::pair{text.substr(2, end - 2), end + 2};
}

}  // namespace detail

/// `text` with every "{{name}}" replaced by value(name), in one pass. A name
/// value() has no value for (nullopt) makes `unknown(name)` called, which
/// throws. A "{{" not followed by a name and "}}" is text.
inline std::string fill_placeholders(std::string_view text,
                                     const std::function<std::optional<std::string_view>(std::string_view)>& value,
                                     const std::function<void(std::string_view)>& unknown) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (const auto found = detail::placeholder_at(text.substr(i))) {
      const auto filled = value(found->first);
      if (!filled) unknown(found->first);
      else out += *filled;
      i += found->second;
    } else {
      out += text[i++];
    }
  }
  return out;
}

/// Refuses (llmgate::error, invalid_request) a template of `kind` that misses
/// a placeholder the kind needs or holds one it does not fill. `who` names
/// the judge in the message ("judge 2 (choice)").
inline void check_judge_template(judge_kind kind, std::string_view text, std::string_view who) {
  const auto needed = judge_placeholders(kind);
  std::vector<bool> seen(needed.size(), false);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto found = detail::placeholder_at(text.substr(i));
    if (!found) continue;
    std::size_t index = 0;
    while (index < needed.size() && needed[index] != found->first) ++index;
    if (index == needed.size())
      throw error(errc::invalid_request, std::string(who) + ": the template holds {{" + std::string(found->first) +
                                             "}}, which a " + std::string(to_string(kind)) + " judge does not fill");
    seen[index] = true;
    i += found->second - 1;
  }
  for (std::size_t i = 0; i < needed.size(); ++i)
    if (!seen[i])
      throw error(errc::invalid_request, std::string(who) + ": the template misses {{" + std::string(needed[i]) +
                                             "}}, which a " + std::string(to_string(kind)) + " judge needs");
}

}  // namespace llmgate::inline v0
