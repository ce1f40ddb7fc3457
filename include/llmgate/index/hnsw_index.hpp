// hnsw_index: approximate nearest-neighbour search over a hierarchical
// navigable small world graph (Malkov and Yashunin, 2016).
//
// Every element lives on level 0 and, with probability falling by a factor
// of M per level, on the levels above. A search descends greedily from the
// single entry point on the top level to level 0, then runs a best-first
// search there that keeps the `ef` closest elements it has seen. Inserting
// runs the same search with ef_construction and links the new element to
// neighbours picked by the diversity heuristic (a candidate is kept only if
// it is closer to the new element than to every neighbour already kept).
//
// Memory layout, chosen for the search's inner loop: vectors in one
// contiguous array (a 64-byte aligned row per element, as the SIMD loads
// like), level-0 links in another (2*M slots per element, unused slots hold
// `no_link`, so no separate count is read), links of the upper levels in a
// pool that only the few elements living there use.
//
// Removal marks an element deleted: it still routes searches but is never
// returned, and the next add reuses its slot, relinking it on its levels.
// The arrays hold room for more elements than they have (capacity, grown
// by doubling), so that adding an element moves nothing another thread
// may be reading.
//
// Vectors are stored as float16 by default: a search spends its time
// reading vectors from memory, and half the bytes buy more searches per
// second than float32 at the same recall (bench/index_bench.cpp measures
// it), for a similarity error of about 1e-5 on unit vectors (see
// simd/float16.hpp).
// hnsw_index<Metric, float> stores them exactly; hnsw_index<Metric,
// simd::scaled_int8> in a byte per component and a scale per vector (in an
// array of their own), half float16's bytes for a similarity error of
// about 1.5e-3 (see simd/scaled_int8.hpp).
//
// Concurrency, as in hnswlib's addPoint: searches and adds run together.
//   - An add links its element under a shared lock, like a search; each
//     link list is changed under that element's own spin lock (a byte), one
//     list at a time, and read without a lock: links are stored and loaded
//     atomically, a new element's row is written before the first link to
//     it is published, so a reader that finds the link sees the row.
//   - Searches and adds take scratch space (visited marks, queues) from a
//     small pool.
//   - Slot numbers, the id map and the free list are handed out under a
//     short mutex; the entry point changes under another, which an add
//     holds throughout only when its element rises above the top level.
//   - An exclusive lock is taken only to grow the arrays (rarely: doubling),
//     to reuse a removed element's slot (its old links are taken out while
//     no one reads them) and to overwrite a vector in place.
//   - copy() and save_to() stop adds for their duration, not searches.
#pragma once

#include <algorithm>     // std::sort, std::push_heap, std::pop_heap, std::ranges::fill
#include <atomic>        // std::atomic, std::atomic_ref (links read while adds change them)
#include <cmath>         // std::log
#include <cstdint>       // std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <functional>    // std::greater
#include <limits>        // std::numeric_limits
#include <memory>        // std::unique_ptr
#include <mutex>         // std::mutex, std::unique_lock, std::lock_guard
#include <optional>      // std::optional (load_from)
#include <random>        // std::mt19937_64
#include <shared_mutex>  // std::shared_lock, std::shared_mutex
#include <span>          // std::span
#include <string_view>   // std::string_view
#include <sstream>       // std::stringstream (random generator state in files)
#include <stdexcept>     // std::invalid_argument
#include <string>        // std::string
#include <system_error>  // std::error_code
#include <thread>        // std::this_thread::yield
#include <type_traits>   // std::conditional_t
#include <utility>       // std::move, std::as_const
#include <vector>        // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // id -> slot

#include "llmgate/detail/fair_shared_mutex.hpp"
#include "llmgate/detail/huge_page_allocator.hpp"
#include "llmgate/index/metric.hpp"
#include "llmgate/index/vector_index.hpp"
#include "llmgate/simd/float16.hpp"
#include "llmgate/simd/scaled_int8.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

struct hnsw_parameters {
  std::size_t m = 16;                ///< links per element on upper levels; level 0 has 2*m
  std::size_t ef_construction = 200; ///< breadth of the search that places a new element
  std::size_t ef_search = 64;        ///< default breadth of a query (at least k is used)
  std::uint64_t seed = 100;          ///< the level generator's seed: same seed, same graph
};

/// The vector formats hnsw_index stores: simd::float16 (default), float
/// (exact) or simd::scaled_int8 (compact).
template <class M, class Element>
concept storable_under = std::same_as<Element, float> ||
    (std::same_as<Element, simd::float16> &&
     requires(const float* query, const Element* row, std::size_t n) {
       { M::distance(query, row, n) } -> std::same_as<float>;
     }) ||
    (std::same_as<Element, simd::scaled_int8> &&
     requires(const float* query, simd::scaled_int8_row row, std::size_t n) {
       { M::distance(query, row, n) } -> std::same_as<float>;
       { M::distance(row, row, n) } -> std::same_as<float>;
     });

template <Metric M = cosine_metric, class Element = simd::float16>
  requires storable_under<M, Element>
class hnsw_index {
 public:
  using metric_type = M;
  using element_type = Element;

  /// Throws std::invalid_argument for a zero dimension or m < 2.
  explicit hnsw_index(std::size_t dimension, hnsw_parameters parameters = {})
      : dimension_(dimension),
        row_elements_((dimension + row_alignment - 1) / row_alignment * row_alignment),
        m_(parameters.m),
        ef_construction_(std::max(parameters.ef_construction, parameters.m)),
        ef_search_(parameters.ef_search),
        level_multiplier_(1.0 / std::log(static_cast<double>(parameters.m))),
        state_(parameters.seed) {
    if (dimension == 0 || parameters.m < 2)
      throw std::invalid_argument("hnsw_index needs a dimension > 0 and m >= 2");
  }

  hnsw_index(hnsw_index&& other) noexcept
      : dimension_(other.dimension_), row_elements_(other.row_elements_), m_(other.m_),
        ef_construction_(other.ef_construction_), ef_search_(other.ef_search_.load()),
        level_multiplier_(other.level_multiplier_), state_(std::move(other.state_)) {}
  hnsw_index& operator=(hnsw_index&&) = delete;

  hnsw_parameters parameters() const noexcept {
    return {m_, ef_construction_, ef_search_.load(std::memory_order_relaxed), state_.seed};
  }

  /// Sets the default search breadth; safe while other threads search.
  void set_ef_search(std::size_t ef) noexcept { ef_search_.store(ef, std::memory_order_relaxed); }

