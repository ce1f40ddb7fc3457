// The KeyPolicy concept (what part of a conversation a cache entry is
// looked up by) and its models.
//
// A follow-up such as "how old is he?" means something only within its
// conversation. A key policy turns a request's messages into the text that
// is embedded and compared, and into the identity of the context the text
// depends on, which joins the cache scope as a hard partition: the same
// follow-up in two different conversations can never hit each other.
#pragma once

#include <concepts>     // std::same_as
#include <cstdint>      // std::uint64_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/chat/chat.hpp"  // chat_message
#include "llmgate/cache/scope.hpp"

namespace llmgate::inline v0 {

/// What a cache looks an entry up by.
struct cache_key {
  hash128 scope;     ///< the request's cache_scope joined with its context
  std::string text;  ///< what is embedded and compared
};

/// Joins a scope hash and the identity of a context into one partition.
inline hash128 join_scope(const hash128& scope, std::string_view context) {
  std::string encoded(reinterpret_cast<const char*>(&scope), sizeof scope);
  encoded += context;
  const XXH128_hash_t hash = XXH3_128bits_withSeed(encoded.data(), encoded.size(), 0x6b6579);
  return {hash.low64, hash.high64};
}

/// key(scope, messages): the key of a request (messages without the system
/// prompt, which belongs to the scope).
template <class K>
concept KeyPolicy = requires(const K& policy, const cache_scope& scope,
                             std::span<const chat_message> messages) {
  { policy.key(scope, messages) } -> std::same_as<cache_key>;
};

/// The last user message is compared; every message before it is the
/// context. First questions share one context (none) across conversations,
/// follow-ups hit only within the same conversation so far.
struct last_user_turn {
  cache_key key(const cache_scope& scope, std::span<const chat_message> messages) const {
    std::size_t last = messages.size();
    while (last > 0 && messages[last - 1].role != "user") --last;
    if (last == 0) return {scope.hash(), {}};
    std::string context;
    for (std::size_t i = 0; i + 1 < last; ++i) append_message(context, messages[i]);
    return {context.empty() ? scope.hash() : join_scope(scope.hash(), context),
            content_text(messages[last - 1])};
  }

  static void append_message(std::string& out, const chat_message& message) {
    out += std::to_string(message.role.size()) + ":" + message.role;
    const std::string& content = content_text(message);
    out += std::to_string(content.size()) + ":" + content;
  }
};

/// The whole conversation is compared as one text; no context.
struct whole_conversation {
  cache_key key(const cache_scope& scope, std::span<const chat_message> messages) const {
    std::string text;
    for (const auto& message : messages) text += message.role + ": " + content_text(message) + "\n";
    return {scope.hash(), std::move(text)};
  }
};

static_assert(KeyPolicy<last_user_turn> && KeyPolicy<whole_conversation>);

}  // namespace llmgate::inline v0
