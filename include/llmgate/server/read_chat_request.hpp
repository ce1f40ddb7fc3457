// read_chat_request: the PML prompt a chat request may carry, compiled into the
// request as soon as it is read, so that everything after the reading (the
// user's stages, the router, the exact and semantic caches, the backends)
// sees the compiled messages: a PML prompt and its plain equivalent are the
// same request to the caches and share their entries.
//
// A request carries PML in one of two places, never both:
//
//   "pml": "<prompt schema=...>...</prompt>"   a field of the body (taken out
//       of the request: it is neither sent on nor part of a cache scope).
//       The compiled messages come first, then the request's own messages,
//       which may be left out: the prompt's modules make the stable prefix
//       that servers reuse, the conversation follows it.
//   a message whose content is a string starting (after white space) with
//       "<prompt" and then white space, ">" or "/": that message is
//       replaced, where it stands, by the compiled messages (with the roles
//       the prompt's <system>/<user>/<assistant> blocks give them).
//
// At most one PML prompt per request. A prompt that cannot be compiled
// (unknown schema, module or parameter, a missing or too long argument,
// malformed markup) is a request_error: a 400 naming "pml" or
// "messages[i].content", whose message carries the compiler's line and
// column. Arguments are measured by estimated_tokenizer: the gateway does
// not know every upstream's tokenizer.
#pragma once

#include <cstddef>      // std::size_t, std::ptrdiff_t
#include <iterator>     // std::make_move_iterator
#include <memory>       // std::make_shared
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>               // boost::json::array (messages of a pml-only request)
#include <boost/json/monotonic_resource.hpp>  // an arena on the stack for a body's parse
#include <boost/json/object.hpp>              // boost::json::object
#include <boost/json/parse.hpp>               // boost::json::parse
#include <boost/json/value.hpp>               // boost::json::value

#include "llmgate/chat/chat.hpp"                        // chat_request, chat_message
#include "llmgate/wire/detail/standard_parameters.hpp"  // wrong_type
#include "llmgate/wire/openai_wire.hpp"                 // parse_chat_request
#include "llmgate/chat/request_error.hpp"               // request_error
#include "llmgate/prompt/compiler.hpp"                  // compile_prompt
#include "llmgate/prompt/pml_error.hpp"                 // pml_error
#include "llmgate/prompt/prompt_layout.hpp"             // prompt_layout
#include "llmgate/prompt/schema_registry.hpp"           // schema_registry
#include "llmgate/prompt/tokenizer.hpp"                 // Tokenizer, estimated_tokenizer

