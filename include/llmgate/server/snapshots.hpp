// gateway_caches: the gateway's two cache tiers, built from the config and
// loaded from the snapshot directory when it holds them; saved there on
// stop. The one place where the gateway constructs, loads and saves
// caches, and where the config's cache policies (eviction, lifetime,
// threshold, embedder) become policy objects.
//
// A snapshot that cannot be read is moved aside (renamed *.unreadable,
// with a log line) and that cache starts empty: a damaged file never
// keeps the gateway from starting. A snapshot written under another
// threshold policy is one such file (see cache_policies.hpp).
#pragma once

#include <chrono>              // std::chrono::milliseconds
#include <condition_variable>  // std::condition_variable_any (the refresher's pause)
#include <exception>           // std::exception
#include <filesystem>          // std::filesystem
#include <memory>              // std::unique_ptr
#include <mutex>               // std::mutex, std::unique_lock
#include <stop_token>          // std::stop_token
#include <string>              // std::string
#include <string_view>         // std::string_view
#include <system_error>        // std::error_code

#include <boost/asio/connect.hpp>      // boost::asio::connect (the embedder's address is tried at start)
#include <boost/asio/io_context.hpp>   // boost::asio::io_context
#include <boost/asio/ip/tcp.hpp>       // boost::asio::ip::tcp
#include <boost/asio/steady_timer.hpp> // the probe's time limit

#include "llmgate/backend/url.hpp"                // base_url
#include "llmgate/cache/exact_cache.hpp"          // exact_cache
#include "llmgate/cache/semantic_cache.hpp"       // basic_semantic_cache
#include "llmgate/embed/hashing_embedder.hpp"     // hashing_embedder
#include "llmgate/error.hpp"                      // llmgate::error
#include "llmgate/pipeline/cached_answer.hpp"     // cached_answer
#include "llmgate/server/cache_policies.hpp"      // gateway_eviction, eviction_of, threshold_of, cache_clock
#include "llmgate/server/config.hpp"              // gateway_config
#include "llmgate/server/request_log.hpp"         // request_log

namespace llmgate::inline v0 {

using gateway_exact_cache = exact_cache<cached_answer, gateway_eviction>;
using gateway_semantic_cache = basic_semantic_cache<cached_answer, hashing_embedder, default_index_factory,
                                                    gateway_eviction, configured_threshold>;

class gateway_caches {
 public:
  /// Builds or loads both tiers. Throws llmgate::error naming the config
  /// field when the embedder cannot be used.
  gateway_caches(const gateway_config& config, cache_clock clock, request_log& log)
      : config_(config), clock_(std::move(clock)), log_(log) {
    check_embedder();
    exact_ = load_exact();
    semantic_ = load_semantic();
  }

  gateway_exact_cache& exact() noexcept { return *exact_; }
  const gateway_exact_cache& exact() const noexcept { return *exact_; }
  gateway_semantic_cache& semantic() noexcept { return *semantic_; }
  const gateway_semantic_cache& semantic() const noexcept { return *semantic_; }

  /// Saves both tiers to the snapshot directory (when one is set), with a
  /// log line each.
  void save() {
    if (!config_.snapshot_directory) return;
    std::error_code ec;
    std::filesystem::create_directories(*config_.snapshot_directory, ec);
    const auto saved = [&](std::string_view cache, std::error_code problem, std::size_t entries) {
      if (problem) log_.event("snapshot_failed", {{"cache", cache}, {"error", problem.message()}});
      else log_.event("snapshot_saved", {{"cache", cache}, {"entries", entries}});
    };
    saved("exact", exact_->save(path_of("exact")), exact_->size());
    saved("semantic", semantic_->save(path_of("semantic")), semantic_->size());
  }

