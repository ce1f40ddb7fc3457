// redis_shared_tier: the shared tier (server/shared/shared_tier.hpp) on Redis or
// Redis Cluster, so that gateway replicas behind one load balancer serve
// what any of them paid for. Made by make_shared_tier, the factory a
// gateway is given as gateway_parts::shared.
//
// In Redis, under the config's prefix P:
//   P:{<scope>}:x:<key>  an exact answer ("SHEX", replication_message.hpp),
//                        with the exact cache's lifetime as PX; the scope in
//                        the hash tag keeps a scope's keys on one slot
//   P:{semantic}:stream  every replica's semantic changes: XADD * o <replica>
//                        k <i|f|e> b <"SHRM" payload>
//   P:{semantic}:snapshot  a hash: "bytes" (a semantic cache's save_bytes())
//                        and "id" (the last stream entry it holds)
//   P:{semantic}:lease   who writes the next snapshot (SET NX PX)
//
// Threads: the tier has an io_context and one thread running it, where its
// Redis clients live and its coroutines run: the writer (drains the write
// queue with pipelining), the tailer (XREAD BLOCK on a client of its own,
// so that no read waits behind it; applies the other replicas' changes) and
// the snapshotter; a second thread saves or merges whole snapshots, so that
// the first keeps reads to their timeout. The gateway's worker threads only
// push onto the write queue, and await find_exact, which hops onto the
// tier's thread and back.
// The semantic cache's observer runs under the cache's lock: it encodes
// and pushes, nothing more.
//
// Faults: while the store is away find_exact answers nullptr at once and
// writes wait in the bounded queue (the oldest dropped first); the writer
// retries with a backoff from 50 ms to 1 s and sends the backlog when the
// store answers again. A replica that finds the stream trimmed past the
// last change it applied (it was away while a snapshot was taken) reloads
// from the snapshot. A refused login or a failed TLS handshake at start
// throws: the gateway must not start; a store merely unreachable does not.
#pragma once

#include <algorithm>    // std::min, std::max, std::clamp
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::steady_clock, system_clock, milliseconds
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::snprintf
#include <exception>    // std::exception
#include <future>       // std::future
#include <memory>       // std::unique_ptr, std::make_shared, std::make_unique
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::jthread, std::this_thread::sleep_for
#include <type_traits>  // std::is_same_v, std::decay_t, std::invoke_result_t
#include <utility>      // std::move
#include <variant>      // std::visit
#include <vector>       // std::vector

#include <unistd.h>  // ::getpid (POSIX)

#include <boost/asio/as_tuple.hpp>             // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>            // boost::asio::awaitable
#include <boost/asio/co_spawn.hpp>             // boost::asio::co_spawn
#include <boost/asio/detached.hpp>             // boost::asio::detached
#include <boost/asio/executor_work_guard.hpp>  // boost::asio::executor_work_guard
#include <boost/asio/io_context.hpp>           // boost::asio::io_context
#include <boost/asio/ip/host_name.hpp>         // boost::asio::ip::host_name (the default replica name)
#include <boost/asio/post.hpp>                 // boost::asio::post
#include <boost/asio/steady_timer.hpp>         // boost::asio::steady_timer
#include <boost/asio/thread_pool.hpp>          // boost::asio::thread_pool (heavy cache work)
#include <boost/asio/use_awaitable.hpp>        // boost::asio::use_awaitable
#include <boost/asio/use_future.hpp>           // boost::asio::use_future

