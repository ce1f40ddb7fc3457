// prompt_statistics: how much of each PML module the model servers reused,
// from what they report (usage.prompt_tokens_details.cached_tokens,
// Anthropic's cache_read_input_tokens, llama.cpp's timings.cache_n), and
// how the llama.cpp slot files fared. One object per gateway, shared by its
// workers and backends; the gateway shows it in /metrics and admin stats.
//
// A server reports one number, the cached tokens of the whole prompt; they
// are shared out over the prompt's tokens from its start (prefix caching
// reuses a prefix). Where a server also reuses chunks after the prefix
// (llama.cpp --cache-reuse), the tokens it reused beyond the prefix are
// counted in the modules that follow it, in order: an estimate of where.
#pragma once

#include <algorithm>  // std::min, std::max
#include <cstdint>    // std::uint64_t
#include <map>        // std::map
#include <mutex>      // std::mutex, std::scoped_lock
#include <string>     // std::string
#include <utility>    // std::pair

#include "llmgate/chat/chat.hpp"               // token_usage
#include "llmgate/prompt/prompt_layout.hpp"    // prompt_layout
#include "llmgate/version.hpp"                 // the inline versioned namespace

namespace llmgate::inline v0 {

struct module_counts {
  std::uint64_t prompts = 0;          ///< prompts that imported it
  std::uint64_t reused_tokens = 0;    ///< its tokens the server did not compute again
  std::uint64_t computed_tokens = 0;  ///< its tokens the server computed
};

struct slot_counts {
  std::uint64_t saved = 0;     ///< schema encodings saved as slot files
  std::uint64_t restored = 0;  ///< slot files restored before a prompt
  std::uint64_t fallbacks = 0; ///< prompts sent with plain prefix caching because slots failed
  std::string last_fallback;   ///< why the last fallback happened ("" if none)
};

class prompt_statistics {
 public:
  /// Module key: schema, version and module path.
  struct module_key {
    std::string schema, version, path;
    auto operator<=>(const module_key&) const = default;
  };

  /// Shares out `usage.cached_prompt_tokens` over `layout`'s modules.
  void record(const prompt_layout& layout, const token_usage& usage) {
    std::scoped_lock lock(mutex_);
    auto& schema = schemas_[{layout.schema, layout.version}];
    ++schema.prompts;
    schema.reused_tokens += usage.cached_prompt_tokens;
    schema.computed_tokens += usage.prompt_tokens - std::min(usage.prompt_tokens, usage.cached_prompt_tokens);
    const std::uint64_t cached = usage.cached_prompt_tokens;
    for (const auto& span : layout.modules) {
      auto& counts = modules_[{layout.schema, layout.version, span.path}];
      ++counts.prompts;
      const std::uint64_t begin = span.token_begin, end = span.token_end;
      const std::uint64_t reused = cached <= begin ? 0 : std::min(cached, end) - begin;
      counts.reused_tokens += reused;
      counts.computed_tokens += (end - begin) - reused;
    }
  }

  void slot_saved() { std::scoped_lock lock(mutex_); ++slots_.saved; }
  void slot_restored() { std::scoped_lock lock(mutex_); ++slots_.restored; }
  void slot_fallback(std::string why) {
    std::scoped_lock lock(mutex_);
    ++slots_.fallbacks;
    slots_.last_fallback = std::move(why);
  }

  /// Copies, for /metrics and admin stats.
  std::map<module_key, module_counts> modules() const { std::scoped_lock lock(mutex_); return modules_; }
  std::map<std::pair<std::string, std::string>, module_counts> schemas() const { std::scoped_lock lock(mutex_); return schemas_; }
  slot_counts slots() const { std::scoped_lock lock(mutex_); return slots_; }

 private:
  mutable std::mutex mutex_;
  std::map<module_key, module_counts> modules_;
  std::map<std::pair<std::string, std::string>, module_counts> schemas_;  ///< by schema and version: whole prompts
  slot_counts slots_;
};

}  // namespace llmgate::inline v0
