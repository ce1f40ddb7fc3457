// A real Redis Cluster for tests: three masters (redis_server children,
// no replicas) on 127.0.0.1, joined by `redis-cli --cluster create`, ready
// when every node says cluster_state:ok and all see the same slot map.
// Slots move as a cluster operator moves them (CLUSTER SETSLOT IMPORTING /
// MIGRATING, MIGRATE of the slot's keys, SETSLOT NODE on every node), in
// one call or in steps, so that a test can look at a slot half moved,
// where the source answers ASK for the keys that left.
//
//   if (llmgate::test::skip_without_redis()) return;
//   llmgate::test::redis_cluster cluster;
//   auto moving = cluster.begin_migration(slot, 0, 1);
//   moving.move_keys(5);   // ASK for those five now
//   moving.finish();       // MOVED from node 0 from now on
//
// The nodes are driven through redis-cli, never through the client under
// test. Keys pass through its command line and its printed output, so
// test keys must be printable and hold no newline.
#pragma once

#include <algorithm>   // std::sort, std::find
#include <array>       // std::array
#include <chrono>      // std::chrono::steady_clock, seconds, milliseconds
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint16_t
#include <optional>    // std::optional
#include <sstream>     // std::istringstream
#include <stdexcept>   // std::runtime_error
#include <string>      // std::string, std::stoll, std::stoul, std::to_string
#include <thread>      // std::this_thread::sleep_for
#include <vector>      // std::vector

#include "llmgate/redis/cluster_slots.hpp"  // key_slot, cluster_slot_count
#include "llmgate/redis/reply.hpp"          // redis::endpoint
#include "redis_server.hpp"                 // redis_server, skip_without_redis, detail::run

namespace llmgate::test {

/// A key in `slot`: "<prefix><n>" for the smallest n that lands there. Put
/// it in braces ("{" + key + "}:a") to make any number of keys in one slot.
inline std::string key_in_slot(std::uint16_t slot, const std::string& prefix = "k") {
  for (unsigned n = 0;; ++n)
    if (std::string key = prefix + std::to_string(n); redis::key_slot(key) == slot) return key;
}

class redis_cluster;

/// A slot on its way from one master to another: the destination imports
/// it, the source migrates it. Keys still on the source are served there;
/// for the others the source answers "ASK <slot> <destination>".
/// finish() (or the destructor, which must not be left to an exception's
/// unwinding in a test that checks the map) completes the move.
class slot_migration {
 public:
  slot_migration(const slot_migration&) = delete;
  slot_migration& operator=(const slot_migration&) = delete;
  slot_migration(slot_migration&& other) noexcept
      : cluster_(other.cluster_), slot_(other.slot_), from_(other.from_), to_(other.to_), finished_(other.finished_) {
    other.finished_ = true;
  }
  ~slot_migration() {
    if (finished_) return;
    try {
      finish();
    } catch (...) {  // a test that fails half-way still tears the cluster down
    }
  }

  std::uint16_t slot() const noexcept { return slot_; }

  /// Moves up to `at_most` of the slot's keys still on the source (each
  /// MIGRATE is atomic); returns how many moved.
  std::size_t move_keys(std::size_t at_most);

  /// How many of the slot's keys the source still holds.
  std::size_t keys_left() const;

  /// Moves the keys left, gives the slot to the destination on every node
  /// (destination first, then the source, as redis-cli does, so that no
  /// node sends a client back and forth) and waits until all agree.
  void finish();

 private:
  friend class redis_cluster;
  slot_migration(redis_cluster& cluster, std::uint16_t slot, std::size_t from, std::size_t to)
      : cluster_(&cluster), slot_(slot), from_(from), to_(to) {}

  redis_cluster* cluster_;
  std::uint16_t slot_;
  std::size_t from_, to_;
  bool finished_ = false;
};

class redis_cluster {
 public:
  static constexpr std::size_t master_count = 3;

