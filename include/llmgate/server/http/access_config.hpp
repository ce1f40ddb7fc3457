// The config's "tenants" and "admin" sections: who may call the gateway
// and with which key (http/access.hpp checks the keys), read and checked
// here, with each tenant's spending limits (spending/spending_limits.hpp).
// Keys come from the environment variables the file names
// (api_key_env), so that the file can be shared; a literal api_key is
// taken for development. Keys are never logged.
#pragma once

#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/array.hpp>                    // boost::json::array
#include <boost/json/object.hpp>                   // boost::json::object
#include <boost/unordered/unordered_flat_map.hpp>  // tenants by key

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, only_known_keys
#include "llmgate/detail/name_set.hpp"       // name_set, string_hash
#include "llmgate/server/spending/spending_limits.hpp"  // spending_limits
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct tenant_config {
  std::string name;
  std::string api_key;  ///< from api_key_env or api_key; never logged
  spending_limits limits = {};  ///< "budget" and "rate_limits"; none by default

  /// The "tenants" list at `where`.
  static std::vector<tenant_config> read_list(const boost::json::array& list, std::string_view where) {
    using read = detail::config_reader;
    std::vector<tenant_config> tenants;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string entry_path = std::string(where) + "[" + std::to_string(i) + "]";
      const auto& entry = read::object_at(list[i], entry_path);
      detail::only_known_keys(entry, entry_path, {"name", "api_key_env", "api_key", "budget", "rate_limits"});
      tenants.push_back({read::string(entry, "name", entry_path), read::secret(entry, entry_path, true),
                         spending_limits::read(entry, entry_path)});
    }
    return tenants;
  }
};

/// "admin": the key of the operator's views, and the token that opens
/// /metrics alone (for a scraper).
struct admin_config {
  std::string api_key = {};        ///< "" : the admin views are off
  std::string metrics_token = {};  ///< "" : none

  static admin_config read(const boost::json::object& section, std::string_view where) {
    detail::only_known_keys(section, where, {"api_key_env", "api_key", "metrics_token"});
    return {detail::config_reader::secret(section, where, true),
            detail::config_reader::string(section, "metrics_token", where)};
  }
};

namespace detail {

/// The tenants at `where` ("tenants") against each other and the admin's
/// key and token: names and keys unique, no tenant holding a key that
/// opens more than its own requests.
inline void check_access(std::span<const tenant_config> tenants, const admin_config& admin, std::string_view where) {
  if (tenants.empty()) refuse(where, "must list at least one tenant with its key");
  name_set names;
  boost::unordered_flat_map<std::string_view, std::string_view, string_hash> tenant_of_key;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const std::string entry = std::string(where) + "[" + std::to_string(i) + "]";
    const auto& tenant = tenants[i];
    if (tenant.name.empty()) refuse(entry + ".name", "must be a non-empty string");
    if (tenant.api_key.empty()) refuse(entry, "needs api_key_env or api_key");
    if (!admin.api_key.empty() && tenant.api_key == admin.api_key)
      refuse(entry, "has the admin key; give the admin a key of its own");
    if (!admin.metrics_token.empty() && tenant.api_key == admin.metrics_token)
      refuse(entry, "has the metrics token as its key, which would open /metrics (every tenant's figures) to it");
    if (!names.insert(tenant.name).second) refuse(entry + ".name", "repeats \"" + tenant.name + "\"");
    if (const auto [at, added] = tenant_of_key.emplace(tenant.api_key, tenant.name); !added)
      refuse(entry, "has the key of tenant \"" + std::string(at->second) + "\"");
  }
}

}  // namespace detail

}  // namespace llmgate::inline v0
