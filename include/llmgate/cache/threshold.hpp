// The ThresholdPolicy concept (when a neighbour's similarity is close
// enough to serve its answer) and three models: one static threshold, one
// per scope, and an adaptive threshold that learns from feedback how often
// hits at each similarity were right and keeps the share of wrong hits
// under a bound the user sets.
#pragma once

#include <algorithm>  // std::clamp, std::max, std::min
#include <cmath>      // std::sqrt, std::floor
#include <concepts>   // std::same_as
#include <cstdint>    // std::uint32_t, std::uint64_t
#include <mutex>      // std::mutex, std::lock_guard
#include <span>       // std::span
#include <vector>     // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // per-scope and per-entry state

#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/scope.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// What a threshold policy says of a neighbour found for a request.
enum class threshold_decision {
  hit,      ///< serve the neighbour's answer
  miss,     ///< answer the request fresh
  explore,  ///< answer it fresh, then report through record() whether the
            ///< neighbour's answer would have been right (costs one call, teaches the policy)
};

/// - decide(scope, entry, similarity): hit, miss or explore for a request in
///   `scope` whose nearest stored neighbour is `entry` at `similarity`;
/// - record(scope, entry, similarity, correct): feedback on a served or explored neighbour;
/// - forget(entry): the entry left the cache (its handle will be reused).
/// Policies are used from many threads: they guard their own state. A
/// policy that learns or is configured at run time also has
///   save_to(store::snapshot_writer&) const and restore_from(store::snapshot_reader&)
/// so that a cache snapshot keeps what it learned (see PersistentThreshold).
template <class P>
concept ThresholdPolicy = requires(P& policy, const hash128& scope, entry_handle entry,
                                   float similarity, bool correct) {
  { policy.decide(scope, entry, similarity) } -> std::same_as<threshold_decision>;
  policy.record(scope, entry, similarity, correct);
  policy.forget(entry);
};

/// One threshold for everything; feedback changes nothing.
struct static_threshold {
  float threshold = 0.95f;

  threshold_decision decide(const hash128&, entry_handle, float similarity) const noexcept {
    return similarity >= threshold ? threshold_decision::hit : threshold_decision::miss;
  }
  void record(const hash128&, entry_handle, float, bool) noexcept {}
  void forget(entry_handle) noexcept {}
};

/// A threshold per scope (set by the operator, e.g. stricter for a medical
/// tenant), with a default for scopes not named.
class per_scope_threshold {
 public:
  explicit per_scope_threshold(float default_threshold = 0.95f) : default_(default_threshold) {}

  void set(const hash128& scope, float threshold) {
    std::lock_guard lock(mutex_);
    thresholds_[scope] = threshold;
  }

  threshold_decision decide(const hash128& scope, entry_handle, float similarity) const {
    std::lock_guard lock(mutex_);
    const auto found = thresholds_.find(scope);
    const float threshold = found == thresholds_.end() ? default_ : found->second;
    return similarity >= threshold ? threshold_decision::hit : threshold_decision::miss;
  }
  void record(const hash128&, entry_handle, float, bool) noexcept {}
  void forget(entry_handle) noexcept {}

  void save_to(store::snapshot_writer& out) const {
    std::lock_guard lock(mutex_);
    out.write(default_);
    out.write(static_cast<std::uint64_t>(thresholds_.size()));
    for (const auto& [scope, threshold] : thresholds_) {
      out.write(scope.low);
      out.write(scope.high);
      out.write(threshold);
    }
  }

  void restore_from(store::snapshot_reader& in) {
    std::lock_guard lock(mutex_);
    default_ = in.read<float>();
    const auto count = in.read<std::uint64_t>();
    if (count > in.remaining() / (2 * sizeof(std::uint64_t) + sizeof(float))) return in.mark_corrupt();
    thresholds_.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
      hash128 scope;
      scope.low = in.read<std::uint64_t>();
      scope.high = in.read<std::uint64_t>();
      thresholds_[scope] = in.read<float>();
    }
  }

  per_scope_threshold(const per_scope_threshold& other) : default_(other.default_) {
    std::lock_guard lock(other.mutex_);
    thresholds_ = other.thresholds_;
  }

 private:
  float default_;
  mutable std::mutex mutex_;
  boost::unordered_flat_map<hash128, float, hash128_hasher> thresholds_;
};

struct adaptive_threshold_options {
  float error_bound = 0.05f;       ///< the share of served hits allowed to be wrong
  float start_threshold = 0.99f;   ///< used until enough feedback has come in
  float floor = 0.70f;             ///< never serve below this similarity
  std::uint32_t min_feedback = 30; ///< feedback needed before the learned threshold is used
  float explore_band = 0.05f;      ///< neighbours this far below the threshold may be explored
  float explore_rate = 0.2f;       ///< share of those that are explored
  double confidence_z = 1.64;      ///< one-sided z of the upper bound on the error rate (95%)
};

/// Learns the threshold from feedback, in the spirit of vCache's verified
/// semantic caching:
/// - Globally it keeps, per similarity bin, how many judged neighbours were
///   right and wrong, and uses the lowest threshold at which the upper
///   confidence bound (Wilson) of the error rate of all judged neighbours
///   at or above it stays within error_bound.
/// - Per entry it remembers the lowest similarity at which the entry was
///   judged right: it may serve down to there (not below `floor`), as that
///   very neighbourhood was verified. (Where an entry was judged wrong, the
///   cache itself stops it serving, whatever the policy.)
/// - Neighbours just below the threshold are explored at explore_rate
///   (chosen by a hash of entry and similarity, so a replay is repeatable)
///   to gather the feedback that lets the threshold come down.
class adaptive_threshold {
 public:
  explicit adaptive_threshold(adaptive_threshold_options options = {})
      : options_(options), right_(bins, 0), wrong_(bins, 0), threshold_(options.start_threshold) {}

