// error_bound_threshold: a ThresholdPolicy that keeps the promise users
// ask for, "at most this share of the answers you serve me are wrong": it
// serves a neighbour when the estimated probability that its answer is
// wrong is within `bound`.
//
// The estimate is hierarchical, so that a new tenant is neither reckless
// nor mute:
// - the cache's: per bin of the verifier's probability (50 bins), the
//   verdicts feedback gave on neighbours there, added to a prior of
//   `prior_verdicts` verdicts at the verifier's own word (a probability p
//   claims a share 1 - p of wrong answers);
// - a scope's: its own verdicts per bin, added to `scope_verdicts` at the
//   cache's estimate, so that a scope that has heard little borrows the
//   cache's and one that has heard much goes by its own;
// - an entry's (as vCache keeps one per entry): the verdicts of right its
//   answer got, for neighbours at least as probable as the least probable
//   one it was right for, added to `entry_verdicts` at the scope's
//   estimate. (An entry judged wrong stops serving in the cache itself.)
// Each curve's means are made monotone (never more wrong at a higher
// probability: a bin is raised to the one above it, never lowered), and a
// neighbour is served when the upper confidence bound of its estimate (the
// mean plus `confidence_z` standard errors, counting the verdicts and
// pseudo-verdicts behind it) is within the bound, so that a bin whose true
// error sits just over the bound is not served on a lucky run. The cache's
// curve and each scope's are worked out again only after a verdict.
//
// Verdicts come from feedback and from explores (answered fresh, then
// compared): neighbours within `explore_band` over the bound at
// `explore_rate`, so that a bin can come down, and a share `verify_rate`
// of those it would serve, so that a verifier that claims too little error
// is found out even where users report nothing. Both are chosen by a hash
// of entry and probability, so that a replay repeats.
//
// With the default similarity verifier the probability is the similarity,
// which is no probability at all: the prior then says too little, and the
// bound is kept by feedback alone. Fit a learned_verifier (its probability
// is calibrated on labelled pairs) to start from a prior that holds.
#pragma once

#include <algorithm>  // std::clamp, std::max, std::min
#include <array>      // std::array
#include <cmath>      // std::floor, std::sqrt
#include <cstdint>    // std::uint32_t, std::uint64_t
#include <mutex>      // std::mutex, std::lock_guard
#include <span>       // std::span

#include <boost/unordered/unordered_flat_map.hpp>  // per-scope and per-entry state

#include "llmgate/cache/eviction/eviction_policy.hpp"  // entry_handle
#include "llmgate/cache/scope.hpp"                     // hash128
#include "llmgate/cache/threshold.hpp"                 // threshold_decision, ThresholdPolicy
#include "llmgate/store/snapshot_file.hpp"             // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

struct error_bound_options {
  float bound = 0.02f;          ///< the share of served answers allowed to be wrong
  float prior_verdicts = 100;   ///< how many verdicts the verifier's own probability counts for in a bin
  float scope_verdicts = 30;    ///< how many verdicts the cache's estimate counts for in a scope's bin
  float entry_verdicts = 4;     ///< how many verdicts the scope's estimate counts for at one entry
  float confidence_z = 1.0f;    ///< standard errors added to an estimate before it is held to the bound
  float explore_band = 0.10f;   ///< explore neighbours whose estimated error is this far over the bound
  float explore_rate = 0.10f;   ///< at this rate
  float verify_rate = 0.05f;    ///< explore this share of the neighbours it would serve
};

class error_bound_threshold {
 public:
  static constexpr int bins = 50;  ///< the verifier's probability in steps of 0.02

  explicit error_bound_threshold(error_bound_options options = {}) : options_(options) { refresh_cache_curve(); }

  error_bound_threshold(const error_bound_threshold& other) : options_(other.options_) {
    std::lock_guard lock(other.mutex_);
    cache_ = other.cache_, cache_mean_ = other.cache_mean_, cache_weight_ = other.cache_weight_;
    cache_curve_ = other.cache_curve_, generation_ = other.generation_;
    scopes_ = other.scopes_, entries_ = other.entries_;
  }

