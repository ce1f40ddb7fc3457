// flat_index: exact nearest-neighbour search by scanning every vector with
// the batched SIMD kernels. The baseline every approximate index is judged
// against, and the right choice below a few tens of thousands of vectors.
#pragma once

#include <algorithm>     // std::push_heap, std::pop_heap, std::sort_heap
#include <array>         // std::array
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <mutex>         // std::unique_lock
#include <optional>      // std::optional (load_from)
#include <shared_mutex>  // std::shared_lock
#include <span>          // std::span
#include <string>        // std::string
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // id -> slot

#include "llmgate/detail/fair_shared_mutex.hpp"
#include "llmgate/index/metric.hpp"
#include "llmgate/index/top_k.hpp"
#include "llmgate/index/vector_index.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

template <Metric M = cosine_metric>
class flat_index {
 public:
  using metric_type = M;

  explicit flat_index(std::size_t dimension) : dimension_(dimension) {}

  flat_index(flat_index&& other) noexcept : dimension_(other.dimension_), state_(std::move(other.state_)) {}
  flat_index& operator=(flat_index&&) = delete;

  /// Stores a copy of `vector` under `id` (normalised first if the metric asks).
  [[nodiscard]] std::error_code add(vector_id id, std::span<const float> vector) {
    return insert(id, vector, M::normalizes_inputs);
  }

  /// Forgets `id`; its slot is reused by a later add. False if it was not there.
  bool remove(vector_id id) {
    std::unique_lock lock(mutex_);
    auto& s = state_;
    const auto found = s.slot_of.find(id);
    if (found == s.slot_of.end()) return false;
    s.live[found->second] = 0;
    s.free_slots.push_back(found->second);
    s.slot_of.erase(found);
    return true;
  }

  bool contains(vector_id id) const {
    std::shared_lock lock(mutex_);
    return state_.slot_of.contains(id);
  }

