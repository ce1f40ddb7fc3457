// prompt_schema: the tree of a PML schema, the document that declares a
// prompt's reusable parts once. Made by parse_schema (prompt/pml_parser.hpp)
// or schema_builder (prompt/builder.hpp); finish_schema
// (prompt/schema_check.hpp) checks it and sets its whole_schema.
//
//   <schema name="travel" version="2">
//     <system>You plan trips.</system>            a role block: a chat message
//     <user>
//       <module name="trip">                      imported by <trip .../>
//         A trip of <param name="days" len="4"/>. a placeholder: an argument of the import
//         <union scaffold="sea">                  at most one member per prompt
//           <module name="sea">By the sea.</module>
//           <module name="hills" src="hills.txt"/> text read from a file
//         </union>
//       </module>
//     </user>
//   </schema>
//
// Text outside modules is in every prompt. Text holds what a prompt will
// hold: the parser has already applied PML's white-space rule
// (prompt/detail/pml_text.hpp).
#pragma once

#include <cstddef>  // std::size_t
#include <memory>   // std::shared_ptr
#include <string>   // std::string
#include <variant>  // std::variant
#include <vector>   // std::vector

#include "llmgate/chat/chat.hpp"         // chat_message
#include "llmgate/prompt/pml_error.hpp"  // source_position
#include "llmgate/version.hpp"           // the inline versioned namespace

namespace llmgate::inline v0 {

struct schema_node;

/// Text that a prompt holds wherever its parent is included.
struct schema_text {
  std::string text;
  source_position position;

  friend bool operator==(const schema_text&, const schema_text&) = default;
};

/// <param name="..." len="N" scaffold="..."/> (or the reference's
/// <parameter name="..." length="N"/>): filled by an argument of the import.
struct schema_param {
  std::string name;
  std::size_t max_tokens = 0;  ///< len: the longest argument, in tokens of the compiler's Tokenizer
  std::string scaffold;        ///< the text standing for it in the whole schema (prompt_layout::whole_schema)
  source_position position;

  friend bool operator==(const schema_param&, const schema_param&) = default;
};

/// <module name="..." cache="false" src="...">: a part a prompt imports by name.
struct schema_module {
  std::string name;
  bool cached = true;                 ///< cache="false": never reused; the cacheable prefix ends where it starts
  std::string src;                    ///< the src attribute as written; its file's text is the first child
  std::vector<schema_node> children;  ///< text, params, modules, unions
  source_position position;

  friend bool operator==(const schema_module&, const schema_module&) = default;
};

/// <union scaffold="member">: modules of which a prompt imports at most one.
struct schema_union {
  std::vector<schema_module> members;
  std::string scaffold;  ///< the member included when the union's parent is and no member is imported ("": none)
  source_position position;

  friend bool operator==(const schema_union&, const schema_union&) = default;
};

/// <system>, <user> or <assistant> at the top of a schema: one chat message.
struct schema_role {
  std::string role;                   ///< "system", "user" or "assistant"
  std::vector<schema_node> children;  ///< text, modules, unions
  source_position position;

  friend bool operator==(const schema_role&, const schema_role&) = default;
};

struct schema_node {
  std::variant<schema_text, schema_param, schema_module, schema_union, schema_role> value;

  friend bool operator==(const schema_node&, const schema_node&) = default;
};

struct prompt_schema {
  std::string name;
  std::string version;             ///< "" where it has none
  std::vector<schema_node> nodes;  ///< text, modules, unions, role blocks; content outside role blocks is a user message
  source_position position;
  /// Every module included, parameters as their scaffolds, each union's
  /// members in schema order, each after the first with its own copy of the
  /// union's lead-in (prompt_layout::whole_schema): computed once by finish_schema (the parser,
  /// the builder and schema_registry::add call it) and shared by every
  /// compiled prompt's layout. After changing a tree by hand, call
  /// finish_schema again.
  std::shared_ptr<const std::vector<chat_message>> whole_schema = {};

  /// Compares names, versions and nodes (whole_schema follows from them).
  friend bool operator==(const prompt_schema& a, const prompt_schema& b) {
    return a.name == b.name && a.version == b.version && a.nodes == b.nodes;
  }
};

}  // namespace llmgate::inline v0
