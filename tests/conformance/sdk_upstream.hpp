// The in-test upstream's answers that the SDK suites' scripts
// (openai_sdk.mjs, anthropic_sdk.mjs) expect of test-model: "Answer to:
// <last message>", streamed or not; the tool "weather" called (town Oslo)
// for a question starting "CALL weather"; a 500 for one starting "FAIL", a
// 429 (wait a second) for "RATE LIMIT", a 529 (overloaded, as Anthropic's
// API says it) for "OVERLOADED";
// the upstream's 400 context_length_exceeded for one starting "TOO LONG";
// and, for one starting "burst", the answer after a pause, so that a burst
// holds one connection per request.
#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <string>  // std::string

#include <boost/json.hpp>  // boost::json::parse

#include "../backend/upstream_server.hpp"  // reply, received_request
#include "llmgate/wire/openai_wire.hpp"    // parse_chat_request

namespace llmgate::test {

inline reply sdk_upstream_answer(const received_request& request) {
  const auto chat = parse_chat_request(request.json());
  const std::string question = content_text(chat.messages.back());
  if (question.starts_with("FAIL")) return reply::openai_error(500, "server_error", "internal", "upstream broke");
  if (question.starts_with("RATE LIMIT")) return reply::rate_limited(std::chrono::seconds(1));
  if (question.starts_with("OVERLOADED"))
    return reply::json(boost::json::parse(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
                       529);
  if (question.starts_with("TOO LONG"))
    return reply::openai_error(400, "invalid_request_error", "context_length_exceeded",
                               "This model's maximum context length is 512 tokens.");
  if (question.starts_with("CALL weather"))
    return reply::json(boost::json::parse(R"({"id":"chatcmpl-tool","object":"chat.completion","created":1700000000,
        "model":"test-model","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
        "content":null,"tool_calls":[{"id":"call_1","type":"function",
        "function":{"name":"weather","arguments":"{\"town\":\"Oslo\"}"}}]}}],
        "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})"));
  const std::string text = "Answer to: " + question;
  auto out = chat.stream ? reply::chat_stream({text.substr(0, 10), text.substr(10)}) : reply::chat(text);
  if (question.starts_with("burst")) out.first_byte_delay = std::chrono::milliseconds(200);
  return out;
}

}  // namespace llmgate::test
