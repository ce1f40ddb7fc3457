// client: llmgate's Redis client, for one server (with its replicas
// behind it) or a Redis Cluster, on Asio C++20 coroutines.
//
// - connect() tries the endpoints in order and keeps the first that
//   answers; it detects a cluster ("cluster_enabled:1" in INFO cluster) and
//   then loads the slot map (CLUSTER SLOTS). Not a cluster: when that
//   server is lost, the command after the failure looks again, in order.
// - exec / exec_pipeline route by the slot of a routing key (the first
//   argument after the command's name unless given) to the master serving
//   it, follow MOVED (the slot's new owner at once, then the whole map
//   again) and ASK (ASKING and the command, pipelined, on the node named),
//   at most max_redirects times.
// - Each node has a pool of connections_per_node connections, used in turn;
//   each pipelines every command given to it (connection.hpp). A connection
//   that failed is made again on its next use; callers who arrive while it
//   is being made wait for that attempt and share its outcome.
// - A Redis error reply is a reply of kind error. Exceptions are
//   llmgate::error: store_unreachable (connect, login, TLS, a lost
//   connection), store_timeout (connect_timeout, command_timeout),
//   store_error (a protocol error, a bad CLUSTER SLOTS, too many redirects);
//   the message starts with "redis HOST:PORT: ".
//
// GCC 12 cannot compile a braced list inside a co_await expression
// ("array used as initializer"), and may destroy twice a temporary beside
// a co_await: make the awaitable first,
//   auto get = redis.exec({"GET", key});
//   const reply value = co_await std::move(get);
//
// Thread rule: a client lives on one executor that runs on one thread (or
// a strand); callers on other threads co_spawn onto get_executor().
// statistics() alone may be read from any thread.
#pragma once

#include <algorithm>    // std::find_if, std::any_of
#include <atomic>       // std::atomic: statistics read from other threads
#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception_ptr, std::current_exception, std::rethrow_exception
#include <map>          // std::map: nodes by "host:port"
#include <memory>       // std::shared_ptr, std::unique_ptr
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/any_io_executor.hpp>  // net::any_io_executor
#include <boost/asio/as_tuple.hpp>         // net::as_tuple
#include <boost/asio/awaitable.hpp>        // net::awaitable
#include <boost/asio/ssl/context.hpp>      // ssl::context
#include <boost/asio/steady_timer.hpp>     // net::steady_timer: waiting for a connection being made
#include <boost/asio/use_awaitable.hpp>    // net::use_awaitable
#include <boost/system/system_error.hpp>   // boost::system::system_error

#include "llmgate/error.hpp"                // llmgate::error, errc::store_*
#include "llmgate/redis/cluster_slots.hpp"  // key_slot, parse_cluster_slots, redirect_of
#include "llmgate/redis/connection.hpp"     // connection, tls_options, make_tls_context
#include "llmgate/redis/reply.hpp"          // reply, command, endpoint

namespace llmgate::inline v0::redis {

struct client_options {
  std::vector<endpoint> endpoints = {};  ///< tried in order; for a cluster, any of its masters
  std::string user = {};                 ///< ACL user; "" for `AUTH password`
  std::string password = {};             ///< "" with no user: no AUTH
  unsigned database = 0;                 ///< not for a cluster, which has only database 0
  tls_options tls = {};
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};
  std::size_t connections_per_node = 2;
};

struct client_statistics {
  std::uint64_t round_trips = 0;  ///< writes answered or failed (a pipeline is one)
  std::uint64_t errors = 0;       ///< exceptions: timeouts, lost connections, failed connects
  std::uint64_t redirects = 0;    ///< MOVED and ASK followed
  std::uint64_t reconnects = 0;   ///< connections made again after one failed or was closed
};

class client {
 public:
  using executor_type = net::any_io_executor;

  /// At most this many MOVED/ASK hops for one command.
  static constexpr int max_redirects = 5;

