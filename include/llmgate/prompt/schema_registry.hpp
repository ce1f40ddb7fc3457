// schema_registry: the PML schemas a gateway knows, by name and version.
// Gateway workers compile prompts against it while an admin adds schemas,
// so it is guarded by a shared_mutex and hands out shared_ptr<const>: a
// schema, once added, never changes. A changed schema is a new version; the
// same name and version again with other content is refused, so a prompt
// never gets a module from a schema other than the one it names.
#pragma once

#include <functional>    // std::less
#include <map>           // std::map
#include <memory>        // std::shared_ptr, std::make_shared
#include <mutex>         // std::unique_lock
#include <shared_mutex>  // std::shared_mutex, std::shared_lock
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::pair, std::move
#include <vector>        // std::vector

#include "llmgate/prompt/pml_error.hpp"     // pml_error
#include "llmgate/prompt/schema.hpp"        // prompt_schema
#include "llmgate/prompt/schema_check.hpp"  // finish_schema
#include "llmgate/version.hpp"              // the inline versioned namespace

namespace llmgate::inline v0 {

class schema_registry {
 public:
  /// Adds `schema` (checked again, whole_schema computed again, so that a
  /// tree changed by hand cannot bring a stale one). Adding the same name
  /// and version with the same content again does nothing; with other
  /// content it throws pml_error.
  void add(prompt_schema schema) {
    finish_schema(schema);
    auto added = std::make_shared<const prompt_schema>(std::move(schema));
    std::unique_lock lock(mutex_);
    auto& versions = schemas_[added->name];
    for (const auto& existing : versions) {
      if (existing->version != added->version) continue;
      if (*existing == *added) return;
      throw pml_error(added->position, "schema \"" + added->name + "\" " +
                                           (added->version.empty() ? std::string("(no version)")
                                                                   : "version \"" + added->version + "\"") +
                                           " is already registered with other content: give the change a new version");
    }
    versions.push_back(std::move(added));
  }

  /// The schema `name` at `version`; "" asks for the version added last.
  /// Null when there is none.
  std::shared_ptr<const prompt_schema> find(std::string_view name, std::string_view version = {}) const {
    std::shared_lock lock(mutex_);
    const auto found = schemas_.find(name);
    if (found == schemas_.end() || found->second.empty()) return nullptr;
    if (version.empty()) return found->second.back();
    for (const auto& schema : found->second)
      if (schema->version == version) return schema;
    return nullptr;
  }

  /// (name, version) of every schema: by name, each name's versions in the order added.
  std::vector<std::pair<std::string, std::string>> list() const {
    std::shared_lock lock(mutex_);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, versions] : schemas_)
      for (const auto& schema : versions) out.emplace_back(name, schema->version);
    return out;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::string, std::vector<std::shared_ptr<const prompt_schema>>, std::less<>> schemas_;
};

}  // namespace llmgate::inline v0
