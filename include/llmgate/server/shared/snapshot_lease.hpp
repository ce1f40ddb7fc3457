// snapshot_lease: which replica writes the next semantic snapshot. A Redis
// key (P:{semantic}:lease) set with NX and a lifetime of two snapshot
// intervals, holding the replica's name; the replica that holds it renews
// it, so one replica keeps writing snapshots while it lives.
#pragma once

#include <algorithm>  // std::max
#include <string>     // std::string, std::to_string
#include <utility>    // std::move
#include <vector>     // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/redis/client.hpp"                // redis::client
#include "llmgate/redis/reply.hpp"                 // redis::command, redis::reply
#include "llmgate/server/shared/store_health.hpp"  // store_health

namespace llmgate::inline v0 {

class snapshot_lease {
 public:
  snapshot_lease(std::string key, std::string replica, unsigned snapshot_interval_s)
      : key_(std::move(key)), replica_(std::move(replica)),
        lifetime_ms_(std::to_string(std::max(1u, snapshot_interval_s) * 2000)) {}

  /// Whether the lease is this replica's: it takes it, or holds it already
  /// (and renews it). Throws what the client throws.
  boost::asio::awaitable<bool> take(redis::client& commands, store_health& health) const {
    std::vector<redis::command> take = {{"SET", key_, replica_, "NX", "PX", lifetime_ms_}, {"GET", key_}};
    const std::vector<redis::reply> replies = co_await commands.exec_pipeline(std::move(take), key_);
    health.answered(2);
    if (replies.size() != 2 || replies[1].text != replica_) co_return false;
    if (replies[0].is_nil()) {  // held already: by this replica, so renewed
      redis::command renew = {"PEXPIRE", key_, lifetime_ms_};
      (void)co_await commands.exec(std::move(renew));
      health.answered(1);
    }
    co_return true;
  }

 private:
  const std::string key_;
  const std::string replica_;
  const std::string lifetime_ms_;
};

}  // namespace llmgate::inline v0