  /// Starts three cluster-enabled servers, creates the cluster (node i
  /// serves the i-th third of the slots) and waits until it is ready;
  /// throws std::runtime_error with what went wrong otherwise. Call
  /// skip_without_redis() first.
  redis_cluster() {
    for (auto& node : nodes_)
      node.emplace(redis_server_options{.arguments = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                                      "--cluster-node-timeout", "2000"}});
    std::vector<std::string> create = {redis_cli_program, "--cluster", "create"};
    for (const auto& node : nodes_) create.push_back("127.0.0.1:" + std::to_string(node->port()));
    create.insert(create.end(), {"--cluster-replicas", "0", "--cluster-yes"});
    detail::run(create, node(0).directory() / "cluster-create.log");
    for (std::size_t i = 0; i < master_count; ++i) ids_[i] = trimmed(node(i).cli({"CLUSTER", "MYID"}));
    wait_until_ready();
  }

  redis_cluster(const redis_cluster&) = delete;
  redis_cluster& operator=(const redis_cluster&) = delete;

  const redis_server& node(std::size_t i) const { return *nodes_.at(i); }
  redis::endpoint endpoint(std::size_t i) const { return node(i).endpoint(); }
  const std::string& node_id(std::size_t i) const { return ids_.at(i); }

  /// What redis-cli prints for `command` on node i, without its last
  /// newline.
  std::string cli(std::size_t i, const std::vector<std::string>& command) const { return trimmed(node(i).cli(command)); }

  /// How many keys node i holds (DBSIZE).
  long long dbsize(std::size_t i) const { return std::stoll(cli(i, {"DBSIZE"})); }

  /// For each slot, the node that serves it, as node 0 sees the map (all
  /// agree once wait_until_ready() returned); master_count where none does.
  std::vector<std::size_t> slot_owners() const {
    std::vector<std::size_t> owners(redis::cluster_slot_count, master_count);
    for (const auto& line : lines_of(cli(0, {"CLUSTER", "NODES"}))) {
      const auto fields = words_of(line);
      for (std::size_t f = 8; f < fields.size(); ++f) {
        if (fields[f].starts_with('[')) continue;  // a migration in progress, not an owner
        const auto dash = fields[f].find('-');
        const auto first = static_cast<std::size_t>(std::stoul(fields[f].substr(0, dash)));
        const auto last = dash == std::string::npos ? first : static_cast<std::size_t>(std::stoul(fields[f].substr(dash + 1)));
        for (std::size_t slot = first; slot <= last && slot < owners.size(); ++slot) owners[slot] = index_of(fields[0]);
      }
    }
    return owners;
  }

  /// The node that serves `slot`; throws when none does.
  std::size_t node_of_slot(std::uint16_t slot) const {
    const std::size_t owner = slot_owners().at(slot);
    if (owner == master_count) throw std::runtime_error("redis_cluster: no node serves slot " + std::to_string(slot));
    return owner;
  }

  /// Starts moving `slot` from node `from` to node `to`: IMPORTING on the
  /// destination, then MIGRATING on the source (the order redis-cli uses:
  /// the source sends ASK only once the destination accepts ASKING).
  slot_migration begin_migration(std::uint16_t slot, std::size_t from, std::size_t to) {
    expect_ok(to, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", node_id(from)});
    expect_ok(from, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", node_id(to)});
    return slot_migration(*this, slot, from, to);
  }

  /// Moves `slot` from node `from` to node `to` with all its keys.
  void migrate_slot(std::uint16_t slot, std::size_t from, std::size_t to) { begin_migration(slot, from, to).finish(); }

  /// Waits (up to 30 s) until every node says cluster_state:ok and all
  /// list the same masters with the same slots; throws otherwise.
  void wait_until_ready() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      std::optional<std::string> agreed;
      bool ready = true;
      for (std::size_t i = 0; i < master_count && ready; ++i) {
        const std::string info = cli(i, {"CLUSTER", "INFO"});
        const std::string view = slot_map_of(cli(i, {"CLUSTER", "NODES"}));
        last = "node " + std::to_string(i) + ":\n" + info + "\n" + view;
        ready = info.find("cluster_state:ok") != std::string::npos && (!agreed || *agreed == view);
        agreed = view;
      }
      if (ready) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("redis_cluster: not ready in 30 s; last seen " + last);
  }

 private:
  friend class slot_migration;

  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
  }

