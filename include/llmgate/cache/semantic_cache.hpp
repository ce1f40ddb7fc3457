// basic_semantic_cache: answers a request with the stored answer of an
// earlier request that means the same, within the same scope.
//
// A lookup embeds the request's key text, searches the scope's own index
// for the nearest stored requests, has the verifier give each one above
// the prefilter similarity the probability that its answer serves the
// request, and walks them most probable first: the threshold policy says
// hit, miss or explore on that probability, the verifier may veto a hit
// for reasons the embedder misses (another number, a negation), and an
// entry once reported wrong at some similarity never serves at or below it
// again.
// Each scope (tenant, model, parameters, system prompt, and the
// conversation context the key policy adds) has an index of its own, so no
// search can ever see another scope's entries.
//
// A lookup is two steps, so that no embedder ever runs while the cache is
// locked (an embedder may be slow, or behind an HTTP API):
//   cache_key key = cache.key(scope, messages);       // the key policy
//   looked_up_vector v = cache.embed(key.text);       // no cache lock held
//   lookup_result found = cache.search(key, std::move(v));  // shared lock
// lookup() is the two together. A caller that embeds elsewhere (e.g.
// asynchronously) builds the vector with looked_up_vector::of(text, values)
// and calls search(); with external_embedder every vector comes that way.
// search() embeds again, under the lock, only a vector made under weights a
// learning embedder has replaced since (or of another text).
//
// An insert takes the exclusive lock only to store its entry and, after,
// to note it linked: its vector is linked into the scope's index (a graph
// search, the slow part) with no cache lock held, beside lookups and other
// inserts (store_and_index()).
//
// Capacity: max_entries and max_bytes, both kept by every insert: the
// policy's expired entries leave first, then its victims, until the new
// entry fits. An entry counts the bytes of its key text, its answer
// (cache_value_traits) and its vector as the index stores it. An entry
// larger than max_bytes alone is refused (insert returns rejected_entry),
// and a snapshot loads down to the bounds of the cache that loads it.
//
// Policies, each a concept with models beside it:
//   Embedder        text -> vector             embed/embedder.hpp
//   IndexFactory    makes each scope's index   cache/index_factory.hpp
//                   (a VectorIndex; ReweightableIndex and PersistentIndex
//                   are the extras it uses when the index has them)
//   EvictionPolicy  who leaves a full cache    cache/eviction/ (configured.hpp: chosen at run time)
//   ThresholdPolicy when probable is enough    cache/threshold.hpp (configured_threshold.hpp: at run time)
//   Verifier        does the answer serve?     cache/verifier.hpp (the default: the similarity
//                                              behind the lexical guard, cache/guard.hpp;
//                                              learned: cache/learned_verifier.hpp)
//   KeyPolicy       what is compared           cache/key_policy.hpp
#pragma once

#include <algorithm>     // std::stable_sort, std::max
#include <chrono>        // std::chrono::steady_clock
#include <concepts>      // std::convertible_to
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <limits>        // std::numeric_limits
#include <memory>        // std::shared_ptr
#include <mutex>         // std::unique_lock, std::lock_guard
#include <optional>      // std::optional
#include <shared_mutex>  // std::shared_lock
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/container/small_vector.hpp>      // a lookup's candidates, without a heap allocation
#include <boost/unordered/unordered_flat_map.hpp>  // scope -> index

#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/index_factory.hpp"  // IndexFactory, default_index_factory
#include "llmgate/cache/key_policy.hpp"
#include "llmgate/cache/scope.hpp"
#include "llmgate/cache/semantic_cache_observer.hpp"  // semantic_cache_observer
#include "llmgate/cache/threshold.hpp"
#include "llmgate/cache/value_traits.hpp"
#include "llmgate/cache/verifier.hpp"
#include "llmgate/detail/fair_shared_mutex.hpp"
#include "llmgate/detail/xxhash.hpp"  // XXH3_64bits (Debian libxxhash-dev)
#include "llmgate/embed/embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/index/vector_index.hpp"  // VectorIndex, PersistentIndex, ReweightableIndex
#include "llmgate/error.hpp"
#include "llmgate/metrics/latency_histogram.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// What computing an answer cost, so hits can report what they saved and
/// cost-aware eviction can keep what was expensive.
struct answer_cost {
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
  double usd = 0.0;
};

/// What a lookup found.
enum class lookup_outcome {
  hit,      ///< `answer` may be served
  miss,     ///< nothing close enough: answer fresh and insert
  explore,  ///< answer fresh, compare with `answer`, report through feedback()
};

/// A request's vector: made by basic_semantic_cache::embed() (or by a
/// caller that embedded the key text elsewhere, through of()), searched
/// with by search(), and kept in the lookup's result for the insert that
/// may follow a miss (see basic_semantic_cache::insert).
struct looked_up_vector {
  std::vector<float> values;     ///< empty when nothing could be embedded, and after a hit
  std::uint64_t text_hash = 0;   ///< of the key text embedded (hash_of)
  std::uint64_t generation = 0;  ///< of a learning embedder's weights, else 0

  /// The vector of `text` made elsewhere, e.g. by an asynchronous embedder;
  /// `generation` is the learning embedder's whose weights made it (0 for
  /// any other embedder). Empty `values` say the text could not be
  /// embedded: its search misses without embedding, its insert is never found.
  static looked_up_vector of(std::string_view text, std::vector<float> values, std::uint64_t generation = 0) {
    return {std::move(values), hash_of(text), generation};
  }

  /// The hash text_hash holds for `text`.
  static std::uint64_t hash_of(std::string_view text) noexcept { return XXH3_64bits(text.data(), text.size()); }
};

template <class Value>
struct semantic_lookup {
  lookup_outcome outcome = lookup_outcome::miss;
  std::optional<Value> answer;     ///< for hit and explore
  float similarity = 0.0f;         ///< of the neighbour behind `answer` (or the nearest seen)
  float probability = 0.0f;        ///< the verifier's, that `answer` serves the request (hit and explore)
  entry_handle entry = 0;          ///< the neighbour, for feedback()
  std::uint64_t entry_serial = 0;  ///< tells a reused handle from the entry that was looked up
  hash128 scope{};                 ///< the partition searched (scope joined with context)
  std::uint32_t vetoes = 0;        ///< neighbours the threshold accepted and the verifier vetoed
  looked_up_vector request;        ///< the request's vector, on a miss or an explore
  std::string key_text;            ///< the request's key text, on a hit or an explore when the
                                   ///< verifier learns or an observer listens (feedback() passes it on)
};

