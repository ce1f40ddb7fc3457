// pml_text: how PML turns the text written between tags into the text a
// prompt holds. Markup is indented for its reader, so the layout of the
// source should not reach the model; parameters sit inside sentences, so
// the spaces around them must. The rule (docs/prompt-modules.md):
//
// - A text's side that touches a block (the start or end of a module, a
//   role block, the schema or the prompt, or a <module>, <union> or role
//   tag beside it) loses its white space: at the start, every line that is
//   blank and the spaces before the first character when they follow the
//   tag on its line; at the end, all of it. A side that touches a
//   parameter keeps its white space as written.
// - The lines are then dedented: the white space (spaces and tabs) that all
//   their starts share is removed, as Python's textwrap.dedent does; the
//   first line counts only where it starts a line in the source, and a
//   last line that continues with a parameter counts even when blank.
//   Blank lines become empty.
// - The compiler joins blocks with one "\n" and writes text and parameter
//   values that share a block side by side (compiler.hpp).
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

inline bool pml_text_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The text `raw` holds in a compiled prompt; `block_before` / `block_after`
/// tell whether its start / end touches a block rather than a parameter.
inline std::string normalize_pml_text(std::string_view raw, bool block_before, bool block_after) {
  bool first_counts = false;  // the first line starts a source line
  if (block_before) {
    std::size_t first = 0;
    while (first < raw.size() && pml_text_space(raw[first])) ++first;
    const std::size_t last_break = raw.substr(0, first).rfind('\n');
    if (last_break != std::string_view::npos) {
      raw.remove_prefix(last_break + 1);
      first_counts = true;
    } else {
      raw.remove_prefix(first);
    }
  }
  if (block_after) {
    std::size_t end = raw.size();
    while (end > 0 && pml_text_space(raw[end - 1])) --end;
    raw = raw.substr(0, end);
  }
  if (raw.empty()) return {};

  std::vector<std::string_view> lines;
  for (std::size_t begin = 0;;) {
    const std::size_t end = raw.find('\n', begin);
    lines.push_back(raw.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  const std::size_t last = lines.size() - 1;
  const auto indentation = [](std::string_view line) {
    std::size_t n = 0;
    while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
    return n;
  };
  const auto blank = [&](std::string_view line) {
    for (char c : line)
      if (!pml_text_space(c)) return false;
    return true;
  };
  const auto counts = [&](std::size_t i) {
    if (i == 0 && !first_counts) return false;
    return !blank(lines[i]) || (i == last && !block_after);
  };

  // The indentation every counted line starts with.
  std::string_view common;
  bool any = false;
  for (std::size_t i = 0; i <= last; ++i) {
    if (!counts(i)) continue;
    const std::string_view indent = lines[i].substr(0, indentation(lines[i]));
    if (!any) {
      common = indent;
      any = true;
    } else {
      std::size_t n = 0;
      while (n < common.size() && n < indent.size() && common[n] == indent[n]) ++n;
      common = common.substr(0, n);
    }
  }

  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i <= last; ++i) {
    if (i > 0) out += '\n';
    if (i == 0 && !first_counts) out += lines[i];
    else if (counts(i)) out += lines[i].substr(common.size());
    // else: a blank line, left empty
  }
  return out;
}

}  // namespace llmgate::inline v0::detail