#include "llmgate/cache/exact_cache.hpp"                  // exact_key
#include "llmgate/cache/index_factory.hpp"                // default_index_factory
#include "llmgate/cache/key_policy.hpp"                   // cache_key
#include "llmgate/cache/learned_verifier.hpp"             // learned_verifier
#include "llmgate/cache/semantic_cache.hpp"               // answer_cost, semantic_cache_options
#include "llmgate/cache/semantic_cache_observer.hpp"      // semantic_cache_observer
#include "llmgate/embed/hashing_embedder.hpp"             // hashing_embedder
#include "llmgate/error.hpp"                              // llmgate::error, errc
#include "llmgate/pipeline/cached_answer.hpp"             // cached_answer
#include "llmgate/redis/client.hpp"                       // redis::client, redis::client_options
#include "llmgate/server/shared/replication_message.hpp"  // encode_/decode_exact, encode_/decode_change, stream_id
#include "llmgate/redis/reply.hpp"                        // redis::reply, redis::command, redis::endpoint
#include "llmgate/server/shared/write_queue.hpp"          // write_queue
#include "llmgate/server/caches/cache_policies.hpp"       // eviction_of, threshold_of, cache_clock
#include "llmgate/server/gateway_config.hpp"              // gateway_config, shared_config
#include "llmgate/server/operations/request_log.hpp"      // request_log
#include "llmgate/server/caches/semantic_tier.hpp"        // gateway_remote_cache, gateway_hashing_cache
#include "llmgate/server/shared/shared_tier.hpp"          // shared_tier, shared_tier_context, shared_tier_statistics
#include "llmgate/server/caches/gateway_caches.hpp"       // gateway_caches

namespace llmgate::inline v0 {

/// The Redis key an exact answer is stored under: the scope in the hash
/// tag, so that a scope's answers share a cluster slot.
inline std::string exact_key_name(std::string_view prefix, const exact_key& key) {
  const auto hex = [](const hash128& h) {
    char text[33];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high),
                  static_cast<unsigned long long>(h.low));
    return std::string(text);
  };
  return std::string(prefix) + ":{" + hex(key.scope) + "}:x:" + hex(key.hash);
}

/// The redis::client options a "shared" config section asks for.
inline redis::client_options client_options_of(const shared_config& shared) {
  const auto& r = shared.redis;
  redis::client_options options;
  for (const auto& text : r.endpoints) {
    const auto host_port = llmgate::detail::host_and_port(text);  // gateway_config::check refused any other form
    if (!host_port) throw error(errc::invalid_request, "shared.redis.endpoints: \"" + text + "\" is not host:port");
    options.endpoints.push_back({host_port->first, host_port->second});
  }
  options.user = r.user;
  options.password = r.password;
  options.database = r.database;
  options.tls = {.enabled = r.tls, .ca_file = r.tls_ca_file, .cert_file = r.tls_cert_file,
                 .key_file = r.tls_key_file, .server_name = r.tls_server_name, .verify = r.tls_verify};
  options.connect_timeout = std::chrono::milliseconds(r.connect_timeout_ms);
  options.command_timeout = std::chrono::milliseconds(r.command_timeout_ms);
  options.connections_per_node = std::max(1u, r.connections);
  return options;
}

class redis_shared_tier final : public shared_tier, private semantic_cache_observer<cached_answer> {
 public:
  /// Connects (within the config's connect timeout) and, when the store
  /// holds a semantic snapshot, puts it in the gateway's semantic cache:
  /// call before the gateway serves. Throws llmgate::error when the store
  /// refuses the login or the TLS handshake fails, or when the config has
  /// no "shared" section; an unreachable store only starts the tier away.
  explicit redis_shared_tier(const shared_tier_context& context)
      : config_(context.config), shared_(shared_section(context.config)), caches_(context.caches),
        log_(context.log), replica_(shared_.replica.empty() ? generated_replica_name() : shared_.replica),
        stream_(shared_.prefix + ":{semantic}:stream"), snapshot_(shared_.prefix + ":{semantic}:snapshot"),
        lease_(shared_.prefix + ":{semantic}:lease"), read_timeout_(shared_.read_timeout_ms),
        tail_block_(std::clamp<unsigned>(shared_.redis.command_timeout_ms / 2, 1, 1000)),
        exact_lifetime_ms_(lifetime_ms(config_.exact_cache.eviction.ttl_seconds)),
        remote_vectors_(caches_.semantic().remote() != nullptr),
        commands_(io_.get_executor(), client_options_of(shared_)),
        tail_commands_(io_.get_executor(), tail_options(client_options_of(shared_))), writes_(shared_.max_queued_writes),
        wake_writer_(io_), writer_pause_(io_), tailer_pause_(io_), snapshot_pause_(io_),
        thread_([this] { io_.run(); }) {
    try {
      std::optional<std::string> snapshot =
          boost::asio::co_spawn(io_, connect_at_start(), boost::asio::use_future).get();
      if (snapshot) adopt(std::move(*snapshot));
      if (semantic()) caches_.semantic().observe(this);
      boost::asio::co_spawn(io_, write_until_stopped(), boost::asio::detached);
    } catch (...) {
      shut_down();
      throw;
    }
  }

