// prompt_rendering: the plan's prompts as the candidates are asked them:
// each prompt's template with its {{variables}} filled in; and as one text,
// for the judges and the people who rate the answers.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <map>          // std::map
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/chat/chat.hpp"                  // chat_message
#include "llmgate/error.hpp"                      // llmgate::error, errc
#include "llmgate/eval/plan/evaluation_plan.hpp"  // evaluation_plan, prompt_template

namespace llmgate::inline v0 {

/// `text` with each {{name}} (spaces inside the braces allowed) replaced by
/// that variable's value. Values are not scanned again; a "{{" with no
/// "}}" after it is text. Throws llmgate::error (invalid_request) naming
/// prompt `prompt` and the variable when the prompt does not set it.
inline std::string render_template_text(std::string_view text, const std::map<std::string, std::string>& variables,
                                        std::size_t prompt) {
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t open = text.find("{{", at);
    const std::size_t close = open == std::string_view::npos ? open : text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(at, open - at));
    std::string_view name = text.substr(open + 2, close - open - 2);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    const auto value = variables.find(std::string(name));
    if (value == variables.end())
      throw error(errc::invalid_request, "prompt " + std::to_string(prompt) + ": variable {{" + std::string(name) +
                                             "}} is not set by the prompt");
    out += value->second;
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

/// The messages of every prompt of `plan`, its template rendered, in the
/// prompt set's order. Throws llmgate::error (invalid_request) naming the
/// prompt when its template is unknown or uses a variable it does not set.
inline std::vector<std::vector<chat_message>> render_prompts(const evaluation_plan& plan) {
  std::vector<std::vector<chat_message>> rendered;
  rendered.reserve(plan.prompts.size());
  for (std::size_t i = 0; i < plan.prompts.size(); ++i) {
    const evaluation_prompt& prompt = plan.prompts[i];
    const prompt_template* found = nullptr;
    for (const auto& t : plan.templates)
      if (t.name == prompt.template_name) found = &t;
    if (!found)
      throw error(errc::invalid_request,
                  "prompt " + std::to_string(i) + ": no template named \"" + prompt.template_name + "\"");
    std::vector<chat_message> messages = found->messages;
    for (auto& message : messages) message.content = render_template_text(message.content, prompt.variables, i);
    rendered.push_back(std::move(messages));
  }
  return rendered;
}

/// Messages as one text: one message, its content; several, "role: content"
/// each, a blank line apart.
inline std::string prompt_text(const std::vector<chat_message>& messages) {
  if (messages.size() == 1) return messages.front().content;
  std::string text;
  for (const auto& message : messages) {
    if (!text.empty()) text += "\n\n";
    text += message.role + ": " + message.content;
  }
  return text;
}

}  // namespace llmgate::inline v0
