// libFuzzer target: the SSE parser and the OpenAI chunk decoder on any
// bytes, cut into pieces where the input says. Everything may be refused
// with llmgate::error; nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>

#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/backend/sse_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte chooses the piece size, so splits land everywhere.
  const std::size_t piece = 1 + data[0] % 32;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  llmgate::sse_parser parser(4096);
  std::vector<llmgate::sse_event> events;
  try {
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      events.clear();
      parser.feed(bytes.substr(at, piece), events);
      for (const auto& event : events) {
        boost::system::error_code code;
        const auto value = boost::json::parse(event.data, code);
        if (!code) (void)llmgate::parse_chat_chunk(value);
      }
    }
  } catch (const llmgate::error&) {
  }
  return 0;
}
