// prompt_document: the tree of a PML prompt, which imports modules of a
// schema (prompt/schema.hpp) and adds its own text. Made by parse_prompt
// (prompt/pml_parser.hpp) or prompt_builder (prompt/builder.hpp); compiled
// by compile_prompt (prompt/compiler.hpp).
//
//   <prompt schema="travel" version="2">
//     <trip days="3 days">        imports the module trip, argument days
//       <hills/>                  imports trip's member hills (nested imports inside their parent)
//     </trip>
//     Make it slow.               uncached text, kept where it is: after trip
//     <user>Where first?</user>   a role block: a chat message of its own
//   </prompt>
#pragma once

#include <string>   // std::string
#include <variant>  // std::variant
#include <vector>   // std::vector

#include "llmgate/prompt/pml_error.hpp"  // source_position
#include "llmgate/version.hpp"           // the inline versioned namespace

namespace llmgate::inline v0 {

struct prompt_node;

/// Text of the prompt's own: never cached (white-space rule applied).
struct prompt_text {
  std::string text;
  source_position position;

  friend bool operator==(const prompt_text&, const prompt_text&) = default;
};

/// name="value" on an import: the value of the module's parameter `name`.
struct prompt_argument {
  std::string name;
  std::string value;  ///< as written, entities decoded
  source_position position;

  friend bool operator==(const prompt_argument&, const prompt_argument&) = default;
};

/// <name arg="value">...</name>: imports the schema's module `name`.
struct prompt_import {
  std::string name;
  std::vector<prompt_argument> arguments;
  std::vector<prompt_node> children;  ///< nested imports (of this module's modules) and text
  source_position position;

  friend bool operator==(const prompt_import&, const prompt_import&) = default;
};

/// <system>, <user> or <assistant> at the top of a prompt: a chat message of
/// the prompt's own text, after the schema's messages.
struct prompt_role {
  std::string role;
  std::string text;
  source_position position;

  friend bool operator==(const prompt_role&, const prompt_role&) = default;
};

struct prompt_node {
  std::variant<prompt_text, prompt_import, prompt_role> value;

  friend bool operator==(const prompt_node&, const prompt_node&) = default;
};

struct prompt_document {
  std::string schema;              ///< the schema's name
  std::string version;             ///< "" asks for the newest registered version
  std::vector<prompt_node> nodes;  ///< imports, text, role blocks
  source_position position;

  friend bool operator==(const prompt_document&, const prompt_document&) = default;
};

}  // namespace llmgate::inline v0
