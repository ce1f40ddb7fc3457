// The offline demo backend: answers in process, with no model and no
// network, so that the gateway can be tried anywhere. Its answers say
// plainly that they are canned; its usage and price are made up but
// consistent, so the cost and savings figures move as they would. It
// honours max_tokens (and max_completion_tokens) as a model server does,
// counting a word as a token, so that clients and conformance checks see
// an answer cut at the limit end with finish_reason "length".
#pragma once

#include <algorithm>    // std::min
#include <charconv>     // std::from_chars
#include <cstdint>      // std::uint64_t
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <sstream>      // std::istringstream
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/backend/scripted_backend.hpp"

namespace llmgate::inline v0 {

namespace detail {

// The JSON text of a positive integer (as an int64 reads it), or nothing.
inline std::optional<std::uint64_t> positive_integer(std::string_view json) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(json.data(), json.data() + json.size(), n);
  if (ec != std::errc() || end != json.data() + json.size() || n <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(n);
}

}  // namespace detail

inline scripted_backend make_demo_backend(std::string name = "demo") {
  return scripted_backend(std::move(name), [](const chat_request& request) {
    const std::string question =
        request.messages.empty() ? std::string() : content_text(request.messages.back());
    chat_response response;
    response.id = "chatcmpl-demo";
    response.model = request.model;
    response.content = "(offline demo backend) You asked: \"" + question +
                       "\". Set LLMGATE_UPSTREAM to an OpenAI-compatible server for real answers.";
    response.finish_reason = "stop";
    response.usage.prompt_tokens = 20 + question.size() / 4;
    response.usage.completion_tokens = 20 + question.size() / 4;

    auto limit = std::numeric_limits<std::uint64_t>::max();
    for (const char* field : {"max_tokens", "max_completion_tokens"})
      if (const auto* value = find_field(request.parameters, field))
        if (const auto n = detail::positive_integer(value->json)) limit = std::min(limit, *n);
    if (limit < response.usage.completion_tokens) {
      std::istringstream words(response.content);
      std::string word, cut;
      for (std::uint64_t n = 0; n < limit && words >> word; ++n) cut += (cut.empty() ? "" : " ") + word;
      response.content = cut;
      response.usage.completion_tokens = limit;
      response.finish_reason = "length";
    }
    // As if priced at $0.15 / $0.60 per 1M tokens (a small hosted model).
    response.cost_usd = (0.15 * static_cast<double>(response.usage.prompt_tokens) +
                         0.60 * static_cast<double>(response.usage.completion_tokens)) / 1e6;
    return response;
  });
}

}  // namespace llmgate::inline v0
