// stream_tailer: applies the other replicas' changes from the Redis Stream
// P:{semantic}:stream to this replica's caches (semantic inserts,
// evictions and verdicts; exact erasures), with XREAD BLOCK on a client of
// its own, so that no read of the tier waits behind it. It knows where it
// is (the last entry applied) and whether the cache holds everything up to
// there; a replica that finds the stream trimmed past that point (it was
// away while a snapshot was taken) reloads from the snapshot
// (P:{semantic}:snapshot) while serving, then reads on from the
// snapshot's entry. All on the tier's thread, but for whole snapshots,
// merged on the tier's background thread.
#pragma once

#include <algorithm>    // std::max, std::min
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::milliseconds, system_clock
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <optional>     // std::optional
#include <string>       // std::string
#include <type_traits>  // std::is_same_v, std::decay_t, std::invoke_result_t
#include <utility>      // std::move
#include <variant>      // std::visit, std::get_if
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>       // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>       // boost::asio::co_spawn
#include <boost/asio/io_context.hpp>     // boost::asio::io_context
#include <boost/asio/post.hpp>           // boost::asio::post
#include <boost/asio/steady_timer.hpp>   // boost::asio::steady_timer
#include <boost/asio/thread_pool.hpp>    // boost::asio::thread_pool
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable

#include "llmgate/cache/exact_cache.hpp"                  // exact_key
#include "llmgate/cache/index_factory.hpp"                // default_index_factory
#include "llmgate/cache/key_policy.hpp"                   // cache_key
#include "llmgate/cache/learned_verifier.hpp"             // learned_verifier
#include "llmgate/cache/semantic_cache.hpp"               // answer_cost, semantic_cache_options
#include "llmgate/embed/hashing_embedder.hpp"             // hashing_embedder
#include "llmgate/error.hpp"                              // llmgate::error, errc
#include "llmgate/redis/client.hpp"                       // redis::client
#include "llmgate/redis/reply.hpp"                        // redis::command, redis::reply
#include "llmgate/server/caches/cache_policies.hpp"       // eviction_of, threshold_of, cache_clock
#include "llmgate/server/caches/gateway_caches.hpp"       // gateway_caches
#include "llmgate/server/caches/semantic_tier.hpp"        // gateway_remote_cache, gateway_hashing_cache
#include "llmgate/server/gateway_config.hpp"              // gateway_config
#include "llmgate/server/operations/request_log.hpp"      // request_log
#include "llmgate/server/shared/replication_message.hpp"  // decode_change, stream_id, replicated_*
#include "llmgate/server/shared/store_health.hpp"         // store_health

namespace llmgate::inline v0 {

namespace detail {

// Runs `work` (a cache's whole snapshot saved or merged) on `background`,
// so that the tier's thread keeps reads to their timeout.
template <class Work>
boost::asio::awaitable<std::invoke_result_t<Work&>> in_background(boost::asio::thread_pool& background, Work work) {
  return boost::asio::co_spawn(
      background,
      [work = std::move(work)]() mutable -> boost::asio::awaitable<std::invoke_result_t<Work&>> { co_return work(); },
      boost::asio::use_awaitable);
}

}  // namespace detail

/// What the tailer works with: the tier's thread and background thread,
/// its two clients, the caches it applies to, and the names of the keys.
struct stream_tailer_context {
  boost::asio::io_context& io;
  boost::asio::thread_pool& background;
  redis::client& tail;      ///< XREAD BLOCK only: one connection it keeps busy
  redis::client& commands;  ///< the snapshot's reads, XRANGE
  store_health& health;
  const std::atomic<bool>& stopping;
  const gateway_config& config;
  gateway_caches& caches;
  request_log& log;
  std::string replica;
  std::string stream;    ///< P:{semantic}:stream
  std::string snapshot;  ///< P:{semantic}:snapshot
  std::chrono::milliseconds block;  ///< XREAD's BLOCK, shorter than a command's timeout
  bool semantic;         ///< the semantic cache is shared (else only exact erasures are applied)
};

class stream_tailer {
 public:
  static constexpr std::size_t batch_size = 512;
  static constexpr std::chrono::milliseconds first_backoff{50}, last_backoff{1000};

  /// The stream entry a snapshot holds everything up to, and its bytes.
  struct snapshot_entry {
    std::string id;
    std::string bytes;
  };

  explicit stream_tailer(stream_tailer_context context) : c_(std::move(context)), pause_(c_.io) {}

  /// The snapshot the store holds, if any.
  boost::asio::awaitable<std::optional<snapshot_entry>> read_snapshot() {
    redis::command get = {"HMGET", c_.snapshot, "id", "bytes"};
    const redis::reply found = co_await c_.commands.exec(std::move(get));
    c_.health.answered(1);
    if (!found.is_array() || found.elements.size() != 2 || !found.elements[0].is_string() ||
        !found.elements[1].is_string() || !stream_id::parse(found.elements[0].text))
      co_return std::nullopt;
    co_return snapshot_entry{found.elements[0].text, found.elements[1].text};
  }

