// cached_answer: a chat answer as the cache stages store it, how it is
// measured and saved in snapshots, and how a stored answer is served
// (replayed piece by piece when the caller streams).
#pragma once

#include <chrono>       // std::chrono::system_clock
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::int64_t
#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::error_code

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable
#include <boost/json/array.hpp>      // boost::json::array
#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/parse.hpp>      // boost::json::parse

#include "llmgate/cache/value_traits.hpp"
#include "llmgate/chat/chat.hpp"           // chat_response, chat_chunk
#include "llmgate/backend/chunk_handler.hpp"  // chunk_handler
#include "llmgate/wire/openai_wire.hpp"    // detail::array_of, detail::json_text
#include "llmgate/pipeline/request_context.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

/// Shared and immutable, so that a hit copies a pointer, not the text.
using cached_answer = std::shared_ptr<const chat_response>;

/// Whether an answer is complete enough to serve again: it ended by itself
/// (stop, tool_calls) or at the length limit the same request sets again,
/// not cut off by a filter or by a broken stream.
inline bool is_cacheable(const chat_response& response) noexcept {
  return response.finish_reason == "stop" || response.finish_reason == "length" ||
         response.finish_reason == "tool_calls";
}

template <>
struct cache_value_traits<cached_answer> {
  static std::size_t bytes(const cached_answer& answer) {
    return sizeof(chat_response) + answer->id.size() + answer->model.size() + answer->content.size() +
           answer->finish_reason.size() + answer->backend.size() + answer->tool_calls_json.size();
  }

  static void write(store::snapshot_writer& out, const cached_answer& answer) {
    out.write_string(answer->id);
    out.write_string(answer->model);
    out.write_string(answer->content);
    out.write_string(answer->finish_reason);
    out.write_string(answer->tool_calls_json.empty() ? std::string_view("[]") : answer->tool_calls_json);
    for (const std::uint64_t count : {answer->usage.prompt_tokens, answer->usage.completion_tokens,
                                      answer->usage.cached_prompt_tokens, answer->usage.cache_write_tokens})
      out.write(count);
    out.write(answer->cost_usd);
    out.write_string(answer->backend);
    out.write(answer->created);
  }

  static cached_answer read(store::snapshot_reader& in) {
    auto answer = std::make_shared<chat_response>();
    answer->id = in.read_string();
    answer->model = in.read_string();
    answer->content = in.read_string();
    answer->finish_reason = in.read_string();
    std::string tool_calls = in.read_string();
    std::error_code ec;
    const auto parsed = boost::json::parse(tool_calls, ec);
    if (ec || !parsed.is_array()) in.mark_corrupt();
    else if (!parsed.get_array().empty()) answer->tool_calls_json = std::move(tool_calls);
    for (std::uint64_t* count : {&answer->usage.prompt_tokens, &answer->usage.completion_tokens,
                                 &answer->usage.cached_prompt_tokens, &answer->usage.cache_write_tokens})
      *count = in.read<std::uint64_t>();
    answer->cost_usd = in.read<double>();
    answer->backend = in.read_string();
    answer->created = in.read<std::int64_t>();
    return answer;
  }
};

namespace detail {

// Replays a stored answer as a stream: content in pieces of about
// `piece` bytes cut after a space (never inside a UTF-8 character), tool
// calls, the finish reason, then usage, as a model server sends them.
inline boost::asio::awaitable<void> replay_as_chunks(const chat_response& answer, const chunk_handler& on_chunk,
                                                     std::size_t piece = 32) {
  std::string_view rest = answer.content;
  while (!rest.empty()) {
    std::size_t end = rest.find(' ', piece);
    end = end == std::string_view::npos ? rest.size() : end + 1;
    chat_chunk content;
    content.content_delta = rest.substr(0, end);
    co_await on_chunk(content);
    rest.remove_prefix(end);
  }
  chat_chunk finish;
  finish.finish_reason = answer.finish_reason;
  if (!answer.tool_calls_json.empty()) {
    boost::json::array deltas;
    for (auto& call : detail::array_of(answer.tool_calls_json)) {
      boost::json::object delta = call.is_object() ? std::move(call.get_object()) : boost::json::object{};
      delta["index"] = deltas.size();
      deltas.push_back(std::move(delta));
    }
    if (!deltas.empty()) finish.tool_call_deltas_json = detail::json_text(deltas);
  }
  co_await on_chunk(finish);
  chat_chunk usage;
  usage.usage = answer.usage;
  co_await on_chunk(usage);
}

}  // namespace detail

/// Unix seconds now: what a stored answer's age is measured against.
inline std::int64_t unix_seconds_now() noexcept {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A fresh answer as a cache stage stores it: `created` says when it was
/// stored, by this clock, which max-age (cache_directives) measures from.
inline cached_answer stored_answer(const chat_response& response) {
  auto stored = std::make_shared<chat_response>(response);
  stored->created = unix_seconds_now();
  return stored;
}

/// Whether a stored answer may be served to the request of `context`
/// (its max-age, when it sets one).
inline bool servable(const cached_answer& answer, const request_context& context) noexcept {
  // No clock read on the hit path unless the request set a max-age.
  return !context.cache_control.max_age || context.cache_control.fresh_enough(answer->created, unix_seconds_now());
}

/// The answer a cache stage returns for a hit: the stored one, which cost
/// nothing this time (context.saved_usd says what it cost when computed).
/// What serve_cached does for a caller that does not stream, without a
/// coroutine frame of its own.
inline chat_response cached_response(const cached_answer& answer, request_context& context) {
  context.saved_usd = answer->cost_usd;
  chat_response response = *answer;
  response.cost_usd = 0;
  return response;
}

/// cached_response, streamed to context.on_chunk when the caller streams.
inline boost::asio::awaitable<chat_response> serve_cached(const cached_answer& answer, request_context& context) {
  chat_response response = cached_response(answer, context);
  if (context.streaming()) co_await detail::replay_as_chunks(response, context.on_chunk);
  co_return response;
}

}  // namespace llmgate::inline v0
