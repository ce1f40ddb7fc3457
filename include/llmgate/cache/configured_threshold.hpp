// configured_threshold: a ThresholdPolicy chosen at run time, for caches
// whose policy comes from a configuration file (the gateway's
// "threshold": {"policy": "static" | "adaptive" | "error_bound", ...}).
//
// Model: it holds exactly one of the compile-time policies and forwards
// every call to it, so it decides exactly as that policy does:
//   static   -> static_threshold{t}: one threshold, feedback changes nothing;
//   adaptive -> adaptive_threshold(options): learns from the cache's
//               feedback() where hits are right (see cache/threshold.hpp);
//   error_bound -> error_bound_threshold(options): serves where the
//               estimated chance of a wrong answer, per scope and entry,
//               is within a bound (cache/error_bound_threshold.hpp).
// It is a PersistentThreshold, so that a cache snapshot keeps what the
// adaptive policy learned. Its part of a snapshot starts with a tag and
// the kind saved; a cache loaded under another kind than it was saved with
// starts that policy afresh (adaptive) or drops what was learned (static)
// instead of misreading it.
//
//   configured_threshold fixed = configured_threshold::fixed(0.9f);
//   configured_threshold learning = configured_threshold::adaptive({.error_bound = 0.05f});
//   configured_threshold bounded = configured_threshold::error_bounded({.bound = 0.02f});
//   auto kind = threshold_kind_named("adaptive");  // nullopt for an unknown name
#pragma once

#include <cstdint>      // std::uint8_t, std::uint64_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view
#include <utility>      // std::in_place_type
#include <variant>      // std::variant, std::visit

#include "llmgate/cache/error_bound_threshold.hpp"     // error_bound_threshold
#include "llmgate/cache/eviction/eviction_policy.hpp"  // entry_handle
#include "llmgate/cache/scope.hpp"                     // hash128
#include "llmgate/cache/threshold.hpp"                 // ThresholdPolicy, static_threshold, adaptive_threshold
#include "llmgate/store/snapshot_file.hpp"             // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

/// The threshold policies a configuration can name.
enum class threshold_kind : std::uint8_t { fixed = 0, adaptive = 1, error_bound = 2 };

/// The kind a configuration names ("static", "adaptive", "error_bound");
/// nullopt for any other name, so that the caller can say which field is wrong.
constexpr std::optional<threshold_kind> threshold_kind_named(std::string_view name) noexcept {
  if (name == "static") return threshold_kind::fixed;
  if (name == "adaptive") return threshold_kind::adaptive;
  if (name == "error_bound") return threshold_kind::error_bound;
  return std::nullopt;
}

/// The name threshold_kind_named() reads back.
constexpr std::string_view threshold_kind_name(threshold_kind kind) noexcept {
  switch (kind) {
    case threshold_kind::adaptive: return "adaptive";
    case threshold_kind::error_bound: return "error_bound";
    case threshold_kind::fixed: break;
  }
  return "static";
}

class configured_threshold {
 public:
  /// static_threshold's default (0.95).
  configured_threshold() = default;
  explicit configured_threshold(static_threshold policy) : policy_(policy) {}
  explicit configured_threshold(const adaptive_threshold_options& options)
      : policy_(std::in_place_type<adaptive_threshold>, options) {}
  explicit configured_threshold(const error_bound_options& options)
      : policy_(std::in_place_type<error_bound_threshold>, options) {}

  /// "static": hit at or above `threshold`.
  static configured_threshold fixed(float threshold) { return configured_threshold(static_threshold{threshold}); }
  /// "adaptive": learns from feedback, keeping the share of wrong hits under options.error_bound.
  static configured_threshold adaptive(const adaptive_threshold_options& options = {}) {
    return configured_threshold(options);
  }
  /// "error_bound": serves where the estimated chance of a wrong answer is within options.bound.
  static configured_threshold error_bounded(const error_bound_options& options = {}) {
    return configured_threshold(options);
  }

  threshold_kind kind() const noexcept { return static_cast<threshold_kind>(policy_.index()); }

  /// The global threshold in force now: the static one, what the adaptive
  /// policy learned so far, or where the error-bounded one serves a scope
  /// with no verdicts of its own from (per-entry allowances aside).
  float threshold() const {
    if (const auto* learning = std::get_if<adaptive_threshold>(&policy_)) return learning->threshold();
    if (const auto* bounded = std::get_if<error_bound_threshold>(&policy_)) return bounded->threshold();
    return std::get<static_threshold>(policy_).threshold;
  }

  threshold_decision decide(const hash128& scope, entry_handle entry, float similarity) const {
    return std::visit([&](const auto& p) { return p.decide(scope, entry, similarity); }, policy_);
  }
  void record(const hash128& scope, entry_handle entry, float similarity, bool correct) {
    std::visit([&](auto& p) { p.record(scope, entry, similarity, correct); }, policy_);
  }
  void forget(entry_handle entry) {
    std::visit([&](auto& p) { p.forget(entry); }, policy_);
  }

  void save_to(store::snapshot_writer& out) const {
    out.write(tag);
    out.write(static_cast<std::uint8_t>(kind()));
    if (const auto* learning = std::get_if<adaptive_threshold>(&policy_)) learning->save_to(out);
    if (const auto* bounded = std::get_if<error_bound_threshold>(&policy_)) bounded->save_to(out);
  }

  void restore_from(store::snapshot_reader& in) {
    if (in.read<std::uint64_t>() != tag) return in.mark_corrupt();
    const auto saved = in.read<std::uint8_t>();
    if (saved > static_cast<std::uint8_t>(threshold_kind::error_bound)) return in.mark_corrupt();
    if (saved == static_cast<std::uint8_t>(threshold_kind::adaptive)) {
      if (auto* learning = std::get_if<adaptive_threshold>(&policy_)) return learning->restore_from(in);
      return adaptive_threshold{}.restore_from(in);  // learned under another configuration: read past it
    }
    if (saved == static_cast<std::uint8_t>(threshold_kind::error_bound)) {
      if (auto* bounded = std::get_if<error_bound_threshold>(&policy_)) return bounded->restore_from(in);
      return error_bound_threshold{}.restore_from(in);
    }
    // static: nothing was learned
  }

 private:
  static constexpr std::uint64_t tag = 0x31444c4f48534854;  // "THSHOLD1", little-endian

  // In threshold_kind's order: kind() is the alternative's index.
  std::variant<static_threshold, adaptive_threshold, error_bound_threshold> policy_;
};

static_assert(PersistentThreshold<configured_threshold>);

}  // namespace llmgate::inline v0