  /// Re-embeds the semantic cache under new weights whenever they are
  /// due, checking a few times a second, until `stop`: on the caller's
  /// thread, so that the second or so it takes at 100,000 entries keeps
  /// no request waiting.
  void refresh_until(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any pause;
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      try {
        semantic_->refresh();
      } catch (const std::exception& e) {  // out of memory, say: the cache keeps its weights and tries again
        log_.event("refresh_failed", {{"error", e.what()}});
      }
      pause.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; });
    }
  }

 private:
  std::filesystem::path path_of(std::string_view cache) const {
    return *config_.snapshot_directory / (std::string(cache) + ".snapshot");
  }

  exact_cache_options exact_options() const {
    return {.max_entries = config_.exact_max_entries, .max_bytes = config_.exact_max_bytes};
  }
  gateway_eviction exact_eviction() const { return eviction_of(config_.exact_eviction, clock_); }

  // The refresher (refresh_until), not a request, re-embeds the stored
  // requests when the embedder's weights are due.
  semantic_cache_options semantic_options() const {
    return {.max_entries = config_.semantic_max_entries, .refresh_in_insert = false};
  }
  hashing_embedder embedder() const { return hashing_embedder({.dimension = config_.embedder.dimension}); }
  configured_threshold threshold() const {
    return threshold_of(config_.semantic_threshold_policy, config_.semantic_threshold);
  }
  gateway_eviction semantic_eviction() const { return eviction_of(config_.semantic_eviction, clock_); }
  default_index_factory graphs() const { return default_index_factory{config_.semantic_hnsw}; }

  // The built-in embedder is the only one this version runs; an HTTP one
  // is refused, after its address is tried, so that the message says
  // which of the two is wrong.
  void check_embedder() const {
    const auto& e = config_.embedder;
    if (e.kind == "hashing") return;
    const std::string where = "config: semantic_cache.embedder";
    base_url url;
    try {
      url = base_url::parse(e.base_url);
    } catch (const error& problem) {
      throw error(errc::invalid_request, where + ".base_url " + problem.what());
    }
    if (const auto problem = probe(url))
      throw error(errc::invalid_request, where + ".base_url " + e.base_url + " does not answer: " + problem.message());
    throw error(errc::invalid_request, where + ".kind \"" + e.kind +
                                           "\" is not supported by this gateway yet; use \"hashing\"");
  }

  // Whether a TCP connection to the URL's host opens within two seconds.
  static std::error_code probe(const base_url& url) {
    namespace net = boost::asio;
    net::io_context io;
    net::ip::tcp::resolver resolver(io);
    net::ip::tcp::socket socket(io);
    net::steady_timer limit(io, std::chrono::seconds(2));
    boost::system::error_code result = net::error::timed_out;
    resolver.async_resolve(url.host, url.port, [&](const boost::system::error_code& ec, const auto& endpoints) {
      if (ec) {
        result = ec;
        limit.cancel();
        return;
      }
      net::async_connect(socket, endpoints, [&](const boost::system::error_code& connected, const auto&) {
        result = connected;
        limit.cancel();
      });
    });
    limit.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) {
        resolver.cancel();
        socket.close();
      }
    });
    io.run();
    return result;
  }

  // Loads a snapshot with `load`, or makes an empty cache with `make`; a
  // file that cannot be read is kept beside, renamed, for inspection.
  template <class Cache, class Load, class Make>
  std::unique_ptr<Cache> load_or_make(std::string_view cache, Load load, Make make) {
    if (config_.snapshot_directory && std::filesystem::exists(path_of(cache))) {
      const auto path = path_of(cache);
      try {
        std::unique_ptr<Cache> loaded(new Cache(load(path)));
        log_.event("snapshot_loaded", {{"cache", cache}, {"entries", loaded->size()}});
        return loaded;
      } catch (const std::exception& e) {
        auto aside = path;
        aside += ".unreadable";
        std::error_code ignored;
        std::filesystem::rename(path, aside, ignored);
        log_.event("snapshot_unreadable", {{"cache", cache}, {"error", e.what()}, {"moved_to", aside.string()}});
      }
    }
    return std::unique_ptr<Cache>(new Cache(make()));
  }

  std::unique_ptr<gateway_exact_cache> load_exact() {
    return load_or_make<gateway_exact_cache>(
        "exact", [&](const auto& path) { return gateway_exact_cache::load(path, exact_options(), exact_eviction()); },
        [&] { return gateway_exact_cache(exact_options(), exact_eviction()); });
  }

  std::unique_ptr<gateway_semantic_cache> load_semantic() {
    return load_or_make<gateway_semantic_cache>(
        "semantic",
        [&](const auto& path) {
          return gateway_semantic_cache::load(path, semantic_options(), embedder(), threshold(), {}, {},
                                              semantic_eviction(), graphs());
        },
        [&] {
          return gateway_semantic_cache(semantic_options(), embedder(), threshold(), {}, {}, semantic_eviction(), graphs());
        });
  }

  const gateway_config& config_;
  cache_clock clock_;
  request_log& log_;
  std::unique_ptr<gateway_exact_cache> exact_;
  std::unique_ptr<gateway_semantic_cache> semantic_;
};

}  // namespace llmgate::inline v0