/// The index default_index_factory makes (cache/index_factory.hpp).
using default_semantic_index = default_index_factory::index_type;

struct semantic_cache_options {
  std::size_t max_entries = 100000;
  /// What the entries may count together (see basic_semantic_cache's
  /// Capacity), so that long requests cannot grow the cache past it.
  std::size_t max_bytes = std::size_t{256} << 20;
  std::size_t neighbours = 4;  ///< nearest stored requests examined per lookup
  /// Neighbours less similar than this are not put to the verifier, so
  /// that a verifier that costs something (learned_verifier) spends it on
  /// candidates that have a chance. 0 puts every neighbour to it.
  float prefilter_similarity = 0.0f;
  // The index's parameters (HNSW's m, ef_construction, ef_search) are
  // the IndexFactory's: see cache/index_factory.hpp.
  /// A learning embedder (hashing_embedder) proposes new weights as its
  /// documents grow (at 1,000, then at each doubling), and every stored
  /// request is then embedded again: about half a second at 65,000
  /// entries. By default the insert that makes it due does that work; a
  /// caller with a thread to spare sets this false and calls refresh()
  /// there, so that no request waits for it.
  bool refresh_in_insert = true;
};

struct semantic_cache_statistics {
  std::uint64_t lookups = 0, hits = 0, misses = 0, explores = 0, vetoes = 0;
  std::uint64_t insertions = 0, evictions = 0, wrong_reports = 0;
  std::uint64_t tokens_saved = 0;
  double usd_saved = 0.0;
  std::chrono::nanoseconds lookup_p50{}, lookup_p99{};
  std::size_t bytes = 0;  ///< what the entries count against max_bytes
};

template <class Value = std::string, Embedder EmbedderT = hashing_embedder,
          IndexFactory Indexes = default_index_factory, EvictionPolicy Eviction = lru_eviction,
          ThresholdPolicy Threshold = static_threshold, Verifier Verify = guarded_similarity<lexical_guard>,
          KeyPolicy Key = last_user_turn>
class basic_semantic_cache {
  using Index = typename Indexes::index_type;
  // Declared before save() and restore(), whose constraint it is.
  static constexpr bool persistent =
      PersistentIndex<Index> && requires(store::snapshot_writer& out, store::snapshot_reader& in, const Value& value) {
        cache_value_traits<Value>::write(out, value);
        { cache_value_traits<Value>::read(in) } -> std::convertible_to<Value>;
      };

 public:
  using value_type = Value;
  using lookup_result = semantic_lookup<Value>;
  using index_factory_type = Indexes;
  using index_type = Index;

  /// What insert returns for an entry it refused: larger than max_bytes
  /// alone, or any entry when max_entries is 0. The cache is unchanged.
  static constexpr entry_handle rejected_entry = std::numeric_limits<entry_handle>::max();

  explicit basic_semantic_cache(semantic_cache_options options = {}, EmbedderT embedder = EmbedderT(),
                                Threshold threshold = Threshold(), Verify verifier = Verify(),
                                Key key = Key(), Eviction eviction = Eviction(), Indexes indexes = Indexes())
      : options_(options), embedder_(std::move(embedder)), threshold_(std::move(threshold)),
        verifier_(std::move(verifier)), key_(std::move(key)), index_factory_(std::move(indexes)),
        eviction_(std::move(eviction)) {}

  /// Step one of a lookup: what a chat request is looked up by (the key
  /// policy's text and its scope joined with the context).
  cache_key key(const cache_scope& scope, std::span<const chat_message> messages) const {
    return key_.key(scope, messages);
  }

  /// Step one for a plain text request: the text itself in the scope.
  cache_key key(const cache_scope& scope, std::string_view text) const { return {scope.hash(), std::string(text)}; }

  /// Step two: embeds a key's text, holding no lock of the cache, so that
  /// lookups and inserts go on meanwhile (a learning embedder's embed() is
  /// safe while the cache publishes new weights; see LearningEmbedder).
  /// The vector is empty when the embedder could not embed the text.
  looked_up_vector embed(std::string_view key_text) const {
    // The generation is read before embedding: weights published in between
    // leave the vector labelled older than it is, which search() and
    // insert() take as stale and embed again, never the other way round.
    looked_up_vector vector{std::vector<float>(embedder_.dimension()), looked_up_vector::hash_of(key_text),
                            weights_generation()};
    if (embedder_.embed(key_text, vector.values)) vector.values.clear();
    return vector;
  }

  /// Step three: searches the key's scope with `vector` (from embed(), or
  /// looked_up_vector::of() for a vector made elsewhere) under the shared
  /// lock. A vector of another text or of weights replaced since is
  /// embedded again first, under the lock; an empty one of this text
  /// misses. On a miss or an explore the result keeps the vector for
  /// insert(std::move(result), ...).
  lookup_result search(const cache_key& key, looked_up_vector vector) {
    const auto started = std::chrono::steady_clock::now();
    lookup_result result = search_key(key.scope, key.text, std::move(vector));
    latency_.record(std::chrono::steady_clock::now() - started);
    return result;
  }

  /// Looks up a plain text request: embed() then search().
  lookup_result lookup(const cache_scope& scope, std::string_view text) {
    return lookup_key(scope.hash(), text);
  }

  /// Looks up a chat request through the key policy: key(), embed(), search().
  lookup_result lookup(const cache_scope& scope, std::span<const chat_message> messages) {
    const cache_key key = key_.key(scope, messages);
    return lookup_key(key.scope, key.text);
  }

  /// Stores `answer` for a plain text request; returns its entry, or
  /// rejected_entry (as the inserts below do).
  entry_handle insert(const cache_scope& scope, std::string_view text, Value answer,
                      answer_cost cost = {}) {
    return insert_key(scope.hash(), text, std::move(answer), cost);
  }

  entry_handle insert(const cache_scope& scope, std::span<const chat_message> messages, Value answer,
                      answer_cost cost = {}) {
    const cache_key key = key_.key(scope, messages);
    return insert_key(key.scope, key.text, std::move(answer), cost);
  }

