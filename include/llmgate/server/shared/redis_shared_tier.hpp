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
// Redis clients live and its parts run as coroutines: the writer
// (tier_writer.hpp: drains the write queue with pipelining), the tailer
// (stream_tailer.hpp: XREAD BLOCK on a client of its own, so that no read
// waits behind it; applies the other replicas' changes) and the snapshotter
// (here, when this replica holds the snapshot lease: snapshot_lease.hpp)
// and the spending sync (spending_sync.hpp: the tenants' spending added up);
// all report to one store_health. A second thread saves or merges whole
// snapshots, so that the first keeps reads to their timeout. The gateway's
// worker threads only push onto the write queue, and await find_exact,
// which hops onto the tier's thread and back.
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

#include <algorithm>    // std::max, std::clamp
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <memory>       // std::unique_ptr, std::make_shared, std::make_unique
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::jthread, std::this_thread::sleep_for
#include <utility>      // std::move
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
#include "llmgate/cache/semantic_cache.hpp"               // answer_cost
#include "llmgate/cache/semantic_cache_observer.hpp"      // semantic_cache_observer
#include "llmgate/error.hpp"                              // llmgate::error, errc
#include "llmgate/pipeline/cached_answer.hpp"             // cached_answer
#include "llmgate/redis/client.hpp"                       // redis::client, redis::client_options
#include "llmgate/redis/reply.hpp"                        // redis::reply, redis::command, redis::endpoint
#include "llmgate/server/caches/gateway_caches.hpp"       // gateway_caches
#include "llmgate/server/gateway_config.hpp"              // gateway_config, shared_config
#include "llmgate/server/operations/request_log.hpp"      // request_log
#include "llmgate/server/shared/replication_message.hpp"  // encode_/decode_exact, encode_change, replicated_*
#include "llmgate/server/shared/shared_tier.hpp"          // shared_tier, shared_tier_context, shared_tier_statistics
#include "llmgate/server/shared/snapshot_lease.hpp"       // snapshot_lease
#include "llmgate/server/shared/spending_sync.hpp"        // spending_sync
#include "llmgate/server/shared/store_health.hpp"         // store_health
#include "llmgate/server/shared/stream_tailer.hpp"        // stream_tailer, detail::in_background
#include "llmgate/server/shared/tier_writer.hpp"          // tier_writer

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
        read_timeout_(shared_.read_timeout_ms), exact_lifetime_ms_(lifetime_ms(config_.exact_cache.eviction.ttl_seconds)),
        remote_vectors_(caches_.semantic().remote() != nullptr),
        commands_(io_.get_executor(), client_options_of(shared_)),
        tail_commands_(io_.get_executor(), tail_options(client_options_of(shared_))),
        health_(log_, replica_, [this] { writer_.wake(); }),
        writer_(io_, commands_, health_, stopping_, shared_.max_queued_writes),
        lease_(shared_.prefix + ":{semantic}:lease", replica_, shared_.snapshot_interval_s),
        tailer_({.io = io_, .background = background_, .tail = tail_commands_, .commands = commands_,
                 .health = health_, .stopping = stopping_, .config = config_, .caches = caches_, .log = log_,
                 .replica = replica_, .stream = stream_, .snapshot = snapshot_,
                 .block = std::chrono::milliseconds(std::clamp<unsigned>(shared_.redis.command_timeout_ms / 2, 1, 1000)),
                 .semantic = semantic()}),
        spending_(io_, commands_, health_, stopping_, context.spending, shared_.prefix, replica_,
                  std::chrono::milliseconds(shared_.spending_sync_ms)),
        syncs_spending_(!context.spending.empty()), snapshot_pause_(io_), thread_([this] { io_.run(); }) {
    try {
      std::optional<std::string> snapshot =
          boost::asio::co_spawn(io_, connect_at_start(), boost::asio::use_future).get();
      if (snapshot) adopt(std::move(*snapshot));
      if (semantic()) caches_.semantic().observe(this);
      if (syncs_spending_) context.spending.share_as(replica_);
      boost::asio::co_spawn(io_, writer_.run(), boost::asio::detached);
    } catch (...) {
      shut_down();
      throw;
    }
  }

  ~redis_shared_tier() override { stop(std::chrono::milliseconds(0)); }

  redis_shared_tier(const redis_shared_tier&) = delete;
  redis_shared_tier& operator=(const redis_shared_tier&) = delete;

  boost::asio::awaitable<cached_answer> find_exact(const exact_key& key) override {
    if (!shared_.exact || stopping_.load() || !health_.available()) {
      ++exact_misses_;
      co_return nullptr;
    }
    std::optional<std::string> bytes =
        co_await boost::asio::co_spawn(io_, read_bounded(exact_name(key)), boost::asio::use_awaitable);
    if (bytes) {
      std::error_code ec;
      std::optional<exact_value> value = decode_exact(std::move(*bytes), ec);
      if (ec) health_.count_error();  // a value no replica of this version wrote: a miss, never a crash
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
    writer_.push(std::move(set));
  }

  /// Deletes the answer from the store and announces it on the stream, so
  /// that the other replicas drop the copies their local exact caches hold.
  void erase_exact(const exact_key& key) override {
    if (!shared_.exact || stopping_.load()) return;
    writer_.push({"DEL", exact_name(key)});
    queue_change(replicated_exact_erase{key.hash, key.scope, key.tenant, key.text});
  }

  void start() override {
    if (started_.exchange(true)) return;
    if (syncs_spending_) boost::asio::co_spawn(io_, spending_.run(), boost::asio::detached);
    if (!tails()) return;
    boost::asio::co_spawn(io_, tailer_.run(), boost::asio::detached);
    if (shared_.snapshot_interval_s > 0) boost::asio::co_spawn(io_, snapshot_every_interval(), boost::asio::detached);
  }

  void stop(std::chrono::milliseconds flush) override {
    if (stopping_.load()) return;
    if (semantic()) caches_.semantic().observe(nullptr);  // nothing more is queued from the cache
    // What is queued goes out while the store answers, for at most `flush`.
    const auto deadline = std::chrono::steady_clock::now() + flush;
    while (health_.available() && writer_.queued() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // So is this replica's spending since the last sync.
    if (syncs_spending_ && started_.load() && health_.available())
      boost::asio::co_spawn(io_, spending_.sync_once(), boost::asio::use_future).wait_until(deadline);
    shut_down();
  }

  shared_tier_statistics statistics() const override {
    shared_tier_statistics s;
    s.available = health_.available();
    s.detail = health_.detail();
    s.round_trips = health_.round_trips();
    s.errors = health_.errors();
    s.exact_hits = exact_hits_.load();
    s.exact_misses = exact_misses_.load();
    s.queued_writes = writer_.queued();
    s.dropped_writes = writer_.dropped();
    s.applied_changes = tailer_.applied_changes();
    s.replication_lag_ms = tailer_.replication_lag_ms();
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

  // --- start --------------------------------------------------------------

  // Connects both clients; returns the semantic snapshot's bytes when there
  // is one to adopt before serving. A store that cannot be reached leaves
  // the tier away (the writer and the tailer keep trying).
  boost::asio::awaitable<std::optional<std::string>> connect_at_start() {
    std::optional<std::string> bytes;
    try {
      co_await commands_.connect();
      if (tails()) co_await tail_commands_.connect();
      health_.answered(0);
      if (semantic()) {
        std::optional<stream_tailer::snapshot_entry> snapshot = co_await tailer_.read_snapshot();
        // From the snapshot's id, or from the stream's start.
        tailer_.read_from(snapshot ? std::move(snapshot->id) : std::string("0"), true);
        if (snapshot) bytes = std::move(snapshot->bytes);
      }
    } catch (const std::exception& e) {
      if (store_health::refused_for_good(e)) throw;
      health_.failed(0, e);
    }
    co_return bytes;
  }

  // Before serving: the snapshot becomes the semantic cache. One that
  // cannot be read is logged and the stream is read from its start.
  void adopt(std::string bytes) {
    const std::string id = tailer_.last_id();
    try {
      const std::size_t size = bytes.size();
      caches_.adopt_semantic_snapshot(std::move(bytes), snapshot_ + " (id " + id + ")");
      log_.event("shared_snapshot_adopted", {{"replica", replica_}, {"id", id}, {"bytes", size},
                                             {"entries", caches_.semantic().size()}});
    } catch (const std::exception& e) {
      health_.count_error();
      log_.event("shared_snapshot_unreadable", {{"replica", replica_}, {"error", e.what()}});
      tailer_.read_from("0", true);
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
            health_.answered(1);
            if (found.is_string()) pending->value = std::move(found.text);
          } catch (const std::exception& e) {
            health_.failed(1, e);
          }
          pending->done = true;
          pending->deadline.cancel();
        },
        boost::asio::detached);
    co_await pending->deadline.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!pending->done) {
      health_.count_error();  // too slow: a miss for this request; the store is not taken for away
      co_return std::nullopt;
    }
    co_return std::move(pending->value);
  }

  // --- the semantic cache's changes -------------------------------------------

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
    writer_.push({"XADD", stream_, "*", "o", replica_, "k", std::string(1, change_letter(change)), "b",
                  encode_change(change)});
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
    if (!semantic() || !tailer_.synced() || !health_.available()) co_return false;
    try {
      if (!co_await lease_.take(commands_, health_)) co_return false;
      // Everything this replica changed is on the stream before the
      // snapshot that holds it is taken.
      const auto deadline = clock::now() + std::chrono::milliseconds(shared_.redis.command_timeout_ms);
      boost::asio::steady_timer pause(io_);
      while (writer_.queued() > 0 && health_.available() && clock::now() < deadline) {
        pause.expires_after(std::chrono::milliseconds(1));
        co_await pause.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      // Changes applied while it is saved may be in it too: the stream
      // after `id` gives them again, and applying one twice changes nothing.
      const std::string id = tailer_.last_id();
      auto save = [this] { return caches_.semantic().visit([](const auto& cache) { return cache.save_bytes(); }); };
      std::string bytes = co_await detail::in_background(background_, save);
      const std::size_t size = bytes.size();
      std::vector<redis::command> commands = {{"HSET", snapshot_, "id", id, "bytes", std::move(bytes)}};
      if (id != "0") commands.push_back({"XTRIM", stream_, "MINID", id});
      const std::vector<redis::reply> replies = co_await commands_.exec_pipeline(std::move(commands), snapshot_);
      health_.answered(replies.size());
      for (const redis::reply& r : replies)
        if (r.is_error()) throw error(errc::store_error, "redis: snapshot: " + r.text);
      log_.event("shared_snapshot_saved", {{"replica", replica_}, {"id", id}, {"bytes", size}});
      co_return true;
    } catch (const std::exception& e) {
      health_.failed(1, e);
      co_return false;
    }
  }

  // --- stopping -----------------------------------------------------------------

  // Ends every coroutine (each checks stopping_ after its wait), closes the
  // clients on their thread and joins it once nothing is left to run.
  void shut_down() {
    stopping_ = true;
    boost::asio::post(io_, [this] {
      writer_.cancel();
      tailer_.cancel();
      spending_.cancel();
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
  const std::string stream_, snapshot_;
  const std::chrono::milliseconds read_timeout_;
  const std::uint64_t exact_lifetime_ms_;  // 0: exact answers never expire
  const bool remote_vectors_;              // the semantic cache's vectors come from a remote embedder

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  boost::asio::thread_pool background_{1};  // whole snapshots saved or merged
  redis::client commands_;
  redis::client tail_commands_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  store_health health_;
  tier_writer writer_;
  snapshot_lease lease_;
  stream_tailer tailer_;
  spending_sync spending_;
  const bool syncs_spending_;  // some tenant has spending limits
  boost::asio::steady_timer snapshot_pause_;  // on the tier's thread only
  std::atomic<std::uint64_t> exact_hits_{0}, exact_misses_{0};

  std::jthread thread_;  // last: runs io_ once everything it touches exists
};

/// The shared_tier_factory for gateway_parts::shared.
inline std::unique_ptr<shared_tier> make_shared_tier(const shared_tier_context& context) {
  return std::make_unique<redis_shared_tier>(context);
}

}  // namespace llmgate::inline v0
