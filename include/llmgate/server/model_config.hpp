// model_config: one entry of the config's "models", what clients may ask
// for: its backends in fallback order, its mode, the name sent upstream,
// its prices and its routing card; and the prices' reading (a model's
// "prices" and the top-level "prices" table: USD per million tokens).
// That its backends exist is the gateway config's check: it has them.
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <stdexcept>    // std::invalid_argument (from model_registry)
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/serialize.hpp>  // boost::json::serialize (a model's card for the registry check)
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/backend/price_table.hpp"   // price_table, model_price
#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, within, only_known_keys
#include "llmgate/route/model_registry.hpp"  // model_registry (routing cards are checked by it)
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

/// What a model answers: chat completions, or embeddings (/v1/embeddings).
enum class model_mode { chat, embedding };

namespace detail {

inline void check_price(const model_price& price, std::string_view where) {
  within(config_path(where, "input"), price.input, 0.0, 1e6);
  within(config_path(where, "output"), price.output, 0.0, 1e6);
  within(config_path(where, "cached_input"), price.cached_input, 0.0, 1e6);
  within(config_path(where, "cache_write"), price.cache_write, 0.0, 1e6);
}

// A model's "prices" or an entry of the top-level table: USD per million
// tokens, input and output required, the cache's prices the input's when
// not given.
inline model_price read_price(const boost::json::value& value, std::string_view where) {
  using read = config_reader;
  const auto& fields = read::object_at(value, where);
  only_known_keys(fields, where, {"input", "output", "cached_input", "cache_write"});
  for (const std::string_view required : {"input", "output"})
    if (!fields.contains(required)) refuse(config_path(where, required), "must be given (USD per million tokens)");
  model_price price;
  price.input = read::number(fields, "input", where, 0);
  price.output = read::number(fields, "output", where, 0);
  price.cached_input = read::number(fields, "cached_input", where, price.input);
  price.cache_write = read::number(fields, "cache_write", where, price.input);
  check_price(price, where);
  return price;
}

// The fields of a model_registry card (route/model_registry.hpp) a
// model's "routing" may hold; its name is the model's.
inline constexpr std::array<std::string_view, 18> routing_keys = {
    "accuracy", "task_accuracy", "task_samples", "domain_accuracy", "domain_samples", "latency_ms",
    "input_cost_per_million", "output_cost_per_million", "helpfulness", "harmlessness", "honesty",
    "steerability", "creativity", "uptime", "context_length", "task_types", "domains", "generalist"};

}  // namespace detail

struct model_config {
  std::string name;                   ///< what clients ask for
  std::vector<std::string> backends;  ///< names from gateway_config::backends, in fallback order
  model_mode mode = model_mode::chat;  ///< "mode": "chat" (the default) or "embedding"
  std::string upstream_model = {};    ///< sent upstream instead of `name`; empty: `name` (or the backend's model)
  boost::json::object routing = {};   ///< model_registry card fields (name left out); empty: none

  /// The entry at `where`; its "prices" go into `prices`, and stand for
  /// its routing card's costs where the card gives none.
  static model_config read(const boost::json::value& value, std::string_view where, price_table& prices) {
    using read = detail::config_reader;
    const auto* entry = value.if_object();
    if (!entry) detail::refuse(where, "must be a model's name or an object {\"name\", \"backend\", ...}");
    const std::string path(where);
    detail::only_known_keys(*entry, where, {"name", "backend", "mode", "upstream_model", "prices", "routing"});
    model_config model;
    model.name = read::string(*entry, "name", where);
    if (model.name.empty()) detail::refuse(path + ".name", "must be a non-empty string");
    model.backends = read::strings(*entry, "backend", where);
    if (model.backends.empty())
      detail::refuse(path + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
    model.upstream_model = read::string(*entry, "upstream_model", where);
    if (const std::string mode = read::string(*entry, "mode", where); mode == "embedding")
      model.mode = model_mode::embedding;
    else if (!mode.empty() && mode != "chat")
      detail::refuse(path + ".mode", "must be \"chat\" or \"embedding\", not \"" + mode + "\"");
    if (const auto* price = entry->if_contains("prices"); price && !price->is_null())
      prices.set(model.name, detail::read_price(*price, path + ".prices"));
    if (const auto* routing = read::object(*entry, "routing", where)) {
      detail::only_known_keys(*routing, path + ".routing", detail::routing_keys);
      model.routing = *routing;
    }
    if (const auto* price = prices.find(model.name); price && !model.routing.empty()) {
      if (!model.routing.contains("input_cost_per_million")) model.routing["input_cost_per_million"] = price->input;
      if (!model.routing.contains("output_cost_per_million")) model.routing["output_cost_per_million"] = price->output;
    }
    return model;
  }

  /// The entry's own checks: its name, backends named once each, and its
  /// routing card as model_registry reads it (which names the field that
  /// is wrong, after its own prefixes, left out here).
  void check(std::string_view where) const {
    const std::string path(where);
    if (name.empty()) detail::refuse(path + ".name", "must be a non-empty string");
    if (backends.empty()) detail::refuse(path + ".backend", "must name a backend (or a list of them) for \"" + name + "\"");
    if (mode == model_mode::embedding && !routing.empty())
      detail::refuse(path + ".routing", "is for chat models; \"" + name + "\" is an embedding model");
    if (routing.empty()) return;
    boost::json::object card = routing;
    card["name"] = name;
    try {
      (void)model_registry::from_json(boost::json::serialize(boost::json::object{{"models", boost::json::array{card}}}),
                                      "routing");
    } catch (const std::invalid_argument& e) {
      const std::string_view text = e.what();
      const auto cause = text.rfind(": ");
      detail::refuse(path + ".routing:", cause == std::string_view::npos ? text : text.substr(cause + 2));
    }
  }
};

}  // namespace llmgate::inline v0
