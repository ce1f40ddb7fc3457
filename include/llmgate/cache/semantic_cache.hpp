// basic_semantic_cache: answers a request with the stored answer of an
// earlier request that means the same, within the same scope.
//
// A lookup embeds the request's key text, searches the scope's own index
// for the nearest stored requests, and walks them closest first: the
// threshold policy says hit, miss or explore, the guard may veto a hit for
// reasons the embedder misses (another number, a negation), and an entry
// once reported wrong at some similarity never serves at or below it again.
// Each scope (tenant, model, parameters, system prompt, and the
// conversation context the key policy adds) has an index of its own, so no
// search can ever see another scope's entries.
//
// Policies, each a concept with models beside it:
//   Embedder        text -> vector           embed/embedder.hpp
//   VectorIndex     nearest neighbours       index/vector_index.hpp
//   EvictionPolicy  who leaves a full cache  cache/eviction/
//   ThresholdPolicy when similar is enough   cache/threshold.hpp
//   GuardPolicy     cheap vetoes             cache/guard.hpp
//   KeyPolicy       what is compared         cache/key_policy.hpp
#pragma once

#include <chrono>        // std::chrono::steady_clock
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <memory>        // std::unique_ptr
#include <mutex>         // std::unique_lock, std::lock_guard
#include <optional>      // std::optional
#include <shared_mutex>  // std::shared_lock
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <utility>       // std::move
#include <vector>        // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // scope -> index

#include "llmgate/cache/eviction/eviction_policy.hpp"
#include "llmgate/cache/eviction/lru.hpp"
#include "llmgate/cache/guard.hpp"
#include "llmgate/cache/key_policy.hpp"
#include "llmgate/cache/scope.hpp"
#include "llmgate/cache/threshold.hpp"
#include "llmgate/detail/fair_shared_mutex.hpp"
#include "llmgate/embed/embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/index/hnsw_index.hpp"
#include "llmgate/index/vector_index.hpp"
#include "llmgate/metrics/latency_histogram.hpp"

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

template <class Value>
struct semantic_lookup {
  lookup_outcome outcome = lookup_outcome::miss;
  std::optional<Value> answer;     ///< for hit and explore
  float similarity = 0.0f;         ///< of the neighbour behind `answer` (or the nearest seen)
  entry_handle entry = 0;          ///< the neighbour, for feedback()
  std::uint64_t entry_serial = 0;  ///< tells a reused handle from the entry that was looked up
  hash128 scope{};                 ///< the partition searched (scope joined with context)
  std::uint32_t vetoes = 0;        ///< neighbours the guard vetoed on the way
};

struct semantic_cache_options {
  std::size_t max_entries = 100000;
  std::size_t neighbours = 4;  ///< nearest stored requests examined per lookup
};

struct semantic_cache_statistics {
  std::uint64_t lookups = 0, hits = 0, misses = 0, explores = 0, vetoes = 0;
  std::uint64_t insertions = 0, evictions = 0, wrong_reports = 0;
  std::uint64_t tokens_saved = 0;
  double usd_saved = 0.0;
  std::chrono::nanoseconds lookup_p50{}, lookup_p99{};
};

template <class Value = std::string, Embedder EmbedderT = hashing_embedder,
          VectorIndex Index = hnsw_index<cosine_metric>, EvictionPolicy Eviction = lru_eviction,
          ThresholdPolicy Threshold = static_threshold, GuardPolicy Guard = lexical_guard,
          KeyPolicy Key = last_user_turn>
class basic_semantic_cache {
 public:
  using value_type = Value;
  using lookup_result = semantic_lookup<Value>;

  explicit basic_semantic_cache(semantic_cache_options options = {}, EmbedderT embedder = EmbedderT(),
                                Threshold threshold = Threshold(), Guard guard = Guard(),
                                Key key = Key(), Eviction eviction = Eviction())
      : options_(options), embedder_(std::move(embedder)), threshold_(std::move(threshold)),
        guard_(std::move(guard)), key_(std::move(key)), eviction_(std::move(eviction)) {}

  /// Looks up a plain text request.
  lookup_result lookup(const cache_scope& scope, std::string_view text) {
    return lookup_key(scope.hash(), text);
  }

  /// Looks up a chat request through the key policy.
  lookup_result lookup(const cache_scope& scope, std::span<const chat_message> messages) {
    const cache_key key = key_.key(scope, messages);
    return lookup_key(key.scope, key.text);
  }

  /// Stores `answer` for a plain text request; returns its entry.
  entry_handle insert(const cache_scope& scope, std::string_view text, Value answer,
                      answer_cost cost = {}) {
    return insert_key(scope.hash(), text, std::move(answer), cost);
  }

  entry_handle insert(const cache_scope& scope, std::span<const chat_message> messages, Value answer,
                      answer_cost cost = {}) {
    const cache_key key = key_.key(scope, messages);
    return insert_key(key.scope, key.text, std::move(answer), cost);
  }

  /// Reports whether the answer a lookup returned (hit or explore) was
  /// right. A wrong one stops its entry serving at that similarity or
  /// below; both teach the threshold policy. Feedback on an entry evicted
  /// since the lookup is ignored.
  void feedback(const lookup_result& result, bool correct) {
    if (result.outcome == lookup_outcome::miss) return;
    {
      std::unique_lock lock(mutex_);
      auto& e = entries_[result.entry];
      if (!e.live || e.serial != result.entry_serial) return;
      if (!correct) {
        e.wrong_at = std::max(e.wrong_at, result.similarity);
        ++statistics_.wrong_reports;
      }
    }
    threshold_.record(result.scope, result.entry, result.similarity, correct);
  }