  /// As the insert above, for the request that `missed` looked up and did
  /// not serve (a miss or an explore): stores the vector that lookup made
  /// instead of embedding the request a second time. One embedding per
  /// miss rather than two, which for an embedder behind an HTTP API is a
  /// call saved. The request is embedded anew when its text is not the one
  /// looked up, or the embedder's weights changed in between.
  entry_handle insert(lookup_result&& missed, const cache_scope& scope, std::string_view text, Value answer,
                      answer_cost cost = {}) {
    return insert_key(scope.hash(), text, std::move(answer), cost, &missed);
  }

  entry_handle insert(lookup_result&& missed, const cache_scope& scope, std::span<const chat_message> messages,
                      Value answer, answer_cost cost = {}) {
    const cache_key key = key_.key(scope, messages);
    return insert_key(key.scope, key.text, std::move(answer), cost, &missed);
  }

  /// Stores `answer` under a key from key().
  entry_handle insert(const cache_key& key, Value answer, answer_cost cost = {}) {
    return insert_key(key.scope, key.text, std::move(answer), cost);
  }

  /// Stores `answer` under the key that `missed` was searched with,
  /// keeping the vector the search used (as the inserts above).
  entry_handle insert(lookup_result&& missed, const cache_key& key, Value answer, answer_cost cost = {}) {
    return insert_key(key.scope, key.text, std::move(answer), cost, &missed);
  }

  /// Tells `observer` of every change the cache makes on its own from now
  /// on (nullptr: no one); it must outlive the cache or be replaced first.
  void observe(semantic_cache_observer<Value>* observer) {
    std::unique_lock lock(mutex_);
    observer_ = observer;
  }

  // What another replica's cache did, applied here (the Redis tier): the
  // *_replica calls tell no observer. An entry is found by its scope and
  // key text, which are the same on every replica.

  /// Stores an entry another replica stored, unless the scope holds its
  /// text already or the entry is larger than max_bytes alone (then
  /// false). `vector` is the one it was indexed by there: used as it is by
  /// an embedder that does not learn (the same model makes the same
  /// vectors); a learning embedder's weights differ between replicas, so
  /// it embeds the text itself, as it does when `vector` is empty.
  bool insert_replica(const cache_key& key, std::vector<float> vector, Value answer, answer_cost cost = {}) {
    {
      std::shared_lock lock(mutex_);
      if (find_text(key.scope, key.text)) return false;
    }
    lookup_result given;
    if constexpr (!LearningEmbedder<EmbedderT>)
      if (!vector.empty()) given.request = looked_up_vector::of(key.text, std::move(vector));
    return insert_key(key.scope, key.text, std::move(answer), cost, given.request.values.empty() ? nullptr : &given,
                      /*replicated=*/true) != rejected_entry;
  }

  /// Applies another replica's verdict on the entry stored for
  /// `stored_text` in `scope` (as feedback() does); false when this cache
  /// does not hold it.
  bool feedback_replica(const hash128& scope, std::string_view request_text, std::string_view stored_text,
                        float similarity, float probability, bool correct) {
    std::optional<entry_handle> handle;
    std::uint64_t serial = 0;
    {
      std::shared_lock lock(mutex_);
      handle = find_text(scope, stored_text);
      if (!handle) return false;
      serial = entries_[*handle].serial;
    }
    learn(scope, *handle, serial, request_text, similarity, probability, correct, false);
    return true;
  }

  /// Removes the entry stored for `text` in `scope` (another replica
  /// evicted it); false when this cache does not hold it.
  bool erase_replica(const hash128& scope, std::string_view text) {
    std::unique_lock lock(mutex_);
    const auto handle = find_text(scope, text);
    if (!handle) return false;
    {
      std::lock_guard counters(counters_mutex_);
      eviction_.erase(*handle);
    }
    erase_entry(*handle);
    return true;
  }

  /// f(scope, text, answer, cost) for every live entry, under the shared
  /// lock (inserts wait): for copying a cache's entries into another.
  template <class F>
  void for_each_entry(F f) const {
    std::shared_lock lock(mutex_);
    for (const entry& e : entries_)
      if (e.live) f(e.scope, std::string_view(e.text), e.answer, e.cost);
  }

  /// Embeds every stored request again under the embedder's next weights
  /// if they are due and no other thread is doing so; returns whether it
  /// did. Lookups and inserts go on meanwhile. For callers that set
  /// refresh_in_insert to false; an embedder that does not learn never
  /// needs it.
  bool refresh() {
    if constexpr (LearningEmbedder<EmbedderT>) {
      std::optional<typename EmbedderT::weights_type> next;
      {
        std::unique_lock lock(mutex_);
        next = claim_refresh();
      }
      if (next) reembed_under(std::move(*next));
      return next.has_value();
    } else {
      return false;
    }
  }

  /// Reports whether the answer a lookup returned (hit or explore) was
  /// right. A wrong one stops its entry serving at that similarity or
  /// below; both teach the threshold policy (on the verifier's
  /// probability) and a learning verifier (in the lookup's scope only).
  /// Feedback on an entry evicted since the lookup is ignored.
  void feedback(const lookup_result& result, bool correct) {
    if (result.outcome == lookup_outcome::miss) return;
    learn(result.scope, result.entry, result.entry_serial, result.key_text, result.similarity, result.probability,
          correct, true);
  }

