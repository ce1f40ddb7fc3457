// tier_writer: the shared tier's writes (exact answers, stream entries),
// queued from any thread and sent by one coroutine on the tier's thread in
// pipelined batches, one pipeline per cluster slot (a cluster serves a
// pipeline on one node). A batch that fails goes back to the front of the
// queue and is sent again after a backoff from 50 ms to 1 s; while the
// store is away the writer probes it with PING, queued writes or not.
#pragma once

#include <algorithm>    // std::find, std::min
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::milliseconds, steady_clock
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>       // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/io_context.hpp>     // boost::asio::io_context
#include <boost/asio/post.hpp>           // boost::asio::post
#include <boost/asio/steady_timer.hpp>   // boost::asio::steady_timer
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable

#include "llmgate/redis/client.hpp"                 // redis::client
#include "llmgate/redis/reply.hpp"                  // redis::command, redis::reply
#include "llmgate/server/shared/store_health.hpp"   // store_health
#include "llmgate/server/shared/write_queue.hpp"    // write_queue

namespace llmgate::inline v0 {

class tier_writer {
 public:
  static constexpr std::size_t batch_size = 512;
  static constexpr std::chrono::milliseconds first_backoff{50}, last_backoff{1000};

  tier_writer(boost::asio::io_context& io, redis::client& commands, store_health& health,
              const std::atomic<bool>& stopping, std::uint64_t max_queued)
      : io_(io), commands_(commands), health_(health), stopping_(stopping), writes_(max_queued), wake_(io),
        pause_(io) {}

  /// Queues a write; from any thread.
  void push(redis::command write) {
    if (writes_.push(std::move(write)))  // the writer may be waiting for one
      boost::asio::post(io_, [this] { wake_.cancel(); });
  }

  std::uint64_t queued() const { return writes_.size(); }
  std::uint64_t dropped() const { return writes_.dropped(); }

  /// Ends a wait for writes (the store went away: probe it); on the tier's thread.
  void wake() { wake_.cancel(); }
  /// Ends every wait, for a stop; on the tier's thread.
  void cancel() {
    wake_.cancel();
    pause_.cancel();
  }

  /// Drains the queue until the tier stops.
  boost::asio::awaitable<void> run() {
    auto backoff = first_backoff;
    while (!stopping_.load()) {
      std::vector<redis::command> batch = writes_.pop(batch_size);
      const bool probe = batch.empty() && !health_.available();
      if (batch.empty() && !probe) {
        wake_.expires_at(std::chrono::steady_clock::time_point::max());
        co_await wake_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
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
      pause_.expires_after(backoff);
      co_await pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      backoff = std::min(backoff * 2, last_backoff);
    }
  }

 private:
  // The part of a command's key that picks its cluster slot: the hash tag.
  static std::string_view slot_tag(const redis::command& c) {
    if (c.size() < 2) return {};
    const std::string_view key = c[1];
    const auto open = key.find('{');
    const auto close = open == std::string_view::npos ? open : key.find('}', open + 1);
    return close == std::string_view::npos || close == open + 1 ? key : key.substr(open + 1, close - open - 1);
  }

  // Sends `batch` as one pipeline per slot; returns what could not be sent, in order.
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
        health_.answered(commands);
        for (const redis::reply& r : replies)
          if (r.is_error()) health_.count_error();  // the store refused this write (out of memory, say): not retried
      } catch (const std::exception& e) {
        health_.failed(commands, e);
        std::vector<redis::command> unsent;
        for (std::size_t rest = g; rest < groups.size(); ++rest)
          for (redis::command& c : groups[rest]) unsent.push_back(std::move(c));
        co_return unsent;
      }
    }
    co_return std::vector<redis::command>{};
  }

  boost::asio::io_context& io_;
  redis::client& commands_;
  store_health& health_;
  const std::atomic<bool>& stopping_;
  write_queue<redis::command> writes_;
  boost::asio::steady_timer wake_, pause_;  // on the tier's thread only
};

}  // namespace llmgate::inline v0
