// base_url: where a model server lives, parsed once from text such as
// "https://api.openai.com/v1" or "http://127.0.0.1:11434". Adapters append
// their API paths to `path`.
#pragma once

#include <charconv>     // std::from_chars
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

struct base_url {
  bool tls = false;    ///< https
  std::string host;    ///< name or address, without brackets for IPv6
  std::string port;    ///< "443", "80" or as given
  std::string path;    ///< no trailing slash; "" for the root

  /// Parses http[s]://host[:port][/path]. Throws llmgate::error
  /// (errc::invalid_request) for another scheme, an empty host or a bad port.
  static base_url parse(std::string_view text) {
    base_url url;
    if (text.starts_with("https://")) {
      url.tls = true;
      text.remove_prefix(8);
    } else if (text.starts_with("http://")) {
      text.remove_prefix(7);
    } else {
      throw error(errc::invalid_request, "base URL must start with http:// or https://");
    }
    const auto slash = text.find('/');
    std::string_view authority = text.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? "" : text.substr(slash);
    while (path.ends_with('/')) path.remove_suffix(1);
    url.path = path;
    std::string_view port;
    if (authority.starts_with('[')) {  // [::1]:8080
      const auto close = authority.find(']');
      if (close == std::string_view::npos) throw error(errc::invalid_request, "base URL has a bad IPv6 host");
      url.host = authority.substr(1, close - 1);
      if (close + 1 < authority.size() && authority[close + 1] == ':') port = authority.substr(close + 2);
    } else {
      const auto colon = authority.rfind(':');
      url.host = authority.substr(0, colon);
      if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    }
    if (url.host.empty()) throw error(errc::invalid_request, "base URL has no host");
    unsigned number = 0;
    if (!port.empty()) {
      const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
      if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535)
        throw error(errc::invalid_request, "base URL has a bad port");
    }
    url.port = port.empty() ? (url.tls ? "443" : "80") : std::string(port);
    return url;
  }

  /// What the Host header says: the host, with the port unless it is the default.
  std::string host_header() const {
    std::string text = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (port != (tls ? "443" : "80")) text += ":" + port;
    return text;
  }

  /// Names the connection pool a request may reuse a connection from.
  std::string origin() const { return (tls ? "https://" : "http://") + host_header(); }
};

}  // namespace llmgate::inline v0
