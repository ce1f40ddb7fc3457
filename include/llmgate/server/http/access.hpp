// access_keys: who a request's key says it comes from. Tenants send
// "Authorization: Bearer <tenant key>" (the scheme's name in any case, as
// RFC 9110 section 11.1 has it), or "x-api-key: <tenant key>" as
// Anthropic's clients do; the admin key opens the admin views, as a
// Bearer token or, on GET and HEAD only, as ?key= (a browser opening the
// dashboard); /metrics takes the admin key or the config's metrics token
// (a scraper's Bearer token that opens nothing else).
//
// No comparison tells a caller how much of a key it guessed: keys are kept
// as SHA-256 digests, a presented key is digested, and digests are
// compared in constant time (the tenants' are found by digest, which
// leaks nothing about a key to one who does not know it).
#pragma once

#include <array>          // std::array
#include <cstddef>        // std::size_t
#include <cstring>        // std::memcpy
#include <optional>       // std::optional
#include <span>           // std::span
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // digest -> tenant

#include <boost/beast/http/field.hpp>  // boost::beast::http::field
#include <boost/beast/http/verb.hpp>   // boost::beast::http::verb

#include <openssl/crypto.h>  // CRYPTO_memcmp
#include <openssl/sha.h>     // SHA256

#include "llmgate/server/http/access_config.hpp"  // tenant_config, admin_config
#include "llmgate/server/http/responses.hpp"      // http_request

namespace llmgate::inline v0 {

class access_keys {
 public:
  access_keys(std::span<const tenant_config> tenants, const admin_config& admin) {
    if (!admin.api_key.empty()) admin_key_ = digest_of(admin.api_key);
    if (!admin.metrics_token.empty()) metrics_token_ = digest_of(admin.metrics_token);
    for (const auto& tenant : tenants) tenant_of_key_[digest_of(tenant.api_key)] = tenant.name;
  }

  /// The tenant whose key the request carries, or nullptr.
  const std::string* tenant_of(const http_request& request) const {
    auto token = bearer_token(request);
    if (!token) token = api_key_header(request);
    if (!token) return nullptr;
    const auto found = tenant_of_key_.find(digest_of(*token));
    return found == tenant_of_key_.end() ? nullptr : &found->second;
  }

  /// Whether the request carries the admin key (never, when none is set).
  bool admin(const http_request& request) const {
    if (!admin_key_) return false;
    if (const auto token = bearer_token(request)) return same(*admin_key_, *token);
    const auto method = request.method();
    if (method != boost::beast::http::verb::get && method != boost::beast::http::verb::head) return false;
    const std::string_view target = request.target();
    const auto query = target.find('?');
    if (query == std::string_view::npos) return false;
    for (std::string_view rest = target.substr(query + 1); !rest.empty();) {
      const auto end = rest.find('&');
      const std::string_view parameter = rest.substr(0, end);
      if (parameter.starts_with("key=") && same(*admin_key_, parameter.substr(4))) return true;
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
    return false;
  }

  /// Whether the request may read /metrics: the admin key, or the metrics
  /// token as a Bearer token (never, when neither is set).
  bool metrics(const http_request& request) const {
    if (admin(request)) return true;
    const auto token = bearer_token(request);
    return metrics_token_ && token && same(*metrics_token_, *token);
  }

 private:
  using digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

  static digest digest_of(std::string_view key) {
    digest d;
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), d.data());
    return d;
  }

  static bool same(const digest& expected, std::string_view presented) {
    const digest d = digest_of(presented);
    return CRYPTO_memcmp(expected.data(), d.data(), d.size()) == 0;
  }

  // The token of "Authorization: Bearer <token>", the scheme in any case.
  static std::optional<std::string_view> bearer_token(const http_request& request) {
    const std::string_view authorization = request[boost::beast::http::field::authorization];
    constexpr std::string_view scheme = "bearer ";
    if (authorization.size() < scheme.size()) return std::nullopt;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
      const char c = authorization[i];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return std::nullopt;
    }
    return authorization.substr(scheme.size());
  }

  // The key of "x-api-key: <key>" (looked up only where there is no Bearer token).
  static std::optional<std::string_view> api_key_header(const http_request& request) {
    const auto found = request.find("x-api-key");
    if (found == request.end()) return std::nullopt;
    return std::string_view(found->value().data(), found->value().size());
  }

  struct digest_hash {
    std::size_t operator()(const digest& d) const noexcept {
      std::size_t h;  // a digest's bytes are as good as a hash's
      std::memcpy(&h, d.data(), sizeof h);
      return h;
    }
  };

  std::optional<digest> admin_key_;
  std::optional<digest> metrics_token_;
  std::unordered_map<digest, std::string, digest_hash> tenant_of_key_;
};

}  // namespace llmgate::inline v0