  ~redis_shared_tier() override { stop(std::chrono::milliseconds(0)); }

  redis_shared_tier(const redis_shared_tier&) = delete;
  redis_shared_tier& operator=(const redis_shared_tier&) = delete;

  boost::asio::awaitable<cached_answer> find_exact(const exact_key& key) override {
    if (!shared_.exact || stopping_.load() || !available_.load()) {
      ++exact_misses_;
      co_return nullptr;
    }
    std::optional<std::string> bytes =
        co_await boost::asio::co_spawn(io_, read_bounded(exact_name(key)), boost::asio::use_awaitable);
    if (bytes) {
      std::error_code ec;
      std::optional<exact_value> value = decode_exact(std::move(*bytes), ec);
      if (ec) ++errors_;  // a value no replica of this version wrote: a miss, never a crash
      if (value && value->answers(key) && value->answer) {
        ++exact_hits_;
        co_return std::move(value->answer);
      }
    }
    ++exact_misses_;
    co_return nullptr;
  }

  void store_exact(const exact_key& key, const cached_answer& answer) override {
    if (!shared_.exact || !answer || stopping_.load()) return;
    redis::command set = {"SET", exact_name(key), encode_exact(key, answer)};
    if (exact_lifetime_ms_ > 0) set.insert(set.end(), {"PX", std::to_string(exact_lifetime_ms_)});
    enqueue(std::move(set));
  }

  /// Deletes the answer from the store and announces it on the stream, so
  /// that the other replicas drop the copies their local exact caches hold.
  void erase_exact(const exact_key& key) override {
    if (!shared_.exact || stopping_.load()) return;
    enqueue({"DEL", exact_name(key)});
    queue_change(replicated_exact_erase{key.hash, key.scope, key.tenant, key.text});
  }

  void start() override {
    if (!tails() || started_.exchange(true)) return;
    boost::asio::co_spawn(io_, tail_until_stopped(), boost::asio::detached);
    if (shared_.snapshot_interval_s > 0) boost::asio::co_spawn(io_, snapshot_every_interval(), boost::asio::detached);
  }