  /// Throws std::invalid_argument without endpoints, llmgate::error
  /// (errc::io_failure) when a TLS file cannot be read.
  client(executor_type executor, client_options options)
      : executor_(std::move(executor)), options_(std::move(options)) {
    if (options_.endpoints.empty()) throw std::invalid_argument("redis: client without endpoints");
    if (options_.connections_per_node == 0) options_.connections_per_node = 1;
    if (options_.tls.enabled) {
      try {
        tls_.emplace(make_tls_context(options_.tls));
      } catch (const boost::system::system_error& failure) {
        throw error(errc::io_failure, std::string("redis: cannot read the TLS files (") + options_.tls.ca_file + ", " +
                                          options_.tls.cert_file + ", " + options_.tls.key_file +
                                          "): " + failure.what());
      }
    }
  }

  client(const client&) = delete;
  client& operator=(const client&) = delete;
  ~client() { close(); }

  const executor_type& get_executor() const noexcept { return executor_; }

  /// Connects to the first endpoint that answers, logged in and with the
  /// database selected, and learns whether it is a cluster (then loads
  /// its slot map). Throws llmgate::error, the last endpoint's failure.
  net::awaitable<void> connect() {
    closed_ = false;
    std::exception_ptr failure;
    for (const auto& where : options_.endpoints) {
      node& candidate = node_at(where);
      try {
        auto link = co_await connection_for(candidate);
        command ask_info = {"INFO", "cluster"};  // not in the co_await: GCC 12 miscompiles literals there
        const reply info = co_await round_trip(*link, std::move(ask_info));
        if (info.is_error() && info.text.starts_with("NOAUTH"))
          throw error(errc::store_unreachable, "redis " + to_string(where) + ": login required: " + info.text);
        cluster_ = !info.is_error() && info.text.find("cluster_enabled:1") != std::string::npos;
        home_ = &candidate;
        if (cluster_) co_await load_slots(candidate);
        co_return;
      } catch (const error&) {
        failure = std::current_exception();
      }
    }
    std::rethrow_exception(failure);
  }

  /// One command on the node serving `routing_key`'s slot (c[1] when not
  /// given). A Redis error reply comes back as a reply of kind error.
  /// Not a coroutine itself: `routing_key` is copied at the call, so the
  /// awaitable may be awaited after the string it views is gone.
  net::awaitable<reply> exec(command c, std::string_view routing_key = {}) {
    return run_one(std::move(c), std::string(routing_key));
  }

  /// Commands in one write on the node serving `routing_key`'s slot (the
  /// first command's c[1] when not given); replies in order. `routing_key`
  /// is copied at the call, as exec's.
  net::awaitable<std::vector<reply>> exec_pipeline(std::vector<command> commands, std::string_view routing_key = {}) {
    return run(std::move(commands), std::string(routing_key));
  }

  bool cluster() const noexcept { return cluster_; }

  client_statistics statistics() const {
    return {round_trips_.load(std::memory_order_relaxed), errors_.load(std::memory_order_relaxed),
            redirects_.load(std::memory_order_relaxed), reconnects_.load(std::memory_order_relaxed)};
  }

  /// Closes every connection; commands in flight fail with
  /// store_unreachable, later ones too until connect() is called again.
  void close() {
    closed_ = true;
    for (auto& [name, n] : nodes_)
      for (auto& pooled : n->pool)
        if (pooled.link) pooled.link->close();
  }

 private:
  /// A connection being made: who needs the same one waits for `done`.
  struct attempt {
    explicit attempt(const executor_type& executor) : done(executor) {
      done.expires_at(net::steady_timer::time_point::max());
    }
    net::steady_timer done;
    std::shared_ptr<connection> link;
    std::exception_ptr failure;
  };

  struct pooled_connection {
    std::shared_ptr<connection> link;
    std::shared_ptr<attempt> making;  ///< while one is being made
    bool made_before = false;         ///< the next one is a reconnect
  };

  struct node {
    endpoint where;
    std::vector<pooled_connection> pool;
    std::size_t next = 0;  ///< round-robin over the pool
  };

  node& node_at(const endpoint& where) {
    auto& n = nodes_[to_string(where)];
    if (!n) n.reset(new node{where, std::vector<pooled_connection>(options_.connections_per_node)});
    return *n;
  }

