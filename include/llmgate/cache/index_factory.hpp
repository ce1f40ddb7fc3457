// The IndexFactory concept: how a semantic cache makes the index of each
// of its scopes, and what it does to an index it loads from a snapshot.
//
// A cache keeps one index per scope and makes them as scopes appear, all
// of the embedder's dimension; the factory carries whatever else an index
// is built with (an HNSW graph's m, ef_construction and search breadth).
// A snapshot keeps each index as it was built, graph included, and the
// loading cache hands it to the factory's adopt(), which sets what may
// change from run to run (the search breadth), so that a loaded cache
// searches as wide as its code says today and finds what the saved one did.
//
// Models here: hnsw_index_factory (the default, int8 HNSW) and
// flat_index_factory (exact search, for small caches and tests).
#pragma once

#include <concepts>  // std::same_as, std::copyable
#include <cstddef>   // std::size_t

#include "llmgate/index/flat_index.hpp"    // flat_index
#include "llmgate/index/hnsw_index.hpp"    // hnsw_index, hnsw_parameters
#include "llmgate/index/metric.hpp"        // cosine_metric
#include "llmgate/index/vector_index.hpp"  // VectorIndex
#include "llmgate/simd/scaled_int8.hpp"    // simd::scaled_int8

namespace llmgate::inline v0 {

/// Makes the indexes of a semantic cache.
/// - index_type: a VectorIndex (move-constructible: the cache owns each one);
/// - make(dimension): a new, empty index of vectors of that dimension.
/// Optionally, adopt(index&): settles an index read from a snapshot (which
/// keeps its structure) into what this factory would make, e.g. its search
/// breadth; see AdoptingIndexFactory.
/// Factories are copied into the cache and used under its lock.
template <class F>
concept IndexFactory = std::copyable<F> && requires(const F& factory, std::size_t dimension) {
  typename F::index_type;
  requires VectorIndex<typename F::index_type>;
  { factory.make(dimension) } -> std::same_as<typename F::index_type>;
};

/// A factory that settles indexes loaded from a snapshot.
template <class F>
concept AdoptingIndexFactory = IndexFactory<F> && requires(const F& factory, typename F::index_type& index) {
  factory.adopt(index);
};

/// HNSW indexes with the given parameters. A loaded graph keeps the m and
/// ef_construction it was built with and takes ef_search from here.
template <Metric M = cosine_metric, class Storage = simd::float16>
  requires storable_under<M, Storage>
struct hnsw_index_factory {
  using index_type = hnsw_index<M, Storage>;

  /// A cache looks for near-duplicates, which a narrower search than
  /// recall@10 benchmarks use finds as well on a well-built graph. Text
  /// embeddings of short questions are hard data for a graph (most pairs
  /// are nearly orthogonal): more links per element (m 32) and a wider
  /// search per insert (ef_construction 200) pay for themselves there, and
  /// then let a lookup search narrowly (ef_search 12). bench/cache_bench.cpp
  /// (scripts/bench cache) measures the trade; its figures are in the
  /// commit messages that set these values.
  hnsw_parameters parameters{.m = 32, .ef_construction = 200, .ef_search = 12};

  index_type make(std::size_t dimension) const { return index_type(dimension, parameters); }
  void adopt(index_type& index) const { index.set_ef_search(parameters.ef_search); }
};

/// Exact indexes (flat_index): every lookup scans its scope.
template <Metric M = cosine_metric>
struct flat_index_factory {
  using index_type = flat_index<M>;
  index_type make(std::size_t dimension) const { return index_type(dimension); }
};

/// The index a semantic cache uses unless given another: HNSW over cosine
/// similarity with a byte per vector component (simd/scaled_int8.hpp). A
/// cache compares similarities with thresholds of two decimals, which
/// int8's error leaves as they were (scripts/bench index --storage int8
/// measures it), and half float16's bytes make both lookups and inserts
/// cheaper.
using default_index_factory = hnsw_index_factory<cosine_metric, simd::scaled_int8>;

static_assert(AdoptingIndexFactory<default_index_factory> && IndexFactory<flat_index_factory<>>);

}  // namespace llmgate::inline v0
