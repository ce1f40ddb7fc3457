// shared_config: the config's "shared" section, the tier the gateway's
// replicas share on Redis or Redis Cluster (shared/redis_shared_tier.hpp),
// read and checked here.
#pragma once

#include <cstdint>      // std::uint64_t
#include <cstdlib>      // std::getenv
#include <filesystem>   // std::filesystem::is_regular_file
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, within, only_known_keys, host_and_port
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

/// shared.redis: where the Redis (or the seeds of a cluster) is, and how to
/// log in.
struct shared_redis_config {
  std::vector<std::string> endpoints = {"127.0.0.1:6379"};  ///< "host:port", seeds of a cluster
  std::string user = {};      ///< an ACL user; "" : the default user
  std::string password = {};  ///< from password_env or password; "" : no AUTH; never logged
  unsigned database = 0;
  bool tls = false;           ///< set by a "tls" object
  std::string tls_ca_file = {}, tls_cert_file = {}, tls_key_file = {}, tls_server_name = {};
  bool tls_verify = true;
  unsigned connect_timeout_ms = 1000;
  unsigned command_timeout_ms = 1000;  ///< the background work's commands (writes, stream reads)
  unsigned connections = 2;            ///< per Redis node

  static shared_redis_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"endpoints", "user", "password", "password_env", "database", "tls",
                                             "connect_timeout_ms", "command_timeout_ms", "connections"});
    shared_redis_config r;
    if (section.contains("endpoints")) r.endpoints = read::strings(section, "endpoints", where);
    r.user = read::string(section, "user", where);
    if (const std::string variable = read::string(section, "password_env", where); !variable.empty()) {
      const char* value = std::getenv(variable.c_str());
      if (!value || !*value) detail::refuse(detail::config_path(where, "password_env"), "names " + variable + ", which is not set");
      r.password = value;
    } else {
      r.password = read::string(section, "password", where);
    }
    r.database = read::narrow_count<unsigned>(section, "database", where, r.database, 0, 15);
    if (const auto* tls = read::object(section, "tls", where)) {
      const std::string path = detail::config_path(where, "tls");
      detail::only_known_keys(*tls, path, {"ca_file", "cert_file", "key_file", "server_name", "verify"});
      r.tls = true;
      r.tls_ca_file = read::string(*tls, "ca_file", path);
      r.tls_cert_file = read::string(*tls, "cert_file", path);
      r.tls_key_file = read::string(*tls, "key_file", path);
      r.tls_server_name = read::string(*tls, "server_name", path);
      r.tls_verify = read::flag(*tls, "verify", path, r.tls_verify);
    }
    r.connect_timeout_ms = read::narrow_count<unsigned>(section, "connect_timeout_ms", where, r.connect_timeout_ms, 1, 600'000);
    r.command_timeout_ms = read::narrow_count<unsigned>(section, "command_timeout_ms", where, r.command_timeout_ms, 1, 600'000);
    r.connections = read::narrow_count<unsigned>(section, "connections", where, r.connections, 1, 64);
    return r;
  }

  void check(std::string_view where) const {
    const auto path = [&](std::string_view key) { return detail::config_path(where, key); };
    if (endpoints.empty()) detail::refuse(path("endpoints"), "must list at least one \"host:port\"");
    for (std::size_t i = 0; i < endpoints.size(); ++i)
      if (!detail::host_and_port(endpoints[i]))
        detail::refuse(path("endpoints") + "[" + std::to_string(i) + "]", "must be \"host:port\" (not \"" + endpoints[i] + "\")");
    detail::within<std::uint64_t>(path("database"), database, 0, 15);
    detail::within<std::uint64_t>(path("connect_timeout_ms"), connect_timeout_ms, 1, 600'000);
    detail::within<std::uint64_t>(path("command_timeout_ms"), command_timeout_ms, 1, 600'000);
    detail::within<std::uint64_t>(path("connections"), connections, 1, 64);
    if (!tls && (!tls_ca_file.empty() || !tls_cert_file.empty() || !tls_key_file.empty()))
      detail::refuse(path("tls"), "must be given for its files to be used");
    for (const auto& [field, file] : {std::pair{"ca_file", &tls_ca_file}, {"cert_file", &tls_cert_file}, {"key_file", &tls_key_file}})
      if (!file->empty() && !std::filesystem::is_regular_file(*file))
        detail::refuse(path("tls") + "." + field, "names no file at '" + *file + "'");
    if (tls_cert_file.empty() != tls_key_file.empty()) detail::refuse(path("tls"), "needs both cert_file and key_file, or neither");
  }
};

/// "shared": the Redis, the keys' prefix, what is shared and how the
/// background work is paced.
struct shared_config {
  shared_redis_config redis = {};
  std::string prefix = "llmgate";  ///< of every key the tier writes
  std::string replica = {};        ///< "" : host name and process id
  bool exact = true;
  bool semantic = true;
  unsigned read_timeout_ms = 20;   ///< the longest a request waits for the exact tier's answer
  std::uint64_t max_queued_writes = 10'000;
  unsigned snapshot_interval_s = 60;
  unsigned spending_sync_ms = 200;  ///< how often the tenants' spending is added up across replicas

  static shared_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"redis", "prefix", "replica", "exact", "semantic", "read_timeout_ms",
                                             "max_queued_writes", "snapshot_interval_s", "spending_sync_ms"});
    shared_config s;
    if (const auto* redis = read::object(section, "redis", where))
      s.redis = shared_redis_config::read(*redis, detail::config_path(where, "redis"));
    s.prefix = read::string(section, "prefix", where, s.prefix);
    s.replica = read::string(section, "replica", where);
    s.exact = read::flag(section, "exact", where, s.exact);
    s.semantic = read::flag(section, "semantic", where, s.semantic);
    s.read_timeout_ms = read::narrow_count<unsigned>(section, "read_timeout_ms", where, s.read_timeout_ms, 1, 10'000);
    s.max_queued_writes = read::count(section, "max_queued_writes", where, s.max_queued_writes);
    s.snapshot_interval_s = read::narrow_count<unsigned>(section, "snapshot_interval_s", where, s.snapshot_interval_s, 0, 86'400);
    s.spending_sync_ms = read::narrow_count<unsigned>(section, "spending_sync_ms", where, s.spending_sync_ms, 10, 60'000);
    return s;
  }

  /// The section's own checks; that the caches it shares are on, and that
  /// it shares something (caches, or the tenants' spending), is the gateway
  /// config's (it has the other sections).
  void check(std::string_view where) const {
    const auto path = [&](std::string_view key) { return detail::config_path(where, key); };
    redis.check(path("redis"));
    if (prefix.empty() || prefix.find_first_of("{}") != std::string::npos)
      detail::refuse(path("prefix"), "must be non-empty and hold no '{' or '}' (they mark Redis Cluster hash tags)");
    detail::within<std::uint64_t>(path("read_timeout_ms"), read_timeout_ms, 1, 10'000);
    detail::within<std::uint64_t>(path("max_queued_writes"), max_queued_writes, 1, 10'000'000);
    detail::within<std::uint64_t>(path("snapshot_interval_s"), snapshot_interval_s, 0, 86'400);
    detail::within<std::uint64_t>(path("spending_sync_ms"), spending_sync_ms, 10, 60'000);
  }
};

}  // namespace llmgate::inline v0