  /// Where the stream is read from next: after `id` (a snapshot's, or "0"
  /// for its start); `synced`: whether the cache holds everything up to it.
  void read_from(std::string id, bool synced) {
    last_id_ = std::move(id);
    synced_ = synced;
  }
  /// The last entry applied (or skipped as this replica's own).
  const std::string& last_id() const noexcept { return last_id_; }
  bool synced() const noexcept { return synced_; }

  /// Reads and applies until the tier stops; a failure pauses it with a
  /// backoff from 50 ms to 1 s.
  boost::asio::awaitable<void> run() {
    auto backoff = first_backoff;
    while (!c_.stopping.load()) {
      bool failed = false;
      try {
        if (!synced_) co_await resync();
        co_await read_and_apply();
        backoff = first_backoff;
      } catch (const std::exception& e) {
        failed = !c_.stopping.load();
        if (failed) c_.health.failed(1, e);
      }
      if (!failed) continue;
      pause_.expires_after(backoff);
      co_await pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      backoff = std::min(backoff * 2, last_backoff);
    }
  }

  /// Ends a pause, for a stop; on the tier's thread.
  void cancel() { pause_.cancel(); }

  std::uint64_t applied_changes() const noexcept { return applied_changes_.load(); }
  double replication_lag_ms() const noexcept { return replication_lag_ms_.load(); }

 private:
  // Applying a change takes the cache's lock and may embed: the tailer
  // yields its thread every few changes, so that reads keep their timeout.
  static constexpr int changes_between_yields = 16;

  // One XREAD BLOCK; then, when a snapshot newer than where it read from
  // exists, whether the stream lost entries after that point (a trim while
  // this replica was behind or away): if so, resync instead of applying.
  boost::asio::awaitable<void> read_and_apply() {
    const std::string from = last_id_;
    std::vector<redis::command> read = {{"XREAD", "COUNT", std::to_string(batch_size), "BLOCK",
                                         std::to_string(c_.block.count()), "STREAMS", c_.stream, from},
                                        {"HGET", c_.snapshot, "id"}};
    std::vector<redis::reply> replies = co_await c_.tail.exec_pipeline(std::move(read), c_.stream);
    c_.health.answered(2);
    if (replies.size() != 2 || replies[0].is_error())
      throw error(errc::store_error, "redis: XREAD " + c_.stream + ": " + (replies.empty() ? "" : replies[0].text));
    const auto read_from = stream_id::parse(from);
    const auto snapshot_id = replies[1].is_string() ? stream_id::parse(replies[1].text) : std::nullopt;
    if (read_from && snapshot_id && *snapshot_id > *read_from && co_await trimmed_after(*read_from)) {
      synced_ = false;
      co_return;
    }
    co_await apply_entries(replies[0]);
  }

  // Whether the stream may have lost entries after `id`: its first entry
  // is later (XTRIM leaves no other trace: max-deleted-entry-id counts
  // XDEL only). When in doubt it says yes: reloading a snapshot that held
  // nothing new costs time, missing changes costs answers.
  boost::asio::awaitable<bool> trimmed_after(stream_id id) {
    redis::command first = {"XRANGE", c_.stream, "-", "+", "COUNT", "1"};
    const redis::reply found = co_await c_.commands.exec(std::move(first));
    c_.health.answered(1);
    if (!found.is_array() || found.elements.empty() || !found.elements[0].is_array() ||
        found.elements[0].elements.empty())
      co_return true;
    const auto first_id = stream_id::parse(found.elements[0].elements[0].text);
    co_return !first_id || *first_id > id;
  }

