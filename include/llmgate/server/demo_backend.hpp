// The offline demo backend: answers in process, with no model and no
// network, so that the gateway can be tried anywhere. Its answers say
// plainly that they are canned; its usage and price are made up but
// consistent, so the cost and savings figures move as they would.
#pragma once

#include <string>  // std::string

#include "llmgate/backend/scripted_backend.hpp"

namespace llmgate::inline v0 {

inline scripted_backend make_demo_backend(std::string name = "demo") {
  return scripted_backend(std::move(name), [](const chat_request& request) {
    const std::string question =
        request.messages.empty() ? std::string() : detail::content_text(request.messages.back().content);
    chat_response response;
    response.id = "chatcmpl-demo";
    response.model = request.model;
    response.content = "(offline demo backend) You asked: \"" + question +
                       "\". Set LLMGATE_UPSTREAM to an OpenAI-compatible server for real answers.";
    response.finish_reason = "stop";
    response.usage.prompt_tokens = 20 + question.size() / 4;
    response.usage.completion_tokens = 20 + question.size() / 4;
    // As if priced at $0.15 / $0.60 per 1M tokens (a small hosted model).
    response.cost_usd = (0.15 * static_cast<double>(response.usage.prompt_tokens) +
                         0.60 * static_cast<double>(response.usage.completion_tokens)) / 1e6;
    return response;
  });
}

}  // namespace llmgate::inline v0
