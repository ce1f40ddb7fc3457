// compile_prompt: a PML prompt and its schema to the chat request a model
// server sees, with the layout (prompt/prompt_layout.hpp) that tells the
// backends where its modules are.
//
// Order: the schema's text and the included modules come in schema order,
// whatever order the prompt imports them in, so that prompts importing the
// same modules share the longest prefix. The prompt's own text stays where
// its author put it relative to the imports: text between two imports
// right after the first of them; text before its parent's first import
// just before the first of those modules in schema order, and text after
// the last import just after the last of them (so the modules stay
// together in front); in an import without imports, at the end of its
// module; at the top of a prompt without imports, after the schema's
// messages. Its role blocks become messages after the schema's, in the
// author's order. Role blocks are chat messages for every backend, never
// one model family's text macros.
//
// The cacheable prefix ends where the first argument value, prompt text or
// cache="false" module starts: up to there, the bytes depend on the
// imports alone, so the same imports give byte-identical prefixes.
//
// Checks, each a pml_error with the line and column: the schema named;
// unknown modules (a nested import names a module of its parent's) and
// parameters; a module imported twice; two members of one union; a
// parameter without an argument; an argument longer than its len in the
// Tokenizer's tokens. A union with no member imported includes its
// scaffold member (its parameters as their scaffolds).
#pragma once

#include <algorithm>    // std::ranges::sort, std::ranges::lower_bound, std::unique
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <memory>       // std::make_shared
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <unordered_map>  // std::unordered_map
#include <utility>      // std::move
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "llmgate/chat/chat.hpp"                 // chat_request
#include "llmgate/detail/xxhash.hpp"             // XXH3_64bits
#include "llmgate/prompt/detail/pml_render.hpp"  // pml_renderer, pml_selection
#include "llmgate/prompt/pml_error.hpp"          // pml_error
#include "llmgate/prompt/pml_parser.hpp"         // parse_prompt
#include "llmgate/prompt/prompt_document.hpp"    // prompt_document
#include "llmgate/prompt/prompt_layout.hpp"      // prompt_layout
#include "llmgate/prompt/schema.hpp"             // prompt_schema
#include "llmgate/prompt/schema_check.hpp"       // pml_first_at
#include "llmgate/prompt/schema_registry.hpp"    // schema_registry
#include "llmgate/prompt/tokenizer.hpp"          // Tokenizer
#include "llmgate/version.hpp"                   // the inline versioned namespace

namespace llmgate::inline v0 {

namespace detail {

/// A module a prompt may import at some place, and the union it is a member of (or null).
struct pml_candidate {
  const schema_module* module;
  const schema_union* group;
};

inline void pml_add_candidates(const std::vector<schema_node>& nodes, std::vector<pml_candidate>& out, bool roles) {
  for (const auto& node : nodes) {
    if (const auto* module = std::get_if<schema_module>(&node.value)) {
      out.push_back({module, nullptr});
    } else if (const auto* group = std::get_if<schema_union>(&node.value)) {
      for (const auto& member : group->members) out.push_back({&member, group});
    } else if (const auto* role = std::get_if<schema_role>(&node.value); role && roles) {
      pml_add_candidates(role->children, out, false);
    }
  }
}

template <class T>
class pml_selector {
 public:
  pml_selector(const prompt_schema& schema, const T& tokenizer) : schema_(schema), tokenizer_(tokenizer) {}

  pml_selection select(const prompt_document& prompt) {
    std::vector<pml_candidate> top;
    pml_add_candidates(schema_.nodes, top, true);
    bool imports = false;
    for (const auto& node : prompt.nodes) imports = imports || std::get_if<prompt_import>(&node.value);
    if (imports) {
      resolve(prompt.nodes, top, nullptr, nullptr);
    }
    for (const auto& node : prompt.nodes) {
      if (std::get_if<prompt_role>(&node.value) || (!imports && std::get_if<prompt_text>(&node.value)))
        selection_.tail.push_back(&node);
    }
    add_defaults(schema_.nodes);
    return std::move(selection_);
  }

