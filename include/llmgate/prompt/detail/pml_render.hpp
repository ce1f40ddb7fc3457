// pml_render: writes a schema's included parts, in schema order, into chat
// messages, recording where each module lands and where the cacheable
// prefix ends. The compiler (prompt/compiler.hpp) chooses what is included
// and checks the prompt first; finish_schema renders the whole schema.
//
// Layout rules (docs/prompt-modules.md): each role block is one
// message, and the content outside role blocks between them is a user
// message; a message that would be empty is left out. Blocks (modules,
// unions, the prompt's own texts) are joined with one "\n"; text and
// parameter values inside a block are written side by side. The prefix
// ends where the first argument value, prompt text or cache="false"
// module starts, before the "\n" that joins it to what precedes it, so
// that it depends on the imports alone.
//
// The whole schema (selection null) writes each union member after the
// first preceded by a copy of the always-included text that leads into the
// union (the text since the previous module, union or parameter of the same
// parent): a prompt that picks any member then has [lead-in][member] as one
// run in the slot, where a server reusing chunks after a divergence
// (llama.cpp's --cache-reuse, which needs a run of n_cache_reuse tokens)
// finds it, rather than a short heading followed by another member.
#pragma once

#include <cstddef>        // std::size_t
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move
#include <variant>        // std::get_if, std::visit
#include <vector>         // std::vector

#include "llmgate/chat/chat.hpp"                // chat_message
#include "llmgate/prompt/prompt_document.hpp"   // prompt_text, prompt_import, prompt_role
#include "llmgate/prompt/prompt_layout.hpp"     // module_span
#include "llmgate/prompt/schema.hpp"            // the schema tree
#include "llmgate/version.hpp"                  // the inline versioned namespace

namespace llmgate::inline v0::detail {

/// What a prompt includes: every included module (imported, or a union's
/// default member) with its import and the prompt texts anchored to it.
struct pml_selection {
  struct entry {
    const prompt_import* import = nullptr;     ///< null: a union's scaffold member, included by default
    std::unordered_map<std::string_view, const prompt_argument*> arguments;  ///< the import's, by parameter name
    std::vector<const prompt_text*> before;    ///< prompt texts written just before the module
    std::vector<const prompt_text*> after;     ///< ... just after it
    std::vector<const prompt_text*> inside;    ///< ... at its end (its import holds text and no imports)
  };
  std::unordered_map<const schema_module*, entry> modules;
  /// Top-level prompt texts with no import to anchor them, and the prompt's
  /// role blocks, in the author's order: after the schema's messages.
  std::vector<const prompt_node*> tail;
};

class pml_renderer {
 public:
  /// selection null: the whole schema (every module, parameters as scaffolds).
  pml_renderer(const prompt_schema& schema, const pml_selection* selection) : schema_(schema), selection_(selection) {}

  void run() {
    lead_in_texts lead_in;
    for (const auto& node : schema_.nodes) {
      if (const auto* role = std::get_if<schema_role>(&node.value)) {
        close_region();
        open_region(role->role);
        render_children(role->children);
        close_region();
      } else {
        if (!region_open_) open_region("user");
        render(node, lead_in);
      }
      track_lead_in(node, lead_in);
    }
    close_region();
    if (selection_) {
      for (const prompt_node* node : selection_->tail) {
        if (const auto* text = std::get_if<prompt_text>(&node->value)) {
          if (!region_open_) open_region("user");
          write_prompt_text(text->text);
        } else if (const auto* role = std::get_if<prompt_role>(&node->value)) {
          close_region();
          open_region(role->role);
          end_prefix();
          write(role->text);
          close_region();
        }
      }
      close_region();
    }
    // Positions recorded in a message that was left out (all 0) belong to
    // the start of the next; past the last, to the end of the last.
    if (!messages.empty()) {
      const std::size_t last = messages.size() - 1;
      for (auto& span : spans)
        if (span.message > last) span = {span.path, last, messages[last].content.size(), messages[last].content.size(), 0, 0, span.cached};
      if (!prefix_ended_ || prefix_message > last) {
        prefix_message = last;
        prefix_end = messages[last].content.size();
      }
    }
  }

  std::vector<chat_message> messages;
  std::vector<module_span> spans;  ///< token spans left 0: the compiler counts them
  std::size_t prefix_message = 0;
  std::size_t prefix_end = 0;

