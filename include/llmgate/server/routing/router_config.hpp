// router_config: the config's "router" section (routing/gateway_router.hpp
// builds the router from it), read and checked here. That an alias names
// no model and that a registry router has models to route over are the
// gateway config's checks: it has the models.
#pragma once

#include <algorithm>    // std::find
#include <filesystem>   // std::filesystem::path
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument (from preferences::parse, routing_target::parse)
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, only_known_keys
#include "llmgate/route/preferences.hpp"     // preferences::parse (preferences are checked)
#include "llmgate/route/routing_target.hpp"  // routing_target::parse (the target is checked)
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct router_config {
  std::vector<std::string> aliases = {"auto"};        ///< models that ask the router to choose
  /// "registry": the models' ratings weighed by preferences (route/router.hpp);
  /// "predictor": learned from `outcomes` (route/predictive_router.hpp).
  std::string mode = "registry";
  std::string preferences = "balanced";               ///< preferences::parse form (registry)
  std::optional<std::filesystem::path> registry = {};  ///< a model_registry file instead of the models' routing (registry)
  std::optional<std::filesystem::path> examples = {};  ///< labelled requests for the local analyser, JSON lines (registry)
  std::optional<std::filesystem::path> outcomes = {};  ///< RouterBench CSV or dcrouter JSON (predictor)
  std::string target = "match-best";                  ///< routing_target::parse form (predictor)

  /// The section at `where` ("router"); "auto" is always an alias.
  static router_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"aliases", "mode", "preferences", "registry", "examples", "outcomes", "target"});
    router_config r;
    r.mode = read::string(section, "mode", where, r.mode);
    r.target = read::string(section, "target", where, r.target);
    if (const auto outcomes = read::string(section, "outcomes", where); !outcomes.empty()) r.outcomes = outcomes;
    if (section.contains("aliases")) r.aliases = read::strings(section, "aliases", where);
    if (std::find(r.aliases.begin(), r.aliases.end(), "auto") == r.aliases.end()) r.aliases.insert(r.aliases.begin(), "auto");
    r.preferences = read::string(section, "preferences", where, r.preferences);
    if (const auto registry = read::string(section, "registry", where); !registry.empty()) r.registry = registry;
    if (const auto examples = read::string(section, "examples", where); !examples.empty()) r.examples = examples;
    return r;
  }

  void check(std::string_view where) const {
    const auto path = [&](std::string_view key) { return detail::config_path(where, key); };
    for (std::size_t i = 0; i < aliases.size(); ++i)
      if (aliases[i].empty()) detail::refuse(path("aliases") + "[" + std::to_string(i) + "]", "must be a non-empty string");
    if (mode == "predictor") {
      if (!outcomes) detail::refuse(path("outcomes"), "is needed with mode \"predictor\": the outcomes it learns from");
      if (registry || examples)
        detail::refuse(path(registry ? "registry" : "examples"), "is for mode \"registry\"; a predictor learns from router.outcomes");
      try {
        (void)routing_target::parse(target);
      } catch (const std::invalid_argument& e) {
        detail::refuse(path("target"), std::string("cannot be read: ") + e.what());
      }
    } else if (mode == "registry") {
      if (outcomes) detail::refuse(path("outcomes"), "is for mode \"predictor\"");
      try {
        (void)preferences::parse(preferences);
      } catch (const std::invalid_argument& e) {
        detail::refuse(path("preferences"), std::string("cannot be read: ") + e.what());
      }
    } else {
      detail::refuse(path("mode"), "is \"" + mode + "\"; expected \"registry\" or \"predictor\"");
    }
  }
};

}  // namespace llmgate::inline v0