 private:
  const prompt_schema& schema_;
  const T& tokenizer_;
  pml_selection selection_;

  // Resolves the imports among `children`, which may name `candidates`
  // (in schema order); `parent` is the module whose import holds them
  // (null at the top), `parent_entry` its entry.
  void resolve(const std::vector<prompt_node>& children, const std::vector<pml_candidate>& candidates,
               const schema_module* parent, pml_selection::entry* parent_entry) {
    struct resolved {
      const prompt_import* import;
      const schema_module* module;
      std::size_t order;  // among candidates: schema order
      pml_selection::entry* entry;
    };
    std::vector<resolved> imported;
    // Lookups by name, module and union, so that a prompt's cost grows
    // with its length alone, whatever the schema's size.
    std::unordered_map<std::string_view, std::size_t> order_of;
    for (std::size_t i = 0; i < candidates.size(); ++i) order_of[candidates[i].module->name] = i;
    std::unordered_map<const void*, std::size_t> imported_at;  // a module, or a union, to its entry in `imported`
    for (const auto& child : children) {
      if (const auto* role = std::get_if<prompt_role>(&child.value)) {
        if (parent) throw pml_error(role->position, "<" + role->role + "> is allowed only at the top of a prompt");
        continue;  // the caller puts it in the tail
      }
      const auto* import = std::get_if<prompt_import>(&child.value);
      if (!import) continue;
      const auto order_found = order_of.find(import->name);
      if (order_found == order_of.end())
        throw pml_error(import->position, "unknown module \"" + import->name + "\" in " +
                                              (parent ? "module \"" + parent->name + "\""
                                                      : "schema \"" + schema_.name + "\""));
      const std::size_t order = order_found->second;
      const pml_candidate& found = candidates[order];
      if (const auto twice = imported_at.find(found.module); twice != imported_at.end())
        throw pml_error(import->position, "module \"" + import->name + "\" is imported twice" +
                                              pml_first_at(imported[twice->second].import->position));
      if (const auto member = found.group ? imported_at.find(found.group) : imported_at.end();
          member != imported_at.end())
        throw pml_error(import->position, "\"" + imported[member->second].module->name + "\" and \"" +
                                              import->name + "\" are members of one union: import at most one");
      imported_at[found.module] = imported.size();
      if (found.group) imported_at[found.group] = imported.size();
      auto& entry = selection_.modules[found.module];
      entry.import = import;
      check_arguments(*found.module, *import, entry);
      imported.push_back({import, found.module, order, &entry});
      std::vector<pml_candidate> inner;
      pml_add_candidates(found.module->children, inner, false);
      resolve(import->children, inner, found.module, &entry);
    }
    // Text between two imports follows the first of them; text before the
    // first import precedes the module that comes first, and text after
    // the last follows the module that comes last (schema order), so that
    // the modules stay together in front.
    pml_selection::entry* first = nullptr;
    pml_selection::entry* last = nullptr;
    std::size_t first_order = 0, last_order = 0;
    for (const auto& r : imported) {
      if (!first || r.order < first_order) first = r.entry, first_order = r.order;
      if (!last || r.order > last_order) last = r.entry, last_order = r.order;
    }
    std::size_t seen = 0;  // imports passed
    pml_selection::entry* previous = nullptr;
    for (const auto& child : children) {
      if (std::get_if<prompt_import>(&child.value)) {
        previous = imported[seen++].entry;
        continue;
      }
      const auto* text = std::get_if<prompt_text>(&child.value);
      if (!text) continue;
      if (imported.empty()) {
        if (parent_entry) parent_entry->inside.push_back(text);  // at the top: the caller's tail
      } else if (seen == 0) {
        first->before.push_back(text);
      } else if (seen == imported.size()) {
        last->after.push_back(text);
      } else {
        previous->after.push_back(text);
      }
    }
  }

