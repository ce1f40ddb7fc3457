// parse_schema and parse_prompt: PML markup to the trees of
// prompt/schema.hpp and prompt/prompt_document.hpp. Strict: malformed
// markup, an unknown element or attribute, or a node where it may not be is
// a pml_error naming its line and column; nothing is repaired or skipped.
// The markup is the XML subset of prompt/detail/pml_reader.hpp; text is
// laid out by the white-space rule of prompt/detail/pml_text.hpp.
#pragma once

#include <cstddef>      // std::size_t
#include <filesystem>   // std::filesystem::path
#include <initializer_list>  // std::initializer_list
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "llmgate/prompt/detail/pml_reader.hpp"  // read_pml, xml_element
#include "llmgate/prompt/detail/pml_text.hpp"    // normalize_pml_text
#include "llmgate/prompt/pml_error.hpp"          // pml_error
#include "llmgate/prompt/prompt_document.hpp"    // the prompt tree
#include "llmgate/prompt/schema.hpp"             // the schema tree
#include "llmgate/prompt/schema_check.hpp"       // finish_schema
#include "llmgate/prompt/schema_sources.hpp"     // schema_sources, read_schema_source_bytes
#include "llmgate/version.hpp"                   // the inline versioned namespace

namespace llmgate::inline v0 {

namespace detail {

inline bool pml_blank(std::string_view text) noexcept {
  for (char c : text)
    if (!pml_is_space(c)) return false;
  return true;
}

inline bool pml_is_param_element(const xml_node& node) noexcept {
  const auto* element = std::get_if<xml_element>(&node.value);
  return element && (element->name == "param" || element->name == "parameter");
}

/// Refuses every attribute of `element` not in `known`.
inline void pml_only_attributes(const xml_element& element, std::initializer_list<std::string_view> known) {
  for (const auto& a : element.attributes) {
    bool found = false;
    for (auto k : known) found = found || a.name == k;
    if (!found) throw pml_error(a.at, "unknown attribute " + a.name + " on <" + element.name + ">");
  }
}

inline const xml_attribute& pml_required(const xml_element& element, std::string_view name) {
  const auto* a = element.attribute(name);
  if (!a) throw pml_error(element.at, "<" + element.name + "> needs a " + std::string(name) + " attribute");
  return *a;
}

/// The text child `i` of `parent` laid out: its sides touch a block unless a parameter is beside them.
inline std::string pml_child_text(const xml_element& parent, std::size_t i, const xml_text& text) {
  const bool block_before = i == 0 || !pml_is_param_element(parent.children[i - 1]);
  const bool block_after = i + 1 == parent.children.size() || !pml_is_param_element(parent.children[i + 1]);
  return normalize_pml_text(text.text, block_before, block_after);
}

class schema_reader {
 public:
  explicit schema_reader(schema_sources sources) : sources_(std::move(sources)) {}

  prompt_schema read(const xml_element& root) {
    if (root.name != "schema")
      throw pml_error(root.at, "a schema's root element must be <schema>, not <" + root.name + ">");
    pml_only_attributes(root, {"name", "version"});
    prompt_schema schema;
    schema.name = pml_required(root, "name").value;
    if (const auto* version = root.attribute("version")) schema.version = version->value;
    schema.position = root.at;
    schema.nodes = children(root, place::top);
    return schema;
  }

 private:
  enum class place { top, role, module };
  schema_sources sources_;

  std::vector<schema_node> children(const xml_element& parent, place where) {
    std::vector<schema_node> nodes;
    for (std::size_t i = 0; i < parent.children.size(); ++i) {
      const auto& child = parent.children[i];
      if (const auto* text = std::get_if<xml_text>(&child.value)) {
        std::string laid_out = pml_child_text(parent, i, *text);
        if (!laid_out.empty()) nodes.push_back({schema_text{std::move(laid_out), text->at}});
        continue;
      }
      const auto& element = std::get<xml_element>(child.value);
      if (element.name == "module") {
        nodes.push_back({module(element)});
      } else if (element.name == "union") {
        nodes.push_back({union_of(element)});
      } else if (element.name == "param" || element.name == "parameter") {
        if (where != place::module) throw pml_error(element.at, "<" + element.name + "> is allowed only inside a <module>");
        nodes.push_back({param(element)});
      } else if (pml_is_role(element.name)) {
        if (where != place::top) throw pml_error(element.at, "<" + element.name + "> is allowed only at the top of a schema");
        pml_only_attributes(element, {});
        nodes.push_back({schema_role{element.name, children(element, place::role), element.at}});
      } else {
        throw pml_error(element.at, "unknown element <" + element.name +
                                        "> in a schema (it holds <module>, <union>, <param>, <system>, <user> and "
                                        "<assistant>)");
      }
    }
    return nodes;
  }

  schema_module module(const xml_element& element) {
    pml_only_attributes(element, {"name", "cache", "src"});
    schema_module m;
    m.name = pml_required(element, "name").value;
    m.position = element.at;
    if (const auto* cache = element.attribute("cache")) {
      if (cache->value != "true" && cache->value != "false")
        throw pml_error(cache->at, "cache must be \"true\" or \"false\", not \"" + cache->value + "\"");
      m.cached = cache->value == "true";
    }
    if (const auto* src = element.attribute("src")) {
      for (const auto& child : element.children) {
        const auto* text = std::get_if<xml_text>(&child.value);
        if (!text || !pml_blank(text->text))
          throw pml_error(element.at, "a <module> with src holds nothing else: its text is the file's");
      }
      m.src = src->value;
      std::string text = read_source(sources_, m.src, element.at);
      if (!text.empty()) m.children.push_back({schema_text{std::move(text), element.at}});
      return m;
    }
    m.children = children(element, place::module);
    return m;
  }

