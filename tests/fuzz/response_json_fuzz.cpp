// libFuzzer target: every decoder of JSON that a client or a model server
// sends (chat and embedding requests, OpenAI and Anthropic answers,
// embeddings, price tables) on any JSON the input parses to.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/parse.hpp>

#include "llmgate/backend/anthropic_backend.hpp"
#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form
#include "llmgate/backend/embedding.hpp"
#include "llmgate/backend/price_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code code;
  const auto value = boost::json::parse(
      std::string_view(reinterpret_cast<const char*>(data), size), code);
  if (code) return 0;
  const auto attempt = [&](auto decode) {
    try {
      decode();
    } catch (const llmgate::error&) {
    }
  };
  // What is read is written again as valid JSON.
  const auto must_be_json = [](const std::string& text) {
    boost::system::error_code invalid;
    (void)boost::json::parse(text, invalid);
    if (invalid) __builtin_trap();
  };
  attempt([&] { must_be_json(llmgate::completion_body(llmgate::parse_chat_response(value))); });
  attempt([&] { must_be_json(llmgate::chunk_body(llmgate::parse_chat_chunk(value), "id", "m", 1)); });
  attempt([&] { (void)llmgate::parse_chat_request(value); });
  attempt([&] { (void)llmgate::parse_embedding_request(value); });
  attempt([&] { (void)llmgate::parse_embedding_response(value, size % 4); });
  attempt([&] { (void)llmgate::detail::parse_anthropic_response(value); });
  attempt([&] { (void)llmgate::price_table::from_json(value); });
  attempt([&] {  // what the gateway does with a request it accepted
    const auto request = llmgate::parse_chat_request(value);
    must_be_json(llmgate::chat_request_body(request, {.stream = true, .include_usage = true}));
    (void)llmgate::detail::anthropic_request(request, {}, true);
  });
  return 0;
}