  /// The k vectors closest to `query` among those `filter` accepts, closest
  /// first (ties broken by id). A query of the wrong dimension finds nothing.
  template <class Filter = accept_all>
    requires std::predicate<const Filter&, vector_id>
  std::vector<search_hit> search(std::span<const float> query, std::size_t k,
                                 const Filter& filter = {}) const {
    if (query.size() != dimension_ || k == 0) return {};
    std::vector<float> q(query.begin(), query.end());
    if constexpr (M::normalizes_inputs) simd::normalize(q.data(), dimension_);

    top_k best(k);
    std::array<float, block_rows> distances;
    std::shared_lock lock(mutex_);
    const auto& s = state_;
    const std::size_t slots = s.ids.size();
    for (std::size_t first = 0; first < slots; first += block_rows) {
      const std::size_t count = std::min(block_rows, slots - first);
      M::distance_batch(q.data(), s.rows.data() + first * dimension_, count, dimension_,
                        distances.data());
      for (std::size_t r = 0; r < count; ++r) {
        const std::size_t slot = first + r;
        if (s.live[slot] && best.admits(distances[r]) && filter(s.ids[slot]))
          best.push(s.ids[slot], distances[r]);
      }
    }
    return std::move(best).template sorted_hits<M>();
  }

  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return state_.slot_of.size();
  }

  std::size_t dimension() const noexcept { return dimension_; }

  /// Bytes held by the index's own containers (capacity, not just size).
  std::size_t memory_usage() const {
    std::shared_lock lock(mutex_);
    const auto& s = state_;
    return s.rows.capacity() * sizeof(float) + s.ids.capacity() * sizeof(vector_id) +
           s.live.capacity() + s.free_slots.capacity() * sizeof(std::uint32_t) +
           s.slot_of.bucket_count() * (sizeof(std::pair<vector_id, std::uint32_t>) + 1);
  }

  void reserve(std::size_t n) {
    std::unique_lock lock(mutex_);
    state_.rows.reserve(n * dimension_);
    state_.ids.reserve(n);
    state_.live.reserve(n);
    state_.slot_of.reserve(n);
  }

  /// Writes the index to `path` atomically (new file, fsync, rename).
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    return store::save_file(*this, path, file_kind, file_version);
  }

  /// Reads an index saved by save(). Throws llmgate::error naming the file
  /// and the cause when it is missing, truncated, corrupt, from a newer
  /// version, or holds another metric.
  static flat_index load(const std::filesystem::path& path) {
    return store::load_file<flat_index>(path, file_kind, file_version, "flat_index");
  }

  /// Appends the index to a snapshot (e.g. a cache's, which holds several).
  void save_to(store::snapshot_writer& out) const {
    std::shared_lock lock(mutex_);
    const auto& s = state_;
    out.write_string(M::name);
    out.write(static_cast<std::uint64_t>(dimension_));
    out.write(static_cast<std::uint64_t>(s.slot_of.size()));
    for (std::size_t slot = 0; slot < s.ids.size(); ++slot) {
      if (!s.live[slot]) continue;
      out.write(s.ids[slot]);
      out.write_array(std::span<const float>(s.rows.data() + slot * dimension_, dimension_));
    }
  }

  /// Reads what save_to() appended; sets `ec` and returns nothing when the
  /// content cannot be this index. The caller still checks in.finish().
  static std::optional<flat_index> load_from(store::snapshot_reader& in, std::error_code& ec) {
    if (in.read_string() != M::name) {
      ec = make_error_code(errc::wrong_kind_of_file);
      return std::nullopt;
    }
    const auto dimension = in.read<std::uint64_t>();
    const auto count = in.read<std::uint64_t>();
    if (dimension == 0 || count * (8 + dimension * sizeof(float)) > in.remaining()) {
      ec = make_error_code(errc::corrupt_file);
      return std::nullopt;
    }
    std::optional<flat_index> index(std::in_place, dimension);
    index->reserve(count);
    std::vector<float> row(dimension);
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto id = in.read<vector_id>();
      in.read_array(std::span<float>(row));
      if (index->insert(id, row, false)) {  // a duplicate id
        ec = make_error_code(errc::corrupt_file);
        return std::nullopt;
      }
    }
    return index;
  }

 private:
  // add() without the normalisation, for rows loaded from a file.
  std::error_code insert(vector_id id, std::span<const float> vector, bool normalize) {
    if (vector.size() != dimension_) return make_error_code(errc::dimension_mismatch);

    std::unique_lock lock(mutex_);
    auto& s = state_;
    if (s.slot_of.contains(id)) return make_error_code(errc::duplicate_id);
    std::uint32_t slot;
    if (!s.free_slots.empty()) {
      slot = s.free_slots.back();
      s.free_slots.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(s.ids.size());
      s.ids.push_back(0);
      s.live.push_back(0);
      s.rows.resize(s.rows.size() + dimension_);
    }
    float* row = s.rows.data() + std::size_t{slot} * dimension_;
    std::copy(vector.begin(), vector.end(), row);
    if (normalize) simd::normalize(row, dimension_);
    s.ids[slot] = id;
    s.live[slot] = 1;
    s.slot_of.emplace(id, slot);
    return {};
  }


  static constexpr std::size_t block_rows = 256;
  static constexpr store::kind_tag file_kind = {'F', 'L', 'A', 'T'};
  static constexpr std::uint32_t file_version = 1;

  struct state {
    std::vector<float> rows;             // slot s at rows[s * dimension]
    std::vector<vector_id> ids;          // caller's id of each slot
    std::vector<std::uint8_t> live;      // 0 for a removed slot
    std::vector<std::uint32_t> free_slots;
    boost::unordered_flat_map<vector_id, std::uint32_t> slot_of;
  };

  std::size_t dimension_;
  state state_;
  mutable detail::fair_shared_mutex mutex_;
};

static_assert(PersistentIndex<flat_index<>>);

}  // namespace llmgate::inline v0