  schema_union union_of(const xml_element& element) {
    pml_only_attributes(element, {"scaffold"});
    schema_union u;
    if (const auto* scaffold = element.attribute("scaffold")) u.scaffold = scaffold->value;
    u.position = element.at;
    for (const auto& child : element.children) {
      if (const auto* text = std::get_if<xml_text>(&child.value)) {
        if (!pml_blank(text->text)) throw pml_error(text->at, "text is not allowed in a <union>, only <module>");
        continue;
      }
      const auto& member = std::get<xml_element>(child.value);
      if (member.name != "module")
        throw pml_error(member.at, "a <union> holds only <module> elements, not <" + member.name + ">");
      u.members.push_back(module(member));
    }
    return u;
  }

  static schema_param param(const xml_element& element) {
    pml_only_attributes(element, {"name", "len", "length", "scaffold"});
    schema_param p;
    p.name = pml_required(element, "name").value;
    p.position = element.at;
    const auto* len = element.attribute("len");
    const auto* length = element.attribute("length");
    if (len && length) throw pml_error(length->at, "give len or length, not both");
    if (!len) len = length;
    if (!len)
      throw pml_error(element.at, "<" + element.name + " name=\"" + p.name +
                                      "\"> needs len, the longest argument in tokens");
    bool number = !len->value.empty() && len->value.size() <= 9;
    for (char c : len->value) number = number && c >= '0' && c <= '9';
    if (!number) throw pml_error(len->at, len->name + " must be a number of tokens, not \"" + len->value + "\"");
    p.max_tokens = std::stoul(len->value);
    if (const auto* scaffold = element.attribute("scaffold")) p.scaffold = scaffold->value;
    for (const auto& child : element.children) {
      const auto* text = std::get_if<xml_text>(&child.value);
      if (!text || !pml_blank(text->text))
        throw pml_error(element.at, "<" + element.name + "> holds nothing; close it with />");
    }
    return p;
  }

 public:
  /// The text of a module's src file (schema_sources.hpp), laid out as a block.
  static std::string read_source(const schema_sources& sources, const std::string& src, source_position at) {
    const std::string bytes = read_schema_source_bytes(sources, src, at);
    std::string text;
    text.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] == '\r') {
        text += '\n';
        if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
      } else {
        text += bytes[i];
      }
    }
    return normalize_pml_text(text, true, true);
  }
};

class prompt_reader {
 public:
  prompt_document read(const xml_element& root) {
    if (root.name != "prompt")
      throw pml_error(root.at, "a prompt's root element must be <prompt>, not <" + root.name + ">");
    pml_only_attributes(root, {"schema", "version"});
    prompt_document prompt;
    prompt.schema = pml_required(root, "schema").value;
    if (const auto* version = root.attribute("version")) prompt.version = version->value;
    prompt.position = root.at;
    prompt.nodes = children(root, true);
    return prompt;
  }

 private:
  std::vector<prompt_node> children(const xml_element& parent, bool top) {
    std::vector<prompt_node> nodes;
    for (const auto& child : parent.children) {
      if (const auto* text = std::get_if<xml_text>(&child.value)) {
        std::string laid_out = normalize_pml_text(text->text, true, true);
        if (!laid_out.empty()) nodes.push_back({prompt_text{std::move(laid_out), text->at}});
        continue;
      }
      const auto& element = std::get<xml_element>(child.value);
      if (pml_is_role(element.name)) {
        if (!top) throw pml_error(element.at, "<" + element.name + "> is allowed only at the top of a prompt");
        pml_only_attributes(element, {});
        std::string text;
        for (const auto& inner : element.children) {
          if (const auto* nested = std::get_if<xml_element>(&inner.value))
            throw pml_error(nested->at, "<" + element.name + "> in a prompt holds text only, not <" + nested->name + ">");
          text = normalize_pml_text(std::get<xml_text>(inner.value).text, true, true);
        }
        if (text.empty()) throw pml_error(element.at, "<" + element.name + "> holds no text");
        nodes.push_back({prompt_role{element.name, std::move(text), element.at}});
        continue;
      }
      prompt_import import;
      import.name = element.name;
      import.position = element.at;
      for (const auto& a : element.attributes) import.arguments.push_back({a.name, a.value, a.at});
      import.children = children(element, false);
      nodes.push_back({std::move(import)});
    }
    return nodes;
  }
};

}  // namespace detail

/// Parses a <schema> document, its modules' src= files read from
/// `sources` (none by default). Checks it (finish_schema) and sets its
/// whole_schema. Throws pml_error.
inline prompt_schema parse_schema(std::string_view pml, const schema_sources& sources = {}) {
  prompt_schema schema = detail::schema_reader(sources).read(detail::read_pml(pml));
  finish_schema(schema);
  return schema;
}

/// parse_schema with src= files read from `directory`, at most schema_sources' default size.
inline prompt_schema parse_schema(std::string_view pml, const std::filesystem::path& directory) {
  return parse_schema(pml, schema_sources{directory});
}

/// Parses a <prompt> document. Whether it fits its schema is the
/// compiler's to check (compile_prompt). Throws pml_error.
inline prompt_document parse_prompt(std::string_view pml) {
  return detail::prompt_reader().read(detail::read_pml(pml));
}

}  // namespace llmgate::inline v0