  /// Makes room for n elements so that adding them does not grow the arrays.
  void reserve(std::size_t n) {
    std::unique_lock lock(mutex_);
    std::lock_guard slots(slots_mutex_);
    if (n > state_.capacity) grow_to(n);
    state_.slot_of.reserve(n);
  }

  /// Inserts `vector` under `id` (normalised first if the metric asks).
  /// Safe to call from several threads at once, and while others search.
  [[nodiscard]] std::error_code add(vector_id id, std::span<const float> vector) {
    if (vector.size() != dimension_) return make_error_code(errc::dimension_mismatch);
    std::shared_lock adding(adds_);
    scratch_lease scratch(*this);
    std::optional<std::uint8_t> level;  // drawn once, kept if the arrays must grow first
    for (;;) {
      {
        std::shared_lock lock(mutex_);
        const claim claimed = claim_new_slot(id, level);
        if (claimed.outcome == claim::duplicate) return make_error_code(errc::duplicate_id);
        if (claimed.outcome == claim::claimed) {
          link_new_element(claimed.slot, vector, *scratch);
          return {};
        }
      }
      // A free slot to reuse, or no room: both need the arrays to ourselves.
      std::unique_lock lock(mutex_);
      std::unique_lock slots(slots_mutex_);
      if (state_.slot_of.contains(id)) return make_error_code(errc::duplicate_id);
      if (state_.free_slots.empty()) {
        if (!level) level = random_level();
        grow_for(*level);
        continue;
      }
      const slot_index slot = reuse_slot(*scratch);
      state_.ids[slot] = id;
      state_.slot_of.emplace(id, slot);
      slots.unlock();
      write_row(slot, vector, *scratch);
      state_.flags[slot] = linking_flag;
      lock.unlock();
      // Linked like a new element, under the shared lock: the slot is ours.
      std::shared_lock linking(mutex_);
      link_into_graph(slot, staged_query(slot, *scratch), *scratch);
      return {};
    }
  }

  /// Replaces the vector stored under `id` and keeps its links. The graph
  /// stays as it was built, which serves while vectors move a little (the
  /// same texts re-weighted); a vector of something else needs remove and
  /// add.
  [[nodiscard]] std::error_code overwrite(vector_id id, std::span<const float> vector) {
    if (vector.size() != dimension_) return make_error_code(errc::dimension_mismatch);
    scratch_lease scratch(*this);
    std::unique_lock lock(mutex_);
    slot_index slot;
    {
      std::lock_guard slots(slots_mutex_);
      const auto found = state_.slot_of.find(id);
      if (found == state_.slot_of.end()) return make_error_code(errc::unknown_id);
      slot = found->second;
    }
    write_row(slot, vector, *scratch);
    return {};
  }

  /// A copy of the graph and the vectors, taken while other threads may
  /// search or change this index (adds wait until it is taken).
  hnsw_index copy() const {
    std::unique_lock no_adds(adds_);
    std::shared_lock lock(mutex_);
    return hnsw_index(*this);
  }

  /// Marks `id` deleted; it is never returned again and its slot is reused
  /// by a later add. False if the id is not in the index. A search under
  /// way may still return it.
  bool remove(vector_id id) {
    std::shared_lock lock(mutex_);
    std::lock_guard slots(slots_mutex_);
    auto& s = state_;
    const auto found = s.slot_of.find(id);
    if (found == s.slot_of.end()) return false;
    std::atomic_ref(s.flags[found->second]).fetch_or(removed_flag, std::memory_order_relaxed);
    s.free_slots.push_back(found->second);
    s.slot_of.erase(found);
    return true;
  }

  bool contains(vector_id id) const {
    std::lock_guard slots(slots_mutex_);
    return state_.slot_of.contains(id);
  }

  /// The (approximately) k closest vectors among those `filter` accepts,
  /// closest first, searching with breadth max(ef_search, k).
  template <class Filter = accept_all>
    requires std::predicate<const Filter&, vector_id>
  std::vector<search_hit> search(std::span<const float> query, std::size_t k,
                                 const Filter& filter = {}) const {
    return search(query, k, ef_search_.load(std::memory_order_relaxed), filter);
  }

  /// As above with an explicit breadth `ef` for this query.
  template <class Filter = accept_all>
    requires std::predicate<const Filter&, vector_id>
  std::vector<search_hit> search(std::span<const float> query, std::size_t k, std::size_t ef,
                                 const Filter& filter = {}) const {
    if (query.size() != dimension_ || k == 0) return {};
    scratch_lease scratch(*this);
    float* q = scratch->query.data();
    std::copy(query.begin(), query.end(), q);
    if constexpr (M::normalizes_inputs) simd::normalize(q, dimension_);

    std::shared_lock lock(mutex_);
    const auto& s = state_;
    const entry_point top = entry();
    if (top.slot == no_link) return {};
    const auto accepted = [&](slot_index slot) { return !has_flag(slot, removed_flag) && filter(s.ids[slot]); };
    const query_type prepared = prepare_query(q, *scratch);
    const slot_index start = descend(prepared, 0, top.slot, top.level, *scratch);
    search_level(*scratch, prepared, start, std::max(ef, k), 0, accepted);

    auto& found = scratch->results;
    // The quantized query found the candidates; the query as given scores
    // them, so rounding the query costs no precision in what is returned.
    if constexpr (scaled)
      for (scored& candidate : found) candidate.distance = M::distance(q, row_of(candidate.slot), dimension_);
    std::sort(found.begin(), found.end());
    std::vector<search_hit> hits;
    hits.reserve(std::min(k, found.size()));
    for (std::size_t i = 0; i < found.size() && hits.size() < k; ++i)
      hits.push_back({s.ids[found[i].slot], found[i].distance, M::similarity(found[i].distance)});
    return hits;
  }

  std::size_t size() const {
    std::lock_guard slots(slots_mutex_);
    return state_.slot_of.size();
  }

  std::size_t dimension() const noexcept { return dimension_; }

  /// Bytes held by the graph, the vectors and the bookkeeping (capacities).
  std::size_t memory_usage() const {
    std::shared_lock lock(mutex_);
    std::lock_guard slots(slots_mutex_);
    const auto& s = state_;
    std::size_t bytes = s.vectors.capacity() * sizeof(Element) + s.scales.capacity() * sizeof(float) +
                        s.links0.capacity() * sizeof(slot_index) +
                        s.upper_links.capacity() * sizeof(slot_index) +
                        s.ids.capacity() * sizeof(vector_id) + s.levels.capacity() +
                        s.flags.capacity() + s.link_locks.capacity() + s.links_in.capacity() * 4 +
                        s.upper_offset.capacity() * sizeof(slot_index) +
                        s.free_slots.capacity() * sizeof(slot_index) +
                        s.slot_of.bucket_count() * (sizeof(std::pair<vector_id, slot_index>) + 1);
    std::lock_guard pool_lock(scratch_mutex_);
    for (const auto& scratch : scratch_pool_) bytes += scratch->memory_usage();
    return bytes;
  }