  // XREAD's reply: [[stream, [[id, [field, value, ...]], ...]]], or nil.
  boost::asio::awaitable<void> apply_entries(const redis::reply& read) {
    if (!read.is_array()) co_return;
    int since_yield = 0;
    for (const redis::reply& stream : read.elements) {
      if (!stream.is_array() || stream.elements.size() != 2) continue;
      for (const redis::reply& entry : stream.elements[1].elements) {
        if (c_.stopping.load()) co_return;
        if (!entry.is_array() || entry.elements.size() != 2 || !entry.elements[0].is_string()) continue;
        last_id_ = entry.elements[0].text;
        const redis::reply& fields = entry.elements[1];
        const redis::reply* origin = nullptr;
        const redis::reply* payload = nullptr;
        for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
          if (fields.elements[i].text == "o") origin = &fields.elements[i + 1];
          else if (fields.elements[i].text == "b") payload = &fields.elements[i + 1];
        }
        if (origin && origin->text == c_.replica) continue;  // this replica's own change
        if (!payload || !apply(payload->text)) {
          c_.health.count_error();
          continue;
        }
        ++applied_changes_;
        if (const auto id = stream_id::parse(last_id_)) {
          const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch());
          replication_lag_ms_ = std::max(0.0, static_cast<double>(now.count()) - static_cast<double>(id->milliseconds));
        }
        if (++since_yield == changes_between_yields) {
          since_yield = 0;
          co_await boost::asio::post(c_.io, boost::asio::use_awaitable);
        }
      }
    }
  }

  // Applies one change's payload to the caches; false when it cannot be
  // read or does not fit this cache (another dimension).
  bool apply(std::string bytes) {
    std::error_code ec;
    std::optional<semantic_change> change = decode_change(std::move(bytes), ec);
    if (!change) return false;
    if (const auto* erase = std::get_if<replicated_exact_erase>(&*change)) {
      (void)c_.caches.exact().erase(exact_key{erase->hash, erase->scope, erase->tenant, erase->text});
      return true;  // false from erase: this replica held no copy
    }
    if (!c_.semantic) return true;  // another replica's semantic change: not shared here
    try {
      return c_.caches.semantic().visit([&](auto& cache) { return apply_to(cache, std::move(*change)); });
    } catch (const std::exception& e) {  // out of memory, say: this change is lost here, the tier goes on
      c_.log.event("shared_change_failed", {{"replica", c_.replica}, {"error", e.what()}});
      return false;
    }
  }

  template <class Cache>
  static bool apply_to(Cache& cache, semantic_change change) {
    return std::visit(
        [&](auto&& c) {
          using change_type = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<change_type, replicated_insert>) {
            if (!c.answer) return false;
            std::vector<float> vector;  // empty: this replica embeds the text with its own weights
            if constexpr (std::is_same_v<Cache, gateway_remote_cache>) {
              if (c.vector.size() != cache.embedder().dimension()) return false;
              vector = std::move(c.vector);
            }
            (void)cache.insert_replica(cache_key{c.scope, std::move(c.text)}, std::move(vector), std::move(c.answer),
                                       c.cost);  // false: already held, which is as good
          } else if constexpr (std::is_same_v<change_type, replicated_feedback>) {
            cache.feedback_replica(c.scope, c.request_text, c.stored_text, c.similarity, c.probability, c.correct);
          } else if constexpr (std::is_same_v<change_type, replicated_eviction>) {
            (void)cache.erase_replica(c.scope, c.text);
          }  // exact erasures are applied by apply()
          return true;
        },
        std::move(change));
  }

  // Reloads from the snapshot while serving: a temporary cache of the same
  // kind reads it, and each of its entries is inserted here as another
  // replica's would be; then the stream is read from the snapshot's id.
  // Without a snapshot the stream is read from where this replica was. A
  // replica that shares exact answers only just reads on from the snapshot.
  boost::asio::awaitable<void> resync() {
    std::optional<snapshot_entry> snapshot = co_await read_snapshot();
    if (snapshot) {
      std::size_t inserted = 0;
      try {
        // Named, not a temporary in the co_await: GCC 12 destroys such a
        // closure twice (a double free, found by AddressSanitizer).
        auto merge = [this, bytes = std::move(snapshot->bytes)]() mutable {
          return c_.caches.semantic().visit([&](auto& cache) { return insert_entries_of(cache, std::move(bytes)); });
        };
        if (c_.semantic) inserted = co_await detail::in_background(c_.background, std::move(merge));
      } catch (const std::exception& e) {
        c_.health.count_error();
        c_.log.event("shared_snapshot_unreadable", {{"replica", c_.replica}, {"error", e.what()}});
      }
      last_id_ = std::move(snapshot->id);
      c_.log.event("shared_resynced", {{"replica", c_.replica}, {"id", last_id_}, {"entries", inserted}});
    }
    synced_ = true;
  }

  // A snapshot keeps no float copy of its vectors: only a cache that
  // embeds itself can take its entries while serving.
  template <class Cache>
  std::size_t insert_entries_of(Cache& cache, std::string bytes) {
    if constexpr (std::is_same_v<Cache, gateway_remote_cache>) {
      c_.log.event("shared_snapshot_skipped", {{"replica", c_.replica}, {"why", "a remote embedder's entries cannot be "
                                                                                "embedded here; the stream goes on"}});
      return 0;
    } else {
      Cache loaded = load_like(std::move(bytes));
      std::size_t inserted = 0;
      loaded.for_each_entry(
          [&](const hash128& scope, std::string_view text, const cached_answer& answer, const answer_cost& cost) {
            inserted += cache.insert_replica(cache_key{scope, std::string(text)}, {}, answer, cost);
          });
      return inserted;
    }
  }

  // A hashing cache read from `bytes`, of which only the entries are used.
  gateway_hashing_cache load_like(std::string bytes) const {
    const auto& semantic = c_.config.semantic_cache;
    return gateway_hashing_cache::load_bytes(std::move(bytes), c_.snapshot, semantic_cache_options{},
                                             hashing_embedder({.dimension = semantic.embedder.dimension}),
                                             threshold_of(semantic.threshold), learned_verifier(), {},
                                             eviction_of(semantic.eviction, cache_clock{}),
                                             default_index_factory{semantic.hnsw});
  }

  stream_tailer_context c_;
  boost::asio::steady_timer pause_;  // on the tier's thread only
  std::string last_id_ = "0";
  bool synced_ = false;
  std::atomic<std::uint64_t> applied_changes_{0};
  std::atomic<double> replication_lag_ms_{0};
};

}  // namespace llmgate::inline v0
