// model_registry: the models a router may choose from, each with its raw
// metrics as published or measured, and the same metrics normalised so
// that they can be weighed against each other.
//
// Normalisation (every rating 0..1, higher is better), across the models of
// the registry:
//   - accuracy: (a - lo) / (hi - lo), where lo and hi are the lowest and
//     highest accuracy figures anywhere in the registry (overall, per task
//     type and per domain), so that every figure maps into 0..1 on one
//     scale and a model's accuracy at a task compares with its accuracy
//     overall;
//   - cost and latency: inverted on a log scale, (log hi - log x) / (log hi
//     - log lo): prices and latencies span orders of magnitude, and halving
//     either is worth the same anywhere on the scale. Cost is the blended
//     price of 3 input tokens to 1 output token, as price comparisons
//     commonly quote it; prices below $0.001 per million tokens and
//     latencies below 1 ms count as those floors;
//   - helpfulness, harmlessness, honesty, steerability, creativity: linear,
//     (x - lo) / (hi - lo), whatever scale they are given on (1..10, 0..1);
// a metric that every model shares rates 1 for all; a metric a model lacks
// rates 0.5, neither good nor bad.
//
// JSON form (load() and from_json()); every field but "name" is optional:
//   {"models": [{"name": "gpt-4o-mini", "backend": "openai",
//                "accuracy": 0.82, "task_accuracy": {"coding": 0.87},
//                "task_samples": {"coding": 120},
//                "domain_accuracy": {"medicine": 0.74},
//                "latency_ms": 450, "input_cost_per_million": 0.15,
//                "output_cost_per_million": 0.6, "helpfulness": 8.1,
//                "harmlessness": 8.8, "honesty": 8.2, "steerability": 7.9,
//                "creativity": 7.0, "uptime": 0.999, "context_length": 128000,
//                "task_types": ["coding", "math"], "domains": ["programming"],
//                "generalist": true}]}
// Accuracies and uptime are fractions 0..1. Tags (task_types, domains) say
// what a model is meant for: a model with task-type tags serves only those
// task types, and likewise for domains; a model without tags serves all.
#pragma once

#include <algorithm>     // std::clamp, std::find, std::max, std::min
#include <array>         // std::array
#include <cmath>         // std::isfinite, std::log
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint32_t
#include <filesystem>    // std::filesystem::path
#include <fstream>       // std::ifstream
#include <functional>    // std::less, std::equal_to
#include <iterator>      // std::istreambuf_iterator
#include <limits>        // std::numeric_limits
#include <map>           // std::map
#include <optional>      // std::optional
#include <stdexcept>     // std::invalid_argument
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value, object, array
#include <boost/unordered/unordered_flat_map.hpp>  // task type and domain names -> ids

#include "llmgate/detail/name_set.hpp"  // string_hash
#include "llmgate/error.hpp"
#include "llmgate/route/quality.hpp"

namespace llmgate::inline v0 {

/// One model as its provider or a measurement describes it: raw metrics,
/// absent where unknown.
struct model_card {
  std::string name;
  std::string backend;  ///< which configured backend serves it; empty: the default one
  std::optional<double> accuracy;                              ///< overall, 0..1
  std::map<std::string, double, std::less<>> task_accuracy;    ///< by task type, 0..1
  std::map<std::string, double, std::less<>> domain_accuracy;  ///< by domain, 0..1
  /// How many requests a task_accuracy / domain_accuracy figure was
  /// measured on; absent: unknown, the figure is taken as it is.
  std::map<std::string, double, std::less<>> task_samples;
  std::map<std::string, double, std::less<>> domain_samples;
  std::optional<double> latency_ms;
  std::optional<double> input_cost_per_million;   ///< USD per million input tokens
  std::optional<double> output_cost_per_million;  ///< USD per million output tokens
  std::optional<double> helpfulness;
  std::optional<double> harmlessness;
  std::optional<double> honesty;
  std::optional<double> steerability;
  std::optional<double> creativity;
  std::optional<double> uptime;  ///< share of time available, 0..1
  std::optional<std::size_t> context_length;  ///< tokens
  std::vector<std::string> task_types;  ///< serves only these task types; empty: all
  std::vector<std::string> domains;     ///< serves only these domains; empty: all
  bool generalist = false;              ///< a safe choice when no model fits a request

