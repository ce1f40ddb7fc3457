// libFuzzer target: any bytes as the gateway's configuration file, read as
// gateway_config::load reads one (Boost.JSON with its default options) and
// then gateway_config::from_json, which reads every section and check()s
// it. A config may be refused with llmgate::error (config_error derives
// from it); nothing may crash, hang, leak or throw anything else. Paths in
// it are only looked at (is_regular_file, exists), never opened.
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code

#include <boost/json/parse.hpp>  // boost::json::parse

#include "llmgate/error.hpp"                  // llmgate::error
#include "llmgate/server/gateway_config.hpp"  // gateway_config, config_error

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::error_code ec;
  const boost::json::value value = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return 0;
  try {
    (void)llmgate::gateway_config::from_json(value);
  } catch (const llmgate::error&) {
  }
  return 0;
}