  net::awaitable<std::shared_ptr<connection>> connection_for(node& n) {
    if (closed_) throw error(errc::store_unreachable, "redis " + to_string(n.where) + ": the client is closed");
    pooled_connection& pooled = n.pool[n.next++ % n.pool.size()];
    if (pooled.link && pooled.link->is_open()) co_return pooled.link;
    if (auto making = pooled.making) {
      const auto [code] = co_await making->done.async_wait(net::as_tuple(net::use_awaitable));
      if (making->failure) std::rethrow_exception(making->failure);
      if (!making->link) throw boost::system::system_error(code);  // the caller cancelled
      co_return making->link;
    }
    if (pooled.link) pooled.link->close();
    pooled.link.reset();
    auto making = std::make_shared<attempt>(executor_);
    pooled.making = making;
    try {
      auto opening = connection::open(executor_, connection_options_for(n.where), tls_ ? &*tls_ : nullptr);
      making->link = co_await std::move(opening);
    } catch (...) {
      making->failure = std::current_exception();
    }
    pooled.making.reset();
    making->done.cancel();
    if (making->failure) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      std::rethrow_exception(making->failure);
    }
    if (pooled.made_before) reconnects_.fetch_add(1, std::memory_order_relaxed);
    pooled.made_before = true;
    pooled.link = making->link;
    if (closed_) pooled.link->close();  // closed while it was being made
    co_return pooled.link;
  }

  connection_options connection_options_for(const endpoint& where) const {
    return {where, options_.user, options_.password, options_.database, options_.connect_timeout,
            options_.command_timeout, options_.tls.verify, options_.tls.server_name};
  }

  net::awaitable<reply> round_trip(connection& link, command c) {
    std::vector<command> one;
    one.push_back(std::move(c));
    auto replies = co_await round_trip(link, one);
    co_return std::move(replies.front());
  }

  net::awaitable<std::vector<reply>> round_trip(connection& link, const std::vector<command>& commands) {
    round_trips_.fetch_add(1, std::memory_order_relaxed);
    try {
      co_return co_await link.exec_pipeline(commands);
    } catch (const error&) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      if (cluster_) slots_stale_ = true;  // the node may have failed over
      throw;
    }
  }

  net::awaitable<std::vector<reply>> send(node& n, const std::vector<command>& commands) {
    auto link = co_await connection_for(n);
    co_return co_await round_trip(*link, commands);
  }

  // The node for a key: the master serving its slot in a cluster (or, for
  // a slot no master serves yet, the node connect() found), else that node.
  node& route(std::string_view key) {
    if (!cluster_ || key.empty()) return *home_;
    node* owner = slots_[key_slot(key)];
    return owner ? *owner : *home_;
  }

  net::awaitable<reply> run_one(command c, std::string routing_key) {
    std::vector<command> one;
    one.push_back(std::move(c));
    auto replies = co_await run(std::move(one), std::move(routing_key));
    co_return std::move(replies.front());
  }

  net::awaitable<std::vector<reply>> run(std::vector<command> commands, std::string routing_key) {
    if (commands.empty()) co_return std::vector<reply>{};
    for (const auto& c : commands)
      if (c.empty()) throw std::invalid_argument("redis: empty command");  // before it counts as sent
    if (closed_) throw error(errc::store_unreachable, "redis: the client is closed");
    if (!home_) co_await connect();
    if (slots_stale_ && !loading_slots_) co_await reload_slots();
    const std::string key = !routing_key.empty()     ? std::move(routing_key)
                            : commands[0].size() > 1 ? commands[0][1]
                                                     : std::string();
    node& first = route(key);
    std::vector<reply> replies;
    try {
      replies = co_await send(first, commands);
    } catch (const error& failure) {
      // One server of several that stands for the others (not a cluster):
      // the next command looks for the first that answers, as connect() does.
      if (!cluster_ && failure.code() == errc::store_unreachable) home_ = nullptr;
      throw;
    }
    if (!cluster_) co_return replies;
    std::vector<node*> answered_by(commands.size(), &first);
    for (int hops = 0; std::any_of(replies.begin(), replies.end(), is_redirect); ++hops) {
      if (hops == max_redirects)
        throw error(errc::store_error, "redis " + to_string(first.where) + ": more than " +
                                           std::to_string(max_redirects) + " redirects for the slot of key '" + key + "'");
      co_await follow_redirects(commands, replies, answered_by);
    }
    co_return replies;
  }

  static bool is_redirect(const reply& r) { return redirect_of(r).has_value(); }

  // Sends again each command whose reply is a redirect, grouped by where
  // to (one pipeline per node; ASKING before each command sent for ASK).
  net::awaitable<void> follow_redirects(const std::vector<command>& commands, std::vector<reply>& replies,
                                        std::vector<node*>& answered_by) {
    struct group {
      node* to;
      bool ask;
      std::vector<std::size_t> indices;
    };
    std::vector<group> groups;
    bool moved = false;
    for (std::size_t i = 0; i < replies.size(); ++i) {
      auto redirect = redirect_of(replies[i]);
      if (!redirect) continue;
      if (redirect->to.host.empty()) redirect->to.host = answered_by[i]->where.host;
      node* to = &node_at(redirect->to);
      if (!redirect->ask) {
        slots_[redirect->slot] = to;  // at once; the whole map is loaded again below
        moved = true;
      }
      auto found = std::find_if(groups.begin(), groups.end(),
                                [&](const group& g) { return g.to == to && g.ask == redirect->ask; });
      if (found == groups.end()) found = groups.insert(groups.end(), group{to, redirect->ask, {}});
      found->indices.push_back(i);
    }
    for (const auto& g : groups) {
      redirects_.fetch_add(g.indices.size(), std::memory_order_relaxed);
      std::vector<command> again;
      for (const std::size_t i : g.indices) {
        if (g.ask) again.push_back({"ASKING"});
        again.push_back(commands[i]);
      }
      auto answers = co_await send(*g.to, again);
      const std::size_t stride = g.ask ? 2 : 1;  // skip ASKING's +OK
      for (std::size_t k = 0; k < g.indices.size(); ++k) {
        replies[g.indices[k]] = std::move(answers[k * stride + stride - 1]);
        answered_by[g.indices[k]] = g.to;
      }
    }
    if (moved && !loading_slots_) co_await reload_slots();
  }

  // Loads the slot map from `from`; throws when it cannot.
  net::awaitable<void> load_slots(node& from) {
    loading_slots_ = true;
    try {
      auto link = co_await connection_for(from);
      command ask_slots = {"CLUSTER", "SLOTS"};
      const reply answer = co_await round_trip(*link, std::move(ask_slots));
      std::vector<node*> map(cluster_slot_count, nullptr);
      for (auto& range : parse_cluster_slots(answer)) {
        if (range.master.host.empty()) range.master.host = from.where.host;  // Redis's "unknown endpoint"
        node* master = &node_at(range.master);
        for (std::size_t slot = range.first; slot <= range.last; ++slot) map[slot] = master;
      }
      slots_ = std::move(map);
      slots_stale_ = false;
    } catch (...) {
      loading_slots_ = false;
      throw;
    }
    loading_slots_ = false;
  }

  // Loads the slot map from the first node that gives it. The map may
  // only be stale: a failure here is no failure of the command that asked.
  net::awaitable<void> reload_slots() {
    std::vector<node*> candidates;
    for (auto& [name, n] : nodes_) candidates.push_back(n.get());
    for (node* n : candidates) {
      try {
        co_await load_slots(*n);
        co_return;
      } catch (const error&) {
      }
    }
  }

  executor_type executor_;
  client_options options_;
  std::optional<net::ssl::context> tls_;
  std::map<std::string, std::unique_ptr<node>> nodes_;  ///< by "host:port"; a node never moves
  node* home_ = nullptr;                  ///< the node connect() found
  bool cluster_ = false;
  std::vector<node*> slots_ = std::vector<node*>(cluster_slot_count, nullptr);  ///< slot -> its master
  bool slots_stale_ = false;              ///< a node failed: load the map before the next command
  bool loading_slots_ = false;
  bool closed_ = false;
  std::atomic<std::uint64_t> round_trips_{0}, errors_{0}, redirects_{0}, reconnects_{0};
};

}  // namespace llmgate::inline v0::redis
