// schema_builder and prompt_builder: the trees of prompt/schema.hpp and
// prompt/prompt_document.hpp made in C++ rather than parsed from markup.
// A builder opens an element (module, union, role block, import), adds to
// it, and end() closes it; build() returns the tree. A built tree equals
// the parsed one of the same content (== ignores source positions), and
// text goes in as given: the white-space rule is the parser's, for markup.
//
//   prompt_schema travel = schema_builder("travel", "2")
//       .system("You plan trips.")
//       .user().module("trip").text("A trip of ").param("days", 4).text(".")
//           .union_("sea").module("sea").text("By the sea.").end()
//                         .module("hills").text("In the hills.").end().end()
//       .end().end().build();
//   prompt_document p = prompt_builder("travel").module("trip").arg("days", "3 days")
//       .module("hills").end().end().user("Where first?").build();
#pragma once

#include <cstddef>     // std::size_t
#include <filesystem>  // std::filesystem::path
#include <string>      // std::string
#include <utility>     // std::move
#include <variant>     // std::get
#include <vector>      // std::vector

#include "llmgate/prompt/pml_error.hpp"        // pml_error
#include "llmgate/prompt/pml_parser.hpp"       // detail::schema_reader::read_source
#include "llmgate/prompt/prompt_document.hpp"  // the prompt tree
#include "llmgate/prompt/schema.hpp"           // the schema tree
#include "llmgate/prompt/schema_check.hpp"     // finish_schema
#include "llmgate/version.hpp"                 // the inline versioned namespace

namespace llmgate::inline v0 {

/// Builds a prompt_schema. Misuse (text in a union, end() with nothing
/// open, build() with something open) throws pml_error; what the schema
/// must satisfy is checked by build() (finish_schema).
class schema_builder {
 public:
  explicit schema_builder(std::string name, std::string version = {}) {
    schema_.name = std::move(name);
    schema_.version = std::move(version);
  }

  /// Text, as the prompt will hold it.
  schema_builder& text(std::string text) {
    add({schema_text{std::move(text), {}}}, "text");
    return *this;
  }
  /// <param name len scaffold/>.
  schema_builder& param(std::string name, std::size_t max_tokens, std::string scaffold = {}) {
    add({schema_param{std::move(name), max_tokens, std::move(scaffold), {}}}, "a <param>");
    return *this;
  }
  /// Opens <module name cache>.
  schema_builder& module(std::string name, bool cached = true) {
    schema_module m;
    m.name = std::move(name);
    m.cached = cached;
    if (!open_.empty() && open_.back().group) {
      auto& member = open_.back().group->members.emplace_back(std::move(m));
      open_.push_back({&member.children, nullptr, &member, "module"});
    } else {
      auto& added = std::get<schema_module>(add({std::move(m)}, "").value);
      open_.push_back({&added.children, nullptr, &added, "module"});
    }
    return *this;
  }
  /// A whole <module name src cached/>: its text read now from `src` under
  /// `directory`, as the parser does (schema_sources.hpp).
  schema_builder& module_from_file(std::string name, std::string src, const std::filesystem::path& directory = ".",
                                   bool cached = true) {
    std::string content = detail::schema_reader::read_source(schema_sources{directory}, src, {});
    module(std::move(name), cached);
    open_.back().module->src = std::move(src);
    if (!content.empty()) text(std::move(content));
    return end();
  }
  /// Opens <union scaffold>.
  schema_builder& union_(std::string scaffold = {}) {
    auto& node = add({schema_union{{}, std::move(scaffold), {}}}, "a <union>");
    open_.push_back({nullptr, &std::get<schema_union>(node.value), nullptr, "union"});
    return *this;
  }
  /// Opens a role block.
  schema_builder& system() { return role("system"); }
  schema_builder& user() { return role("user"); }
  schema_builder& assistant() { return role("assistant"); }
  /// A role block of one text.
  schema_builder& system(std::string text) { return role("system").text(std::move(text)).end(); }
  schema_builder& user(std::string text) { return role("user").text(std::move(text)).end(); }
  schema_builder& assistant(std::string text) { return role("assistant").text(std::move(text)).end(); }

  /// Closes the innermost open element.
  schema_builder& end() {
    if (open_.empty()) throw pml_error({}, "end() with no element open");
    open_.pop_back();
    return *this;
  }

  /// The schema, checked (finish_schema). Throws pml_error.
  prompt_schema build() {
    if (!open_.empty()) throw pml_error({}, "build() with a <" + std::string(open_.back().tag) + "> still open");
    prompt_schema schema = schema_;
    finish_schema(schema);
    return schema;
  }

 private:
  struct open_element {
    std::vector<schema_node>* children;  // null for a union
    schema_union* group;                 // the open union, else null
    schema_module* module;               // the open module, else null
    const char* tag;
  };
  prompt_schema schema_;
  std::vector<open_element> open_;

  schema_node& add(schema_node node, const char* what) {
    if (!open_.empty() && open_.back().group)
      throw pml_error({}, std::string("a <union> holds only modules, not ") + what);
    auto& children = open_.empty() ? schema_.nodes : *open_.back().children;
    children.push_back(std::move(node));
    return children.back();
  }

  schema_builder& role(const char* name) {
    auto& node = add({schema_role{name, {}, {}}}, "a role block");
    open_.push_back({&std::get<schema_role>(node.value).children, nullptr, nullptr, name});
    return *this;
  }
};

/// Builds a prompt_document.
class prompt_builder {
 public:
  explicit prompt_builder(std::string schema, std::string version = {}) {
    prompt_.schema = std::move(schema);
    prompt_.version = std::move(version);
  }

  /// Opens an import of the module `name` (of the schema, or of the open import's module).
  prompt_builder& module(std::string name) {
    prompt_import import;
    import.name = std::move(name);
    auto& children = current();
    children.push_back({std::move(import)});
    open_.push_back(&std::get<prompt_import>(children.back().value));
    return *this;
  }
  /// An argument of the open import.
  prompt_builder& arg(std::string name, std::string value) {
    if (open_.empty()) throw pml_error({}, "arg() with no import open");
    open_.back()->arguments.push_back({std::move(name), std::move(value), {}});
    return *this;
  }
  /// The prompt's own text, uncached, where it is.
  prompt_builder& text(std::string text) {
    current().push_back({prompt_text{std::move(text), {}}});
    return *this;
  }
  /// A role block (at the top only): a message after the schema's.
  prompt_builder& system(std::string text) { return role("system", std::move(text)); }
  prompt_builder& user(std::string text) { return role("user", std::move(text)); }
  prompt_builder& assistant(std::string text) { return role("assistant", std::move(text)); }

  /// Closes the open import.
  prompt_builder& end() {
    if (open_.empty()) throw pml_error({}, "end() with no import open");
    open_.pop_back();
    return *this;
  }

  prompt_document build() const {
    if (!open_.empty()) throw pml_error({}, "build() with the import of \"" + open_.back()->name + "\" still open");
    return prompt_;
  }

 private:
  prompt_document prompt_;
  std::vector<prompt_import*> open_;

  std::vector<prompt_node>& current() { return open_.empty() ? prompt_.nodes : open_.back()->children; }

  prompt_builder& role(const char* name, std::string text) {
    if (!open_.empty()) throw pml_error({}, std::string("<") + name + "> is allowed only at the top of a prompt");
    prompt_.nodes.push_back({prompt_role{name, std::move(text), {}}});
    return *this;
  }
};

}  // namespace llmgate::inline v0
