// prompt_config: the config's "prompt_schemas" (PML schema files, read at
// start by prompt_schemas.hpp, relative to the working directory) and
// "prompt_sources" (where a POSTed schema's src= files may be, and how big
// any src= file may be: prompt/schema_sources.hpp), read and checked here.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <filesystem>   // std::filesystem::path
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, within, only_known_keys
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct prompt_config {
  std::vector<std::filesystem::path> schemas = {};            ///< PML schema files, read at start
  std::optional<std::filesystem::path> admin_directory = {};  ///< src= of POSTed schemas; none: no src
  std::uint64_t source_max_bytes = std::uint64_t{1} << 20;    ///< the largest src= file

  /// "prompt_schemas" and "prompt_sources" of the config's `root`.
  static prompt_config read(const boost::json::object& root) {
    using read = detail::config_reader;
    prompt_config prompts;
    if (const auto* schemas = root.if_contains("prompt_schemas"); schemas && !schemas->is_null()) {
      if (!schemas->is_array()) detail::refuse("prompt_schemas", "must be a list of PML schema files");
      for (const auto& path : read::strings(root, "prompt_schemas", "")) prompts.schemas.emplace_back(path);
    }
    if (const auto* sources = read::object(root, "prompt_sources", "")) {
      detail::only_known_keys(*sources, "prompt_sources", {"admin_directory", "max_bytes"});
      if (sources->contains("admin_directory")) {
        const std::string directory = read::string(*sources, "admin_directory", "prompt_sources");
        if (directory.empty()) detail::refuse("prompt_sources.admin_directory", "must be a non-empty path");
        prompts.admin_directory = directory;
      }
      prompts.source_max_bytes = read::count(*sources, "max_bytes", "prompt_sources", prompts.source_max_bytes);
    }
    return prompts;
  }

  void check() const {
    for (std::size_t i = 0; i < schemas.size(); ++i)
      if (schemas[i].empty()) detail::refuse("prompt_schemas[" + std::to_string(i) + "]", "must be a non-empty path");
    detail::within<std::uint64_t>("prompt_sources.max_bytes", source_max_bytes, 1, std::uint64_t{1} << 30);
    if (admin_directory && admin_directory->empty())
      detail::refuse("prompt_sources.admin_directory", "must be a non-empty path");
  }
};

}  // namespace llmgate::inline v0