  adaptive_threshold(const adaptive_threshold& other) : options_(other.options_) {
    std::lock_guard lock(other.mutex_);
    right_ = other.right_, wrong_ = other.wrong_, judged_ = other.judged_;
    threshold_ = other.threshold_, entries_ = other.entries_;
  }

  threshold_decision decide(const hash128&, entry_handle entry, float similarity) const {
    std::lock_guard lock(mutex_);
    float threshold = threshold_;
    if (const auto found = entries_.find(entry); found != entries_.end()) {
      threshold = std::max(options_.floor, std::min(threshold, found->second));
    }
    if (similarity >= threshold) return threshold_decision::hit;
    if (similarity >= std::max(options_.floor, threshold - options_.explore_band) &&
        chosen_to_explore(entry, similarity))
      return threshold_decision::explore;
    return threshold_decision::miss;
  }

  void record(const hash128&, entry_handle entry, float similarity, bool correct) {
    std::lock_guard lock(mutex_);
    if (correct) {
      auto& right_at = entries_.try_emplace(entry, 2.0f).first->second;
      right_at = std::min(right_at, similarity);
    }
    (correct ? right_ : wrong_)[bin_of(similarity)]++;
    if (++judged_ >= options_.min_feedback) threshold_ = learned_threshold();
  }

  void forget(entry_handle entry) {
    std::lock_guard lock(mutex_);
    entries_.erase(entry);
  }

  /// Saves what was learned (not the options: those come from the code
  /// that constructs the policy again).
  void save_to(store::snapshot_writer& out) const {
    std::lock_guard lock(mutex_);
    out.write_array(std::span<const std::uint64_t>(right_));
    out.write_array(std::span<const std::uint64_t>(wrong_));
    out.write(judged_);
    out.write(threshold_);
    out.write(static_cast<std::uint64_t>(entries_.size()));
    for (const auto& [entry, right_at] : entries_) {
      out.write(entry);
      out.write(right_at);
    }
  }

  void restore_from(store::snapshot_reader& in) {
    std::lock_guard lock(mutex_);
    if (2 * bins * sizeof(std::uint64_t) > in.remaining()) return in.mark_corrupt();
    in.read_array(std::span<std::uint64_t>(right_));
    in.read_array(std::span<std::uint64_t>(wrong_));
    judged_ = in.read<std::uint64_t>();
    threshold_ = in.read<float>();
    const auto count = in.read<std::uint64_t>();
    if (count > in.remaining() / (sizeof(entry_handle) + sizeof(float))) return in.mark_corrupt();
    entries_.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto entry = in.read<entry_handle>();
      entries_[entry] = in.read<float>();
    }
  }

  /// The global threshold in force now.
  float threshold() const {
    std::lock_guard lock(mutex_);
    return threshold_;
  }

 private:
  static constexpr int bins = 1000;  // similarity in [0, 1] in steps of 0.001

  static int bin_of(float similarity) noexcept {
    return std::clamp(static_cast<int>(std::floor(similarity * bins)), 0, bins - 1);
  }

  // Scans from the top bin down, accumulating judged neighbours, and keeps
  // the lowest bin edge whose error rate's upper bound is within the bound.
  float learned_threshold() const {
    const double z = options_.confidence_z;
    double right = 0, wrong = 0;
    float best = 1.0f + 1.0f / bins;  // where no threshold keeps the bound, serve nothing (explore only)
    for (int bin = bins - 1; bin >= bin_of(options_.floor); --bin) {
      right += right_[bin];
      wrong += wrong_[bin];
      const double n = right + wrong;
      if (n == 0) continue;
      const double p = wrong / n;
      const double upper =
          (p + z * z / (2 * n) + z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n);
      if (upper <= options_.error_bound) best = static_cast<float>(bin) / bins;
    }
    return best;
  }

  bool chosen_to_explore(entry_handle entry, float similarity) const noexcept {
    std::uint64_t x = (std::uint64_t{entry} << 32) ^ static_cast<std::uint64_t>(similarity * 1e6f);
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33;  // a fixed mix: repeatable
    return static_cast<float>(x % 10000) < options_.explore_rate * 10000.0f;
  }

  adaptive_threshold_options options_;
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> right_, wrong_;
  std::uint64_t judged_ = 0;
  float threshold_;
  boost::unordered_flat_map<entry_handle, float> entries_;  // lowest similarity judged right
};

/// A threshold policy whose state a cache snapshot saves and restores;
/// restore_from marks the reader corrupt on content that cannot be right.
template <class P>
concept PersistentThreshold = ThresholdPolicy<P> && requires(const P& view, P& policy,
                                                             store::snapshot_writer& out,
                                                             store::snapshot_reader& in) {
  view.save_to(out);
  policy.restore_from(in);
};

static_assert(ThresholdPolicy<static_threshold> && PersistentThreshold<per_scope_threshold> &&
              PersistentThreshold<adaptive_threshold>);

}  // namespace llmgate::inline v0
