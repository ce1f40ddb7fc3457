// The qualities a router weighs when it picks a model: how accurate, fast,
// cheap, helpful, harmless, honest, steerable and creative a model is. The
// model registry rates every model on each of them from 0 to 1 (higher is
// better), and preferences give each a weight, so that a model's fit is a
// weighted sum over the same eight positions.
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

enum class quality : unsigned char {
  accuracy,
  latency,  ///< rated high when a model answers fast
  cost,     ///< rated high when a model is cheap
  helpfulness,
  harmlessness,
  honesty,
  steerability,
  creativity,
};

inline constexpr std::size_t quality_count = 8;

/// One number per quality, indexed by `quality`.
using quality_vector = std::array<float, quality_count>;

inline constexpr std::array<std::string_view, quality_count> quality_names = {
    "accuracy", "latency", "cost", "helpfulness", "harmlessness", "honesty", "steerability", "creativity"};

constexpr std::size_t index_of(quality q) noexcept { return static_cast<std::size_t>(q); }

constexpr std::string_view name_of(quality q) noexcept { return quality_names[index_of(q)]; }

/// The quality called `name` ("cost"), or nothing.
constexpr std::optional<quality> quality_named(std::string_view name) noexcept {
  for (std::size_t i = 0; i < quality_count; ++i)
    if (quality_names[i] == name) return static_cast<quality>(i);
  return std::nullopt;
}

}  // namespace llmgate::inline v0
