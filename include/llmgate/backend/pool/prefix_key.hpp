// prefix_key: the key under which a pool remembers where a request's
// reusable prefix was last computed (prefix_affinity.hpp).
//
// - A compiled PML prompt: its schema and version. Its prefix_path (the
//   module path up to the first divergence) names one combination of
//   modules, nearly one per prompt where a schema has many (personalization's
//   six unions give 15,625), so keyed on it affinity would scatter prompts
//   that share the schema's head; the replica's own slots find the deeper
//   sharing among the prompts of the schemas it is given.
// - A plain request: its model and the leading messages, the last one left
//   out (the new turn is what differs between requests that share a system
//   prompt or a conversation), cut at `budget_bytes`; a request of one
//   message keys on that message's first `budget_bytes`. Past the budget
//   the bytes tell little more about where the prefix is and cost a hash.
#pragma once

#include <algorithm>    // std::min
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string_view>  // std::string_view

#include "llmgate/chat/chat.hpp"                // chat_request
#include "llmgate/detail/xxhash.hpp"            // XXH3 streaming state
#include "llmgate/prompt/prompt_layout.hpp"     // prompt_layout: schema, version

namespace llmgate::inline v0 {

/// Bytes a token of English text takes, roughly: what turns a budget in
/// tokens into one in bytes without a tokenizer.
inline constexpr std::size_t bytes_per_token_estimate = 4;
/// A budget of 1,024 tokens.
inline constexpr std::size_t default_prefix_budget_bytes = 1024 * bytes_per_token_estimate;

/// The request's prefix key; never 0 (0 is "none" to a policy).
inline std::uint64_t prefix_key(const chat_request& request, std::size_t budget_bytes = default_prefix_budget_bytes) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const auto add = [&](std::string_view bytes) { XXH3_64bits_update(&state, bytes.data(), bytes.size()); };
  add(request.model);
  add(std::string_view("\0", 1));
  if (request.layout && !request.layout->schema.empty()) {
    add("pml");
    add(request.layout->schema);
    add(std::string_view("\0", 1));
    add(request.layout->version);
  } else {
    const std::size_t leading = request.messages.size() > 1 ? request.messages.size() - 1 : request.messages.size();
    std::size_t left = budget_bytes;
    for (std::size_t i = 0; i < leading && left > 0; ++i) {
      const auto& message = request.messages[i];
      add(message.role);
      add(std::string_view("\0", 1));
      const std::string_view text = content_text(message);
      const std::size_t taken = std::min(left, text.size());
      add(text.substr(0, taken));
      add(std::string_view("\0", 1));
      left -= taken;
    }
  }
  const std::uint64_t key = XXH3_64bits_digest(&state);
  return key == 0 ? 1 : key;
}

}  // namespace llmgate::inline v0
