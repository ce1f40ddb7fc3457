// spending_sync: the shared tier's part that adds the tenants' spending up
// across replicas (server/spending/spending_ledger.hpp), so that a
// tenant's budget and rate limits hold for all of them together. Every
// interval (shared.spending_sync_ms), on the tier's thread, one pipeline
// under the config's prefix P, all on one cluster slot; for each window
// the tenants' limits read, a hash of each replica's spending in it:
//   HSET      P:{spending}:<tenant>:<limit>:<window start> <replica> <its spending>
//   PEXPIREAT the same key, when no replica reads that window any more
//   HGETALL   the same key                 (the other replicas' spending)
// and the replicas' last syncs:
//   HSET      P:{spending}:replicas <replica> <now, ms>
//   HGETALL   P:{spending}:replicas        (the replicas seen lately)
//   HDEL      P:{spending}:replicas <those not seen for a day>, when any
// Each replica writes its own spending whole, never an increment: a write
// that timed out and still reached the store, then sent again, counts
// once. A pipeline that fails leaves it to the next one. "Lately" is the
// last ten intervals, and never less than ten seconds.
#pragma once

#include <algorithm>    // std::max
#include <atomic>       // std::atomic
#include <charconv>     // std::to_chars, std::from_chars
#include <chrono>       // std::chrono
#include <cstdint>      // std::int64_t
#include <exception>    // std::exception
#include <iterator>     // std::make_move_iterator
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>       // boost::asio::as_tuple
#include <boost/asio/awaitable.hpp>      // boost::asio::awaitable
#include <boost/asio/io_context.hpp>     // boost::asio::io_context
#include <boost/asio/steady_timer.hpp>   // boost::asio::steady_timer
#include <boost/asio/use_awaitable.hpp>  // boost::asio::use_awaitable

#include "llmgate/error.hpp"                            // llmgate::error, errc
#include "llmgate/redis/client.hpp"                     // redis::client
#include "llmgate/redis/reply.hpp"                      // redis::command, redis::reply
#include "llmgate/server/shared/store_health.hpp"       // store_health
#include "llmgate/server/spending/spending_ledger.hpp"  // spending_ledger, limit_name

namespace llmgate::inline v0 {

class spending_sync {
 public:
  spending_sync(boost::asio::io_context& io, redis::client& commands, store_health& health,
                const std::atomic<bool>& stopping, spending_ledger& ledger, const std::string& prefix,
                std::string replica, std::chrono::milliseconds interval)
      : commands_(commands), health_(health), stopping_(stopping), ledger_(ledger), keys_(prefix + ":{spending}:"),
        replicas_key_(keys_ + "replicas"), replica_(std::move(replica)), interval_(interval),
        lately_(std::max<std::chrono::milliseconds>(std::chrono::seconds(10), interval * 10)), pause_(io) {}

  /// Syncs every interval until the tier stops; on the tier's thread.
  boost::asio::awaitable<void> run() {
    while (!stopping_.load()) {
      pause_.expires_after(interval_);
      co_await pause_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      if (!stopping_.load()) co_await sync_once();
    }
  }

  /// Sends this replica's spending and reads the totals back, once.
  boost::asio::awaitable<void> sync_once() {
    const std::vector<spending_ledger::sync_entry> entries = ledger_.begin_sync();
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<redis::command> pipeline;
    pipeline.reserve(entries.size() * 3 + 2);
    for (const auto& e : entries) {
      std::string key = keys_ + e.tenant + ":" + std::string(limit_name(e.limit)) + ":" + std::to_string(e.window_start);
      pipeline.push_back({"HSET", key, replica_, number_text(e.mine)});
      pipeline.push_back({"PEXPIREAT", key, std::to_string(e.keep_until * 1000)});
      pipeline.push_back({"HGETALL", std::move(key)});
    }
    if (!stale_.empty()) {
      redis::command forget = {"HDEL", replicas_key_};
      forget.insert(forget.end(), std::make_move_iterator(stale_.begin()), std::make_move_iterator(stale_.end()));
      stale_.clear();
      pipeline.push_back(std::move(forget));
    }
    pipeline.push_back({"HSET", replicas_key_, replica_, std::to_string(now_ms)});
    pipeline.push_back({"HGETALL", replicas_key_});
    const std::size_t commands = pipeline.size();
    try {
      const std::vector<redis::reply> replies = co_await commands_.exec_pipeline(std::move(pipeline), replicas_key_);
      health_.answered(commands);
      std::vector<double> others(entries.size());
      for (std::size_t i = 0; i < entries.size(); ++i) others[i] = others_spending(replies.at(3 * i + 2));
      ledger_.end_sync(entries, std::span<const double>(others), replicas_seen(replies.back(), now_ms));
    } catch (const std::exception& e) {
      ledger_.end_sync(entries, std::nullopt, 0);
      health_.failed(commands, e);
    }
  }

  /// Ends the wait for the next sync, for a stop; on the tier's thread.
  void cancel() { pause_.cancel(); }

 private:
  static std::string number_text(double value) {
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
  }

  // The sum of the other replicas' spending in a window's hash (HGETALL's
  // field, value pairs); throws when the store answered anything else.
  double others_spending(const redis::reply& all) const {
    if (!all.is_array()) throw error(errc::store_error, "redis: spending: HGETALL answered " + all.text);
    double sum = 0;
    for (std::size_t i = 0; i + 1 < all.elements.size(); i += 2)
      if (all.elements[i].text != replica_) sum += number_of(all.elements[i + 1].text);
    return sum;
  }

  // The replicas whose last sync is recent, from HGETALL's field, value
  // pairs; those not seen for a day are forgotten at the next sync.
  std::size_t replicas_seen(const redis::reply& all, long long now_ms) {
    constexpr long long day_ms = 86'400'000;
    std::size_t seen = 0;
    for (std::size_t i = 0; i + 1 < all.elements.size(); i += 2) {
      const long long age = now_ms - static_cast<long long>(number_of(all.elements[i + 1].text));
      if (age <= lately_.count()) ++seen;
      else if (age > day_ms) stale_.push_back(all.elements[i].text);
    }
    return seen;
  }

  // A number a replica wrote; 0 for anything else (no replica of this version wrote it).
  static double number_of(const std::string& text) {
    double value = 0;
    const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
    return problem == std::errc{} && end == text.data() + text.size() ? value : 0.0;
  }

  redis::client& commands_;
  store_health& health_;
  const std::atomic<bool>& stopping_;
  spending_ledger& ledger_;
  const std::string keys_, replicas_key_, replica_;
  const std::chrono::milliseconds interval_, lately_;
  std::vector<std::string> stale_;   // replicas to forget; on the tier's thread only
  boost::asio::steady_timer pause_;  // on the tier's thread only
};

}  // namespace llmgate::inline v0
