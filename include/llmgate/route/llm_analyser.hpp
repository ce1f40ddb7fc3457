// llm_analyser: a TaskAnalyser that asks a language model what a request
// is about. The model gets a pruned copy of the request (its first and
// last `edge_words` words and an even sample of `middle_words` words from
// between them, which keeps the prompt short and its cost bounded) and must
// answer with strict JSON:
//   {"task_type": "coding", "domain": "programming", "complexity": 0.7}
// with task_type one of known_task_types, domain one of known_domains
// (text_features.hpp), complexity a number 0..1, and no other field. A
// reply that is anything else, or a model call that throws, is not
// guessed at: the request goes to the fallback analyser (the local one by
// default) and the profile's fallback_reason says what was wrong.
//
// The model call is any callable taking the prompt and returning the
// completion's text, e.g. a lambda over a backend:
//   llmgate::llm_analyser analyse(
//       [&](const std::string& prompt) { return complete_blocking(io, cheap_model, prompt); },
//       std::move(local));
// Every call's latency goes into latency(), so its cost in time is known.
#pragma once

#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::steady_clock
#include <concepts>     // std::invocable, std::convertible_to
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <memory>       // std::unique_ptr, std::make_unique
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::invoke_result_t
#include <utility>      // std::move

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/metrics/latency_histogram.hpp"
#include "llmgate/route/local_analyser.hpp"
#include "llmgate/route/task_analyser.hpp"
#include "llmgate/route/text_features.hpp"

namespace llmgate::inline v0 {

/// A blocking model call: prompt in, the completion's text out; throws
/// when the call fails.
template <class F>
concept CompletionFunction = std::invocable<const F&, const std::string&> &&
                             std::convertible_to<std::invoke_result_t<const F&, const std::string&>, std::string>;

struct llm_analyser_options {
  std::size_t edge_words = 64;    ///< kept from the start and from the end of a long request
  std::size_t middle_words = 32;  ///< sampled evenly from between them
};

/// The instruction the model receives, with the (pruned) request.
inline std::string task_analysis_prompt(std::string_view request) {
  const auto listing = [](const auto& names) {
    std::string text;
    for (const auto name : names) text.append(text.empty() ? "" : ", ").append(name);
    return text;
  };
  return "Classify the user request below. Answer with one JSON object and nothing else, of the form\n"
         "{\"task_type\": T, \"domain\": D, \"complexity\": C}\n"
         "where T is one of: " + listing(known_task_types) + ";\n"
         "D is one of: " + listing(known_domains) + ";\n"
         "C is a number from 0 (trivial) to 1 (as hard as requests get).\n\n"
         "Request:\n<<<\n" + std::string(request) + "\n>>>\n";
}

/// Reads a reply to task_analysis_prompt(). Nothing, and `problem` saying
/// why, unless the reply is exactly one JSON object with a known
/// task_type, a known domain and a complexity 0..1, and nothing else.
inline std::optional<task_profile> parse_task_reply(std::string_view reply, std::string& problem) {
  boost::system::error_code ec;
  const auto document = boost::json::parse(reply, ec);
  if (ec) {
    problem = "the reply is not JSON (" + ec.message() + ")";
    return std::nullopt;
  }
  const auto* object = document.if_object();
  if (!object) {
    problem = "the reply is not a JSON object";
    return std::nullopt;
  }
  for (const auto& field : *object)
    if (field.key() != "task_type" && field.key() != "domain" && field.key() != "complexity") {
      problem = "unexpected field \"" + std::string(field.key()) + "\"";
      return std::nullopt;
    }
  task_profile task;
  const auto one_of = [&](std::string_view key, const auto& known, std::string& out) {
    const auto* v = object->if_contains(key);
    if (!v || !v->is_string()) {
      problem = "\"" + std::string(key) + "\" is missing or not a string";
      return false;
    }
    const std::string_view value = v->get_string();
    for (const auto name : known)
      if (name == value) {
        out = value;
        return true;
      }
    problem = "\"" + std::string(key) + "\" is \"" + std::string(value) + "\", not a known one";
    return false;
  };
  if (!one_of("task_type", known_task_types, task.task_type) || !one_of("domain", known_domains, task.domain))
    return std::nullopt;
  const auto* complexity = object->if_contains("complexity");
  const double c = complexity && complexity->is_number() ? complexity->to_number<double>() : -1.0;
  if (!(c >= 0.0 && c <= 1.0)) {
    problem = "\"complexity\" is missing or not a number from 0 to 1";
    return std::nullopt;
  }
  task.complexity = static_cast<float>(c);
  return task;
}

template <CompletionFunction F, TaskAnalyser Fallback = local_analyser>
class llm_analyser {
 public:
  llm_analyser(F complete, Fallback fallback, llm_analyser_options options = {})
      : complete_(std::move(complete)), fallback_(std::move(fallback)), options_(options) {}

  task_profile analyse(std::string_view text) const {
    const auto prompt = task_analysis_prompt(prune_request(text, options_.edge_words, options_.middle_words));
    std::string problem;
    const auto start = std::chrono::steady_clock::now();
    try {
      const std::string reply = complete_(prompt);
      statistics_->latency.record(std::chrono::steady_clock::now() - start);
      if (auto task = parse_task_reply(reply, problem)) return std::move(*task);
    } catch (const std::exception& e) {
      statistics_->latency.record(std::chrono::steady_clock::now() - start);
      problem = std::string("the model call failed: ") + e.what();
    }
    ++statistics_->fallbacks;
    auto task = fallback_.analyse(text);
    task.fallback_reason = "llm_analyser: " + problem + "; used the fallback analyser";
    return task;
  }

  /// Durations of the model calls, failed ones included.
  const latency_histogram& latency() const noexcept { return statistics_->latency; }

  /// Requests that went to the fallback analyser.
  std::uint64_t fallbacks() const noexcept { return statistics_->fallbacks.load(); }

  const Fallback& fallback() const noexcept { return fallback_; }
  Fallback& fallback() noexcept { return fallback_; }

 private:
  // Apart, so that the analyser stays movable.
  struct statistics {
    latency_histogram latency;
    std::atomic<std::uint64_t> fallbacks{0};
  };

  F complete_;
  Fallback fallback_;
  llm_analyser_options options_;
  std::unique_ptr<statistics> statistics_ = std::make_unique<statistics>();
};

}  // namespace llmgate::inline v0
