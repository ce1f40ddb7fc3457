// provider_hints: what a backend adds to a compiled PML prompt (a request
// whose `layout` is set) so that the provider keeps and reuses its stable
// parts. Each backend asks for the hints of its own kind; a plain request
// gets none and is sent as it always was.
//
//   OpenAI      prompt_cache_key = layout.prefix_path (schema, version and
//               the module path up to the first divergence), so that the
//               prompts sharing a prefix are routed to the machines that hold it.
//   Anthropic   cache_control breakpoints at the ends of the most reused
//               modules (cache_breakpoints below).
//   llama.cpp   cache_prompt and id_slot per prefix, slot files of the
//               whole schema (backend/llama_cpp_backend.hpp).
//
// Which module ends are the most reused: a provider reuses a prefix only,
// so the text up to a module's end is reused by every prompt that shares
// everything before that end. An earlier end is therefore shared by every
// prompt that shares a later one (and by more), and the end of the
// cacheable prefix is the one that every repeat of this prompt's imports
// reuses in full. The breakpoints go, in this order of preference, at the
// end of the cacheable prefix, then at the ends of the cached modules
// inside it from the earliest on; never below the model's minimum
// cacheable length (a shorter prefix is not cached and would waste one of
// the four), never past the cacheable prefix (what follows an argument or
// uncached text is not stable), at most `limit` of them.
#pragma once

#include <algorithm>    // std::sort, std::unique
#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tie
#include <vector>       // std::vector

#include "llmgate/chat/chat.hpp"             // chat_request, find_field
#include "llmgate/prompt/prompt_layout.hpp"  // prompt_layout
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

/// Where a cache breakpoint goes: after byte `byte` of message `message`'s
/// content, `tokens` tokens into the prompt (the layout's count).
struct cache_breakpoint {
  std::size_t message = 0;
  std::size_t byte = 0;
  std::size_t tokens = 0;

  friend bool operator==(const cache_breakpoint&, const cache_breakpoint&) = default;
};

/// Anthropic's most breakpoints in one request.
inline constexpr std::size_t anthropic_max_breakpoints = 4;

/// The shortest prefix Anthropic caches for `model`, as its prompt-caching
/// documentation gives it: 2048 tokens for the Haiku models, 1024 for the
/// others. anthropic_options::cache_min_tokens replaces it.
inline std::size_t anthropic_min_cacheable_tokens(std::string_view model) {
  return model.find("haiku") != std::string_view::npos ? 2048 : 1024;
}

/// The breakpoints for `layout` (see the header comment), in the order they
/// appear in the request. `min_tokens`: the model's minimum cacheable length.
inline std::vector<cache_breakpoint> cache_breakpoints(const prompt_layout& layout, std::size_t min_tokens,
                                                       std::size_t limit = anthropic_max_breakpoints) {
  const cache_breakpoint prefix{layout.prefix_message, layout.prefix_end, layout.prefix_tokens};
  const auto before = [](const cache_breakpoint& a, const cache_breakpoint& b) {
    return std::tie(a.message, a.byte) < std::tie(b.message, b.byte);
  };
  const auto same_place = [](const cache_breakpoint& a, const cache_breakpoint& b) {
    return a.message == b.message && a.byte == b.byte;
  };
  const bool prefix_counts = prefix.tokens > 0 && prefix.tokens >= min_tokens;
  std::vector<cache_breakpoint> ends;
  for (const auto& span : layout.modules) {
    const cache_breakpoint end{span.message, span.end, span.token_end};
    if (span.cached && end.tokens >= min_tokens && end.tokens > 0 && !before(prefix, end) && !same_place(prefix, end))
      ends.push_back(end);
  }
  std::sort(ends.begin(), ends.end(), before);
  ends.erase(std::unique(ends.begin(), ends.end(), same_place), ends.end());

  std::vector<cache_breakpoint> chosen;
  if (prefix_counts && limit > 0) chosen.push_back(prefix);
  for (const auto& end : ends) {
    if (chosen.size() >= limit) break;
    chosen.push_back(end);
  }
  std::sort(chosen.begin(), chosen.end(), before);
  return chosen;
}

/// The prompt_cache_key OpenAI is sent for `request`: its layout's
/// prefix_path; empty for a plain request, one whose client set its own
/// prompt_cache_key, or a layout without a path.
inline std::string openai_prompt_cache_key(const chat_request& request) {
  if (!request.layout || find_field(request.parameters, "prompt_cache_key")) return {};
  return request.layout->prefix_path;
}

}  // namespace llmgate::inline v0