  semantic_cache_statistics statistics() const {
    std::shared_lock lock(mutex_);
    std::lock_guard counters(counters_mutex_);
    auto s = statistics_;
    s.bytes = bytes_;
    s.lookup_p50 = latency_.percentile(0.50);
    s.lookup_p99 = latency_.percentile(0.99);
    return s;
  }

  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return live_entries_;
  }

  /// What the entries count against max_bytes.
  std::size_t bytes() const {
    std::shared_lock lock(mutex_);
    return bytes_;
  }

  /// Writes the whole cache to `path` atomically (new file, fsync, rename),
  /// versioned and checksummed: the embedder's learned weights, every entry
  /// under its handle, every scope's index as it is (so a loaded cache finds
  /// exactly the neighbours this one finds), the eviction order, what the
  /// threshold policy and the verifier learned and the statistics. Lookups may run
  /// meanwhile; inserts wait. As in the exact cache, lifetimes start again
  /// on load (steady_clock means nothing in another process) and entries
  /// already expired are left out.
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const
    requires persistent
  {
    return snapshot().commit(path);
  }

  /// What save() writes, as bytes (the Redis tier keeps it in Redis).
  std::string save_bytes() const
    requires persistent
  {
    return snapshot().seal();
  }

  /// Reads a cache that save() wrote. The policies passed in are used with
  /// the state the file holds: the embedder's learned weights (where the
  /// embedder keeps any) and the threshold's learned state replace theirs.
  /// Throws llmgate::error naming the file and the cause when it is
  /// missing, truncated, corrupt, from a newer version or of another kind.
  /// Each index keeps the structure it was saved with (an HNSW graph its m
  /// and ef_construction); `indexes` settles it (adopt(): an HNSW graph's
  /// search breadth is the factory's ef_search).
  static basic_semantic_cache load(const std::filesystem::path& path, semantic_cache_options options = {},
                                   EmbedderT embedder = EmbedderT(), Threshold threshold = Threshold(),
                                   Verify verifier = Verify(), Key key = Key(), Eviction eviction = Eviction(),
                                   Indexes indexes = Indexes())
    requires persistent
  {
    std::error_code ec;
    store::snapshot_reader in(path, file_kind, file_version, ec);
    if (ec) throw load_error(path, ec);
    // Built in place (the cache holds locks, so it cannot move).
    return basic_semantic_cache(in, path, options, std::move(embedder), std::move(threshold), std::move(verifier),
                                std::move(key), std::move(eviction), std::move(indexes));
  }

  /// Reads a cache that save_bytes() wrote, as load() reads a file;
  /// `source` names where the bytes came from in an error's message.
  static basic_semantic_cache load_bytes(std::string bytes, const std::string& source,
                                         semantic_cache_options options = {}, EmbedderT embedder = EmbedderT(),
                                         Threshold threshold = Threshold(), Verify verifier = Verify(),
                                         Key key = Key(), Eviction eviction = Eviction(), Indexes indexes = Indexes())
    requires persistent
  {
    std::error_code ec;
    store::snapshot_reader in(std::move(bytes), file_kind, file_version, ec);
    if (ec) throw load_error(source, ec);
    return basic_semantic_cache(in, source, options, std::move(embedder), std::move(threshold), std::move(verifier),
                                std::move(key), std::move(eviction), std::move(indexes));
  }

  const Threshold& threshold_policy() const noexcept { return threshold_; }
  const Verify& verifier() const noexcept { return verifier_; }
  const EmbedderT& embedder() const noexcept { return embedder_; }
  const Indexes& index_factory() const noexcept { return index_factory_; }

 private:
  // save() and save_bytes(): the whole cache, in file order.
  store::snapshot_writer snapshot() const
    requires persistent
  {
    store::snapshot_writer out(file_kind, file_version);
    std::unique_lock no_inserts(insert_gate_);
    std::shared_lock lock(mutex_);
    std::lock_guard counters(counters_mutex_);
    if constexpr (PersistentEmbedder<EmbedderT>) embedder_.save_to(out);
    if constexpr (PersistentThreshold<Threshold>) threshold_.save_to(out);
    out.write(static_cast<std::uint8_t>(PersistentVerifier<Verify>));
    if constexpr (PersistentVerifier<Verify>) verifier_.save_to(out);
    save_statistics(out);
    out.write(serials_);
    out.write(static_cast<std::uint64_t>(entries_.size()));
    for (const entry& e : entries_) save_entry(out, e);
    out.write_array(std::span<const entry_handle>(free_handles_));
    const std::vector<entry_handle> oldest_first = eviction_order();
    out.write(static_cast<std::uint64_t>(oldest_first.size()));
    out.write_array(std::span<const entry_handle>(oldest_first));
    out.write(static_cast<std::uint64_t>(indexes_.size()));
    for (const auto& [scope, index] : indexes_) {
      out.write(scope.low);
      out.write(scope.high);
      index->save_to(out);
    }
    return out;
  }

  // Reads the rest of a verified snapshot, in file order: the embedder
  // first (it is a member), then everything else.
  basic_semantic_cache(store::snapshot_reader& in, const std::filesystem::path& path, semantic_cache_options options,
                       EmbedderT embedder, Threshold threshold, Verify verifier, Key key, Eviction eviction,
                       Indexes indexes)
      : options_(options), embedder_(saved_embedder(in, std::move(embedder))), threshold_(std::move(threshold)),
        verifier_(std::move(verifier)), key_(std::move(key)), index_factory_(std::move(indexes)),
        eviction_(std::move(eviction)) {
    if constexpr (PersistentThreshold<Threshold>) threshold_.restore_from(in);
    // Version 1 was written before verifiers: the verifier starts afresh.
    if (in.kind_version() >= 2 && in.read<std::uint8_t>() != 0) {
      // What a verifier learned cannot be skipped by one that keeps nothing.
      if constexpr (PersistentVerifier<Verify>) verifier_.restore_from(in);
      else throw load_error(path, errc::corrupt_file);
    }
    load_statistics(in);
    serials_ = in.read<std::uint64_t>();
    const auto count = in.read<std::uint64_t>();
    if (count > in.remaining() || count > std::numeric_limits<entry_handle>::max())
      throw load_error(path, errc::corrupt_file);
    entries_.resize(count);
    for (entry& e : entries_) live_entries_ += load_entry(in, e);
    // Counted anew, as this cache counts (its embedder's dimension, its index's vectors).
    for (entry& e : entries_) {
      if (!e.live) continue;
      e.bytes = entry_bytes(e.text, e.answer);
      bytes_ += e.bytes;
    }
    free_handles_.resize(count - live_entries_);
    in.read_array(std::span<entry_handle>(free_handles_));
    if (const auto problem = load_eviction_order(in)) throw load_error(path, problem);
    if (const auto problem = load_indexes(in)) throw load_error(path, problem);
    if (const auto finished = in.finish()) throw load_error(path, finished);
    for (entry_handle handle = 0; handle < entries_.size(); ++handle)
      if (const entry& e = entries_[handle]; e.live) texts_[text_key_of(e.scope, e.text)] = handle;
    drop_entries_without_lifetime();
    shrink_to_bounds();
  }

  static EmbedderT saved_embedder(store::snapshot_reader& in, EmbedderT given) {
    if constexpr (PersistentEmbedder<EmbedderT>) return EmbedderT::load_from(in);
    else return given;
  }

  static error load_error(const std::filesystem::path& path, std::error_code code) {
    return store::load_failure("loading semantic cache from '" + path.string() + "'", path, code);
  }

  struct entry {
    hash128 scope{};
    std::string text;
    Value answer{};
    std::size_t bytes = 0;  // counted against max_bytes (entry_bytes)
    answer_cost cost;
    float wrong_at = -1.0f;  // highest similarity at which it was reported wrong
    std::uint64_t serial = 0;
    std::uint64_t hits = 0;  // under counters_mutex_, like the eviction policy that ranks by it
    bool live = false;
    bool linking = false;  // its insert is adding its vector to the index; the handle stays taken till then
  };

  // Shared: an insert links its vector with no cache lock held, into an
  // index a re-embedding may replace meanwhile.
  using index_map = boost::unordered_flat_map<hash128, std::shared_ptr<Index>, hash128_hasher>;

  // An entry's scope and key text, hashed: how replicas name one entry.
  struct text_key {
    hash128 scope;
    std::uint64_t text;
    friend bool operator==(const text_key&, const text_key&) = default;
  };
  struct text_key_hasher {
    std::size_t operator()(const text_key& k) const noexcept { return hash128_hasher{}(k.scope) ^ k.text; }
  };
  static text_key text_key_of(const hash128& scope, std::string_view text) {
    return {scope, looked_up_vector::hash_of(text)};
  }

  // Under either lock: the live entry stored for `text` in `scope`.
  std::optional<entry_handle> find_text(const hash128& scope, std::string_view text) const {
    const auto named = texts_.find(text_key_of(scope, text));
    if (named == texts_.end()) return std::nullopt;
    const entry& e = entries_[named->second];
    if (!e.live || e.scope != scope || e.text != text) return std::nullopt;
    return named->second;
  }

  // A verdict on the entry `handle` (still the one of `serial`): a wrong
  // one stops it serving at `similarity` or below; both teach the
  // threshold policy and a learning verifier; `tell` passes it on to the
  // observer (feedback(), not feedback_replica()).
  void learn(const hash128& scope, entry_handle handle, std::uint64_t serial, std::string_view request_text,
             float similarity, float probability, bool correct, bool tell) {
    std::string stored;  // for a learning verifier, which learns with no lock of the cache held
    std::uint64_t hits = 0;
    {
      std::unique_lock lock(mutex_);
      auto& e = entries_[handle];
      if (!e.live || e.serial != serial) return;
      if (!correct) {
        e.wrong_at = std::max(e.wrong_at, similarity);
        ++statistics_.wrong_reports;
      }
      if (tell && observer_) observer_->told(scope, request_text, e.text, similarity, probability, correct);
      if constexpr (LearningVerifier<Verify>) {
        stored = e.text;
        std::lock_guard counters(counters_mutex_);
        hits = e.hits;
      }
    }
    threshold_.record(scope, handle, probability, correct);
    if constexpr (LearningVerifier<Verify>) verifier_.learn(scope, request_text, {stored, similarity, hits}, correct);
  }
  static constexpr store::kind_tag file_kind{'S', 'E', 'M', 'C'};
  static constexpr std::uint32_t file_version = 2;  // 2: what the verifier learned

  // lookup(): embed() with no lock held, then search_key().
  lookup_result lookup_key(const hash128& scope, std::string_view text) {
    const auto started = std::chrono::steady_clock::now();
    lookup_result result = search_key(scope, text, embed(text));
    latency_.record(std::chrono::steady_clock::now() - started);
    return result;
  }

  lookup_result search_key(const hash128& scope, std::string_view text, looked_up_vector vector) {
    lookup_result result;
    result.scope = scope;
    const typename Verify::prepared_request prepared = verifier_.prepare(text);
    std::shared_lock lock(mutex_);
    const auto index = indexes_.find(scope);
    if (index != indexes_.end()) {
      // Under the shared lock no new weights are published, so a vector
      // of the current generation stays comparable with the indexes.
      if (!current(vector, text)) vector = embed(text);
      if (vector.values.size() == embedder_.dimension()) {
        const candidate_list candidates =
            verified_candidates(scope, prepared, index->second->search(vector.values, options_.neighbours), result);
        for (const candidate& c : candidates) {
          const threshold_decision decision = threshold_.decide(scope, c.handle, c.probability);
          if (decision == threshold_decision::miss) break;
          const entry& e = entries_[c.handle];
          if (verifier_.vetoes(prepared, {e.text, c.similarity, c.hits}) != veto_reason::none) {
            ++result.vetoes;
            continue;
          }
          result.outcome = decision == threshold_decision::hit ? lookup_outcome::hit : lookup_outcome::explore;
          result.answer = e.answer;
          result.similarity = c.similarity;
          result.probability = c.probability;
          result.entry = c.handle;
          result.entry_serial = e.serial;
          if (LearningVerifier<Verify> || observer_) result.key_text = text;
          break;
        }
      }
    }
    if (result.outcome != lookup_outcome::hit) result.request = std::move(vector);
    count(result, result.outcome == lookup_outcome::hit ? &entries_[result.entry].cost : nullptr);
    return result;
  }

  struct candidate {
    entry_handle handle;
    float similarity;
    float probability;
    std::uint64_t hits;
  };
  using candidate_list = boost::container::small_vector<candidate, 8>;

  // Under the shared lock: the neighbours found (closest first) that may
  // serve, with the verifier's probability, most probable first (ties
  // keep the closer first). Notes in `result` the nearest similarity seen.
  candidate_list verified_candidates(const hash128& scope, const typename Verify::prepared_request& prepared,
                                     const std::vector<search_hit>& found, lookup_result& result) const {
    candidate_list candidates;
    for (const search_hit& hit : found) {
      result.similarity = std::max(result.similarity, hit.similarity);
      if (hit.similarity < options_.prefilter_similarity) break;
      const auto handle = static_cast<entry_handle>(hit.id);
      const entry& e = entries_[handle];
      // Not live: evicted while its insert linked it. Another scope: never
      // (each scope has its own index), checked all the same.
      if (!e.live || e.scope != scope || hit.similarity <= e.wrong_at) continue;
      const std::optional<std::uint64_t> hits = hits_unless_expired(handle);
      if (!hits) continue;
      candidates.push_back({handle, hit.similarity,
                            verifier_.probability(scope, prepared, {e.text, hit.similarity, *hits}), *hits});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const candidate& a, const candidate& b) { return a.probability > b.probability; });
    return candidates;
  }

  // Whether `vector` was made (or tried) for `text` under the weights
  // embed() uses now; its values may still be empty (nothing could be
  // embedded) or of another dimension (a caller's mistake), which count as
  // no vector. Safe without the lock; with it, the answer holds until the
  // lock is released.
  bool current(const looked_up_vector& vector, std::string_view text) const {
    return vector.text_hash == looked_up_vector::hash_of(text) && vector.generation == weights_generation();
  }

  // The times an entry served, or nothing when its lifetime is over.
  std::optional<std::uint64_t> hits_unless_expired(entry_handle handle) const {
    std::lock_guard counters(counters_mutex_);
    if (eviction_.is_expired(handle)) return std::nullopt;
    return entries_[handle].hits;
  }

  void count(const lookup_result& result, const answer_cost* saved) {
    std::lock_guard counters(counters_mutex_);
    ++statistics_.lookups;
    statistics_.vetoes += result.vetoes;
    switch (result.outcome) {
      case lookup_outcome::hit:
        ++statistics_.hits;
        statistics_.tokens_saved += saved->prompt_tokens + saved->completion_tokens;
        statistics_.usd_saved += saved->usd;
        ++entries_[result.entry].hits;
        eviction_.touch(result.entry);
        break;
      case lookup_outcome::miss: ++statistics_.misses; break;
      case lookup_outcome::explore: ++statistics_.explores; break;
    }
  }

  // The vector is the one `missed` searched with when it is of this text
  // under the current weights, else embedded before the lock is taken; only
  // weights published in between make the insert embed under the lock.
  entry_handle insert_key(const hash128& scope, std::string_view text, Value answer, answer_cost cost,
                          lookup_result* missed = nullptr, bool replicated = false) {
    // Refused before anything is embedded or locked: the options never change.
    const std::size_t bytes = entry_bytes(text, answer);
    if (options_.max_entries == 0 || bytes > options_.max_bytes) return rejected_entry;
    looked_up_vector vector;
    if (missed) vector = std::move(missed->request);
    if (!current(vector, text)) vector = embed(text);
    if constexpr (LearningEmbedder<EmbedderT>) {
      std::optional<typename EmbedderT::weights_type> next;
      const entry_handle handle =
          store_and_index(scope, text, std::move(answer), bytes, cost, std::move(vector), replicated, [&] {
            embedder_.observe(text);
            if (options_.refresh_in_insert) next = claim_refresh();
          });
      if (next) reembed_under(std::move(*next));
      return handle;
    } else {
      return store_and_index(scope, text, std::move(answer), bytes, cost, std::move(vector), replicated, [] {});
    }
  }

  // An insert in three steps, so that lookups and other inserts go on
  // while its vector is linked into the index (a graph search, the slow
  // part): the entry is stored under the exclusive lock (with `under_lock`
  // run there too), its vector linked with no cache lock held, and the
  // link noted under the exclusive lock again. save() waits for inserts in
  // between (a file holds every stored entry in its index).
  template <class F>
  entry_handle store_and_index(const hash128& scope, std::string_view text, Value answer, std::size_t bytes,
                               answer_cost cost, looked_up_vector vector, bool replicated, F under_lock) {
    std::shared_lock storing(insert_gate_);
    stored_entry stored;
    {
      std::unique_lock lock(mutex_);
      under_lock();
      stored = store(scope, text, std::move(answer), bytes, cost, std::move(vector), replicated);
    }
    if (!stored.index) return stored.handle;  // not embedded: stored, never found
    // Into the index of the weights the vector was made under, even if a
    // re-embedding replaced it meanwhile (the new one has the entry too).
    (void)stored.index->add(stored.handle, stored.vector.values);
    std::unique_lock lock(mutex_);
    entry& e = entries_[stored.handle];
    e.linking = false;
    if (!e.live) {  // evicted meanwhile: erase_entry() left both of these to this insert
      stored.index->remove(stored.handle);
      // A re-embedding published meanwhile put it in its own index too.
      if (const auto now = indexes_.find(scope); now != indexes_.end() && now->second != stored.index)
        now->second->remove(stored.handle);
      free_handles_.push_back(stored.handle);
    }
    return stored.handle;
  }

  // Under the exclusive lock: the embedder's next weights when they are due
  // and no re-embedding runs, which the caller then owns. (A template, so
  // that a cache whose embedder does not learn never names weights_type.)
  template <LearningEmbedder E = EmbedderT>
  std::optional<typename E::weights_type> claim_refresh() {
    if (reembedding_ || !embedder_.refresh_due()) return std::nullopt;
    reembedding_ = true;
    return embedder_.next_weights();
  }

  // What store() stored, for store_and_index() to link: no index when the
  // text could not be embedded.
  struct stored_entry {
    entry_handle handle = 0;
    looked_up_vector vector;
    std::shared_ptr<Index> index;
  };

  // Under the exclusive lock: makes room for `bytes` (entry_bytes, within
  // max_bytes), stores the entry (marked as being linked when it will be
  // indexed) and makes sure its scope has an index, since the map of
  // indexes changes only under this lock.
  stored_entry store(const hash128& scope, std::string_view text, Value answer, std::size_t bytes,
                     answer_cost cost, looked_up_vector vector, bool replicated) {
    while ((live_entries_ >= options_.max_entries || bytes_ + bytes > options_.max_bytes) && evict_one()) {}
    entry_handle handle;
    if (free_handles_.empty()) {
      handle = static_cast<entry_handle>(entries_.size());
      entries_.emplace_back();
    } else {
      handle = free_handles_.back();
      free_handles_.pop_back();
    }
    if (!current(vector, text)) vector = embed(text);  // new weights since the caller's embed()
    const bool indexed = vector.values.size() == embedder_.dimension();
    if (!indexed) vector.values.clear();
    entry& e = entries_[handle];
    e = entry{scope, std::string(text), std::move(answer), bytes, cost, -1.0f, ++serials_, 0, true, indexed};
    ++live_entries_;
    bytes_ += bytes;
    texts_[text_key_of(scope, text)] = handle;
    {
      std::lock_guard counters(counters_mutex_);
      ++statistics_.insertions;
      eviction_.insert(handle, entry_info{bytes, cost.usd, 0});
    }
    if (observer_ && !replicated) observer_->inserted(scope, text, vector.values, e.answer, cost);
    if (!indexed) return {handle, std::move(vector), nullptr};
    return {handle, std::move(vector), index_of(indexes_, scope)};
  }

  // The generation of the weights embed() uses now (safe without the lock,
  // as LearningEmbedder asks; under the cache's lock it does not change).
  std::uint64_t weights_generation() const {
    if constexpr (LearningEmbedder<EmbedderT>)
      return embedder_.generation();
    else
      return 0;
  }

  // Adds a vector to its scope's index, made on first use. An entry whose
  // text cannot be embedded is stored but never found.
  void add_vector(index_map& indexes, const hash128& scope, entry_handle handle, std::span<const float> vector) const {
    (void)index_of(indexes, scope)->add(handle, vector);  // handles are unique: no error to expect
  }

  // A scope's index, made on first use (a scope whose texts could not be
  // embedded has none).
  const std::shared_ptr<Index>& index_of(index_map& indexes, const hash128& scope) const {
    auto& index = indexes[scope];
    if (!index) index = std::make_shared<Index>(index_factory_.make(embedder_.dimension()));
    return index;
  }

  // Vectors of two generations of weights must not be compared, so new
  // weights come with new indexes: copies of the current ones with every
  // vector replaced (reweightable indexes), else built again. Every stored
  // text is embedded under them outside the exclusive lock, while lookups and inserts
  // go on with the current weights and indexes; then, under the lock, the
  // entries inserted or evicted meanwhile are caught up, the weights
  // published and the indexes switched.
  template <class Weights>
  void reembed_under(Weights next) {
    struct stored_text {
      entry_handle handle;
      std::uint64_t serial;
      hash128 scope;
      std::string text;
    };
    try {
      std::vector<stored_text> texts;
      index_map fresh;
      {
        std::shared_lock lock(mutex_);
        texts.reserve(live_entries_);
        for (entry_handle handle = 0; handle < entries_.size(); ++handle)
          if (const entry& e = entries_[handle]; e.live) texts.push_back({handle, e.serial, e.scope, e.text});
        if constexpr (ReweightableIndex<Index>)
          for (const auto& [scope, index] : indexes_) fresh.emplace(scope, std::make_shared<Index>(index->copy()));
      }
      std::vector<float> vector(embedder_.dimension());
      for (const stored_text& t : texts) {
        const bool embedded = !embedder_.embed(t.text, vector, next);
        if constexpr (ReweightableIndex<Index>) {
          // The same texts move a little under new weights: their graph
          // still serves, at a fraction of the cost of building it again.
          const auto index = fresh.find(t.scope);
          const bool indexed = index != fresh.end() && index->second->contains(t.handle);
          if (indexed && embedded) (void)index->second->overwrite(t.handle, vector);
          else if (indexed) index->second->remove(t.handle);
          else if (embedded) add_vector(fresh, t.scope, t.handle, vector);
        } else if (embedded) {
          add_vector(fresh, t.scope, t.handle, vector);
        }
      }

      std::unique_lock lock(mutex_);
      std::vector<std::uint64_t> indexed_serial(entries_.size(), 0);  // entries_ never shrinks
      for (const stored_text& t : texts) {
        if (entries_[t.handle].serial == t.serial) indexed_serial[t.handle] = t.serial;
        else if (const auto index = fresh.find(t.scope); index != fresh.end()) index->second->remove(t.handle);
      }
      for (entry_handle handle = 0; handle < entries_.size(); ++handle) {
        const entry& e = entries_[handle];
        if (e.live && indexed_serial[handle] != e.serial && !embedder_.embed(e.text, vector, next))
          add_vector(fresh, e.scope, handle, vector);
      }
      embedder_.publish(std::move(next));
      indexes_ = std::move(fresh);
      reembedding_ = false;
    } catch (...) {
      std::unique_lock lock(mutex_);
      reembedding_ = false;  // the next insert tries again
      throw;
    }
  }

  // Evicts the policy's expired entries first, else its victim; false when
  // the policy holds nothing.
  bool evict_one() {
    std::optional<entry_handle> victim;
    {
      std::lock_guard counters(counters_mutex_);
      victim = eviction_.pop_expired();
      if (!victim) victim = eviction_.pop_victim();
      if (!victim) return false;
      ++statistics_.evictions;
    }
    if (observer_) observer_->evicted(entries_[*victim].scope, entries_[*victim].text);
    erase_entry(*victim);
    return true;
  }

  // Takes an entry the eviction policy no longer holds out of its index and the cache.
  // An entry still being linked leaves its index and frees its handle
  // when its insert is done (store_and_index()).
  void erase_entry(entry_handle handle) {
    entry& e = entries_[handle];
    const bool linking = e.linking;
    if (const auto index = indexes_.find(e.scope); index != indexes_.end() && !linking) index->second->remove(handle);
    if (const auto named = texts_.find(text_key_of(e.scope, e.text)); named != texts_.end() && named->second == handle)
      texts_.erase(named);
    threshold_.forget(handle);
    bytes_ -= e.bytes;
    e = entry{};
    e.linking = linking;
    if (!linking) free_handles_.push_back(handle);
    --live_entries_;
  }

  // What an entry counts against max_bytes: its key text, its answer and
  // its vector as the index stores it. The vector counts whether or not
  // the text could be embedded, so that a re-embedding never changes what
  // an entry counts; the index's links and bookkeeping, the same for every
  // entry, are left to max_entries.
  std::size_t entry_bytes(std::string_view text, const Value& answer) const {
    return text.size() + cache_value_traits<Value>::bytes(answer) + embedder_.dimension() * vector_component_bytes;
  }

  // Bytes of one stored vector component: the index's element type where
  // it names one (hnsw_index: float16, scaled_int8 or float), else a float
  // (flat_index).
  static constexpr std::size_t vector_component_bytes = [] {
    if constexpr (requires { typename Index::element_type; }) return sizeof(typename Index::element_type);
    else return sizeof(float);
  }();

  // Snapshot parts, in file order. Callers of the save_ functions hold both locks.
  void save_statistics(store::snapshot_writer& out) const {
    const auto& s = statistics_;
    for (const std::uint64_t counter : {s.lookups, s.hits, s.misses, s.explores, s.vetoes, s.insertions,
                                        s.evictions, s.wrong_reports, s.tokens_saved})
      out.write(counter);
    out.write(s.usd_saved);
    latency_.save_to(out);
  }

  void load_statistics(store::snapshot_reader& in) {
    auto& s = statistics_;
    for (std::uint64_t* counter : {&s.lookups, &s.hits, &s.misses, &s.explores, &s.vetoes, &s.insertions,
                                   &s.evictions, &s.wrong_reports, &s.tokens_saved})
      *counter = in.read<std::uint64_t>();
    s.usd_saved = in.read<double>();
    latency_.restore_from(in);
  }

  static void save_entry(store::snapshot_writer& out, const entry& e) {
    out.write(static_cast<std::uint8_t>(e.live));
    if (!e.live) return;
    out.write(e.scope.low);
    out.write(e.scope.high);
    out.write_string(e.text);
    cache_value_traits<Value>::write(out, e.answer);
    out.write(e.cost.prompt_tokens);
    out.write(e.cost.completion_tokens);
    out.write(e.cost.usd);
    out.write(e.wrong_at);
    out.write(e.serial);
    out.write(e.hits);
  }

  // Returns 1 for a live entry, 0 for a free slot.
  static std::size_t load_entry(store::snapshot_reader& in, entry& e) {
    e.live = in.read<std::uint8_t>() != 0;
    if (!e.live) return 0;
    e.scope.low = in.read<std::uint64_t>();
    e.scope.high = in.read<std::uint64_t>();
    e.text = in.read_string();
    e.answer = cache_value_traits<Value>::read(in);
    e.cost.prompt_tokens = in.read<std::uint64_t>();
    e.cost.completion_tokens = in.read<std::uint64_t>();
    e.cost.usd = in.read<double>();
    e.wrong_at = in.read<float>();
    e.serial = in.read<std::uint64_t>();
    e.hits = in.read<std::uint64_t>();
    return 1;
  }

  // The live, unexpired entries in the order the policy would evict them;
  // inserting them in this order rebuilds that order (LRU, FIFO), and their
  // hit counts restore what LFU and cost-aware rank by.
  std::vector<entry_handle> eviction_order() const {
    Eviction order = eviction_;  // a copy to pop victims from
    std::vector<entry_handle> oldest_first;
    oldest_first.reserve(live_entries_);
    while (const auto victim = order.pop_victim())
      if (!eviction_.is_expired(*victim)) oldest_first.push_back(*victim);
    return oldest_first;
  }

  std::error_code load_eviction_order(store::snapshot_reader& in) {
    const auto count = in.read<std::uint64_t>();
    if (count > live_entries_) return make_error_code(errc::corrupt_file);
    std::vector<entry_handle> oldest_first(count);
    in.read_array(std::span<entry_handle>(oldest_first));
    std::vector<bool> seen(entries_.size());
    for (const entry_handle handle : oldest_first) {
      if (handle >= entries_.size() || !entries_[handle].live || seen[handle])
        return make_error_code(errc::corrupt_file);
      seen[handle] = true;
      const entry& e = entries_[handle];
      eviction_.insert(handle, entry_info{e.bytes, e.cost.usd, e.hits});
    }
    return {};
  }

  // Every live entry must be in its own scope's index, and nothing else.
  std::error_code load_indexes(store::snapshot_reader& in) {
    const auto count = in.read<std::uint64_t>();
    if (count > live_entries_) return make_error_code(errc::corrupt_file);
    std::size_t indexed = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      hash128 scope;
      scope.low = in.read<std::uint64_t>();
      scope.high = in.read<std::uint64_t>();
      std::error_code ec;
      auto index = Index::load_from(in, ec);
      if (ec || !index || index->dimension() != embedder_.dimension() || indexes_.contains(scope))
        return ec ? ec : make_error_code(errc::corrupt_file);
      indexed += index->size();
      // The graph is the file's; what may change between runs (a search
      // breadth) is the factory's.
      if constexpr (AdoptingIndexFactory<Indexes>) index_factory_.adopt(*index);
      indexes_.emplace(scope, std::make_shared<Index>(std::move(*index)));
    }
    if (indexed != live_entries_) return make_error_code(errc::corrupt_file);
    for (entry_handle handle = 0; handle < entries_.size(); ++handle) {
      const entry& e = entries_[handle];
      if (!e.live) continue;
      const auto index = indexes_.find(e.scope);
      if (index == indexes_.end() || !index->second->contains(handle)) return make_error_code(errc::corrupt_file);
    }
    return {};
  }

  // Entries that had expired when the cache was saved are not in the saved
  // eviction order; they leave now, as they would have at the next insert.
  void drop_entries_without_lifetime() {
    std::vector<bool> held(entries_.size());
    Eviction order = eviction_;
    while (const auto handle = order.pop_victim()) held[*handle] = true;
    for (entry_handle handle = 0; handle < entries_.size(); ++handle)
      if (entries_[handle].live && !held[handle]) erase_entry(handle);
  }

  // A snapshot saved under larger bounds loads down to this cache's, as
  // the exact cache's load does: entries larger than max_bytes alone leave
  // (an insert would have refused them), then the policy's victims until
  // both bounds hold. The statistics read as they did when saved.
  void shrink_to_bounds() {
    for (entry_handle handle = 0; handle < entries_.size(); ++handle)
      if (entries_[handle].live && entries_[handle].bytes > options_.max_bytes) {
        eviction_.erase(handle);
        erase_entry(handle);
      }
    const std::uint64_t evictions = statistics_.evictions;
    while ((live_entries_ > options_.max_entries || bytes_ > options_.max_bytes) && evict_one()) {}
    statistics_.evictions = evictions;
  }

  semantic_cache_options options_;
  EmbedderT embedder_;
  Threshold threshold_;
  Verify verifier_;
  Key key_;
  Indexes index_factory_;

  mutable detail::fair_shared_mutex insert_gate_;  // shared: an insert; exclusive: a snapshot (taken first)
  mutable detail::fair_shared_mutex mutex_;        // entries, indexes
  std::vector<entry> entries_;
  std::vector<entry_handle> free_handles_;
  std::size_t live_entries_ = 0;
  std::size_t bytes_ = 0;  // the live entries' entry_bytes
  std::uint64_t serials_ = 0;
  index_map indexes_;
  boost::unordered_flat_map<text_key, entry_handle, text_key_hasher> texts_;  // what the *_replica calls find by
  semantic_cache_observer<Value>* observer_ = nullptr;
  bool reembedding_ = false;  // one re-embedding at a time

  mutable std::mutex counters_mutex_;  // statistics and the eviction policy, touched by lookups
  Eviction eviction_;
  semantic_cache_statistics statistics_;
  latency_histogram latency_;
};

/// The semantic cache with every default: string answers, the hashing
/// embedder, HNSW under cosine, LRU, a static threshold, the lexical guard,
/// keyed by the last user turn.
using semantic_cache = basic_semantic_cache<>;

}  // namespace llmgate::inline v0