  // Checks `import`'s arguments against `module`'s parameters and files them in `entry`.
  void check_arguments(const schema_module& module, const prompt_import& import, pml_selection::entry& entry) const {
    std::unordered_map<std::string_view, const schema_param*> params;
    for (const auto& child : module.children)
      if (const auto* p = std::get_if<schema_param>(&child.value)) params[p->name] = p;
    for (const auto& argument : import.arguments) {
      if (!entry.arguments.emplace(argument.name, &argument).second)  // only a built tree can: markup refuses it
        throw pml_error(argument.position, "the argument " + argument.name + " is given twice");
      const auto param = params.find(argument.name);
      if (param == params.end())
        throw pml_error(argument.position,
                        "module \"" + module.name + "\" has no parameter \"" + argument.name + "\"");
      const std::size_t tokens = static_cast<std::size_t>(tokenizer_.count(argument.value));
      if (tokens > param->second->max_tokens)
        throw pml_error(argument.position, "the argument " + argument.name + " is " + std::to_string(tokens) +
                                               " tokens long; its parameter allows " +
                                               std::to_string(param->second->max_tokens));
    }
    for (const auto& child : module.children) {
      const auto* param = std::get_if<schema_param>(&child.value);
      if (param && !entry.arguments.contains(param->name))
        throw pml_error(import.position,
                        "module \"" + module.name + "\" needs an argument for its parameter \"" + param->name + "\"");
    }
  }

