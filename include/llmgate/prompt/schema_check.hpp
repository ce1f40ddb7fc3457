// finish_schema: checks a schema tree (made by the parser, the builder or
// by hand) and computes its whole_schema, once, for every prompt of it to
// share. The parser has already refused what only markup can get wrong
// (unknown tags and attributes, text in a union); this checks what any
// tree can: names, duplicates, where parameters and role blocks may be.
#pragma once

#include <memory>       // std::make_shared
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <unordered_map>  // std::unordered_map
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "llmgate/prompt/detail/pml_reader.hpp"  // pml_is_name
#include "llmgate/prompt/detail/pml_render.hpp"  // pml_renderer
#include "llmgate/prompt/pml_error.hpp"          // pml_error
#include "llmgate/prompt/schema.hpp"             // the schema tree
#include "llmgate/version.hpp"                   // the inline versioned namespace

namespace llmgate::inline v0 {

namespace detail {

inline bool pml_is_role(std::string_view name) noexcept {
  return name == "system" || name == "user" || name == "assistant";
}

/// " (first at line L, column C)", or "" for a tree made in C++.
inline std::string pml_first_at(source_position at) {
  if (at.line == 0) return {};
  return " (first at line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ")";
}

class schema_checker {
 public:
  void check(const prompt_schema& schema) {
    if (schema.name.empty()) throw pml_error(schema.position, "the schema needs a name");
    declared_names names;
    for (const auto& node : schema.nodes) {
      if (const auto* role = std::get_if<schema_role>(&node.value)) {
        if (!pml_is_role(role->role))
          throw pml_error(role->position, "\"" + role->role + "\" is not a role (system, user or assistant)");
        for (const auto& child : role->children) {
          if (const auto* inner = std::get_if<schema_role>(&child.value))
            throw pml_error(inner->position, "<" + inner->role + "> is allowed only at the top of a schema");
          check_node(child, names, nullptr);
        }
      } else {
        check_node(node, names, nullptr);
      }
    }
  }

 private:
  // The names declared so far in one namespace, to where each was declared.
  using declared_names = std::unordered_map<std::string_view, source_position>;

  static void declare(declared_names& names, const schema_module& module) {
    const auto [seen, fresh] = names.emplace(module.name, module.position);
    if (!fresh)
      throw pml_error(module.position, "duplicate module name \"" + module.name + "\"" + pml_first_at(seen->second));
  }

  // `names`: the modules declared so far in the same namespace; `owner`:
  // the module holding the node (null at the top, where parameters may not be).
  void check_node(const schema_node& node, declared_names& names, const schema_module* owner) {
    if (const auto* module = std::get_if<schema_module>(&node.value)) {
      declare(names, *module);
      check_module(*module);
    } else if (const auto* group = std::get_if<schema_union>(&node.value)) {
      if (group->members.empty()) throw pml_error(group->position, "the <union> holds no <module>");
      bool scaffold_found = group->scaffold.empty();
      for (const auto& member : group->members) {
        declare(names, member);
        check_module(member);
        scaffold_found = scaffold_found || member.name == group->scaffold;
      }
      if (!scaffold_found)
        throw pml_error(group->position, "the union's scaffold \"" + group->scaffold + "\" is not one of its members");
    } else if (const auto* param = std::get_if<schema_param>(&node.value)) {
      if (!owner) throw pml_error(param->position, "<param> is allowed only inside a <module>");
    } else if (const auto* role = std::get_if<schema_role>(&node.value)) {
      throw pml_error(role->position, "<" + role->role + "> is allowed only at the top of a schema");
    }
  }

  void check_module(const schema_module& module) {
    if (!pml_is_name(module.name))
      throw pml_error(module.position, "\"" + module.name +
                                           "\" is not a valid module name (a letter or '_', then letters, digits, "
                                           "'_', '-' and '.')");
    if (pml_is_role(module.name) || module.name == "prompt")
      throw pml_error(module.position, "\"" + module.name + "\" cannot name a module: prompts use <" + module.name +
                                           "> for something else");
    declared_names names;
    declared_names params;
    for (const auto& child : module.children) {
      if (const auto* param = std::get_if<schema_param>(&child.value)) {
        if (!pml_is_name(param->name))
          throw pml_error(param->position, "\"" + param->name + "\" is not a valid parameter name (a letter or '_', "
                                                                "then letters, digits, '_', '-' and '.')");
        if (const auto [seen, fresh] = params.emplace(param->name, param->position); !fresh)
          throw pml_error(param->position, "duplicate parameter name \"" + param->name + "\" in module \"" +
                                               module.name + "\"" + pml_first_at(seen->second));
      }
      check_node(child, names, &module);
    }
  }
};

}  // namespace detail

/// Checks `schema` and sets schema.whole_schema. Throws pml_error naming the
/// node at fault: an invalid, reserved or duplicate module name (a union's
/// members share their parent's names), a duplicate parameter, a parameter
/// outside a module, a role block below the top, an empty union or a
/// scaffold that is not a member.
inline void finish_schema(prompt_schema& schema) {
  detail::schema_checker().check(schema);
  detail::pml_renderer whole(schema, nullptr);
  whole.run();
  schema.whole_schema = std::make_shared<const std::vector<chat_message>>(std::move(whole.messages));
}

}  // namespace llmgate::inline v0
