// Config texts for the tests of gateway_config's reading: the smallest
// valid file, that file with one member changed, and the message a text
// is refused with.
#pragma once

#include <string>  // std::string

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/error.hpp"                  // llmgate::error (a config_error is one)
#include "llmgate/server/gateway_config.hpp"  // gateway_config

namespace llmgate::test {

inline constexpr const char* minimal_config = R"({
  "models": ["gpt-4o-mini"],
  "backends": [{"name": "primary", "base_url": "https://api.openai.com/v1"}],
  "tenants": [{"name": "acme", "api_key": "sk-acme"}]
})";

/// `minimal_config` with one top-level member replaced or added.
inline std::string with(const std::string& member, const std::string& value) {
  auto config = boost::json::parse(minimal_config).as_object();
  config[member] = boost::json::parse(value);
  return boost::json::serialize(config);
}

/// The message the config `text` is refused with ("" when it is accepted).
inline std::string refusal(const std::string& text) {
  try {
    (void)gateway_config::from_json(boost::json::parse(text));
    return {};
  } catch (const error& e) {
    return e.what();
  }
}

}  // namespace llmgate::test