  // A union of an included parent with no member imported includes its scaffold member.
  void add_defaults(const std::vector<schema_node>& nodes) {
    for (const auto& node : nodes) {
      if (const auto* module = std::get_if<schema_module>(&node.value)) {
        if (selection_.modules.contains(module)) add_defaults(module->children);
      } else if (const auto* group = std::get_if<schema_union>(&node.value)) {
        const schema_module* chosen = nullptr;
        for (const auto& member : group->members)
          if (selection_.modules.contains(&member)) chosen = &member;
        if (!chosen)
          for (const auto& member : group->members)
            if (member.name == group->scaffold) {
              chosen = &member;
              selection_.modules[chosen];
            }
        if (chosen) add_defaults(chosen->children);
      } else if (const auto* role = std::get_if<schema_role>(&node.value)) {
        add_defaults(role->children);
      }
    }
  }
};

/// OpenAI refuses a prompt_cache_key longer than this.
inline constexpr std::size_t pml_prefix_path_limit = 64;

/// prompt_cache_key: "name@version:" then the deepest paths among the
/// modules that start inside the prefix, joined by ';'
/// ("reading@1:plan/history;notes"). A key longer than 64 bytes keeps its
/// first 47 (whole characters) and adds '#' and 16 hex digits of the whole
/// key's XXH3 hash, so that it stays distinct and usable.
inline std::string pml_prefix_path(const prompt_schema& schema, const std::vector<module_span>& spans,
                                   std::size_t prefix_message, std::size_t prefix_end) {
  std::string key = schema.name;
  if (!schema.version.empty()) key += "@" + schema.version;
  std::vector<const module_span*> inside;
  for (const auto& span : spans)
    if (span.message < prefix_message || (span.message == prefix_message && span.begin < prefix_end))
      inside.push_back(&span);
  bool first = true;
  for (std::size_t i = 0; i < inside.size(); ++i) {
    const std::string& path = inside[i]->path;
    if (i + 1 < inside.size() && inside[i + 1]->path.size() > path.size() &&
        inside[i + 1]->path.compare(0, path.size(), path) == 0 && inside[i + 1]->path[path.size()] == '/')
      continue;  // its child follows and names it
    key += first ? ':' : ';';
    key += path;
    first = false;
  }
  if (key.size() <= pml_prefix_path_limit) return key;
  const std::uint64_t hash = XXH3_64bits(key.data(), key.size());
  std::size_t keep = pml_prefix_path_limit - 17;
  while (keep > 0 && (static_cast<unsigned char>(key[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
  std::string shortened = key.substr(0, keep) + '#';
  static constexpr char hex[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) shortened += hex[(hash >> shift) & 15];
  return shortened;
}

}  // namespace detail

/// Compiles `prompt` against `schema` (which must be the one it names):
/// the request's messages and its layout; model, stream and parameters are
/// left empty. Token spans are counted with `tokenizer` from the start of
/// the first message's content. Throws pml_error.
template <Tokenizer T>
chat_request compile_prompt(const prompt_schema& schema, const prompt_document& prompt, const T& tokenizer) {
  if (prompt.schema != schema.name)
    throw pml_error(prompt.position,
                    "the prompt is for schema \"" + prompt.schema + "\", not \"" + schema.name + "\"");
  if (!prompt.version.empty() && prompt.version != schema.version)
    throw pml_error(prompt.position, "the prompt is for version \"" + prompt.version + "\" of schema \"" +
                                         schema.name + "\", not \"" + schema.version + "\"");
  const detail::pml_selection selection = detail::pml_selector<T>(schema, tokenizer).select(prompt);
  detail::pml_renderer renderer(schema, &selection);
  renderer.run();
  if (renderer.messages.empty()) throw pml_error(prompt.position, "the prompt compiles to no text");

  auto layout = std::make_shared<prompt_layout>();
  layout->schema = schema.name;
  layout->version = schema.version;
  // Tokens before each message's content, then within it: every offset a
  // span or the prefix ends at, counted in one pass over its message.
  std::vector<std::size_t> base(renderer.messages.size() + 1, 0);
  std::vector<std::vector<std::size_t>> offsets(renderer.messages.size());
  for (const auto& span : renderer.spans) {
    offsets[span.message].push_back(span.begin);
    offsets[span.message].push_back(span.end);
  }
  offsets[renderer.prefix_message].push_back(renderer.prefix_end);
  std::vector<std::vector<std::size_t>> counts(renderer.messages.size());
  for (std::size_t m = 0; m < renderer.messages.size(); ++m) {
    std::ranges::sort(offsets[m]);
    offsets[m].erase(std::unique(offsets[m].begin(), offsets[m].end()), offsets[m].end());
    const std::string_view content = renderer.messages[m].content;
    offsets[m].push_back(content.size());  // the whole message, last
    counts[m] = count_prefix_tokens(tokenizer, content, offsets[m]);
    base[m + 1] = base[m] + counts[m].back();
  }
  const auto tokens_at = [&](std::size_t message, std::size_t byte) {
    const auto& at = offsets[message];
    return base[message] + counts[message][static_cast<std::size_t>(std::ranges::lower_bound(at, byte) - at.begin())];
  };
  for (auto& span : renderer.spans) {
    span.token_begin = tokens_at(span.message, span.begin);
    span.token_end = tokens_at(span.message, span.end);
  }
  layout->prefix_message = renderer.prefix_message;
  layout->prefix_end = renderer.prefix_end;
  layout->prefix_tokens = tokens_at(renderer.prefix_message, renderer.prefix_end);
  layout->total_tokens = base.back();
  layout->prefix_path =
      detail::pml_prefix_path(schema, renderer.spans, renderer.prefix_message, renderer.prefix_end);
  layout->modules = std::move(renderer.spans);
  if (schema.whole_schema) {
    layout->whole_schema = schema.whole_schema;
  } else {  // a tree finish_schema has not seen
    detail::pml_renderer whole(schema, nullptr);
    whole.run();
    layout->whole_schema = std::make_shared<const std::vector<chat_message>>(std::move(whole.messages));
  }

  chat_request request;
  request.messages = std::move(renderer.messages);
  request.layout = std::move(layout);
  return request;
}

/// Parses `prompt_pml`, finds the schema (and version) it names in
/// `registry` and compiles it. Throws pml_error, "unknown schema" included.
template <Tokenizer T>
chat_request compile_prompt(const schema_registry& registry, std::string_view prompt_pml, const T& tokenizer) {
  const prompt_document prompt = parse_prompt(prompt_pml);
  const auto schema = registry.find(prompt.schema, prompt.version);
  if (!schema)
    throw pml_error(prompt.position, "unknown schema \"" + prompt.schema + "\"" +
                                         (prompt.version.empty() ? "" : " version \"" + prompt.version + "\""));
  return compile_prompt(*schema, prompt, tokenizer);
}

}  // namespace llmgate::inline v0
