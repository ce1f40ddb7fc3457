// The Embedder concept: what the semantic cache needs to turn a request's
// text into a vector, whether the embedder runs in process (the hashing
// embedder) or behind an HTTP API.
#pragma once

#include <concepts>      // std::convertible_to, std::same_as
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <span>          // std::span
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code

#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// Turns text into a vector of dimension() floats.
/// - embed(text, out) writes into the caller's `out`, which must hold
///   exactly dimension() floats (else errc::dimension_mismatch, and `out`
///   is left alone). Writing into caller memory lets a cache embed straight
///   into its own storage and lets a hot path reuse one buffer, so an
///   embedder need not allocate per call. Failures (a remote embedder's
///   network error) are returned, never thrown.
/// - embed is const and safe to call from many threads at once.
/// - Vectors are meant for cosine similarity; embedders may return them
///   unit length already (the hashing embedder does).
template <class E>
concept Embedder = requires(const E& e, std::string_view text, std::span<float> out) {
  { e.dimension() } -> std::convertible_to<std::size_t>;
  { e.embed(text, out) } -> std::same_as<std::error_code>;
};

/// An embedder that learns from traffic (the hashing embedder learns
/// document frequencies), so that its vectors depend on what it has seen.
/// Its weighting changes only when new weights are published, each a new
/// generation(); vectors of different generations must not be compared,
/// so a cache that stores vectors re-embeds them under the next weights
/// (while it still answers with the current ones) and then publishes them.
/// - observe(text): learns from one request; never changes embed's output;
/// - refresh_due(): whether enough was learned since the last weights that
///   the owner should make new ones (and re-embed what it stores);
/// - next_weights(): weights from everything learned, not yet used by embed(text, out);
/// - embed(text, out, weights): embed under the given weights;
/// - publish(weights): embed(text, out) uses these from now on;
/// - current_weights(), generation(): what embed(text, out) uses now;
/// - refresh(): next_weights() published at once; returns the new generation.
/// embed(text, out), current_weights() and generation() are safe while other
/// threads observe() and publish(): a cache embeds with no lock of its own
/// held while it publishes new weights. Generations only grow, so a vector
/// made after generation() read g is of weights g or newer.
template <class E>
concept LearningEmbedder =
    Embedder<E> && requires(E& e, const E& view, std::string_view text, std::span<float> out,
                            typename E::weights_type weights) {
      e.observe(text);
      { view.refresh_due() } -> std::same_as<bool>;
      { view.next_weights() } -> std::same_as<typename E::weights_type>;
      { view.embed(text, out, weights) } -> std::same_as<std::error_code>;
      e.publish(weights);
      { view.current_weights() } -> std::same_as<typename E::weights_type>;
      { view.generation() } -> std::same_as<std::uint64_t>;
      { e.refresh() } -> std::same_as<std::uint64_t>;
    };

/// An embedder whose learned state a cache snapshot keeps: save_to appends
/// it, load_from reads it back (marking the reader corrupt on content that
/// cannot be right).
template <class E>
concept PersistentEmbedder = Embedder<E> && requires(const E& view, store::snapshot_writer& out,
                                                     store::snapshot_reader& in) {
  view.save_to(out);
  { E::load_from(in) } -> std::same_as<E>;
};

}  // namespace llmgate::inline v0
