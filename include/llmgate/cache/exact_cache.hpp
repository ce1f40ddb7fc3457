// exact_cache: answers a request whose normalised text was answered before
// in the same scope. The tier in front of the semantic cache: no embedding,
// no search, one hash and one table probe.
//
// Key: xxh3-128 of the normalised request text, seeded with the scope's
// hash. Every entry also keeps its scope hash, its tenant and its
// normalised text, and a hit compares all three, so a hash collision reads
// as a miss, never as another request's answer. The tenant is compared as
// text because xxh3 is not built to resist someone crafting collisions:
// whatever a tenant puts in its prompts and parameters, its hashes alone
// can never reach another tenant's entries.
//
// Sharding: N shards (a power of two), each with its own lock, table,
// storage and eviction policy; a request's shard is chosen by its key, so
// lookups of different requests rarely wait for one another. A hit updates
// its policy (LRU recency, LFU count...), which is a write, so a shard has a
// plain mutex rather than a reader-writer lock.
//
// Capacity: max_entries and max_bytes are split evenly across the shards
// and every insert keeps both bounds in its shard, whatever the policy and
// lifetimes: expired entries leave first, then the policy's victims until
// the new entry fits. An entry counts the bytes of its tenant, its
// normalised text and its value. An entry larger than a shard's share of max_bytes is
// refused (insert_outcome::rejected).
//
// Values: find returns a copy made under the shard's lock, so nothing it
// returns can dangle when another thread evicts the entry. For large
// values, store std::shared_ptr<const T>: the copy is then a reference count.
#pragma once

#include <algorithm>     // std::max
#include <bit>           // std::bit_ceil
#include <concepts>      // std::convertible_to, std::copy_constructible, std::copyable
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <cstring>       // std::memcpy
#include <filesystem>    // std::filesystem::path
#include <memory>        // std::unique_ptr, std::make_unique
#include <new>           // ::operator new, std::align_val_t
#include <mutex>         // std::mutex, std::lock_guard
#include <optional>      // std::optional
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // key -> entry handle

#include "llmgate/detail/xxhash.hpp"  // XXH3_128bits_withSeed (Debian libxxhash-dev)

#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/scope.hpp"
#include "llmgate/cache/value_traits.hpp"
#include "llmgate/embed/text.hpp"
#include "llmgate/error.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// Turns a request into the text the exact cache compares, so that requests
/// which differ only in ways that do not change the answer share an entry.
/// Called from many threads at once, without a lock.
template <class N>
concept Normalizer = std::copyable<N> && requires(const N& normalize, std::string_view text) {
  { normalize(text) } -> std::convertible_to<std::string>;
};

/// The default normaliser: normalize_text (embed/text.hpp) with white space
/// collapsed and, by default here, case folded in every script, so "ÉTÉ"
/// and "été" share an entry. Set options.case_fold = false where case
/// changes answers (code, acronyms). ASCII requests take a fast path.
struct text_normalizer {
  normalize_options options{.collapse_whitespace = true, .case_fold = true};

  std::string operator()(std::string_view text) const {
    std::string out;
    normalize_text(text, options, out);
    return out;
  }
};

static_assert(Normalizer<text_normalizer>);

/// A request made ready for the cache: normalised once and hashed once, so
/// the insert that follows a miss does neither again.
struct exact_key {
  hash128 hash;        ///< picks the shard and the table slot
  hash128 scope;       ///< compared on every hit
  std::string tenant;  ///< compared on every hit
  std::string text;    ///< the normalised request, compared on every hit
};

struct exact_cache_options {
  std::size_t max_entries = 100'000;
  std::size_t max_bytes = std::size_t{256} << 20;
  /// Rounded up to a power of two, then halved until every shard holds at
  /// least one entry. More shards let more threads look up at once; each
  /// shard gets 1/shards of both capacities.
  std::size_t shards = 16;
};

/// What an insert did. rejected: the entry is larger than a shard's share of
/// max_bytes (or max_entries is 0); the cache is unchanged.
enum class insert_outcome { inserted, replaced, rejected };

struct insert_options {
  double cost = 1.0;                 ///< what computing the value cost (cost_aware_eviction keeps expensive ones)
  std::optional<std::size_t> bytes = {};  ///< the value's size, where cache_value_traits<Value> cannot tell it
};

