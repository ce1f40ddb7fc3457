// learned_verifier: the Verifier (cache/verifier.hpp) that decides from
// features of the two texts through a fitted model, and learns from each
// scope's feedback.
//
// Two stages make a probability:
//   1. a base logit: with weights (verifier_weights.hpp, fitted by
//      verifier_training.hpp or examples/train_verifier), the model over
//      pair_featurizer's features (pair_features.hpp), the lexical guard's
//      checks among them; without weights, the hand-set prior: the logit of
//      the similarity, with the lexical guard's vetoes, which decides
//      exactly as the cache did before verifiers;
//   2. a correction per scope, learned online from feedback: the logit
//      becomes base + bias + slope * base, two numbers fitted by
//      stochastic gradient descent on the verdicts that scope's users
//      gave. Both stay within max_correction, so that no run of feedback
//      can turn a scope's verdicts upside down, and a scope's feedback
//      moves only its own numbers: one tenant cannot teach the cache to
//      serve another tenant anything. Until a scope has feedback its
//      probabilities are the base's (the similarity itself for the prior).
//
//   learned_verifier prior;                                   // no data needed
//   learned_verifier fitted = learned_verifier::load("qa.weights");
//   learned_verifier fixed({.learn = false});                 // never learns
#pragma once

#include <algorithm>     // std::clamp, std::max
#include <array>         // std::array
#include <cmath>         // std::exp, std::log, std::abs
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <mutex>         // std::unique_lock
#include <optional>      // std::optional
#include <shared_mutex>  // std::shared_mutex, std::shared_lock
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::move

#include <boost/unordered/unordered_flat_map.hpp>  // scope -> correction

#include "llmgate/cache/guard.hpp"            // lexical_guard, veto_reason
#include "llmgate/cache/pair_features.hpp"    // pair_featurizer, prepared_text
#include "llmgate/cache/scope.hpp"            // hash128, hash128_hasher
#include "llmgate/cache/verifier.hpp"         // Verifier, verification_candidate
#include "llmgate/cache/verifier_weights.hpp" // verifier_weights, load_verifier_weights
#include "llmgate/store/snapshot_file.hpp"    // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

struct learned_verifier_options {
  bool learn = true;                ///< feedback corrects each scope's probabilities
  float learning_rate = 0.05f;      ///< of each step of the per-scope correction
  float max_correction = 3.0f;      ///< bound on a scope's bias and slope change, in logit units
  std::size_t max_scopes = 100000;  ///< scopes that keep a correction; feedback beyond them is not learned
};

class learned_verifier {
 public:
  /// What a lookup prepares once: the request's text (valid while the
  /// lookup runs) and, for a fitted model, its side of the pair features.
  /// The prior needs no features, so its lookups prepare none.
  struct prepared_request {
    std::string_view text;
    prepared_text features;
  };

  /// The prefilter_similarity a cache with fitted weights is advised to
  /// use: below it a model fitted on pairs of questions meets pairs unlike
  /// any it was fitted on, and serves some with confidence (measured by
  /// `scripts/run replay --data ../shared/data/qqp/pairs.dev.jsonl --prefilter S`).
  static constexpr float advised_prefilter = 0.8f;

  /// The hand-set prior: the similarity behind the lexical guard, learning
  /// from feedback unless options.learn is false.
  explicit learned_verifier(learned_verifier_options options = {}) : options_(options) {}

  /// A fitted model and the IDF its features were fitted with.
  explicit learned_verifier(verifier_weights weights, learned_verifier_options options = {})
      : options_(options), featurizer_(std::move(weights.idf)), model_(std::move(weights.model)),
        fitted_on_(std::move(weights.fitted_on)) {}

  /// Reads a weights file; throws llmgate::error naming the file and what is wrong with it.
  static learned_verifier load(const std::filesystem::path& weights, learned_verifier_options options = {}) {
    return learned_verifier(load_verifier_weights(weights), options);
  }

  learned_verifier(const learned_verifier& other)
      : options_(other.options_), featurizer_(other.featurizer_), model_(other.model_), fitted_on_(other.fitted_on_) {
    std::shared_lock lock(other.mutex_);
    corrections_ = other.corrections_;
  }

  /// Whether a fitted model decides (else the prior does).
  bool fitted() const noexcept { return model_.has_value(); }
  /// What the model was fitted on (empty for the prior).
  const std::string& fitted_on() const noexcept { return fitted_on_; }
  const learned_verifier_options& options() const noexcept { return options_; }

  prepared_request prepare(std::string_view request) const {
    return {request, model_ ? featurizer_.prepare(request) : prepared_text{}};
  }

  float probability(const hash128& scope, const prepared_request& request,
                    const verification_candidate& candidate) const {
    const std::optional<correction> learned = correction_of(scope);
    if (!model_ && !learned) return candidate.similarity;  // the prior, exactly
    const float base = base_logit(request.features, candidate);
    return sigmoid(learned ? learned->apply(base) : base);
  }

