// The gateway's router, built from the config's "router" section. In mode
// "registry": the registry of the models' routing cards (or a registry
// file), the local task analyser (taught the labelled examples file when
// one is named) and the default preferences. In mode "predictor": a
// predictive_router learned, when the gateway starts, from the labelled
// outcomes file (RouterBench CSV, or dcrouter JSON priced by the config's
// prices), its cost weight chosen for router.target. Also the short
// summary of a decision the x-llmgate-route header carries (the log gets
// decision.reasons()).
#pragma once

#include <cstdio>       // std::snprintf
#include <fstream>      // std::ifstream
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional
#include <string_view>  // std::string_view
#include <exception>    // std::exception (what a registry file that cannot be used throws)
#include <string>       // std::string
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/route/local_analyser.hpp"     // local_analyser, labelled_example
#include "llmgate/route/model_registry.hpp"     // model_registry
#include "llmgate/route/predictive_router.hpp"  // predictive_router, predictive_routing
#include "llmgate/route/preferences.hpp"        // preferences
#include "llmgate/route/router.hpp"             // router, routing_decision
#include "llmgate/route/routing_target.hpp"     // routing_target
#include "llmgate/server/gateway_config.hpp"    // gateway_config, config_error
#include "llmgate/tools/routing_outcomes.hpp"   // read_routerbench, read_dcrouter

namespace llmgate::inline v0 {

/// The router of either mode, as router_stage calls it. A request's own
/// preferences and its thumbs up or down reach the registry router only: a
/// predictor's trade-off is router.target, fixed when it learns.
class gateway_router {
 public:
  explicit gateway_router(std::unique_ptr<router> by_registry)
      : registry_(std::move(by_registry)), description_("registry router over " + std::to_string(registry_->registry().size()) + " models") {}
  gateway_router(predictive_router by_prediction, std::string description)
      : predictor_(std::move(by_prediction)), description_(std::move(description)) {}

  routing_decision route(std::string_view request) const {
    return registry_ ? registry_->route(request) : predictor_->route(request);
  }
  routing_decision route(std::string_view request, const preferences& wanted) const {
    return registry_ ? registry_->route(request, wanted) : predictor_->route(request);
  }
  void feedback(const routing_decision& decision, bool thumbs_up) {
    if (registry_) registry_->feedback(decision, thumbs_up);
  }

  /// The registry router; nullptr in mode "predictor".
  router* registry_router() noexcept { return registry_.get(); }
  /// What the router is and, for a predictor, what it learned: for the log.
  const std::string& description() const noexcept { return description_; }

 private:
  std::unique_ptr<router> registry_;
  std::optional<predictive_router> predictor_;
  std::string description_;
};

namespace detail {

// Mode "predictor" (file comment).
inline std::unique_ptr<gateway_router> make_predictive_router(const gateway_config& config) {
  const auto& settings = *config.router;
  const auto& path = *settings.outcomes;
  routing_dataset outcomes;
  try {
    outcomes = path.extension() == ".csv" ? read_routerbench(path) : read_dcrouter(path, *config.prices);
  } catch (const std::exception& e) {
    refuse("router.outcomes", std::string("cannot be used: ") + e.what());
  }
  for (const auto& model : outcomes.models)
    if (!config.find_model(model))
      refuse("router.outcomes", "has outcomes of model \"" + model + "\", which is not in models");
  const std::size_t count = outcomes.outcomes.size();
  std::optional<predictive_routing> learned;
  try {
    learned.emplace(predictive_routing::learn(outcomes.models, outcomes.outcomes));
  } catch (const std::invalid_argument& e) {
    refuse("router.outcomes", std::string("cannot be learned from: ") + e.what());
  }
  const auto target = routing_target::parse(settings.target);
  auto [predictor, choice] = learned->for_target(target);
  char figures[256];
  std::snprintf(figures, sizeof figures,
                "cost weight %g for %s (out of fold: accuracy %.4f against the best single model's %.4f, "
                "$%.6f a request; %s)",
                choice.weight, target.describe().c_str(), choice.result.accuracy, learned->best_single_accuracy(),
                choice.result.cost, choice.met ? "met" : "not met, the nearest taken");
  return std::make_unique<gateway_router>(std::move(predictor),
                                          "predictor over " + std::to_string(outcomes.models.size()) +
                                              " models learned from " + std::to_string(count) + " outcomes in '" +
                                              path.string() + "': " + figures);
}

}  // namespace detail

/// The router the config describes, or nullptr when it has no "router".
/// `config` has passed gateway_config::check (its preferences and routing
/// cards were read there); what only the files can tell is checked here.
/// Throws config_error naming the field (a registry file that cannot be
/// read or names a model the config lacks, an examples file with a bad
/// line). The gateway calls it when it starts, and so does --check-config.
inline std::unique_ptr<gateway_router> make_gateway_router(const gateway_config& config) {
  if (!config.router) return nullptr;
  if (config.router->mode == "predictor") return detail::make_predictive_router(config);
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

  return std::make_unique<gateway_router>(
      std::make_unique<router>(std::move(registry), std::move(analyser), preferences::parse(settings.preferences)));
}

/// A decision in a few words, for the x-llmgate-route header: the task as
/// the analyser read it and the chosen model's score ("fallback" when no
/// model passed the filters); for a predictor, the chosen model's chance of
/// answering right and its score.
inline std::string route_summary(const routing_decision& decision) {
  if (decision.policy == "predictor") {
    char text[96] = "predictor";
    if (!decision.ranking.empty())
      std::snprintf(text, sizeof text, "predictor; chance right %.3f; score %.3f",
                    static_cast<double>(decision.ranking.front().expected_accuracy),
                    static_cast<double>(decision.ranking.front().score));
    return text;
  }
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
