// prompt_schemas: the PML schemas of a gateway config's "prompt_schemas"
// files, read and validated into the gateway's schema_registry at start
// (and by --check-config), each file's src= paths relative to the file.
// A file that cannot be read, is not a valid schema, or repeats another's
// name and version with other text stops the start with a config_error
// naming its entry.
#pragma once

#include <cstddef>     // std::size_t
#include <filesystem>  // std::filesystem::path
#include <fstream>     // std::ifstream
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string

#include "llmgate/prompt/pml_error.hpp"        // pml_error
#include "llmgate/prompt/pml_parser.hpp"       // parse_schema
#include "llmgate/prompt/schema_registry.hpp"  // schema_registry
#include "llmgate/config/config_reader.hpp"    // detail::refuse
#include "llmgate/server/prompt_config.hpp"    // prompt_config

namespace llmgate::inline v0 {

/// Adds the schemas of `prompts.schemas` to `registry`, in order.
/// Throws config_error naming the entry: "config: prompt_schemas[1]
/// cannot be used: 'support.xml', line 4, column 7: ...".
inline void load_prompt_schemas(const prompt_config& prompts, schema_registry& registry) {
  for (std::size_t i = 0; i < prompts.schemas.size(); ++i) {
    const std::filesystem::path& path = prompts.schemas[i];
    const std::string where = "prompt_schemas[" + std::to_string(i) + "]";
    std::ifstream in(path, std::ios::binary);
    if (!in) detail::refuse(where, "cannot read '" + path.string() + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    try {
      const auto directory = path.parent_path();  // src= files stay inside the schema file's directory
      registry.add(parse_schema(text, schema_sources{.directory = directory.empty() ? "." : directory,
                                                     .max_bytes = prompts.source_max_bytes}));
    } catch (const pml_error& e) {
      detail::refuse(where, "cannot be used: '" + path.string() + "', " + e.what());
    }
  }
}

}  // namespace llmgate::inline v0
