// context_overflow: a prompt longer than the model's context, told apart
// from the rest of an upstream's errors. Every server words it its own way
// (llama.cpp: "the request exceeds the available context size", type
// exceed_context_size_error; OpenAI: code context_length_exceeded; vLLM:
// "This model's maximum context length is N tokens"; Anthropic: "prompt
// is too long"), and some answer it with a 5xx; a client should see one
// code, context_length_exceeded, under 400 whatever the server sent, and
// nobody should send it again.
#pragma once

#include <algorithm>    // std::search
#include <cctype>       // std::tolower
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

namespace llmgate::inline v0::detail {

/// Whether an upstream's error object (OpenAI's {message, type, param,
/// code}, Anthropic's {type, message}, Ollama's {message}) says the prompt
/// did not fit the model's context.
inline bool is_context_overflow(const boost::json::object& upstream) {
  const auto text = [&](std::string_view key) -> std::string_view {
    const auto* field = upstream.if_contains(key);
    return field && field->is_string() ? std::string_view(field->get_string()) : std::string_view();
  };
  if (text("code") == "context_length_exceeded" || text("type") == "exceed_context_size_error") return true;
  const std::string_view message = text("message");
  const auto says = [&](std::string_view phrase) {
    return std::search(message.begin(), message.end(), phrase.begin(), phrase.end(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           }) != message.end();
  };
  return says("available context size") || says("maximum context length") || says("context length exceeded") ||
         says("context window") || says("prompt is too long") || says("exceeds the context length");
}

/// Gives an overflowing request's error object OpenAI's code and type,
/// keeping the upstream's message and other fields; others are left alone.
/// Returns whether it was one.
inline bool mark_context_overflow(boost::json::object& upstream) {
  if (!is_context_overflow(upstream)) return false;
  upstream["code"] = "context_length_exceeded";
  upstream["type"] = "invalid_request_error";
  return true;
}

}  // namespace llmgate::inline v0::detail