struct exact_cache_statistics {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;       ///< expired entries and hash collisions included
  std::uint64_t insertions = 0;   ///< accepted inserts, replacements included
  std::uint64_t rejections = 0;   ///< inserts refused as too large
  std::uint64_t evictions = 0;    ///< entries the policy chose to make room
  std::uint64_t expirations = 0;  ///< entries removed past their lifetime
  std::size_t entries = 0;
  std::size_t bytes = 0;          ///< what the entries count against max_bytes
};

template <std::copy_constructible Value, EvictionPolicy Eviction = lru_eviction,
          Normalizer TextNormalizer = text_normalizer>
class exact_cache {
 public:
  using value_type = Value;
  using eviction_type = Eviction;
  using normalizer_type = TextNormalizer;

  /// `eviction` is copied into every shard; a policy with lifetimes needs
  /// one given, e.g. ttl_eviction<>(std::chrono::hours(1)).
  explicit exact_cache(exact_cache_options options = {}, Eviction eviction = {},
                       TextNormalizer normalizer = {})
      : normalizer_(std::move(normalizer)) {
    options.shards = std::bit_ceil(std::max<std::size_t>(options.shards, 1));
    while (options.shards > 1 && options.shards > options.max_entries) options.shards /= 2;
    options_ = options;
    shard_mask_ = options.shards - 1;
    shards_.reserve(options.shards);
    for (std::size_t i = 0; i < options.shards; ++i)
      shards_.push_back(std::make_unique<shard>(eviction, share(options.max_entries, i),
                                                share(options.max_bytes, i)));
  }

  /// The options in force: shards as rounded.
  const exact_cache_options& options() const noexcept { return options_; }

  exact_key make_key(const cache_scope& scope, std::string_view request) const {
    return key_of(scope.hash(), scope.tenant(), normalizer_(request));
  }

  /// The value stored for this request in this scope, if any and alive.
  std::optional<Value> find(const exact_key& key) {
    shard& s = shard_of(key.hash);
    std::lock_guard lock(s.mutex);
    const auto found = s.entry_of.find(key.hash);
    if (found == s.entry_of.end() || !found->second->matches(key)) {  // absent, or a collision
      ++s.counters.misses;
      return std::nullopt;
    }
    entry& e = *found->second;
    const entry_handle handle = e.handle;
    if (s.eviction.is_expired(handle)) {
      remove(s, handle);
      ++s.counters.expirations;
      ++s.counters.misses;
      return std::nullopt;
    }
    s.eviction.touch(handle);
    ++e.hits;
    ++s.counters.hits;
    return e.value;
  }

  std::optional<Value> find(const cache_scope& scope, std::string_view request) {
    return find(make_key(scope, request));
  }

  /// Stores `value` as the answer to the key's request, replacing an earlier
  /// one, after making room in the shard as its policy decides.
  insert_outcome insert(const exact_key& key, Value value, insert_options options = {}) {
    const std::size_t bytes = key.tenant.size() + key.text.size() +
                              (options.bytes ? *options.bytes : cache_value_traits<Value>::bytes(value));
    auto e = make_entry(key, std::move(value), bytes, options.cost, 0);
    shard& s = shard_of(key.hash);
    std::lock_guard lock(s.mutex);
    return store(s, std::move(e));
  }

  insert_outcome insert(const cache_scope& scope, std::string_view request, Value value,
                        insert_options options = {}) {
    return insert(make_key(scope, request), std::move(value), options);
  }

  /// Forgets the key's request; false when it was not there.
  bool erase(const exact_key& key) {
    shard& s = shard_of(key.hash);
    std::lock_guard lock(s.mutex);
    const auto found = s.entry_of.find(key.hash);
    if (found == s.entry_of.end() || !found->second->matches(key)) return false;
    remove(s, found->second->handle);
    return true;
  }

  /// Removes every expired entry now rather than when its shard is next
  /// written; returns how many. For a periodic sweep that returns memory.
  std::size_t purge_expired() {
    std::size_t purged = 0;
    for (auto& s : shards_) {
      std::lock_guard lock(s->mutex);
      purged += drop_expired(*s);
    }
    return purged;
  }