 private:
  const prompt_schema& schema_;
  const pml_selection* selection_;
  bool region_open_ = false;
  std::string role_;
  std::string content_;
  bool pending_break_ = false;
  std::vector<std::size_t> pending_begins_;  // spans whose first byte is not written yet
  std::string path_;
  bool prefix_ended_ = false;

  void open_region(const std::string& role) {
    role_ = role;
    content_.clear();
    pending_break_ = false;
    region_open_ = true;
  }

  void close_region() {
    if (!region_open_) return;
    region_open_ = false;
    if (!content_.empty()) messages.push_back({role_, std::move(content_)});
    content_.clear();
  }

  void end_prefix() {
    if (prefix_ended_) return;
    prefix_ended_ = true;
    prefix_message = messages.size();
    prefix_end = content_.size();
  }

  void write(std::string_view text) {
    if (text.empty()) return;
    if (pending_break_ && !content_.empty()) content_ += '\n';
    pending_break_ = false;
    for (std::size_t i : pending_begins_) spans[i].begin = content_.size();
    pending_begins_.clear();
    content_ += text;
  }

  void write_prompt_text(const std::string& text) {
    pending_break_ = true;
    end_prefix();
    write(text);
    pending_break_ = true;
  }

  const pml_selection::entry* included(const schema_module& module) const {
    static const pml_selection::entry everything{};
    if (!selection_) return &everything;
    const auto found = selection_->modules.find(&module);
    return found == selection_->modules.end() ? nullptr : &found->second;
  }

  // The texts written since the parent's last module, union or parameter:
  // what leads into a union that follows them.
  using lead_in_texts = std::vector<const std::string*>;

  static void track_lead_in(const schema_node& node, lead_in_texts& lead_in) {
    if (const auto* text = std::get_if<schema_text>(&node.value))
      lead_in.push_back(&text->text);
    else
      lead_in.clear();
  }

  void render_children(const std::vector<schema_node>& children) {
    lead_in_texts lead_in;
    for (const auto& child : children) {
      render(child, lead_in);
      track_lead_in(child, lead_in);
    }
  }

  void render(const schema_node& node, const lead_in_texts& lead_in) {
    if (const auto* text = std::get_if<schema_text>(&node.value)) {
      write(text->text);
    } else if (const auto* module = std::get_if<schema_module>(&node.value)) {
      if (const auto* entry = included(*module)) render_module(*module, *entry);
    } else if (const auto* group = std::get_if<schema_union>(&node.value)) {
      bool first = true;
      for (const auto& member : group->members) {
        const auto* entry = included(member);
        if (!entry) continue;
        if (!selection_ && !first) {  // the whole schema: the member's own copy of the lead-in
          pending_break_ = true;
          for (const std::string* text : lead_in) write(*text);
        }
        first = false;
        render_module(member, *entry);
      }
    }
    // Parameters are written by render_module, which knows the import.
  }

  void render_module(const schema_module& module, const pml_selection::entry& entry) {
    for (const prompt_text* text : entry.before) write_prompt_text(text->text);
    const std::size_t parent_path = path_.size();
    if (!path_.empty()) path_ += '/';
    path_ += module.name;
    const std::size_t index = spans.size();
    spans.push_back({path_, messages.size(), content_.size(), content_.size(), 0, 0, module.cached});
    pending_begins_.push_back(index);
    pending_break_ = true;
    if (!module.cached && selection_) end_prefix();
    lead_in_texts lead_in;
    for (const auto& child : module.children) {
      if (const auto* param = std::get_if<schema_param>(&child.value)) {
        const auto argument = entry.arguments.find(param->name);
        if (argument != entry.arguments.end()) {
          end_prefix();
          write(argument->second->value);
        } else {
          write(param->scaffold);  // constant: the whole schema, or a union's default member
        }
      } else {
        render(child, lead_in);
      }
      track_lead_in(child, lead_in);
    }
    for (const prompt_text* text : entry.inside) write_prompt_text(text->text);
    if (!pending_begins_.empty() && pending_begins_.back() == index) {
      pending_begins_.pop_back();
      spans[index].begin = content_.size();
    }
    spans[index].end = content_.size();
    pending_break_ = true;
    path_.resize(parent_path);
    for (const prompt_text* text : entry.after) write_prompt_text(text->text);
  }
};

}  // namespace llmgate::inline v0::detail
