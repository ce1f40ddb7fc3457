// judge_verdict: strict parsing of what an LLM judge answered, and how a
// judge's score_record tells a verdict from an unparsed answer or a judge
// that could not be asked.
//
// The formats, one per kind, as the default templates ask for them
// (judge_templates.hpp). Surrounding whitespace of the whole output and of
// each line is ignored; nothing else is:
//   scorer              reasoning, then a last line "Score: N", N an integer 0..10
//   comparer            one line and nothing else: "Verdict: better|same|worse"
//   comparer_reasoning  reasoning, then a last line "Verdict: better|same|worse"
//   choice              one line and nothing else: "Choice: X", X one of the labels shown
// "Score: 7/10", "Score: 11", "score: 7", "**Score: 7**", a verdict with no
// reasoning where reasoning is asked, a second verdict line, prose alone:
// all malformed. Values in [0, 1]: a score / 10; better 1, same 0.5, worse 0
// (the answer against the reference); choice: 1 for the answer chosen, 0
// for the others of its group.
#pragma once

#include <algorithm>    // std::min
#include <cstddef>      // std::size_t
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/eval/plan/evaluation_plan.hpp"  // judge_kind
#include "llmgate/eval/run/run_records.hpp"       // score_record

namespace llmgate::inline v0 {

struct judge_verdict {
  double value = 0;          ///< in [0, 1]; for choice, the chosen answer's (1)
  std::string reasoning = {};  ///< the text before the verdict line; empty for the verdict-only kinds
  int score = -1;            ///< scorer: 0..10
  std::size_t choice = 0;    ///< choice: the index of the chosen label
};

namespace detail {

inline std::string_view trim_judge_text(std::string_view text) noexcept {
  constexpr std::string_view space = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

// The verdict a line states, when it is exactly the kind's verdict line.
inline std::optional<judge_verdict> verdict_line(judge_kind kind, std::string_view line,
                                                 std::span<const std::string> labels) {
  line = trim_judge_text(line);
  switch (kind) {
    case judge_kind::scorer: {
      if (!line.starts_with("Score: ")) return std::nullopt;
      const auto digits = line.substr(7);
      if (digits == "10") return judge_verdict{.value = 1.0, .score = 10};
      if (digits.size() == 1 && digits[0] >= '0' && digits[0] <= '9') {
        const int score = digits[0] - '0';
        return judge_verdict{.value = score / 10.0, .score = score};
      }
      return std::nullopt;
    }
    case judge_kind::comparer:
    case judge_kind::comparer_reasoning:
      if (line == "Verdict: better") return judge_verdict{.value = 1.0};
      if (line == "Verdict: same") return judge_verdict{.value = 0.5};
      if (line == "Verdict: worse") return judge_verdict{.value = 0.0};
      return std::nullopt;
    case judge_kind::choice:
      if (!line.starts_with("Choice: ")) return std::nullopt;
      for (std::size_t i = 0; i < labels.size(); ++i)
        if (line.substr(8) == labels[i]) return judge_verdict{.value = 1.0, .choice = i};
      return std::nullopt;
  }
  return std::nullopt;
}

inline bool judge_kind_reasons(judge_kind kind) noexcept {
  return kind == judge_kind::scorer || kind == judge_kind::comparer_reasoning;
}

}  // namespace detail

/// The verdict in a judge's `output`, or nullopt when it is malformed.
/// `labels`: the choice judge's labels as shown ("A", "B"...); unused otherwise.
inline std::optional<judge_verdict> parse_judge_verdict(judge_kind kind, std::string_view output,
                                                        std::span<const std::string> labels = {}) {
  const auto text = detail::trim_judge_text(output);
  const auto last_break = text.rfind('\n');
  const auto last_line = last_break == std::string_view::npos ? text : text.substr(last_break + 1);
  auto verdict = detail::verdict_line(kind, last_line, labels);
  if (!verdict) return std::nullopt;
  if (!detail::judge_kind_reasons(kind)) {
    if (last_break != std::string_view::npos) return std::nullopt;  // one line and nothing else
    return verdict;
  }
  if (last_break == std::string_view::npos) return std::nullopt;  // the reasoning asked for is missing
  const auto reasoning = detail::trim_judge_text(text.substr(0, last_break));
  for (std::size_t start = 0; start <= reasoning.size();) {  // a second verdict makes the answer ambiguous
    const auto end = std::min(reasoning.find('\n', start), reasoning.size());
    if (detail::verdict_line(kind, reasoning.substr(start, end - start), labels)) return std::nullopt;
    start = end + 1;
  }
  verdict->reasoning = std::string(reasoning);
  return verdict;
}

/// How a judge's score_record ended: a verdict (value set); an answer that
/// stayed malformed after its one retry (detail "unparsed: " + the judge's
/// last raw output); or a judge that could not be asked or did not answer
/// (detail "error: <kind>: <message>", the kind as request_result's error kinds
/// are named, e.g. "error: unreachable: ...", "error: timeout: ...").
/// Both of the last two leave value empty: neither is ever a score.
enum class judge_outcome { verdict, unparsed, error };

inline constexpr std::string_view judge_unparsed_prefix = "unparsed: ";
inline constexpr std::string_view judge_error_prefix = "error: ";

inline judge_outcome outcome_of(const score_record& record) noexcept {
  if (record.value) return judge_outcome::verdict;
  return record.detail.starts_with(judge_error_prefix) ? judge_outcome::error : judge_outcome::unparsed;
}

}  // namespace llmgate::inline v0
