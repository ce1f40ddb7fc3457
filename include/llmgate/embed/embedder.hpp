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
/// It changes its weighting only at refresh(), each of which starts a new
/// generation(); vectors of different generations must not be compared,
/// so a cache that stores vectors re-embeds them when the generation moves.
/// - observe(text): learns from one request; never changes embed's output.
/// - refresh_due(): whether enough was learned since the last refresh that
///   the owner should refresh (and re-embed what it stores).
/// - refresh(): starts a new generation from what was learned; returns it.
/// - embed(text, out, generation): embed that also reports the generation
///   it used, for callers that share an embedder with another owner that
///   may refresh at any moment.
template <class E>
concept LearningEmbedder =
    Embedder<E> && requires(E& e, const E& view, std::string_view text, std::span<float> out,
                            std::uint64_t& generation) {
      e.observe(text);
      { view.refresh_due() } -> std::same_as<bool>;
      { e.refresh() } -> std::same_as<std::uint64_t>;
      { view.generation() } -> std::same_as<std::uint64_t>;
      { view.embed(text, out, generation) } -> std::same_as<std::error_code>;
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