  /// USD per million tokens, blending 3 input tokens to 1 output token;
  /// nothing when neither price is known (a known one stands for both).
  std::optional<double> blended_price() const {
    if (!input_cost_per_million && !output_cost_per_million) return std::nullopt;
    const double input = input_cost_per_million.value_or(*output_cost_per_million);
    const double output = output_cost_per_million.value_or(*input_cost_per_million);
    return 0.75 * input + 0.25 * output;
  }
};

class model_registry {
 public:
  model_registry() = default;

  /// Throws std::invalid_argument naming the model and the field when a
  /// card cannot be right (no name, a repeated name, an accuracy outside
  /// 0..1, a negative price, a latency that is not positive...).
  explicit model_registry(std::vector<model_card> cards) : cards_(std::move(cards)) {
    for (std::size_t i = 0; i < cards_.size(); ++i) check(cards_[i], i);
    normalise();
  }

  /// Reads the JSON form described above. Throws std::invalid_argument
  /// naming what is wrong (`source` names the text in the message).
  static model_registry from_json(std::string_view json, std::string_view source = "model registry") {
    boost::system::error_code ec;
    const auto document = boost::json::parse(json, ec);
    if (ec) throw std::invalid_argument(std::string(source) + ": not JSON (" + ec.message() + ")");
    const auto* root = document.if_object();
    const auto* models = root ? root->if_contains("models") : nullptr;
    if (!models || !models->is_array())
      throw std::invalid_argument(std::string(source) + ": expected an object with a \"models\" array");
    std::vector<model_card> cards;
    for (const auto& entry : models->get_array()) cards.push_back(card_from_json(entry, cards.size(), source));
    return model_registry(std::move(cards));
  }