  semantic_cache_statistics statistics() const {
    std::shared_lock lock(mutex_);
    std::lock_guard counters(counters_mutex_);
    auto s = statistics_;
    s.lookup_p50 = latency_.percentile(0.50);
    s.lookup_p99 = latency_.percentile(0.99);
    return s;
  }

  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return live_entries_;
  }

  const Threshold& threshold_policy() const noexcept { return threshold_; }
  const EmbedderT& embedder() const noexcept { return embedder_; }

 private:
  struct entry {
    hash128 scope{};
    std::string text;
    Value answer{};
    answer_cost cost;
    float wrong_at = -1.0f;  // highest similarity at which it was reported wrong
    std::uint64_t serial = 0;
    bool live = false;
  };

  lookup_result lookup_key(const hash128& scope, std::string_view text) {
    const auto started = std::chrono::steady_clock::now();
    lookup_result result;
    result.scope = scope;
    std::vector<float> vector(embedder_.dimension());
    {
      std::shared_lock lock(mutex_);
      const auto index = indexes_.find(scope);
      if (index != indexes_.end() && !embedder_.embed(text, vector)) {
        for (const search_hit& hit : index->second->search(vector, options_.neighbours)) {
          const auto handle = static_cast<entry_handle>(hit.id);
          const entry& e = entries_[handle];
          result.similarity = std::max(result.similarity, hit.similarity);
          if (hit.similarity <= e.wrong_at || expired(handle)) continue;
          const threshold_decision decision = threshold_.decide(scope, handle, hit.similarity);
          if (decision == threshold_decision::miss) break;
          if (guard_.vetoes(text, e.text) != veto_reason::none) {
            ++result.vetoes;
            continue;
          }
          result.outcome = decision == threshold_decision::hit ? lookup_outcome::hit : lookup_outcome::explore;
          result.answer = e.answer;
          result.similarity = hit.similarity;
          result.entry = handle;
          result.entry_serial = e.serial;
          break;
        }
      }
      count(result, result.outcome == lookup_outcome::hit ? &entries_[result.entry].cost : nullptr);
    }
    latency_.record(std::chrono::steady_clock::now() - started);
    return result;
  }

  bool expired(entry_handle handle) const {
    std::lock_guard counters(counters_mutex_);
    return eviction_.is_expired(handle);
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
        eviction_.touch(result.entry);
        break;
      case lookup_outcome::miss: ++statistics_.misses; break;
      case lookup_outcome::explore: ++statistics_.explores; break;
    }
  }

  entry_handle insert_key(const hash128& scope, std::string_view text, Value answer, answer_cost cost) {
    std::unique_lock lock(mutex_);
    if constexpr (LearningEmbedder<EmbedderT>) {
      embedder_.observe(text);
      if (embedder_.refresh_due()) {
        embedder_.refresh();
        reembed_everything();
      }
    }
    while (live_entries_ >= options_.max_entries && evict_one()) {}
    entry_handle handle;
    if (free_handles_.empty()) {
      handle = static_cast<entry_handle>(entries_.size());
      entries_.emplace_back();
    } else {
      handle = free_handles_.back();
      free_handles_.pop_back();
    }
    entry& e = entries_[handle];
    e = entry{scope, std::string(text), std::move(answer), cost, -1.0f, ++serials_, true};
    ++live_entries_;
    index_entry(handle);
    {
      std::lock_guard counters(counters_mutex_);
      ++statistics_.insertions;
      eviction_.insert(handle, entry_info{text.size() + sizeof(entry), cost.usd, 0});
    }
    return handle;
  }

  // Embeds an entry's text into its scope's index (made on first use).
  void index_entry(entry_handle handle) {
    const entry& e = entries_[handle];
    std::vector<float> vector(embedder_.dimension());
    if (embedder_.embed(e.text, vector)) return;  // unembeddable: stored, never found
    auto& index = indexes_[e.scope];
    if (!index) index = std::make_unique<Index>(embedder_.dimension());
    (void)index->add(handle, vector);  // handles are unique: no error to expect
  }

  // After the embedder's weights changed, vectors of old and new weights
  // must not be compared: rebuild every index from the stored texts.
  void reembed_everything() {
    indexes_.clear();
    for (entry_handle handle = 0; handle < entries_.size(); ++handle)
      if (entries_[handle].live) index_entry(handle);
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
    entry& e = entries_[*victim];
    if (const auto index = indexes_.find(e.scope); index != indexes_.end()) index->second->remove(*victim);
    threshold_.forget(*victim);
    e = entry{};
    free_handles_.push_back(*victim);
    --live_entries_;
    return true;
  }

  semantic_cache_options options_;
  EmbedderT embedder_;
  Threshold threshold_;
  Guard guard_;
  Key key_;

  mutable detail::fair_shared_mutex mutex_;  // entries, indexes
  std::vector<entry> entries_;
  std::vector<entry_handle> free_handles_;
  std::size_t live_entries_ = 0;
  std::uint64_t serials_ = 0;
  boost::unordered_flat_map<hash128, std::unique_ptr<Index>, hash128_hasher> indexes_;

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
