// libFuzzer target: the PML reader, parser and compiler on any bytes. An
// input holding "\n====\n" is a schema before it and a prompt after it,
// compiled together; any other input is read both as a schema and as a
// prompt. Everything may be refused with pml_error; nothing may crash,
// hang or leak, and a compiled prompt's layout must lie inside its
// messages. src= paths resolve under a folder that does not exist.
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string_view>  // std::string_view

#include "llmgate/prompt/compiler.hpp"    // compile_prompt
#include "llmgate/prompt/pml_parser.hpp"  // parse_schema, parse_prompt
#include "llmgate/prompt/tokenizer.hpp"   // estimated_tokenizer

namespace {

void check_layout(const llmgate::chat_request& request) {
  const auto& layout = *request.layout;
  const auto& messages = request.messages;
  if (messages.empty() || layout.prefix_message >= messages.size() ||
      layout.prefix_end > messages[layout.prefix_message].content.size() || layout.prefix_tokens > layout.total_tokens ||
      !layout.whole_schema)
    __builtin_trap();
  for (const auto& span : layout.modules)
    if (span.message >= messages.size() || span.begin > span.end || span.end > messages[span.message].content.size() ||
        span.token_begin > span.token_end || span.token_end > layout.total_tokens)
      __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string_view base_dir = "/nonexistent-llmgate-pml-fuzz";
  const llmgate::estimated_tokenizer tokenizer;
  const auto split = bytes.find("\n====\n");
  if (split == std::string_view::npos) {
    try {
      (void)llmgate::parse_schema(bytes, base_dir);
    } catch (const llmgate::pml_error&) {
    }
    try {
      (void)llmgate::parse_prompt(bytes);
    } catch (const llmgate::pml_error&) {
    }
    return 0;
  }
  try {
    const auto schema = llmgate::parse_schema(bytes.substr(0, split), base_dir);
    const auto prompt = llmgate::parse_prompt(bytes.substr(split + 6));
    check_layout(llmgate::compile_prompt(schema, prompt, tokenizer));
  } catch (const llmgate::pml_error&) {
  }
  return 0;
}
