// The gateway's router, built from the config's "router" section: the
// registry of the models' routing cards (or a registry file), the local
// task analyser (taught the labelled examples file when one is named) and
// the default preferences. Also the short summary of a decision the
// x-llmgate-route header carries (the log gets decision.reasons()).
#pragma once

#include <cstdio>       // std::snprintf
#include <fstream>      // std::ifstream
#include <memory>       // std::unique_ptr
#include <exception>    // std::exception (what a registry file that cannot be used throws)
#include <string>       // std::string
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/route/local_analyser.hpp"   // local_analyser, labelled_example
#include "llmgate/route/model_registry.hpp"   // model_registry
#include "llmgate/route/preferences.hpp"      // preferences
#include "llmgate/route/router.hpp"           // router, routing_decision
#include "llmgate/server/config.hpp"          // gateway_config, config_error

namespace llmgate::inline v0 {

using gateway_router = router;

/// The router the config describes, or nullptr when it has no "router".
/// `config` has passed gateway_config::check (its preferences and routing
/// cards were read there); what only the files can tell is checked here.
/// Throws config_error naming the field (a registry file that cannot be
/// read or names a model the config lacks, an examples file with a bad
/// line). The gateway calls it when it starts, and so does --check-config.
inline std::unique_ptr<gateway_router> make_gateway_router(const gateway_config& config) {
  if (!config.router) return nullptr;
  const auto& settings = *config.router;
  const auto refuse = [](const std::string& field, const std::string& what) -> void { detail::refuse(field, what); };

  model_registry registry;
  try {
    if (settings.registry) {
      registry = model_registry::load(*settings.registry);
    } else {
      boost::json::array cards;
      for (const auto& model : config.models) {
        if (model.routing.empty()) continue;
        boost::json::object card = model.routing;
        card["name"] = model.name;
        cards.push_back(std::move(card));
      }
      registry = model_registry::from_json(boost::json::serialize(boost::json::object{{"models", std::move(cards)}}),
                                           "config: models[].routing");
    }
  } catch (const std::exception& e) {
    refuse(settings.registry ? "router.registry" : "models[].routing", std::string("cannot be used: ") + e.what());
  }
  if (registry.empty()) refuse("router", "has no models to route over");
  for (std::size_t m = 0; m < registry.size(); ++m)
    if (!config.find_model(registry.card(m).name))
      refuse("router.registry", "names model \"" + registry.card(m).name + "\", which is not in models");

  local_analyser analyser;
  if (settings.examples) {
    std::ifstream in(*settings.examples, std::ios::binary);
    if (!in) refuse("router.examples", "cannot read '" + settings.examples->string() + "'");
    std::vector<labelled_example> examples;
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = "router.examples line " + std::to_string(number);
      boost::system::error_code ec;
      const auto value = boost::json::parse(line, ec);
      const auto* object = value.if_object();
      const auto* text = object ? object->if_contains("text") : nullptr;
      if (ec || !text || !text->is_string()) refuse(where, "must be an object with a \"text\" string");
      labelled_example example{std::string(text->get_string()), {}, {}, {}, {}};
      if (const auto* task = object->if_contains("task_type"); task && task->is_string()) example.task_type = task->get_string();
      if (const auto* domain = object->if_contains("domain"); domain && domain->is_string()) example.domain = domain->get_string();
      if (const auto* complexity = object->if_contains("complexity"); complexity && complexity->is_number())
        example.complexity = complexity->to_number<float>();
      if (const auto* outcomes = object->if_contains("outcomes"); outcomes && outcomes->is_object())
        for (const auto& [model, score] : outcomes->get_object()) {
          if (!score.is_number()) refuse(where, "outcome of \"" + std::string(model) + "\" must be a number");
          example.outcomes.emplace_back(std::string(model), score.to_number<float>());
        }
      examples.push_back(std::move(example));
    }
    analyser.learn(examples);
  }

  return std::make_unique<gateway_router>(std::move(registry), std::move(analyser),
                                          preferences::parse(settings.preferences));
}

/// A decision in a few words, for the x-llmgate-route header: the task as
/// the analyser read it and the chosen model's score ("fallback" when no
/// model passed the filters).
inline std::string route_summary(const routing_decision& decision) {
  char score[32] = "";
  if (!decision.ranking.empty())
    std::snprintf(score, sizeof score, "; score %.3f", static_cast<double>(decision.ranking.front().score));
  char complexity[32];
  std::snprintf(complexity, sizeof complexity, "%.2f", static_cast<double>(decision.task.complexity));
  std::string summary = "task " + (decision.task.task_type.empty() ? std::string("unknown") : decision.task.task_type) +
                        "; domain " + (decision.task.domain.empty() ? std::string("unknown") : decision.task.domain) +
                        "; complexity " + complexity + score;
  if (decision.fallback) summary += "; fallback";
  return summary;
}

}  // namespace llmgate::inline v0
