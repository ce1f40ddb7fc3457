// chat_assembler: rebuilds a whole chat_response from the chunks of a
// streamed answer, as backends return it after streaming and as a cache
// stage stores it once the stream is complete.
#pragma once

#include <cstddef>  // std::size_t
#include <string>   // std::string
#include <utility>  // std::move

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/wire/openai_wire.hpp"  // chat_chunk, chat_response, detail::json_text

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
    if (!chunk.tool_call_deltas_json.empty())
      for (const auto& delta : detail::array_of(chunk.tool_call_deltas_json))
        if (const auto* object = delta.if_object()) merge_tool_call(*object);
  }

  /// The answer so far; id, model, backend and cost are the caller's to set.
  /// Its tool_calls_json is written by take().
  const chat_response& response() const& noexcept { return response_; }
  chat_response& response() & noexcept { return response_; }

  /// How many tool calls the answer holds so far.
  std::size_t tool_call_count() const noexcept { return tool_calls_.size(); }

  /// The whole answer, tool calls included.
  chat_response take() && {
    if (!tool_calls_.empty()) response_.tool_calls_json = detail::json_text(tool_calls_);
    return std::move(response_);
  }

 private:
  void merge_tool_call(const boost::json::object& delta) {
    std::size_t index = tool_calls_.size();
    if (const auto* i = delta.if_contains("index"); i && i->is_number())
      index = static_cast<std::size_t>(i->to_number<double>());
    if (index > tool_calls_.size() + 1024) return;  // nonsense index: ignore
    while (tool_calls_.size() <= index)
      tool_calls_.push_back(boost::json::object{
          {"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
    auto& call = tool_calls_[index].as_object();
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
  boost::json::array tool_calls_;  // merged as deltas come; written out by take()
};

}  // namespace llmgate::inline v0