  threshold_decision decide(const hash128& scope, entry_handle entry, float probability) const {
    const double wrong = estimated_error(scope, entry, probability);
    if (wrong <= options_.bound)
      return chosen(entry, probability, options_.verify_rate, 1) ? threshold_decision::explore : threshold_decision::hit;
    if (wrong <= options_.bound + options_.explore_band && chosen(entry, probability, options_.explore_rate, 0))
      return threshold_decision::explore;
    return threshold_decision::miss;
  }

  /// The upper confidence bound of the probability that `entry`'s answer
  /// is wrong for a request of `scope` it is `probability` likely to serve.
  double estimated_error(const hash128& scope, entry_handle entry, float probability) const {
    std::lock_guard lock(mutex_);
    const int bin = bin_of(probability);
    double wrong = cache_curve_[bin];
    if (const auto found = scopes_.find(scope); found != scopes_.end()) wrong = scope_curve(found->second)[bin];
    if (const auto found = entries_.find(entry); found != entries_.end() && probability >= found->second.lowest_right)
      wrong = options_.entry_verdicts * wrong / (found->second.right + options_.entry_verdicts);
    return wrong;
  }

  void record(const hash128& scope, entry_handle entry, float probability, bool correct) {
    std::lock_guard lock(mutex_);
    const int bin = bin_of(probability);
    ++(correct ? cache_.right : cache_.wrong)[bin];
    auto& mine = scopes_[scope];
    ++(correct ? mine.verdicts.right : mine.verdicts.wrong)[bin];
    mine.generation = 0;  // its curve is worked out again when next asked
    if (correct) {
      auto& e = entries_.try_emplace(entry).first->second;
      e.lowest_right = std::min(e.lowest_right, probability);
      ++e.right;
    }
    refresh_cache_curve();
  }

  void forget(entry_handle entry) {
    std::lock_guard lock(mutex_);
    entries_.erase(entry);
  }

  /// Saves the verdicts (not the options: those come from the code that
  /// constructs the policy again).
  void save_to(store::snapshot_writer& out) const {
    std::lock_guard lock(mutex_);
    write_counts(out, cache_);
    out.write(static_cast<std::uint64_t>(scopes_.size()));
    for (const auto& [scope, s] : scopes_) {
      out.write(scope.low);
      out.write(scope.high);
      write_counts(out, s.verdicts);
    }
    out.write(static_cast<std::uint64_t>(entries_.size()));
    for (const auto& [entry, e] : entries_) {
      out.write(entry);
      out.write(e.lowest_right);
      out.write(e.right);
    }
  }

  void restore_from(store::snapshot_reader& in) {
    std::lock_guard lock(mutex_);
    constexpr std::size_t counts_bytes = 2 * bins * sizeof(std::uint32_t);
    if (counts_bytes > in.remaining()) return in.mark_corrupt();
    read_counts(in, cache_);
    const auto scopes = in.read<std::uint64_t>();
    if (scopes > in.remaining() / (2 * sizeof(std::uint64_t) + counts_bytes)) return in.mark_corrupt();
    scopes_.clear();
    for (std::uint64_t i = 0; i < scopes; ++i) {
      hash128 scope;
      scope.low = in.read<std::uint64_t>();
      scope.high = in.read<std::uint64_t>();
      read_counts(in, scopes_[scope].verdicts);
    }
    const auto entries = in.read<std::uint64_t>();
    if (entries > in.remaining() / (sizeof(entry_handle) + sizeof(float) + sizeof(std::uint32_t)))
      return in.mark_corrupt();
    entries_.clear();
    for (std::uint64_t i = 0; i < entries; ++i) {
      const auto entry = in.read<entry_handle>();
      auto& e = entries_[entry];
      e.lowest_right = in.read<float>();
      e.right = in.read<std::uint32_t>();
    }
    refresh_cache_curve();
  }

  const error_bound_options& options() const noexcept { return options_; }

  /// The threshold in force now: the lowest probability a scope with no
  /// verdicts of its own is served from (an entry judged right may serve
  /// lower); above 1 when none is served.
  float threshold() const {
    std::lock_guard lock(mutex_);
    float lowest = 1.0f + 1.0f / bins;
    for (int bin = bins - 1; bin >= 0 && cache_curve_[bin] <= options_.bound; --bin)
      lowest = static_cast<float>(bin) / bins;
    return lowest;
  }

 private:
  using curve = std::array<double, bins>;

