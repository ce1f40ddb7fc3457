// chat_assembler: rebuilds a whole chat_response from the chunks of a
// streamed answer, as backends return it after streaming and as a cache
// stage stores it once the stream is complete.
#pragma once

#include <cstdint>  // std::int64_t
#include <string>   // std::string

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/backend/chat.hpp"

namespace llmgate::inline v0 {

class chat_assembler {
 public:
  /// Appends one chunk: content is concatenated, the finish reason and the
  /// usage kept, and tool-call deltas merged by their "index" the way OpenAI
  /// streams them (id, type and name once, arguments in pieces).
  void add(const chat_chunk& chunk) {
    response_.content += chunk.content_delta;
    if (chunk.finish_reason) response_.finish_reason = *chunk.finish_reason;
    if (chunk.usage) response_.usage = *chunk.usage;
    for (const auto& delta : chunk.tool_call_deltas)
      if (const auto* object = delta.if_object()) merge_tool_call(*object);
  }

  /// The answer so far; id, model, backend and cost are the caller's to set.
  const chat_response& response() const& noexcept { return response_; }
  chat_response& response() & noexcept { return response_; }
  chat_response take() && { return std::move(response_); }

 private:
  void merge_tool_call(const boost::json::object& delta) {
    std::size_t index = response_.tool_calls.size();
    if (const auto* i = delta.if_contains("index"); i && i->is_number())
      index = static_cast<std::size_t>(i->to_number<double>());
    if (index > response_.tool_calls.size() + 1024) return;  // nonsense index: ignore
    while (response_.tool_calls.size() <= index)
      response_.tool_calls.push_back(boost::json::object{
          {"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
    auto& call = response_.tool_calls[index].as_object();
    for (const char* key : {"id", "type"})
      if (const auto* value = delta.if_contains(key); value && value->is_string())
        call[key] = *value;
    const auto* function = delta.if_contains("function");
    if (!function || !function->is_object()) return;
    auto& target = call["function"].as_object();
    for (const char* key : {"name", "arguments"})
      if (const auto* piece = function->as_object().if_contains(key); piece && piece->is_string()) {
        auto& text = target[key].as_string();
        text.append(piece->get_string());
      }
  }

  chat_response response_;
};

}  // namespace llmgate::inline v0