  /// Removes every entry; statistics are kept.
  void clear() {
    for (auto& s : shards_) {
      std::lock_guard lock(s->mutex);
      s->entry_of.clear();
      s->by_handle.clear();
      s->free_handles.clear();
      s->eviction.clear();
      s->bytes = 0;
    }
  }

  std::size_t size() const {
    std::size_t entries = 0;
    for (const auto& s : shards_) {
      std::lock_guard lock(s->mutex);
      entries += s->entry_of.size();
    }
    return entries;
  }

  /// Sums over the shards, each read under its lock.
  exact_cache_statistics statistics() const {
    exact_cache_statistics total;
    for (const auto& s : shards_) {
      std::lock_guard lock(s->mutex);
      const auto& c = s->counters;
      total.hits += c.hits;
      total.misses += c.misses;
      total.insertions += c.insertions;
      total.rejections += c.rejections;
      total.evictions += c.evictions;
      total.expirations += c.expirations;
      total.entries += s->entry_of.size();
      total.bytes += s->bytes;
    }
    return total;
  }

  /// Writes the live entries and the statistics to `path` atomically (new
  /// file, fsync, rename). Each shard is read under its lock, one after the
  /// other: an insert running meanwhile may or may not be in the file.
  /// Entries are written in the order their policy would evict them, so a
  /// load re-inserting them in that order rebuilds the same order (LRU,
  /// FIFO) and restores the hit counts that LFU and cost-aware rank by.
  /// Lifetimes are not saved: the clock they run on (steady_clock) means
  /// nothing in another process, so a loaded entry's lifetime starts again.
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const
    requires requires(store::snapshot_writer& out, const Value& value) {
      cache_value_traits<Value>::write(out, value);
    }
  {
    store::snapshot_writer out(file_kind, file_version);
    const auto counters = statistics();
    for (const std::uint64_t counter : {counters.hits, counters.misses, counters.insertions,
                                        counters.rejections, counters.evictions,
                                        counters.expirations})
      out.write(counter);
    out.write(static_cast<std::uint64_t>(shards_.size()));
    for (const auto& s : shards_) {
      std::lock_guard lock(s->mutex);
      Eviction order = s->eviction;  // a copy to pop victims from
      std::vector<entry_handle> oldest_first;
      oldest_first.reserve(s->entry_of.size());
      while (const auto victim = order.pop_victim())
        if (!s->eviction.is_expired(*victim)) oldest_first.push_back(*victim);
      out.write(static_cast<std::uint64_t>(oldest_first.size()));
      for (const entry_handle handle : oldest_first) {
        const entry& e = *s->by_handle[handle];
        out.write(e.scope.low);
        out.write(e.scope.high);
        out.write_string(e.tenant());
        out.write_string(e.text());
        out.write(e.hits);
        out.write(e.cost);
        out.write(static_cast<std::uint64_t>(e.bytes));
        cache_value_traits<Value>::write(out, e.value);
      }
    }
    return out.commit(path);
  }