namespace llmgate::inline v0 {

/// Whether `message`'s content is a PML prompt document: a string that
/// starts, after white space, with "<prompt" and then white space, ">" or "/".
inline bool pml_message(const chat_message& message) {
  if (!message.content_json.empty()) return false;  // an array of parts, or null
  const std::string_view text = message.content;
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  const std::string_view rest = text.substr(start);
  constexpr std::string_view tag = "<prompt";
  if (!rest.starts_with(tag) || rest.size() == tag.size()) return false;
  const char next = rest[tag.size()];
  return next == ' ' || next == '\t' || next == '\r' || next == '\n' || next == '>' || next == '/';
}

namespace detail {

// Puts `compiled`'s messages into `request` at `position`, and its layout,
// moved past the messages before it: their indexes and their tokens (as
// `tokenizer` counts them) come first. The layout's total counts every
// message of the request.
template <Tokenizer T>
void splice_prompt(chat_request& request, std::size_t position, chat_request compiled, const T& tokenizer) {
  std::size_t tokens_before = 0, tokens_after = 0;
  for (std::size_t i = 0; i < request.messages.size(); ++i)
    (i < position ? tokens_before : tokens_after) += static_cast<std::size_t>(tokenizer.count(request.messages[i].content));
  request.messages.insert(request.messages.begin() + static_cast<std::ptrdiff_t>(position),
                          std::make_move_iterator(compiled.messages.begin()),
                          std::make_move_iterator(compiled.messages.end()));
  if (!compiled.layout) return;
  if (position == 0 && tokens_after == 0) {
    request.layout = std::move(compiled.layout);
    return;
  }
  auto layout = std::make_shared<prompt_layout>(*compiled.layout);
  for (auto& span : layout->modules) {
    span.message += position;
    span.token_begin += tokens_before;
    span.token_end += tokens_before;
  }
  layout->prefix_message += position;
  layout->prefix_tokens += tokens_before;
  layout->total_tokens += tokens_before + tokens_after;
  request.layout = std::move(layout);
}

// compile_prompt, its pml_error a request_error naming `param`.
template <Tokenizer T>
chat_request compile_for(const schema_registry& schemas, std::string_view pml, const std::string& param,
                         const T& tokenizer) {
  try {
    return compile_prompt(schemas, pml, tokenizer);
  } catch (const pml_error& e) {
    throw request_error(param, "Invalid PML prompt in '" + param + "': " + e.what(), "invalid_pml");
  }
}

}  // namespace detail

/// Compiles the PML `request` carries (in `pml`, the body's field taken
/// out, or in one of its messages) into it, as the comment atop this file
/// says. Throws request_error naming the field at fault.
template <Tokenizer T = estimated_tokenizer>
void compile_request_prompt(chat_request& request, const std::optional<std::string>& pml,
                            const schema_registry& schemas, const T& tokenizer = {}) {
  std::optional<std::size_t> in_message;
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    if (!pml_message(request.messages[i])) continue;
    const std::string param = "messages[" + std::to_string(i) + "].content";
    if (pml)
      throw request_error(param, "A request carries one PML prompt: '" + param +
                                     "' is a <prompt> document and so is 'pml'. Send the other messages as text.",
                          "invalid_pml");
    if (in_message)
      throw request_error(param, "A request carries one PML prompt: '" + param + "' and 'messages[" +
                                     std::to_string(*in_message) + "].content' are both <prompt> documents.",
                          "invalid_pml");
    in_message = i;
  }
  if (pml) {
    detail::splice_prompt(request, 0, detail::compile_for(schemas, *pml, "pml", tokenizer), tokenizer);
  } else if (in_message) {
    const std::size_t at = *in_message;
    chat_request compiled = detail::compile_for(schemas, request.messages[at].content,
                                                "messages[" + std::to_string(at) + "].content", tokenizer);
    request.messages.erase(request.messages.begin() + static_cast<std::ptrdiff_t>(at));
    detail::splice_prompt(request, at, std::move(compiled), tokenizer);
  }
}

/// Reads a chat body as parse_chat_request does, with the PML it carries
/// compiled into it (compile_request_prompt). With a "pml" field,
/// "messages" may be absent, null or empty. Throws request_error naming
/// the field at fault.
template <Tokenizer T = estimated_tokenizer>
chat_request read_chat_request(std::string_view body, const schema_registry& schemas, const T& tokenizer = {},
                               std::size_t max_json_depth = default_max_json_depth) {
  unsigned char buffer[4096];  // the parsed tree lives only while the request copies what it keeps
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec, &arena, request_json_options(max_json_depth));
  if (ec) return parse_chat_request(body, max_json_depth);  // refuses it as not JSON, in its words
  std::optional<std::string> pml;
  bool no_messages = false;
  if (auto* object = value.if_object(); object && object->contains("pml")) {
    const boost::json::value& field = object->at("pml");
    if (!field.is_null() && !field.is_string()) detail::wrong_type("pml", "a string", field);
    if (field.is_string()) pml = std::string(field.get_string());
    object->erase("pml");
    const auto* messages = object->if_contains("messages");
    if (pml && (!messages || messages->is_null() || (messages->is_array() && messages->get_array().empty()))) {
      // parse_chat_request's checks want messages: one stands in, taken out after.
      (*object)["messages"] = boost::json::array{boost::json::object{{"role", "user"}, {"content", ""}}};
      no_messages = true;
    }
  }
  chat_request request = parse_chat_request(value);
  if (no_messages) request.messages.clear();
  compile_request_prompt(request, pml, schemas, tokenizer);
  return request;
}

}  // namespace llmgate::inline v0
