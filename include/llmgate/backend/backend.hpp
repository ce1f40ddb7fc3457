// The Backend concept: how a pipeline calls a model, whether over HTTP
// (OpenAI-compatible, Ollama, Anthropic), through a fallback list, or in
// process for tests (scripted_backend).
#pragma once

#include <concepts>     // std::convertible_to, std::same_as
#include <functional>   // std::function
#include <string_view>  // std::string_view

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/chat.hpp"
#include "llmgate/backend/embedding.hpp"

namespace llmgate::inline v0 {

/// Receives each piece of a streamed answer as it arrives. The backend
/// awaits it before reading on, so a slow consumer slows the upstream read
/// (back-pressure) instead of piling chunks up in memory.
using chunk_handler = std::function<boost::asio::awaitable<void>(const chat_chunk&)>;

/// A model behind an asynchronous call.
/// - name(): how logs, errors and chat_response::backend call it.
/// - complete(request): the whole answer (request.stream is ignored).
/// - stream(request, on_chunk): calls on_chunk for every chunk as it
///   arrives, then returns the assembled answer with usage and cost.
/// Both throw backend_error when the model cannot answer. Once on_chunk has
/// been called, nothing may retry or fail over: the caller has seen output.
/// Cancellation: both honour Asio's per-operation cancellation (terminal)
/// of the coroutine that awaits them.
template <class B>
concept Backend = requires(B& backend, const chat_request& request, chunk_handler on_chunk) {
  { backend.name() } -> std::convertible_to<std::string_view>;
  { backend.complete(request) } -> std::same_as<boost::asio::awaitable<chat_response>>;
  { backend.stream(request, on_chunk) } -> std::same_as<boost::asio::awaitable<chat_response>>;
};

/// A backend that also turns texts into vectors (/v1/embeddings, /api/embed).
template <class B>
concept EmbeddingBackend = requires(B& backend, const embedding_request& request) {
  { backend.embed(request) } -> std::same_as<boost::asio::awaitable<embedding_response>>;
};

}  // namespace llmgate::inline v0
