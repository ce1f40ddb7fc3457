// scripted_backend: a Backend that answers in process from a function, for
// tests and offline demos. It streams an answer word by word, then sends the
// usage chunk, the way OpenAI-compatible servers do; the function may throw
// backend_error to play a failing model. Copies share the script and the
// call counter.
#pragma once

#include <atomic>       // std::atomic
#include <cstdint>      // std::uint64_t
#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/backend.hpp"
#include "llmgate/backend/backend_error.hpp"
#include "llmgate/chat/chat.hpp"  // chat_request, chat_response, content_text
#include "llmgate/backend/embedding.hpp"

namespace llmgate::inline v0 {

class scripted_backend {
 public:
  using chat_script = std::function<chat_response(const chat_request&)>;
  using embedding_script = std::function<embedding_response(const embedding_request&)>;

  explicit scripted_backend(std::string name, chat_script answer, embedding_script embed = {})
      : state_(std::make_shared<state>(std::move(name), std::move(answer), std::move(embed))) {}

  /// Answers "echo: <text of the last message>", counting words as tokens.
  static scripted_backend echo(std::string name = "scripted") {
    return scripted_backend(std::move(name), [](const chat_request& request) {
      chat_response response;
      response.id = "chatcmpl-scripted";
      response.model = request.model;
      response.content = "echo: " + (request.messages.empty()
                                          ? std::string()
                                          : content_text(request.messages.back()));
      response.finish_reason = "stop";
      for (const auto& message : request.messages)
        response.usage.prompt_tokens += count_words(content_text(message));
      response.usage.completion_tokens = count_words(response.content);
      return response;
    });
  }

  std::string_view name() const noexcept { return state_->name; }

  /// How many times complete, stream or embed was called.
  std::size_t calls() const noexcept { return state_->calls.load(); }

  boost::asio::awaitable<chat_response> complete(const chat_request& request) {
    co_return answer(request);
  }

  /// Streams the scripted answer word by word (each word with the spaces
  /// before it), the finish reason with the last word, then the usage.
  boost::asio::awaitable<chat_response> stream(const chat_request& request,
                                               chunk_handler on_chunk) {
    chat_response response = answer(request);
    const std::string& text = response.content;
    std::size_t begin = 0;
    while (begin < text.size()) {
      std::size_t end = text.find_first_not_of(' ', begin);
      end = end == std::string::npos ? text.size() : text.find(' ', end);
      if (end == std::string::npos) end = text.size();
      chat_chunk chunk;
      chunk.content_delta = text.substr(begin, end - begin);
      if (end == text.size()) chunk.finish_reason = response.finish_reason;
      co_await on_chunk(chunk);
      begin = end;
    }
    if (text.empty()) {
      chat_chunk last;
      last.finish_reason = response.finish_reason;
      last.tool_call_deltas_json = response.tool_calls_json;
      co_await on_chunk(last);
    }
    chat_chunk usage;
    usage.usage = response.usage;
    co_await on_chunk(usage);
    co_return response;
  }

  /// Answers from the embedding script; throws backend_error where none was given.
  boost::asio::awaitable<embedding_response> embed(const embedding_request& request) {
    ++state_->calls;
    if (!state_->embed)
      throw backend_error(errc::upstream_error, state_->name + " has no embedding script",
                          {.backend = state_->name, .status = 404});
    embedding_response response = state_->embed(request);
    response.backend = state_->name;
    co_return response;
  }

 private:
  struct state {
    state(std::string n, chat_script a, embedding_script e)
        : name(std::move(n)), answer(std::move(a)), embed(std::move(e)) {}
    std::string name;
    chat_script answer;
    embedding_script embed;
    std::atomic<std::size_t> calls{0};
  };

  chat_response answer(const chat_request& request) {
    ++state_->calls;
    chat_response response = state_->answer(request);
    response.backend = state_->name;
    return response;
  }

  static std::uint64_t count_words(std::string_view text) {
    std::uint64_t words = 0;
    bool in_word = false;
    for (const char c : text) {
      const bool space = c == ' ' || c == '\n' || c == '\t';
      words += !space && !in_word;
      in_word = !space;
    }
    return words;
  }

  std::shared_ptr<state> state_;
};

static_assert(Backend<scripted_backend>);
static_assert(EmbeddingBackend<scripted_backend>);

}  // namespace llmgate::inline v0
