// The Verifier concept (whether a stored answer serves a request) and its
// simplest model, the embedder's similarity behind a guard.
//
// The embedder's similarity alone separates requests that want the same
// answer from those that do not only so far: "How can I increase my IQ?"
// and "Can I increase my IQ?" sit close and want different answers. A
// verifier is the semantic cache's second stage: for each stored request
// the index found near the request, above a low prefilter similarity, it
// gives the probability that the stored answer serves the request, and
// the threshold policy decides on that probability instead of on the
// similarity.
//
// A lookup prepares the request once (prepare(): its tokens, its features'
// request side) and asks probability() of each candidate, so that what the
// request contributes is not computed again per candidate.
//
// Models:
//   guarded_similarity<Guard>  the probability is the similarity; a
//                              guard's veto makes it 0 (the cache as it was
//                              before verifiers: the default)
//   learned_verifier           features of the two texts through a fitted
//                              model, corrected per scope by feedback
//                              (cache/learned_verifier.hpp)
#pragma once

#include <concepts>     // std::same_as
#include <cstdint>      // std::uint64_t
#include <string_view>  // std::string_view

#include "llmgate/cache/guard.hpp"  // GuardPolicy, veto_reason, lexical_guard
#include "llmgate/cache/scope.hpp"  // hash128
#include "llmgate/store/snapshot_file.hpp"  // snapshot_writer, snapshot_reader (PersistentVerifier)

namespace llmgate::inline v0 {

/// One stored request a lookup found near the request.
struct verification_candidate {
  std::string_view stored;  ///< the stored request's key text
  float similarity = 0;     ///< the embedder's cosine between the two
  std::uint64_t hits = 0;   ///< times its answer was served so far
};

/// - prepare(request): what the other calls need of the request, made
///   once per lookup;
/// - probability(scope, prepared, candidate): that the candidate's stored
///   answer serves a request in `scope` (the partition searched);
/// - vetoes(prepared, candidate): a hard no whatever the probability,
///   asked only of the candidates the threshold policy accepts (so that a
///   costly check runs on few), veto_reason::none to let it through.
/// Verifiers are used from many threads at once; one that learns guards
/// its own state.
template <class V>
concept Verifier = requires(const V& verifier, std::string_view request, const typename V::prepared_request& prepared,
                            const hash128& scope, const verification_candidate& candidate) {
  { verifier.prepare(request) } -> std::same_as<typename V::prepared_request>;
  { verifier.probability(scope, prepared, candidate) } -> std::same_as<float>;
  { verifier.vetoes(prepared, candidate) } -> std::same_as<veto_reason>;
};

/// A verifier that learns from feedback on the answers served (and
/// explored): learn(scope, request, candidate, correct). What one scope
/// teaches it changes the probabilities in that scope only.
template <class V>
concept LearningVerifier = Verifier<V> && requires(V& verifier, const hash128& scope, std::string_view request,
                                                   const verification_candidate& candidate, bool correct) {
  verifier.learn(scope, request, candidate, correct);
};

/// A verifier whose learned state a cache snapshot saves and restores;
/// restore_from marks the reader corrupt on content that cannot be right.
template <class V>
concept PersistentVerifier = Verifier<V> && requires(const V& view, V& verifier, store::snapshot_writer& out,
                                                     store::snapshot_reader& in) {
  view.save_to(out);
  verifier.restore_from(in);
};

/// The similarity is the probability and the guard has the veto: a cache
/// with this verifier decides exactly as one that compares the similarity
/// with its threshold and then asks the guard.
template <GuardPolicy Guard = lexical_guard>
struct guarded_similarity {
  using prepared_request = std::string_view;

  Guard guard = {};

  prepared_request prepare(std::string_view request) const noexcept { return request; }

  float probability(const hash128&, prepared_request, const verification_candidate& candidate) const noexcept {
    return candidate.similarity;
  }

  veto_reason vetoes(prepared_request request, const verification_candidate& candidate) const {
    return guard.vetoes(request, candidate.stored);
  }
};

static_assert(Verifier<guarded_similarity<>> && Verifier<guarded_similarity<no_guard>>);

}  // namespace llmgate::inline v0
