// The Backend concept: how a pipeline calls a model, whether over HTTP
// (OpenAI-compatible, Ollama, Anthropic), through a fallback list, or in
// process for tests (scripted_backend).
#pragma once

#include <concepts>     // std::convertible_to, std::same_as
#include <string_view>  // std::string_view

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/embedding.hpp"   // embedding_request, embedding_response
#include "llmgate/chat/chat.hpp"            // chat_request, chat_response
#include "llmgate/backend/chunk_handler.hpp"   // chunk_handler

namespace llmgate::inline v0 {

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