  struct verdict_counts {
    std::array<std::uint32_t, bins> right{}, wrong{};
  };
  struct scope_state {
    verdict_counts verdicts;
    curve wrong{};
    std::uint64_t generation = 0;  // of the cache curve its own was worked out from; 0: never
  };
  struct entry_state {
    float lowest_right = 2.0f;  // the least probable neighbour it was right for
    std::uint32_t right = 0;
  };

  static int bin_of(float probability) noexcept {
    return std::clamp(static_cast<int>(std::floor(probability * bins)), 0, bins - 1);
  }

  // Never more wrong at a higher probability: from the top down, each bin
  // at least as wrong as the one above it. (A bin is raised, never lowered,
  // so that few verdicts low down cannot vouch for the bins that serve.)
  static void make_monotone(curve& mean) noexcept {
    for (int bin = bins - 2; bin >= 0; --bin) mean[bin] = std::max(mean[bin], mean[bin + 1]);
  }

  // The mean's upper confidence bound, `n` verdicts and pseudo-verdicts behind it.
  double upper_bound(double mean, double n) const noexcept {
    return n > 0 ? std::min(1.0, mean + options_.confidence_z * std::sqrt(mean * (1 - mean) / n)) : mean;
  }

  void refresh_cache_curve() {
    for (int bin = 0; bin < bins; ++bin) {
      const double claimed_wrong = 1.0 - (bin + 0.5) / bins;
      const double n = cache_.right[bin] + cache_.wrong[bin] + static_cast<double>(options_.prior_verdicts);
      cache_mean_[bin] = n > 0 ? (cache_.wrong[bin] + options_.prior_verdicts * claimed_wrong) / n : claimed_wrong;
      cache_weight_[bin] = n;
    }
    make_monotone(cache_mean_);
    for (int bin = 0; bin < bins; ++bin) cache_curve_[bin] = upper_bound(cache_mean_[bin], cache_weight_[bin]);
    ++generation_;
  }

  // A scope's bin: its verdicts and up to scope_verdicts of the cache's
  // (as many as the cache has: a scope learns no more from a cache that
  // has heard little).
  const curve& scope_curve(scope_state& s) const {
    if (s.generation == generation_) return s.wrong;
    curve mean{}, weight{};
    for (int bin = 0; bin < bins; ++bin) {
      const double k = std::min<double>(options_.scope_verdicts, cache_weight_[bin]);
      weight[bin] = s.verdicts.right[bin] + s.verdicts.wrong[bin] + k;
      mean[bin] = weight[bin] > 0 ? (s.verdicts.wrong[bin] + k * cache_mean_[bin]) / weight[bin] : cache_mean_[bin];
    }
    make_monotone(mean);
    for (int bin = 0; bin < bins; ++bin) s.wrong[bin] = upper_bound(mean[bin], weight[bin]);
    s.generation = generation_;
    return s.wrong;
  }

  static void write_counts(store::snapshot_writer& out, const verdict_counts& c) {
    out.write_array(std::span<const std::uint32_t>(c.right));
    out.write_array(std::span<const std::uint32_t>(c.wrong));
  }
  static void read_counts(store::snapshot_reader& in, verdict_counts& c) {
    in.read_array(std::span<std::uint32_t>(c.right));
    in.read_array(std::span<std::uint32_t>(c.wrong));
  }

  // Whether (entry, probability) is in the share `rate` of the draw `salt`.
  static bool chosen(entry_handle entry, float probability, float rate, std::uint64_t salt) noexcept {
    std::uint64_t x = (std::uint64_t{entry} << 32) ^ static_cast<std::uint64_t>(probability * 1e6f) ^ (salt << 63);
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33;  // a fixed mix: repeatable
    return static_cast<float>(x % 10000) < rate * 10000.0f;
  }

  error_bound_options options_;
  mutable std::mutex mutex_;
  verdict_counts cache_;
  curve cache_mean_{}, cache_weight_{}, cache_curve_{};  // per bin: the mean, the verdicts behind it, its upper bound
  std::uint64_t generation_ = 0;
  mutable boost::unordered_flat_map<hash128, scope_state, hash128_hasher> scopes_;  // curves worked out when asked
  boost::unordered_flat_map<entry_handle, entry_state> entries_;
};

static_assert(PersistentThreshold<error_bound_threshold>);

}  // namespace llmgate::inline v0
