// libFuzzer target, differential: the OpenAI adapter reads a chat.completion
// answer without a JSON tree (wire/detail/chat_response_reader.hpp); what it
// takes must be JSON, and read exactly as parse_chat_response reads its tree
// (anything it does not take goes to that tree path). And the JSON writer's
// string escaping (wire/detail/json_appender.hpp) must equal Boost.JSON's
// on UTF-8; on other bytes, which it writes as U+FFFD where Boost.JSON
// copies them, what it writes must be a JSON string.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/wire/detail/chat_response_reader.hpp"
#include "llmgate/wire/detail/json_appender.hpp"
#include "llmgate/wire/openai_wire.hpp"

namespace {

bool same(const llmgate::chat_response& a, const llmgate::chat_response& b) {
  return a.id == b.id && a.model == b.model && a.content == b.content && a.finish_reason == b.finish_reason &&
         a.tool_calls_json == b.tool_calls_json && a.usage.prompt_tokens == b.usage.prompt_tokens &&
         a.usage.completion_tokens == b.usage.completion_tokens &&
         a.usage.cached_prompt_tokens == b.usage.cached_prompt_tokens &&
         a.usage.cache_write_tokens == b.usage.cache_write_tokens && a.cost_usd == b.cost_usd &&
         a.backend == b.backend && a.created == b.created;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string escaped;
  llmgate::detail::json_appender(escaped).string(text);
  const std::string serialized = boost::json::serialize(boost::json::string_view(text.data(), text.size()));
  boost::system::error_code not_utf8;  // Boost.JSON's parser refuses a string that is not UTF-8
  (void)boost::json::parse(serialized, not_utf8);
  if (!not_utf8) {
    if (escaped != serialized) __builtin_trap();
  } else {
    boost::system::error_code not_json;
    const auto written = boost::json::parse(escaped, not_json);
    if (not_json || !written.is_string()) __builtin_trap();
  }

  llmgate::chat_response fast;
  if (!llmgate::detail::read_chat_response(text, fast)) return 0;
  boost::system::error_code code;
  const auto tree = boost::json::parse(text, code);
  if (code) __builtin_trap();  // taken, but not JSON
  std::optional<llmgate::chat_response> slow;
  try {
    slow = llmgate::parse_chat_response(tree);
  } catch (const llmgate::error&) {
    __builtin_trap();  // taken, but the tree path refuses it
  }
  if (!same(fast, *slow)) __builtin_trap();
  return 0;
}