  void stop(std::chrono::milliseconds flush) override {
    if (stopping_.load()) return;
    if (semantic()) caches_.semantic().observe(nullptr);  // nothing more is queued from the cache
    // What is queued goes out while the store answers, for at most `flush`.
    const auto deadline = std::chrono::steady_clock::now() + flush;
    while (available_.load() && queued() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    shut_down();
  }

  shared_tier_statistics statistics() const override {
    shared_tier_statistics s;
    s.available = available_.load();
    {
      std::lock_guard lock(detail_mutex_);
      if (!s.available) s.detail = detail_;
    }
    s.round_trips = round_trips_.load();
    s.errors = errors_.load();
    s.exact_hits = exact_hits_.load();
    s.exact_misses = exact_misses_.load();
    s.queued_writes = queued();
    s.dropped_writes = writes_.dropped();
    s.applied_changes = applied_changes_.load();
    s.replication_lag_ms = replication_lag_ms_.load();
    return s;
  }

  /// Writes a semantic snapshot now if this replica wins the lease (what it
  /// queued sent first), then trims the stream to it; returns whether it
  /// did. What the snapshotter does every snapshot_interval_s.
  bool snapshot_now() {
    if (stopping_.load()) return false;
    return boost::asio::co_spawn(io_, snapshot_if_leased(), boost::asio::use_future).get();
  }

  /// The name this replica's changes carry on the stream.
  const std::string& replica() const noexcept { return replica_; }

 private:
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t batch_size = 512;
  static constexpr std::chrono::milliseconds first_backoff{50}, last_backoff{1000};
  // Applying a change takes the cache's lock and may embed: the tailer
  // yields its thread every few changes, so that reads keep their timeout.
  static constexpr int changes_between_yields = 16;

  static const shared_config& shared_section(const gateway_config& config) {
    if (!config.shared) throw error(errc::invalid_request, "shared tier: the config has no \"shared\" section");
    return *config.shared;
  }

  // The config's default: host name and process id.
  static std::string generated_replica_name() { return boost::asio::ip::host_name() + '-' + std::to_string(::getpid()); }

  static std::uint64_t lifetime_ms(double ttl_seconds) {
    if (ttl_seconds <= 0) return 0;
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ttl_seconds * 1000.0 + 0.5));
  }

  // The tailer's client holds one connection: XREAD BLOCK keeps it busy.
  static redis::client_options tail_options(redis::client_options options) {
    options.connections_per_node = 1;
    return options;
  }

  bool semantic() const noexcept { return shared_.semantic && config_.semantic_cache.enabled; }
  // The stream carries semantic changes and exact erasures.
  bool tails() const noexcept { return semantic() || shared_.exact; }

  std::string exact_name(const exact_key& key) const { return exact_key_name(shared_.prefix, key); }

  // --- the store's health -------------------------------------------------

  void store_answered(std::uint64_t commands) {
    round_trips_ += commands;
    if (!available_.exchange(true)) log_.event("shared_store_available", {{"replica", replica_}});
  }

  // On the tier's thread. An outage wakes the writer, which probes the
  // store until it answers again even when there is nothing to write. A
  // store that answered with an error is not away.
  void store_failed(std::uint64_t commands, const std::exception& e) {
    errors_ += commands;
    if (!outage(e)) {
      log_.event("shared_store_error", {{"replica", replica_}, {"error", e.what()}});
      return;
    }
    {
      std::lock_guard lock(detail_mutex_);
      detail_ = e.what();
    }
    if (available_.exchange(false)) {
      log_.event("shared_store_unavailable", {{"replica", replica_}, {"error", e.what()}});
      wake_writer_.cancel();
    }
  }

  static bool outage(const std::exception& e) {
    const auto* failure = dynamic_cast<const error*>(&e);
    return !failure || failure->code() == errc::store_unreachable || failure->code() == errc::store_timeout;
  }

  // A refused login or a failed handshake will not mend by retrying.
  static bool refused_for_good(const std::exception& e) {
    const std::string_view what = e.what();
    return what.find("AUTH refused") != std::string_view::npos ||
           what.find("login required") != std::string_view::npos ||
           what.find("TLS handshake failed") != std::string_view::npos;
  }

  // --- start --------------------------------------------------------------

  // Connects both clients; returns the semantic snapshot's bytes when there
  // is one to adopt before serving. A store that cannot be reached leaves
  // the tier away (the writer and the tailer keep trying).
  boost::asio::awaitable<std::optional<std::string>> connect_at_start() {
    std::optional<std::string> bytes;
    try {
      co_await commands_.connect();
      if (tails()) co_await tail_commands_.connect();
      store_answered(0);
      if (semantic()) {
        std::optional<snapshot_entry> snapshot = co_await read_snapshot();
        if (snapshot) {
          last_id_ = std::move(snapshot->id);
          bytes = std::move(snapshot->bytes);
        }
        synced_ = true;  // from the snapshot's id, or from the stream's start
      }
    } catch (const std::exception& e) {
      if (refused_for_good(e)) throw;
      store_failed(0, e);
    }
    co_return bytes;
  }

  // Before serving: the snapshot becomes the semantic cache. One that
  // cannot be read is logged and the stream is read from its start.
  void adopt(std::string bytes) {
    try {
      const std::size_t size = bytes.size();
      caches_.adopt_semantic_snapshot(std::move(bytes), snapshot_ + " (id " + last_id_ + ")");
      log_.event("shared_snapshot_adopted", {{"replica", replica_}, {"id", last_id_}, {"bytes", size},
                                             {"entries", caches_.semantic().size()}});
    } catch (const std::exception& e) {
      ++errors_;
      log_.event("shared_snapshot_unreadable", {{"replica", replica_}, {"error", e.what()}});
      last_id_ = "0";
    }
  }

  // --- exact reads ----------------------------------------------------------

  struct pending_read {
    explicit pending_read(boost::asio::io_context& io) : deadline(io) {}
    boost::asio::steady_timer deadline;
    std::optional<std::string> value;
    bool done = false;
  };

  // GET `name`, waiting at most the read timeout: the GET itself is not
  // cancelled (its reply is still read, in order, by the client), only no
  // longer waited for. nullopt: none, an error, or too late.
  boost::asio::awaitable<std::optional<std::string>> read_bounded(std::string name) {
    auto pending = std::make_shared<pending_read>(io_);
    pending->deadline.expires_after(read_timeout_);
    boost::asio::co_spawn(
        io_,
        [this, pending, name = std::move(name)]() -> boost::asio::awaitable<void> {
          try {
            redis::command get = {"GET", name};  // not inside the co_await: GCC 12 miscompiles a braced list there
            redis::reply found = co_await commands_.exec(std::move(get));
            store_answered(1);
            if (found.is_string()) pending->value = std::move(found.text);
          } catch (const std::exception& e) {
            store_failed(1, e);
          }
          pending->done = true;
          pending->deadline.cancel();
        },
        boost::asio::detached);
    co_await pending->deadline.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!pending->done) {
      ++errors_;  // too slow: a miss for this request; the store is not taken for away
      co_return std::nullopt;
    }
    co_return std::move(pending->value);
  }

  // --- writes -----------------------------------------------------------------

  std::uint64_t queued() const { return writes_.size(); }

  void enqueue(redis::command write) {
    if (writes_.push(std::move(write)))  // the writer may be waiting for one
      boost::asio::post(io_, [this] { wake_writer_.cancel(); });
  }

  // Called with the semantic cache's lock held: encodes and queues only.
  void inserted(const hash128& scope, std::string_view text, std::span<const float> vector,
                const cached_answer& answer, const answer_cost& cost) override {
    if (!answer) return;
    replicated_insert insert{.scope = scope, .text = std::string(text), .answer = answer, .cost = cost};
    // A learning embedder's weights differ per replica: each embeds the
    // text itself. A remote embedder's vector is the same everywhere.
    if (remote_vectors_) insert.vector.assign(vector.begin(), vector.end());
    queue_change(insert);
  }
  void evicted(const hash128& scope, std::string_view text) override {
    queue_change(replicated_eviction{scope, std::string(text)});
  }
  void told(const hash128& scope, std::string_view request_text, std::string_view stored_text, float similarity,
            float probability, bool correct) override {
    queue_change(replicated_feedback{scope, std::string(request_text), std::string(stored_text), similarity,
                                     probability, correct});
  }

  void queue_change(const semantic_change& change) {
    enqueue({"XADD", stream_, "*", "o", replica_, "k", std::string(1, change_letter(change)), "b",
           encode_change(change)});
  }

  // Drains the queue in pipelined batches until stopped; on failure gives
  // the batch back, marks the store away and retries after a backoff.
  boost::asio::awaitable<void> write_until_stopped() {
    auto backoff = first_backoff;
    while (!stopping_.load()) {
      std::vector<redis::command> batch = writes_.pop(batch_size);
      const bool probe = batch.empty() && !available_.load();
      if (batch.empty() && !probe) {
        wake_writer_.expires_at(clock::time_point::max());
        co_await wake_writer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        continue;
      }
      if (probe) batch.push_back({"PING"});  // nothing to send, but the store is away: is it back?
      const std::size_t taken = probe ? 0 : batch.size();
      std::vector<redis::command> unsent = co_await send(std::move(batch));
      const bool failed = !unsent.empty();
      if (!probe) {
        writes_.sent(taken - unsent.size());
        if (failed) writes_.give_back(std::move(unsent));
      }
      if (!failed) {
        backoff = first_backoff;
        continue;
      }
      writer_pause_.expires_after(backoff);
      co_await writer_pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      backoff = std::min(backoff * 2, last_backoff);
    }
  }

  // The part of a command's key that picks its cluster slot: the hash tag.
  static std::string_view slot_tag(const redis::command& c) {
    if (c.size() < 2) return {};
    const std::string_view key = c[1];
    const auto open = key.find('{');
    const auto close = open == std::string_view::npos ? open : key.find('}', open + 1);
    return close == std::string_view::npos || close == open + 1 ? key : key.substr(open + 1, close - open - 1);
  }

  // Sends `batch` as one pipeline per slot (a cluster serves a pipeline on
  // one node); returns what could not be sent, in order.
  boost::asio::awaitable<std::vector<redis::command>> send(std::vector<redis::command> batch) {
    std::vector<std::vector<redis::command>> groups;
    if (commands_.cluster()) {
      std::vector<std::string> tags;  // copies: the commands move into their groups
      for (redis::command& c : batch) {
        std::string tag(slot_tag(c));
        const auto found = std::find(tags.begin(), tags.end(), tag);
        const auto group = static_cast<std::size_t>(found - tags.begin());
        if (found == tags.end()) {
          tags.push_back(std::move(tag));
          groups.emplace_back();
        }
        groups[group].push_back(std::move(c));
      }
    } else {
      groups.push_back(std::move(batch));
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::size_t commands = groups[g].size();
      try {
        const std::string routing = groups[g].front().size() > 1 ? groups[g].front()[1] : std::string();
        const std::vector<redis::reply> replies = co_await commands_.exec_pipeline(groups[g], routing);
        store_answered(commands);
        for (const redis::reply& r : replies)
          if (r.is_error()) ++errors_;  // the store refused this write (out of memory, say): not retried
      } catch (const std::exception& e) {
        store_failed(commands, e);
        std::vector<redis::command> unsent;
        for (std::size_t rest = g; rest < groups.size(); ++rest)
          for (redis::command& c : groups[rest]) unsent.push_back(std::move(c));
        co_return unsent;
      }
    }
    co_return std::vector<redis::command>{};
  }

  // --- the tailer -------------------------------------------------------------

  struct snapshot_entry {
    std::string id;
    std::string bytes;
  };

  boost::asio::awaitable<std::optional<snapshot_entry>> read_snapshot() {
    redis::command get = {"HMGET", snapshot_, "id", "bytes"};
    const redis::reply found = co_await commands_.exec(std::move(get));
    store_answered(1);
    if (!found.is_array() || found.elements.size() != 2 || !found.elements[0].is_string() ||
        !found.elements[1].is_string() || !stream_id::parse(found.elements[0].text))
      co_return std::nullopt;
    co_return snapshot_entry{found.elements[0].text, found.elements[1].text};
  }

  boost::asio::awaitable<void> tail_until_stopped() {
    auto backoff = first_backoff;
    while (!stopping_.load()) {
      bool failed = false;
      try {
        if (!synced_) co_await resync();
        co_await read_and_apply();
        backoff = first_backoff;
      } catch (const std::exception& e) {
        failed = !stopping_.load();
        if (failed) store_failed(1, e);
      }
      if (!failed) continue;
      tailer_pause_.expires_after(backoff);
      co_await tailer_pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      backoff = std::min(backoff * 2, last_backoff);
    }
  }

  // One XREAD BLOCK; then, when a snapshot newer than where it read from
  // exists, whether the stream lost entries after that point (a trim while
  // this replica was behind or away): if so, resync instead of applying.
  boost::asio::awaitable<void> read_and_apply() {
    const std::string from = last_id_;
    std::vector<redis::command> read = {{"XREAD", "COUNT", std::to_string(batch_size), "BLOCK",
                                  std::to_string(tail_block_.count()), "STREAMS", stream_, from},
                                 {"HGET", snapshot_, "id"}};
    std::vector<redis::reply> replies = co_await tail_commands_.exec_pipeline(std::move(read), stream_);
    store_answered(2);
    if (replies.size() != 2 || replies[0].is_error())
      throw error(errc::store_error, "redis: XREAD " + stream_ + ": " + (replies.empty() ? "" : replies[0].text));
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
    redis::command first = {"XRANGE", stream_, "-", "+", "COUNT", "1"};
    const redis::reply found = co_await commands_.exec(std::move(first));
    store_answered(1);
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
        if (stopping_.load()) co_return;
        if (!entry.is_array() || entry.elements.size() != 2 || !entry.elements[0].is_string()) continue;
        last_id_ = entry.elements[0].text;
        const redis::reply& fields = entry.elements[1];
        const redis::reply* origin = nullptr;
        const redis::reply* payload = nullptr;
        for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
          if (fields.elements[i].text == "o") origin = &fields.elements[i + 1];
          else if (fields.elements[i].text == "b") payload = &fields.elements[i + 1];
        }
        if (origin && origin->text == replica_) continue;  // this replica's own change
        if (!payload || !apply(payload->text)) {
          ++errors_;
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
          co_await boost::asio::post(io_, boost::asio::use_awaitable);
        }
      }
    }
  }

  // Applies one change's payload to the semantic cache; false when it
  // cannot be read or does not fit this cache (another dimension).
  bool apply(std::string bytes) {
    std::error_code ec;
    std::optional<semantic_change> change = decode_change(std::move(bytes), ec);
    if (!change) return false;
    if (const auto* erase = std::get_if<replicated_exact_erase>(&*change)) {
      (void)caches_.exact().erase(exact_key{erase->hash, erase->scope, erase->tenant, erase->text});
      return true;  // false from erase: this replica held no copy
    }
    if (!semantic()) return true;  // another replica's semantic change: not shared here
    try {
      return caches_.semantic().visit([&](auto& cache) { return apply_to(cache, std::move(*change)); });
    } catch (const std::exception& e) {  // out of memory, say: this change is lost here, the tier goes on
      log_.event("shared_change_failed", {{"replica", replica_}, {"error", e.what()}});
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
          return caches_.semantic().visit([&](auto& cache) { return insert_entries_of(cache, std::move(bytes)); });
        };
        if (semantic()) inserted = co_await in_background(std::move(merge));
      } catch (const std::exception& e) {
        ++errors_;
        log_.event("shared_snapshot_unreadable", {{"replica", replica_}, {"error", e.what()}});
      }
      last_id_ = std::move(snapshot->id);
      log_.event("shared_resynced", {{"replica", replica_}, {"id", last_id_}, {"entries", inserted}});
    }
    synced_ = true;
  }

  // A snapshot keeps no float copy of its vectors: only a cache that
  // embeds itself can take its entries while serving.
  template <class Cache>
  std::size_t insert_entries_of(Cache& cache, std::string bytes) {
    if constexpr (std::is_same_v<Cache, gateway_remote_cache>) {
      log_.event("shared_snapshot_skipped", {{"replica", replica_}, {"why", "a remote embedder's entries cannot be "
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
    return gateway_hashing_cache::load_bytes(std::move(bytes), snapshot_, semantic_cache_options{},
                                             hashing_embedder({.dimension = config_.semantic_cache.embedder.dimension}),
                                             threshold_of(config_.semantic_cache.threshold),
                                             learned_verifier(), {}, eviction_of(config_.semantic_cache.eviction, cache_clock{}),
                                             default_index_factory{config_.semantic_cache.hnsw});
  }

  // --- snapshots --------------------------------------------------------------

  boost::asio::awaitable<void> snapshot_every_interval() {
    while (!stopping_.load()) {
      snapshot_pause_.expires_after(std::chrono::seconds(shared_.snapshot_interval_s));
      co_await snapshot_pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      if (!stopping_.load()) co_await snapshot_if_leased();
    }
  }

  boost::asio::awaitable<bool> snapshot_if_leased() {
    if (!semantic() || !synced_ || !available_.load()) co_return false;
    try {
      if (!co_await take_lease()) co_return false;
      // Everything this replica changed is on the stream before the
      // snapshot that holds it is taken.
      const auto deadline = clock::now() + std::chrono::milliseconds(shared_.redis.command_timeout_ms);
      boost::asio::steady_timer pause(io_);
      while (queued() > 0 && available_.load() && clock::now() < deadline) {
        pause.expires_after(std::chrono::milliseconds(1));
        co_await pause.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      // Changes applied while it is saved may be in it too: the stream
      // after `id` gives them again, and applying one twice changes nothing.
      const std::string id = last_id_;
      auto save = [this] { return caches_.semantic().visit([](const auto& cache) { return cache.save_bytes(); }); };
      std::string bytes = co_await in_background(save);
      const std::size_t size = bytes.size();
      std::vector<redis::command> commands = {{"HSET", snapshot_, "id", id, "bytes", std::move(bytes)}};
      if (id != "0") commands.push_back({"XTRIM", stream_, "MINID", id});
      const std::vector<redis::reply> replies = co_await commands_.exec_pipeline(std::move(commands), snapshot_);
      store_answered(replies.size());
      for (const redis::reply& r : replies)
        if (r.is_error()) throw error(errc::store_error, "redis: snapshot: " + r.text);
      log_.event("shared_snapshot_saved", {{"replica", replica_}, {"id", id}, {"bytes", size}});
      co_return true;
    } catch (const std::exception& e) {
      store_failed(1, e);
      co_return false;
    }
  }

  // The lease is this replica's when it takes it, or already holds it.
  boost::asio::awaitable<bool> take_lease() {
    const std::string lifetime = std::to_string(std::max(1u, shared_.snapshot_interval_s) * 2000);
    std::vector<redis::command> take = {{"SET", lease_, replica_, "NX", "PX", lifetime}, {"GET", lease_}};
    const std::vector<redis::reply> replies = co_await commands_.exec_pipeline(std::move(take), lease_);
    store_answered(2);
    if (replies.size() != 2 || replies[1].text != replica_) co_return false;
    if (replies[0].is_nil()) {  // held already: by this replica, so renewed
      redis::command renew = {"PEXPIRE", lease_, lifetime};
      (void)co_await commands_.exec(std::move(renew));
      store_answered(1);
    }
    co_return true;
  }

  // Runs `work` (a cache's whole snapshot saved or merged) on the
  // background thread, so that the tier's thread keeps reads to their timeout.
  template <class Work>
  boost::asio::awaitable<std::invoke_result_t<Work&>> in_background(Work work) {
    return boost::asio::co_spawn(
        background_,
        [work = std::move(work)]() mutable -> boost::asio::awaitable<std::invoke_result_t<Work&>> { co_return work(); },
        boost::asio::use_awaitable);
  }

  // --- stopping -----------------------------------------------------------------

  // Ends every coroutine (each checks stopping_ after its wait), closes the
  // clients on their thread and joins it once nothing is left to run.
  void shut_down() {
    stopping_ = true;
    boost::asio::post(io_, [this] {
      wake_writer_.cancel();
      writer_pause_.cancel();
      tailer_pause_.cancel();
      snapshot_pause_.cancel();
      commands_.close();
      tail_commands_.close();
    });
    work_.reset();
    if (thread_.joinable()) thread_.join();
    background_.join();
  }

  const gateway_config& config_;
  const shared_config& shared_;
  gateway_caches& caches_;
  request_log& log_;
  const std::string replica_;
  const std::string stream_, snapshot_, lease_;
  const std::chrono::milliseconds read_timeout_;
  const std::chrono::milliseconds tail_block_;  // shorter than a command's timeout
  const std::uint64_t exact_lifetime_ms_;       // 0: exact answers never expire
  const bool remote_vectors_;                   // the semantic cache's vectors come from a remote embedder

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  redis::client commands_;
  redis::client tail_commands_;
  write_queue<redis::command> writes_;

  // On the tier's thread only.
  boost::asio::steady_timer wake_writer_, writer_pause_, tailer_pause_, snapshot_pause_;
  std::string last_id_ = "0";  // the last stream entry applied (or skipped as this replica's own)
  bool synced_ = false;        // the semantic cache holds the snapshot, or the stream from its start

  std::atomic<bool> available_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  mutable std::mutex detail_mutex_;
  std::string detail_ = "not connected yet";
  std::atomic<std::uint64_t> round_trips_{0}, errors_{0}, exact_hits_{0}, exact_misses_{0}, applied_changes_{0};
  std::atomic<double> replication_lag_ms_{0};

  boost::asio::thread_pool background_{1};
  std::jthread thread_;  // last: runs io_ once everything it touches exists
};

/// The shared_tier_factory for gateway_parts::shared.
inline std::unique_ptr<shared_tier> make_shared_tier(const shared_tier_context& context) {
  return std::make_unique<redis_shared_tier>(context);
}

}  // namespace llmgate::inline v0