  /// Reads a registry file. Throws llmgate::error (io_failure) when it
  /// cannot be read, std::invalid_argument when its content is wrong.
  static model_registry load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::io_failure, "loading model registry from '" + path.string() + "'");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return from_json(text, path.string());
  }

  std::size_t size() const noexcept { return cards_.size(); }
  bool empty() const noexcept { return cards_.empty(); }
  const model_card& card(std::size_t model) const { return cards_.at(model); }
  const std::vector<model_card>& cards() const noexcept { return cards_; }

  /// The index of the model called `name`, or nothing.
  std::optional<std::size_t> find(std::string_view name) const {
    for (std::size_t i = 0; i < cards_.size(); ++i)
      if (cards_[i].name == name) return i;
    return std::nullopt;
  }

  /// The model's normalised ratings, accuracy being its overall accuracy.
  const quality_vector& qualities(std::size_t model) const { return qualities_.at(model); }

  /// A task type and domain resolved once against the registry's names,
  /// for the questions a router asks of many models per decision
  /// (accuracy_for, serves): each is then an index into flat tables rather
  /// than string searches through every model's card.
  struct task_key {
    std::uint32_t task_type = unknown_name;  ///< a name no card mentions stays unknown_name
    std::uint32_t domain = unknown_name;
    bool task_type_given = false;  ///< false: the task type is not known (empty)
    bool domain_given = false;
  };
  static constexpr std::uint32_t unknown_name = std::numeric_limits<std::uint32_t>::max();

  task_key key_of(std::string_view task_type, std::string_view domain) const {
    return {id_of(task_type), id_of(domain), !task_type.empty(), !domain.empty()};
  }

  /// The model's raw accuracy (0..1) at a task: the mean of its accuracy
  /// for the task type and for the domain where it has either, else its
  /// overall accuracy, else the mean overall accuracy of the registry.
  /// A figure measured on n requests (task_samples, domain_samples) is
  /// pulled towards what the model's overall accuracy predicts for it, as
  /// (n a + w (overall + d)) / (n + w) with w = `overall_weight` and d how
  /// much harder or easier the task is than the average for the models
  /// measured on it: a figure resting on few requests is mostly noise, and
  /// differences between models within that noise would otherwise
  /// override their overall ranking, while d keeps the task's difficulty.
  double accuracy_for(std::size_t model, std::string_view task_type, std::string_view domain,
                      double overall_weight = 0) const {
    return accuracy_for(model, key_of(task_type, domain), overall_weight);
  }

  double accuracy_for(std::size_t model, const task_key& task, double overall_weight = 0) const {
    const double overall = cards_.at(model).accuracy.value_or(mean_accuracy_);
    double sum = 0;
    int figures = 0;
    for (const auto& [kind, name] : {std::pair{task_figure, task.task_type}, std::pair{domain_figure, task.domain}}) {
      if (name == unknown_name) continue;
      const figure& f = figures_[kind][model * names_.size() + name];
      if (!f.accuracy) continue;
      ++figures;
      sum += overall_weight > 0 && f.samples ? (*f.samples * *f.accuracy + overall_weight * f.predicted) /
                                                   (*f.samples + overall_weight)
                                             : *f.accuracy;  // no sample count: taken as it is
    }
    return figures > 0 ? sum / figures : overall;
  }

  /// A raw accuracy on the registry's accuracy scale, clamped to 0..1.
  float normalised_accuracy(double accuracy) const noexcept {
    return static_cast<float>(std::clamp(accuracy_scale_.linear(accuracy), 0.0, 1.0));
  }

  /// Whether the model is meant for this task type and domain (its tags
  /// name them, or it has no tags of that kind). An empty task type or
  /// domain is unknown and passes.
  bool serves(std::size_t model, std::string_view task_type, std::string_view domain) const {
    return serves(model, key_of(task_type, domain));
  }

  bool serves(std::size_t model, const task_key& task) const {
    const auto tagged = [](const std::vector<std::uint32_t>& tags, std::uint32_t wanted, bool given) {
      return !given || tags.empty() || std::ranges::find(tags, wanted) != tags.end();
    };
    const auto& tags = tags_.at(model);
    return tagged(tags.task_types, task.task_type, task.task_type_given) &&
           tagged(tags.domains, task.domain, task.domain_given);
  }

 private:
  // The span of one metric across the registry.
  struct scale {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();

    void widen(double x) noexcept {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    double linear(double x) const noexcept { return hi > lo ? (x - lo) / (hi - lo) : 1.0; }
    // Log scale, the lowest value rated best (cost, latency).
    double log_inverted(double x) const noexcept {
      return hi > lo ? (std::log(hi) - std::log(x)) / (std::log(hi) - std::log(lo)) : 1.0;
    }
  };

  static constexpr double price_floor = 1e-3;  // USD per million tokens
  static constexpr double latency_floor = 1.0;  // ms

  static void check(const model_card& c, std::size_t index) {
    const auto fail = [&](const std::string& what) {
      throw std::invalid_argument("model registry: model " + std::to_string(index) +
                                  (c.name.empty() ? "" : " ('" + c.name + "')") + ": " + what);
    };
    if (c.name.empty()) fail("has no name");
    const auto fraction = [&](std::optional<double> x, const char* field) {
      if (x && !(*x >= 0.0 && *x <= 1.0)) fail(std::string(field) + " must be a fraction 0..1");
    };
    fraction(c.accuracy, "accuracy");
    fraction(c.uptime, "uptime");
    for (const auto& [task, a] : c.task_accuracy) fraction(a, ("task_accuracy." + task).c_str());
    for (const auto& [domain, a] : c.domain_accuracy) fraction(a, ("domain_accuracy." + domain).c_str());
    for (const auto* samples : {&c.task_samples, &c.domain_samples})
      for (const auto& [name, n] : *samples)
        if (!(n >= 0.0 && std::isfinite(n))) fail("sample counts must be finite and not negative (" + name + ")");
    if (c.latency_ms && !(*c.latency_ms > 0.0 && std::isfinite(*c.latency_ms))) fail("latency_ms must be positive");
    for (const auto price : {c.input_cost_per_million, c.output_cost_per_million})
      if (price && !(*price >= 0.0 && std::isfinite(*price))) fail("prices must be finite and not negative");
    for (const auto rating : {c.helpfulness, c.harmlessness, c.honesty, c.steerability, c.creativity})
      if (rating && !std::isfinite(*rating)) fail("ratings must be finite numbers");
    if (c.context_length && *c.context_length == 0) fail("context_length must be positive");
  }

  void normalise() {
    for (std::size_t i = 0; i < cards_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (cards_[i].name == cards_[j].name)
          throw std::invalid_argument("model registry: the name '" + cards_[i].name + "' is used twice");

    std::array<scale, quality_count> scales;
    double accuracy_sum = 0;
    int accuracies = 0;
    const auto rated = [](const model_card& c, quality q) -> std::optional<double> {
      switch (q) {
        case quality::accuracy: return c.accuracy;
        case quality::latency:
          if (c.latency_ms) return std::max(*c.latency_ms, latency_floor);
          return std::nullopt;
        case quality::cost:
          if (const auto price = c.blended_price()) return std::max(*price, price_floor);
          return std::nullopt;
        case quality::helpfulness: return c.helpfulness;
        case quality::harmlessness: return c.harmlessness;
        case quality::honesty: return c.honesty;
        case quality::steerability: return c.steerability;
        case quality::creativity: return c.creativity;
      }
      return std::nullopt;
    };
    for (const auto& c : cards_) {
      for (std::size_t q = 0; q < quality_count; ++q)
        if (const auto x = rated(c, static_cast<quality>(q))) scales[q].widen(*x);
      for (const auto& [task, a] : c.task_accuracy) scales[index_of(quality::accuracy)].widen(a);
      for (const auto& [domain, a] : c.domain_accuracy) scales[index_of(quality::accuracy)].widen(a);
      if (c.accuracy) {
        accuracy_sum += *c.accuracy;
        ++accuracies;
      }
    }
    accuracy_scale_ = scales[index_of(quality::accuracy)];
    mean_accuracy_ = accuracies > 0 ? accuracy_sum / accuracies : 0.5;
    index_figures_and_tags();

    qualities_.clear();
    for (const auto& c : cards_) {
      quality_vector v;
      for (std::size_t q = 0; q < quality_count; ++q) {
        const auto kind = static_cast<quality>(q);
        const auto x = rated(c, kind);
        const bool inverted = kind == quality::cost || kind == quality::latency;
        v[q] = !x ? 0.5f : static_cast<float>(inverted ? scales[q].log_inverted(*x) : scales[q].linear(*x));
      }
      qualities_.push_back(v);
    }
  }

  // Gives every task type and domain a card names an id, then lays out each
  // model's figures and tags by those ids (see task_key).
  void index_figures_and_tags() {
    for (const auto& c : cards_) {
      for (const auto* by_name : {&c.task_accuracy, &c.domain_accuracy})
        for (const auto& [name, a] : *by_name) names_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
      for (const auto* tags : {&c.task_types, &c.domains})
        for (const auto& name : *tags) names_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    }
    const std::pair<figures model_card::*, figures model_card::*> kinds[] = {
        {&model_card::task_accuracy, &model_card::task_samples},
        {&model_card::domain_accuracy, &model_card::domain_samples}};
    for (const std::size_t kind : {task_figure, domain_figure}) {
      const auto [accuracies, samples] = kinds[kind];
      const figures offset = offsets(accuracies);
      figures_[kind].assign(cards_.size() * names_.size(), figure{});
      for (std::size_t m = 0; m < cards_.size(); ++m) {
        const model_card& c = cards_[m];
        const double overall = c.accuracy.value_or(mean_accuracy_);
        for (const auto& [name, a] : c.*accuracies) {
          figure& f = figures_[kind][m * names_.size() + names_.find(name)->second];
          f.accuracy = a;
          if (const auto n = (c.*samples).find(name); n != (c.*samples).end()) f.samples = n->second;
          f.predicted = std::clamp(overall + offset.find(name)->second, 0.0, 1.0);
        }
      }
    }
    tags_.clear();
    for (const auto& c : cards_) {
      auto& tags = tags_.emplace_back();
      for (const auto& name : c.task_types) tags.task_types.push_back(names_.find(name)->second);
      for (const auto& name : c.domains) tags.domains.push_back(names_.find(name)->second);
    }
  }

  std::uint32_t id_of(std::string_view name) const {
    const auto found = names_.find(name);
    return found == names_.end() ? unknown_name : found->second;
  }

  // By task type (or domain): the mean over the models with a figure for
  // it of that figure minus their overall accuracy.
  using figures = std::map<std::string, double, std::less<>>;
  figures offsets(figures model_card::*by_name) const {
    std::map<std::string, std::pair<double, int>, std::less<>> sums;
    for (const auto& c : cards_)
      for (const auto& [name, a] : c.*by_name) {
        auto& [sum, count] = sums[name];
        sum += a - c.accuracy.value_or(mean_accuracy_);
        ++count;
      }
    figures result;
    for (const auto& [name, sum_count] : sums) result.emplace(name, sum_count.first / sum_count.second);
    return result;
  }

  static model_card card_from_json(const boost::json::value& entry, std::size_t index, std::string_view source) {
    const auto fail = [&](const std::string& what) -> void {
      throw std::invalid_argument(std::string(source) + ": models[" + std::to_string(index) + "]: " + what);
    };
    const auto* object = entry.if_object();
    if (!object) fail("expected an object");
    model_card c;
    const auto text = [&](std::string_view key) -> std::string {
      const auto* v = object->if_contains(key);
      if (!v) return {};
      if (!v->is_string()) fail(std::string(key) + " must be a string");
      return std::string(v->get_string());
    };
    const auto number = [&](std::string_view key) -> std::optional<double> {
      const auto* v = object->if_contains(key);
      if (!v) return std::nullopt;
      if (!v->is_number()) fail(std::string(key) + " must be a number");
      return v->to_number<double>();
    };
    const auto numbers_by_name = [&](std::string_view key, std::map<std::string, double, std::less<>>& out) {
      const auto* v = object->if_contains(key);
      if (!v) return;
      if (!v->is_object()) fail(std::string(key) + " must be an object of numbers");
      for (const auto& [name, x] : v->get_object()) {
        if (!x.is_number()) fail(std::string(key) + "." + std::string(name) + " must be a number");
        out.emplace(std::string(name), x.to_number<double>());
      }
    };
    const auto names = [&](std::string_view key, std::vector<std::string>& out) {
      const auto* v = object->if_contains(key);
      if (!v) return;
      if (!v->is_array()) fail(std::string(key) + " must be an array of strings");
      for (const auto& x : v->get_array()) {
        if (!x.is_string()) fail(std::string(key) + " must be an array of strings");
        out.emplace_back(x.get_string());
      }
    };
    c.name = text("name");
    c.backend = text("backend");
    c.accuracy = number("accuracy");
    numbers_by_name("task_accuracy", c.task_accuracy);
    numbers_by_name("domain_accuracy", c.domain_accuracy);
    numbers_by_name("task_samples", c.task_samples);
    numbers_by_name("domain_samples", c.domain_samples);
    c.latency_ms = number("latency_ms");
    c.input_cost_per_million = number("input_cost_per_million");
    c.output_cost_per_million = number("output_cost_per_million");
    c.helpfulness = number("helpfulness");
    c.harmlessness = number("harmlessness");
    c.honesty = number("honesty");
    c.steerability = number("steerability");
    c.creativity = number("creativity");
    c.uptime = number("uptime");
    if (const auto tokens = number("context_length")) {
      if (!(*tokens >= 1 && *tokens <= 1e12)) fail("context_length must be a positive number of tokens");
      c.context_length = static_cast<std::size_t>(*tokens);
    }
    names("task_types", c.task_types);
    names("domains", c.domains);
    if (const auto* v = object->if_contains("generalist")) {
      if (!v->is_bool()) fail("generalist must be true or false");
      c.generalist = v->get_bool();
    }
    return c;
  }

  std::vector<model_card> cards_;
  std::vector<quality_vector> qualities_;
  scale accuracy_scale_;
  double mean_accuracy_ = 0.5;

  // A model's figure for one task type or domain, as accuracy_for uses it.
  struct figure {
    std::optional<double> accuracy;  // none: the card has no figure for it
    std::optional<double> samples;   // none: unknown
    double predicted = 0;            // what its overall accuracy predicts (overall + the name's offset)
  };
  static constexpr std::size_t task_figure = 0, domain_figure = 1;
  struct tag_ids {
    std::vector<std::uint32_t> task_types, domains;
  };
  boost::unordered_flat_map<std::string, std::uint32_t, detail::string_hash, std::equal_to<>> names_;  // task types and domains
  std::array<std::vector<figure>, 2> figures_;  // [task_figure or domain_figure][model * names + name id]
  std::vector<tag_ids> tags_;                   // by model
};

}  // namespace llmgate::inline v0
