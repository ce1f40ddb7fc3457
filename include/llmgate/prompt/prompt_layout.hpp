// prompt_layout: where a compiled PML prompt's modules lie in the chat
// request it became. The compiler (prompt/compiler.hpp) writes it; the
// backends read it to choose provider cache hints (prompt_cache_key,
// cache_control breakpoints, llama.cpp slots) and the gateway reads it to
// share out the cached tokens a server reports among the modules. The
// caches never read it: a PML prompt and its plain equivalent are the same
// request to them.
#pragma once

#include <cstddef>  // std::size_t
#include <memory>   // std::shared_ptr
#include <string>   // std::string
#include <vector>   // std::vector

#include "llmgate/chat/chat.hpp"  // chat_message
#include "llmgate/version.hpp"    // the inline versioned namespace

namespace llmgate::inline v0 {

/// One imported module of a compiled prompt.
struct module_span {
  std::string path;              ///< the module's names from the schema root, joined by '/': "travel-plan/overseas/maldives"
  std::size_t message = 0;       ///< index of the message holding it in the compiled request
  std::size_t begin = 0;         ///< its first byte in that message's content
  std::size_t end = 0;           ///< one past its last byte (nested modules' bytes included)
  std::size_t token_begin = 0;   ///< its first token, counted from the start of the first message's content
  std::size_t token_end = 0;     ///< one past its last token
  bool cached = true;            ///< false for cache="false" modules
};

struct prompt_layout {
  std::string schema;                ///< the schema's name
  std::string version;               ///< the schema's version ("" where it has none)
  std::vector<module_span> modules;  ///< in the order they appear in the request
  std::size_t prefix_message = 0;    ///< the cacheable prefix ends in this message...
  std::size_t prefix_end = 0;        ///< ...at this byte of its content
  std::size_t prefix_tokens = 0;     ///< the cacheable prefix's length in tokens
  std::size_t total_tokens = 0;      ///< every message's content, in tokens
  std::string prefix_path;           ///< schema, version and the module path up to the first divergence: the prompt_cache_key
  /// The schema with every module imported (parameters as their scaffolds,
  /// each union's members in schema order, each member after the first
  /// preceded by its own copy of the text leading into the union): what a
  /// server encodes once and keeps (llama.cpp slot files). The copies let a
  /// server that reuses chunks after a divergence (--cache-reuse) find every
  /// member together with its lead-in, not just the first. Shared by every
  /// prompt of the schema; prompts themselves carry no copies.
  std::shared_ptr<const std::vector<chat_message>> whole_schema;
};

}  // namespace llmgate::inline v0
