// preferences: how much a user cares about each quality of a model, as a
// weight 0..1 per quality. Named profiles give the usual mixes; a request
// may override any weight of the router's default.
//
//   auto p = preferences::parse("cost-effective");          // a profile
//   auto q = preferences::parse("accuracy=0.9,cost=0.1");   // weights; the others 0
//   auto r = preferences::parse("balanced,cost=0.6");       // a profile, then overrides
//   auto s = preferences::profile("latency-first").with(quality::honesty, 0.5f);
//
// Only the ratios between weights matter: the weighted score divides by
// their sum.
#pragma once

#include <array>        // std::array
#include <cmath>        // std::isfinite
#include <cstdio>       // std::snprintf
#include <exception>    // std::exception
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/route/quality.hpp"

namespace llmgate::inline v0 {

class preferences {
 public:
  /// The balanced profile.
  preferences() : preferences(profile("balanced")) {}

  /// The weights of a named profile (balanced, cost-effective,
  /// latency-first, accuracy-first, ethically-aligned). Throws
  /// std::invalid_argument for another name.
  static preferences profile(std::string_view name) {
    for (const auto& p : profiles)
      if (p.name == name) return preferences(p.weights, p.name);
    std::string known;
    for (const auto& p : profiles) known += (known.empty() ? "" : ", ") + std::string(p.name);
    throw std::invalid_argument("preferences: unknown profile '" + std::string(name) + "' (" + known + ")");
  }

  /// "profile", "quality=weight,...", or "profile,quality=weight,...":
  /// weights not named are 0 without a profile, the profile's with one.
  /// Throws std::invalid_argument naming the part it cannot read.
  static preferences parse(std::string_view spec) {
    std::optional<preferences> result;
    while (!spec.empty()) {
      const auto comma = spec.find(',');
      const auto part = spec.substr(0, comma);
      spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
      const auto equals = part.find('=');
      if (equals == std::string_view::npos) {
        if (result) throw std::invalid_argument("preferences: a profile must come first, alone: '" + std::string(part) + "'");
        result = profile(part);
        continue;
      }
      const auto which = quality_named(part.substr(0, equals));
      if (!which) throw std::invalid_argument("preferences: unknown quality in '" + std::string(part) + "'");
      const std::string number(part.substr(equals + 1));
      std::size_t used = 0;
      float weight = -1;
      try {
        weight = std::stof(number, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != number.size() || number.empty())
        throw std::invalid_argument("preferences: not a number in '" + std::string(part) + "'");
      if (!result) result = preferences(quality_vector{}, {});
      result->set(*which, weight);
    }
    if (!result) throw std::invalid_argument("preferences: empty specification");
    return *result;
  }

  /// Sets one weight (0..1; std::invalid_argument outside).
  preferences& set(quality q, float weight) {
    if (!(weight >= 0.0f && weight <= 1.0f))
      throw std::invalid_argument("preferences: the weight of " + std::string(name_of(q)) + " must be in 0..1");
    weights_[index_of(q)] = weight;
    profile_ = {};
    return *this;
  }

  /// A copy with one weight changed: a per-request override.
  preferences with(quality q, float weight) const {
    preferences copy = *this;
    copy.set(q, weight);
    return copy;
  }

  float weight(quality q) const noexcept { return weights_[index_of(q)]; }
  const quality_vector& weights() const noexcept { return weights_; }

  /// The profile's name while no weight was changed, else the non-zero
  /// weights as parse() reads them back ("accuracy=0.8,cost=0.2").
  std::string describe() const {
    if (!profile_.empty()) return std::string(profile_);
    std::string text;
    for (std::size_t q = 0; q < quality_count; ++q) {
      if (weights_[q] == 0.0f) continue;
      char number[16];
      std::snprintf(number, sizeof number, "%g", static_cast<double>(weights_[q]));
      if (!text.empty()) text += ',';
      text += quality_names[q];
      text += '=';
      text += number;
    }
    return text;
  }

 private:
  struct named_profile {
    std::string_view name;
    quality_vector weights;  // accuracy, latency, cost, helpfulness, harmlessness, honesty, steerability, creativity
  };

  static constexpr std::array<named_profile, 5> profiles = {{
      {"balanced", {0.30f, 0.15f, 0.15f, 0.10f, 0.10f, 0.10f, 0.05f, 0.05f}},
      {"cost-effective", {0.30f, 0.10f, 0.50f, 0.04f, 0.03f, 0.03f, 0.0f, 0.0f}},
      {"latency-first", {0.25f, 0.55f, 0.10f, 0.04f, 0.03f, 0.03f, 0.0f, 0.0f}},
      {"accuracy-first", {0.70f, 0.05f, 0.05f, 0.08f, 0.04f, 0.08f, 0.0f, 0.0f}},
      {"ethically-aligned", {0.20f, 0.05f, 0.05f, 0.15f, 0.30f, 0.25f, 0.0f, 0.0f}},
  }};

  preferences(const quality_vector& weights, std::string_view profile) : weights_(weights), profile_(profile) {}

  quality_vector weights_;
  std::string_view profile_;  // names one of `profiles` (static storage) while unchanged
};

}  // namespace llmgate::inline v0