  static std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(line);
    return lines;
  }

  static std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string word; in >> word;) words.push_back(word);
    return words;
  }

  // CLUSTER NODES without what differs between nodes (flags such as
  // "myself", ping times, links, this node's own migrations): each node's
  // id and slots, sorted.
  static std::string slot_map_of(const std::string& nodes) {
    std::vector<std::string> owners;
    for (const auto& line : lines_of(nodes)) {
      const auto fields = words_of(line);
      if (fields.size() < 8) throw std::runtime_error("redis_cluster: odd CLUSTER NODES line: " + line);
      std::string owner = fields[0];
      for (std::size_t f = 8; f < fields.size(); ++f)
        if (!fields[f].starts_with('[')) owner += ' ' + fields[f];
      owners.push_back(std::move(owner));
    }
    std::sort(owners.begin(), owners.end());
    std::string map;
    for (const auto& owner : owners) map += owner + '\n';
    return map;
  }

  std::size_t index_of(const std::string& id) const {
    const auto at = std::find(ids_.begin(), ids_.end(), id);
    if (at == ids_.end()) throw std::runtime_error("redis_cluster: unknown node id " + id);
    return static_cast<std::size_t>(at - ids_.begin());
  }

  void expect_ok(std::size_t i, const std::vector<std::string>& command) const {
    if (const std::string answer = cli(i, command); answer != "OK") {
      std::string line;
      for (const auto& a : command) line += a + ' ';
      throw std::runtime_error("redis_cluster: node " + std::to_string(i) + " answered " + answer + " to " + line);
    }
  }

  std::array<std::optional<redis_server>, master_count> nodes_;
  std::array<std::string, master_count> ids_;
};

inline std::size_t slot_migration::move_keys(std::size_t at_most) {
  if (at_most == 0) return 0;
  const auto& cluster = *cluster_;
  const auto keys = redis_cluster::lines_of(
      cluster.cli(from_, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot_), std::to_string(at_most)}));
  if (keys.empty()) return 0;
  std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(cluster.node(to_).port()), "", "0", "5000", "KEYS"};
  migrate.insert(migrate.end(), keys.begin(), keys.end());
  // NOKEY: every key left before MIGRATE ran (a client deleted it).
  if (const std::string answer = cluster.cli(from_, migrate); answer != "OK" && answer != "NOKEY")
    throw std::runtime_error("redis_cluster: MIGRATE of slot " + std::to_string(slot_) + " answered " + answer);
  return keys.size();
}

inline std::size_t slot_migration::keys_left() const {
  return static_cast<std::size_t>(std::stoll(cluster_->cli(from_, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot_)})));
}

inline void slot_migration::finish() {
  finished_ = true;
  while (move_keys(100) > 0) {
  }
  auto& cluster = *cluster_;
  const std::string slot = std::to_string(slot_), owner = cluster.node_id(to_);
  cluster.expect_ok(to_, {"CLUSTER", "SETSLOT", slot, "NODE", owner});
  cluster.expect_ok(from_, {"CLUSTER", "SETSLOT", slot, "NODE", owner});
  for (std::size_t i = 0; i < redis_cluster::master_count; ++i)
    if (i != from_ && i != to_) cluster.expect_ok(i, {"CLUSTER", "SETSLOT", slot, "NODE", owner});
  cluster.wait_until_ready();
}

}  // namespace llmgate::test
