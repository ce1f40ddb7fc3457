// listen_config: the config's "listen" section, where the gateway accepts
// connections and how many worker threads serve them (http/listener.hpp).
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/asio/ip/address.hpp>  // boost::asio::ip::make_address (the address is checked)
#include <boost/json/object.hpp>      // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, within, only_known_keys
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct listen_config {
  static constexpr unsigned max_threads = 1024;

  std::string address = "127.0.0.1";
  unsigned short port = 8080;  ///< 0: a free port the system picks
  unsigned threads = 2;

  /// The section at `where` ("listen"); refuses an unknown key or a value
  /// out of its range, naming it.
  static listen_config read(const boost::json::object& section, std::string_view where) {
    using read = detail::config_reader;
    detail::only_known_keys(section, where, {"address", "port", "threads"});
    listen_config listen;
    listen.address = read::string(section, "address", where, listen.address);
    listen.port = read::narrow_count<unsigned short>(section, "port", where, listen.port, 0, 65535);
    listen.threads = read::narrow_count<unsigned>(section, "threads", where, listen.threads, 1, max_threads);
    return listen;
  }

  void check(std::string_view where) const {
    boost::system::error_code bad_address;
    (void)boost::asio::ip::make_address(address, bad_address);
    if (bad_address)
      detail::refuse(detail::config_path(where, "address"), "must be an IPv4 or IPv6 address, not \"" + address + "\"");
    detail::within<unsigned>(detail::config_path(where, "threads"), threads, 1, max_threads);
  }
};

}  // namespace llmgate::inline v0
