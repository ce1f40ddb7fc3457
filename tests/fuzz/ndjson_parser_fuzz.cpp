// libFuzzer target: the NDJSON parser and Ollama's line decoder on any
// bytes, cut into pieces where the input says.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llmgate/backend/ndjson_parser.hpp"
#include "llmgate/backend/ollama_backend.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 32;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  llmgate::ndjson_parser parser(4096);
  std::vector<boost::json::value> lines;
  llmgate::chat_response response;
  try {
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      lines.clear();
      parser.feed(bytes.substr(at, piece), lines);
      for (const auto& line : lines) (void)llmgate::detail::parse_ollama_chunk(line, response, 0, "fuzz");
    }
  } catch (const llmgate::error&) {  // backend_error derives from it
  }
  return 0;
}
