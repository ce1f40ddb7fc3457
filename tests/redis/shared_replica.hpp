// A gateway replica as the shared tier's tests need it: a config with a
// "shared" section pointing at a test redis-server, the gateway's caches
// built from it, and a redis_shared_tier over them, as the gateway makes
// them (the tier before start()). Several in one process play several
// gateway processes over one Redis.
#pragma once

#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <functional>   // std::function
#include <memory>       // std::unique_ptr, std::make_shared, std::make_unique
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::this_thread::sleep_for

#include <boost/asio/co_spawn.hpp>    // boost::asio::co_spawn
#include <boost/asio/io_context.hpp>  // boost::asio::io_context
#include <boost/asio/use_future.hpp>  // boost::asio::use_future

#include "llmgate/server/shared/redis_shared_tier.hpp"  // redis_shared_tier
#include "llmgate/server/gateway_config.hpp"            // gateway_config, shared_config
#include "llmgate/server/caches/gateway_caches.hpp"     // gateway_caches
#include "redis_server.hpp"                             // redis_server

namespace llmgate::test {

/// A config whose "shared" section uses the Redis at `port` under replica
/// name `replica`; no periodic snapshots (tests take them with snapshot_now()).
inline gateway_config shared_config_for(std::uint16_t port, std::string replica) {
  gateway_config config;
  config.log.requests = false;
  config.semantic_cache.embedder.dimension = 64;  // small: the tests compare texts, not models
  shared_config shared;
  shared.redis.endpoints = {"127.0.0.1:" + std::to_string(port)};
  shared.redis.connect_timeout_ms = 500;
  shared.redis.command_timeout_ms = 1000;
  shared.replica = std::move(replica);
  shared.prefix = "test";
  shared.read_timeout_ms = 500;  // generous: the test machine is shared; the kill test measures its own bound
  shared.snapshot_interval_s = 0;
  config.shared = shared;
  return config;
}

struct shared_replica {
  /// Builds the caches, the tenants' spending (measured by `spending_clock`)
  /// and the tier (which connects and may adopt a snapshot). Throws as the
  /// tier does.
  explicit shared_replica(gateway_config configured, wall_clock spending_clock = {})
      : config(std::move(configured)), caches(config, cache_clock{}, log),
        spending(config.tenants, std::move(spending_clock)),
        tier(std::make_unique<llmgate::redis_shared_tier>(shared_tier_context{config, caches, spending, log})) {}

  gateway_config config;
  request_log log{false, nullptr};
  gateway_caches caches;
  spending_ledger spending;
  std::unique_ptr<llmgate::redis_shared_tier> tier;

  gateway_hashing_cache& semantic() { return *caches.semantic().hashing(); }
};

/// Runs tier.find_exact(key) to its end on an io_context of the caller's thread.
inline cached_answer find_exact(llmgate::redis_shared_tier& tier, const exact_key& key) {
  boost::asio::io_context io;
  auto found = boost::asio::co_spawn(io, tier.find_exact(key), boost::asio::use_future);
  io.run();
  return found.get();
}

/// Whether `holds()` becomes true within `within`, asked every few milliseconds.
inline bool eventually(const std::function<bool()>& holds,
                       std::chrono::milliseconds within = std::chrono::milliseconds(2000)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!holds()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// A stored answer whose content is `content`.
inline cached_answer answer_of(std::string content) {
  auto answer = std::make_shared<chat_response>();
  answer->id = "chatcmpl-test";
  answer->model = "test-model";
  answer->content = std::move(content);
  answer->finish_reason = "stop";
  answer->usage = {.prompt_tokens = 5, .completion_tokens = 3};
  return answer;
}

}  // namespace llmgate::test
