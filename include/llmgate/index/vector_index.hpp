// The VectorIndex concept: what the semantic cache and the router need from
// a nearest-neighbour index, whichever algorithm is behind it.
#pragma once

#include <concepts>      // std::same_as, std::convertible_to, std::predicate
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <optional>      // std::optional (PersistentIndex)
#include <span>          // std::span
#include <system_error>  // std::error_code
#include <vector>        // std::vector

#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// The caller's name for a vector; the index never invents ids.
using vector_id = std::uint64_t;

/// One result of a search: whose vector, how far (the metric's distance,
/// smaller is closer) and how similar (the metric's similarity).
struct search_hit {
  vector_id id;
  float distance;
  float similarity;
  friend bool operator==(const search_hit&, const search_hit&) = default;
};

/// The filter that lets every vector through.
struct accept_all {
  constexpr bool operator()(vector_id) const noexcept { return true; }
};

/// A nearest-neighbour index of float vectors under caller-given ids.
/// - add(id, v): dimension_mismatch or duplicate_id as an error code, never thrown;
/// - remove(id): false when the id is not there; its slot is reused later;
/// - search(q, k[, filter]): up to k hits, closest first, only ids the filter accepts;
/// - safe for concurrent calls from many threads: searches, adds and removes
///   (the semantic cache adds under its shared lock, beside lookups and
///   other inserts).
template <class I>
concept VectorIndex = requires(I& index, const I& view, vector_id id, std::span<const float> v,
                               std::size_t k) {
  typename I::metric_type;
  { index.add(id, v) } -> std::same_as<std::error_code>;
  { index.remove(id) } -> std::same_as<bool>;
  { view.contains(id) } -> std::same_as<bool>;
  { view.search(v, k) } -> std::same_as<std::vector<search_hit>>;
  { view.search(v, k, accept_all{}) } -> std::same_as<std::vector<search_hit>>;
  { view.size() } -> std::convertible_to<std::size_t>;
  { view.dimension() } -> std::convertible_to<std::size_t>;
  { view.memory_usage() } -> std::convertible_to<std::size_t>;
};

/// An index that can be written into a snapshot and read back as it was.
/// load_from sets `ec` and returns nothing when the content cannot be this index.
template <class I>
concept PersistentIndex = VectorIndex<I> && requires(const I& view, store::snapshot_writer& out,
                                                     store::snapshot_reader& in, std::error_code& ec) {
  view.save_to(out);
  { I::load_from(in, ec) } -> std::same_as<std::optional<I>>;
};

/// An index whose vectors can be replaced in place, on a copy taken while
/// other threads search it: a semantic cache re-weighting its vectors (the
/// same texts under an embedder's new weights) keeps such an index's graph
/// instead of building it again.
/// - copy(): an independent index with the same ids, vectors and structure;
/// - overwrite(id, v): replaces the vector of `id` and keeps its links
///   (unknown_id or dimension_mismatch as an error code).
template <class I>
concept ReweightableIndex = VectorIndex<I> && requires(const I& view, I& index, vector_id id,
                                                       std::span<const float> v) {
  { view.copy() } -> std::same_as<I>;
  { index.overwrite(id, v) } -> std::same_as<std::error_code>;
};

}  // namespace llmgate::inline v0
