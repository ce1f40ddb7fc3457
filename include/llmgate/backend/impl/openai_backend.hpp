// openai_backend's coroutines (backend/openai_backend.hpp describes the
// adapter). Included by openai_backend.hpp itself, unless the program
// compiles them once with LLMGATE_SEPARATE_COMPILATION (llmgate/src.hpp).
#pragma once

#include "llmgate/backend/openai_backend.hpp"

namespace llmgate::inline v0 {

LLMGATE_DECL net::awaitable<chat_response> openai_backend::complete(const chat_request& request, json_fields hints) {
  chat_response response = co_await upstream_.post_text(completions_path_, wire_request(request, false, hints),
                                                        &read_chat_answer, &request.trace);
  detail::finish_response(response, request, options_.name, options_.model, options_.prices.get());
  co_return response;
}

LLMGATE_DECL net::awaitable<chat_response> openai_backend::stream(const chat_request& request, chunk_handler on_chunk,
                                                              json_fields hints) {
  sse_parser parser;
  std::vector<sse_event> events;
  chat_assembler assembled;
  bool done = false;
  // Named, not a temporary of the co_await below: a lambda in the frame of a
  // coroutine that is not inline (LLMGATE_SEPARATE_COMPILATION) draws GCC's
  // -Wsubobject-linkage.
  const body_handler on_bytes = [&](std::string_view bytes) -> net::awaitable<void> {
    events.clear();
    parser.feed(bytes, events);
    for (const auto& event : events) {
      if (done) break;  // nothing counts after [DONE]
      if (event.data == "[DONE]") {
        done = true;
        break;
      }
      const auto value = parse_event(event.data);
      const chat_chunk chunk = parse_chat_chunk(value);
      remember_identity(value.as_object(), assembled.response());
      assembled.add(chunk);
      if (!chunk.content_delta.empty() || chunk.finish_reason || chunk.usage ||
          !chunk.tool_call_deltas_json.empty())
        co_await on_chunk(chunk);
    }
  };
  co_await upstream_.post_streaming(completions_path_, wire_request(request, true, hints), on_bytes, &request.trace);
  if (!done && assembled.response().finish_reason.empty())
    throw backend_error(errc::upstream_protocol_error,
                        options_.name + ": stream ended before data: [DONE]",
                        {.backend = options_.name});
  co_return finish(std::move(assembled).take(), request);
}

LLMGATE_DECL net::awaitable<embedding_response> openai_backend::embed(const embedding_request& request) {
  auto wire = request;
  if (!options_.model.empty()) wire.model = options_.model;
  const std::size_t count = wire.input.size();
  embedding_response response =
      co_await upstream_.post(path("/embeddings"), boost::json::serialize(to_json(wire)), embeddings_reader{count});
  response.backend = options_.name;
  if (response.model.empty()) response.model = wire.model;
  if (options_.prices) response.cost_usd = options_.prices->cost(response.model, response.usage);
  co_return response;
}

LLMGATE_DECL net::awaitable<std::vector<std::string>> openai_backend::models() {
  co_return co_await upstream_.get(path("/models"), &read_model_ids);
}

}  // namespace llmgate::inline v0
