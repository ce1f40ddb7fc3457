// log_config: the config's "log" section (operations/request_log.hpp).
#pragma once

#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, only_known_keys
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

struct log_config {
  bool requests = true;  ///< one JSON line per answered request on standard output

  static log_config read(const boost::json::object& section, std::string_view where) {
    detail::only_known_keys(section, where, {"requests"});
    return {detail::config_reader::flag(section, "requests", where, true)};
  }
};

}  // namespace llmgate::inline v0