  /// Writes the index to `path` atomically (new file, fsync, rename).
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    return store::save_file(*this, path, file_kind, file_version);
  }

  /// Reads an index saved by save(); the loaded index answers every query
  /// exactly as the saved one did. Throws llmgate::error naming the file and
  /// the cause when it is missing, truncated, corrupt, from a newer version
  /// or holds another metric or element type.
  static hnsw_index load(const std::filesystem::path& path) {
    return store::load_file<hnsw_index>(path, file_kind, file_version, "hnsw_index");
  }

  /// Appends the index to a snapshot (e.g. a cache's, which holds several).
  void save_to(store::snapshot_writer& out) const {
    std::unique_lock no_adds(adds_);
    std::shared_lock lock(mutex_);
    std::lock_guard slots(slots_mutex_);
    const auto& s = state_;
    const std::size_t count = s.count;
    std::stringstream generator;
    generator << s.level_generator;
    out.write_string(M::name);
    out.write_string(element_name);
    for (std::uint64_t value : {std::uint64_t{dimension_}, std::uint64_t{m_},
                                std::uint64_t{ef_construction_}, std::uint64_t{ef_search_.load()},
                                s.seed, std::uint64_t{count}})
      out.write(value);
    out.write_string(generator.str());
    const entry_point top = entry();
    out.write(top.slot);
    out.write(top.level);
    out.write_array(std::span<const vector_id>(s.ids.data(), count));
    out.write_array(std::span<const std::uint8_t>(s.levels.data(), count));
    out.write_array(std::span<const std::uint8_t>(s.flags.data(), count));  // removed_flag alone: no add runs
    out.write_array(std::span<const slot_index>(s.upper_offset.data(), count));
    for (std::size_t slot = 0; slot < count; ++slot) out.write_array(stored_values(slot));
    if constexpr (scaled) out.write_array(std::span<const float>(s.scales.data(), count));
    out.write_array(std::span<const slot_index>(s.links0.data(), count * 2 * m_));
    out.write(std::uint64_t{s.upper_used});
    out.write_array(std::span<const slot_index>(s.upper_links.data(), s.upper_used));
    out.write(std::uint64_t{s.free_slots.size()});
    out.write_array(std::span<const slot_index>(s.free_slots));
  }

  /// Reads what save_to() appended. Sets `ec` (wrong_kind_of_file,
  /// corrupt_file) and returns nothing when the content cannot be this
  /// index; the caller still checks in.finish() for the rest of the file.
  static std::optional<hnsw_index> load_from(store::snapshot_reader& in, std::error_code& ec) {
    if (in.read_string() != M::name || in.read_string() != element_name) {
      ec = make_error_code(errc::wrong_kind_of_file);
      return std::nullopt;
    }

    const auto dimension = in.read<std::uint64_t>();
    hnsw_parameters parameters;
    parameters.m = in.read<std::uint64_t>();
    parameters.ef_construction = in.read<std::uint64_t>();
    parameters.ef_search = in.read<std::uint64_t>();
    parameters.seed = in.read<std::uint64_t>();
    const auto count = in.read<std::uint64_t>();
    const std::string generator = in.read_string();
    // Refuse sizes the file cannot hold before allocating anything for them.
    const std::uint64_t per_element =
        8 + 1 + 1 + 4 + dimension * sizeof(Element) + (scaled ? 4 : 0) + 2 * parameters.m * 4;
    if (dimension == 0 || parameters.m < 2 || parameters.m > 4096 ||
        count > std::numeric_limits<slot_index>::max() || count * per_element > in.remaining()) {
      ec = make_error_code(errc::corrupt_file);
      return std::nullopt;
    }

    std::optional<hnsw_index> loaded(std::in_place, dimension, parameters);
    hnsw_index& index = *loaded;
    auto& s = index.state_;
    std::stringstream(generator) >> s.level_generator;
    s.entry.slot = in.read<slot_index>();
    s.entry.level = in.read<std::uint8_t>();
    s.count = s.capacity = count;
    s.ids.resize(count);
    s.levels.resize(count);
    s.flags.resize(count);
    s.link_locks.resize(count);
    s.links_in.resize(count);
    s.upper_offset.resize(count);
    s.vectors.resize(count * index.row_elements_);
    s.links0.resize(count * 2 * parameters.m);
    in.read_array(std::span<vector_id>(s.ids));
    in.read_array(std::span<std::uint8_t>(s.levels));
    in.read_array(std::span<std::uint8_t>(s.flags));
    in.read_array(std::span<slot_index>(s.upper_offset));
    for (std::size_t slot = 0; slot < count; ++slot) in.read_array(index.stored_values(slot));
    if constexpr (scaled) {
      s.scales.resize(count);
      in.read_array(std::span<float>(s.scales));
    }
    in.read_array(std::span<slot_index>(s.links0.data(), s.links0.size()));
    s.upper_links.resize(std::min<std::uint64_t>(in.read<std::uint64_t>(), in.remaining() / 4));
    s.upper_used = s.upper_links.size();
    in.read_array(std::span<slot_index>(s.upper_links));
    s.free_slots.resize(std::min<std::uint64_t>(in.read<std::uint64_t>(), in.remaining() / 4));
    in.read_array(std::span<slot_index>(s.free_slots));
    if (!index.rebuild_and_check_graph()) {
      ec = make_error_code(errc::corrupt_file);
      return std::nullopt;
    }
    return loaded;
  }

 private:
  using slot_index = std::uint32_t;
  static constexpr slot_index no_link = std::numeric_limits<slot_index>::max();
  static constexpr std::size_t cache_line = 64;
  static constexpr std::size_t row_alignment = cache_line / sizeof(Element);  // rows start on a line
  static constexpr bool scaled = std::same_as<Element, simd::scaled_int8>;
  // What the metric scores rows against: floats, or for scaled_int8 rows a
  // row of codes too (a search quantizes its query once; an inserted
  // element is its own stored row), so that distances are integer sums.
  using query_type = std::conditional_t<scaled, simd::scaled_int8_row, const float*>;
  static constexpr std::string_view element_name =
      std::same_as<Element, float> ? "float32" : scaled ? "int8" : "float16";
  static constexpr std::uint8_t max_level = 30;
  // A slot's flags. A removed element still routes searches, never
  // returned; an element being linked is not gone through (descended to or
  // expanded) until its own links are all in place: a reused slot can be
  // reached by old links to it, and a search from it would find nothing.
  static constexpr std::uint8_t removed_flag = 1, linking_flag = 2;
  static constexpr store::kind_tag file_kind = {'H', 'N', 'S', 'W'};
  static constexpr std::uint32_t file_version = 1;

  // A visited element with its distance to the query.
  struct scored {
    float distance;
    slot_index slot;
    friend bool operator<(const scored& a, const scored& b) noexcept {
      return a.distance != b.distance ? a.distance < b.distance : a.slot < b.slot;
    }
    friend bool operator>(const scored& a, const scored& b) noexcept { return b < a; }
  };

  // What one search needs besides the graph; reused across searches.
  struct search_scratch {
    // A bit per slot, 128 KiB at a million slots, so that the check made for
    // every neighbour hits the core's own cache (a 16-bit mark per slot, as
    // hnswlib keeps, is 2 MiB there: mostly misses). `marked` lists the bits
    // set, which the next search clears.
    std::vector<std::uint64_t> visited;
    std::vector<slot_index> marked;
    std::vector<scored> candidates;  // min-heap: next element to expand
    std::vector<scored> results;     // max-heap: the ef closest accepted so far
    std::vector<float> query;
    std::vector<simd::scaled_int8> query_codes;  // the query quantized, for scaled_int8 rows
    std::vector<slot_index> fresh;  // unvisited neighbours of the element being expanded
    // An add's: the links of a full list with the new one, being pruned;
    // float16 rows widened to be scored as queries.
    std::vector<scored> prune_buffer;
    std::vector<std::pair<std::uint8_t, scored>> chosen;  // (level, neighbour) to link back to the new element
    std::vector<slot_index> unlinked;  // a reused slot's old neighbours
    std::vector<slot_index> orphans;   // elements connect() dropped the last level-0 link to
    std::vector<float> decoded_base, decoded_candidate;

    void start(std::size_t slots, std::size_t max_links) {
      fresh.resize(max_links);
      for (slot_index slot : marked) visited[slot / 64] = 0;
      marked.clear();
      if (visited.size() < (slots + 63) / 64) visited.resize((slots + 63) / 64, 0);
      candidates.clear();
      results.clear();
    }
    bool seen(slot_index slot) const noexcept { return visited[slot / 64] >> (slot % 64) & 1; }
    void mark(slot_index slot) {
      visited[slot / 64] |= std::uint64_t{1} << (slot % 64);
      marked.push_back(slot);
    }
    std::size_t memory_usage() const {
      return visited.capacity() * 8 + (marked.capacity() + fresh.capacity()) * sizeof(slot_index) +
             (candidates.capacity() + results.capacity() + prune_buffer.capacity()) * sizeof(scored) +
             chosen.capacity() * sizeof(chosen[0]) + (unlinked.capacity() + orphans.capacity()) * sizeof(slot_index) +
             (query.capacity() + decoded_base.capacity() + decoded_candidate.capacity()) * sizeof(float) +
             query_codes.capacity();
    }
  };

  // Borrows a search_scratch from the index's pool for one search.
  class scratch_lease {
   public:
    explicit scratch_lease(const hnsw_index& index) : index_(index) {
      std::lock_guard lock(index_.scratch_mutex_);
      if (index_.scratch_pool_.empty()) {
        scratch_ = std::make_unique<search_scratch>();
        // What an add may need, once, so that reusing slots takes no memory.
        scratch_->unlinked.reserve(2 * index_.m_);
        scratch_->orphans.reserve(2 * index_.m_);
      } else {
        scratch_ = std::move(index_.scratch_pool_.back());
        index_.scratch_pool_.pop_back();
      }
      scratch_->query.resize(index_.dimension_);
    }
    ~scratch_lease() {
      std::lock_guard lock(index_.scratch_mutex_);
      index_.scratch_pool_.push_back(std::move(scratch_));
    }
    scratch_lease(const scratch_lease&) = delete;
    scratch_lease& operator=(const scratch_lease&) = delete;
    search_scratch* operator->() const noexcept { return scratch_.get(); }
    search_scratch& operator*() const noexcept { return *scratch_; }

   private:
    const hnsw_index& index_;
    std::unique_ptr<search_scratch> scratch_;
  };

  // The element every search starts from, on the top level; read and
  // written whole, atomically (an add may raise it while others search).
  struct alignas(8) entry_point {
    slot_index slot = no_link;
    std::uint8_t level = 0;
  };

  // Every per-slot array holds `capacity` slots, of which the first `count`
  // are in use; capacity changes only under the exclusive lock.
  struct state {
    explicit state(std::uint64_t seed_) : seed(seed_), level_generator(seed_) {}

    std::vector<Element, detail::huge_page_allocator<Element>> vectors;  // slot s at s * row_elements
    std::vector<float> scales;  // scaled_int8 rows only: slot s's values are scales[s] * codes
    std::vector<slot_index, detail::huge_page_allocator<slot_index>> links0;  // slot s at s * 2m
    std::vector<slot_index> upper_links; // levels 1..L of slot s at upper_offset[s] + (l-1)*m
    std::vector<slot_index> upper_offset;
    std::vector<vector_id> ids;
    std::vector<std::uint8_t> levels;
    std::vector<std::uint8_t> flags;       // removed_flag, linking_flag; read atomically

    std::vector<std::uint8_t> link_locks;  // a spin lock per slot's link lists (link_guard)
    std::vector<std::uint32_t> links_in;   // level 0's links into each slot (unlink's repair)
    entry_point entry;
    std::size_t capacity = 0;
    // Under slots_mutex_:
    std::size_t count = 0;
    std::size_t upper_used = 0;  // of upper_links
    std::vector<slot_index> free_slots;
    boost::unordered_flat_map<vector_id, slot_index> slot_of;
    std::uint64_t seed;
    std::mt19937_64 level_generator;
  };

  // Holds one slot's spin lock: whoever changes a link list holds it, one
  // list at a time (so no two can wait on each other). Readers take none.
  class link_guard {
   public:
    link_guard(const hnsw_index& index, slot_index slot)
        : lock_(const_cast<std::uint8_t&>(index.state_.link_locks[slot])) {
      while (lock_.exchange(1, std::memory_order_acquire))
        while (lock_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
    ~link_guard() { lock_.store(0, std::memory_order_release); }
    link_guard(const link_guard&) = delete;
    link_guard& operator=(const link_guard&) = delete;

   private:
    std::atomic_ref<std::uint8_t> lock_;
  };

  // What claim_new_slot() found.
  struct claim {
    enum { claimed, duplicate, needs_exclusive_lock } outcome;
    slot_index slot = no_link;
  };

  const Element* vector_of(slot_index slot) const noexcept {
    return state_.vectors.data() + std::size_t{slot} * row_elements_;
  }

  // With adds stopped (copy()), or on an index no one else sees yet.
  hnsw_index(const hnsw_index& other)
      : dimension_(other.dimension_), row_elements_(other.row_elements_), m_(other.m_),
        ef_construction_(other.ef_construction_), ef_search_(other.ef_search_.load()),
        level_multiplier_(other.level_multiplier_), state_(other.state_) {}

  entry_point entry() const noexcept {
    return std::atomic_ref(const_cast<entry_point&>(state_.entry)).load(std::memory_order_acquire);
  }
  void set_entry(entry_point top) noexcept {
    std::atomic_ref(state_.entry).store(top, std::memory_order_release);
  }

  // A slot's flags change beside searches: removal, and the end of linking
  // (acquire: the links written before it are seen).
  bool has_flag(slot_index slot, std::uint8_t flag) const noexcept {
    return std::atomic_ref(const_cast<std::uint8_t&>(state_.flags[slot])).load(std::memory_order_acquire) & flag;
  }

  // Lets searches go through `slot`: its own links are in place.
  void linked(slot_index slot) noexcept {
    std::atomic_ref(state_.flags[slot]).fetch_and(static_cast<std::uint8_t>(~linking_flag), std::memory_order_release);
  }

  // One link, read while an add may be writing it: the slot it names was
  // written before the link was stored (release), so its row is seen.
  static slot_index load_link(const slot_index& link) noexcept {
    return std::atomic_ref(const_cast<slot_index&>(link)).load(std::memory_order_acquire);
  }
  static void store_link(slot_index& link, slot_index value) noexcept {
    std::atomic_ref(link).store(value, std::memory_order_release);
  }

  // Stores `vector` (normalised if the metric asks) in `slot`'s row, and
  // stages it as floats in scratch.query for linking.
  void write_row(slot_index slot, std::span<const float> vector, search_scratch& scratch) {
    float* staged = scratch.query.data();
    std::copy(vector.begin(), vector.end(), staged);
    if constexpr (M::normalizes_inputs) simd::normalize(staged, dimension_);
    Element* row = state_.vectors.data() + std::size_t{slot} * row_elements_;
    if constexpr (std::same_as<Element, float>)
      std::copy(staged, staged + dimension_, row);
    else if constexpr (scaled)
      state_.scales[slot] = simd::quantize(staged, row, dimension_);
    else
      std::transform(staged, staged + dimension_, row, simd::to_float16);
  }

  // The element just written to `slot` as a query for linking: a
  // scaled_int8 element is its own query (its codes, scored in integers),
  // others the floats write_row() staged.
  query_type staged_query(slot_index slot, search_scratch& scratch) const {
    if constexpr (scaled)
      return row_of(slot);
    else
      return scratch.query.data();
  }

  // The stored values of a slot as the snapshot file holds them.
  auto stored_values(slot_index slot) const noexcept {
    const Element* row = vector_of(slot);
    // float16 and scaled_int8 are standard-layout wrappers of their bits.
    if constexpr (std::same_as<Element, float>)
      return std::span<const float>(row, dimension_);
    else if constexpr (scaled)
      return std::span<const std::int8_t>(reinterpret_cast<const std::int8_t*>(row), dimension_);
    else
      return std::span<const std::uint16_t>(reinterpret_cast<const std::uint16_t*>(row), dimension_);
  }
  auto stored_values(slot_index slot) noexcept {
    const auto values = std::as_const(*this).stored_values(slot);
    using value = typename decltype(values)::value_type;
    return std::span<value>(const_cast<value*>(values.data()), values.size());
  }

  // A slot's vector as a query: the row itself for float and scaled_int8
  // storage, else widened into `buffer`.
  query_type as_query(slot_index slot, std::vector<float>& buffer) const {
    if constexpr (std::same_as<Element, float>) {
      return vector_of(slot);
    } else if constexpr (scaled) {
      return row_of(slot);
    } else {
      buffer.resize(dimension_);
      simd::widen(row_of(slot), buffer.data(), dimension_);
      return buffer.data();
    }
  }

  // What the metric scores a query against: the row, or for scaled_int8
  // the row with its scale.
  auto row_of(slot_index slot) const noexcept {
    if constexpr (scaled)
      return simd::scaled_int8_row{vector_of(slot), state_.scales[slot]};
    else
      return vector_of(slot);
  }

  std::size_t capacity_at(std::size_t level) const noexcept { return level == 0 ? 2 * m_ : m_; }

  // The link slots of `slot` on `level` (unused ones hold no_link).
  std::span<slot_index> links(slot_index slot, std::size_t level) noexcept {
    auto& s = state_;
    slot_index* first = level == 0 ? s.links0.data() + std::size_t{slot} * 2 * m_
                                   : s.upper_links.data() + s.upper_offset[slot] + (level - 1) * m_;
    return {first, capacity_at(level)};
  }
  std::span<const slot_index> links(slot_index slot, std::size_t level) const noexcept {
    return const_cast<hnsw_index*>(this)->links(slot, level);
  }

  // A search's query as the metric takes it against stored rows: for
  // scaled_int8 storage quantized into the scratch space, else as it is.
  query_type prepare_query(const float* query, search_scratch& scratch) const {
    if constexpr (scaled) {
      scratch.query_codes.resize(dimension_);
      return {scratch.query_codes.data(), simd::quantize(query, scratch.query_codes.data(), dimension_)};
    } else {
      return query;
    }
  }

  float distance(query_type query, slot_index slot) const noexcept {
    return M::distance(query, row_of(slot), dimension_);
  }

  static void prefetch(const void* address) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 0, 3);
#endif
  }

  // Asks for a whole vector: the hardware prefetcher would only follow
  // after the first few lines.
  void prefetch_vector(slot_index slot) const noexcept {
    const Element* row = vector_of(slot);
    for (std::size_t offset = 0; offset < dimension_; offset += row_alignment) prefetch(row + offset);
  }

  // Draws a level with P(level >= l) = m^-l, deterministically from the
  // seed (under slots_mutex_: adds draw in the order they take slots).
  std::uint8_t random_level() {
    const double uniform = static_cast<double>(state_.level_generator() >> 11) * 0x1.0p-53;
    const double level = -std::log(1.0 - uniform) * level_multiplier_;
    return static_cast<std::uint8_t>(std::min<double>(level, max_level));
  }

  // Under the shared lock: a fresh slot for `id` at the end of the arrays,
  // with its level drawn (kept in `level` for a retry), when there is room
  // and no removed slot waits to be reused.
  claim claim_new_slot(vector_id id, std::optional<std::uint8_t>& level) {
    std::lock_guard slots(slots_mutex_);
    auto& s = state_;
    if (s.slot_of.contains(id)) return {claim::duplicate};
    if (!s.free_slots.empty()) return {claim::needs_exclusive_lock};
    if (!level) level = random_level();
    if (s.count == s.capacity || s.upper_used + *level * m_ > s.upper_links.size())
      return {claim::needs_exclusive_lock};
    const auto slot = static_cast<slot_index>(s.count++);
    s.levels[slot] = *level;
    s.upper_offset[slot] = static_cast<slot_index>(s.upper_used);
    s.upper_used += *level * m_;
    s.ids[slot] = id;
    s.flags[slot] = linking_flag;
    s.slot_of.emplace(id, slot);
    return {claim::claimed, slot};
  }

  // Under the shared lock: writes the new element's row and links it.
  void link_new_element(slot_index slot, std::span<const float> vector, search_scratch& scratch) {
    write_row(slot, vector, scratch);
    link_into_graph(slot, staged_query(slot, scratch), scratch);
  }

  // Under the exclusive lock (and slots_mutex_): room for one more element
  // of `level`, doubling what is short.
  void grow_for(std::uint8_t level) {
    auto& s = state_;
    if (s.count == s.capacity) grow_to(std::max<std::size_t>(16, 2 * s.capacity));
    if (const std::size_t needed = s.upper_used + level * m_; needed > s.upper_links.size())
      s.upper_links.resize(std::max(needed, 2 * s.upper_links.size()), no_link);
  }

  void grow_to(std::size_t capacity) {
    auto& s = state_;
    s.capacity = capacity;
    s.vectors.resize(capacity * row_elements_, Element{});
    if constexpr (scaled) s.scales.resize(capacity, 0.0f);
    s.links0.resize(capacity * 2 * m_, no_link);
    s.upper_offset.resize(capacity, 0);
    s.ids.resize(capacity, 0);
    s.levels.resize(capacity, 0);
    s.flags.resize(capacity, 0);
    s.link_locks.resize(capacity, 0);
    s.links_in.resize(capacity, 0);
  }

  // Under the exclusive lock (and slots_mutex_): the most recently removed
  // slot, taken out of the graph. It keeps its level (its upper link
  // storage has that size). If it was the entry point, the highest other
  // element takes over, but not one still to be linked (an add that
  // reused a slot links it after this lock is let go).
  slot_index reuse_slot(search_scratch& scratch) {
    auto& s = state_;
    const slot_index slot = s.free_slots.back();
    s.free_slots.pop_back();
    for (std::size_t level = 0; level <= s.levels[slot]; ++level) unlink(slot, level, scratch);
    if (s.entry.slot == slot) {
      entry_point top;
      for (slot_index other = 0; other < s.count; ++other)
        if (other != slot && !(s.flags[other] & linking_flag) && (top.slot == no_link || s.levels[other] > top.level))
          top = {other, s.levels[other]};
      s.entry = top;
    }
    return slot;
  }

  // Takes the old vector of `slot` out of the graph on `level` before the
  // slot is given a new one. Links are mostly mutual, so the old vector's
  // neighbours hold most of the links into it: each drops that link and
  // takes instead the closest of the old vector's other neighbours that it
  // does not link to yet, so the region stays connected.
  // On level 0, a neighbour that the old vector was the last to link to
  // would then be found by no search: the closest of the old vector's
  // other neighbours links to it instead.
  void unlink(slot_index slot, std::size_t level, search_scratch& scratch) {
    const auto own = links(slot, level);
    auto& old = scratch.unlinked;
    old.assign(own.begin(), std::ranges::find(own, no_link));
    std::ranges::fill(own, no_link);
    // The closest of `old` to `neighbour`, but for itself and `taken`.
    const auto closest_other = [&](slot_index neighbour, std::span<const slot_index> taken) {
      scored best{std::numeric_limits<float>::infinity(), no_link};
      const query_type base = as_query(neighbour, scratch.decoded_base);
      for (slot_index candidate : old)
        if (candidate != neighbour && std::ranges::find(taken, candidate) == taken.end())
          best = std::min(best, scored{distance(base, candidate), candidate});
      return best;
    };
    for (slot_index neighbour : old) {
      if (level == 0) count_link_to(neighbour, -1);
      const auto list = links(neighbour, level);
      const auto position = std::ranges::find(list, slot);
      if (position == list.end()) continue;
      std::copy(position + 1, list.end(), position);
      list.back() = no_link;
      if (level == 0) count_link_to(slot, -1);
      if (const scored replacement = closest_other(neighbour, list); replacement.slot != no_link) {
        *std::ranges::find(list, no_link) = replacement.slot;
        if (level == 0) count_link_to(replacement.slot, +1);
      }
    }
    if (level != 0) return;
    for (slot_index neighbour : old)
      if (state_.links_in[neighbour] == 0)
        if (const scored keeper = closest_other(neighbour, {}); keeper.slot != no_link)
          connect_keeping_reach(keeper.slot, neighbour, keeper.distance, 0, scratch);
  }

  // Level 0's links into `slot` change by `delta` (from several lists at
  // once, each under its own lock).
  void count_link_to(slot_index slot, int delta) noexcept {
    std::atomic_ref(state_.links_in[slot]).fetch_add(static_cast<std::uint32_t>(delta), std::memory_order_relaxed);
  }

  // Scores the rows of `slots` against `query` in order, calling
  // scored(slot, distance) for each, and fetches the rows ahead so that the
  // memory reads overlap instead of queueing behind one distance
  // computation after another: the first line of every row at once, the
  // rest of a row a few rows before it is scored (enough lines in flight to
  // overlap the reads, too few to fill the processor's queue of outstanding
  // misses: fetching every row whole at once was slower at p99). Four rows
  // ahead rather than one: faster at p50 and p99 in alternating runs of
  // bench/index_bench.cpp at 300,000 and 1,000,000 rows (the figures are in
  // the commit message that chose four).
  template <class Scored>
  void score_rows(query_type query, std::span<const slot_index> slots, Scored&& scored) const {
    for (slot_index slot : slots) {
      prefetch(vector_of(slot));
      if constexpr (scaled) prefetch(&state_.scales[slot]);
    }
    constexpr std::size_t rows_ahead = 4;
    for (std::size_t i = 0; i < std::min(rows_ahead, slots.size()); ++i) prefetch_vector(slots[i]);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (i + rows_ahead < slots.size()) prefetch_vector(slots[i + rows_ahead]);
      scored(slots[i], distance(query, slots[i]));
    }
  }

  // Greedy walk from `from` on levels top..stop+1: at each level move to the
  // closest neighbour until none is closer. Returns where level `stop` starts.
  // (Its rows are fetched ahead too: with m 32 a walk down a million
  // elements scores about 150 of them, and fetching them one after the
  // other took about a sixth of a search.)
  slot_index descend(query_type query, std::size_t stop, slot_index from, std::size_t top,
                     search_scratch& scratch) const {
    float best = distance(query, from);
    scratch.fresh.resize(2 * m_);
    for (std::size_t level = top; level > stop; --level) {
      for (bool moved = true; moved;) {
        moved = false;
        std::size_t used = 0;
        for (const slot_index& link : links(from, level)) {
          const slot_index next = load_link(link);
          if (next == no_link) break;
          scratch.fresh[used++] = next;
        }
        score_rows(query, std::span<const slot_index>(scratch.fresh.data(), used), [&](slot_index next, float d) {
          if (d < best && !has_flag(next, linking_flag)) best = d, from = next, moved = true;
        });
      }
    }
    return from;
  }

  // Best-first search on one level from `start`, keeping in
  // scratch.results (a max-heap) the `ef` closest elements that `accepted`
  // lets through; every element routes the search whether accepted or not.
  template <class Accepted>
  void search_level(search_scratch& scratch, query_type query, slot_index start, std::size_t ef,
                    std::size_t level, const Accepted& accepted) const {
    scratch.start(state_.ids.size(), 2 * m_);
    auto& candidates = scratch.candidates;
    auto& results = scratch.results;
    const auto worst = [&] {
      return results.size() < ef ? std::numeric_limits<float>::infinity() : results.front().distance;
    };
    const auto offer = [&](slot_index slot, float d) {
      candidates.push_back({d, slot});
      std::push_heap(candidates.begin(), candidates.end(), std::greater<>{});
      if (!accepted(slot)) return;
      results.push_back({d, slot});
      std::push_heap(results.begin(), results.end());
      if (results.size() > ef) {
        std::pop_heap(results.begin(), results.end());
        results.pop_back();
      }
    };

    scratch.mark(start);
    offer(start, distance(query, start));
    while (!candidates.empty()) {
      const scored current = candidates.front();
      if (current.distance > worst()) break;
      std::pop_heap(candidates.begin(), candidates.end(), std::greater<>{});
      candidates.pop_back();
      // The next candidate is likely the next one expanded: its links
      // arrive while this one's neighbours are scored.
      if (!candidates.empty()) prefetch(links(candidates.front().slot, level).data());
      if (has_flag(current.slot, linking_flag)) continue;

      // Mark the unvisited neighbours, then score them with their rows
      // fetched ahead.
      std::size_t fresh = 0;
      for (const slot_index& link : links(current.slot, level)) {
        const slot_index next = load_link(link);
        if (next == no_link) break;
        if (scratch.seen(next)) continue;
        scratch.mark(next);
        scratch.fresh[fresh++] = next;
        prefetch(&state_.flags[next]);  // read if it comes close enough to be offered
      }
      score_rows(query, std::span<const slot_index>(scratch.fresh.data(), fresh), [&](slot_index next, float d) {
        if (d < worst()) offer(next, d);
      });
    }
  }

  // Picks up to `limit` neighbours from `candidates` (sorted closest first)
  // by the diversity heuristic: keep a candidate only if it is closer to the
  // base than to every neighbour kept so far.
  void select_neighbours(std::vector<scored>& candidates, std::size_t limit, search_scratch& scratch) const {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < candidates.size() && kept < limit; ++i) {
      const scored candidate = candidates[i];
      const query_type vector = as_query(candidate.slot, scratch.decoded_candidate);
      bool diverse = true;
      for (std::size_t j = 0; j < kept && diverse; ++j)
        diverse = distance(vector, candidates[j].slot) >= candidate.distance;
      if (diverse) candidates[kept++] = candidate;
    }
    candidates.resize(kept);
  }

  // Adds `to` to the links of `from` on `level` (`d` apart), under from's
  // lock; when they are full, `from` keeps the most diverse set of its old
  // links plus `to`. Each link is stored on its own, so a reader sees old
  // and new links mixed for a moment, never a list emptied.
  void connect(slot_index from, slot_index to, float d, std::size_t level, search_scratch& scratch) {
    link_guard guard(*this, from);
    const auto list = links(from, level);
    for (slot_index& link : list) {
      if (link == to) return;
      if (link == no_link) {
        store_link(link, to);
        if (level == 0) count_link_to(to, +1);
        return;
      }
    }
    auto& buffer = scratch.prune_buffer;
    buffer.assign(1, scored{d, to});
    const query_type base = as_query(from, scratch.decoded_base);
    for (slot_index link : list) buffer.push_back({distance(base, link), link});
    std::sort(buffer.begin(), buffer.end());
    select_neighbours(buffer, list.size(), scratch);
    if (level == 0) {
      const auto kept = [&](slot_index x) { return std::ranges::any_of(buffer, [x](const scored& k) { return k.slot == x; }); };
      for (slot_index link : list)
        if (!kept(link) && std::atomic_ref(state_.links_in[link]).fetch_sub(1, std::memory_order_relaxed) == 1)
          scratch.orphans.push_back(link);
      if (kept(to)) count_link_to(to, +1);
    }
    for (std::size_t i = 0; i < list.size(); ++i) store_link(list[i], i < buffer.size() ? buffer[i].slot : no_link);
  }

  // On level 0: `from` links to `to` in place of its farthest link (which
  // keeps its reach like connect_keeping_reach's).
  void replace_farthest_link(slot_index from, slot_index to, search_scratch& scratch) {
    auto& orphans = scratch.orphans;
    orphans.clear();
    {
      link_guard guard(*this, from);
      const auto list = links(from, 0);
      const query_type base = as_query(from, scratch.decoded_base);
      scored farthest{-std::numeric_limits<float>::infinity(), no_link};
      slot_index* at = nullptr;
      for (slot_index& link : list) {
        if (link == to) return;
        if (link == no_link) {
          at = &link, farthest.slot = no_link;
          break;
        }
        if (const float d = distance(base, link); d > farthest.distance) farthest = {d, link}, at = &link;
      }
      if (at == nullptr) return;
      if (farthest.slot != no_link &&
          std::atomic_ref(state_.links_in[farthest.slot]).fetch_sub(1, std::memory_order_relaxed) == 1)
        orphans.push_back(farthest.slot);
      store_link(*at, to);
      count_link_to(to, +1);
    }
    reach_orphans(to, scratch);
  }

  // connect(), then, on level 0, a link from `to` to each element whose
  // last link in was dropped to make room (a search could find it no more):
  // `to` took its place, so it lies close.
  void connect_keeping_reach(slot_index from, slot_index to, float d, std::size_t level, search_scratch& scratch) {
    scratch.orphans.clear();
    connect(from, to, d, level, scratch);
    reach_orphans(to, scratch);
  }

  // Links `to` to each of scratch.orphans. Each of these connect()s may
  // drop another last link, added to the list: a few rounds at most.
  void reach_orphans(slot_index to, search_scratch& scratch) {
    const auto& orphans = scratch.orphans;
    for (std::size_t i = 0; i < orphans.size() && i < 2 * m_; ++i)
      if (const slot_index orphan = orphans[i]; orphan != to)
        connect(to, orphan, distance(as_query(to, scratch.decoded_base), orphan), 0, scratch);
  }

  // Under the shared lock: connects the element in `slot` (vector and
  // level set) to the graph; `query` is its vector as a query. First its
  // own links on every level, while no other element links to it yet, so
  // that no search can reach it before they are all there (a search that
  // went on from an element with no links below would find nothing else);
  // then the links to it. Its own lists are filled through connect() too:
  // a link to it made by another add in between is kept.
  void link_into_graph(slot_index slot, query_type query, search_scratch& scratch) {
    const std::uint8_t level = state_.levels[slot];
    // Held throughout by the add whose element rises above the top level,
    // which it then becomes the entry of.
    std::unique_lock rising(entry_mutex_);
    const entry_point top = entry();
    if (top.slot == no_link) {
      linked(slot);
      set_entry({slot, level});
      return;
    }
    if (level <= top.level) rising.unlock();
    slot_index start = descend(query, level, top.slot, top.level, scratch);
    const auto not_itself = [slot](slot_index other) { return other != slot; };
    auto& chosen = scratch.chosen;
    chosen.clear();
    for (std::size_t l = std::min(level, top.level) + std::size_t{1}; l-- > 0;) {
      search_level(scratch, query, start, ef_construction_, l, not_itself);
      auto& found = scratch.results;
      if (found.empty()) continue;
      std::sort(found.begin(), found.end());
      start = found.front().slot;
      select_neighbours(found, m_, scratch);
      for (const scored& neighbour : found) {
        connect_keeping_reach(slot, neighbour.slot, neighbour.distance, l, scratch);
        chosen.push_back({static_cast<std::uint8_t>(l), neighbour});
      }
    }
    linked(slot);
    for (const auto& [l, neighbour] : chosen) connect_keeping_reach(neighbour.slot, slot, neighbour.distance, l, scratch);
    // Every neighbour may have found the others more diverse: the closest
    // then takes it in place of its farthest link.
    const auto closest = std::ranges::find(chosen, std::uint8_t{0}, [](const auto& c) { return c.first; });
    if (closest != chosen.end() && std::atomic_ref(state_.links_in[slot]).load(std::memory_order_relaxed) == 0)
      replace_farthest_link(closest->second.slot, slot, scratch);
    if (level > top.level) set_entry({slot, level});
  }

  // After load: rebuilds the id map and the count of links into each slot,
  // and checks every index in the file points where it may, so a corrupt
  // file is refused rather than followed.
  bool rebuild_and_check_graph() {
    auto& s = state_;
    const std::size_t count = s.count;
    if (count == 0) return s.entry.slot == no_link && s.free_slots.empty() && s.upper_links.empty();
    if (s.entry.slot >= count || s.entry.level > max_level || s.levels[s.entry.slot] != s.entry.level) return false;
    for (std::size_t slot = 0; slot < count; ++slot) {
      if (s.levels[slot] > s.entry.level || s.flags[slot] > removed_flag) return false;
      if (std::uint64_t{s.upper_offset[slot]} + s.levels[slot] * m_ > s.upper_links.size()) return false;
      if (!s.flags[slot] && !s.slot_of.emplace(s.ids[slot], static_cast<slot_index>(slot)).second)
        return false;
      for (std::size_t level = 0; level <= s.levels[slot]; ++level)
        for (slot_index link : links(static_cast<slot_index>(slot), level)) {
          if (link == no_link) continue;
          if (link >= count || s.levels[link] < level) return false;
          if (level == 0) ++s.links_in[link];
        }
    }
    std::vector<std::uint8_t> freed(count, 0);
    for (slot_index slot : s.free_slots)
      if (slot >= count || !s.flags[slot] || std::exchange(freed[slot], 1)) return false;
    return std::ranges::count(s.flags, removed_flag) == static_cast<std::ptrdiff_t>(s.free_slots.size());
  }

  std::size_t dimension_;
  std::size_t row_elements_;
  std::size_t m_;
  std::size_t ef_construction_;
  std::atomic<std::size_t> ef_search_;
  double level_multiplier_;
  state state_;
  mutable detail::fair_shared_mutex mutex_;  // shared: search, add's linking; exclusive: growth, reuse, overwrite
  mutable std::shared_mutex adds_;           // shared: add; exclusive: copy(), save_to()
  mutable std::mutex slots_mutex_;           // slot numbers, the id map, the free list, the level generator
  std::mutex entry_mutex_;                   // raising the entry point
  mutable std::mutex scratch_mutex_;
  mutable std::vector<std::unique_ptr<search_scratch>> scratch_pool_;
};

static_assert(PersistentIndex<hnsw_index<cosine_metric, float>> &&
              PersistentIndex<hnsw_index<cosine_metric, simd::float16>> &&
              PersistentIndex<hnsw_index<cosine_metric, simd::scaled_int8>>);
static_assert(ReweightableIndex<hnsw_index<cosine_metric, simd::float16>> &&
              ReweightableIndex<hnsw_index<cosine_metric, simd::scaled_int8>>);

}  // namespace llmgate::inline v0