  /// Reads a cache saved by save() into a new cache with these options,
  /// policy and normaliser (the normaliser should be the one that saved it,
  /// or saved requests stop matching). Throws llmgate::error naming the file
  /// and the cause when it is missing, truncated, corrupt, from a newer
  /// version or of another kind.
  static exact_cache load(const std::filesystem::path& path, exact_cache_options options = {},
                          Eviction eviction = {}, TextNormalizer normalizer = {})
    requires requires(store::snapshot_reader& in) {
      { cache_value_traits<Value>::read(in) } -> std::convertible_to<Value>;
    }
  {
    std::error_code ec;
    store::snapshot_reader in(path, file_kind, file_version, ec);
    const auto fail = [&](std::error_code code) {
      return store::load_failure("loading exact_cache from '" + path.string() + "'", path, code);
    };
    if (ec) throw fail(ec);

    exact_cache cache(options, std::move(eviction), std::move(normalizer));
    counters_type saved;
    for (std::uint64_t* counter : {&saved.hits, &saved.misses, &saved.insertions,
                                   &saved.rejections, &saved.evictions, &saved.expirations})
      *counter = in.read<std::uint64_t>();
    const auto sections = in.read<std::uint64_t>();
    if (sections > in.remaining() / 8) throw fail(make_error_code(errc::corrupt_file));
    for (std::uint64_t section = 0; section < sections; ++section) {
      const auto count = in.read<std::uint64_t>();
      if (count > in.remaining() / min_saved_entry_bytes)
        throw fail(make_error_code(errc::corrupt_file));
      for (std::uint64_t i = 0; i < count; ++i) {
        hash128 scope;
        scope.low = in.read<std::uint64_t>();
        scope.high = in.read<std::uint64_t>();
        std::string tenant = in.read_string();
        std::string text = in.read_string();
        const auto hits = in.read<std::uint64_t>();
        const auto cost = in.read<double>();
        const auto bytes = in.read<std::uint64_t>();
        Value value = cache_value_traits<Value>::read(in);
        if (bytes < tenant.size() + text.size()) {
          in.mark_corrupt();
          continue;
        }
        const exact_key key = key_of(scope, std::move(tenant), std::move(text));
        auto e = make_entry(key, std::move(value), static_cast<std::size_t>(bytes), cost, hits);
        shard& s = cache.shard_of(key.hash);
        std::lock_guard lock(s.mutex);
        if (cache.store(s, std::move(e)) == insert_outcome::replaced)
          in.mark_corrupt();  // one request saved twice
      }
    }
    if (const auto finished = in.finish()) throw fail(finished);

    // The statistics read as they did when saved, not as the loading made them.
    for (auto& s : cache.shards_) s->counters = {};
    cache.shards_.front()->counters = saved;
    return cache;
  }

 private:
  // An entry and its key in one allocation, laid out as
  //   [entry][tenant bytes][normalised text bytes]
  // so that verifying a hit reads the lines the header brought in instead
  // of following a pointer to a string of its own: one cache miss fewer
  // on every hit.
  struct entry {
    hash128 hash;
    hash128 scope;
    Value value;
    std::size_t bytes;
    double cost;
    std::uint64_t hits;
    entry_handle handle = 0;  // set by store()
    std::size_t tenant_size;
    std::size_t text_size;

    const char* key_bytes() const noexcept { return reinterpret_cast<const char*>(this + 1); }
    std::string_view tenant() const noexcept { return {key_bytes(), tenant_size}; }
    std::string_view text() const noexcept { return {key_bytes() + tenant_size, text_size}; }
    bool matches(const exact_key& key) const noexcept {
      return scope == key.scope && text() == key.text && tenant() == key.tenant;
    }
  };

  struct entry_deleter {
    void operator()(entry* e) const noexcept {
      e->~entry();
      ::operator delete(static_cast<void*>(e), std::align_val_t{alignof(entry)});
    }
  };
  using entry_ptr = std::unique_ptr<entry, entry_deleter>;

  // Built before the shard is locked: the allocation and copies happen
  // while other threads may use the shard.
  static entry_ptr make_entry(const exact_key& key, Value&& value, std::size_t bytes, double cost,
                              std::uint64_t hits) {
    void* block = ::operator new(sizeof(entry) + key.tenant.size() + key.text.size(),
                                 std::align_val_t{alignof(entry)});
    entry* e;
    try {
      e = ::new (block) entry{key.hash, key.scope, std::move(value), bytes, cost, hits, 0,
                              key.tenant.size(), key.text.size()};
    } catch (...) {
      ::operator delete(block, std::align_val_t{alignof(entry)});
      throw;
    }
    char* key_bytes = reinterpret_cast<char*>(e + 1);
    std::memcpy(key_bytes, key.tenant.data(), key.tenant.size());
    std::memcpy(key_bytes + key.tenant.size(), key.text.data(), key.text.size());
    return entry_ptr(e);
  }

  // xxh3's bits are already uniform: boost need not mix them again.
  struct key_hasher {
    using is_avalanching = void;
    std::size_t operator()(const hash128& key) const noexcept {
      return static_cast<std::size_t>(key.low);
    }
  };

  // Plain integers, written under the shard's lock.
  struct counters_type {
    std::uint64_t hits = 0, misses = 0, insertions = 0, rejections = 0, evictions = 0,
                  expirations = 0;
  };

