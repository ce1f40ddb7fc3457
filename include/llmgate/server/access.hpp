// access_keys: who a request's key says it comes from. Tenants send
// "Authorization: Bearer <tenant key>"; the admin key opens the admin
// views, as a Bearer token or as ?key= (a browser opening the dashboard);
// /metrics takes the admin key or the config's metrics token (a scraper's
// Bearer token that opens nothing else).
#pragma once

#include <string>         // std::string
#include <string_view>    // std::string_view
#include <functional>     // std::hash, std::equal_to
#include <unordered_map>  // key -> tenant

#include <boost/beast/http/field.hpp>  // boost::beast::http::field

#include "llmgate/server/config.hpp"     // gateway_config
#include "llmgate/server/responses.hpp"  // http_request

namespace llmgate::inline v0 {

class access_keys {
 public:
  explicit access_keys(const gateway_config& config)
      : admin_key_(config.admin_key), metrics_token_(config.metrics_token) {
    for (const auto& tenant : config.tenants) tenant_of_key_[tenant.api_key] = tenant.name;
  }

  /// The tenant whose key the request carries, or nullptr.
  const std::string* tenant_of(const http_request& request) const {
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    constexpr std::string_view bearer = "Bearer ";
    if (!authorization.starts_with(bearer)) return nullptr;
    const auto found = tenant_of_key_.find(authorization.substr(bearer.size()));  // no string made per request
    return found == tenant_of_key_.end() ? nullptr : &found->second;
  }

  /// Whether the request carries the admin key (never, when none is set).
  bool admin(const http_request& request) const {
    if (admin_key_.empty()) return false;
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    if (authorization == "Bearer " + admin_key_) return true;
    const std::string_view target = request.target();
    const auto query = target.find('?');
    if (query == std::string_view::npos) return false;
    for (std::string_view rest = target.substr(query + 1); !rest.empty();) {
      const auto end = rest.find('&');
      if (rest.substr(0, end) == "key=" + admin_key_) return true;
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
    return false;
  }

  /// Whether the request may read /metrics: the admin key, or the metrics
  /// token as a Bearer token (never, when neither is set).
  bool metrics(const http_request& request) const {
    if (admin(request)) return true;
    return !metrics_token_.empty() &&
           request[boost::beast::http::field::authorization] == "Bearer " + metrics_token_;
  }

 private:
  std::string admin_key_;
  std::string metrics_token_;
  // Looked up by string_view: std::hash<std::string_view> hashes a
  // string's characters as std::hash<std::string> does.
  struct key_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_map<std::string, std::string, key_hash, std::equal_to<>> tenant_of_key_;
};

}  // namespace llmgate::inline v0