  /// The prior keeps the lexical guard's vetoes; a fitted model has the
  /// guard's checks among its features and weighs them instead.
  veto_reason vetoes(const prepared_request& request, const verification_candidate& candidate) const {
    if (model_) return veto_reason::none;
    return lexical_guard().vetoes(request.text, candidate.stored);
  }

  /// One step of the scope's correction towards the verdict.
  void learn(const hash128& scope, std::string_view request, const verification_candidate& candidate, bool correct) {
    if (!options_.learn) return;
    const float base = base_logit(prepare(request).features, candidate);
    std::unique_lock lock(mutex_);
    auto found = corrections_.find(scope);
    if (found == corrections_.end()) {
      if (corrections_.size() >= options_.max_scopes) return;
      found = corrections_.emplace(scope, correction{}).first;
    }
    found->second.step(base, correct, options_);
  }

  /// Scopes that have learned a correction.
  std::size_t scopes_learned() const {
    std::shared_lock lock(mutex_);
    return corrections_.size();
  }

  /// Saves the corrections with what the model was fitted on, so that a
  /// cache loaded with other weights starts its corrections afresh.
  void save_to(store::snapshot_writer& out) const {
    out.write(tag);
    out.write_string(fitted_on_);
    std::shared_lock lock(mutex_);
    out.write(static_cast<std::uint64_t>(corrections_.size()));
    for (const auto& [scope, c] : corrections_) {
      out.write(scope.low);
      out.write(scope.high);
      out.write(c.bias);
      out.write(c.slope);
    }
  }

  void restore_from(store::snapshot_reader& in) {
    if (in.read<std::uint64_t>() != tag) return in.mark_corrupt();
    const bool same_model = in.read_string() == fitted_on_;
    const auto count = in.read<std::uint64_t>();
    constexpr std::size_t bytes_each = 2 * sizeof(std::uint64_t) + 2 * sizeof(float);
    if (count > in.remaining() / bytes_each) return in.mark_corrupt();
    std::unique_lock lock(mutex_);
    corrections_.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
      hash128 scope;
      scope.low = in.read<std::uint64_t>();
      scope.high = in.read<std::uint64_t>();
      correction c;
      c.bias = in.read<float>();
      c.slope = in.read<float>();
      const float bound = options_.max_correction;
      if (!(std::abs(c.bias) <= bound && std::abs(c.slope) <= bound)) return in.mark_corrupt();  // NaN too
      if (same_model && options_.learn && corrections_.size() < options_.max_scopes) corrections_[scope] = c;
    }
  }

 private:
  static constexpr std::uint64_t tag = 0x31524649524556ull;  // "VERIFR1", little-endian
  static constexpr float logit_limit = 12.0f;              // keeps logits and their gradients finite

  // logit = base + bias + slope * base, learned per scope.
  struct correction {
    float bias = 0;
    float slope = 0;

    float apply(float base) const noexcept { return base + bias + slope * base; }

    void step(float base, bool correct, const learned_verifier_options& o) noexcept {
      const float error = sigmoid(apply(base)) - (correct ? 1.0f : 0.0f);  // the log loss's gradient in the logit
      const float bound = o.max_correction;
      bias = std::clamp(bias - o.learning_rate * error, -bound, bound);
      // The slope never flips the base's order: 1 + slope stays positive.
      slope = std::clamp(slope - o.learning_rate * error * base / logit_limit, std::max(-bound, -0.9f), bound);
    }
  };

  static float sigmoid(float logit) noexcept { return 1.0f / (1.0f + std::exp(-logit)); }

  float base_logit(const prepared_text& request, const verification_candidate& candidate) const {
    if (!model_) {
      const float p = std::clamp(candidate.similarity, 1e-5f, 1.0f - 1e-5f);
      return std::log(p / (1.0f - p));
    }
    // The stored side is prepared per candidate (the cache keeps no
    // prepared texts: at a million entries they would outweigh the
    // vectors), into a buffer of this thread's that keeps its memory.
    thread_local prepared_text stored;
    featurizer_.prepare(candidate.stored, stored);
    std::array<float, pair_featurizer::feature_count> features;
    featurizer_.features(request, stored, candidate.similarity, features);
    return std::clamp(model_->logit(features), -logit_limit, logit_limit);
  }

  std::optional<correction> correction_of(const hash128& scope) const {
    std::shared_lock lock(mutex_);
    const auto found = corrections_.find(scope);
    if (found == corrections_.end()) return std::nullopt;
    return found->second;
  }

  learned_verifier_options options_;
  pair_featurizer featurizer_;
  std::optional<verifier_model> model_;
  std::string fitted_on_;

  mutable std::shared_mutex mutex_;  // corrections_
  boost::unordered_flat_map<hash128, correction, hash128_hasher> corrections_;
};

static_assert(LearningVerifier<learned_verifier> && PersistentVerifier<learned_verifier>);

}  // namespace llmgate::inline v0