  // A cache line to itself, so threads busy in different shards do not
  // invalidate each other's lines.
  struct alignas(64) shard {
    shard(const Eviction& prototype, std::size_t entry_capacity, std::size_t byte_capacity)
        : eviction(prototype), max_entries(entry_capacity), max_bytes(byte_capacity) {}

    std::mutex mutex;
    boost::unordered_flat_map<hash128, entry*, key_hasher> entry_of;
    std::vector<entry_ptr> by_handle;  // owns the entries; empty where freed
    std::vector<entry_handle> free_handles;
    Eviction eviction;
    std::size_t max_entries;
    std::size_t max_bytes;
    std::size_t bytes = 0;
    counters_type counters;
  };

  static constexpr store::kind_tag file_kind = {'E', 'X', 'C', 'T'};
  static constexpr std::uint32_t file_version = 1;
  // scope (16), tenant and text lengths (16), hits (8), cost (8), bytes (8).
  static constexpr std::size_t min_saved_entry_bytes = 56;

  static exact_key key_of(hash128 scope, std::string tenant, std::string normalized_text) {
    const XXH128_hash_t hash = XXH3_128bits_withSeed(normalized_text.data(), normalized_text.size(),
                                                     scope.low ^ scope.high);
    return {{hash.low64, hash.high64}, scope, std::move(tenant), std::move(normalized_text)};
  }

  // Shard i's part of a capacity: even shares, the remainder to the first ones.
  std::size_t share(std::size_t capacity, std::size_t i) const noexcept {
    const std::size_t n = options_.shards;
    return capacity / n + (i < capacity % n ? 1 : 0);
  }

  shard& shard_of(const hash128& key) const noexcept { return *shards_[key.high & shard_mask_]; }

  // The helpers below run under the shard's lock.

  insert_outcome store(shard& s, entry_ptr e) {
    if (s.max_entries == 0 || e->bytes > s.max_bytes) {
      ++s.counters.rejections;
      return insert_outcome::rejected;
    }
    drop_expired(s);
    bool replaced = false;
    // The same request, or (once in 2^128) one whose key collides: the newer answer wins.
    if (const auto found = s.entry_of.find(e->hash); found != s.entry_of.end()) {
      remove(s, found->second->handle);
      replaced = true;
    }
    while (s.entry_of.size() >= s.max_entries || s.bytes + e->bytes > s.max_bytes) {
      const auto victim = s.eviction.pop_victim();
      if (!victim) break;  // only a policy that lost track of entries has none to offer
      release(s, *victim);
      ++s.counters.evictions;
    }

    if (!s.free_handles.empty()) {
      e->handle = s.free_handles.back();
      s.free_handles.pop_back();
    } else {
      e->handle = static_cast<entry_handle>(s.by_handle.size());
      s.by_handle.emplace_back();
    }
    const entry_info info{e->bytes, e->cost, e->hits};
    const entry_handle handle = e->handle;
    s.bytes += e->bytes;
    s.entry_of.emplace(e->hash, e.get());
    s.by_handle[handle] = std::move(e);
    s.eviction.insert(handle, info);
    ++s.counters.insertions;
    return replaced ? insert_outcome::replaced : insert_outcome::inserted;
  }

  std::size_t drop_expired(shard& s) {
    std::size_t dropped = 0;
    while (const auto expired = s.eviction.pop_expired()) {
      release(s, *expired);
      ++dropped;
    }
    s.counters.expirations += dropped;
    return dropped;
  }

  // Takes the entry out of the policy too.
  void remove(shard& s, entry_handle handle) {
    s.eviction.erase(handle);
    release(s, handle);
  }

  // Frees the storage of an entry the policy no longer holds.
  void release(shard& s, entry_handle handle) {
    auto& owned = s.by_handle[handle];
    s.entry_of.erase(owned->hash);
    s.bytes -= owned->bytes;
    owned.reset();
    s.free_handles.push_back(handle);
  }

  exact_cache_options options_;
  TextNormalizer normalizer_;
  std::vector<std::unique_ptr<shard>> shards_;
  std::size_t shard_mask_ = 0;
};

}  // namespace llmgate::inline v0
